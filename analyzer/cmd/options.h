/* SPDX-License-Identifier: MIT */
/*
 * options.h - parsing the options shared by the report commands
 * (tracetool(1), OPTIONS): the filters --thread, --function, --from/--to
 * (tt_filter_argp) and the report shape --format, --sort, --by-thread
 * (tt_report_argp), --compensate (tt_cost_argp), into one struct
 * tt_options with defaults in TT_OPTIONS_INIT (both in engine/filter.h,
 * with what the filters mean). Each command adds its own options and the
 * TRACE argument. Validation errors go through argp_error(), so they exit
 * 2 (main.c sets argp_err_exit_status).
 */
#ifndef TT_OPTIONS_H
#define TT_OPTIONS_H

#include <argp.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/filter.h"

extern const struct argp tt_filter_argp;
extern const struct argp tt_report_argp;
/* --compensate, for the commands that report durations (summary,
 * histogram, tree, flame, diff); not the timelines. */
/* --by-site (summary, tree, diff; labels.h). */
extern const struct argp tt_site_argp;
extern const struct argp tt_cost_argp;

/*
 * The sets of option groups that several commands take as their argp's
 * children, each group parsing into the command's struct tt_options:
 *   tt_report_children: the filters, --compensate, the report's shape and
 *   --by-site (summary, tree);
 *   tt_paths_children: the filters and --compensate (flame, pprof).
 */
extern const struct argp_child tt_report_children[];
extern const struct argp_child tt_paths_children[];

/*
 * tt_options_inputs() - for ARGP_KEY_INIT of a command whose option groups
 * (children, the list in its argp) all parse into o: hands o to each.
 */
void tt_options_inputs(struct argp_state *state, const struct argp_child *children,
		       struct tt_options *o);

/*
 * The commands that write one profile of call paths (flame, pprof) list
 * -o, --by-thread and --by-process with their own help, under the keys 'o',
 * TT_OPT_PATHS_BY_THREAD and TT_OPT_PATHS_BY_PROCESS, take
 * tt_paths_children, and pass to tt_options_parse_paths() what their
 * parser does not handle: those options into o (output, by_thread,
 * by_process), ARGP_KEY_INIT, and the TRACE operands.
 * Return: 0 when it handled key, else ARGP_ERR_UNKNOWN.
 */
enum { TT_OPT_PATHS_BY_THREAD = 0x700, TT_OPT_PATHS_BY_PROCESS };
error_t tt_options_parse_paths(int key, char *arg, struct argp_state *state,
			       struct tt_options *o);

void tt_options_fini(struct tt_options *o);

/*
 * tt_options_choice() - the place of arg in choices ("a|b|c").
 * Return: 0 for the first value, 1 for the second..., or -1 if arg is none.
 */
int tt_options_choice(const char *choices, const char *arg);
/*
 * tt_options_choose() - tt_options_choice() for option's value arg, a
 * usage error "OPTION: 'ARG' is not one of CHOICES" (exit 2) if it is none.
 * Return: the place of arg in choices.
 */
int tt_options_choose(struct argp_state *state, const char *option, const char *choices,
		      const char *arg);

/*
 * tt_options_regex() - option's value arg, a POSIX extended regular
 * expression, compiled (REG_NOSUB) into *re, which *has says holds one
 * already (freed: the last of a repeated option wins); a usage error
 * "OPTION: bad regular expression 'ARG': WHY" (exit 2) if it is none.
 */
void tt_options_regex(struct argp_state *state, const char *option, const char *arg, regex_t *re,
		      bool *has);

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

/*
 * tt_refuse_stdout_input() - exit 2 with one line when standard output is a
 * regular file that is one of the n TRACE operands (`tracetool summary
 * t.zst >> t.zst`, as cat refuses "input file is output"): the output would
 * be appended to the recording it reads and damage it (tracetool(1), EXIT
 * STATUS). Called by every command's option parsing.
 */
void tt_refuse_stdout_input(const char *const *paths, unsigned n);

/*
 * tt_refuse_same_file() - exit 2 with one line when two of the n paths are
 * one file (the same device and inode, whatever the paths): "tracetool: B:
 * the same file as A: a <what> given twice would count twice", A the first
 * of the earliest pair (issue 26; diff's runs of one side, what "run"). A
 * path that cannot be stat'ed is left to the command, which names the
 * problem when it opens it. O(n log n).
 */
void tt_refuse_same_file(struct argp_state *state, const char *const *paths, unsigned n,
			 const char *what);

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


#endif /* TT_OPTIONS_H */
