/* SPDX-License-Identifier: MIT */
/*
 * prog_timed.c - run by test_cli_e2e.c to check the tick-to-nanosecond
 * conversion end to end: each traced scope sleeps; the program reads
 * CLOCK_MONOTONIC just outside each scope and prints the shortest and the
 * longest outside measure. The trace's durations must lie within them.
 */
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nap(long ns)
{
	TRACE_SCOPE();
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
}

int main(void)
{
	uint64_t lo = UINT64_MAX, hi = 0, sum = 0;

	rec_start(NULL); /* time zero before the first measurement */
	for (int i = 0; i < 20; i++) {
		uint64_t t0 = mono_ns();
		nap(10 * 1000 * 1000);
		uint64_t d = mono_ns() - t0;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		sum += d;
	}
	printf("%llu %llu %llu\n", (unsigned long long)lo, (unsigned long long)hi,
	       (unsigned long long)sum);
	return 0;
}
