/* SPDX-License-Identifier: MIT */
/*
 * hooks.c - the -finstrument-functions hooks (__cyg_profile_func_enter and
 * _exit): whole-program mode. Each hook records like TRACE_SCOPE -- the
 * same ring protocol from rec.h (window, push), the same reserve-for-exit
 * rule and drop accounting; the rare cases go to probe.c's out-of-line
 * paths -- with the site id found by function address in a per-thread
 * cache (registry in site.c) and the exit's record kept on a per-thread
 * shadow stack, since a hook has no scope variable to carry it. librec
 * itself is built with -fno-instrument-functions, and every function here
 * is no_instrument_function as well: nothing in it may call the hooks.
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
#include "rec_internal.h"

#define NOINSTR __attribute__((no_instrument_function))

void __cyg_profile_func_enter(void *fn, void *call_site) REC_API NOINSTR;
void __cyg_profile_func_exit(void *fn, void *call_site) REC_API NOINSTR;

static inline NOINSTR struct rec__fcache_slot *fcache_slot(struct rec__thread *t, uintptr_t fn)
{
	return &t->hk.fcache[((fn >> 4) ^ (fn >> 14)) & (REC__FCACHE_SLOTS - 1)];
}

/* Takes level d (already read from fdepth) and stores its frame. */
static inline NOINSTR void fframe_push(struct rec__thread *t, uint32_t d, uintptr_t fn,
				       uint32_t code, uint32_t gen)
{
	t->own.fdepth = d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (d < REC__FSTACK_DEPTH) {
		t->hk.fstack[d].fn = fn;
		t->hk.fstack[d].code = code;
		t->hk.fstack[d].gen = gen;
	}
}

/*
 * The thread's first hook, before any stamp: fault in its cache and shadow
 * stack (struct rec__thread_hooks, which thread.c leaves untouched so that
 * a thread without hooks does not hold them), one store per page. Until
 * hooks_ready is set every enter hook comes here through the slow path.
 *
 * After a dlclose() that unmapped a module (hooks_ready STALE, set by
 * rec__thread_hooks_stale_all()): empty the cache, whose addresses may now
 * hold another library's functions, then READY again. In that order: a
 * dlclose() meanwhile finds STALE and leaves it, and what it unmapped was
 * unmapped before its epoch bump, which this thread's next registration
 * (after the clearing) sees (site.c); one after READY makes it STALE again.
 * A handler's hook meanwhile finds STALE and comes here too.
 */
static NOINSTR void hooks_prefault(struct rec__thread *t)
{
	volatile char *p = (volatile char *)&t->hk;
	uint8_t state = __atomic_load_n(&t->own.hooks_ready, __ATOMIC_ACQUIRE);

	if (state == REC__HOOKS_READY)
		return;
	if (state == REC__HOOKS_STALE) {
		for (uint32_t i = 0; i < REC__FCACHE_SLOTS; i++)
			t->hk.fcache[i].fn = 0;
	} else {
		for (size_t i = 0; i < sizeof(t->hk); i += REC__PAGE_BYTES)
			p[i] = 0;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&t->own.hooks_ready, REC__HOOKS_READY, __ATOMIC_SEQ_CST);
}

static NOINSTR __attribute__((noinline)) void func_enter_slow(uintptr_t fn)
{
	struct rec__thread *t = rec__self;
	uint32_t id = 0, code = 0, gen = 0, d;

	if (rec__in_librec) {
		/*
		 * librec's own slow path or API call was interrupted by a
		 * handler, or (built against advice) runs instrumented code:
		 * no re-entry. The writer thread never records.
		 */
		if (t) {
			rec__count_one(&t->ring.p.nr_dropped);
			rec__scope_dropped(t);
			hooks_prefault(t);
			fframe_push(t, t->own.fdepth, fn, 0, REC__GEN_DROPPED);
		}
		return;
	}
	rec__in_librec = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!t && rec__start_lazy())
		t = rec__thread_attach();
	if (t && unlikely(!t->ring.p.events))
		rec__thread_ring_retry(t, true); /* as in rec__enter() */
	if (t)
		hooks_prefault(t);
	if (t && !__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED)) {
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
	d = t->own.fdepth;
	if (d >= REC__FSTACK_DEPTH) {
		if (!__atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED))
			rec__count_one(&t->ring.p.nr_dropped);
		rec__scope_dropped(t); /* its exit: func_exit_slow() */
	} else {
		code = rec__probe_enter(t, id, &gen);
	}
	fframe_push(t, d, fn, code, gen);
}

/*
 * func_enter() - what __cyg_profile_func_enter() does: called by code built
 * with -finstrument-functions on entry to every function, it records an
 * enter of the function's site, like TRACE_SCOPE. Any thread; never blocks
 * (except in REC_OVERFLOW=block mode); async-signal-safe as rec__enter() is.
 */
static inline NOINSTR __attribute__((always_inline)) void func_enter(void *fn_ptr)
{
	struct rec__thread *t = rec__self;
	uintptr_t fn = (uintptr_t)fn_ptr;
	struct rec__fcache_slot *c;
	uint64_t head;
	uint32_t d, id, gen;

	/*
	 * A CLOCK_MONOTONIC thread (no use_tsc) records through the slow path,
	 * as rec.h's inline probe does: with no call left in it, the fast path
	 * needs no callee-saved register (no push or pop around each hook).
	 */
	if (unlikely(!t || t->ring.p.nesting || !t->ring.p.use_tsc ||
		     __atomic_load_n(&t->own.hooks_ready, __ATOMIC_RELAXED) != REC__HOOKS_READY ||
		     __atomic_load_n(&t->ring.p.off, __ATOMIC_RELAXED)))
		goto slow;
	d = t->own.fdepth;
	c = fcache_slot(t, fn);
	id = c->id;
	if (unlikely(c->fn != fn || d >= REC__FSTACK_DEPTH))
		goto slow;
	head = rec__window_open(&t->ring.p);
	if (unlikely(head + t->ring.p.reserved + 2 > t->ring.p.limit)) {
		rec__window_close(&t->ring.p);
		goto slow;
	}
	rec__ring_push(&t->ring.p, head, rec__rdtsc(), RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->ring.p.reserved++;
	gen = __atomic_load_n(&t->ring.p.gen, __ATOMIC_RELAXED);
	rec__window_close(&t->ring.p);
	fframe_push(t, d, fn, RECFMT_CODE(id, RECFMT_KIND_EXIT), gen);
	return;
slow:
	func_enter_slow(fn);
}

/* The exit of a frame: records code unless the enter was not recorded. */
static inline NOINSTR __attribute__((always_inline)) void push_exit(struct rec__thread *t,
								   uint32_t code, uint32_t gen)
{
	uint64_t head;

	if (!code) {
		if (unlikely(gen == REC__GEN_DROPPED))
			rec__scope_dropped_exit(t); /* dropped: see rec__scope_dropped() */
		return; /* not recorded */
	}
	if (unlikely(!t->ring.p.reserved || !t->ring.p.use_tsc ||
		     gen != __atomic_load_n(&t->ring.p.gen, __ATOMIC_RELAXED))) {
		/* counted thread, a ring or recording gone, or CLOCK_MONOTONIC */
		rec__probe_exit(t, code, gen);
		return;
	}
	head = rec__window_open(&t->ring.p);
	rec__ring_push(&t->ring.p, head, rec__rdtsc(), code); /* room was reserved by the enter */
	t->ring.p.reserved--;
	rec__window_close(&t->ring.p);
}

static NOINSTR __attribute__((noinline)) void func_exit_slow(struct rec__thread *t, uintptr_t fn)
{
	uint32_t d = t->own.fdepth, k;

	if (d == 0)
		return; /* the enter ran before this thread had state */
	if (d > REC__FSTACK_DEPTH) {
		t->own.fdepth = d - 1; /* too deep: the enter was dropped, not stored */
		rec__scope_dropped_exit(t);
		return;
	}
	/*
	 * Not on top: exits were skipped (longjmp, or an exception through
	 * code that was not instrumented). Close the skipped frames now, so
	 * that the trace stays well nested; a frame of fn not found in the
	 * last 64 levels means this exit matches no enter we kept.
	 */
	for (k = d; k-- > 0 && d - k <= 64;) {
		if (t->hk.fstack[k].fn != fn)
			continue;
		while (d > k) {
			uint32_t code = t->hk.fstack[--d].code, gen = t->hk.fstack[d].gen;

			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			t->own.fdepth = d;
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
	d = t->own.fdepth;
	if (unlikely(d - 1 >= REC__FSTACK_DEPTH || t->hk.fstack[d - 1].fn != fn)) {
		func_exit_slow(t, fn);
		return;
	}
	code = t->hk.fstack[d - 1].code;
	gen = t->hk.fstack[d - 1].gen;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->own.fdepth = d - 1;
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
 * REC_GLIBC_HOOK_VERSION, GLIBC_2.2.5 on x86-64, GLIBC_2.17 on ARM64), and a library built with
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
