/* SPDX-License-Identifier: MIT */
/*
 * churn.c - memory under thread churn (issue 11, item 6), as a plain
 * program (ThreadSanitizer can run it; the memory check is off there).
 * NR_SLOTS threads trace flat out, each replaced by a new thread after
 * CHURN_LIFE_MS; optionally the writer is starved (SCHED_IDLE: it runs
 * only when no other thread of the machine wants the CPU). Checks:
 *   - every scope executed is in the trace or counted as dropped, and the
 *     trace is clean and well nested (exact);
 *   - the peak RSS (VmHWM) above the RSS once recording runs stays under
 *     README's bound on ring memory, REC_MEMORY, plus CHURN_SLACK_MB for
 *     the rest (writer buffers, thread stacks and states).
 * Without a process-wide bound, exited threads' full rings pile up behind
 * a starved writer: hundreds of MiB within a second here.
 *
 * Environment: REC_MEMORY (read by librec too; default 256M), CHURN_MS (default 1000),
 * CHURN_LIFE_MS (default 5), CHURN_STARVE (1: writer SCHED_IDLE; default
 * 0), CHURN_CHECK_RSS (default 1), CHURN_SLACK_MB (default 48).
 * Prints one line of figures and "1 passed, 0 failed" or "0 passed, 1 failed".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procmem.h"
#include "trace_read.h"
#include "writer_tid.h"

#define NR_SLOTS 8

static long life_ms = 5;

struct job {
	long done; /* scopes run; read after join */
	int finished; /* release-set by the thread at its end */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static __attribute__((noinline)) void churn_scope(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	struct job *job = arg;
	uint64_t end = mono_ms() + (uint64_t)life_ms;
	long n = 0;

	do {
		for (int i = 0; i < 1024; i++)
			churn_scope();
		n += 1024;
	} while (mono_ms() < end);
	job->done = n;
	__atomic_store_n(&job->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(void)
{
	long run_ms = tu_env_long("CHURN_MS", 1000), slack_mb = tu_env_long("CHURN_SLACK_MB", 48);
	bool starve = tu_env_long("CHURN_STARVE", 0) != 0, check_rss = tu_env_long("CHURN_CHECK_RSS", 1);
	long long bound_kib = tu_rec_memory_bytes() / 1024 + slack_mb * 1024;
	pthread_t th[NR_SLOTS];
	struct job *jobs[NR_SLOTS];
	long base_kib, peak_kib, nr_threads = 0;
	long long executed = 0;
	struct tr_trace tr;
	const char *path = getenv("REC_OUTPUT");
	uint64_t end, calls;
	bool ok;

	life_ms = tu_env_long("CHURN_LIFE_MS", life_ms);
	if (!path) {
		fprintf(stderr, "churn: set REC_OUTPUT\n");
		return 2;
	}
	churn_scope(); /* starts recording */
	rec_flush();
	if (starve) {
		struct sched_param sp = { 0 };
		pid_t tid = writer_tid();

		if (!tid || sched_setscheduler(tid, SCHED_IDLE, &sp) != 0)
			fprintf(stderr, "churn: cannot starve the writer; running without\n");
	}
	base_kib = tu_status_kib("VmRSS");
	end = mono_ms() + (uint64_t)run_ms;
	for (int s = 0; s < NR_SLOTS; s++) {
		jobs[s] = calloc(1, sizeof(*jobs[s]));
		pthread_create(&th[s], NULL, worker, jobs[s]);
		nr_threads++;
	}
	/* Replace each thread as soon as it ends, until run_ms is over. */
	while (mono_ms() < end) {
		struct timespec nap = { 0, 200 * 1000 };

		for (int s = 0; s < NR_SLOTS; s++) {
			if (!__atomic_load_n(&jobs[s]->finished, __ATOMIC_ACQUIRE))
				continue;
			pthread_join(th[s], NULL);
			executed += jobs[s]->done;
			memset(jobs[s], 0, sizeof(*jobs[s]));
			pthread_create(&th[s], NULL, worker, jobs[s]);
			nr_threads++;
		}
		nanosleep(&nap, NULL);
	}
	for (int s = 0; s < NR_SLOTS; s++) {
		pthread_join(th[s], NULL);
		executed += jobs[s]->done;
		free(jobs[s]);
	}
	rec_stop();
	peak_kib = tu_status_kib("VmHWM");
	if (tr_load(path, &tr) != 0) {
		fprintf(stderr, "churn: cannot read %s\n", path);
		return 1;
	}
	calls = tr_calls(&tr, "churn_scope") - 1; /* main's first call */
	ok = tr.clean && tr.nr_corrupt == 0 && tr_well_nested(&tr) &&
	     calls + tr_dropped(&tr) == (uint64_t)executed &&
	     tr.nr_threads == (uint32_t)nr_threads + 1;
	if (check_rss)
		ok = ok && peak_kib - base_kib <= bound_kib;
	printf("churn: %ld threads, executed %lld, recorded %llu, dropped %llu; "
	       "peak RSS above start %ld MiB, bound %lld MiB%s: %s\n",
	       nr_threads, executed, (unsigned long long)calls,
	       (unsigned long long)tr_dropped(&tr), (peak_kib - base_kib) / 1024,
	       bound_kib / 1024, check_rss ? "" : " (not checked)", ok ? "ok" : "FAIL");
	tr_free(&tr);
	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
