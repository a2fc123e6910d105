/* SPDX-License-Identifier: MIT */
/*
 * many_threads.c - memory follows the work, not the number of threads
 * (issue 31), as a plain program (ThreadSanitizer can run it; the RSS
 * check is off there). MANY_THREADS threads (default 400) start, each
 * makes MANY_SCOPES scopes (default 50) and waits, alive, until all have;
 * then they end. Checks:
 *   - every scope made is in the trace or counted as dropped, the trace
 *     clean and well nested (exact); with MANY_DROPS=0 (the default) none
 *     is dropped, with MANY_DROPS=1 some must be (REC_MEMORY set too small
 *     for every thread to have a ring: the cap holds, and is counted);
 *   - MANY_CHECK_RSS=1 (default): the peak RSS (VmHWM) above the RSS before
 *     recording started stays under what README "Memory" states for
 *     threads that record little: the pool (a quarter of REC_MEMORY at
 *     most) + MANY_THREADS x (4 KiB of state + a 16 KiB ring) +
 *     MANY_SLACK_MB (default 24: the writer's buffers and zstd). Before
 *     issue 31 each thread faulted in an 8 MiB ring: 3.2 GB for 400.
 * Environment: also REC_MEMORY (read by librec too; default 256M).
 * Prints one line of figures and "1 passed, 0 failed" or "0 passed, 1 failed".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procmem.h"
#include "trace_read.h"

static long nr_scopes = 50;
static pthread_barrier_t all_recorded;

static __attribute__((noinline)) void few_scope(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < nr_scopes; i++)
		few_scope();
	/* Alive until every thread has recorded: all rings held at once. */
	pthread_barrier_wait(&all_recorded);
	return NULL;
}

int main(void)
{
	long n = tu_env_long("MANY_THREADS", 400), slack_mb = tu_env_long("MANY_SLACK_MB", 24);
	bool check_rss = tu_env_long("MANY_CHECK_RSS", 1) != 0, drops = tu_env_long("MANY_DROPS", 0) != 0;
	long long bound_kib = tu_rec_memory_bytes() / 4 / 1024 + n * (4 + 16) + slack_mb * 1024;
	const char *path = getenv("REC_OUTPUT");
	pthread_t *th;
	long base_kib, peak_kib;
	struct tr_trace tr;
	uint64_t calls, dropped, made;
	bool ok;

	nr_scopes = tu_env_long("MANY_SCOPES", nr_scopes);
	if (!path || n < 1) {
		fprintf(stderr, "many_threads: set REC_OUTPUT\n");
		return 2;
	}
	th = calloc((size_t)n, sizeof(*th));
	base_kib = tu_status_kib("VmRSS");
	if (rec_start(NULL) != 0)
		return 2;
	pthread_barrier_init(&all_recorded, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "many_threads: cannot create thread %ld\n", i);
			return 2;
		}
	pthread_barrier_wait(&all_recorded);
	peak_kib = tu_status_kib("VmHWM");
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	rec_stop();
	if (tr_load(path, &tr) != 0) {
		fprintf(stderr, "many_threads: cannot read %s\n", path);
		return 1;
	}
	calls = tr_calls(&tr, "few_scope");
	dropped = tr_dropped(&tr);
	made = (uint64_t)n * (uint64_t)nr_scopes;
	ok = tr.clean && tr.nr_corrupt == 0 && tr_well_nested(&tr) && calls + dropped == made &&
	     tr.nr_threads == (uint32_t)n && (drops ? dropped > 0 && calls > 0 : dropped == 0);
	if (check_rss)
		ok = ok && peak_kib - base_kib <= bound_kib;
	printf("many_threads: %ld threads x %ld scopes: recorded %llu, dropped %llu; "
	       "peak RSS above start %.1f MiB, bound %.1f MiB%s: %s\n",
	       n, nr_scopes, (unsigned long long)calls, (unsigned long long)dropped,
	       (double)(peak_kib - base_kib) / 1024, (double)bound_kib / 1024,
	       check_rss ? "" : " (not checked)", ok ? "ok" : "FAIL");
	tr_free(&tr);
	free(th);
	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
