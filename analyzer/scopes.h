/* SPDX-License-Identifier: MIT */
/*
 * scopes.h - pairs each thread's enter and exit events into activations
 * (FORMAT.md §3.6) and records them into per-name statistics (stats.h):
 * inclusive time counted once per recursion, self time, and the activations
 * that could not be timed (errors). Per-thread stacks are flat arrays that
 * persist across EVENTS blocks and frames. It is the EVENTS block consumer
 * (tt_block_fn) for summary, histogram and chrome; it prints nothing.
 *
 * Matching rules (docs/ANALYZER.md): an exit closes the innermost open enter
 * of the same name; enters above that one are unmatched (errors); an exit
 * with no open enter of its name is an error; an exit earlier than its enter
 * (the clock went backwards) is an error; enters still open when the file
 * ends are errors. Errors are not calls and are in no time.
 */
#ifndef TT_SCOPES_H
#define TT_SCOPES_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "stats.h"

/* Called for every timed activation inside the window (chrome). */
typedef void (*tt_close_fn)(void *ctx, const struct tt_thread *th, uint32_t name,
			    uint64_t enter_ticks, uint64_t dur_ticks);

/*
 * The engine's view API: one timed activation as the pairing loop closes
 * it. Every view (tree, flame; docs/ANALYZER.md, "The pairing engine") is
 * a consumer of these, with state of its own per thread of the trace.
 */
struct tt_activation {
	const struct tt_thread *th;
	uint32_t name;
	uint32_t depth;	      /* frames open below it on its thread (0: a root) */
	uint64_t enter_ticks, exit_ticks;
	uint64_t self_ticks;  /* duration minus its timed children's */
	bool outermost;	      /* not nested in another activation of its name */
	uint32_t slot;	      /* what the consumer's enter() returned for its frame */
};

/* Why a stored frame was closed without a time (errors, scopes.h). */
enum tt_frame_error {
	TT_FRAME_LEFT,	     /* an exit of an enclosing scope came first: the scope
			      * was left without an exit (longjmp) */
	TT_FRAME_BACKWARDS,  /* its exit is earlier than its enter */
	TT_FRAME_TOO_LONG,   /* longer than --max-duration */
	TT_FRAME_OPEN_AT_END /* still open when the file ended */
};

/*
 * A consumer of activations. thread_begin() is called once per thread of
 * the walk before its first event, on the walker that owns the thread, and
 * returns the consumer's state for it (tctx). enter() is called for every
 * stored enter, in the window or not, with the slot of the enclosing frame
 * (0 below the outermost one), and returns the new frame's slot (a call
 * tree's node id, so that a path costs O(1) per activation). act() gets
 * each timed activation inside the window; error() each stored frame
 * closed without a time (ticks: of the event that closed it, or the last
 * tick of the file for TT_FRAME_OPEN_AT_END), both innermost first, so a
 * consumer may keep a stack of its own. A consumer's ctx is per walker
 * replica (report.h), so none of these needs a lock; one_walker asks for a
 * walk by one replica (an output in the order of the events), needs_meta
 * for the metadata pass first (report.h).
 */
struct tt_consumer {
	void *(*thread_begin)(void *ctx, const struct tt_thread *th);
	uint32_t (*enter)(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			  bool in_window);
	void (*act)(void *tctx, const struct tt_activation *a);
	void (*error)(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
		      uint64_t ticks, enum tt_frame_error why); /* NULL: ignored */
	bool one_walker;
	bool needs_meta; /* the final clock and thread names before the walk */
	bool no_times;	 /* the engine's per-name times and histograms are not
			  * needed (errors are still counted) */
};

struct tt_scopes {
	struct tt_trace *tr;
	bool by_thread;		/* one stat table per thread */
	uint64_t win_lo_ticks;	/* an activation is in when enter - lo < span */
	uint64_t win_span_ticks;
	uint64_t max_dur_ticks; /* --max-duration; UINT64_MAX: none */
	/* Decides once per thread whether its events are analysed (NULL: all). */
	bool (*thread_filter)(void *ctx, const struct tt_thread *th);
	void *filter_ctx;
	tt_close_fn on_close;
	void *close_ctx;
	const struct tt_consumer *cons; /* NULL: none */
	void *cons_ctx;

	struct tt_stat_table global; /* when !by_thread */
	uint64_t nr_unmatched;	     /* all errors, for reports */
	uint64_t nr_abandoned;	     /* of which left without an exit (longjmp) */
};

void tt_scopes_init(struct tt_scopes *sc, struct tt_trace *tr);
/* The tt_block_fn to pass to tt_trace_walk() with sc as ctx. */
int tt_scopes_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		    struct recfmt_events_iter *it);
/* Counts the enters still open at the end of the file as errors. */
void tt_scopes_finish(struct tt_scopes *sc);
/* The stat table of a thread (its own with by_thread, else the global one);
 * NULL if the thread was filtered out or had no events. */
struct tt_stat_table *tt_scopes_table(const struct tt_thread *th);
void tt_scopes_fini(struct tt_scopes *sc);

#endif /* TT_SCOPES_H */
