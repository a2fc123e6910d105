/* SPDX-License-Identifier: MIT */
/*
 * options.h - options shared by the report commands (tracetool(1), OPTIONS): the
 * filters --thread, --function, --from/--to (tt_filter_argp) and the report
 * shape --format, --sort, --by-thread (tt_report_argp), --compensate
 * (tt_cost_argp), parsed into one
 * struct tt_options with defaults in TT_OPTIONS_INIT. Each command adds its
 * own options and the TRACE argument. Validation errors go through
 * argp_error(), so they exit 2 (main.c sets argp_err_exit_status).
 */
#ifndef TT_OPTIONS_H
#define TT_OPTIONS_H

#include <argp.h>
#include <regex.h>
#include <stdbool.h>
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
	/* One file's options of a several-file report (tt_report_file_options()):
	 * a --thread value need only match in one of them, checked at the last. */
	bool one_of_several, last_of_several;
	unsigned nr_several;
};

#define TT_OPTIONS_INIT { .format = TT_FORMAT_TABLE, .sort = TT_SORT_TOTAL, .nr_bins = 0 }

extern const struct argp tt_filter_argp;
extern const struct argp tt_report_argp;
/* --compensate, for the commands that report durations (summary,
 * histogram, tree, flame, diff); not the timelines. */
/* --by-site (summary, tree, diff; labels.h). */
extern const struct argp tt_site_argp;
extern const struct argp tt_cost_argp;

void tt_options_fini(struct tt_options *o);

/*
 * tt_options_choice() - the place of arg in choices ("a|b|c").
 * Return: 0 for the first value, 1 for the second..., or -1 if arg is none.
 */
int tt_options_choice(const char *choices, const char *arg);

/*
 * tt_options_threads_missing() - whether a --thread value matches no thread
 * of tr (its metadata: every thread, with its final name), nor of a file
 * read before it in a several-file report; then msg is the one line that
 * says so and lists the threads tr has.
 */
bool tt_options_threads_missing(const struct tt_options *o, const struct tt_trace *tr, char *msg,
				size_t msg_bytes);

/* "1.5ms" -> 1500000. Return: 0, or -1 if not a time with a unit. */
int tt_options_parse_time(const char *s, uint64_t *ns);
/* Parses a whole number; Return: 0 or -1. */
int tt_options_parse_u64(const char *s, uint64_t *v);
/*
 * tt_options_parse_traces() - the TRACE operands of a reporting command, for
 * the default branch of its argp parser: one file or more (tracetool(1)), in
 * o->traces; o->trace is the first.
 * Return: 0 when it handled `key`, else ARGP_ERR_UNKNOWN.
 */
error_t tt_options_parse_traces(int key, char *arg, struct argp_state *state);
/* True when the report is over several files or split by process: the
 * multi-file pipeline (report.c) rather than the single file's. */
static inline bool tt_options_multi(const struct tt_options *o)
{
	return o->nr_traces > 1 || o->by_process;
}

/*
 * The operands and -o of the commands that write files from several traces
 * (export, perfetto): -o OUT (each command lists the option with its own
 * help) and one or more TRACE operands, in the order given. missing_out is
 * the usage error without -o ("missing -o DIR").
 */
struct tt_files_args {
	const char *out;
	const char **traces;
	unsigned nr_traces;
	const char *missing_out;
};
/* For the default branch of such a command's parser: 'o', the operands and
 * the checks at the end. Return: 0 when it handled key, else ARGP_ERR_UNKNOWN. */
error_t tt_options_parse_files(int key, char *arg, struct argp_state *state,
			       struct tt_files_args *a);
void tt_files_args_fini(struct tt_files_args *a);

/* True if the thread is selected by --thread (always true without it). */
bool tt_options_thread_selected(const struct tt_options *o, const struct tt_thread *th);
/* True if the name is selected by --function (always true without it). */
/* Whether a scope's name (a key's name part, events.h) matches re. */
bool tt_regex_name(const regex_t *re, const char *key);
bool tt_options_function_selected(const struct tt_options *o, const char *name);
/* Longest activation in ticks of clock c that --max-duration keeps
 * (UINT64_MAX without the option): dur_ticks > it means ns(dur) > max. */
uint64_t tt_options_max_dur_ticks(const struct tt_options *o, const struct tt_clock *c);
/* True if the filters need the file's final metadata before the main pass. */
bool tt_options_need_prepass(const struct tt_options *o);

#endif /* TT_OPTIONS_H */
