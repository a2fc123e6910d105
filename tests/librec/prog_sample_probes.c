/* SPDX-License-Identifier: MIT */
/*
 * prog_sample_probes.c - probes flat out on 2 threads while REC_SAMPLE
 * interrupts them (test_sample.c): samples land inside probes' windows and
 * inside librec's own code on the same thread, whose rings are SPSC. Each
 * thread runs `ms` of CPU through outer() (3 nested scopes a call) and prints
 * "calls N": the outer() calls it made, for the test to check against.
 * Usage: prog_sample_probes [MS [snap]]  (snap: REC_MODE=flight's snapshot
 * of the run, rec_snapshot(), written before it exits)
 */
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned sink;

__attribute__((noinline)) static void leaf(unsigned i)
{
	TRACE_SCOPE();
	sink += i;
}

__attribute__((noinline)) static void middle(unsigned i)
{
	TRACE_SCOPE();
	leaf(i);
	TRACE_VALUE("i", (long long)i);
}

__attribute__((noinline)) static void outer(unsigned i)
{
	TRACE_SCOPE();
	middle(i);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *run(void *arg)
{
	double until = cpu_ms() + *(double *)arg;
	unsigned long n = 0;

	while (cpu_ms() < until)
		for (unsigned i = 0; i < 1000; i++, n++)
			outer(i);
	printf("calls %lu\n", n);
	return NULL;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 300;
	pthread_t t;

	pthread_create(&t, NULL, run, &ms);
	run(&ms);
	pthread_join(t, NULL);
	if (argc > 2 && strcmp(argv[2], "snap") == 0 && (rec_snapshot("end") || rec_flush()))
		return 3;
	return 0;
}
