/* SPDX-License-Identifier: MIT */
/*
 * prog_counters.c - a program for the counters and live-report tests
 * (test_counters.c). `prog_counters counters`: 20 calls of touch_pages(),
 * each first-touching 64 fresh pages, and 20 calls of nap(), each sleeping
 * 2 ms. `prog_counters live`: about 600 ms of live_busy() slices inside
 * one long live_outer(), for REC_LIVE.
 */
#define _GNU_SOURCE
#include <rec.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES 64

static __attribute__((noinline)) void touch_pages(void)
{
	TRACE_SCOPE();
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, PAGES * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	madvise(p, PAGES * (size_t)page, MADV_NOHUGEPAGE); /* one fault per page */
	for (int i = 0; i < PAGES; i++)
		((volatile char *)p)[(size_t)i * (size_t)page] = 1;
	munmap(p, PAGES * (size_t)page);
}

static __attribute__((noinline)) void nap(void)
{
	TRACE_SCOPE();
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void live_busy(void)
{
	TRACE_SCOPE();
	double end = now_s() + 0.005;

	while (now_s() < end)
		;
}

static __attribute__((noinline)) void live_outer(void)
{
	TRACE_SCOPE();
	double end = now_s() + 0.6;

	while (now_s() < end)
		live_busy();
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "live") == 0) {
		rec_thread_name("main");
		live_outer();
		return 0;
	}
	for (int i = 0; i < 20; i++)
		touch_pages();
	for (int i = 0; i < 20; i++)
		nap();
	return 0;
}
