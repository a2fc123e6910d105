/* SPDX-License-Identifier: MIT */
/*
 * probe.c - rec__enter/rec__exit, the code every TRACE_SCOPE runs: read the
 * clock, push one record into the calling thread's ring, count a drop when
 * there is no room. The fast path takes no lock, makes no call and no atomic
 * read-modify-write; the slow path (first probe of a thread or site, full
 * ring, signal nesting) is out of line. The ring protocol and labels (A)-(D)
 * are in rec_internal.h.
 */
#include "rec_internal.h"

#include <errno.h>
#include <time.h>

__thread struct rec__thread *rec__self __attribute__((tls_model("initial-exec")));

static inline uint64_t now_ticks(const struct rec__thread *t)
{
	if (likely(t->use_tsc))
		return rec__rdtsc();
	return rec__clock_now(false);
}

/* Only the owner writes nr_dropped; the writer reads it, hence the atomics. */
static void count_drop(struct rec__thread *t)
{
	__atomic_store_n(&t->nr_dropped, t->nr_dropped + 1, __ATOMIC_RELAXED);
}

static inline void push(struct rec__thread *t, uint64_t head, uint32_t code)
{
	struct recfmt_event *ev = &t->events[head & t->mask];

	ev->ticks = now_ticks(t);
	ev->code = code;
	/* (B) pairs with (C) in writer.c: the slot is written before head moves. */
	__atomic_store_n(&t->head, head + 1, __ATOMIC_RELEASE);
}

/*
 * Waits for room in block mode: sleeps rather than spins, and gives up when
 * recording stops (the writer will never drain again). Return: true if
 * there is room now.
 */
static bool wait_for_room(struct rec__thread *t, uint64_t need)
{
	struct timespec nap = { 0, 50 * 1000 };

	for (;;) {
		/* (A) pairs with (D) in writer.c. */
		t->limit = __atomic_load_n(&t->tail, __ATOMIC_ACQUIRE) + t->mask + 1;
		if (need <= t->limit)
			return true;
		if (!t->block || __atomic_load_n(&t->off, __ATOMIC_RELAXED))
			return false;
		nanosleep(&nap, NULL); /* async-signal-safe: fine in a handler */
	}
}

static __attribute__((noinline)) struct rec__scope enter_slow(struct rec__site *site)
{
	struct rec__scope scope = { 0 };
	struct rec__thread *t = rec__self;
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
	uint64_t head;

	if (!t) {
		t = rec__thread_attach();
		if (!t)
			return scope; /* not recording: nothing to count */
	}
	if (__atomic_load_n(&t->off, __ATOMIC_RELAXED))
		return scope;
	if (!id)
		id = rec__site_register(site);
	if (t->nesting || !id) {
		count_drop(t);
		return scope;
	}
	t->nesting = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head = __atomic_load_n(&t->head, __ATOMIC_RELAXED);
	if (head + t->reserved + 2 > t->limit && !wait_for_room(t, head + t->reserved + 2)) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->nesting = 0;
		count_drop(t);
		return scope;
	}
	push(t, head, RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->reserved++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nesting = 0;
	scope.code = RECFMT_CODE(id, RECFMT_KIND_EXIT);
	return scope;
}

struct rec__scope rec__enter(struct rec__site *site)
{
	struct rec__thread *t = rec__self;
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
	struct rec__scope scope;
	uint64_t head;

	if (unlikely(!t || !id || t->nesting || __atomic_load_n(&t->off, __ATOMIC_RELAXED)))
		return enter_slow(site);
	t->nesting = 1;
	/* The handler of a signal landing from here on sees nesting set. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head = __atomic_load_n(&t->head, __ATOMIC_RELAXED);
	if (unlikely(head + t->reserved + 2 > t->limit)) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->nesting = 0;
		return enter_slow(site);
	}
	push(t, head, RECFMT_CODE(id, RECFMT_KIND_ENTER));
	t->reserved++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nesting = 0;
	scope.code = RECFMT_CODE(id, RECFMT_KIND_EXIT);
	return scope;
}

void rec__exit(struct rec__scope *scope)
{
	struct rec__thread *t;
	uint64_t head;

	if (!scope->code)
		return; /* the enter was not recorded: neither is the exit */
	t = rec__self;
	/*
	 * No pending exit: the enter went into a ring this thread no longer
	 * has (fork, or a restart in between). Recording the exit would
	 * unbalance the new ring.
	 */
	if (unlikely(!t || !t->reserved))
		return;
	t->nesting = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	head = __atomic_load_n(&t->head, __ATOMIC_RELAXED);
	/* Room was reserved by the enter: no check needed. */
	push(t, head, scope->code);
	t->reserved--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nesting = 0;
}
