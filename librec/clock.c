/* SPDX-License-Identifier: MIT */
/*
 * clock.c - which clock the probes read, and clock-sync points that pair a
 * TSC reading with CLOCK_MONOTONIC and CLOCK_REALTIME so that the analyzer
 * turns ticks into nanoseconds (FORMAT.md §3.3). The TSC is used only where
 * the CPU says it is invariant (constant rate, runs in every C-state).
 */
#include "rec_internal.h"

#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

bool rec__clock_tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1u; /* "Invariant TSC" (Intel SDM, AMD APM: TscInvariant) */
#else
	return false;
#endif
}

static uint64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rec__clock_now(bool use_tsc)
{
	return use_tsc ? rec__rdtsc() : read_ns(CLOCK_MONOTONIC);
}

/*
 * rec__clock_sync() - read the probes' clock, CLOCK_MONOTONIC and
 * CLOCK_REALTIME at as nearly one instant as possible: the TSC is read on
 * both sides of the monotonic read and the narrowest of a few tries wins,
 * its midpoint standing for the instant.
 */
void rec__clock_sync(bool use_tsc, struct recfmt_sync *out)
{
	uint64_t best = UINT64_MAX;

	if (!use_tsc) {
		out->mono_ns = read_ns(CLOCK_MONOTONIC);
		out->real_ns = read_ns(CLOCK_REALTIME);
		out->ticks = out->mono_ns;
		return;
	}
	for (int i = 0; i < 8; i++) {
		uint64_t t0 = rec__rdtsc();
		uint64_t mono = read_ns(CLOCK_MONOTONIC);
		uint64_t t1 = rec__rdtsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			out->ticks = t0 + (t1 - t0) / 2;
			out->mono_ns = mono;
		}
	}
	/* Realtime is for display only: its offset from monotonic is what counts. */
	out->real_ns = read_ns(CLOCK_REALTIME) - (read_ns(CLOCK_MONOTONIC) - out->mono_ns);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * rec__clock_step() - the clock's step as the probes see it, for the file
 * header (FORMAT.md §3.2): of up to 1024 nonzero differences between
 * back-to-back reads, the mean of those near their 10th percentile. A virtual machine's TSC may
 * advance in steps of ~26 ticks (10 ns) with a rare step of 1 where its
 * scaling rounds, so the smallest difference would mislead; where a read
 * costs more than a tick (a TSC on bare metal), the step is that cost, the
 * finest duration two reads can measure. 0 if the clock never moved.
 */
uint64_t rec__clock_step(bool use_tsc)
{
	enum { NR_STEPS = 1024 };
	uint64_t d[NR_STEPS], prev = rec__clock_now(use_tsc), p10, sum = 0, nr = 0;
	size_t n = 0;

	for (int i = 0; i < 16 * NR_STEPS && n < NR_STEPS; i++) {
		uint64_t t = rec__clock_now(use_tsc);

		if (t > prev)
			d[n++] = t - prev;
		prev = t;
	}
	if (!n)
		return 0;
	qsort(d, n, sizeof(d[0]), cmp_u64);
	/* The 10th percentile finds the step; the mean of the differences
	 * near it gives its size between the 25s and 26s of a scaled TSC. */
	p10 = d[n / 10];
	for (size_t i = 0; i < n; i++)
		if (2 * d[i] >= p10 && 2 * d[i] <= 3 * p10) {
			sum += d[i];
			nr++;
		}
	return (sum + nr / 2) / nr;
}
