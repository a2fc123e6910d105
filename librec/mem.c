/* SPDX-License-Identifier: MIT */
/*
 * mem.c - the memory librec holds for events: every ring, mapped and
 * faulted in whole here (so no probe ever faults on one), counted against
 * REC_MEMORY, and a pool of rings ready for threads that attach or grow
 * (docs/DESIGN.md, "Ring memory"). Sizes are powers of two, one pool class
 * per size. The pool is kept one step ahead of demand by the writer
 * (rec__mem_refill()): REC__POOL_FIRST first rings, 8 rings of each larger
 * size up to 256 KiB and one of every larger size up to REC_BUFFER or
 * 16 MiB, as far as a quarter of REC_MEMORY allows, so that
 * threads that start recording flat out grow without waiting for the
 * writer. Larger rings (up to the 64 MiB default REC_BUFFER) are for a
 * writer kept off the CPU: a ring grows to them only when full, its
 * producer mapping them (pool_top_log2). Freed rings go back to the pool
 * (already faulted in) while it has room for them and keeps their size.
 *
 * Who calls what: attach (rec__in_librec set; maybe in a signal handler)
 * rec__mem_first(); a producer inside its window (maybe in a handler)
 * rec__mem_grow(), which only try-locks the pool, and maps a ring itself
 * only when its ring is full and the pool has none larger (several
 * threads growing at once); the writer rec__mem_put() and
 * rec__mem_refill(). Nothing here allocates with
 * malloc or takes a lock malloc may hold: mmap, munmap, stores, sched_yield.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <sched.h>
#include <sys/mman.h>

#define PAGE_BYTES 4096u
#define HUGE_PAGE_BYTES (2u << 20)
#define MAX_LOG2 33 /* slots: REC__MAX_BUFFER_BYTES / 16 = 2^28; room to spare */
#define POOL_FIRST_CAP 64u
#define POOL_OTHER_CAP 2u
/* Sizes up to this many bytes are kept 8 to a size (threads growing at once). */
#define POOL_SMALL_BYTES (256u << 10)
#define POOL_SMALL_WANT 8u

static struct {
	uintptr_t seg[POOL_FIRST_CAP];
	unsigned n;
} pool[MAX_LOG2 + 1]; /* under pool_lock */
static uint8_t pool_lock;
static size_t used;	  /* bytes mapped for rings, the pool's included (atomic) */
/*
 * REC_MEMORY and the ring sizes (log2 of their slots): set at each start
 * (rec__mem_configure()), read by any thread: relaxed atomics, through
 * cap(), first_l() and max_l(). A restart that changes them leaves the
 * rings in use as they are; rings of sizes no longer in use are unmapped
 * when given back.
 */
static size_t cap_bytes;
static unsigned first_log2, max_log2;
/*
 * The largest size the pool keeps ready (log2 of its slots): at most
 * REC__POOL_TOP_BYTES (16 MiB), and only sizes that fit in the pool's
 * quarter of REC_MEMORY (at the defaults: 32 MiB and 64 MiB are above
 * it). A ring grows to those only when it is full (mapped and faulted in
 * by its producer, before the probe's stamp: the writer is late,
 * "emergency" growth), and such a ring is unmapped when given back, not
 * pooled, so that what one burst took is not held for good.
 */
static unsigned pool_top_log2;

static size_t cap(void)
{
	return __atomic_load_n(&cap_bytes, __ATOMIC_RELAXED);
}

static unsigned first_l(void)
{
	return __atomic_load_n(&first_log2, __ATOMIC_RELAXED);
}

static unsigned max_l(void)
{
	return __atomic_load_n(&max_log2, __ATOMIC_RELAXED);
}

static unsigned pool_top_l(void)
{
	return __atomic_load_n(&pool_top_log2, __ATOMIC_RELAXED);
}
/* Bumped (release) by each rec__mem_put(): see rec__mem_gen(). */
static uint32_t gen;

static bool pool_trylock(void)
{
	return !__atomic_exchange_n(&pool_lock, 1, __ATOMIC_ACQUIRE);
}

static void pool_lock_wait(void)
{
	while (!pool_trylock())
		sched_yield();
}

static void pool_unlock(void)
{
	__atomic_store_n(&pool_lock, 0, __ATOMIC_RELEASE);
}

/* How many rings of 2^l slots the pool holds at most (rings given back beyond it are unmapped). */
static unsigned pool_cap(unsigned l)
{
	if (l == first_l())
		return POOL_FIRST_CAP;
	return ((size_t)1 << l) * sizeof(struct rec__event) <= POOL_SMALL_BYTES ? 2 * POOL_SMALL_WANT
										 : POOL_OTHER_CAP;
}

/* How many rings of 2^l slots the pool would keep ready, were it unbounded. */
static unsigned pool_want_any(unsigned l)
{
	if (l == first_l())
		return REC__POOL_FIRST;
	if (l < first_l() || l > max_l())
		return 0;
	return ((size_t)1 << l) * sizeof(struct rec__event) <= POOL_SMALL_BYTES ? POOL_SMALL_WANT : 1;
}

/* How many rings of 2^l slots the pool keeps ready (before REC_MEMORY's share). */
static unsigned pool_want(unsigned l)
{
	return l > pool_top_l() ? 0 : pool_want_any(l);
}

__thread uint8_t rec__mem_hit_cap __attribute__((tls_model("initial-exec")));

/* Counts b more bytes if REC_MEMORY allows. */
static bool reserve(size_t b, size_t limit)
{
	size_t u = __atomic_load_n(&used, __ATOMIC_RELAXED);

	do {
		if (u + b > limit || u + b < u)
			return false;
	} while (!__atomic_compare_exchange_n(&used, &u, u + b, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

static void unmap(uintptr_t seg)
{
	munmap(rec__seg_events(seg), rec__seg_bytes(seg));
	__atomic_fetch_sub(&used, rec__seg_bytes(seg), __ATOMIC_RELAXED);
}

/*
 * Faults in [from, to) of seg's ring. Each page is written once by hand,
 * not with MADV_POPULATE_WRITE, which holds the process's mmap_lock for
 * the whole range: a thread preempted inside it stalled every page fault
 * of the process, the writer's included, for up to 0.8 s (issue 26).
 */
static void fault_in(uintptr_t seg, size_t from, size_t to)
{
	volatile char *p = (volatile char *)rec__seg_events(seg);

	for (size_t i = from; i < to; i += PAGE_BYTES)
		p[i] = 0;
}

/* A new ring of 2^l slots, within `limit` bytes in all, not faulted in yet. Return: its seg, or 0. */
static uintptr_t map_only(unsigned l, size_t limit)
{
	size_t bytes = ((size_t)1 << l) * sizeof(struct rec__event);
	void *p;

	if (!reserve(bytes, limit)) {
		rec__mem_hit_cap = 1;
		return 0;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		__atomic_fetch_sub(&used, bytes, __ATOMIC_RELAXED);
		return 0;
	}
#ifdef MADV_HUGEPAGE
	if (bytes >= HUGE_PAGE_BYTES)
		madvise(p, bytes, MADV_HUGEPAGE); /* fewer faults; advisory */
#endif
	return rec__seg_make(p, (uint64_t)1 << l);
}

/* A new ring of 2^l slots, faulted in whole, within `limit` bytes in all. Return: its seg, or 0. */
static uintptr_t map_ring(unsigned l, size_t limit)
{
	uintptr_t seg = map_only(l, limit);

	if (seg)
		fault_in(seg, 0, rec__seg_bytes(seg));
	return seg;
}

/*
 * The writer's ring being faulted in for the pool, a budget at a time
 * (rec__mem_refill()), and how much of it is; and a ring set aside half
 * faulted in while the writer is busy (larger than rec__mem_refill()'s
 * `largest`), taken up again by an idle writer. Touched by the writer, or
 * a start (no writer runs then), only.
 */
static uintptr_t staging, waiting;
static size_t staged_bytes, waiting_bytes;

/* Under pool_lock: a pooled ring of 2^l slots, or 0. */
static uintptr_t pop(unsigned l)
{
	return pool[l].n ? pool[l].seg[--pool[l].n] : 0;
}

/* Under pool_lock: frees pooled rings, largest first, until b more bytes fit in limit. */
static void evict_for(size_t b, size_t limit)
{
	for (unsigned l = MAX_LOG2; l > 0 && __atomic_load_n(&used, __ATOMIC_RELAXED) + b > limit; l--)
		while (pool[l].n && __atomic_load_n(&used, __ATOMIC_RELAXED) + b > limit)
			unmap(pool[l].seg[--pool[l].n]);
}

void rec__mem_configure(size_t memory_bytes, size_t buffer_bytes)
{
	uint64_t slots = buffer_bytes / sizeof(struct rec__event);
	unsigned max = (unsigned)__builtin_ctzll(slots);
	unsigned first = (unsigned)__builtin_ctzll(REC__RING_FIRST_BYTES / sizeof(struct rec__event));

	__atomic_store_n(&cap_bytes, memory_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&max_log2, max, __ATOMIC_RELAXED);
	__atomic_store_n(&first_log2, first < max ? first : max, __ATOMIC_RELAXED);
	/* The sizes rec__mem_refill() keeps ready: up to REC__POOL_TOP_BYTES, as
	 * many as fit in a quarter of REC_MEMORY. */
	size_t sum = 0;
	unsigned top = first_l();

	for (unsigned l = 0; l <= MAX_LOG2; l++) {
		size_t bytes = ((size_t)1 << l) * sizeof(struct rec__event);

		sum += pool_want_any(l) * bytes;
		if (sum > memory_bytes / 4 || bytes > REC__POOL_TOP_BYTES)
			break;
		if (pool_want_any(l))
			top = l;
	}
	__atomic_store_n(&pool_top_log2, top, __ATOMIC_RELAXED);
}

uintptr_t rec__mem_first(bool may_map)
{
	uintptr_t seg;

	pool_lock_wait();
	seg = pop(first_l());
	if (!seg)
		evict_for(((size_t)1 << first_l()) * sizeof(struct rec__event), cap());
	pool_unlock();
	return seg || !may_map ? seg : map_ring(first_l(), cap());
}

uintptr_t rec__mem_grow(uintptr_t cur, bool may_map)
{
	uintptr_t seg = 0;
	unsigned l = (unsigned)(cur & 63), k = l;
	size_t limit = cap() / 4 * 3;

	if (l >= max_l())
		return 0;
	/* Past the pool's largest size only a full ring grows (it maps its own). */
	if (!may_map && l >= pool_top_l())
		return 0;
	if (pool_trylock()) {
		while (!seg && ++k <= max_l() && k <= pool_top_l())
			seg = pop(k);
		/* None ready: twice the ring, within three quarters of REC_MEMORY,
		 * the pool's smaller rings given up for it if need be. */
		if (!seg && may_map)
			evict_for(((size_t)2 << l) * sizeof(struct rec__event), limit);
		pool_unlock();
	}
	/* (The pool busy: the writer is filling it. A full ring maps its own.) */
	return seg || !may_map ? seg : map_ring(l + 1, limit);
}

/* Under pool_lock: a ring for the pool, if it has room for its size. Return: true if pooled. */
static bool pool_push_locked(uintptr_t seg)
{
	unsigned l = (unsigned)(seg & 63);

	if (l < first_l() || l > max_l() || l > pool_top_l() || pool[l].n >= pool_cap(l))
		return false;
	pool[l].seg[pool[l].n++] = seg;
	return true;
}

void rec__mem_put(uintptr_t seg)
{
	if (!seg)
		return;
	pool_lock_wait();
	if (pool_push_locked(seg))
		seg = 0;
	pool_unlock();
	if (seg)
		unmap(seg);
	/* Pairs with the acquire in rec__mem_gen(). */
	__atomic_fetch_add(&gen, 1, __ATOMIC_RELEASE);
}

uint32_t rec__mem_gen(void)
{
	return __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
}

/*
 * rec__mem_refill() - the writer after a pass that left no ring behind
 * (and the start, before the first probe's stamp): brings the pool up to
 * pool_want() rings of each size, smallest first, as long as these add up
 * to no more than a quarter of REC_MEMORY (at the defaults: every size up
 * to REC_BUFFER, 35.75 MiB; a thread recording flat out then grows to
 * REC_BUFFER without a fault), never past three quarters of REC_MEMORY in
 * all (the last quarter is left to threads' first rings). Rings of sizes
 * no longer in use (a restart changed REC_BUFFER) are freed. Faults in
 * budget bytes at most, outside the pool's lock; a ring larger than that
 * is faulted in over several calls (`staging`) and pooled once whole:
 * faulting in 8 MiB takes 10-40 ms on a VM that backs memory lazily, and a
 * writer that did it at once while a thread recorded flat out let that
 * thread's ring fill. Rings larger than `largest` bytes are not faulted in
 * now: one half faulted in is set aside (`waiting`, taken up again by a
 * call that allows its size) and the smaller sizes are still refilled, so
 * that a busy writer keeps the rings threads take when they attach ready
 * while a large one waits. Faulting memory the host backs lazily costs it
 * up to 3 ms a MiB here; the 16-44 MiB it faulted during a run with two
 * threads recording flat out on two cores was a third of its time, and
 * the rings it fell behind on filled (docs/BENCHMARKS.md, "The two-worker
 * row on a quiet machine").
 */
void rec__mem_refill(size_t budget, size_t largest)
{
	size_t limit = cap() / 4 * 3;

	while (budget) {
		size_t reserve_sum = 0;

		if (!staging && waiting && rec__seg_bytes(waiting) <= largest) {
			staging = waiting;
			staged_bytes = waiting_bytes;
			waiting = 0;
		}
		if (staging && rec__seg_bytes(staging) > largest) {
			if (waiting)
				return; /* both wait (a smaller `largest` than the last call's) */
			waiting = staging;
			waiting_bytes = staged_bytes;
			staging = 0;
		}
		if (staging) {
			size_t total = rec__seg_bytes(staging);
			size_t to = total - staged_bytes > budget ? staged_bytes + budget : total;

			fault_in(staging, staged_bytes, to);
			budget -= to - staged_bytes;
			staged_bytes = to;
			if (staged_bytes < total)
				return;
			pool_lock_wait();
			if (pool_push_locked(staging))
				staging = 0;
			pool_unlock();
			if (staging)
				unmap(staging);
			staging = 0;
			continue;
		}
		for (unsigned l = 0; l <= MAX_LOG2 && !staging; l++) {
			size_t bytes = ((size_t)1 << l) * sizeof(struct rec__event);
			unsigned want = pool_want(l);
			uintptr_t seg;
			bool more;

			reserve_sum += want * bytes;
			if (reserve_sum > cap() / 4)
				want = 0;
			do {
				seg = 0;
				pool_lock_wait();
				if (pool[l].n > want &&
				    (l < first_l() || l > max_l() || l > pool_top_l()))
					seg = pool[l].seg[--pool[l].n];
				more = pool[l].n < want;
				pool_unlock();
				if (seg)
					unmap(seg);
			} while (seg);
			if (more && bytes <= largest && (staging = map_only(l, limit)))
				staged_bytes = 0;
		}
		if (!staging)
			return; /* the pool is full, or REC_MEMORY's share is used */
	}
}

unsigned rec__mem_pooled(size_t ring_bytes)
{
	size_t slots = ring_bytes / sizeof(struct rec__event);
	unsigned l, n;

	if (!slots || slots & (slots - 1) || ring_bytes % sizeof(struct rec__event))
		return 0;
	l = (unsigned)__builtin_ctzll(slots);
	if (l > MAX_LOG2)
		return 0;
	pool_lock_wait();
	n = pool[l].n;
	pool_unlock();
	return n;
}

size_t rec__mem_used(void)
{
	return __atomic_load_n(&used, __ATOMIC_RELAXED);
}

/* fork: the pool's lock is held across fork(), so the child's copy is whole. */
void rec__mem_fork_prepare(void)
{
	pool_lock_wait();
}

void rec__mem_fork_parent(void)
{
	pool_unlock();
}

void rec__mem_fork_child(void)
{
	pool_unlock();
}
