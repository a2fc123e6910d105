/* SPDX-License-Identifier: MIT */
/*
 * stress.c - librec under concurrency, as a plain program so that
 * ThreadSanitizer can watch it (Criterion cannot run under TSan:
 * Snaipe/Criterion#274). For each overflow mode: 8 worker threads run nested
 * and recursive scopes on small rings while threads exit and are replaced
 * (churn), a flusher thread calls rec_flush() and rename themselves; then
 * the trace must account for every scope executed: calls + dropped equals
 * what the program ran, nesting is intact, and block mode drops nothing.
 *
 * Environment: STRESS_ROUNDS (threads started per worker slot, default 6),
 * STRESS_SCOPES (scopes per thread, default 20000). Exit 0 when both modes
 * pass; prints "N passed, N failed".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace_read.h"

#define NR_SLOTS 8

static long nr_rounds = 6, nr_scopes = 20000;
static long executed[NR_SLOTS]; /* scopes run, per slot; joined before read */
static volatile int flusher_stop;

static unsigned deep(unsigned n)
{
	TRACE_SCOPE();
	return n ? deep(n - 1) + 1 : 0;
}

static void work_item(void)
{
	TRACE_SCOPE();
	/* Annotations share the rings (issue 15): TSan sees their slots too. */
	TRACE_ARG("n", 1);
	TRACE_VALUE("v", 2.5);
}

struct job {
	int slot;
	long round;
	long done;
};

static void *worker(void *arg)
{
	struct job *job = arg;
	unsigned seed = (unsigned)(job->slot * 1000 + job->round);
	char name[32];
	long n = 0;

	snprintf(name, sizeof(name), "w%d.%ld", job->slot, job->round);
	rec_thread_name(name);
	while (n < nr_scopes) {
		unsigned depth;

		seed = seed * 1103515245u + 12345u;
		depth = (seed >> 16) % 6;
		{
			TRACE_SCOPE_NAMED("outer");
			TRACE_FLOW_STEP("job", (uint64_t)n);
			deep(depth);
			work_item();
		}
		n += depth + 3; /* outer + (depth + 1) deep + work_item */
		if ((seed >> 8) % 97 == 0)
			rec_thread_name(name); /* renames race with the writer */
	}
	job->done = n;
	return NULL;
}

static void *flusher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&flusher_stop, __ATOMIC_RELAXED)) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };

		rec_flush();
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int run_mode(const char *mode, const char *path)
{
	struct rec_config cfg = REC_CONFIG_INIT;
	pthread_t th[NR_SLOTS], fl;
	struct job jobs[NR_SLOTS];
	struct tr_trace tr;
	long total = 0;
	uint64_t calls;
	int ok;

	cfg.output = path;
	cfg.buffer_bytes = 16 * 1024;
	cfg.flush_ms = 3;
	cfg.overflow = strcmp(mode, "block") == 0 ? REC_OVERFLOW_BLOCK : REC_OVERFLOW_DROP;
	if (rec_start(&cfg) != 0) {
		fprintf(stderr, "stress: rec_start failed\n");
		return 0;
	}
	memset(executed, 0, sizeof(executed));
	flusher_stop = 0;
	pthread_create(&fl, NULL, flusher, NULL);
	/* Churn: each slot runs nr_rounds threads one after another. */
	for (long round = 0; round < nr_rounds; round++) {
		for (int s = 0; s < NR_SLOTS; s++) {
			jobs[s] = (struct job){ s, round, 0 };
			pthread_create(&th[s], NULL, worker, &jobs[s]);
		}
		for (int s = 0; s < NR_SLOTS; s++) {
			pthread_join(th[s], NULL);
			executed[s] += jobs[s].done;
		}
	}
	__atomic_store_n(&flusher_stop, 1, __ATOMIC_RELAXED);
	pthread_join(fl, NULL);
	if (rec_stop() != 0) {
		fprintf(stderr, "stress: rec_stop failed\n");
		return 0;
	}
	for (int s = 0; s < NR_SLOTS; s++)
		total += executed[s];
	if (tr_load(path, &tr) != 0) {
		fprintf(stderr, "stress: cannot read %s\n", path);
		return 0;
	}
	calls = tr_calls(&tr, "outer") + tr_calls(&tr, "deep") + tr_calls(&tr, "work_item");
	ok = tr.clean && tr_well_nested(&tr) && calls + tr_dropped(&tr) == (uint64_t)total &&
	     tr.nr_threads == NR_SLOTS * nr_rounds && tr.nr_corrupt == 0;
	if (strcmp(mode, "block") == 0)
		ok = ok && tr_dropped(&tr) == 0;
	for (uint32_t i = 0; i < tr.nr_threads; i++)
		ok = ok && tr.threads[i].ended && tr.threads[i].nr_unclosed == 0 && tr.threads[i].named;
	printf("stress %-5s: %s  executed %ld, recorded %llu, dropped %llu, threads %u\n", mode,
	       ok ? "ok  " : "FAIL", total, (unsigned long long)calls,
	       (unsigned long long)tr_dropped(&tr), tr.nr_threads);
	tr_free(&tr);
	unlink(path);
	return ok;
}

int main(void)
{
	const char *v;
	char path[128];
	int passed = 0, failed = 0;

	if ((v = getenv("STRESS_ROUNDS")))
		nr_rounds = atol(v);
	if ((v = getenv("STRESS_SCOPES")))
		nr_scopes = atol(v);
	snprintf(path, sizeof(path), "/tmp/rec_stress_%d.zst", (int)getpid());
	for (int m = 0; m < 2; m++) {
		if (run_mode(m == 0 ? "drop" : "block", path))
			passed++;
		else
			failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
