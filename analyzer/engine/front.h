/* SPDX-License-Identifier: MIT */
/*
 * front.h - the engine's front door: every command that pairs activations
 * reads its traces through tt_walk(). It owns what a pass is made of, once:
 *
 *   - the metadata pass (the file's final clock and thread names), when the
 *     filters or the consumer need it before the first event, or the
 *     caller's own (metas);
 *   - the window, --thread and --max-duration resolved against it, and a
 *     --thread that names no thread said as an error;
 *   - the main pass on tt_trace_walkers() replicas of the trace and of the
 *     pairing state (scopes.h), each pairing its share of the threads, with
 *     the consumer's context of that replica;
 *   - several TRACE files (docs/ANALYZER.md, "Several TRACE files"): each file walked on
 *     its own with its own clock and options (tt_options_multi()), its rows
 *     merged by (process with --by-process, thread label with --by-thread,
 *     name) into one report in nanoseconds, its warnings printed as it is
 *     merged, and the consumer's merge step called with it;
 *   - the report's rows (report.h) from the engine's per-name statistics.
 *
 * A consumer (struct tt_consumer, scopes.h) sees the activations; a view
 * that also needs a figure per file (a call tree, counters) gives a
 * file_begin() to hand out contexts for the file and a file_end() to merge
 * what they computed, while the file's report is still whole.
 */
#ifndef TT_FRONT_H
#define TT_FRONT_H

#include "engine/filter.h"
#include "engine/report.h"
#include "engine/scopes.h"

/* The most replicas a walk has (pipeline.c); a consumer gives as many
 * contexts (one_walker: [0] only). */
#define TT_WALK_MAX_REPLICAS 8

/* One file of a walk, as file_begin() and file_end() see it. */
struct tt_walk_file {
	unsigned index;		    /* in the order of the TRACE operands */
	const struct tt_options *o; /* the file's own options (o with only this TRACE) */
	struct tt_report *rep;	    /* its report: walked into after file_begin() */
	const char *process;	    /* NAME[PID] in a merged report (file_end()), else NULL */
	void **ctxs;		    /* file_begin(): the consumer's contexts for this file */
	/* The file's walkers: tt_walk_nr_walkers(), which file_begin() may
	 * lower (chrome: 1 for a window read through the frame index, whose
	 * replicas take turns on one thread); it gives that many contexts. */
	unsigned nr_walkers;
};

struct tt_walk_spec {
	/* Who sees the activations (NULL: the engine's per-name statistics
	 * only), with its context on each replica for a single file. */
	const struct tt_consumer *cons;
	void *ctxs[TT_WALK_MAX_REPLICAS];
	/*
	 * Per file, with several files (tt_options_multi()) or each_file:
	 * file_begin() (NULL: ctxs serve every file) sets the file's consumer
	 * contexts before its walk; file_end() (NULL: nothing) merges what
	 * they computed, after the file's rows are merged and its warnings
	 * printed (not with each_file). A status other than TT_OK from
	 * file_end() stops the walk (its message in msg). ctx is theirs.
	 */
	void (*file_begin)(void *ctx, struct tt_walk_file *f);
	enum tt_status (*file_end)(void *ctx, struct tt_walk_file *f, char *msg, size_t msg_bytes);
	void *ctx;
	/* Every file on its own, even one, with no merged rows and no
	 * warnings printed: the consumer writes each file's output (chrome,
	 * values, flows). */
	bool each_file;
	/* The files' reports stay in rep->files until tt_report_fini(rep),
	 * for views that look their figures up after the walk (counters). */
	bool keep_files;
	/* The metadata pass of each file, done by the caller (NULL: the
	 * engine does it when needed): moved into the file's report
	 * (rep->meta) and left zeroed, so the file is not read again. */
	struct tt_trace *metas;
	/* With --from/--to, read through the file's frame index when it has
	 * one (index.h): only the frames that can matter to the window are
	 * decoded. For consumers whose output depends only on the activations
	 * in the window and the enters open around them (summary, histogram, tree, flame,
	 * chrome); the result is the same as the whole file's. */
	bool window_index;
	/* The options whose --from/--to that is, when the walk's own have none
	 * (chrome clips to the window itself); NULL: the walk's. */
	const struct tt_options *window_of;
};

/* How many replicas a walk with consumer cons has: 1 for one_walker, else
 * tt_trace_walkers() (TRACETOOL_THREADS, the CPUs), at most
 * TT_WALK_MAX_REPLICAS; the consumer gives that many contexts. */
unsigned tt_walk_nr_walkers(const struct tt_consumer *cons);

/* No consumer: the rows from the engine's per-name statistics only
 * (histogram, diff). */
extern const struct tt_walk_spec tt_walk_stats;

/*
 * tt_walk() - reads o's TRACE files into rep, as spec says.
 * Return: TT_OK, or TT_ERR_FILE with the problem in msg (and with several
 * files, the file in rep->failed: tt_report_failed()). tt_report_fini(rep)
 * in any case.
 */
enum tt_status tt_walk(struct tt_report *rep, const struct tt_options *o,
		       const struct tt_walk_spec *spec, char *msg, size_t msg_bytes);

/* The options of file i's own walk: o with only that TRACE, a --thread
 * value missing from it said only at the last file (tt_walk() uses them;
 * so does a reader of records of several files, views/samples.c). */
void tt_walk_file_options(const struct tt_options *o, unsigned i, struct tt_options *fo);

/*
 * tt_walk_attach() - consumer cons, with context ctx, on the pairing state
 * sc of a walk driven by its caller (tt_walk() does it on each replica):
 * tracetool top, which follows a file frame by frame as it is written
 * (events.h's records through walk.h's tt_trace_walk_frame()).
 */
void tt_walk_attach(struct tt_scopes *sc, const struct tt_consumer *cons, void *ctx);

/*
 * tt_walk_name_map() - the name indices of `into` for every name of
 * `from` (another replica, another file), interned into `into` as needed:
 * map[n] is from's name n in into. malloc'd, nr_names + 1 entries.
 */
uint32_t *tt_walk_name_map(struct tt_trace *into, const struct tt_trace *from);

#endif /* TT_FRONT_H */
