/* SPDX-License-Identifier: MIT */
/*
 * prog_nested.c - an instrumented program with known counts, run by
 * test_cli_e2e.c: 4 named threads each call outer() NR_OUTER times; outer
 * calls middle() (which calls leaf() twice), a named block, and a recursive
 * function 5 levels deep.
 */
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>

#include "nested_scopes.h"

#define NR_OUTER 1000

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	rec_thread_name(name);
	for (int i = 0; i < NR_OUTER; i++)
		outer();
	return NULL;
}

int main(void)
{
	pthread_t th[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return 0;
}
