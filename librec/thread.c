/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread state: created on a thread's first probe (or
 * rec_thread_name), kept in the registry the writer scans, and detached by a
 * TLS destructor when the thread exits so that the writer drains and frees
 * its ring. Rings of exited threads are kept in a small pool and reused,
 * because first-touching fresh ring pages is slow on some machines.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define POOL_MAX 16
#define HUGE_PAGE_BYTES (2u << 20)
#define PAGE_BYTES 4096u
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/*
 * Ring memory budget (README "Memory"; docs/DESIGN.md "Thread churn"). The
 * memory a ring holds is what was touched of it: live threads' rings, and
 * the "spare" rings, those of exited threads the writer has not freed yet
 * and those kept in the pool. A new ring is mapped only while the spare
 * rings hold less than spare_bytes(); else the thread starts without one
 * and its scopes are dropped (counted) until the writer frees an exited
 * thread's ring. So the rings never hold more than REC_BUFFER per traced
 * thread alive at once, plus spare_bytes(), plus one ring.
 */
struct pooled {
	struct rec__event *ring;
	size_t bytes;	      /* mapped */
	size_t touched_bytes; /* at most bytes */
};
static struct pooled pool[POOL_MAX]; /* under rec__g.lock */
static unsigned nr_pool;
static size_t pool_touched_bytes; /* under rec__g.lock */
/* Touched bytes of exited threads' rings not freed yet: added by exiting
 * threads, subtracted by the writer at reap (atomic: no common lock). */
static size_t dead_touched_bytes;
/*
 * Bumped (release) each time the writer frees or pools an exited thread's
 * ring; a thread without a ring retries only when it changed, so that its
 * probes do not take the lock each time (rec__thread_ring_retry()).
 */
static uint32_t ring_gen;

static size_t spare_bytes(void)
{
	size_t b = (size_t)REC__SPARE_RINGS * rec__g.cfg.buffer_bytes;

	return b > REC__SPARE_MIN_BYTES ? b : REC__SPARE_MIN_BYTES;
}

/* Under rec__g.lock: a ring from the pool, or a new one if the budget allows. */
static struct rec__event *ring_alloc(size_t bytes, size_t *touched_bytes)
{
	void *p;

	for (unsigned i = 0; i < nr_pool; i++) {
		if (pool[i].bytes == bytes) {
			p = pool[i].ring;
			*touched_bytes = pool[i].touched_bytes;
			pool_touched_bytes -= pool[i].touched_bytes;
			pool[i] = pool[--nr_pool];
			return p;
		}
	}
	/* Rings of another size (a restart changed REC_BUFFER) make room first. */
	while (nr_pool && pool_touched_bytes +
				  __atomic_load_n(&dead_touched_bytes, __ATOMIC_RELAXED) >=
			  spare_bytes()) {
		nr_pool--;
		pool_touched_bytes -= pool[nr_pool].touched_bytes;
		munmap(pool[nr_pool].ring, pool[nr_pool].bytes);
	}
	if (pool_touched_bytes + __atomic_load_n(&dead_touched_bytes, __ATOMIC_RELAXED) >=
	    spare_bytes())
		return NULL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE); /* fewer first-touch faults; advisory */
#endif
	*touched_bytes = 0;
	return p;
}

/* Under rec__g.lock: keep a ring for the next thread if the budget allows. */
static void ring_free(struct rec__event *ring, size_t bytes, size_t touched_bytes)
{
	if (!ring)
		return;
	if (nr_pool < POOL_MAX && pool_touched_bytes + touched_bytes <= spare_bytes()) {
		pool[nr_pool++] = (struct pooled){ ring, bytes, touched_bytes };
		pool_touched_bytes += touched_bytes;
	} else {
		munmap(ring, bytes);
	}
	/* Pairs with the acquire in rec__thread_ring_retry(). */
	__atomic_fetch_add(&ring_gen, 1, __ATOMIC_RELEASE);
}

/*
 * On the owner thread, outside rec__g.lock, before its first timestamp:
 * fault the whole ring in now, so that no probe ever takes a page fault on
 * it (README, "What librec guarantees": the kernel zeroing ring pages inside a push lands in the
 * activation being recorded). A ring from the pool is already touched.
 * Each page is written once by hand, not with MADV_POPULATE_WRITE: that
 * holds the process's mmap_lock for the whole ring, and a producer
 * preempted inside it (every core busy) stalled every page fault and mmap
 * of the process behind it, the writer's included, for up to 0.8 s
 * (bench_flush_lag, issue 26 item 9). A fault by hand takes only the ring's
 * own VMA lock (Linux >= 6.4), one page (or huge page) at a time. Only plain
 * stores: fine in a signal handler. The writer reads no slot at or above
 * head (0).
 */
static void ring_prefault(struct rec__thread *t)
{
	volatile char *p = (volatile char *)t->ring.p.events;

	if (!p || t->reg.ring_touched_bytes >= t->reg.ring_bytes)
		return;
	for (size_t i = 0; i < t->reg.ring_bytes; i += PAGE_BYTES)
		p[i] = 0;
	/* Owner-written before `dead` (as at exit); see ring_touched_bytes. */
	t->reg.ring_touched_bytes = t->reg.ring_bytes;
}

/* Under rec__g.lock: give t a ring if there is room. */
static bool ring_attach_locked(struct rec__thread *t)
{
	t->ring.p.events = ring_alloc(t->reg.ring_bytes, &t->reg.ring_touched_bytes);
	if (!t->ring.p.events)
		return false;
	t->ring.p.mask = t->reg.ring_bytes / sizeof(struct recfmt_event) - 1;
	return true;
}

/*
 * rec__add_drops() - fold drops counted before this thread had its state
 * (rec__orphan_drops, probe.c) into its nr_dropped at attach: the same
 * one-instruction add as the probe's, since a handler on the owner may
 * count too. Here, not in probe.c, so that thread.c calls nothing in
 * probe.c (probe.c calls thread.c).
 */
static __attribute__((no_instrument_function)) void rec__add_drops(struct rec__thread *t, uint64_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("addq %1, %0" : "+m"(t->ring.p.nr_dropped) : "r"(n));
#else
	__atomic_fetch_add(&t->ring.p.nr_dropped, n, __ATOMIC_RELAXED);
#endif
}

/*
 * rec__thread_ring_retry() - on the owner thread, in a probe's slow path
 * (window open): a thread created without a ring (budget reached) takes
 * one if an exited thread's ring was freed since its last try. The writer
 * reads events and mask only below head, which this thread publishes later
 * (release at (B)). Return: true if the thread has a ring now.
 */
bool rec__thread_ring_retry(struct rec__thread *t)
{
	/* Pairs with the release in ring_free(). */
	uint32_t gen = __atomic_load_n(&ring_gen, __ATOMIC_ACQUIRE);
	bool ok;

	if (gen == t->own.ring_gen_seen)
		return false;
	pthread_mutex_lock(&rec__g.lock);
	t->own.ring_gen_seen = gen;
	ok = ring_attach_locked(t);
	pthread_mutex_unlock(&rec__g.lock);
	if (ok)
		ring_prefault(t);
	return ok;
}

/* Runs at thread exit (pthread key destructor): hand the ring to the writer. */
static void thread_exit(void *arg)
{
	struct rec__thread *t = arg;

	rec__set_self(NULL);
	/* The group counts this thread only: close it now (the writer still
	 * reads its column count, so the state itself lives on). */
	rec__counters_close(t->reg.ctr);
	if (t->ring.p.events) {
		/*
		 * What the ring holds until the writer frees it: the slots ever
		 * written, in whole pages (huge pages: madvise above), at least
		 * what an earlier owner touched.
		 */
		uint64_t cap = t->ring.p.mask + 1, n = t->ring.p.head < cap ? t->ring.p.head : cap;
		size_t page = t->reg.ring_bytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : PAGE_BYTES;
		size_t used = ((size_t)n * sizeof(struct recfmt_event) + page - 1) / page * page;

		if (used > t->reg.ring_bytes)
			used = t->reg.ring_bytes;
		if (used > t->reg.ring_touched_bytes)
			t->reg.ring_touched_bytes = used;
		__atomic_fetch_add(&dead_touched_bytes, t->reg.ring_touched_bytes, __ATOMIC_RELAXED);
	}
	/* Its last name, for the writer (which can no longer read /proc). */
	if (prctl(PR_GET_NAME, t->own.exit_comm) != 0)
		t->own.exit_comm[0] = '\0';
	/* Pairs with the acquire load of `dead` in writer.c: every event is published. */
	__atomic_store_n(&t->reg.dead, 1, __ATOMIC_RELEASE);
	/* The writer drains and frees the ring now, not at its next poll. */
	rec__writer_wake();
}

void rec__thread_init_key(void)
{
	pthread_key_create(&rec__g.key, thread_exit);
}

struct rec__thread *rec__thread_self(void)
{
	return rec__self;
}

/*
 * mmap, not malloc: this may run in a signal handler (see probe.c).
 * Populated: the hooks' cache and shadow stack are touched by probes.
 * Before rec__g.lock is taken: a producer preempted while holding it,
 * inside a system call that takes mmap_lock, stalls the writer's pass.
 */
static struct rec__thread *thread_alloc(void)
{
	void *t = mmap(NULL, sizeof(struct rec__thread), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return t == MAP_FAILED ? NULL : t;
}

/* Under rec__g.lock: registers t, fresh from thread_alloc(). */
static struct rec__thread *thread_create_locked(struct rec__thread *t)
{
	t->reg.ring_bytes = rec__g.cfg.buffer_bytes;
	t->ring.p.woke_tail = UINT64_MAX; /* no wake yet: see wait_for_room() */
	/* REC_MODE=flight: no hold, its producer discards at will (ring.h). */
	t->ring.tail = rec__g.cfg.flight ? REC__RING_FREE : 0;
	t->own.ring_gen_seen = __atomic_load_n(&ring_gen, __ATOMIC_RELAXED);
	/*
	 * No ring when the budget is reached (or mmap fails): the thread is
	 * registered all the same, so that its scopes are counted as drops,
	 * and takes a ring later (rec__thread_ring_retry()).
	 */
	if (ring_attach_locked(t))
		t->ring.p.limit = (t->ring.p.mask + 1) / 4; /* soft limit: see wait_for_room() */
	t->ring.p.use_tsc = rec__g.cfg.use_tsc;
	t->ring.p.block = rec__g.cfg.block;
	t->reg.serial = ++rec__g.next_serial;
	t->reg.os_tid = (uint32_t)gettid();
	t->reg.name_gen = 1;
	/* On the thread itself: its perf-event group counts this thread. */
	t->reg.ctr = rec__counters_open();
	if (t->reg.ctr)
		t->ring.p.limit = 0; /* every probe takes the counted path (probe.c) */
	t->reg.next = rec__g.threads;
	rec__g.threads = t;
	return t;
}

/*
 * rec__thread_attach() - the calling thread's state, created on first use.
 * Recording must have been started before (rec__start_lazy(): the caller
 * starts it, so that attaching never calls back into lifecycle.c).
 * Return: NULL when not recording (stopped, disabled, failed, no memory).
 */
struct rec__thread *rec__thread_attach(void)
{
	struct rec__thread *t = rec__self, *fresh;
	int state = __atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE);

	if (t)
		return t;
	if (state != REC__RUNNING)
		return NULL;
	fresh = thread_alloc();
	if (!fresh)
		return NULL;
	pthread_mutex_lock(&rec__g.lock);
	if (rec__g.state == REC__RUNNING) {
		t = thread_create_locked(fresh);
		fresh = NULL;
		if (t) {
			pthread_setspecific(rec__g.key, t);
			rec__set_self(t);
			/*
			 * From here a handler on this thread counts into t, so the
			 * orphan count is final: move it (one add, as count_one()).
			 */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			rec__add_drops(t, rec__orphan_drops);
			rec__orphan_drops = 0;
			/* The writer reads it (relaxed) once t is registered. */
			__atomic_store_n(&t->own.nr_annots_dropped,
					 t->own.nr_annots_dropped + rec__orphan_annot_drops,
					 __ATOMIC_RELAXED);
			rec__orphan_annot_drops = 0;
		}
	}
	pthread_mutex_unlock(&rec__g.lock);
	if (fresh)
		munmap(fresh, sizeof(*fresh)); /* recording stopped meanwhile */
	/* Before the caller reads the clock for its first record. */
	if (t)
		ring_prefault(t);
	return t;
}

void rec__thread_free(struct rec__thread *t)
{
	rec__counters_free(t->reg.ctr);
	/* Pairs with the release of `dead`: ring_touched_bytes is final. */
	if (t->ring.p.events && __atomic_load_n(&t->reg.dead, __ATOMIC_ACQUIRE))
		__atomic_fetch_sub(&dead_touched_bytes, t->reg.ring_touched_bytes, __ATOMIC_RELAXED);
	ring_free(t->ring.p.events, t->reg.ring_bytes, t->reg.ring_touched_bytes);
	munmap(t, sizeof(*t));
}

/* Under rec__g.lock: make every thread's probes record nothing. */
void rec__thread_set_all_off(void)
{
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next)
		__atomic_store_n(&t->ring.p.off, 1, __ATOMIC_RELAXED);
}

/*
 * In a child after fork(): the parent's threads do not exist here and their
 * rings belong to the parent's recording. Free them all (the memory is the
 * child's copy) and let the calling thread start afresh.
 */
void rec__thread_forget_all(void)
{
	struct rec__thread *t = rec__g.threads, *next;

	for (; t; t = next) {
		next = t->reg.next;
		rec__thread_free(t);
	}
	dead_touched_bytes = 0; /* the parent's exiting threads may have been counting */
	rec__g.threads = NULL;
	rec__g.next_serial = 0;
	rec__set_self(NULL);
	pthread_setspecific(rec__g.key, NULL);
}

/* rec_thread_name()'s part (lifecycle.c): under rec__g.lock. */
void rec__thread_set_name(struct rec__thread *t, const char *name)
{
	pthread_mutex_lock(&rec__g.lock);
	snprintf(t->reg.name, sizeof(t->reg.name), "%s", name);
	t->reg.named = 1;
	t->reg.name_gen++;
	pthread_mutex_unlock(&rec__g.lock);
}
