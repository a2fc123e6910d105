/* SPDX-License-Identifier: MIT */
/*
 * flight_stress.c - REC_MODE=flight under load, as a plain program (it runs
 * under ThreadSanitizer too): 4 threads record nested scopes flat out into
 * small rings, which the writer keeps trimming; some threads end and are
 * replaced; the main thread triggers snapshots with rec_snapshot() and with
 * the signal, and a slow scope triggers REC_TRIGGER. Every snapshot file
 * must be complete (END record), hold a SNAPSHOT record, have every event
 * inside its window, and nest (exits without enters only for scopes open at
 * the window's start). Environment (set by meson): REC_MODE=flight,
 * REC_OUTPUT with %n, REC_BUFFER, REC_WINDOW, REC_SNAPSHOT_SIGNAL=USR2,
 * REC_TRIGGER=slow>20ms, REC_SNAPSHOT_MAX; FLIGHT_PREFIX: the output's
 * name before "-<pid>-". Exit 0 if every file is right.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec.h"
#include "trace_read.h"

#define NR_THREADS 4

static int stop_flag;
static __thread volatile unsigned sink; /* per thread: no race */

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

__attribute__((noinline)) static void leaf(void)
{
	TRACE_SCOPE();
	sink++;
}

__attribute__((noinline)) static void mid(void)
{
	TRACE_SCOPE();
	for (int i = 0; i < 4; i++)
		leaf();
}

__attribute__((noinline)) static void slow(void)
{
	TRACE_SCOPE();
	pause_ms(30);
}

static void *worker(void *arg)
{
	long n = (long)arg;

	rec_thread_name(n & 1 ? "odd" : "even");
	/* Short-lived workers: 20000 scopes, then end (and are replaced). */
	for (int i = 0; i < 20000 && !__atomic_load_n(&stop_flag, __ATOMIC_RELAXED); i++)
		mid();
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		pthread_t t[NR_THREADS];

		for (long i = 0; i < NR_THREADS; i++)
			pthread_create(&t[i], NULL, worker, (void *)i);
		for (int i = 0; i < NR_THREADS; i++)
			pthread_join(t[i], NULL);
	}
	return NULL;
}

static int check_file(const char *path)
{
	struct tr_trace tr;
	int bad = 0;

	memset(&tr, 0, sizeof(tr));
	if (tr_load(path, &tr) != 0) {
		fprintf(stderr, "%s: cannot read\n", path);
		return 1;
	}
	if (!tr.clean || !tr.has_snapshot || tr.nr_corrupt) {
		fprintf(stderr, "%s: clean %d, snapshot %d, corrupt frames %d\n", path, tr.clean,
			tr.has_snapshot, tr.nr_corrupt);
		bad = 1;
	}
	for (uint32_t i = 0; i < tr.nr_threads; i++) {
		const struct tr_thread *t = &tr.threads[i];

		if (t->nr_bad_exits || t->nr_backwards) {
			fprintf(stderr, "%s: thread %u: %llu exits that do not nest, %llu backwards\n",
				path, t->serial, (unsigned long long)t->nr_bad_exits,
				(unsigned long long)t->nr_backwards);
			bad = 1;
		}
		if (t->nr_events && t->last_ticks > tr.snap_end_ticks) {
			fprintf(stderr, "%s: thread %u: an event after the window\n", path, t->serial);
			bad = 1;
		}
	}
	printf("%s: #%u kind %u, %llu events, %u threads, reason '%s'\n", path, tr.snap_number,
	       tr.snap_kind, (unsigned long long)tr.nr_events, tr.nr_threads, tr.snap_reason);
	tr_free(&tr);
	return bad;
}

int main(void)
{
	const char *prefix = getenv("FLIGHT_PREFIX");
	pthread_t sp;
	char pat[512];
	glob_t g;
	int bad = 0, nr_ok = 0;

	if (!prefix) {
		fprintf(stderr, "FLIGHT_PREFIX is not set\n");
		return 2;
	}
	leaf(); /* starts recording: the signal handler is in place after it */
	pthread_create(&sp, NULL, spawner, NULL);
	for (int i = 0; i < 6; i++) {
		pause_ms(40);
		if (i % 3 == 0)
			nr_ok += rec_snapshot("stress") == 0;
		else if (i % 3 == 1)
			kill(getpid(), SIGUSR2);
		else
			slow();
		rec_flush();
	}
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	pthread_join(sp, NULL);
	if (rec_stop() != 0) {
		fprintf(stderr, "rec_stop failed\n");
		return 1;
	}
	snprintf(pat, sizeof(pat), "%s-%d-*.zst", prefix, (int)getpid());
	/* Each trigger 40 ms after the last snapshot was written: past REC_WINDOW. */
	if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc != 6) {
		fprintf(stderr, "%s: %zu snapshots, want 6 (rec_snapshot accepted %d of 2)\n",
			pat, g.gl_pathc, nr_ok);
		return 1;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		bad |= check_file(g.gl_pathv[i]);
		unlink(g.gl_pathv[i]);
	}
	globfree(&g);
	return bad;
}
