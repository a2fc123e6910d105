/* SPDX-License-Identifier: MIT */
/*
 * stats.h - exact per-name aggregates in ticks (calls, inclusive and self
 * totals, min, max, errors) plus the name's histogram. A table is indexed by
 * the name index of events.h; summary keeps one for all threads, or one per
 * thread with --by-thread. Conversion to nanoseconds happens once, at the
 * end, with the file's final clock (FORMAT.md §3.3).
 */
#ifndef TT_STATS_H
#define TT_STATS_H

#include <stdint.h>

#include "common/hist.h"

struct tt_stat {
	uint64_t calls;	      /* timed activations */
	uint64_t total_ticks; /* inclusive, outermost activations of the name only */
	uint64_t self_ticks;
	uint64_t sum_ticks;   /* of every activation's duration: the mean's numerator */
	uint64_t min_ticks, max_ticks;
	/* hist->chunk once the histogram has its chunk table (which then stays
	 * until tt_stats_hist_free()), else NULL: the pairing loop's counter
	 * is one dependent load from the row (scopes.c, record()). */
	uint64_t **hist_chunks;
	struct tt_hist *hist; /* hist.h, sparse; allocated on first use */
	uint64_t errors;      /* activations that could not be timed */
	uint64_t left;	      /* of which left without an exit (longjmp) */
};

struct tt_stat_table {
	struct tt_stat *v;
	uint32_t n; /* entries valid (zeroed when added) */
};

void tt_stats_reserve(struct tt_stat_table *tab, uint32_t n);
void tt_stats_fini(struct tt_stat_table *tab);
struct tt_hist *tt_stats_hist_alloc(struct tt_stat *s);
/* Frees s's histogram. */
void tt_stats_hist_free(struct tt_stat *s);
/* Adds src into dst (both in the same clock). */
void tt_stats_merge(struct tt_stat *dst, const struct tt_stat *src);
struct tt_clock; /* events.h */
/* Adds src, in ticks of clock c, into dst in nanoseconds (a tick of dst is
 * a ns): the several files of one report, each with its own clock. */
void tt_stats_merge_ns(struct tt_stat *dst, const struct tt_stat *src, const struct tt_clock *c);

#endif /* TT_STATS_H */
