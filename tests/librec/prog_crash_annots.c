/* SPDX-License-Identifier: MIT */
/*
 * prog_crash_annots.c - a multi-threaded program using every annotation
 * macro, which dies by a signal (issue 26 items 1 and 6), for test_crash.c.
 * Usage: prog_crash_annots SIGNAL THREADS NR [MODE]
 *   SIGNAL  segv | bus | ill | abrt: how the main thread dies (as prog_crash.c)
 *   THREADS worker threads; each runs NR iterations of one "step" scope
 *           holding one of each: TRACE_VALUE (an integer, the iteration, and a
 *           double), TRACE_INSTANT, TRACE_ARG, TRACE_MESSAGE (every 16th 100
 *           bytes long, the others 1 byte), TRACE_FLOW_BEGIN/STEP/END. The
 *           first worker then exits (joined); the others stay alive, parked.
 *   MODE    plain  - (default) then the main thread crashes
 *           after  - (REC_MODE=flight, REC_AFTER long) rec_snapshot() once the
 *                    workers are done, then, once its file exists, NR "late"
 *                    scopes on the main thread, then the crash
 * Prints "snapshot RC" in mode after.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long nr;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int nr_done;

#define TEN "0123456789"
static const char long_text[] = TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN; /* 100 bytes */

static void __attribute__((noinline)) step(long i, uint64_t flow)
{
	TRACE_SCOPE_NAMED("step");
	TRACE_VALUE("count", (int64_t)i);
	TRACE_VALUE("ratio", (double)i * 0.5);
	TRACE_INSTANT("tick");
	TRACE_ARG("i", i);
	TRACE_MESSAGE(i % 16 == 0 ? long_text : "m");
	TRACE_FLOW_BEGIN("job", flow);
	TRACE_FLOW_STEP("job", flow);
	TRACE_FLOW_END("job", flow);
}

static void __attribute__((noinline)) late(void)
{
	TRACE_SCOPE_NAMED("late");
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	long k = (long)arg;

	for (long i = 0; i < nr; i++)
		step(i, (uint64_t)k << 32 | (uint64_t)i);
	pthread_mutex_lock(&lock);
	nr_done++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	if (k == 0)
		return NULL; /* exits: its ring is the writer's to end (THREAD_END) */
	for (;;)
		pause();
	return NULL;
}

/* As prog_crash.c: the faults a real program makes. */
__attribute__((no_sanitize("undefined"))) static void crash(int signo)
{
	switch (signo) {
	case SIGSEGV: {
		volatile int *volatile nowhere = NULL;

		*nowhere = 1;
		break;
	}
	case SIGBUS: {
		FILE *f = tmpfile();
		volatile char *p;

		if (!f)
			exit(5);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
		if (p == MAP_FAILED)
			exit(5);
		(void)p[0];
		break;
	}
	case SIGILL:
#if defined(__aarch64__)
		__asm__ volatile("udf #0"); /* __builtin_trap() is BRK there: SIGTRAP */
#else
		__builtin_trap();
#endif
		break;
	case SIGABRT:
		abort();
	}
	exit(6);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int signo;
	} sigs[] = { { "segv", SIGSEGV }, { "bus", SIGBUS }, { "ill", SIGILL }, { "abrt", SIGABRT } };
	int signo = 0;
	long threads;
	pthread_t th[64];
	const char *mode = argc > 4 ? argv[4] : "plain";

	if (argc < 4)
		return 2;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(argv[1], sigs[i].name))
			signo = sigs[i].signo;
	threads = atol(argv[2]);
	nr = atol(argv[3]);
	if (!signo || threads < 1 || threads > 64 || nr < 1)
		return 2;
	for (long k = 0; k < threads; k++)
		if (pthread_create(&th[k], NULL, worker, (void *)k) != 0)
			return 3;
	pthread_mutex_lock(&lock);
	while (nr_done < threads)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	pthread_join(th[0], NULL);
	if (!strcmp(mode, "after")) {
		const char *path = getenv("SNAPSHOT_PATH");
		struct timespec nap = { 0, 5000000 };
		struct stat st;
		int rc = rec_snapshot("before the crash");

		printf("snapshot %d\n", rc);
		fflush(stdout);
		/* The writer has begun the snapshot once its file exists. */
		for (int i = 0; path && i < 12000 && stat(path, &st) != 0; i++)
			nanosleep(&nap, NULL);
		for (long i = 0; i < nr; i++)
			late();
	}
	crash(signo);
	return 0;
}
