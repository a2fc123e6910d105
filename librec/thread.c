/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread state: created on a thread's first probe (or
 * rec_thread_name), kept in the registry the writer scans, and detached by a
 * TLS destructor when the thread exits so that the writer drains and frees
 * it. Its rings come from mem.c and go back there.
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

/*
 * On the owner thread, or the writer for a ring it maps: the thread's
 * state up to its hooks' part (struct rec__thread_hooks, faulted in by the
 * first hook: hooks.c), one store per page, so that no probe faults on it.
 */
static void state_prefault(struct rec__thread *t)
{
	volatile char *p = (volatile char *)t;

	for (size_t i = 0; i < offsetof(struct rec__thread, hk); i += REC__PAGE_BYTES)
		p[i] = 0;
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
 * or before its stamp: a thread that attached while REC_MEMORY was
 * reached takes a ring if one was given back since its last try (one
 * acquire load otherwise): from the pool, or, may_map (before the probe's
 * stamp, outside its window), mapped and faulted in now. The
 * writer reads the ring only below head, which this thread publishes
 * later (release at (B)). Return: true if the thread has a ring now.
 */
bool rec__thread_ring_retry(struct rec__thread *t, bool may_map)
{
	uint32_t gen = rec__mem_gen();
	uintptr_t seg;

	if (gen == t->own.ring_gen_seen)
		return false;
	t->own.ring_gen_seen = gen;
	seg = rec__mem_first(may_map);
	if (!seg) {
		rec__thread_note_cap(t);
		return false;
	}
	rec__ring_install(&t->ring, seg);
	return true;
}

/* Runs at thread exit (pthread key destructor): hand the ring to the writer. */
static void thread_exit(void *arg)
{
	struct rec__thread *t = arg;

	if (rec__thread_exit_hook)
		rec__thread_exit_hook(); /* REC_SAMPLE: no sample of it from now on */
	rec__set_self(NULL);
	/* The group counts this thread only: close it now (the writer still
	 * reads its column count, so the state itself lives on). */
	rec__counters_close(t->reg.ctr);
	/* Its last name, for the writer (which can no longer read /proc). */
	if (prctl(PR_GET_NAME, t->own.exit_comm) != 0)
		t->own.exit_comm[0] = '\0';
	/* Pairs with the acquire load of `dead` in writer.c: every event is published. */
	__atomic_store_n(&t->reg.dead, 1, __ATOMIC_RELEASE);
	/* The writer drains and frees the ring now, not at its next poll. */
	rec__writer_wake();
}

void (*rec__thread_exit_hook)(void);

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
 * Faulted in up to the hooks' part (state_prefault()). Before rec__g.lock
 * is taken: a producer preempted while holding it, inside a system call
 * that takes mmap_lock, stalls the writer's pass.
 */
static struct rec__thread *thread_alloc(void)
{
	struct rec__thread *t = mmap(NULL, sizeof(struct rec__thread), PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (t == MAP_FAILED)
		return NULL;
	state_prefault(t);
	return t;
}

/* CLOCK_MONOTONIC ns, as the writer reads it (async-signal-safe). */
static uint64_t mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Under rec__g.lock: registers t, fresh from thread_alloc(), with its
 * first ring seg (0: none, REC_MEMORY reached or mmap failed: the thread
 * is registered all the same, so that its scopes are counted as drops,
 * and takes a ring later, rec__thread_ring_retry()). gen: rec__mem_gen()
 * read before seg was asked for.
 */
static struct rec__thread *thread_create_locked(struct rec__thread *t, uintptr_t seg, uint32_t gen)
{
	t->ring.p.woke_tail = UINT64_MAX; /* no wake yet: see wait_for_room() */
	/* REC_MODE=flight: no hold, its producer discards at will (ring.h). */
	t->ring.tail = rec__g.cfg.flight ? REC__RING_FREE : 0;
	t->own.ring_gen_seen = gen;
	if (seg) {
		rec__ring_install(&t->ring, seg);
		t->ring.p.limit = (t->ring.p.mask + 1) / 4; /* soft limit: see wait_for_room() */
	}
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
	uint32_t gen = rec__mem_gen();
	uintptr_t seg;

	fresh = thread_alloc();
	if (!fresh)
		return NULL;
	/*
	 * Its records (events, drops, its end) are made from now on: where
	 * the writer's first drain of it counts their age from (writer.c,
	 * drain_thread()), rather than from the start of the writer's last
	 * pass, which may be long ago (an idle or starved writer: each short
	 * thread's exit was then a frame of its own, finding F4).
	 */
	fresh->wr.drained_ns = mono_now_ns();
	/* Outside rec__g.lock: from the pool, or mapped and faulted in now. */
	seg = rec__mem_first(true);
	pthread_mutex_lock(&rec__g.lock);
	if (rec__g.state == REC__RUNNING) {
		if (!seg)
			rec__thread_note_cap(fresh); /* REC_MEMORY reached: no ring */
		t = thread_create_locked(fresh, seg, gen);
		fresh = NULL;
		seg = 0;
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
	rec__mem_put(seg);
	return t;
}

/*
 * rec__thread_free() - the writer (reap), or a child after fork: gives the
 * thread's rings back (mem.c) and unmaps its state. No producer runs on
 * it any more.
 */
void rec__thread_free(struct rec__thread *t)
{
	uintptr_t seg;

	rec__counters_free(t->reg.ctr);
	while ((seg = rec__ring_take_retired(&t->ring)))
		rec__mem_put(seg);
	rec__mem_put(__atomic_load_n(&t->ring.seg, __ATOMIC_ACQUIRE));
	munmap(t, sizeof(*t));
}

/* Under rec__g.lock: make every thread's probes record nothing. */
void rec__thread_set_all_off(void)
{
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next)
		__atomic_store_n(&t->ring.p.off, 1, __ATOMIC_RELAXED);
}

/*
 * rec__thread_hooks_stale_all() - librectrace.so's dlclose(), after the
 * loader unmapped a module: every thread whose hooks' cache is in use
 * clears it at its next hook (hooks.c, hooks_prefault()), so that an
 * address of the module gone is looked up again (site.c) rather than
 * taken for the function it was. Takes rec__g.lock; normal context.
 */
void rec__thread_hooks_stale_all(void)
{
	uint8_t in_librec = rec__in_librec;

	/* g.lock held: a handler on this thread (a sample, a hook) must not take it. */
	rec__in_librec = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&rec__g.lock);
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		uint8_t ready = REC__HOOKS_READY;

		__atomic_compare_exchange_n(&t->own.hooks_ready, &ready, REC__HOOKS_STALE, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&rec__g.lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec__in_librec = in_librec;
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
		/*
		 * The index's nesting (writer.c): the parent's writer's heap,
		 * copied. Freed unless the writer was growing it when the
		 * parent forked (its pointer may be the block realloc freed):
		 * then it is left, as the writer's other buffers are
		 * (rec__writer_forget()).
		 */
		if (!__atomic_load_n(&t->wr.nest.growing, __ATOMIC_ACQUIRE))
			recfmt_nest_fini(&t->wr.nest);
		rec__thread_free(t);
	}
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
