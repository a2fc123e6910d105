/* SPDX-License-Identifier: MIT */
/*
 * hist.h - log-linear histogram of durations in ticks (HdrHistogram's
 * layout with 128 sub-buckets per power of two): recording is O(1) and
 * branch-light, memory is sparse (the bucket numbers of the first 8 values;
 * beyond, a table of 58 chunk pointers and one chunk of 128 counters per
 * power of two that holds a value), values below
 * 256 are exact and every other bucket is narrower than 1/128 of its lower
 * bound, so a percentile read at a bucket's midpoint is within 0.4 % of the
 * true value. Used by summary (percentiles) and histogram (bars).
 */
#ifndef TT_HIST_H
#define TT_HIST_H

#include <stddef.h>
#include <stdint.h>

#define TT_HIST_SUB_BITS 7
#define TT_HIST_NR_BUCKETS ((64 - TT_HIST_SUB_BITS + 1) << TT_HIST_SUB_BITS)
/* Buckets come in chunks of 1 << TT_HIST_SUB_BITS: values 0-127, 128-255,
 * then one chunk per power of two (hist.h's index >> TT_HIST_SUB_BITS). */
#define TT_HIST_CHUNK (1u << TT_HIST_SUB_BITS)
#define TT_HIST_NR_CHUNKS (TT_HIST_NR_BUCKETS >> TT_HIST_SUB_BITS)

#define TT_HIST_SMALL 8

/* A histogram: the first TT_HIST_SMALL values' buckets in small[], then
 * chunks allocated when a value first lands in them (chunk != NULL). */
struct tt_hist {
	uint64_t **chunk; /* TT_HIST_NR_CHUNKS pointers; NULL while small */
	uint32_t nr_small;
	uint32_t small[TT_HIST_SMALL];
};

/*
 * The bucket of v: values below 256 are their own bucket; above, the top
 * TT_HIST_SUB_BITS + 1 bits of v select one of 128 sub-buckets of its power
 * of two. Branch-free and select-free, because scopes.c calls it for every
 * event and small and large durations alternate at random: the shift is
 * the position of v's top bit less TT_HIST_SUB_BITS, and or-ing in the low
 * TT_HIST_SUB_BITS + 1 bits makes it 0 below 256 (and clz defined).
 */
static inline uint32_t tt_hist_index(uint64_t v)
{
	const uint64_t low = (2ull << TT_HIST_SUB_BITS) - 1;
	unsigned shift = (63u - TT_HIST_SUB_BITS) - (unsigned)__builtin_clzll(v | low);

	return (shift << TT_HIST_SUB_BITS) + (uint32_t)(v >> shift);
}

/* Allocates chunk c of h (zeroed) and returns it; the slow part of
 * tt_hist_add(), which also takes the small values. */
uint64_t *tt_hist_chunk_alloc(struct tt_hist *h, uint32_t c);
void tt_hist_add_slow(struct tt_hist *h, uint32_t idx, uint64_t n);

/* Adds n to bucket idx. */
static inline void tt_hist_add(struct tt_hist *h, uint32_t idx, uint64_t n)
{
	uint64_t *c;

	if (__builtin_expect(!h->chunk || !(c = h->chunk[idx >> TT_HIST_SUB_BITS]), 0)) {
		tt_hist_add_slow(h, idx, n);
		return;
	}
	c[idx & (TT_HIST_CHUNK - 1)] += n;
}

/* The count of bucket idx (h may be NULL: 0). */
uint64_t tt_hist_count(const struct tt_hist *h, uint32_t idx);

/* Adds src's counts into dst. */
void tt_hist_merge(struct tt_hist *dst, const struct tt_hist *src);
/*
 * tt_hist_merge_mapped() - adds src's counts into dst with each bucket's
 * values mapped by map() (another clock: several files, report.c): a
 * bucket's count lands in the bucket of map(its midpoint), so the error
 * adds at most half a bucket (0.4 %) to the percentile's own.
 */
void tt_hist_merge_mapped(struct tt_hist *dst, const struct tt_hist *src,
			  uint64_t (*map)(const void *ctx, uint64_t v), const void *ctx);
/* Frees the chunks (not h itself) and empties h. */
void tt_hist_free_chunks(struct tt_hist *h);
/* Bytes held by h's chunks and table. */
size_t tt_hist_bytes(const struct tt_hist *h);

/* Lowest value of bucket idx; the bucket is [lo(idx), lo(idx + 1)). */
uint64_t tt_hist_bucket_lo(uint32_t idx);
/* Highest value of bucket idx (inclusive). */
uint64_t tt_hist_bucket_max(uint32_t idx);

/*
 * tt_hist_percentile() - nearest-rank percentile: the value of rank
 * ceil(q * n) in sorted order, read as its bucket's midpoint and clamped to
 * [min, max]. q in (0, 1]. Return: 0 for an empty histogram.
 */
uint64_t tt_hist_percentile(const struct tt_hist *h, uint64_t n, double q, uint64_t min,
			    uint64_t max);

#endif /* TT_HIST_H */
