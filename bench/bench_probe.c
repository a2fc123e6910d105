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

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double per_call(void (*fn)(void))
{
	double t0 = now_ns();
	for (long i = 0; i < nr_calls; i++)
		fn();
	return (now_ns() - t0) / (double)nr_calls;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct result {
	double bare, floor, probe; /* medians, ns per call */
	double func_bare, func;	   /* whole-program mode */
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

static void *run(void *arg)
{
	struct worker *wk = arg;
	struct result *res = &wk->res;
	double *b = calloc((size_t)nr_rounds, sizeof(double));
	double *f = calloc((size_t)nr_rounds, sizeof(double));
	double *p = calloc((size_t)nr_rounds, sizeof(double));
	double *fb = calloc((size_t)nr_rounds, sizeof(double));
	double *fi = calloc((size_t)nr_rounds, sizeof(double));

	pin(wk->index);
	/* Warm-up round, discarded: attach, sites, caches, the writer's pace. */
	per_call(bare);
	per_call(floor_fn);
	per_call(probed);
	per_call(bench_func_bare);
	per_call(bench_func);
	pthread_barrier_wait(&barrier);
	/* Interleave the three so that noise hits them alike. */
	for (int r = 0; r < nr_rounds; r++) {
		b[r] = per_call(bare);
		f[r] = per_call(floor_fn);
		p[r] = per_call(probed);
		fb[r] = per_call(bench_func_bare);
		fi[r] = per_call(bench_func);
	}
	qsort(b, (size_t)nr_rounds, sizeof(double), cmp);
	qsort(f, (size_t)nr_rounds, sizeof(double), cmp);
	qsort(p, (size_t)nr_rounds, sizeof(double), cmp);
	qsort(fb, (size_t)nr_rounds, sizeof(double), cmp);
	qsort(fi, (size_t)nr_rounds, sizeof(double), cmp);
	res->bare = b[nr_rounds / 2];
	res->floor = f[nr_rounds / 2];
	res->probe = p[nr_rounds / 2];
	res->func_bare = fb[nr_rounds / 2];
	res->func = fi[nr_rounds / 2];
	free(fb);
	free(fi);
	free(b);
	free(f);
	free(p);
	return NULL;
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
		struct result *res = &wk[i].res;
		double fl = res->floor - res->bare, pr = res->probe - res->bare;
		double fn = res->func - res->func_bare;

		printf("%-8s threads=%d thread=%d  bare %.2f ns  floor %.2f ns  probe %.2f ns  ratio %.3f"
		       "  func %.2f ns  func/probe %.3f  func/floor %.3f\n",
		       mode, nr_threads, i, res->bare, fl, pr, pr / fl, fn, fn / pr, fn / fl);
	}
	free(th);
	free(wk);
	return 0;
}
