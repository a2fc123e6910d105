/* SPDX-License-Identifier: MIT */
/*
 * prog_top.c - the program the `tracetool top` tests follow (top_pipe.sh,
 * top_tmux.sh), told when to go on by lines on stdin so that the tests know
 * what is in the file when, without sleeping.
 *
 *   prog_top steps: thread "main" opens scope "long", runs 100 "short"
 *     scopes and a thread "worker" that runs 200 "work" scopes; then
 *     rec_flush(), prints "flushed", and waits for a line on stdin; then
 *     closes "long" (open across the tables top drew meanwhile), runs 50
 *     "tail" scopes and exits (END: a clean end).
 *   prog_top live: thread "busy" runs "tick" scopes of about 1 ms until a
 *     line comes on stdin; "ready" is printed after the first flush. Then
 *     it exits cleanly.
 */
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile int stop;

static void *worker(void *arg)
{
	(void)arg;
	rec_thread_name("worker");
	for (int i = 0; i < 200; i++) {
		TRACE_SCOPE_NAMED("work");
	}
	return NULL;
}

static void *busy(void *arg)
{
	const struct timespec ms = { 0, 1000000 };

	(void)arg;
	rec_thread_name("busy");
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		TRACE_SCOPE_NAMED("tick");
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static int wait_line(void)
{
	char line[64];

	return fgets(line, sizeof(line), stdin) ? 0 : -1;
}

int main(int argc, char **argv)
{
	pthread_t th;

	rec_thread_name("main");
	if (argc > 1 && strcmp(argv[1], "live") == 0) {
		pthread_create(&th, NULL, busy, NULL);
		rec_flush();
		printf("ready\n");
		fflush(stdout);
		wait_line();
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(th, NULL);
		return 0;
	}
	{
		TRACE_SCOPE_NAMED("long");
		for (int i = 0; i < 100; i++) {
			TRACE_SCOPE_NAMED("short");
		}
		pthread_create(&th, NULL, worker, NULL);
		pthread_join(th, NULL);
		rec_flush();
		printf("flushed\n");
		fflush(stdout);
		wait_line();
	}
	for (int i = 0; i < 50; i++) {
		TRACE_SCOPE_NAMED("tail");
	}
	return 0;
}
