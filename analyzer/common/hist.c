/* SPDX-License-Identifier: MIT */
/*
 * hist.c - reading the log-linear histogram of hist.h: bucket bounds and
 * percentiles. Recording is the inline tt_hist_index() in hist.h.
 */
#include "common/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

uint64_t *tt_hist_chunk_alloc(struct tt_hist *h, uint32_t c)
{
	if (!h->chunk) {
		uint32_t small[TT_HIST_SMALL], n = h->nr_small;

		/* Spill the small values into chunks. */
		memcpy(small, h->small, sizeof(small));
		h->chunk = tt_xcalloc(TT_HIST_NR_CHUNKS, sizeof(*h->chunk));
		h->nr_small = 0;
		for (uint32_t i = 0; i < n; i++)
			tt_hist_chunk_alloc(h, small[i] >> TT_HIST_SUB_BITS)
				[small[i] & (TT_HIST_CHUNK - 1)]++;
	}
	if (!h->chunk[c])
		h->chunk[c] = tt_xcalloc(TT_HIST_CHUNK, sizeof(uint64_t));
	return h->chunk[c];
}

void tt_hist_add_slow(struct tt_hist *h, uint32_t idx, uint64_t n)
{
	if (!h->chunk && n == 1 && h->nr_small < TT_HIST_SMALL) {
		h->small[h->nr_small++] = idx;
		return;
	}
	tt_hist_chunk_alloc(h, idx >> TT_HIST_SUB_BITS)[idx & (TT_HIST_CHUNK - 1)] += n;
}

uint64_t tt_hist_count(const struct tt_hist *h, uint32_t idx)
{
	uint64_t n = 0;

	if (!h)
		return 0;
	if (h->chunk)
		return h->chunk[idx >> TT_HIST_SUB_BITS]
			       ? h->chunk[idx >> TT_HIST_SUB_BITS][idx & (TT_HIST_CHUNK - 1)]
			       : 0;
	for (uint32_t i = 0; i < h->nr_small; i++)
		n += h->small[i] == idx;
	return n;
}

void tt_hist_merge(struct tt_hist *dst, const struct tt_hist *src)
{
	if (!src->chunk) {
		for (uint32_t i = 0; i < src->nr_small; i++)
			tt_hist_add(dst, src->small[i], 1);
		return;
	}
	for (uint32_t c = 0; c < TT_HIST_NR_CHUNKS; c++) {
		uint64_t *d;

		if (!src->chunk[c])
			continue;
		d = tt_hist_chunk_alloc(dst, c);
		for (uint32_t i = 0; i < TT_HIST_CHUNK; i++)
			d[i] += src->chunk[c][i];
	}
}

static uint64_t bucket_mid(uint32_t idx)
{
	uint64_t lo = tt_hist_bucket_lo(idx), hi = tt_hist_bucket_max(idx);

	return lo + (hi - lo) / 2;
}

void tt_hist_merge_mapped(struct tt_hist *dst, const struct tt_hist *src,
			  uint64_t (*map)(const void *ctx, uint64_t v), const void *ctx)
{
	if (!src->chunk) {
		for (uint32_t i = 0; i < src->nr_small; i++)
			tt_hist_add(dst, tt_hist_index(map(ctx, bucket_mid(src->small[i]))), 1);
		return;
	}
	for (uint32_t c = 0; c < TT_HIST_NR_CHUNKS; c++) {
		if (!src->chunk[c])
			continue;
		for (uint32_t i = 0; i < TT_HIST_CHUNK; i++) {
			uint32_t idx = (c << TT_HIST_SUB_BITS) | i;

			if (src->chunk[c][i])
				tt_hist_add(dst, tt_hist_index(map(ctx, bucket_mid(idx))),
					    src->chunk[c][i]);
		}
	}
}

void tt_hist_free_chunks(struct tt_hist *h)
{
	if (h->chunk)
		for (uint32_t c = 0; c < TT_HIST_NR_CHUNKS; c++)
			free(h->chunk[c]);
	free(h->chunk);
	h->chunk = NULL;
	h->nr_small = 0;
}

size_t tt_hist_bytes(const struct tt_hist *h)
{
	size_t n = sizeof(*h);

	if (!h->chunk)
		return n;
	n += TT_HIST_NR_CHUNKS * sizeof(*h->chunk);
	for (uint32_t c = 0; c < TT_HIST_NR_CHUNKS; c++)
		n += h->chunk[c] ? TT_HIST_CHUNK * sizeof(uint64_t) : 0;
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

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

uint64_t tt_hist_percentile(const struct tt_hist *h, uint64_t n, double q, uint64_t min,
			    uint64_t max)
{
	uint64_t rank, seen = 0, v;
	double r;

	if (!n || !h)
		return 0;
	r = ceil(q * (double)n);
	rank = r < 1 ? 1 : r > (double)n ? n : (uint64_t)r;
	if (!h->chunk) {
		/* The small values: the bucket of rank `rank` in sorted order. */
		uint32_t s[TT_HIST_SMALL];

		if (!h->nr_small)
			return max;
		memcpy(s, h->small, sizeof(s));
		qsort(s, h->nr_small, sizeof(*s), cmp_u32);
		if (rank > h->nr_small)
			rank = h->nr_small;
		{
			uint64_t lo = tt_hist_bucket_lo(s[rank - 1]);
			uint64_t hi = tt_hist_bucket_max(s[rank - 1]);

			v = lo + (hi - lo) / 2;
		}
		return v < min ? min : v > max ? max : v;
	}
	for (uint32_t i = 0; i < TT_HIST_NR_BUCKETS; i++) {
		if (!h->chunk[i >> TT_HIST_SUB_BITS]) {
			i |= TT_HIST_CHUNK - 1; /* skip the empty chunk */
			continue;
		}
		seen += h->chunk[i >> TT_HIST_SUB_BITS][i & (TT_HIST_CHUNK - 1)];
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
