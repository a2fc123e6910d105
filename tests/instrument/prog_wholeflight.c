/* SPDX-License-Identifier: MIT */
/*
 * prog_wholeflight.c - whole-program flight mode under a flat-out load (issue
 * 26, items 4 and 5): built with -finstrument-functions, 512 small leaf
 * functions (leaf_000 .. leaf_777, octal) called through 64 mid functions,
 * each leaf call two events, as fast as the thread can: the load of a
 * program where every function is traced (tens of millions of events a
 * second on one core).
 *
 *   prog_wholeflight MODE MS [N]
 *
 * runs the load for MS milliseconds, then the final part: final_part()
 * calls fin_a() N times (default 1000), then end_of_load() once; then,
 * by MODE:
 *   snapshot  rec_snapshot("end of load") and rec_flush(): the snapshot
 *             holds the final part up to the trigger
 *   signal    raise(SIGUSR2) (REC_SNAPSHOT_SIGNAL=USR2), then rec_flush()
 *   crash     a SIGSEGV (a store through a null pointer) in crash_here()
 *   trigger   slow_query() runs for N ms (asleep but for a few leaf calls),
 *             then the program exits (REC_TRIGGER='slow_query>...' fires)
 *   none      nothing (stream mode: the same load for comparison)
 *   threads   3 threads run the load and the final part while the main
 *             thread calls rec_snapshot() halfway (for the sanitizers)
 * and prints to stderr "leaf calls K in S s" (the load's rate).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec.h"

#define NOINLINE __attribute__((noinline))

static __thread volatile uint64_t sink; /* per thread: no data race */

#define LEAF(n) \
	NOINLINE uint64_t leaf_##n(uint64_t x); \
	uint64_t leaf_##n(uint64_t x) { return x * 2654435761u + 0##n; }
#define L8(p) LEAF(p##0) LEAF(p##1) LEAF(p##2) LEAF(p##3) LEAF(p##4) LEAF(p##5) LEAF(p##6) LEAF(p##7)
#define L64(p) L8(p##0) L8(p##1) L8(p##2) L8(p##3) L8(p##4) L8(p##5) L8(p##6) L8(p##7)
L64(0) L64(1) L64(2) L64(3) L64(4) L64(5) L64(6) L64(7)

#define T1(n) leaf_##n,
#define T8(p) T1(p##0) T1(p##1) T1(p##2) T1(p##3) T1(p##4) T1(p##5) T1(p##6) T1(p##7)
#define T64(p) T8(p##0) T8(p##1) T8(p##2) T8(p##3) T8(p##4) T8(p##5) T8(p##6) T8(p##7)
static uint64_t (*const leaves[512])(uint64_t) = {
	T64(0) T64(1) T64(2) T64(3) T64(4) T64(5) T64(6) T64(7)
};

/* mid_k calls the 8 leaves 8k .. 8k+7. */
#define MID(k) \
	NOINLINE uint64_t mid_##k(uint64_t x); \
	uint64_t mid_##k(uint64_t x) \
	{ \
		for (unsigned i = 0; i < 8; i++) \
			x = leaves[(0##k) * 8 + i](x); \
		return x; \
	}
#define M8(p) MID(p##0) MID(p##1) MID(p##2) MID(p##3) MID(p##4) MID(p##5) MID(p##6) MID(p##7)
M8(0) M8(1) M8(2) M8(3) M8(4) M8(5) M8(6) M8(7)
#define N1(k) mid_##k,
#define N8(p) N1(p##0) N1(p##1) N1(p##2) N1(p##3) N1(p##4) N1(p##5) N1(p##6) N1(p##7)
static uint64_t (*const mids[64])(uint64_t) = { N8(0) N8(1) N8(2) N8(3) N8(4) N8(5) N8(6) N8(7) };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The load for ms milliseconds; returns the leaf calls made. */
NOINLINE uint64_t run_load(uint64_t ms);
uint64_t run_load(uint64_t ms)
{
	uint64_t end = now_ns() + ms * 1000000u, x = 1, calls = 0;

	do {
		for (unsigned k = 0; k < 64; k++)
			x = mids[k](x);
		calls += 512;
	} while (now_ns() < end);
	sink = x;
	return calls;
}

NOINLINE void fin_a(void);
void fin_a(void)
{
	sink++;
}

NOINLINE void end_of_load(void);
void end_of_load(void)
{
	sink++;
}

NOINLINE void final_part(long n);
void final_part(long n)
{
	for (long i = 0; i < n; i++)
		fin_a();
	end_of_load();
}

/* At least ms milliseconds in one activation, mostly asleep (a few events). */
NOINLINE void slow_query(uint64_t ms);
void slow_query(uint64_t ms)
{
	struct timespec nap = { 0, 1000000 };
	uint64_t end = now_ns() + ms * 1000000u;

	while (now_ns() < end) {
		sink = leaf_000(sink);
		nanosleep(&nap, NULL);
	}
}

/* The fault is the point: UBSan must not turn it into a report first. */
NOINLINE void crash_here(int *p);
__attribute__((no_sanitize("undefined"))) void crash_here(int *p)
{
	volatile int *volatile nowhere = p;

	*nowhere = 1;
}

static uint64_t thread_ms;
static long thread_n;

NOINLINE void *worker(void *arg);
void *worker(void *arg)
{
	run_load(thread_ms);
	slow_query(3);
	final_part(thread_n);
	return arg;
}

/*
 * threads: 3 workers flat out (each ends with slow_query(3) and the final
 * part) while the main thread takes snapshots: rec_snapshot() halfway, and
 * whatever REC_TRIGGER finds. For the sanitizers (a plain program).
 */
static int mode_threads(uint64_t ms, long n)
{
	pthread_t th[3];
	struct timespec half = { (time_t)(ms / 2000), (long)(ms / 2 % 1000) * 1000000 };

	thread_ms = ms;
	thread_n = n;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 5;
	nanosleep(&half, NULL);
	if (rec_snapshot("halfway") != 0)
		return 2;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return rec_flush() == 0 ? 0 : 3;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	uint64_t ms = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000, t0, calls;
	long n = argc > 3 ? strtol(argv[3], NULL, 10) : 1000;

	if (strcmp(mode, "threads") == 0)
		return mode_threads(ms, n);
	t0 = now_ns();
	calls = run_load(ms);
	fprintf(stderr, "leaf calls %llu in %.3f s\n", (unsigned long long)calls,
		(double)(now_ns() - t0) / 1e9);
	if (strcmp(mode, "trigger") == 0) {
		slow_query((uint64_t)n);
		return 0; /* the writer's last pass finds it at the latest */
	}
	final_part(n);
	if (strcmp(mode, "snapshot") == 0) {
		int err = rec_snapshot("end of load");

		if (err) {
			fprintf(stderr, "rec_snapshot: %s\n", strerror(-err));
			return 2;
		}
		return rec_flush() == 0 ? 0 : 3;
	}
	if (strcmp(mode, "signal") == 0) {
		raise(SIGUSR2);
		return rec_flush() == 0 ? 0 : 3;
	}
	if (strcmp(mode, "crash") == 0) {
		crash_here(argc > 99 ? &argc : NULL);
		return 4;
	}
	return 0;
}
