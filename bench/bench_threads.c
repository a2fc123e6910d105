/* SPDX-License-Identifier: MIT */
/*
 * bench_threads.c - memory and start-up with many live threads (issue 31):
 * --threads=N threads are created and wait; then each in turn (or all at
 * once, --all) makes --scopes=S scopes and waits again, alive, until the
 * end. Prints the RSS librec added (VmRSS after the scopes minus VmRSS
 * before them, the threads' stacks already touched), the peak (VmHWM), the
 * attach time of each thread's first scope beyond its second one (median
 * and largest), the wall time of the scopes phase, and, from the trace,
 * the scopes recorded and dropped: every one of the N x S must be there.
 *
 * --snapshot, with REC_MODE=flight and REC_OUTPUT holding %n: after the
 * scopes, while the threads are alive, rec_snapshot() writes snapshot 1,
 * which is read instead (every thread's scopes must be in it).
 *
 * Usage: REC_OUTPUT=t.zst bench_threads [--threads=N] [--scopes=S] [--all] [--snapshot]
 * Exit: 0 when every scope is in the trace, 1 if some are missing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace_read.h"

__attribute__((noinline)) static void small_scope(void)
{
	TRACE_SCOPE_NAMED("small");
	__asm__ volatile("" ::: "memory");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A line "Key:   N kB" of /proc/self/status, in KiB. */
static long status_kib(const char *key)
{
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = atol(line + n + 1);
	fclose(f);
	return v;
}

static int nr_scopes = 100;
static sem_t done_sem, quit_sem;

struct worker {
	sem_t go;
	double attach_us;
};

static void *worker(void *arg)
{
	struct worker *wk = arg;
	uint64_t t0, t1, t2;

	while (sem_wait(&wk->go) != 0)
		;
	t0 = mono_ns();
	small_scope(); /* attaches */
	t1 = mono_ns();
	small_scope();
	t2 = mono_ns();
	for (int i = 2; i < nr_scopes; i++)
		small_scope();
	wk->attach_us = ((double)(t1 - t0) - (double)(t2 - t1)) / 1000.0;
	sem_post(&done_sem);
	while (sem_wait(&quit_sem) != 0)
		;
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = 1000, all = 0, snapshot = 0;
	char path[4096];
	pthread_t *th;
	struct worker *wk;
	double *us;
	long rss0, rss1, hwm;
	uint64_t t0, t1;
	const char *out = getenv("REC_OUTPUT");
	struct tr_trace tr;
	uint64_t recorded, dropped;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--threads=", 10))
			n = atoi(argv[i] + 10);
		else if (!strncmp(argv[i], "--scopes=", 9))
			nr_scopes = atoi(argv[i] + 9);
		else if (!strcmp(argv[i], "--all"))
			all = 1;
		else if (!strcmp(argv[i], "--snapshot"))
			snapshot = 1;
		else
			n = 0;
	}
	if (n < 1 || n > 100000 || nr_scopes < 2 || !out || (snapshot && !strstr(out, "%n"))) {
		fprintf(stderr, "usage: REC_OUTPUT=FILE bench_threads [--threads=N] [--scopes=S>=2] "
				"[--all] [--snapshot (REC_MODE=flight, FILE with %%n)]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s", out);
	if (snapshot) {
		char *at = strstr(path, "%n");

		at[0] = '1';
		memmove(at + 1, at + 2, strlen(at + 2) + 1);
	}
	th = calloc((size_t)n, sizeof(*th));
	wk = calloc((size_t)n, sizeof(*wk));
	us = calloc((size_t)n, sizeof(*us));
	sem_init(&done_sem, 0, 0);
	sem_init(&quit_sem, 0, 0);
	for (int i = 0; i < n; i++) {
		sem_init(&wk[i].go, 0, 0);
		if (pthread_create(&th[i], NULL, worker, &wk[i]) != 0) {
			fprintf(stderr, "bench_threads: cannot create thread %d\n", i);
			return 2;
		}
	}
	usleep(100000); /* every thread is waiting, its stack touched */
	rss0 = status_kib("VmRSS");
	rec_start(NULL); /* recording starts here: its start-up is not a thread's attach */
	t0 = mono_ns();
	for (int i = 0; i < n; i++) {
		sem_post(&wk[i].go);
		if (!all)
			while (sem_wait(&done_sem) != 0)
				;
	}
	if (all)
		for (int i = 0; i < n; i++)
			while (sem_wait(&done_sem) != 0)
				;
	t1 = mono_ns();
	rss1 = status_kib("VmRSS");
	hwm = status_kib("VmHWM");
	if (snapshot && (rec_snapshot("bench_threads") != 0 || rec_flush() != 0)) {
		fprintf(stderr, "bench_threads: no snapshot\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		sem_post(&quit_sem);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	rec_stop();
	for (int i = 0; i < n; i++)
		us[i] = wk[i].attach_us;
	qsort(us, (size_t)n, sizeof(*us), cmp_d);
	if (tr_load(path, &tr) != 0) {
		fprintf(stderr, "bench_threads: cannot read %s\n", path);
		return 2;
	}
	recorded = tr_calls(&tr, "small");
	dropped = tr_dropped(&tr);
	printf("threads: %d live, %d scopes each, %s%s: RSS added by librec %.1f MiB "
	       "(VmHWM %.1f MiB), attach median %.0f us, max %.0f us, scopes phase %.2f s; "
	       "scopes recorded %llu of %llu, dropped %llu\n",
	       n, nr_scopes, all ? "all at once" : "one after another",
	       snapshot ? ", flight snapshot" : "", (double)(rss1 - rss0) / 1024,
	       (double)hwm / 1024, us[n / 2], us[n - 1], (double)(t1 - t0) / 1e9,
	       (unsigned long long)recorded, (unsigned long long)n * (unsigned long long)nr_scopes,
	       (unsigned long long)dropped);
	tr_free(&tr);
	free(th);
	free(wk);
	free(us);
	return recorded == (uint64_t)n * (uint64_t)nr_scopes ? 0 : 1;
}
