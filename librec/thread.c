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
#include <unistd.h>

#define POOL_MAX 16

/* Rings of exited threads ready for reuse; under rec__g.lock. */
static struct recfmt_event *pool[POOL_MAX];
static size_t pool_bytes[POOL_MAX];
static unsigned nr_pool;

static struct recfmt_event *ring_alloc(size_t bytes)
{
	void *p;

	for (unsigned i = 0; i < nr_pool; i++) {
		if (pool_bytes[i] == bytes) {
			p = pool[i];
			pool[i] = pool[--nr_pool];
			pool_bytes[i] = pool_bytes[nr_pool];
			return p;
		}
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE); /* fewer first-touch faults; advisory */
#endif
	return p;
}

static void ring_free(struct recfmt_event *ring, size_t bytes)
{
	if (nr_pool < POOL_MAX) {
		pool[nr_pool] = ring;
		pool_bytes[nr_pool++] = bytes;
		return;
	}
	munmap(ring, bytes);
}

/* Runs at thread exit (pthread key destructor): hand the ring to the writer. */
static void thread_exit(void *arg)
{
	struct rec__thread *t = arg;

	rec__self = NULL;
	/* The group counts this thread only: close it now (the writer still
	 * reads its column count, so the state itself lives on). */
	rec__counters_close(t->ctr);
	/* Pairs with the acquire load of `dead` in writer.c: every event is published. */
	__atomic_store_n(&t->dead, 1, __ATOMIC_RELEASE);
}

void rec__thread_init_key(void)
{
	pthread_key_create(&rec__g.key, thread_exit);
}

struct rec__thread *rec__thread_self(void)
{
	return rec__self;
}

static struct rec__thread *thread_create_locked(void)
{
	struct rec__thread *t;

	/* mmap, not malloc: this may run in a signal handler (see probe.c). */
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	t->ring_bytes = rec__g.cfg.buffer_bytes;
	t->events = ring_alloc(t->ring_bytes);
	if (!t->events) {
		munmap(t, sizeof(*t));
		return NULL;
	}
	t->mask = t->ring_bytes / sizeof(struct recfmt_event) - 1;
	t->limit = (t->mask + 1) / 4; /* soft limit: see wait_for_room() */
	t->use_tsc = rec__g.cfg.use_tsc;
	t->block = rec__g.cfg.block;
	t->serial = ++rec__g.next_serial;
	t->os_tid = (uint32_t)gettid();
	t->name_gen = 1;
	/* On the thread itself: its perf-event group counts this thread. */
	t->ctr = rec__counters_open();
	if (t->ctr)
		t->limit = 0; /* every probe takes the counted path (probe.c) */
	t->next = rec__g.threads;
	rec__g.threads = t;
	return t;
}

/*
 * rec__thread_attach() - the calling thread's state, created on first use.
 * Starts recording when no probe has started it yet.
 * Return: NULL when not recording (stopped, disabled, failed, no memory).
 */
struct rec__thread *rec__thread_attach(void)
{
	struct rec__thread *t = rec__self;
	int state = __atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE);

	if (t)
		return t;
	if (state != REC__NEVER_STARTED && state != REC__RUNNING)
		return NULL;
	pthread_mutex_lock(&rec__g.lock);
	if (rec__g.state == REC__NEVER_STARTED)
		rec__start_locked(NULL);
	if (rec__g.state == REC__RUNNING) {
		t = thread_create_locked();
		if (t) {
			pthread_setspecific(rec__g.key, t);
			rec__self = t;
			/*
			 * From here a handler on this thread counts into t, so the
			 * orphan count is final: move it (one add, as count_one()).
			 */
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			rec__add_drops(t, rec__orphan_drops);
			rec__orphan_drops = 0;
		}
	}
	pthread_mutex_unlock(&rec__g.lock);
	return t;
}

void rec__thread_free(struct rec__thread *t)
{
	rec__counters_free(t->ctr);
	ring_free(t->events, t->ring_bytes);
	munmap(t, sizeof(*t));
}

/* Under rec__g.lock: make every thread's probes record nothing. */
void rec__thread_set_all_off(void)
{
	for (struct rec__thread *t = rec__g.threads; t; t = t->next)
		__atomic_store_n(&t->off, 1, __ATOMIC_RELAXED);
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
		next = t->next;
		rec__thread_free(t);
	}
	rec__g.threads = NULL;
	rec__g.next_serial = 0;
	rec__self = NULL;
	pthread_setspecific(rec__g.key, NULL);
}

int rec_thread_name(const char *name)
{
	struct rec__thread *t;

	if (!name)
		return -EINVAL;
	rec__in_librec = 1;
	t = rec__thread_attach();
	if (t) {
		pthread_mutex_lock(&rec__g.lock);
		snprintf(t->name, sizeof(t->name), "%s", name);
		t->named = 1;
		t->name_gen++;
		pthread_mutex_unlock(&rec__g.lock);
	}
	rec__in_librec = 0;
	return 0;
}
