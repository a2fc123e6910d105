/* SPDX-License-Identifier: MIT */
/*
 * ctrs.h - the counter figures of summary (docs/ANALYZER.md, "Counters"):
 * for each thread and scope name, per counter, the inclusive total (the
 * outermost activations' deltas, counted once per recursion like total_ns)
 * and the sum and number of activations that carry the counter (the
 * per-call mean's parts). They come from the pairing engine's counter
 * deltas and arguments (tt_consumer.counters and .arg, scopes.h) in
 * summary's own walk (tt_ctrs_spec()), on all walkers: each walker adds
 * into a table of its own; rows are looked up by the thread label and name
 * of report.c's rows.
 */
#ifndef TT_CTRS_H
#define TT_CTRS_H

#include "engine/events.h"
#include "engine/filter.h"
#include "engine/front.h"
#include "engine/report.h"

/* summary --arg KEY: at most this many keys (docs/ANALYZER.md, "Annotations"). */
#define TT_MAX_ARG_KEYS 16

struct tt_ctr_agg {
	uint64_t total[TT_MAX_COUNTERS]; /* outermost activations */
	uint64_t sum[TT_MAX_COUNTERS];	 /* every activation */
	uint64_t n[TT_MAX_COUNTERS];	 /* activations with the counter */
	/* --arg: per key (tt_options.arg_keys), the sum of the values the
	 * activations carry (each its last) and how many carry the key. */
	int64_t arg_sum[TT_MAX_ARG_KEYS];
	uint64_t arg_n[TT_MAX_ARG_KEYS];
};

/* One walker's figures. */
struct tt_ctrs_walker {
	struct tt_ctr_agg **agg; /* [thread index][name index of its replica] */
	uint32_t *nr_agg;	 /* names covered per thread */
	uint32_t cap_threads;
};

struct tt_ctrs_file;

struct tt_ctrs {
	struct tt_report *rep;
	struct tt_ctrs_walker w[TT_WALK_MAX_REPLICAS];
	/* Several files (docs/ANALYZER.md, "Several TRACE files"): each file's figures, with
	 * its report kept in the merged one (tt_walk_spec.keep_files); rep has
	 * the rows merged and the union of their counter names. */
	struct tt_ctrs_file *files;
	unsigned nr_files;
};

/*
 * tt_ctrs_spec() - the walk spec of summary's pass into rep (tt_walk()
 * with o), with the counter figures into c (whether or not the file has
 * counters) and the arguments under o->arg_keys (summary --arg).
 * tt_ctrs_fini() then tt_report_fini() in any case.
 */
void tt_ctrs_spec(struct tt_ctrs *c, struct tt_report *rep, const struct tt_options *o,
		  struct tt_walk_spec *spec);
/* Counters recorded in the file, in first-seen order. */
static inline uint32_t tt_ctrs_count(const struct tt_ctrs *c)
{
	return c->rep->sc.nr_ctr;
}
static inline const char *tt_ctrs_name(const struct tt_ctrs *c, uint32_t g)
{
	return c->rep->sc.ctr_names[g];
}
/* Index of a counter by name, or UINT32_MAX. */
uint32_t tt_ctrs_find(const struct tt_ctrs *c, const char *name);
/*
 * tt_ctrs_lookup() - a report row's figures: the process `process` (NULL:
 * every file), the thread labelled `label` (NULL: every thread --thread
 * selects) and the scope `name`.
 */
void tt_ctrs_lookup(const struct tt_ctrs *c, const struct tt_options *o, const char *process,
		    const char *label, const char *name, struct tt_ctr_agg *out);
void tt_ctrs_fini(struct tt_ctrs *c);

#endif /* TT_CTRS_H */
