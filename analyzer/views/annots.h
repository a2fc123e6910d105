/* SPDX-License-Identifier: MIT */
/*
 * annots.h - the figures of `values` and `flows` (tracetool(1),
 * docs/ANALYZER.md "Annotations"): per value track, the samples, min, max,
 * time-weighted mean and last value; per flow name, the begin-to-end
 * latencies and the flows left unfinished. The annotations come from the
 * pairing engine (scopes.h, tt_consumer.annot) in one pass over each file,
 * on all walkers; each walker collects its share, merged by name after the
 * walk. Several TRACE files: each file's figures, merged by name.
 */
#ifndef TT_ANNOTS_H
#define TT_ANNOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/events.h"
#include "common/hist.h"
#include "engine/filter.h"

struct names;

struct tt_value_row {
	char *track;
	uint64_t samples;
	bool is_double;	     /* a sample was floating point: all print as doubles */
	int64_t min_i, max_i, last_i;
	double min_d, max_d, last_d;
	long double wsum;    /* value × ns it held */
	uint64_t wns;	     /* ns the samples held */
	long double sum;     /* plain sum, for a track whose samples held no time */
	int64_t last_wall_ns; /* the last sample, on the wall clock (several files) */
};

struct tt_flow_row {
	char *flow;
	uint64_t count;	     /* finished: begin and end seen */
	uint64_t unfinished; /* begun, never ended (at the end of the recording) */
	uint64_t orphan_ends; /* ended with no begin seen */
	uint64_t steps;	      /* steps of the finished and unfinished flows */
	uint64_t backwards;   /* end earlier than begin: not counted */
	uint64_t min_ns, max_ns, sum_ns;
	/* Latencies in ticks of hist_clock (one file: its clock, read as
	 * summary reads its histograms; several: ns, num = den = 1), with
	 * their min and max in the same unit: tt_flow_percentile(). */
	struct tt_hist hist;
	struct tt_clock hist_clock;
	uint64_t hist_min, hist_max;
};

struct tt_annots {
	struct tt_value_row *values;
	size_t nr_values, cap_values;
	struct tt_flow_row *flows;
	size_t nr_flows, cap_flows;
	uint64_t nr_unbound; /* args and flow events outside any scope */
	bool any_truncated, any_damaged;
	char problems[768];
	struct names *vnames, *fnames; /* row lookup by name (annots.c) */
};

/* Which figures a run collects. */
enum tt_annots_what { TT_ANNOTS_VALUES = 1, TT_ANNOTS_FLOWS = 2 };

/*
 * tt_annots_run() - read every TRACE of o once and build the rows (sorted
 * by name; --function selects track and flow names). Each file's warnings
 * are printed on stderr as it is read.
 * Return: TT_OK, or TT_ERR_FILE with "FILE: problem"-ready msg and the
 * failing file in *failed.
 */
enum tt_status tt_annots_run(struct tt_annots *a, const struct tt_options *o, unsigned what,
			     const char **failed, char *msg, size_t msg_bytes);
/* A flow row's latency percentile q in (0, 1], in ns (0 with no count). */
uint64_t tt_flow_percentile(const struct tt_flow_row *r, double q);
/* A track's time-weighted mean (docs/ANALYZER.md). */
double tt_value_mean(const struct tt_value_row *r);
void tt_annots_fini(struct tt_annots *a);

#endif /* TT_ANNOTS_H */
