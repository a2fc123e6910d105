/* SPDX-License-Identifier: MIT */
/*
 * bench_fault.c - what a fault the program's own handler takes costs with
 * librec's crash handler in front of it (finding F7; docs/DESIGN.md "Crash
 * capture"): a write barrier, as Boehm GC's incremental mode has, N times:
 * the page made read-only, a store, the program's SA_SIGINFO handler makes
 * it writable and returns. Prints the thread's CPU time (user + system) per
 * fault in microseconds. Compare, interleaved, REC_OUTPUT=... against
 * REC_DISABLE=1 (no handler of librec's).
 * Usage: bench_fault [N]   (default 200000)
 */
#define _GNU_SOURCE
#include <rec.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

static char *page;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static void start(void)
{
	TRACE_SCOPE_NAMED("start"); /* the first probe: recording starts, librec's handler too */
}

static double cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
	       (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	struct sigaction sa;
	double t0;

	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || n <= 0)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		return 2;
	start();
	t0 = cpu_us();
	for (long i = 0; i < n; i++) {
		mprotect(page, 4096, PROT_READ);
		((volatile char *)page)[0] = (char)i;
	}
	printf("%.3f us CPU per fault\n", (cpu_us() - t0) / (double)n);
	return 0;
}
