/* SPDX-License-Identifier: MIT */
/*
 * prog_sample_altstack.c - a host that knows nothing of rec whose threads
 * run a SIGUSR1 handler (SA_ONSTACK) on an alternate stack sized for that
 * handler alone, as hosts size theirs: the kernel's signal frame
 * (AT_MINSIGSTKSZ) and 2 KiB more, with an inaccessible page below it, so
 * that anything written past its end faults at once instead of corrupting
 * the heap. Each of 2 threads works, then takes its handler, which works
 * MS ms of CPU on that stack, 5 times. Without rec it runs to the end
 * ("onstack 10"); run by test_sample_host.c under REC_SAMPLE.
 * Usage: prog_sample_altstack MS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

static double handler_ms;
static atomic_int nr_onstack;
static volatile double sink;

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void work(double ms)
{
	double end = thread_cpu_ms() + ms;

	while (thread_cpu_ms() < end)
		for (int i = 0; i < 1000; i++)
			sink += i * 0.5;
}

static void on_usr1(int sig)
{
	(void)sig;
	work(handler_ms);
	atomic_fetch_add(&nr_onstack, 1);
}

static void *thread(void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), min = getauxval(AT_MINSIGSTKSZ);
	size_t size = (min ? min : 2048) + 2048, map = page + ((size + page - 1) / page) * page;
	char *m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack_t st;

	(void)arg;
	if (m == MAP_FAILED || mprotect(m, page, PROT_NONE))
		return (void *)1;
	/* The stack's lowest byte right above the guard page. */
	st.ss_sp = m + page;
	st.ss_size = size;
	st.ss_flags = 0;
	if (sigaltstack(&st, NULL))
		return (void *)1;
	work(handler_ms);
	for (int i = 0; i < 5; i++)
		pthread_kill(pthread_self(), SIGUSR1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK | SA_RESTART };
	pthread_t t[2];
	void *rt;

	if (argc != 2)
		return 2;
	handler_ms = atof(argv[1]);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread, NULL))
			return 3;
	for (int i = 0; i < 2; i++)
		if (pthread_join(t[i], &rt) || rt)
			return 4;
	printf("onstack %d\n", atomic_load(&nr_onstack));
	return 0;
}
