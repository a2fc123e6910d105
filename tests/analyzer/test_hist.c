/* SPDX-License-Identifier: MIT */
/*
 * test_hist.c - the log-linear histogram of analyzer/common/hist.h, called
 * directly: bucket bounds are half-open, contiguous and cover every 64-bit
 * value, each value lands in the bucket whose bounds hold it, buckets are
 * narrow enough for 1 % (tracetool(1), DESCRIPTION), and percentiles are within 1 % of an
 * exact sort.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "common/hist.h"

TestSuite(hist, .timeout = 60);

Test(hist, buckets_are_contiguous_half_open_and_cover_all_values)
{
	cr_assert_eq(tt_hist_bucket_lo(0), 0);
	cr_assert_eq(tt_hist_bucket_max(TT_HIST_NR_BUCKETS - 1), UINT64_MAX);
	for (uint32_t i = 0; i + 1 < TT_HIST_NR_BUCKETS; i++) {
		uint64_t lo = tt_hist_bucket_lo(i), hi = tt_hist_bucket_lo(i + 1);

		cr_assert_lt(lo, hi, "bucket %u is empty", i);
		/* [lo, hi): the last value of bucket i is one below the next's lo. */
		cr_assert_eq(tt_hist_bucket_max(i), hi - 1, "bucket %u", i);
		cr_assert_eq(tt_hist_index(lo), i, "lo of bucket %u", i);
		cr_assert_eq(tt_hist_index(hi - 1), i, "max of bucket %u", i);
		cr_assert_eq(tt_hist_index(hi), i + 1, "hi of bucket %u", i);
	}
	cr_assert_eq(tt_hist_index(UINT64_MAX), TT_HIST_NR_BUCKETS - 1);
}

Test(hist, values_below_256_are_exact_and_wider_buckets_are_under_one_percent)
{
	for (uint64_t v = 0; v < 256; v++) {
		cr_assert_eq(tt_hist_index(v), v);
		cr_assert_eq(tt_hist_bucket_lo((uint32_t)v), v);
		cr_assert_eq(tt_hist_bucket_max((uint32_t)v), v);
	}
	for (uint32_t i = 256; i + 1 < TT_HIST_NR_BUCKETS; i++) {
		uint64_t lo = tt_hist_bucket_lo(i), max = tt_hist_bucket_max(i);

		/* Reading the midpoint is off by at most half a width: < 0.4 %. */
		cr_assert_leq((max - lo + 1) * 128, lo, "bucket %u [%lu, %lu]", i, lo, max);
	}
}

Test(hist, random_values_land_in_the_bucket_that_holds_them)
{
	uint64_t s = 0x243f6a8885a308d3ull;

	for (int i = 0; i < 1000000; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		uint64_t v = s >> (s & 63);
		uint32_t idx = tt_hist_index(v);

		cr_assert_lt(idx, TT_HIST_NR_BUCKETS);
		cr_assert_leq(tt_hist_bucket_lo(idx), v);
		cr_assert_geq(tt_hist_bucket_max(idx), v);
	}
}

Test(hist, empty_histogram_has_zero_percentiles)
{
	struct tt_hist *h = calloc(1, sizeof(*h));

	cr_assert_eq(tt_hist_percentile(h, 0, 0.5, 0, 0), 0);
	cr_assert_eq(tt_hist_percentile(NULL, 0, 0.99, 0, 0), 0);
	free(h);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Durations of several shapes: uniform small, log-uniform, two clusters. */
static uint64_t sample(int shape, uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	switch (shape) {
	case 0: return 1 + (*s >> 33) % 300;
	case 1: return 1 + ((*s >> 20) & ((1ull << ((*s >> 58) % 40 + 4)) - 1)); /* up to 2^43 */
	default: return (*s >> 63) ? 1000000 + (*s >> 40) % 1000 : 50 + (*s >> 40) % 10;
	}
}

Test(hist, percentiles_are_within_one_percent_of_an_exact_sort)
{
	enum { NR = 200000 };
	static const double qs[] = { 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0 };
	uint64_t *v = malloc(NR * sizeof(*v));
	struct tt_hist *h = calloc(1, sizeof(*h));

	for (int shape = 0; shape < 3; shape++) {
		uint64_t s = 99 + (uint64_t)shape, min = UINT64_MAX, max = 0;

		tt_hist_free_chunks(h);
		for (int i = 0; i < NR; i++) {
			v[i] = sample(shape, &s);
			tt_hist_add(h, tt_hist_index(v[i]), 1);
			min = v[i] < min ? v[i] : min;
			max = v[i] > max ? v[i] : max;
		}
		qsort(v, NR, sizeof(*v), cmp_u64);
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			size_t rank = (size_t)ceil(qs[k] * NR);
			uint64_t exact = v[(rank ? rank : 1) - 1];
			uint64_t got = tt_hist_percentile(h, NR, qs[k], min, max);
			double err = fabs((double)got - (double)exact) / (double)exact;

			cr_assert_leq(err, 0.01, "shape %d q %.3f: got %lu, exact %lu", shape, qs[k],
				      got, exact);
		}
	}
	free(v);
	tt_hist_free_chunks(h);
	free(h);
}

/* Memory follows the values: a table of chunk pointers, and 1 KiB per
 * power of two that holds a value; merging and counting see every value. */
Test(hist, chunks_are_allocated_only_where_values_land)
{
	const size_t table = sizeof(struct tt_hist) + TT_HIST_NR_CHUNKS * sizeof(void *);
	struct tt_hist a = { 0 }, b = { 0 }, c = { 0 };
	uint64_t total = 0;

	/* The first 8 values take no memory beyond the struct. */
	for (int i = 0; i < 8; i++)
		tt_hist_add(&c, tt_hist_index(1100 + 100 * (uint64_t)i), 1);
	cr_assert_eq(tt_hist_bytes(&c), sizeof(struct tt_hist));
	cr_assert_eq(tt_hist_count(&c, tt_hist_index(1700)), 1);
	tt_hist_add(&c, tt_hist_index(1100), 1); /* the 9th spills into one chunk */
	cr_assert_eq(tt_hist_bytes(&c), table + 1024);
	cr_assert_eq(tt_hist_count(&c, tt_hist_index(1100)), 2);
	tt_hist_free_chunks(&c);
	tt_hist_add(&a, tt_hist_index(5), 1);
	tt_hist_add(&a, tt_hist_index(100000), 2);
	tt_hist_add(&a, tt_hist_index(100001), 1);
	cr_assert_eq(tt_hist_bytes(&a), table + 2 * 1024);
	tt_hist_add(&b, tt_hist_index(1ull << 40), 4);
	tt_hist_merge(&b, &a);
	cr_assert_eq(tt_hist_bytes(&b), table + 3 * 1024);
	for (uint32_t i = 0; i < TT_HIST_NR_BUCKETS; i++)
		total += tt_hist_count(&b, i);
	cr_assert_eq(total, 8);
	cr_assert_eq(tt_hist_count(&b, tt_hist_index(5)), 1);
	/* Rank 4 of 8 is 100001: read at its bucket's midpoint. */
	cr_assert_eq(tt_hist_percentile(&b, 8, 0.5, 5, 1ull << 40),
		     tt_hist_bucket_lo(tt_hist_index(100001)) +
			     (tt_hist_bucket_max(tt_hist_index(100001)) -
			      tt_hist_bucket_lo(tt_hist_index(100001))) / 2);
	cr_assert_eq(tt_hist_count(NULL, 3), 0);
	tt_hist_free_chunks(&a);
	tt_hist_free_chunks(&b);
}
