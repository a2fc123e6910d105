/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the subcommands main.c dispatches to. Each parses its own
 * options from argv (argv[0] is the command's name) and returns an exit code
 * of tracetool(1), EXIT STATUS: 0 success, 1 unreadable or damaged trace (after printing
 * the one line "tracetool: FILE: problem"), 2 wrong usage.
 *
 * A command calls exit() only where argp does: on --help, --usage, or an
 * argument argp rejects (exit 2). With valid arguments it always returns, so
 * it may run many times in one process (fuzz/, tests/analyzer/test_sweep.c).
 */
#ifndef TT_COMMANDS_H
#define TT_COMMANDS_H

#include <stddef.h>

int tt_cmd_summary(int argc, char **argv);
int tt_cmd_histogram(int argc, char **argv);
int tt_cmd_chrome(int argc, char **argv);
int tt_cmd_info(int argc, char **argv);
int tt_cmd_check(int argc, char **argv);
int tt_cmd_tree(int argc, char **argv);
int tt_cmd_flame(int argc, char **argv);
int tt_cmd_perfetto(int argc, char **argv);
int tt_cmd_export(int argc, char **argv);
/* Also exit 3: a --fail-on rule found a regression (tracetool(1), diff). */
int tt_cmd_diff(int argc, char **argv);
int tt_cmd_values(int argc, char **argv);
int tt_cmd_flows(int argc, char **argv);
int tt_cmd_pprof(int argc, char **argv);
int tt_cmd_profile(int argc, char **argv);
/* Runs CMD with librec preloaded; returns CMD's exit status (128+N for a
 * signal, 126/127 when it could not be run). */
int tt_cmd_record(int argc, char **argv);
/* Follows a recording being written; returns when it ends or on q. */
int tt_cmd_top(int argc, char **argv);

typedef int (*tt_cmd_fn)(int argc, char **argv);

struct tt_command {
	const char *name;
	tt_cmd_fn fn;
	const char *what; /* one line for the global --help */
};

/* Every command, in the order the global --help lists them. */
extern const struct tt_command tt_commands[];
extern const size_t tt_nr_commands;

/* The command called name, or NULL. */
const struct tt_command *tt_command_find(const char *name);

/* Prints "tracetool: FILE: msg" on stderr and returns 1. */
int tt_fail_file(const char *path, const char *msg);

#endif /* TT_COMMANDS_H */
