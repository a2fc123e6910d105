/* SPDX-License-Identifier: MIT */
/*
 * prog_pthread_exit.c - main() ends with pthread_exit() while two threads
 * still record, as POSIX allows: the process ends when its last thread
 * does, with status 0 (glibc: exit(0) from the last thread, which runs the
 * atexit handlers and librec's destructor). Run by test_host_exit.c.
 * Usage: prog_pthread_exit
 */
#include <pthread.h>
#include <rec.h>

static void __attribute__((noinline)) work(void)
{
	TRACE_SCOPE_NAMED("work");
	__asm__ volatile("" ::: "memory");
}

static void *thread(void *arg)
{
	for (int i = 0; i < 1000; i++)
		work();
	return arg;
}

int main(void)
{
	pthread_t t[2];

	/* Detached: no one joins them (ThreadSanitizer reports a leak otherwise). */
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread, NULL) == 0)
			pthread_detach(t[i]);
	for (int i = 0; i < 1000; i++)
		work();
	pthread_exit(NULL);
}
