/* SPDX-License-Identifier: MIT */
/*
 * prog_sample_share.c - a thread that spends a known share of its CPU time
 * inside dense probes (test_sample.c, F20): rounds of fib(20), with a
 * TRACE_SCOPE in every call, then spin(), which has no probe, for a length
 * drawn anew each round (so that the rounds do not keep step with the
 * sampling period), until MS ms of the thread's CPU time are spent. It measures the CPU time of each part
 * itself (CLOCK_THREAD_CPUTIME_ID around each) and prints
 * "fib_ns N spin_ns M": REC_SAMPLE's samples must split as those do.
 * Usage: prog_sample_share [MS]
 */
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned fib(unsigned n)
{
	TRACE_SCOPE();
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static void spin(volatile long *n)
{
	for (long i = 0; i < *n; i++)
		sink += (unsigned long)i;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 10) : 600, fib_ns = 0, spin_ns = 0;
	uint64_t start = cpu_ns(), a, b, c = start;
	uint32_t x = 12345;
	volatile long n;

	while (c - start < ms * 1000000u) {
		a = cpu_ns();
		sink += fib(20);
		b = cpu_ns();
		x = x * 1103515245u + 12345u;
		n = 100000 + (long)(x >> 8) % 400000;
		spin(&n);
		c = cpu_ns();
		fib_ns += b - a;
		spin_ns += c - b;
	}
	printf("fib_ns %llu spin_ns %llu\n", (unsigned long long)fib_ns,
	       (unsigned long long)spin_ns);
	return 0;
}
