/* SPDX-License-Identifier: MIT */
/*
 * prog_threads.c - a program that knows nothing of rec, for test_record.c:
 * its main thread starts one thread that names itself "spin-worker" with
 * pthread_setname_np() and one that does not; each of the three spins
 * about 0.1 s of CPU (spin() is not inlined: clang would fold the main
 * thread's call into main()).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void *spin(void *name)
{
	if (name)
		pthread_setname_np(pthread_self(), name);
	for (unsigned long i = 0; i < 100000000; i++)
		sink += i;
	return NULL;
}

int main(void)
{
	pthread_t named, plain;

	if (pthread_create(&named, NULL, spin, "spin-worker") ||
	    pthread_create(&plain, NULL, spin, NULL))
		return 1;
	spin(NULL);
	pthread_join(named, NULL);
	pthread_join(plain, NULL);
	return 0;
}
