/* SPDX-License-Identifier: MIT */
/*
 * hist.h - log-linear histogram of durations in ticks (HdrHistogram's
 * layout with 128 sub-buckets per power of two): recording is O(1) and
 * branch-light, memory is fixed (TT_HIST_NR_BUCKETS counters), values below
 * 256 are exact and every other bucket is narrower than 1/128 of its lower
 * bound, so a percentile read at a bucket's midpoint is within 0.4 % of the
 * true value. Used by summary (percentiles) and histogram (bars).
 */
#ifndef TT_HIST_H
#define TT_HIST_H

#include <stdint.h>

#define TT_HIST_SUB_BITS 7
#define TT_HIST_NR_BUCKETS ((64 - TT_HIST_SUB_BITS + 1) << TT_HIST_SUB_BITS)

/*
 * The bucket of v: values below 256 are their own bucket; above, the top
 * TT_HIST_SUB_BITS + 1 bits of v select one of 128 sub-buckets of its power
 * of two. Branch-free (v | 1 keeps clz defined, and a select clamps the
 * shift at 0), because scopes.c calls it for every event and small and large
 * durations alternate at random.
 */
static inline uint32_t tt_hist_index(uint64_t v)
{
	unsigned msb = 63u - (unsigned)__builtin_clzll(v | 1);
	unsigned shift = msb > TT_HIST_SUB_BITS ? msb - TT_HIST_SUB_BITS : 0;

	return (shift << TT_HIST_SUB_BITS) + (uint32_t)(v >> shift);
}

/* Lowest value of bucket idx; the bucket is [lo(idx), lo(idx + 1)). */
uint64_t tt_hist_bucket_lo(uint32_t idx);
/* Highest value of bucket idx (inclusive). */
uint64_t tt_hist_bucket_max(uint32_t idx);

/*
 * tt_hist_percentile() - nearest-rank percentile: the value of rank
 * ceil(q * n) in sorted order, read as its bucket's midpoint and clamped to
 * [min, max]. q in (0, 1]. Return: 0 for an empty histogram.
 */
uint64_t tt_hist_percentile(const uint64_t *counts, uint64_t n, double q, uint64_t min,
			    uint64_t max);

#endif /* TT_HIST_H */
