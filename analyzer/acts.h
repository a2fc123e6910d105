/* SPDX-License-Identifier: MIT */
/*
 * acts.h - a plain, one-event-at-a-time pairing of enters and exits that
 * hands every timed activation to a callback with its enter and exit
 * ticks, whether it is the outermost activation of its name on its thread,
 * and its counter deltas (FORMAT.md §3.13-§3.14). It is the EVENTS block
 * consumer of summary's counter columns (ctrs.c) and of summary --interval
 * (intervals.c). It follows exactly the matching rules of scopes.h,
 * --from/--to and --max-duration included, so that its activations are the
 * ones summary times; scopes.c stays the fast path for times alone.
 */
#ifndef TT_ACTS_H
#define TT_ACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"

/* Counters known to a walk: the union of the threads' COUNTER_SETs. */
#define TT_MAX_COUNTERS RECFMT_MAX_COUNTERS

struct tt_act {
	const struct tt_thread *th;
	uint32_t name;
	uint64_t enter_ticks, exit_ticks;
	bool outermost;	   /* not nested in another activation of its name */
	uint32_t ctr_mask; /* bit g: delta[g] is valid */
	const uint64_t *delta; /* exit value - enter value, by counter index */
};

typedef void (*tt_act_fn)(void *ctx, const struct tt_act *a);
/* An activation that could not be timed (scopes.h: errors). */
typedef void (*tt_act_error_fn)(void *ctx, const struct tt_thread *th, uint32_t name);

struct tt_acts {
	struct tt_trace *tr;
	uint64_t win_lo_ticks, win_span_ticks; /* as tt_scopes */
	uint64_t max_dur_ticks;		       /* UINT64_MAX: no limit */
	tt_act_fn on_act;
	tt_act_error_fn on_error;
	void *ctx;

	char *ctr_names[TT_MAX_COUNTERS]; /* counter index -> name */
	uint32_t nr_ctr;
	uint64_t nr_bad_counters; /* COUNTERS blocks ignored (damaged or unattached) */

	/* The EVENTS block waiting for the COUNTERS block that may follow it. */
	struct tt_thread *pend_th;
	uint64_t *pend_ticks;
	uint32_t *pend_codes;
	uint32_t pend_n, pend_cap;
	uint64_t pend_frame;
	bool pend_next; /* the last record seen was the pending block */
	uint64_t *vals;
	size_t vals_cap;
};

/* Installs itself as tr's record hook; pass tt_acts_block to tt_trace_walk. */
void tt_acts_init(struct tt_acts *a, struct tt_trace *tr);
int tt_acts_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		  struct recfmt_events_iter *it);
/* After the walk: pairs what is pending and counts open enters as errors. */
void tt_acts_finish(struct tt_acts *a);
void tt_acts_fini(struct tt_acts *a);

#endif /* TT_ACTS_H */
