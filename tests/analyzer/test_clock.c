/* SPDX-License-Identifier: MIT */
/*
 * test_clock.c - analyzer/engine/events.c's tick <-> nanosecond conversions
 * (FORMAT.md §3.3): tt_clock_abs_ticks() is the exact inverse of
 * tt_clock_ns() for --from/--to, and stays fast for any ratio a damaged
 * file can produce (fuzz/regression/window_*_absurd_clock_*).
 */
#include <criterion/criterion.h>

#include "engine/events.h"

/* The smallest t with tt_clock_ns(t) >= ns, by brute force. */
static uint64_t smallest_ticks(const struct tt_clock *c, uint64_t ns)
{
	uint64_t t = 0;

	while (tt_clock_ns(c, t) < ns)
		t++;
	return t;
}

Test(clock, abs_ticks_is_the_smallest_tick_count_reaching_the_time, .timeout = 10)
{
	static const struct tt_clock clocks[] = {
		{ 1, 1, 0 }, { 2, 5, 100 }, { 5, 2, 7 }, { 1000, 2600, 1 }, { 3, 3000, 0 },
	};

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		for (uint64_t ns = 0; ns < 300; ns++)
			cr_expect_eq(tt_clock_abs_ticks(&clocks[i], ns),
				     clocks[i].start_ticks + smallest_ticks(&clocks[i], ns),
				     "clock %zu, %llu ns", i, (unsigned long long)ns);
}

/* A damaged header or SYNC pair can claim 10^12 ticks per ns; stepping one
 * tick at a time from an estimate took hours on such a file. */
Test(clock, abs_ticks_with_an_absurd_ratio_is_exact_and_returns, .timeout = 10)
{
	const struct tt_clock many = { 1, 1000000000000ull, 0 };
	const struct tt_clock few = { 1000000000000ull, 1, 5 };
	const struct tt_clock late = { 1, 1, UINT64_MAX - 10 };

	/* round(t / 1e12) >= 5  <=>  t >= 4.5e12 */
	cr_expect_eq(tt_clock_abs_ticks(&many, 5), 4500000000000ull);
	cr_expect_eq(tt_clock_abs_ticks(&many, 0), 0);
	cr_expect_eq(tt_clock_abs_ticks(&few, 3000000000000ull), 5 + 3);
	cr_expect_eq(tt_clock_abs_ticks(&late, 4), UINT64_MAX - 6);
	cr_expect_eq(tt_clock_abs_ticks(&late, 11), UINT64_MAX, "past the last tick");
}

/*
 * runs.h's tt_run_ns_of() (export, perfetto): tt_clock_ns() without the
 * 128-bit division, so exactly equal to it, for TSC-like ratios, awkward
 * ones, exact halves (rounding), values past its fast range, and exact
 * quotients (ticks * num + den / 2 a multiple of den: the fixed-point
 * fraction is then just below one, where it defers to the division; the
 * first 5000 ticks of the small ratios hold many).
 */
#include "engine/runs.h"

Test(clock, run_ns_of_is_exactly_tt_clock_ns, .timeout = 30)
{
	static const struct tt_clock clocks[] = {
		{ 1000000000ull, 2600000001ull, 0 }, { 999999937ull, 3000000019ull, 0 },
		{ 1, 2, 0 }, { 5, 2, 0 }, { 123456789ull, 1000000007ull, 0 },
		{ 7, 3, 0 }, { 1000000000ull, 1, 0 },
	};
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		struct tt_run r = { .clock = clocks[i] };

		tt_run_set_ratio(&r);
		for (uint64_t t = 0; t < 5000; t++)
			cr_assert_eq(tt_run_ns_of(&r, t), tt_clock_ns(&r.clock, t), "clock %zu t %lu",
				     i, (unsigned long)t);
		for (int k = 0; k < 200000; k++) {
			uint64_t t;

			x ^= x << 13; /* xorshift64 */
			x ^= x >> 7;
			x ^= x << 17;
			t = x >> (k % 64); /* every magnitude, up to damaged ones */
			cr_assert_eq(tt_run_ns_of(&r, t), tt_clock_ns(&r.clock, t),
				     "clock %zu t %lu", i, (unsigned long)t);
		}
	}
}

/*
 * events.h's tt_clock_fx_rel_ns() (chrome): tt_clock_rel_ns() in fixed
 * point, so exactly equal to it, for the same ratios, start ticks and
 * times before the start (negative), as above.
 */
Test(clock, clock_fx_rel_ns_is_exactly_tt_clock_rel_ns, .timeout = 30)
{
	static const struct tt_clock clocks[] = {
		{ 1000000000ull, 2600000001ull, 1000 }, { 999999937ull, 3000000019ull, 1ull << 40 },
		{ 1, 2, 0 }, { 5, 2, 77 }, { 123456789ull, 1000000007ull, 5 },
		{ 7, 3, 0 }, { 1000000000ull, 1, 3 }, { 1, 1, 10 },
	};
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		const struct tt_clock *c = &clocks[i];
		struct tt_clock_fx f;

		tt_clock_fx_init(&f, c);
		for (uint64_t t = 0; t < 5000; t++)
			cr_assert_eq(tt_clock_fx_rel_ns(&f, c->start_ticks + t),
				     tt_clock_rel_ns(c, c->start_ticks + t), "clock %zu t %lu", i,
				     (unsigned long)t);
		for (int k = 0; k < 200000; k++) {
			uint64_t t;

			x ^= x << 13; /* xorshift64 */
			x ^= x >> 7;
			x ^= x << 17;
			t = x >> (k % 64); /* every magnitude, below the start too */
			cr_assert_eq(tt_clock_fx_rel_ns(&f, t), tt_clock_rel_ns(c, t),
				     "clock %zu t %lu", i, (unsigned long)t);
		}
	}
}

/* The rounded quotient as the format defines it (FORMAT.md §3.3), with the 128-bit division. */
static uint64_t reference_ns(const struct tt_clock *c, uint64_t ticks)
{
	unsigned __int128 v = ((unsigned __int128)ticks * c->num + c->den / 2) / c->den;

	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/*
 * tt_clock_ns() estimates in floating point and corrects with 128-bit
 * products (chrome converts twice an activation): exactly the division's
 * result for TSC-like, awkward and exact-half ratios, every magnitude up to
 * a damaged file's, and the ratio changing between calls (its cache).
 */
Test(clock, clock_ns_is_exactly_the_rounded_128_bit_quotient, .timeout = 30)
{
	static const struct tt_clock clocks[] = {
		{ 1000000000ull, 2445000000ull, 0 }, { 999999937ull, 3000000019ull, 0 },
		{ 1, 2, 0 }, { 5, 2, 0 }, { 123456789ull, 1000000007ull, 0 }, { 7, 3, 0 },
		{ 1000000000ull, 1, 0 }, { 1, 1000000000000ull, 0 }, { 1ull << 51, 3, 0 },
	};
	uint64_t x = 88172645463325252ull;

	for (int k = 0; k < 400000; k++) {
		const struct tt_clock *c = &clocks[k % (sizeof(clocks) / sizeof(clocks[0]))];
		uint64_t t;

		x ^= x << 13; /* xorshift64 */
		x ^= x >> 7;
		x ^= x << 17;
		t = k < 50000 ? (uint64_t)k / 9 : x >> (k % 64);
		cr_assert_eq(tt_clock_ns(c, t), reference_ns(c, t), "num %lu den %lu t %lu",
			     (unsigned long)c->num, (unsigned long)c->den, (unsigned long)t);
	}
}
