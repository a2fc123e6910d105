/* SPDX-License-Identifier: MIT */
/*
 * filter.h - what a command asks of a pass over its traces (tracetool(1),
 * "Filters"; docs/ANALYZER.md, "Several TRACE files"): the files, the selection the engine
 * applies (--thread, --function, --from/--to, --max-duration), how rows are
 * grouped (--by-thread, --by-process) and what is computed (--compensate,
 * summary --arg), and the report's shape the views read (--format,
 * --sort...). One struct tt_options: cmd/options.c parses it (argp), the
 * engine and the views read it; the meaning of the selection is here
 * (filter.c), once.
 */
#ifndef TT_FILTER_H
#define TT_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/events.h"

/*
 * The values of an option with a fixed set of them: the one list that the
 * parser takes (tt_options_choice()) and names when it refuses a value
 * ("--sort: 'x' is not one of total|self|..."), which is where the bash
 * completion reads them (tracetool.bash), so they cannot disagree.
 */
#define TT_FORMAT_CHOICES "table|csv|json"
enum tt_format { TT_FORMAT_TABLE, TT_FORMAT_CSV, TT_FORMAT_JSON };
/* In the order of TT_SORT_CHOICES. */
#define TT_SORT_CHOICES "total|self|calls|mean|min|p50|p90|p99|max|name"
enum tt_sort { TT_SORT_TOTAL, TT_SORT_SELF, TT_SORT_CALLS, TT_SORT_MEAN, TT_SORT_MIN,
	       TT_SORT_P50, TT_SORT_P90, TT_SORT_P99, TT_SORT_MAX, TT_SORT_NAME };

struct tt_options {
	const char *trace;    /* the first (or only) TRACE */
	const char **traces;  /* every TRACE, in the order given (tracetool(1)) */
	unsigned nr_traces;
	bool by_process;      /* --by-process: rows split by NAME[PID] */
	enum tt_format format;
	bool format_set;
	const char **threads; /* --thread values */
	bool *threads_found;  /* each: matched a thread of a file read so far */
	unsigned nr_threads;
	regex_t function_re;
	bool has_function;
	bool has_from, has_to;
	uint64_t from_ns, to_ns;
	enum tt_sort sort;
	bool by_thread;
	bool by_site; /* --by-site: a column site, the name alone (labels.h) */
	bool has_max_duration;
	uint64_t max_duration_ns; /* --max-duration: longer activations are errors */
	uint64_t interval_ns;	  /* summary --interval; 0: none */
	bool compensate;	  /* --compensate (tt_cost_argp) */
	uint64_t top;	 /* 0: all rows */
	unsigned nr_bins; /* histogram */
	const char *output; /* chrome -o */
	const char **arg_keys; /* summary --arg KEY, in the order given */
	uint32_t nr_arg_keys;
	/* One file's options of a several-file walk (front.c, file_options()):
	 * a --thread value need only match in one of them, checked at the last. */
	bool one_of_several, last_of_several;
	unsigned nr_several;
};

#define TT_OPTIONS_INIT { .format = TT_FORMAT_TABLE, .sort = TT_SORT_TOTAL, .nr_bins = 0 }

/* True if the thread is selected by --thread (always true without it). */
bool tt_options_thread_selected(const struct tt_options *o, const struct tt_thread *th);
/* Whether a scope's name (a key's name part, events.h) matches re. */
bool tt_regex_name(const regex_t *re, const char *key);
/* True if the name is selected by --function (always true without it). */
bool tt_options_function_selected(const struct tt_options *o, const char *name);
/* Longest activation in ticks of clock c that --max-duration keeps
 * (UINT64_MAX without the option): dur_ticks > it means ns(dur) > max. */
uint64_t tt_options_max_dur_ticks(const struct tt_options *o, const struct tt_clock *c);
/* True if the filters need the file's final metadata before the main pass. */
bool tt_options_need_prepass(const struct tt_options *o);
/* The --from/--to window in absolute ticks of clock c: an activation is in
 * when enter - lo < span (UINT64_MAX: no end). */
void tt_options_window(const struct tt_options *o, const struct tt_clock *c, uint64_t *lo,
		       uint64_t *span);
/*
 * tt_options_threads_missing() - whether a --thread value matches no thread
 * of tr (its metadata: every thread, with its final name), nor of a file
 * read before it in a several-file report; then msg is the one line that
 * says so and lists the threads tr has.
 */
bool tt_options_threads_missing(const struct tt_options *o, const struct tt_trace *tr, char *msg,
				size_t msg_bytes);
/* True when the report is over several files or split by process: each
 * file walked on its own and the rows merged (engine/front.h). */
static inline bool tt_options_multi(const struct tt_options *o)
{
	return o->nr_traces > 1 || o->by_process;
}

#endif /* TT_FILTER_H */
