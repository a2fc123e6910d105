/* SPDX-License-Identifier: MIT */
/*
 * probe.c - rec__enter/rec__exit, the code every TRACE_SCOPE runs: read the
 * clock, push one record into the calling thread's ring, count a drop when
 * there is no room. The fast path takes no lock, makes no call and no atomic
 * read-modify-write; the slow path (first probe of a thread or site, full
 * ring, signal nesting) is out of line, and so is the counted path of a
 * thread with REC_COUNTERS (enter_counted(), exit_counted()). The ring
 * protocol and labels (A)-(D) are in rec_internal.h.
 *
 * It also holds the -finstrument-functions hooks (__cyg_profile_func_enter
 * and _exit): the same window, ring push, reserve-for-exit rule and drop
 * accounting, with the site id found by function address in a per-thread
 * cache (registry in site.c) and the exit's record kept on a per-thread
 * shadow stack. librec itself is built with -fno-instrument-functions, and
 * every function here is no_instrument_function as well. The hooks take
 * the counted path too on a thread with counters.
 */
#include "rec_internal.h"

#include <errno.h>
#include <stddef.h>
#include <time.h>

/*
 * Whatever flags this file is compiled with, nothing in it may call the
 * hooks: they would recurse. The static inline helpers get the attribute
 * too (an inlined call is instrumented by some compilers).
 */
#define NOINSTR __attribute__((no_instrument_function))

__thread struct rec__thread *rec__self __attribute__((tls_model("initial-exec")));
__thread uint8_t rec__in_librec __attribute__((tls_model("initial-exec")));
/* rec.h: set (relaxed) when the state becomes REC__DISABLED, never cleared
 * but by exec; the macros load it relaxed (a plain load on x86): a stale 0
 * only takes the old path, which finds the state DISABLED itself. */
unsigned char rec__disabled;
/* rec.h's inline probe: &rec__self->p, or NULL (rec__set_self()). */
__thread struct rec__producer *rec__prod __attribute__((tls_model("initial-exec")));

/* rec.h's struct rec__event is the format's event, slot for slot. */
_Static_assert(sizeof(struct rec__event) == sizeof(struct recfmt_event), "event size");
_Static_assert(offsetof(struct rec__event, ticks) == offsetof(struct recfmt_event, ticks), "ticks");
_Static_assert(offsetof(struct rec__event, code) == offsetof(struct recfmt_event, code), "code");
_Static_assert(offsetof(struct rec__event, aux) == offsetof(struct recfmt_event, aux), "aux");
_Static_assert(RECFMT_CODE(1, RECFMT_KIND_ENTER) == 1u << 1 &&
		       RECFMT_CODE(1, RECFMT_KIND_EXIT) == ((1u << 1) | 1u),
	       "rec.h's inline probe encodes codes as RECFMT_CODE does");

NOINSTR static inline uint64_t now_ticks(const struct rec__thread *t)
{
	if (likely(t->p.use_tsc))
		return rec__rdtsc();
	return rec__clock_now(false);
}

/*
 * Drops counted before this thread had its state (a handler that
 * interrupted its first probe); moved into nr_dropped at attach.
 */
__thread uint64_t rec__orphan_drops __attribute__((tls_model("initial-exec")));

/*
 * Only the owner writes a drop counter, but a signal handler on the owner
 * may count too: the increment is one instruction, which a signal cannot
 * split (not locked: no other thread writes). The writer reads it with a
 * relaxed load.
 */
NOINSTR static inline void count_one(uint64_t *counter)
{
#if defined(__x86_64__)
	__asm__ volatile("addq $1, %0" : "+m"(*counter));
#else
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
#endif
}

NOINSTR void rec__add_drops(struct rec__thread *t, uint64_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("addq %1, %0" : "+m"(t->p.nr_dropped) : "r"(n));
#else
	__atomic_fetch_add(&t->p.nr_dropped, n, __ATOMIC_RELAXED);
#endif
}

/*
 * Opens the probe's window: from here until close_window() a probe in a
 * signal handler on this thread drops instead of writing the same slot.
 * The clock is read before the window, to keep the window short; if a
 * handler pushed records in between, it is read again so that the thread's
 * records stay in time order. Return: the head to write at.
 */
NOINSTR static inline uint64_t open_window(struct rec__thread *t, uint64_t *ticks)
{
	uint64_t h0 = __atomic_load_n(&t->p.head, __ATOMIC_RELAXED), head;

	*ticks = now_ticks(t);
	t->p.nesting = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head = __atomic_load_n(&t->p.head, __ATOMIC_RELAXED);
	if (unlikely(head != h0))
		*ticks = now_ticks(t);
	return head;
}

NOINSTR static inline void close_window(struct rec__thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->p.nesting = 0;
}

NOINSTR static inline void push(struct rec__thread *t, uint64_t head, uint64_t ticks, uint32_t code)
{
	struct recfmt_event *ev = &rec__events(t)[head & t->p.mask];

	ev->ticks = ticks;
	ev->code = code;
	/* (B) pairs with (C) in writer.c: the slot is written before head moves. */
	__atomic_store_n(&t->p.head, head + 1, __ATOMIC_RELEASE);
}

/*
 * Refreshes the producer's limit from the writer's tail, and waits for room
 * in block mode (sleeping rather than spinning, giving up when recording
 * stops: the writer will never drain again).
 *
 * The limit is first set a quarter ring past the tail (soft). Reaching it
 * means the ring is a quarter full: the producer wakes the writer and goes
 * on up to the full ring (hard). So a writer that found nothing to do may
 * sleep long, yet is woken at once when a thread starts recording fast; the
 * fast path is unchanged.
 * Return: true if there is room for `need` now.
 */
NOINSTR static bool room_or_sleep(struct rec__thread *t, uint64_t need, uint64_t *since_ns)
{
	struct timespec nap = { 0, 50 * 1000 };
	uint64_t cap;

	/* No ring yet: the process-wide ring budget was reached (thread.c). */
	while (unlikely(!t->p.events) && !rec__thread_ring_retry(t)) {
		if (!t->p.block || __atomic_load_n(&t->p.off, __ATOMIC_RELAXED))
			return false;
		if (!*since_ns)
			*since_ns = rec__clock_now(false);
		nanosleep(&nap, NULL);
	}
	cap = t->p.mask + 1;
	for (;;) {
		/* (A) pairs with (D) in writer.c. */
		uint64_t tail = __atomic_load_n(&t->tail, __ATOMIC_ACQUIRE);

		t->p.limit = tail + cap / 4;
		if (need <= t->p.limit)
			return true;
		/*
		 * At most one wake per drain: once woken, the writer moves tail
		 * when it drains this ring, so a probe that finds tail where it
		 * was at our last wake makes no system call (a thread that
		 * drops, or waits in block mode, does not hammer the futex).
		 */
		if (tail != t->p.woke_tail) {
			t->p.woke_tail = tail;
			rec__writer_wake();
		}
		t->p.limit = tail + cap;
		if (need <= t->p.limit)
			return true;
		if (!t->p.block || __atomic_load_n(&t->p.off, __ATOMIC_RELAXED))
			return false;
		if (!*since_ns)
			*since_ns = rec__clock_now(false);
		nanosleep(&nap, NULL); /* async-signal-safe: fine in a handler */
	}
}

/*
 * wait_for_room() - room_or_sleep(), and in block mode the wait's account:
 * a probe that slept counts one wait and the time it slept in its thread's
 * nr_blocked/blocked_ns (the writer puts them in BLOCKED records), and sets
 * *waited, so that its caller stamps the enter again: the wait is not part
 * of the activation being entered (contract §7). Called inside the probe's
 * window, so a handler's probe on this thread never counts at the same time.
 */
NOINSTR static bool wait_for_room(struct rec__thread *t, uint64_t need, bool *waited)
{
	uint64_t since_ns = 0;
	bool ok = room_or_sleep(t, need, &since_ns);

	if (unlikely(since_ns)) {
		uint64_t ns = rec__clock_now(false) - since_ns;

		__atomic_store_n(&t->nr_blocked, t->nr_blocked + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&t->blocked_ns, t->blocked_ns + ns, __ATOMIC_RELAXED);
		*waited = true;
	}
	return ok;
}

/*
 * The counted path (REC_COUNTERS): a thread with a perf-event group keeps
 * `limit` and `reserved` at 0, so that every enter comes here through
 * enter_slow() and every exit through rec__exit()'s cold branch; the fast
 * path is not changed. An event takes 1 + nr slots (the event, then one
 * slot per counter value in `ticks`), published by one release of head, so
 * the writer sees whole groups. `c->pending` and `c->limit` play the roles
 * of `reserved` and `limit`, in scopes and slots: an enter is recorded only
 * if the ring has room for its own group, its exit's and every pending
 * exit's, so drops stay whole scopes. The window (nesting) and the re-read
 * after a handler's push are as in the fast path; the counters are read
 * with the clock, outside the window (counters.c: async-signal-safe).
 */
NOINSTR static void push_counted(struct rec__thread *t, uint64_t head, uint64_t ticks, uint32_t code,
			 const uint64_t *vals, uint32_t nr)
{
	struct recfmt_event *ev = &rec__events(t)[head & t->p.mask];

	ev->ticks = ticks;
	ev->code = code;
	ev->aux = nr;
	for (uint32_t i = 0; i < nr; i++) {
		ev = &rec__events(t)[(head + 1 + i) & t->p.mask];
		ev->ticks = vals[i];
		ev->code = 0; /* no event has code 0: site ids start at 1 */
		ev->aux = i;
	}
	/* (B) pairs with (C) in writer.c: the whole group before head moves. */
	__atomic_store_n(&t->p.head, head + 1 + nr, __ATOMIC_RELEASE);
}

NOINSTR static bool room_counted(struct rec__thread *t, struct rec__counters *c, uint64_t need,
			 bool *waited)
{
	bool ok;

	if (need <= c->limit)
		return true;
	ok = wait_for_room(t, need, waited);
	c->limit = t->p.limit;
	t->p.limit = 0; /* keep the fast path away (inside the window: no handler sees it) */
	return ok;
}

NOINSTR static __attribute__((noinline)) struct rec__scope enter_counted(struct rec__thread *t,
								 uint32_t id)
{
	struct rec__counters *c = t->ctr;
	struct rec__scope scope = { 0 };
	uint64_t vals[RECFMT_MAX_COUNTERS];
	uint64_t h0 = __atomic_load_n(&t->p.head, __ATOMIC_RELAXED), head, ticks;
	uint64_t group = 1 + (uint64_t)c->nr;
	bool waited = false;

	ticks = now_ticks(t);
	rec__counters_read(c, vals);
	t->p.nesting = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head = __atomic_load_n(&t->p.head, __ATOMIC_RELAXED);
	if (unlikely(head != h0)) {
		ticks = now_ticks(t);
		rec__counters_read(c, vals);
	}
	if (!room_counted(t, c, head + group * (c->pending + 2), &waited)) {
		close_window(t);
		count_one(&t->p.nr_dropped);
		return scope;
	}
	if (unlikely(waited)) {
		/* Block mode: the enter is stamped after the wait. */
		ticks = now_ticks(t);
		rec__counters_read(c, vals);
	}
	push_counted(t, head, ticks, RECFMT_CODE(id, RECFMT_KIND_ENTER), vals, c->nr);
	c->pending++;
	scope.gen = __atomic_load_n(&t->p.gen, __ATOMIC_RELAXED);
	close_window(t);
	scope.code = RECFMT_CODE(id, RECFMT_KIND_EXIT);
	return scope;
}

NOINSTR static __attribute__((noinline)) void exit_counted(struct rec__thread *t, uint32_t code,
							 uint32_t gen)
{
	struct rec__counters *c = t->ctr;
	uint64_t vals[RECFMT_MAX_COUNTERS];
	uint64_t h0 = __atomic_load_n(&t->p.head, __ATOMIC_RELAXED), head, ticks;

	if (!c->pending)
		return; /* the enter went into an earlier ring (see rec__exit) */
	if (gen != __atomic_load_n(&t->p.gen, __ATOMIC_RELAXED)) {
		c->pending--; /* an earlier recording's enter: see rec__exit() */
		return;
	}
	rec__counters_read(c, vals);
	ticks = now_ticks(t);
	t->p.nesting = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head = __atomic_load_n(&t->p.head, __ATOMIC_RELAXED);
	if (unlikely(head != h0)) {
		rec__counters_read(c, vals);
		ticks = now_ticks(t);
	}
	/* Room was reserved by the enter. */
	push_counted(t, head, ticks, code, vals, c->nr);
	c->pending--;
	close_window(t);
}

NOINSTR static __attribute__((noinline)) struct rec__scope enter_slow(struct rec__site *site)
{
	struct rec__scope scope = { 0 };
	struct rec__thread *t = rec__self;
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
	uint64_t head, ticks;
	bool waited = false;

	if (rec__in_librec) {
		/* A signal handler interrupted librec on this thread: no re-entry. */
		count_one(t ? &t->p.nr_dropped : &rec__orphan_drops);
		return scope;
	}
	rec__in_librec = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!t)
		t = rec__thread_attach();
	/* A ring freed since (budget: thread.c), faulted in before our stamp. */
	if (t && unlikely(!t->p.events))
		rec__thread_ring_retry(t);
	if (t && !id && !__atomic_load_n(&t->p.off, __ATOMIC_RELAXED))
		id = rec__site_register(site);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec__in_librec = 0;
	if (!t || __atomic_load_n(&t->p.off, __ATOMIC_RELAXED))
		return scope; /* not recording: nothing to count */
	if (t->p.nesting || !id) {
		count_one(&t->p.nr_dropped);
		return scope;
	}
	if (t->ctr)
		return enter_counted(t, id);
	head = open_window(t, &ticks);
	if (head + t->p.reserved + 2 > t->p.limit &&
	    !wait_for_room(t, head + t->p.reserved + 2, &waited)) {
		close_window(t);
		count_one(&t->p.nr_dropped);
		return scope;
	}
	if (unlikely(waited))
		ticks = now_ticks(t); /* block mode: the enter is stamped after the wait */
	push(t, head, ticks, RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->p.reserved++;
	scope.gen = __atomic_load_n(&t->p.gen, __ATOMIC_RELAXED);
	close_window(t);
	scope.code = RECFMT_CODE(id, RECFMT_KIND_EXIT);
	return scope;
}

NOINSTR struct rec__scope rec__enter(struct rec__site *site)
{
	struct rec__thread *t = rec__self;
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
	struct rec__scope scope;
	uint64_t head, ticks;

	if (unlikely(!t || !id || t->p.nesting || __atomic_load_n(&t->p.off, __ATOMIC_RELAXED)))
		return enter_slow(site);
	head = open_window(t, &ticks);
	if (unlikely(head + t->p.reserved + 2 > t->p.limit)) {
		close_window(t);
		return enter_slow(site);
	}
	push(t, head, ticks, RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->p.reserved++;
	scope.gen = __atomic_load_n(&t->p.gen, __ATOMIC_RELAXED);
	close_window(t);
	scope.code = RECFMT_CODE(id, RECFMT_KIND_EXIT);
	return scope;
}

NOINSTR void rec__exit(struct rec__scope *scope)
{
	struct rec__thread *t;
	uint64_t head, ticks;

	if (!scope->code)
		return; /* the enter was not recorded: neither is the exit */
	t = rec__self;
	/*
	 * No pending exit: the enter went into a ring this thread no longer
	 * has (fork, or a restart in between). Recording the exit would
	 * unbalance the new ring.
	 */
	if (unlikely(!t || !t->p.reserved)) {
		if (t && t->ctr)
			exit_counted(t, scope->code, scope->gen); /* counted path: see enter_counted() */
		return;
	}
	/*
	 * The enter belongs to an earlier recording (a scope open across
	 * rec_stop()/rec_start()): its event is not in this file, so neither
	 * is the exit; the reservation it still holds is given back.
	 */
	if (unlikely(scope->gen != __atomic_load_n(&t->p.gen, __ATOMIC_RELAXED))) {
		t->p.reserved--;
		return;
	}
	head = open_window(t, &ticks);
	/* Room was reserved by the enter: no check needed. */
	push(t, head, ticks, scope->code);
	t->p.reserved--;
	close_window(t);
}

/* ---------------------------------------------------------------------
 * -finstrument-functions hooks.
 *
 * Shadow stack protocol (owner thread only): every enter hook that finds the
 * thread's state takes the next level (fdepth++) and stores {fn, code} in
 * it, code being the exit record to push or 0 if the enter was not
 * recorded; every exit hook gives the level back and pushes code if it is
 * not 0. So a dropped enter's exit records nothing, and the ring stays
 * well nested exactly as with TRACE_SCOPE. A signal handler's hooks on the
 * same thread are balanced (they give back every level they take), so they
 * may run between any two steps: the enter hook raises fdepth before it
 * writes its frame, and the exit hook reads its frame before it lowers
 * fdepth, with signal fences in between. An exit hook whose frame is not on
 * top (longjmp skipped exits) closes the frames above its own; one with no
 * frame (its enter ran before this thread had state) records nothing.
 */
void __cyg_profile_func_enter(void *fn, void *call_site) REC_API NOINSTR;
void __cyg_profile_func_exit(void *fn, void *call_site) REC_API NOINSTR;

static inline NOINSTR struct rec__fcache_slot *fcache_slot(struct rec__thread *t, uintptr_t fn)
{
	return &t->fcache[((fn >> 4) ^ (fn >> 14)) & (REC__FCACHE_SLOTS - 1)];
}

/* Takes level d (already read from fdepth) and stores its frame. */
static inline NOINSTR void fframe_push(struct rec__thread *t, uint32_t d, uintptr_t fn,
				       uint32_t code)
{
	t->fdepth = d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (d < REC__FSTACK_DEPTH) {
		t->fstack[d].fn = fn;
		t->fstack[d].code = code;
		t->fstack[d].gen = __atomic_load_n(&t->p.gen, __ATOMIC_RELAXED);
	}
}

static NOINSTR __attribute__((noinline)) void func_enter_slow(uintptr_t fn)
{
	struct rec__thread *t = rec__self;
	uint32_t id = 0, code = 0, d;
	uint64_t head, ticks;
	bool waited = false;

	if (rec__in_librec) {
		/*
		 * librec's own slow path or API call was interrupted by a
		 * handler, or (built against advice) runs instrumented code:
		 * no re-entry. The writer thread never records.
		 */
		if (t) {
			count_one(&t->p.nr_dropped);
			fframe_push(t, t->fdepth, fn, 0);
		}
		return;
	}
	rec__in_librec = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!t)
		t = rec__thread_attach();
	if (t && unlikely(!t->p.events))
		rec__thread_ring_retry(t); /* as in enter_slow() */
	if (t && !__atomic_load_n(&t->p.off, __ATOMIC_RELAXED)) {
		struct rec__fcache_slot *c = fcache_slot(t, fn);

		if (c->fn == fn) {
			id = c->id;
		} else {
			id = rec__site_register_func(fn);
			if (id) {
				c->fn = 0; /* a handler reading the slot meanwhile misses */
				__atomic_signal_fence(__ATOMIC_SEQ_CST);
				c->id = id;
				__atomic_signal_fence(__ATOMIC_SEQ_CST);
				c->fn = fn;
			}
		}
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec__in_librec = 0;
	if (!t)
		return; /* not recording, and no state to keep a frame in */
	d = t->fdepth;
	if (__atomic_load_n(&t->p.off, __ATOMIC_RELAXED))
		goto out; /* not recording: nothing to count */
	if (t->p.nesting || !id || d >= REC__FSTACK_DEPTH) {
		count_one(&t->p.nr_dropped);
		goto out;
	}
	if (t->ctr) {
		/* REC_COUNTERS: the counted path, as for TRACE_SCOPE. */
		code = enter_counted(t, id).code;
		goto out;
	}
	head = open_window(t, &ticks);
	if (head + t->p.reserved + 2 > t->p.limit &&
	    !wait_for_room(t, head + t->p.reserved + 2, &waited)) {
		close_window(t);
		count_one(&t->p.nr_dropped);
		goto out;
	}
	if (unlikely(waited))
		ticks = now_ticks(t); /* block mode: the enter is stamped after the wait */
	push(t, head, ticks, RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->p.reserved++;
	close_window(t);
	code = RECFMT_CODE(id, RECFMT_KIND_EXIT);
out:
	fframe_push(t, d, fn, code);
}

/*
 * func_enter() - what __cyg_profile_func_enter() does: called by code built
 * with -finstrument-functions on entry to every function, it records an
 * enter of the function's site, like rec__enter(). Any thread; never blocks
 * (except in REC_OVERFLOW=block mode); async-signal-safe as rec__enter() is.
 */
static inline NOINSTR __attribute__((always_inline)) void func_enter(void *fn_ptr)
{
	struct rec__thread *t = rec__self;
	uintptr_t fn = (uintptr_t)fn_ptr;
	struct rec__fcache_slot *c;
	uint64_t head, ticks;
	uint32_t d, id;

	if (unlikely(!t || t->p.nesting || __atomic_load_n(&t->p.off, __ATOMIC_RELAXED)))
		goto slow;
	d = t->fdepth;
	c = fcache_slot(t, fn);
	id = c->id;
	if (unlikely(c->fn != fn || d >= REC__FSTACK_DEPTH))
		goto slow;
	head = open_window(t, &ticks);
	if (unlikely(head + t->p.reserved + 2 > t->p.limit)) {
		close_window(t);
		goto slow;
	}
	push(t, head, ticks, RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->p.reserved++;
	close_window(t);
	fframe_push(t, d, fn, RECFMT_CODE(id, RECFMT_KIND_EXIT));
	return;
slow:
	func_enter_slow(fn);
}

static inline NOINSTR void push_exit(struct rec__thread *t, uint32_t code, uint32_t gen)
{
	uint64_t head, ticks;

	if (!code)
		return; /* not recorded */
	if (unlikely(!t->p.reserved)) {
		/* Recorded into a ring this thread no longer has; or a counted
		 * thread (reserved stays 0: see enter_counted()). */
		if (t->ctr)
			exit_counted(t, code, gen);
		return;
	}
	if (unlikely(gen != __atomic_load_n(&t->p.gen, __ATOMIC_RELAXED))) {
		t->p.reserved--; /* an earlier recording's enter: see rec__exit() */
		return;
	}
	head = open_window(t, &ticks);
	push(t, head, ticks, code); /* room was reserved by the enter */
	t->p.reserved--;
	close_window(t);
}

static NOINSTR __attribute__((noinline)) void func_exit_slow(struct rec__thread *t, uintptr_t fn)
{
	uint32_t d = t->fdepth, k;

	if (d == 0)
		return; /* the enter ran before this thread had state */
	if (d > REC__FSTACK_DEPTH) {
		t->fdepth = d - 1; /* too deep: the enter was dropped, not stored */
		return;
	}
	/*
	 * Not on top: exits were skipped (longjmp, or an exception through
	 * code that was not instrumented). Close the skipped frames now, so
	 * that the trace stays well nested; a frame of fn not found in the
	 * last 64 levels means this exit matches no enter we kept.
	 */
	for (k = d; k-- > 0 && d - k <= 64;) {
		if (t->fstack[k].fn != fn)
			continue;
		while (d > k) {
			uint32_t code = t->fstack[--d].code, gen = t->fstack[d].gen;

			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			t->fdepth = d;
			push_exit(t, code, gen);
		}
		return;
	}
}

/*
 * func_exit() - what __cyg_profile_func_exit() does, on every return (and
 * unwinding) of an instrumented function: records the exit if the enter
 * was recorded.
 */
static inline NOINSTR __attribute__((always_inline)) void func_exit(void *fn_ptr)
{
	struct rec__thread *t = rec__self;
	uintptr_t fn = (uintptr_t)fn_ptr;
	uint32_t d, code, gen;

	if (unlikely(!t))
		return;
	d = t->fdepth;
	if (unlikely(d - 1 >= REC__FSTACK_DEPTH || t->fstack[d - 1].fn != fn)) {
		func_exit_slow(t, fn);
		return;
	}
	code = t->fstack[d - 1].code;
	gen = t->fstack[d - 1].gen;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->fdepth = d - 1;
	push_exit(t, code, gen);
}

void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)call_site;
	func_enter(fn);
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)call_site;
	func_exit(fn);
}

#if defined(REC_GLIBC_HOOK_VERSION)
/*
 * glibc defines empty __cyg_profile_func_enter/_exit (version
 * REC_GLIBC_HOOK_VERSION, GLIBC_2.2.5 on x86-64), and a library built with
 * -finstrument-functions but linked only against glibc references that
 * version. The dynamic linker matches a versioned reference by version
 * name, not by file, and searches librec before libc when the program
 * links (or preloads) librec: these copies, exported under glibc's
 * version, make such libraries call our hooks too. Only in librec.so
 * (meson defines the macro there). Copies, not aliases: ld drops the
 * default-version symbol when an alias at the same address is versioned.
 */
#define REC__STR2(x) #x
#define REC__STR(x) REC__STR2(x)
void rec__cyg_enter_glibc(void *fn, void *call_site) REC_API NOINSTR;
void rec__cyg_exit_glibc(void *fn, void *call_site) REC_API NOINSTR;
__asm__(".symver rec__cyg_enter_glibc, __cyg_profile_func_enter@" REC__STR(REC_GLIBC_HOOK_VERSION));
__asm__(".symver rec__cyg_exit_glibc, __cyg_profile_func_exit@" REC__STR(REC_GLIBC_HOOK_VERSION));

void rec__cyg_enter_glibc(void *fn, void *call_site)
{
	(void)call_site;
	func_enter(fn);
}

void rec__cyg_exit_glibc(void *fn, void *call_site)
{
	(void)call_site;
	func_exit(fn);
}
#endif
