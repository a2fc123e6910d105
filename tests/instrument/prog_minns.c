/* SPDX-License-Identifier: MIT */
/*
 * prog_minns.c - many short activations for REC_MIN_NS, built with
 * -finstrument-functions: two threads (main and a worker) each run
 * outer() ROUNDS times (argv[1]), and outer() calls inner() 3 times. So
 * 2 * ROUNDS * 4 + 1 (main) + 1 (worker_main) activations run, across many
 * writer passes.
 */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static __thread volatile unsigned long sink; /* per thread: no data race */
static long rounds;

NOINLINE void inner(void);
NOINLINE void outer(void);

void inner(void)
{
	sink++;
}

void outer(void)
{
	for (int i = 0; i < 3; i++)
		inner();
}

static NOINLINE void *worker_main(void *arg)
{
	for (long i = 0; i < rounds; i++)
		outer();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t th;

	rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
	if (pthread_create(&th, NULL, worker_main, NULL))
		return 1;
	for (long i = 0; i < rounds; i++)
		outer();
	return pthread_join(th, NULL) ? 1 : 0;
}
