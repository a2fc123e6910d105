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

#include "common/hmap.h"
#include "engine/events.h"
#include "engine/stats.h"

/*
 * How deep a thread's stack is stored (scopes.c, for every consumer): enters
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
	uint64_t dur_ticks;   /* exit - enter, less the probes' cost with
			       * tt_scopes.compensate */
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
 * An annotation (rec(3); FORMAT.md, the annotation records), as the
 * engine hands it to a consumer at its place in its thread's event stream:
 * after the events recorded before it, before those recorded after it. The
 * strings point into the record (valid during the call only).
 */
enum tt_annot_kind {
	TT_ANNOT_VALUE,	     /* name: the track; is_double says i or d */
	TT_ANNOT_INSTANT,    /* name: the instant */
	TT_ANNOT_MESSAGE,    /* name: the message's text (0 to 255 bytes) */
	TT_ANNOT_ARG,	     /* name: the key; i: the value */
	TT_ANNOT_FLOW_BEGIN, /* name: the flow; id */
	TT_ANNOT_FLOW_STEP,
	TT_ANNOT_FLOW_END,
};

struct tt_annot {
	enum tt_annot_kind kind;
	uint64_t ticks;
	const char *name;
	uint32_t name_bytes;
	uint32_t name_id; /* the file's ANNOT_NAME id of name (0: a message) */
	bool is_double;
	bool in_window; /* its ticks are inside the window */
	int64_t i;
	double d;
	uint64_t id;
};

/* Counters known to a walk: the union of the threads' COUNTER_SETs. */
#define TT_MAX_COUNTERS RECFMT_MAX_COUNTERS

/*
 * Called for every timed activation inside the window whose enter and exit
 * both carry counter values (FORMAT.md §3.13-§3.14; tt_consumer.counters,
 * summary's counter columns in views/ctrs.c): thread is the index in the
 * walk's tr->threads, bit g of mask says delta[g] (exit value - enter value
 * of counter g, by tt_scopes.ctr_names) is valid; a value that went down is
 * left out.
 */
typedef void (*tt_counters_fn)(void *ctx, uint32_t thread, uint32_t name, bool outermost,
			       uint32_t mask, const uint64_t *delta);

/*
 * summary --arg (tt_consumer.arg): called for every timed activation inside
 * the window that carries arguments, once per key (the last value set in the
 * activation: a key set twice keeps the later value); key is an index in
 * tt_scopes.arg_keys. thread: the index in the walk's tr->threads.
 */
typedef void (*tt_arg_fn)(void *ctx, uint32_t thread, uint32_t name, uint32_t key, int64_t value);

/*
 * A consumer of activations. thread_begin() is called once per thread of
 * the walk before its first event, on the walker that owns the thread, and
 * returns the consumer's state for it (tctx). enter() (NULL: slots are 0)
 * is called for every stored enter, in the window or not, with the slot of
 * the enclosing frame (0 below the outermost one), and returns the new
 * frame's slot (a call tree's node id, so that a path costs O(1) per
 * activation). act() gets each timed activation inside the window; error()
 * each stored frame closed without a time (ticks: of the event that closed
 * it, or the last tick of the file for TT_FRAME_OPEN_AT_END), both
 * innermost first, so a consumer may keep a stack of its own. A consumer's
 * ctx is per walker replica (front.h), so none of these needs a lock;
 * one_walker asks for a walk by one replica (an output in the order of the
 * events), needs_meta for the metadata pass first (front.h).
 *
 * counters() and arg() (summary's counter and --arg columns) are called
 * with the replica's ctx, not a thread's. A consumer with no act() sees no
 * activation and none of the per-thread callbacks is called: with only
 * counters() or arg() it leaves the pairing loop its fast paths.
 */
struct tt_consumer {
	void *(*thread_begin)(void *ctx, const struct tt_thread *th);
	uint32_t (*enter)(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			  bool in_window);
	void (*act)(void *tctx, const struct tt_activation *a);
	void (*error)(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
		      uint64_t ticks, enum tt_frame_error why); /* NULL: ignored */
	/* An annotation of the thread (NULL: ignored), with the slot and
	 * depth of the innermost open stored frame it binds to (depth 0: no
	 * frame is open, slot 0), the frame the next act() or error() of
	 * that depth closes. */
	void (*annot)(void *tctx, uint32_t slot, uint32_t depth, const struct tt_annot *a);
	/* A snapshot's exit whose enter is before the window (FORMAT.md §3.20):
	 * the scope was open at the window's start; NULL: ignored. */
	void (*open_at_start)(void *tctx, uint32_t name, uint64_t exit_ticks);
	/* Before the events of each EVENTS block of the thread are paired
	 * (NULL: not needed): first_enter numbers the block's first enter
	 * event in the run, counting the enters of every earlier block of the
	 * file, all threads (events.h, enters_before), the same on every
	 * replica; the block's enters are first_enter, first_enter + 1, ... in
	 * order, and an enter the engine does not store (beyond its depth
	 * limit) leaves its number unused. */
	void (*block)(void *tctx, uint64_t first_enter);
	/*
	 * For writers whose output must not depend on how many walkers wrote
	 * it (chrome, perfetto: out/lanes.h), with the replica's ctx and
	 * trace (NULL: not needed). thread_seen() is called on every replica
	 * the first time a thread's events are met, whether the replica pairs
	 * it or not, before thread_begin() on the one that does: in the order
	 * of the file, the same on every replica (events.h, on_thread_seen).
	 * progress() after each record of the file, with tr->pos past it.
	 */
	void (*thread_seen)(void *ctx, struct tt_trace *tr, struct tt_thread *th);
	void (*progress)(void *ctx, struct tt_trace *tr);
	/* The counter deltas of each timed activation inside the window
	 * that carries counters (NULL: not needed). */
	tt_counters_fn counters;
	/* The arguments of each activation under the keys of summary --arg
	 * (NULL, or no --arg: not needed). */
	tt_arg_fn arg;
	bool one_walker; /* else as many walkers as tt_walk_nr_walkers() says */
	bool eager_names; /* events.h: names alike on every replica */
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
	/*
	 * --compensate (docs/ANALYZER.md): with the file's PROBE_COST record
	 * (FORMAT.md §3.16), every timed activation's duration is less its own
	 * probes' inner cost and the whole cost of every activation recorded
	 * inside it; self times follow. The costs in 1/65536 tick, [0] of a
	 * TRACE_SCOPE, [1] of a function hook (tt_trace.name_hook), set from the
	 * record when the first block is paired (it is in frame 0).
	 * comp_applied: the costs were set (the file has the record).
	 */
	bool compensate;
	bool comp_checked; /* the first block came: comp_applied is decided */
	bool comp_applied;
	uint64_t comp_fx[2], comp_inner_fx[2];
	/* Decides once per thread whether its events are analysed (NULL: all). */
	bool (*thread_filter)(void *ctx, const struct tt_thread *th);
	void *filter_ctx;
	const struct tt_consumer *cons; /* NULL: none */
	void *cons_ctx;

	/*
	 * Counters: with on_counters set, tt_scopes_record() must be tr's
	 * record hook (events.h). A thread with a COUNTER_SET then has each
	 * EVENTS block decoded and kept pending until the next record shows
	 * whether a COUNTERS block for it follows (it must be the very next
	 * record of the same frame), and paired then, by event_slow(), with
	 * the values of each event. Threads without counters keep the fast
	 * loops. The counter indices are the same on every replica of a walk.
	 */
	tt_counters_fn on_counters;
	void *counters_ctx;
	char *ctr_names[TT_MAX_COUNTERS]; /* counter index -> name, first seen first */
	uint32_t nr_ctr;
	uint32_t pend_thread;	/* thread index + 1 of the pending block, 0: none */
	bool pend_next;		/* the last record seen was the pending block */
	uint64_t pend_frame;
	uint64_t *pend_ticks;
	uint32_t *pend_codes;	/* name << 1 | kind */
	uint32_t pend_n, pend_cap;
	uint64_t pend_first_enter; /* tt_consumer.block's, of the pending block */
	uint64_t *pend_vals;	/* the COUNTERS block's columns */
	size_t pend_vals_cap;
	/* The ANNOTS record positioned in the pending block (it follows the
	 * block's COUNTERS record, in the same frame: valid until flushed). */
	struct recfmt_record pend_annots;
	bool pend_has_annots;

	/* Annotations (tt_scopes_record() must be tr's record hook): to the
	 * consumer's annot(), and the arguments under the caller's keys
	 * arg_keys (summary --arg; others are not kept) of each activation to
	 * on_arg. */
	tt_arg_fn on_arg;
	void *arg_ctx;
	const char *const *arg_keys;
	uint32_t nr_arg_keys;
	/* Annotation names (ANNOT_NAME, FORMAT.md §3.17) by name kind << 28 |
	 * id, on every replica: pairs in a map (hmap.h, keyed: the file's ids). */
	uint32_t *an_keys;
	char **an_names;
	uint32_t nr_an, cap_an;
	struct tt_hmap an_map;
	uint64_t nr_bad_annots;	   /* ANNOTS records that did not decode */
	uint64_t nr_annots;	   /* annotations of the analysed threads */
	uint64_t nr_unbound;	   /* args and flow events with no open scope */

	struct tt_stat_table global; /* when !by_thread */
	uint64_t nr_unmatched;	     /* all errors, for reports */
	uint64_t nr_open_at_start;   /* a snapshot's exits whose enter is before its window */
	uint64_t nr_open_at_end;     /* a snapshot's enters whose exit is after its window */
	uint64_t nr_abandoned;	     /* of which left without an exit (longjmp) */
	/* Where the pairing loop records what it does not count. One walker
	 * thread owns a struct tt_scopes: no sharing. */
	struct tt_stat sink;
};

void tt_scopes_init(struct tt_scopes *sc, struct tt_trace *tr);
/* The tt_block_fn to pass to tt_trace_walk() with sc as ctx. */
int tt_scopes_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		    struct recfmt_events_iter *it);
/* The record hook that brings COUNTER_SET and COUNTERS records to the
 * engine (on_counters; ctx: the tt_scopes). */
void tt_scopes_record(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
		      uint64_t frame_index, uint64_t frame_offset);
/*
 * tt_scopes_annot() - one annotation of thread th, in its place in the
 * thread's stream (tt_scopes_record() calls it for the annotation records):
 * an argument binds to the innermost open stored frame (none: counted in
 * nr_unbound and dropped), the consumer's annot() gets it. Sets
 * a->in_window.
 */
void tt_scopes_annot(struct tt_scopes *sc, struct tt_thread *th, struct tt_annot *a);
/* Pairs a pending block, then counts the enters still open at the end of
 * the file as errors. */
void tt_scopes_finish(struct tt_scopes *sc);
/* The stat table of a thread (its own with by_thread, else the global one);
 * NULL if the thread was filtered out or had no events. */
struct tt_stat_table *tt_scopes_table(const struct tt_thread *th);
void tt_scopes_fini(struct tt_scopes *sc);

#endif /* TT_SCOPES_H */
