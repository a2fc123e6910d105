/* SPDX-License-Identifier: MIT */
/*
 * hist.c - reading the log-linear histogram of hist.h: bucket bounds and
 * percentiles. Recording is the inline tt_hist_index() in hist.h.
 */
#include "hist.h"

#include <math.h>

uint64_t tt_hist_bucket_lo(uint32_t idx)
{
	uint32_t shift, m;

	if (idx < (2u << TT_HIST_SUB_BITS))
		return idx;
	shift = (idx >> TT_HIST_SUB_BITS) - 1;
	m = idx - (shift << TT_HIST_SUB_BITS);
	return (uint64_t)m << shift;
}

uint64_t tt_hist_bucket_max(uint32_t idx)
{
	if (idx + 1 >= TT_HIST_NR_BUCKETS)
		return UINT64_MAX;
	return tt_hist_bucket_lo(idx + 1) - 1;
}

uint64_t tt_hist_percentile(const uint64_t *counts, uint64_t n, double q, uint64_t min,
			    uint64_t max)
{
	uint64_t rank, seen = 0, v;
	double r;

	if (!n || !counts)
		return 0;
	r = ceil(q * (double)n);
	rank = r < 1 ? 1 : r > (double)n ? n : (uint64_t)r;
	for (uint32_t i = 0; i < TT_HIST_NR_BUCKETS; i++) {
		seen += counts[i];
		if (seen >= rank) {
			uint64_t lo = tt_hist_bucket_lo(i), hi = tt_hist_bucket_max(i);

			v = lo + (hi - lo) / 2;
			if (v < min)
				v = min;
			if (v > max)
				v = max;
			return v;
		}
	}
	return max;
}
