/* SPDX-License-Identifier: MIT */
/*
 * probe.c - the out-of-line probe: what rec.h's inline TRACE_SCOPE path
 * does not do itself. rec__enter/rec__exit (exported; the macros call
 * them for the rare cases, and binaries built before the fast path was
 * inline call them always) attach the thread and register the site before
 * any timestamp; rec__probe_enter/rec__probe_exit (also used by hooks.c)
 * handle a full ring (drop, or wait and stamp after the wait), a signal
 * handler inside another probe's window, the restart generation, the
 * clock_gettime clock and the counted path of a thread with REC_COUNTERS
 * (enter_counted(), exit_counted()). No lock and no atomic
 * read-modify-write; a system call only to wake the writer (at most once
 * per drain) or to wait in block mode. The ring protocol and labels
 * (A)-(D) are in rec_internal.h; the window and the push are rec.h's.
 */
#include "rec_internal.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
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
/* rec.h's inline probe: &rec__self->ring.p, or NULL (rec__set_self()). */
__thread struct rec__producer *rec__prod __attribute__((tls_model("initial-exec")));

/* rec.h's struct rec__event is the format's event, slot for slot. */
_Static_assert(sizeof(struct rec__event) == sizeof(struct recfmt_event), "event size");
_Static_assert(offsetof(struct rec__event, ticks) == offsetof(struct recfmt_event, ticks), "ticks");
_Static_assert(offsetof(struct rec__event, code) == offsetof(struct recfmt_event, code), "code");
_Static_assert(offsetof(struct rec__event, aux) == offsetof(struct recfmt_event, aux), "aux");
_Static_assert(RECFMT_CODE(1, RECFMT_KIND_ENTER) == 1u << 1 &&
		       RECFMT_CODE(1, RECFMT_KIND_EXIT) == ((1u << 1) | 1u),
	       "rec.h's inline probe encodes codes as RECFMT_CODE does");

/*
 * Drops counted before this thread had its state (a handler that
 * interrupted its first probe); moved into nr_dropped at attach.
 */
__thread uint64_t rec__orphan_drops __attribute__((tls_model("initial-exec")));
__thread uint64_t rec__orphan_annot_drops __attribute__((tls_model("initial-exec")));

/*
 * The window and the push are rec.h's (rec__window_open(),
 * rec__ring_push(), rec__window_close()), shared by the inline probe, the
 * paths below and hooks.c: one protocol. The clock is read inside the
 * window, after head: a handler's records are then always before ours.
 */
/*
 * Refreshes the producer's limit from the writer's tail (ring.h), wakes
 * the writer when the ring is a quarter full, and waits for room in block
 * mode (sleeping rather than spinning, giving up when recording stops: the
 * writer will never drain again).
 * Return: true if there is room for `need` now.
 */
NOINSTR static bool room_or_sleep(struct rec__thread *t, uint64_t need, uint64_t *since_ns)
{
	struct timespec nap = { 0, 50 * 1000 };

	t->own.frozen_full = 0;
	/*
	 * No ring yet: REC_MEMORY was reached when the thread attached
	 * (thread.c). It drops, counted, in block mode too (README, "What
	 * librec guarantees"): a ring comes back only when a thread exits, and
	 * waiting for it hung a program whose threads with rings wait for
	 * those without (a barrier, a join).
	 */
	if (unlikely(!t->ring.p.events) && !rec__thread_ring_retry(t, true))
		return false;
	for (;;) {
		uint64_t tail;
		enum rec__ring_room room;

		if (__atomic_load_n(&rec__flight_overwrite, __ATOMIC_RELAXED)) {
			/*
			 * REC_MODE=flight: a full ring discards its oldest chunk
			 * (ring.h) unless a trigger froze the rings; the writer
			 * hears of it only where it scans for REC_TRIGGER.
			 */
			uint64_t group = t->reg.ctr ? 1 + (uint64_t)t->reg.ctr->nr : 1;
			uint64_t chunk;
			bool discarded = false;

			bool frozen = rec__flight_frozen_now();

			/* Full: a larger ring first, while REC_MEMORY allows; then discard. */
			if (rec__ring_refresh_flight(&t->ring, need, group, false, &discarded) ==
				    REC__RING_FULL &&
			    rec__thread_grow(t, rec__ring_flight_from(&t->ring), true))
				continue;
			chunk = (t->ring.p.mask + 1) / 8 / group * group;
			room = rec__ring_refresh_flight(&t->ring, need, chunk ? chunk : group, !frozen,
							&discarded);
			t->own.frozen_full = frozen; /* read by the caller if it drops */
			tail = __atomic_load_n(&t->ring.tail, __ATOMIC_RELAXED);
			if (discarded && rec__flight_wake_on_discard)
				rec__writer_wake();
			if (room == REC__RING_ROOM)
				return true;
		} else {
			room = rec__ring_refresh(&t->ring, need, &tail);
			/* A quarter full or more: a larger ring, while REC_MEMORY allows. */
			if (room != REC__RING_ROOM && rec__thread_grow(t, tail, room == REC__RING_FULL))
				room = rec__ring_refresh(&t->ring, need, &tail);
		}

		if (room == REC__RING_ROOM)
			return true;
		/*
		 * At most one wake per drain: once woken, the writer moves tail
		 * when it drains this ring, so a probe that finds tail where it
		 * was at our last wake makes no system call (a thread that
		 * drops, or waits in block mode, does not hammer the futex).
		 */
		if (tail != t->ring.p.woke_tail) {
			t->ring.p.woke_tail = tail;
			rec__writer_wake();
		}
		if (room == REC__RING_ROOM_WAKE)
			return true;
		if (!t->ring.p.block || __atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED))
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
 * of the activation being entered (README, "What librec guarantees"). Called inside the probe's
 * window, so a handler's probe on this thread never counts at the same time.
 */
NOINSTR static bool wait_for_room(struct rec__thread *t, uint64_t need, bool *waited)
{
	uint64_t since_ns = 0;
	bool ok = room_or_sleep(t, need, &since_ns);

	if (unlikely(since_ns)) {
		uint64_t ns = rec__clock_now(false) - since_ns;

		__atomic_store_n(&t->own.nr_blocked, t->own.nr_blocked + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&t->own.blocked_ns, t->own.blocked_ns + ns, __ATOMIC_RELAXED);
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
 * exit's, so drops stay whole scopes. The window (nesting) is the fast
 * path's; the counters are read with the clock, after any wait, inside the
 * window (counters.c: async-signal-safe).
 */
NOINSTR static void push_counted(struct rec__thread *t, uint64_t head, uint64_t ticks, uint32_t code,
			 const uint64_t *vals, uint32_t nr)
{
	struct recfmt_event *ev = &rec__own_slots(t)[head & t->ring.p.mask];

	ev->ticks = ticks;
	ev->code = code;
	ev->aux = nr;
	for (uint32_t i = 0; i < nr; i++) {
		ev = &rec__own_slots(t)[(head + 1 + i) & t->ring.p.mask];
		ev->ticks = vals[i];
		ev->code = 0; /* no event has code 0: site ids start at 1 */
		ev->aux = i;
	}
	/* (B) pairs with (C) in writer.c: the whole group before head moves. */
	__atomic_store_n(&t->ring.p.head, head + 1 + nr, __ATOMIC_RELEASE);
}

NOINSTR static bool room_counted(struct rec__thread *t, struct rec__counters *c, uint64_t need,
			 bool *waited)
{
	bool ok;

	if (need <= c->limit)
		return true;
	ok = wait_for_room(t, need, waited);
	c->limit = t->ring.p.limit;
	t->ring.p.limit = 0; /* keep the fast path away (inside the window: no handler sees it) */
	return ok;
}

NOINSTR static __attribute__((noinline)) struct rec__scope enter_counted(struct rec__thread *t,
								 uint32_t id)
{
	struct rec__counters *c = t->reg.ctr;
	struct rec__scope scope = { 0 };
	uint64_t vals[RECFMT_MAX_COUNTERS];
	uint64_t group = 1 + (uint64_t)c->nr, head, ticks;
	bool waited = false;

	head = rec__window_open(&t->ring.p);
	if (!room_counted(t, c, head + group * (c->pending + 2), &waited)) {
		rec__window_close(&t->ring.p);
		rec__count_one(&t->ring.p.nr_dropped);
		if (t->own.frozen_full)
			rec__count_one(&t->own.nr_dropped_frozen);
		rec__scope_dropped(t);
		scope.gen = REC__GEN_DROPPED;
		return scope;
	}
	/* After any wait (block mode): the wait is not part of the activation. */
	ticks = rec__now_ticks(t);
	rec__counters_read(c, vals);
	push_counted(t, head, ticks, RECFMT_CODE(id, RECFMT_KIND_ENTER), vals, c->nr);
	c->pending++;
	scope.gen = __atomic_load_n(&t->ring.p.gen, __ATOMIC_RELAXED);
	rec__window_close(&t->ring.p);
	if (t->own.pend_words)
		rec__sample_flush(t); /* REC_SAMPLE: those that landed in the window */
	scope.code = RECFMT_CODE(id, RECFMT_KIND_EXIT);
	return scope;
}

NOINSTR static __attribute__((noinline)) void exit_counted(struct rec__thread *t, uint32_t code,
							 uint32_t gen)
{
	struct rec__counters *c = t->reg.ctr;
	uint64_t vals[RECFMT_MAX_COUNTERS];
	uint64_t head, ticks;

	if (!c->pending)
		return; /* the enter went into an earlier ring (see rec__probe_exit()) */
	if (gen != __atomic_load_n(&t->ring.p.gen, __ATOMIC_RELAXED)) {
		c->pending--; /* an earlier recording's enter: see rec__probe_exit() */
		return;
	}
	head = rec__window_open(&t->ring.p);
	/* Counters before the clock: the exit's counts end before its stamp. */
	rec__counters_read(c, vals);
	ticks = rec__now_ticks(t);
	/* Room was reserved by the enter. */
	push_counted(t, head, ticks, code, vals, c->nr);
	c->pending--;
	rec__window_close(&t->ring.p);
	if (t->own.pend_words)
		rec__sample_flush(t); /* REC_SAMPLE: those that landed in the window */
}

/*
 * rec__probe_enter() - the out-of-line enter of a thread with state and a
 * site id: counts a drop for a handler inside another probe's window,
 * takes the counted path on a thread with REC_COUNTERS, waits or drops
 * when the ring has no room for the enter, its exit and every pending
 * exit, and stamps the enter after any wait (README, "What librec
 * guarantees").
 * Return: the exit record to push later, 0 if the enter was not recorded.
 */
NOINSTR uint32_t rec__probe_enter(struct rec__thread *t, uint32_t id, uint32_t *gen)
{
	uint64_t head;
	bool waited = false;

	if (__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED))
		return 0; /* not recording: nothing to count */
	if (t->ring.p.nesting || !id) {
		rec__count_one(&t->ring.p.nr_dropped);
		rec__scope_dropped(t);
		*gen = REC__GEN_DROPPED;
		return 0;
	}
	if (t->reg.ctr) {
		struct rec__scope scope = enter_counted(t, id);

		*gen = scope.gen;
		return scope.code;
	}
	head = rec__window_open(&t->ring.p);
	if (head + t->ring.p.reserved + 2 > t->ring.p.limit &&
	    !wait_for_room(t, head + t->ring.p.reserved + 2, &waited)) {
		rec__window_close(&t->ring.p);
		rec__count_one(&t->ring.p.nr_dropped);
		if (t->own.frozen_full)
			rec__count_one(&t->own.nr_dropped_frozen);
		rec__scope_dropped(t);
		*gen = REC__GEN_DROPPED;
		return 0;
	}
	/* After any wait (block mode): the wait is not part of the activation. */
	rec__ring_push(&t->ring.p, head, rec__now_ticks(t), RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->ring.p.reserved++;
	*gen = __atomic_load_n(&t->ring.p.gen, __ATOMIC_RELAXED);
	rec__window_close(&t->ring.p);
	return RECFMT_CODE(id, RECFMT_KIND_EXIT);
}

/*
 * rec__probe_exit() - the exit of a recorded enter (code != 0), out of
 * line: no pending exit means the enter went into a ring this thread no
 * longer has (fork, a restart), or the thread counts (REC_COUNTERS keeps
 * `reserved` at 0); an enter of an earlier recording (a scope open across
 * rec_stop()/rec_start()) gives back its reservation and records nothing,
 * its enter not being in this file.
 */
NOINSTR void rec__probe_exit(struct rec__thread *t, uint32_t code, uint32_t gen)
{
	uint64_t head;

	if (unlikely(!t->ring.p.reserved)) {
		if (t->reg.ctr)
			exit_counted(t, code, gen);
		return;
	}
	if (unlikely(gen != __atomic_load_n(&t->ring.p.gen, __ATOMIC_RELAXED))) {
		t->ring.p.reserved--;
		return;
	}
	head = rec__window_open(&t->ring.p);
	/* Room was reserved by the enter: no check needed. */
	rec__ring_push(&t->ring.p, head, rec__now_ticks(t), code);
	t->ring.p.reserved--;
	rec__window_close(&t->ring.p);
}

/*
 * rec__enter() - TRACE_SCOPE's enter when rec.h's inline path cannot
 * record (and the whole enter for binaries built before it was inline):
 * attaches the thread and registers the site before any timestamp, with
 * rec__in_librec set so that a handler on this thread does not re-enter.
 */
NOINSTR struct rec__scope rec__enter(struct rec__site *site)
{
	struct rec__scope scope = { 0 };
	struct rec__thread *t = rec__self;
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);

	if (rec__in_librec) {
		/*
		 * A signal handler interrupted librec on this thread (which may
		 * hold its lock): no re-entry, and no wait for room either.
		 */
		rec__count_one(t ? &t->ring.p.nr_dropped : &rec__orphan_drops);
		if (t) {
			rec__scope_dropped(t);
			scope.gen = REC__GEN_DROPPED;
		}
		return scope;
	}
	if (unlikely(!t || !id || !t->ring.p.events)) {
		rec__in_librec = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (!t && rec__start_lazy())
			t = rec__thread_attach();
		/* A ring freed since (budget: thread.c), faulted in before our stamp. */
		if (t && unlikely(!t->ring.p.events))
			rec__thread_ring_retry(t, true);
		if (t && !id && !__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED))
			id = rec__site_register(site);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rec__in_librec = 0;
		if (!t)
			return scope; /* not recording: nothing to count */
	}
	if (unlikely(t->own.detour))
		rec__sample_flush(t); /* REC_SAMPLE: samples that landed in a window */
	scope.code = rec__probe_enter(t, id, &scope.gen);
	return scope;
}

NOINSTR void rec__exit(struct rec__scope *scope)
{
	struct rec__thread *t = rec__self;

	if (t && unlikely(t->own.detour))
		rec__sample_flush(t); /* REC_SAMPLE: samples that landed in a window */
	if (scope->code && t)
		rec__probe_exit(t, scope->code, scope->gen);
	else if (!scope->code && scope->gen == REC__GEN_DROPPED && t)
		rec__scope_dropped_exit(t);
}

/* ---------------------------------------------------------------------
 * Annotations (rec(3); FORMAT.md §3.17-§3.19; ring slots: rec_internal.h).
 */

/* Recorded scopes of this thread still open: the ones an annotation can bind to. */
NOINSTR static inline uint64_t recorded_depth(const struct rec__thread *t)
{
	return t->reg.ctr ? t->reg.ctr->pending : t->ring.p.reserved;
}

NOINSTR static inline void add_u32(uint32_t *v, int32_t d)
{
	/* One instruction, as rec__count_one(): a handler on this thread may
	 * change it too, and leaves it as it found it (its scopes are left
	 * before it returns). */
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("addl %1, %0" : "+m"(*v) : "ir"(d));
#else
	__atomic_fetch_add(v, (uint32_t)d, __ATOMIC_RELAXED);
#endif
}

/*
 * The innermost dropped scope is on top of the thread's scopes exactly when
 * no recorded scope was entered since it: when the recorded depth is the one
 * it was entered at. annot_floor keeps that depth for the latest dropped
 * enter; when a dropped scope is left, the next one out was entered at this
 * depth or lower, so the depth now is an upper bound: an annotation may then
 * be dropped that could have been kept (a recorded scope inside a dropped
 * one, inside a dropped one), never kept on the wrong activation. A handler
 * that interrupts these stores on this thread only raises the bound.
 */
NOINSTR void rec__scope_dropped(struct rec__thread *t)
{
	add_u32(&t->ring.p.open_dropped, 1);
	t->own.annot_floor = (uint32_t)recorded_depth(t);
}

NOINSTR void rec__scope_dropped_exit(struct rec__thread *t)
{
	if (t->ring.p.open_dropped)
		add_u32(&t->ring.p.open_dropped, -1);
	t->own.annot_floor = (uint32_t)recorded_depth(t);
}

NOINSTR static void annot_drop(struct rec__thread *t)
{
	rec__count_one(&t->own.nr_annots_dropped);
}

/*
 * annot_push() - records one annotation: argbits is the name id (MESSAGE:
 * the text's bytes), value its 64 bits, text MESSAGE's text. Drops (counted)
 * in a handler inside another probe's window, with no name id, on a thread
 * with REC_COUNTERS (its ring holds counter groups only), for an argument or
 * a flow step whose innermost scope was dropped, and when the ring has no
 * room for it and every pending exit (block mode: waits, then stamps).
 */
NOINSTR static void annot_push(struct rec__thread *t, uint32_t kind, uint32_t argbits,
			       uint64_t value, const char *text)
{
	uint32_t aux = kind << 28 | argbits, n = rec__annot_slots(aux);
	struct recfmt_event *ev;
	uint64_t head, need;
	bool waited = false;

	if (__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED))
		return; /* not recording: nothing to count */
	if (t->ring.p.nesting || (kind != RECFMT_ANNOT_MESSAGE && !argbits) || t->reg.ctr ||
	    (kind >= RECFMT_ANNOT_ARG && t->ring.p.open_dropped &&
	     recorded_depth(t) <= t->own.annot_floor)) {
		annot_drop(t);
		return;
	}
	head = rec__window_open(&t->ring.p);
	need = head + t->ring.p.reserved + n;
	if (need > t->ring.p.limit && !wait_for_room(t, need, &waited)) {
		rec__window_close(&t->ring.p);
		annot_drop(t);
		return;
	}
	ev = &rec__own_slots(t)[head & t->ring.p.mask];
	ev->ticks = rec__now_ticks(t); /* after any wait */
	ev->code = REC__ANNOT_CODE;
	ev->aux = aux;
	for (uint32_t i = 1; i < n; i++) {
		ev = &rec__own_slots(t)[(head + i) & t->ring.p.mask];
		if (kind == RECFMT_ANNOT_MESSAGE) {
			uint32_t off = (i - 1) * 8, k = argbits - off < 8 ? argbits - off : 8;

			if (k == 8) {
				memcpy(&ev->ticks, text + off, 8); /* one load, one store */
			} else {
				ev->ticks = 0;
				memcpy(&ev->ticks, text + off, k);
			}
		} else {
			ev->ticks = value;
		}
		ev->code = REC__ANNOT_CODE;
		ev->aux = 0;
	}
	__atomic_store_n(&t->ring.p.annots, 1, __ATOMIC_RELAXED); /* before (B), as in rec.h */
	/* (B) pairs with (C) in writer.c: every slot before head moves. */
	__atomic_store_n(&t->ring.p.head, head + n, __ATOMIC_RELEASE);
	rec__window_close(&t->ring.p);
}

/*
 * The calling thread, attached, with its ring if it can have one; as
 * rec__enter() does before its stamp. *id: registers the name if 0 and
 * site is given. Return: NULL if not recording.
 */
NOINSTR static struct rec__thread *annot_thread(struct rec__annot_site *site, uint32_t *id)
{
	struct rec__thread *t = rec__self;

	if (rec__in_librec) {
		/* A handler interrupted librec on this thread: no re-entry. */
		rec__count_one(t ? &t->own.nr_annots_dropped : &rec__orphan_annot_drops);
		return NULL;
	}
	if (unlikely(!t || (site && !*id) || !t->ring.p.events)) {
		rec__in_librec = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (!t && rec__start_lazy())
			t = rec__thread_attach();
		if (t && unlikely(!t->ring.p.events))
			rec__thread_ring_retry(t, true);
		if (t && site && !*id && !__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED))
			*id = rec__annot_register(site);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rec__in_librec = 0;
	}
	if (t && unlikely(t->own.detour))
		rec__sample_flush(t); /* REC_SAMPLE: samples that landed in a window */
	return t;
}

/* rec__annot() - rec.h's rec__annot_if() when its inline path cannot record. */
NOINSTR void rec__annot(struct rec__annot_site *site, uint32_t kind, uint64_t value)
{
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
	struct rec__thread *t;

	if (__atomic_load_n(&rec__disabled, __ATOMIC_RELAXED) || kind < RECFMT_ANNOT_VALUE_I64 ||
	    kind > RECFMT_ANNOT_KIND_MAX || kind == RECFMT_ANNOT_MESSAGE)
		return;
	t = annot_thread(site, &id);
	if (t)
		annot_push(t, kind, id, kind == RECFMT_ANNOT_INSTANT ? 0 : value, NULL);
}

/* rec__message() - TRACE_MESSAGE: its first RECFMT_MAX_MESSAGE_BYTES bytes. */
NOINSTR void rec__message(const char *text)
{
	uint32_t len = 0;
	struct rec__thread *t;

	if (__atomic_load_n(&rec__disabled, __ATOMIC_RELAXED))
		return;
	t = annot_thread(NULL, &len);
	if (!t)
		return;
	if (text)
		len = (uint32_t)strnlen(text, RECFMT_MAX_MESSAGE_BYTES); /* reads no byte past the NUL */
	annot_push(t, RECFMT_ANNOT_MESSAGE, len, 0, text ? text : "");
}
