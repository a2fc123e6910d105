/* SPDX-License-Identifier: MIT */
/*
 * report.h - the pipeline behind summary and histogram: an optional
 * metadata pre-pass (final thread names and clock, needed by --thread and
 * --from/--to), the main pass through scopes.c, then one row per scope name
 * (or per thread label and name with --by-thread) in nanoseconds, filtered by
 * --function and sorted (tracetool(1), OPTIONS).
 */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include "engine/events.h"
#include "cmd/options.h"
#include "engine/scopes.h"
#include "engine/stats.h"

struct tt_row {
	const char *process; /* NAME[PID] with --by-process, else NULL */
	const char *thread; /* label with --by-thread, else NULL */
	const char *name;
	struct tt_stat st;   /* merged, in ticks; owns its histogram */
	uint64_t calls, total_ns, self_ns, min_ns, mean_ns, p50_ns, p90_ns, p99_ns, max_ns;
	uint64_t errors;
	uint64_t left;	    /* errors left without an exit (longjmp) */
	bool maybe_dropped; /* a thread of the row dropped scopes: calls may be low */
};

struct tt_report {
	struct tt_trace tr;
	struct tt_trace meta; /* the pre-pass, when one was needed */
	bool has_meta;
	struct tt_clock clock;
	struct tt_scopes sc;
	/* Replicas 1.. of a parallel walk (report.c walk()); 0 is tr and sc. */
	struct tt_trace *more_tr;
	struct tt_scopes *more_sc;
	unsigned nr_replicas;
	struct tt_row *rows;
	size_t nr_rows;
	uint32_t *row_hash; /* (thread, name) -> row index + 1 */
	size_t row_mask;
	char **labels; /* thread labels owned by the report */
	size_t nr_labels;
	uint64_t nr_dropped; /* of the selected threads */
	uint64_t nr_left;    /* activations left without an exit, in the rows */
	uint64_t nr_filtered; /* REC_MIN_NS, of the selected threads (when tr.has_filtered) */
	uint64_t nr_blocked, blocked_ns; /* REC_OVERFLOW=block waits, of the selected threads */
	char problems[768];  /* what was lost, "" if nothing */

	/* Several files (tracetool(1); tt_report_multi_*()): rows merged from
	 * one report per file, in nanoseconds (clock is 1 ns a tick). Each
	 * file's warnings were printed as it was read (tt_report_warn()). */
	unsigned nr_files;     /* 0: one file, the single-file pipeline */
	const char *failed;    /* the file that could not be read, or NULL */
	bool any_truncated, any_damaged, any_unended;
	bool merged;	       /* neither --by-thread nor --by-process */
	char **processes;      /* process labels owned by the report */
	size_t nr_processes;
	size_t cap_rows;
	/* --compensate: asked for, and done (the file has a PROBE_COST record
	 * with a measured cost and every walker applied it). */
	bool comp_asked, compensated;
};

/*
 * tt_report_run() - read the trace and build the rows.
 * Return: TT_OK, or TT_ERR_FILE with the problem in msg.
 */
enum tt_status tt_report_run(struct tt_report *rep, const struct tt_options *o,
			     tt_close_fn on_close, void *close_ctx, char *msg, size_t msg_bytes);
/*
 * tt_report_run_views() - tt_report_run() with a consumer of activations
 * (scopes.h) on every walker: cons_ctxs[r] is the consumer's context on
 * replica r (0 is rep->tr), TT_REPORT_MAX_REPLICAS of them; after the call
 * rep->nr_replicas says how many were used.
 */
#define TT_REPORT_MAX_REPLICAS 8
enum tt_status tt_report_run_views(struct tt_report *rep, const struct tt_options *o,
				   tt_close_fn on_close, void *close_ctx,
				   const struct tt_consumer *cons, void *const *cons_ctxs, char *msg,
				   size_t msg_bytes);
/*
 * tt_report_run_views_meta() - tt_report_run_views() with the metadata
 * pass already done by the caller (tt_trace_walk() with no block function
 * on a tt_trace of the same file): meta is moved into rep->meta (and left
 * zeroed), so the file is not read a third time.
 */
enum tt_status tt_report_run_views_meta(struct tt_report *rep, const struct tt_options *o,
					struct tt_trace *meta, const struct tt_consumer *cons,
					void *const *cons_ctxs, char *msg, size_t msg_bytes);
/*
 * tt_report_run_counters() - tt_report_run() with the engine's counter
 * deltas (scopes.h, on_counters) and, with o->arg_keys, its arguments
 * (on_arg, may be NULL) on every walker: ctr_ctxs[r] is both callbacks'
 * context on replica r, TT_REPORT_MAX_REPLICAS of them.
 */
enum tt_status tt_report_run_counters(struct tt_report *rep, const struct tt_options *o,
				      tt_counters_fn on_counters, tt_arg_fn on_arg,
				      void *const *ctr_ctxs, char *msg, size_t msg_bytes);
/* The trace of replica r (0: rep->tr). */
static inline struct tt_trace *tt_report_replica(struct tt_report *rep, unsigned r)
{
	return r ? &rep->more_tr[r - 1] : &rep->tr;
}
void tt_report_fini(struct tt_report *rep);

/*
 * Several TRACE files in one report (tracetool(1)): tt_report_multi_init(),
 * then tt_report_multi_add() for each file's own report (run by the caller
 * with the options of tt_report_file_options()), then
 * tt_report_multi_finish(). Rows merge by (process with --by-process,
 * thread label with --by-thread, name); each file's times are converted
 * with its own clock. tt_report_run() does all of it when
 * tt_options_multi(o).
 */
void tt_report_multi_init(struct tt_report *rep, const struct tt_options *o);
/* The options of file i's own report: o with only that TRACE. */
void tt_report_file_options(const struct tt_options *o, unsigned i, struct tt_options *fo);
/* The process label NAME[PID] of a file's report (NAME: the program's file
 * name, else its main thread's name, else "process"); malloc'd. */
char *tt_report_process_label(const struct tt_report *sub);
/* Merges sub's rows into rep and prints sub's warnings; returns the
 * process label (owned by rep). sub may be finalised after. */
const char *tt_report_multi_add(struct tt_report *rep, const struct tt_options *o,
				struct tt_report *sub);
void tt_report_multi_finish(struct tt_report *rep);
/* The warnings of a single-file report (a multi-file one printed its own). */
void tt_report_warn(const struct tt_report *rep);
/* Whether a file of the report was truncated, or damaged. */
static inline bool tt_report_truncated(const struct tt_report *rep)
{
	return rep->nr_files ? rep->any_truncated : rep->tr.truncated;
}
static inline bool tt_report_damaged(const struct tt_report *rep)
{
	return rep->nr_files ? rep->any_damaged
			     : rep->tr.nr_bad_frames || rep->tr.nr_lost_frames ||
				       rep->tr.nr_bad_blocks;
}
/* The file to name when the run failed. */
static inline const char *tt_report_failed(const struct tt_report *rep, const struct tt_options *o)
{
	return rep->failed ? rep->failed : o->trace;
}

/*
 * --compensate, for every command that takes it: tt_report_comp_warn()
 * prints the one warning line on stderr when it was asked for and could not
 * be done (the file records no probe cost); tt_report_comp_footer() writes
 * the table's footer line (no newline) when it was asked for, "" if not.
 */
void tt_report_comp_warn(const struct tt_report *rep);
void tt_report_comp_footer(const struct tt_report *rep, char *out, size_t out_bytes);

/* Window and thread filter of the options, resolved against the meta pass. */
void tt_report_window(const struct tt_options *o, const struct tt_clock *c, uint64_t *lo,
		      uint64_t *span);

#endif /* TT_REPORT_H */
