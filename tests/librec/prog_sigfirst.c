/* SPDX-License-Identifier: MIT */
/*
 * prog_sigfirst.c - the process's first probe is in a signal handler: a
 * 20 kHz SIGALRM timer (setitimer) whose handler has a TRACE_SCOPE is armed
 * before anything probes, while the main thread allocates and frees in a
 * loop (so the handler often interrupts malloc). Recording must start from
 * the handler without allocating, creating a thread or taking a lock malloc
 * holds. Prints the number of handler runs; test_host.c checks the trace.
 * Usage: prog_sigfirst NR_ALARMS
 */
#include <rec.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t nr_alarms;

static void __attribute__((noinline)) in_handler(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static void on_alarm(int sig)
{
	(void)sig;
	in_handler();
	nr_alarms++;
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa;
	long want = argc > 1 ? atol(argv[1]) : 1000;
	void *keep[64] = { 0 };
	unsigned k = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return 2;
	while (nr_alarms < want) {
		/* Sizes across malloc's bins, some kept a while. */
		size_t n = 16 + (k * 7919u) % 70000u;

		free(keep[k % 64]);
		keep[k % 64] = malloc(n);
		if (keep[k % 64])
			memset(keep[k % 64], (int)k, n < 256 ? n : 256);
		k++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned i = 0; i < 64; i++)
		free(keep[i]);
	printf("%ld\n", (long)nr_alarms);
	return 0;
}
