/* SPDX-License-Identifier: MIT */
/*
 * report.h - what a walk (front.h, tt_walk()) leaves: the trace and its
 * metadata pass, the pairing state of every replica, and one row per scope
 * name (or per thread label and name with --by-thread, per process with
 * --by-process) from the engine's per-name statistics, filtered by
 * --function (tracetool(1), summary). With several files the rows are
 * merged from one report per file, in nanoseconds.
 */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include "common/hmap.h"
#include "engine/events.h"
#include "engine/filter.h"
#include "engine/scopes.h"
#include "engine/stats.h"

/* Strings the report owns, each once (thread labels, process labels), and
 * the map that finds them (hmap.h; the file names its threads: keyed). */
struct tt_strs {
	char **v;
	size_t n, cap;
	struct tt_hmap map;
};

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
	struct tt_trace meta; /* the metadata pass, when one was needed */
	bool has_meta;
	struct tt_clock clock;
	struct tt_scopes sc;
	/* Replicas 1.. of a parallel walk (front.c); 0 is tr and sc. */
	struct tt_trace *more_tr;
	struct tt_scopes *more_sc;
	unsigned nr_replicas;
	struct tt_row *rows;
	size_t nr_rows;
	struct tt_hmap row_map; /* hmap.h: rows by (process, thread, name) */
	struct tt_strs labels; /* thread labels owned by the report */
	uint64_t nr_dropped; /* of the selected threads */
	uint64_t nr_left;    /* activations left without an exit, in the rows */
	uint64_t nr_filtered; /* REC_MIN_NS, of the selected threads (when tr.has_filtered) */
	uint64_t nr_blocked, blocked_ns; /* REC_OVERFLOW=block waits, of the selected threads */
	char problems[768];  /* what was lost, "" if nothing */

	/* Several files (docs/ANALYZER.md, "Several TRACE files"; front.c):
	 * rows merged from one report per file, in nanoseconds (clock is 1 ns
	 * a tick). Each file's warnings were printed as it was read
	 * (tt_report_warn()). */
	unsigned nr_files;     /* 0: one file, the single-file pipeline */
	const char *failed;    /* the file that could not be read, or NULL */
	bool any_truncated, any_damaged, any_unended;
	bool merged;	       /* neither --by-thread nor --by-process */
	struct tt_strs processes; /* process labels owned by the report */
	size_t cap_rows;
	/* tt_walk_spec.keep_files: each file's own report, in order. */
	struct tt_report **files;
	unsigned nr_kept;
	const char *process; /* a file's report: its NAME[PID] in the merged one */
	/* --compensate: asked for, and done (the file has a PROBE_COST record
	 * with a measured cost and every walker applied it). */
	bool comp_asked, compensated;
};

/* The trace of replica r (0: rep->tr). */
static inline struct tt_trace *tt_report_replica(struct tt_report *rep, unsigned r)
{
	return r ? &rep->more_tr[r - 1] : &rep->tr;
}
static inline struct tt_scopes *tt_report_replica_scopes(struct tt_report *rep, unsigned r)
{
	return r ? &rep->more_sc[r - 1] : &rep->sc;
}
void tt_report_fini(struct tt_report *rep);

/*
 * For front.c: the rows of a walked file (tt_report_rows()); several files
 * in one report by tt_report_multi_init(), tt_report_multi_add() for each
 * file's own report (its warnings printed, its rows merged by (process with
 * --by-process, thread label with --by-thread, name), each converted with
 * its own clock; returns the file's process label, owned by rep), then
 * tt_report_multi_finish().
 */
void tt_report_rows(struct tt_report *rep, const struct tt_options *o);
void tt_report_multi_init(struct tt_report *rep, const struct tt_options *o);
const char *tt_report_multi_add(struct tt_report *rep, const struct tt_options *o,
				struct tt_report *sub);
void tt_report_multi_finish(struct tt_report *rep);
/* A file's process label, NAME[PID] (--by-process: NAME the program's file
 * name, else the name of the thread whose OS tid is the pid, else
 * "process"), of a walked trace; malloc'd. */
char *tt_process_label(const struct tt_trace *tr);
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

#endif /* TT_REPORT_H */
