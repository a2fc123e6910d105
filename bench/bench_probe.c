/* SPDX-License-Identifier: MIT */
/*
 * bench_probe.c - what one TRACE_SCOPE (enter + exit) costs, next to its
 * floor measured in the same run: two rdtsc reads plus two 16-byte stores
 * into a thread-local array, on the same empty noinline function. Prints
 * ns above the bare call and the ratio to the floor, median of ROUNDS, for
 * 1 thread and for one thread per core. Built twice: librec linked
 * statically and as a shared library. Also timed: an empty function built
 * with -finstrument-functions (bench_func.c), i.e. whole-program mode's
 * cost per function (func), above its own uninstrumented twin.
 *
 * Steady state, as ../shared/bench-peers/ measures it (scripts/peer-probe.sh):
 * default settings, each worker pinned to its own core (one thread: the
 * last core, so the writer has the others), long rounds (10 M calls),
 * one whole round of warm-up discarded, then ROUNDS interleaved rounds.
 * A thread that outruns the writer drops (REC_OVERFLOW=drop, the
 * default): run with REC_OVERFLOW=block to time only recorded probes.
 * Two lines per thread: "wall" (what the harness reports) and "cpu" (the
 * worker thread's own CPU time per call: the probe's instructions without
 * the time the writer or other programs held the worker's core).
 *
 * Usage: bench_probe [--rounds=N] [--calls=N] [--threads=N] [--label=S]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static long nr_calls = 10000000;
static int nr_rounds = 5;

struct slot {
	uint64_t ticks;
	uint32_t code, aux;
};
#define FLOOR_SLOTS 4096
static __thread struct slot floor_ring[FLOOR_SLOTS];
static __thread unsigned floor_head;

__attribute__((noinline)) static void bare(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void floor_fn(void)
{
	unsigned h = floor_head;
	floor_ring[h & (FLOOR_SLOTS - 1)] = (struct slot){ __rdtsc(), 2, 0 };
	__asm__ volatile("" ::: "memory");
	floor_ring[(h + 1) & (FLOOR_SLOTS - 1)] = (struct slot){ __rdtsc(), 3, 0 };
	floor_head = h + 2;
}

__attribute__((noinline)) static void probed(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

/* bench_func.c: with and without the -finstrument-functions hooks. */
void bench_func(void);
void bench_func_bare(void);

static double clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Wall time per call, as the peer harness measures; *cpu_ns: the calling
 * thread's CPU time per call, which leaves out the time other threads (the
 * writer, other programs) held its core.
 */
static double per_call(void (*fn)(void), double *cpu_ns)
{
	double c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);

	for (long i = 0; i < nr_calls; i++)
		fn();
	*cpu_ns = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)nr_calls;
	return (clock_ns(CLOCK_MONOTONIC) - t0) / (double)nr_calls;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

enum { BARE, FLOOR, PROBE, FUNC_BARE, FUNC, NR_FNS };

struct result {
	double wall[NR_FNS], cpu[NR_FNS]; /* medians, ns per call */
};

static pthread_barrier_t barrier;
static int nr_threads = 1;

struct worker {
	int index;
	struct result res;
};

/* Thread i on core (i + 1) mod ncpu: one thread leaves core 0 to the writer. */
static void pin(int index)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (ncpu < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET((int)((index + 1) % ncpu), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static double median(double *v)
{
	qsort(v, (size_t)nr_rounds, sizeof(double), cmp);
	return v[nr_rounds / 2];
}

static void *run(void *arg)
{
	static void (*const fns[NR_FNS])(void) = { bare, floor_fn, probed, bench_func_bare,
						    bench_func };
	struct worker *wk = arg;
	double *wall[NR_FNS], *cpu[NR_FNS], ignored;

	for (int k = 0; k < NR_FNS; k++) {
		wall[k] = calloc((size_t)nr_rounds, sizeof(double));
		cpu[k] = calloc((size_t)nr_rounds, sizeof(double));
	}
	pin(wk->index);
	/* Warm-up round, discarded: attach, sites, caches, the writer's pace. */
	for (int k = 0; k < NR_FNS; k++)
		per_call(fns[k], &ignored);
	pthread_barrier_wait(&barrier);
	/* Interleaved, so that noise hits them alike. */
	for (int r = 0; r < nr_rounds; r++)
		for (int k = 0; k < NR_FNS; k++)
			wall[k][r] = per_call(fns[k], &cpu[k][r]);
	for (int k = 0; k < NR_FNS; k++) {
		wk->res.wall[k] = median(wall[k]);
		wk->res.cpu[k] = median(cpu[k]);
		free(wall[k]);
		free(cpu[k]);
	}
	return NULL;
}

static void print(const char *mode, const char *what, int i, const double *v)
{
	double fl = v[FLOOR] - v[BARE], pr = v[PROBE] - v[BARE], fn = v[FUNC] - v[FUNC_BARE];

	printf("%-8s %-4s threads=%d thread=%d  bare %.2f ns  floor %.2f ns  probe %.2f ns  ratio %.3f"
	       "  func %.2f ns  func/probe %.3f  func/floor %.3f\n",
	       mode, what, nr_threads, i, v[BARE], fl, pr, pr / fl, fn, fn / pr, fn / fl);
}

int main(int argc, char **argv)
{
	const char *mode = "";

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--rounds=", 9))
			nr_rounds = atoi(argv[i] + 9);
		else if (!strncmp(argv[i], "--calls=", 8))
			nr_calls = atol(argv[i] + 8);
		else if (!strncmp(argv[i], "--threads=", 10))
			nr_threads = atoi(argv[i] + 10);
		else if (!strncmp(argv[i], "--label=", 8))
			mode = argv[i] + 8;
		else {
			fprintf(stderr, "usage: %s [--rounds=N] [--calls=N] [--threads=N] [--label=S]\n",
				argv[0]);
			return 2;
		}
	}
	if (nr_rounds < 1 || nr_calls < 1 || nr_threads < 1)
		return 2;
	rec_start(NULL);

	pthread_t *th = calloc((size_t)nr_threads, sizeof(*th));
	struct worker *wk = calloc((size_t)nr_threads, sizeof(*wk));
	pthread_barrier_init(&barrier, NULL, (unsigned)nr_threads);
	for (int i = 0; i < nr_threads; i++) {
		wk[i].index = i;
		pthread_create(&th[i], NULL, run, &wk[i]);
	}
	for (int i = 0; i < nr_threads; i++)
		pthread_join(th[i], NULL);
	rec_stop();

	for (int i = 0; i < nr_threads; i++) {
		print(mode, "wall", i, wk[i].res.wall);
		print(mode, "cpu", i, wk[i].res.cpu);
	}
	free(th);
	free(wk);
	return 0;
}
