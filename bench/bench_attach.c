/* SPDX-License-Identifier: MIT */
/*
 * bench_attach.c - what a thread's first probe costs (issue 14): the time
 * its first TRACE_SCOPE call takes beyond a later one, i.e. attaching the
 * thread and faulting in its ring (REC_BUFFER), all before the scope's
 * enter timestamp. --threads fresh threads are started one after another
 * and kept alive, so that each maps a ring of its own (none from the pool
 * of exited threads' rings). Prints the median and the largest.
 *
 * Usage: bench_attach [--threads=N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) static void probed(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;
static int ready; /* workers measured so far (release) */

static void *worker(void *arg)
{
	double *us = arg;
	uint64_t t0 = mono_ns(), t1, t2;

	probed(); /* attaches */
	t1 = mono_ns();
	probed();
	t2 = mono_ns();
	*us = ((double)(t1 - t0) - (double)(t2 - t1)) / 1000.0;
	__atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = 16;
	pthread_t *th;
	double *us;

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--threads=", 10))
			n = atoi(argv[i] + 10);
	if (n < 1 || n > 4096) {
		fprintf(stderr, "usage: bench_attach [--threads=1..4096]\n");
		return 2;
	}
	probed(); /* the process's first probe starts recording: not measured */
	th = calloc((size_t)n, sizeof(*th));
	us = calloc((size_t)n, sizeof(*us));
	for (int i = 0; i < n; i++) {
		pthread_create(&th[i], NULL, worker, &us[i]);
		while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) <= i)
			sched_yield();
	}
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	qsort(us, (size_t)n, sizeof(*us), cmp_d);
	printf("attach: %d threads, REC_BUFFER=%s: median %.0f us, max %.0f us\n", n,
	       getenv("REC_BUFFER") ? getenv("REC_BUFFER") : "default", us[n / 2], us[n - 1]);
	free(th);
	free(us);
	return 0;
}
