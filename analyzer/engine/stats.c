/* SPDX-License-Identifier: MIT */
/*
 * stats.c - growing and merging the per-name aggregate tables of stats.h.
 * Recording happens inline in scopes.c's per-event loop.
 */
#include "engine/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/events.h"
#include "common/hist.h"
#include "common/xalloc.h"

void tt_stats_reserve(struct tt_stat_table *tab, uint32_t n)
{
	struct tt_stat *v;
	uint32_t cap = tab->n ? tab->n : 64;

	if (n <= tab->n)
		return;
	while (cap < n)
		cap *= 2;
	v = tt_xcalloc(cap, sizeof(*v));
	if (tab->n)
		memcpy(v, tab->v, tab->n * sizeof(*v));
	for (uint32_t i = tab->n; i < cap; i++)
		v[i].min_ticks = UINT64_MAX;
	free(tab->v);
	tab->v = v;
	tab->n = cap;
}

void tt_stats_fini(struct tt_stat_table *tab)
{
	for (uint32_t i = 0; i < tab->n; i++)
		tt_stats_hist_free(&tab->v[i]);
	free(tab->v);
	tab->v = NULL;
	tab->n = 0;
}

struct tt_hist *tt_stats_hist_alloc(struct tt_stat *s)
{
	if (!s->hist)
		s->hist = tt_xcalloc(1, sizeof(*s->hist));
	return s->hist;
}

void tt_stats_hist_free(struct tt_stat *s)
{
	if (s->hist) {
		tt_hist_free_chunks(s->hist);
		free(s->hist);
		s->hist = NULL;
		s->hist_chunks = NULL;
	}
}

void tt_stats_merge(struct tt_stat *dst, const struct tt_stat *src)
{
	dst->calls += src->calls;
	dst->total_ticks += src->total_ticks;
	dst->self_ticks += src->self_ticks;
	dst->sum_ticks += src->sum_ticks;
	dst->errors += src->errors;
	dst->left += src->left;
	if (src->min_ticks < dst->min_ticks)
		dst->min_ticks = src->min_ticks;
	if (src->max_ticks > dst->max_ticks)
		dst->max_ticks = src->max_ticks;
	if (src->hist)
		tt_hist_merge(tt_stats_hist_alloc(dst), src->hist);
}

static uint64_t map_ns(const void *ctx, uint64_t ticks)
{
	return tt_clock_ns(ctx, ticks);
}

void tt_stats_merge_ns(struct tt_stat *dst, const struct tt_stat *src, const struct tt_clock *c)
{
	dst->calls += src->calls;
	dst->total_ticks += tt_clock_ns(c, src->total_ticks);
	dst->self_ticks += tt_clock_ns(c, src->self_ticks);
	dst->sum_ticks += tt_clock_ns(c, src->sum_ticks);
	dst->errors += src->errors;
	dst->left += src->left;
	if (!src->calls)
		return;
	if (tt_clock_ns(c, src->min_ticks) < dst->min_ticks)
		dst->min_ticks = tt_clock_ns(c, src->min_ticks);
	if (tt_clock_ns(c, src->max_ticks) > dst->max_ticks)
		dst->max_ticks = tt_clock_ns(c, src->max_ticks);
	if (src->hist)
		tt_hist_merge_mapped(tt_stats_hist_alloc(dst), src->hist, map_ns, c);
}
