/* SPDX-License-Identifier: MIT */
/*
 * test_fast_clock.c - the CPU's counter (clock.c, issue 32): librec stamps
 * with it only once it has seen it advance, in a bounded number of reads,
 * and otherwise records with CLOCK_MONOTONIC after one "rec:" line, never
 * spinning; the rate it writes never divides by a clock that did not move;
 * and a recording on this CPU (x86 TSC, ARM64 CNTVCT_EL0: the cross suite,
 * scripts/cross-arm64.sh) is stamped with its counter.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rec_internal.h"
#include "trace_read.h"

TestSuite(fast_clock, .timeout = 60);

static uint64_t nr_reads;

static uint64_t stuck(void)
{
	nr_reads++;
	return 42;
}

/* Starts moving at the 1000th read, as a counter that ticks slower than a read. */
static uint64_t late(void)
{
	return ++nr_reads < 1000 ? 7 : nr_reads;
}

#if defined(__aarch64__)
#define FAST_NAME "CNTVCT_EL0"
#else
#define FAST_NAME "TSC"
#endif

Test(fast_clock, a_counter_that_never_advances_is_refused_after_a_bounded_number_of_reads)
{
	const char *why = NULL;

	cr_assert(!rec__clock_fast_usable(stuck, &why));
	cr_assert_str_eq(why, "does not advance");
	/* 64 Ki reads at most, fewer if 2 ms of CLOCK_MONOTONIC passed first. */
	cr_assert(nr_reads >= 257 && nr_reads <= 65537, "%llu reads", (unsigned long long)nr_reads);
}

Test(fast_clock, a_counter_that_starts_moving_within_the_bound_is_accepted)
{
	const char *why = NULL;

	cr_assert(rec__clock_fast_usable(late, &why));
	cr_assert_eq(nr_reads, 1000);
	cr_assert_null(why);
}

Test(fast_clock, a_stuck_counter_asked_for_falls_back_to_monotonic_with_one_line)
{
	cr_redirect_stderr();
	cr_assert(!rec__clock_choose(REC_CLOCK_TSC, stuck));
	cr_assert(!rec__clock_choose(REC_CLOCK_TSC, stuck)); /* a restart: no second line */
	fflush(stderr);
	cr_assert_stderr_eq_str("rec: the CPU's counter (" FAST_NAME
				") does not advance; recording with CLOCK_MONOTONIC\n");
}

Test(fast_clock, monotonic_asked_for_never_reads_the_counter)
{
	cr_redirect_stderr();
	cr_assert(!rec__clock_choose(REC_CLOCK_MONOTONIC, stuck));
	cr_assert_eq(nr_reads, 0);
	fflush(stderr);
	cr_assert_stderr_eq_str("");
}

Test(fast_clock, the_counter_of_this_cpu_runs_where_librec_reads_one)
{
	const char *why = NULL;
	bool ok = rec__clock_fast_usable(rec__clock_fast_read, &why);

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
	cr_assert(ok, "the counter %s", why);
#else
	cr_assert(!ok);
	cr_assert_str_eq(why, "is not read on this architecture");
#endif
}

Test(fast_clock, the_stated_frequency_wins_when_the_calibration_agrees_to_one_percent)
{
	uint64_t hz = rec__clock_fast_frequency();
	struct recfmt_sync a = { .ticks = 1000, .mono_ns = 5000000000u, .real_ns = 0 };
	struct recfmt_sync b = a;

#if defined(__aarch64__)
	cr_assert_neq(hz, 0, "CNTFRQ_EL0 is 0");
#else
	cr_assert_eq(hz, 0);
#endif
	if (!hz)
		hz = 24000000u; /* what the measured rate must then come out as */
	/* 10 ms at 0.5 % above the stated rate. */
	b.mono_ns += 10000000u;
	b.ticks += hz / 100 + hz / 20000;
	cr_assert_eq(rec__clock_rate(&a, &b),
		     rec__clock_fast_frequency() ? hz : (hz / 100 + hz / 20000) * 100);
	/* 5 % off: the measurement, which readers refine with the SYNC records. */
	b.ticks = a.ticks + hz / 100 + hz / 2000;
	cr_assert_eq(rec__clock_rate(&a, &b), (hz / 100 + hz / 2000) * 100);
}

Test(fast_clock, a_monotonic_clock_that_did_not_move_gives_a_rate_and_no_division_by_zero)
{
	struct recfmt_sync a = { .ticks = 1000, .mono_ns = 77, .real_ns = 0 };
	struct recfmt_sync b = { .ticks = 5000, .mono_ns = 77, .real_ns = 0 };
	uint64_t hz = rec__clock_fast_frequency();

	cr_assert_eq(rec__clock_rate(&a, &b), hz ? hz : 1000000000u);
}

Test(fast_clock, a_recording_on_this_cpu_is_stamped_with_its_counter)
{
	char out[256];
	struct tr_trace tr;

	if (!rec__clock_choose(REC_CLOCK_DEFAULT, rec__clock_fast_read))
		cr_skip("no invariant counter on this machine: CLOCK_MONOTONIC");
	snprintf(out, sizeof(out), "/tmp/rec_test_%d_fastclock.zst", (int)getpid());
	setenv("REC_OUTPUT", out, 1);
	for (int i = 0; i < 1000; i++) {
		TRACE_SCOPE_NAMED("outer");
		TRACE_SCOPE_NAMED("inner");
	}
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(tr_load(out, &tr), 0);
	unlink(out);
	cr_assert(tr.clean);
	cr_assert_eq(tr.clock, 1); /* FORMAT.md §3.2: the CPU's counter */
	cr_assert_eq(tr_calls(&tr, "outer"), 1000);
	cr_assert_eq(tr_calls(&tr, "inner"), 1000);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr.threads[0].nr_backwards, 0);
#if defined(__aarch64__)
	/* A recording of more than 5 ms: the writer calibrated against CLOCK_MONOTONIC. */
	cr_assert_eq(tr.ticks_per_second, rec__clock_fast_frequency());
#endif
	tr_free(&tr);
}
