/* SPDX-License-Identifier: MIT */
/*
 * bench_annot.c - what one annotation (rec(3), Annotations) costs next to an empty
 * TRACE_SCOPE (enter + exit) measured in the same run, on the same kind of
 * empty noinline function: TRACE_VALUE with an integer and with a double,
 * TRACE_INSTANT, TRACE_ARG and TRACE_FLOW_STEP (each inside a scope of its
 * own: the scope's cost is subtracted), and TRACE_MESSAGE of a 16-byte
 * string. Issue 15 asks each to cost at most 0.75 x an empty scope
 * (TRACE_MESSAGE: plus its copy). Prints ns above the bare call and the
 * ratio to the empty scope, median of ROUNDS interleaved rounds, for the
 * wall clock and for the thread's CPU time, as bench_probe.c does (pinned
 * to the last core; one warm-up round discarded).
 *
 * A thread that outruns the writer drops (REC_OVERFLOW=drop, the default),
 * and a dropped probe is cheaper than a recorded one: run with
 * REC_OVERFLOW=block to time only recorded probes (README, "Benchmarks").
 *
 * Usage: bench_annot [--rounds=N] [--calls=N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long nr_calls = 10000000;
static int nr_rounds = 5;
static volatile int64_t sink = 42;

__attribute__((noinline)) static void bare(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void scope(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void value_int(void)
{
	TRACE_VALUE("queue", sink);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void value_double(void)
{
	TRACE_VALUE("load", (double)sink * 0.5);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void instant(void)
{
	TRACE_INSTANT("tick");
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void scope_arg(void)
{
	TRACE_SCOPE();
	TRACE_ARG("bytes", sink);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void scope_flow(void)
{
	TRACE_SCOPE();
	TRACE_FLOW_STEP("request", (uint64_t)sink);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void message(void)
{
	TRACE_MESSAGE("sixteen bytes ok");
	__asm__ volatile("" ::: "memory");
}

static double clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

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

enum { BARE, SCOPE, VALUE_INT, VALUE_DOUBLE, INSTANT, SCOPE_ARG, SCOPE_FLOW, MESSAGE, NR_FNS };
static void (*const fns[NR_FNS])(void) = { bare,    scope,     value_int,  value_double,
					    instant, scope_arg, scope_flow, message };

static double median(double *v)
{
	qsort(v, (size_t)nr_rounds, sizeof(double), cmp);
	return v[nr_rounds / 2];
}

static void print(const char *what, const double *v)
{
	double sc = v[SCOPE] - v[BARE];
	struct {
		const char *name;
		double ns;
	} rows[] = {
		{ "value_int", v[VALUE_INT] - v[BARE] },
		{ "value_double", v[VALUE_DOUBLE] - v[BARE] },
		{ "instant", v[INSTANT] - v[BARE] },
		{ "arg", v[SCOPE_ARG] - v[SCOPE] },
		{ "flow_step", v[SCOPE_FLOW] - v[SCOPE] },
		{ "message16", v[MESSAGE] - v[BARE] },
	};

	printf("%-4s bare %.2f ns  empty_scope %.2f ns\n", what, v[BARE], sc);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		printf("%-4s %-13s %6.2f ns  x empty_scope %.3f\n", what, rows[i].name, rows[i].ns,
		       rows[i].ns / sc);
}

int main(int argc, char **argv)
{
	double *wall[NR_FNS], *cpu[NR_FNS], res_wall[NR_FNS], res_cpu[NR_FNS], ignored;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--rounds=", 9))
			nr_rounds = atoi(argv[i] + 9);
		else if (!strncmp(argv[i], "--calls=", 8))
			nr_calls = atol(argv[i] + 8);
		else {
			fprintf(stderr, "usage: %s [--rounds=N] [--calls=N]\n", argv[0]);
			return 2;
		}
	}
	if (nr_rounds < 1 || nr_calls < 1)
		return 2;
	if (ncpu >= 2) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)(ncpu - 1), &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	rec_start(NULL);
	for (int k = 0; k < NR_FNS; k++) {
		wall[k] = calloc((size_t)nr_rounds, sizeof(double));
		cpu[k] = calloc((size_t)nr_rounds, sizeof(double));
		per_call(fns[k], &ignored); /* warm-up, discarded */
	}
	for (int r = 0; r < nr_rounds; r++)
		for (int k = 0; k < NR_FNS; k++)
			wall[k][r] = per_call(fns[k], &cpu[k][r]);
	for (int k = 0; k < NR_FNS; k++) {
		res_wall[k] = median(wall[k]);
		res_cpu[k] = median(cpu[k]);
		free(wall[k]);
		free(cpu[k]);
	}
	rec_stop();
	print("wall", res_wall);
	print("cpu", res_cpu);
	return 0;
}
