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

/*
 * How deep a thread's stack is stored (scopes.c and acts.c alike): enters
 * beyond are errors, and while any is pending the next exit is taken as its
 * exit. At most TT_MAX_DEPTH, and at most TT_DEPTH_BUDGET shared by the
 * threads known when the stack grows (but never below TT_MIN_DEPTH_LIMIT),
 * so that a small file of many threads each left deep cannot take
 * gigabytes. It depends only on what precedes in the file, so every
 * replica of a parallel walk decides alike (docs/ANALYZER.md, Limits).
 */
#define TT_MAX_DEPTH (1u << 20)
#define TT_DEPTH_BUDGET (1u << 21)
#define TT_MIN_DEPTH_LIMIT (1u << 16)

static inline uint32_t tt_depth_limit(uint32_t nr_threads)
{
	uint32_t share = TT_DEPTH_BUDGET / (nr_threads ? nr_threads : 1);

	return share > TT_MAX_DEPTH ? TT_MAX_DEPTH
	       : share < TT_MIN_DEPTH_LIMIT ? TT_MIN_DEPTH_LIMIT : share;
}

/* Called for every timed activation inside the window (chrome). */
typedef void (*tt_close_fn)(void *ctx, const struct tt_thread *th, uint32_t name,
			    uint64_t enter_ticks, uint64_t dur_ticks);

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

	struct tt_stat_table global; /* when !by_thread */
	uint64_t nr_unmatched;	     /* all errors, for reports */
	/* Where the pairing loop records what it does not count. One walker
	 * thread owns a struct tt_scopes: no sharing. */
	struct tt_stat sink;
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
