/* SPDX-License-Identifier: MIT */
/*
 * prog_annots.c - the program test_annots.c records: every kind of
 * annotation (rec(3), Annotations) a known number of times with known values.
 *   main:   100 × handle, each with TRACE_ARG("bytes", i), set once more to
 *           i (after a first 7: the later wins), TRACE_VALUE("queue", i % 10)
 *           and TRACE_FLOW_BEGIN("request", i);
 *   worker: (started after) 100 × work, the first 90 ending their flow;
 *           3 × TRACE_INSTANT("tick"), 2 × TRACE_MESSAGE, one TRACE_VALUE
 *           ("load", 0.5).
 * So: summary --arg=bytes gives handle 4950 / 49.50, values queue 100
 * samples 0..9 last 9 and load 0.5, flows request 90 finished, 10
 * unfinished.
 */
#include <pthread.h>
#include <rec.h>
#include <stdint.h>

static void handle(int64_t i)
{
	TRACE_SCOPE_NAMED("handle");
	TRACE_ARG("bytes", 7);
	TRACE_ARG("bytes", i);
	TRACE_VALUE("queue", i % 10);
	TRACE_FLOW_BEGIN("request", (uint64_t)i);
}

static void work(uint64_t i)
{
	TRACE_SCOPE_NAMED("work");
	if (i < 90)
		TRACE_FLOW_END("request", i);
}

static void *worker(void *arg)
{
	(void)arg;
	rec_thread_name("worker");
	for (uint64_t i = 0; i < 100; i++)
		work(i);
	for (int k = 0; k < 3; k++)
		TRACE_INSTANT("tick");
	TRACE_MESSAGE("hello");
	TRACE_MESSAGE("world");
	TRACE_VALUE("load", 0.5);
	return NULL;
}

int main(void)
{
	pthread_t t;

	rec_thread_name("main");
	for (int64_t i = 0; i < 100; i++)
		handle(i);
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
