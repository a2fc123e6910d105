/* SPDX-License-Identifier: MIT */
/*
 * clock.c - which clock the probes read, and clock-sync points that pair a
 * reading of the CPU's counter with CLOCK_MONOTONIC and CLOCK_REALTIME so
 * that the analyzer turns ticks into nanoseconds (FORMAT.md §3.3). The
 * counter ("tsc" in REC_CLOCK and in the file) is the TSC on x86, used
 * only where the CPU says it is invariant (constant rate, runs in every
 * C-state), and the generic timer's CNTVCT_EL0 on ARM64, which the
 * architecture makes constant-rate and always on. Either is used only once
 * rec__clock_fast_usable() saw it advance; elsewhere, CLOCK_MONOTONIC.
 * No loop here waits for a clock to advance without a bound on its
 * iterations (docs/DESIGN.md, "Clocks").
 */
#include "rec_internal.h"

#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static uint64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool rec__clock_tsc_is_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1u; /* "Invariant TSC" (Intel SDM, AMD APM: TscInvariant) */
#elif defined(__aarch64__)
	/* The system counter runs at a fixed rate in every power state (Arm
	 * ARM D12.1.1); a 0 frequency means firmware left it unset. */
	return rec__clock_fast_frequency() != 0;
#else
	return false;
#endif
}

/*
 * rec__clock_fast_frequency() - the counter's frequency as the hardware
 * states it, in Hz: CNTFRQ_EL0 on ARM64 (set by firmware; the writer
 * checks it against its calibration). 0 where there is no such register
 * (x86: the TSC's rate is calibrated).
 */
uint64_t rec__clock_fast_frequency(void)
{
#if defined(__aarch64__)
	uint64_t hz;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
	return hz & 0xffffffffu; /* bits 63:32 are RES0 */
#else
	return 0;
#endif
}

/*
 * rec__clock_fast_usable() - whether the counter that @read returns runs:
 * it must change within FAST_PROBE_READS reads and FAST_PROBE_NS of
 * CLOCK_MONOTONIC, whichever ends first, so that the check is bounded even
 * if neither clock moves. A counter that never changes (an emulator or a
 * hypervisor that returns a constant, an architecture without one) would
 * make every duration 0 and any wait for it endless. Return: true if it
 * ran; false with *why set to the reason, for the caller's one line.
 */
#define FAST_PROBE_READS 65536u
#if defined(__aarch64__)
#define FAST_NAME "CNTVCT_EL0"
#else
#define FAST_NAME "TSC"
#endif
#define FAST_PROBE_NS 2000000u

bool rec__clock_fast_usable(uint64_t (*read)(void), const char **why)
{
	uint64_t first, mono0;

#if !defined(REC__INLINE_PROBE)
	if (read == rec__clock_fast_read) {
		*why = "is not read on this architecture";
		return false;
	}
#endif
	first = read();
	mono0 = read_ns(CLOCK_MONOTONIC);
	for (uint32_t i = 1; i <= FAST_PROBE_READS; i++) {
		if (read() != first)
			return true;
		if (i % 256 == 0 && read_ns(CLOCK_MONOTONIC) - mono0 >= FAST_PROBE_NS)
			break;
	}
	*why = "does not advance";
	return false;
}

/* The counter as a function, for rec__clock_fast_usable(). */
uint64_t rec__clock_fast_read(void)
{
	return rec__rdtsc();
}

/*
 * rec__clock_choose() - REC_CLOCK resolved (enum rec_clock @clock): true to
 * stamp with the counter that @read returns (rec__clock_fast_read() but in
 * tests). The default takes it where it is invariant; "tsc" wherever it
 * exists. Either way it must run (rec__clock_fast_usable()), or librec
 * records with CLOCK_MONOTONIC and says so in one line, once per process.
 */
bool rec__clock_choose(int clock, uint64_t (*read)(void))
{
	static bool said;
	const char *why = NULL;
	bool want = clock == REC_CLOCK_DEFAULT ? rec__clock_tsc_is_invariant() : clock == REC_CLOCK_TSC;

	if (!want || rec__clock_fast_usable(read, &why))
		return want;
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		rec__log("the CPU's counter (%s) %s; recording with CLOCK_MONOTONIC", FAST_NAME, why);
	return false;
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

/*
 * rec__clock_rate() - the counter's ticks per second between two sync
 * points, for the file header (FORMAT.md §3.2: never 0). Where the
 * hardware states the frequency (CNTFRQ_EL0) and the measured rate agrees
 * with it to 1 %, the stated one, which is exact; otherwise (x86, or a
 * firmware that set CNTFRQ_EL0 wrong) the measured one. A CLOCK_MONOTONIC
 * that did not move between the two gives the stated rate, else 1 GHz:
 * never a division by 0.
 */
uint64_t rec__clock_rate(const struct recfmt_sync *from, const struct recfmt_sync *to)
{
	uint64_t hz = rec__clock_fast_frequency(), dns = to->mono_ns - from->mono_ns, rate;

	if (to->mono_ns <= from->mono_ns)
		return hz ? hz : 1000000000u;
	rate = (uint64_t)((unsigned __int128)(to->ticks - from->ticks) * 1000000000u / dns);
	if (hz && rate >= hz - hz / 100 && rate <= hz + hz / 100)
		return hz;
	return rate ? rate : 1;
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
