/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the subcommands main.c dispatches to. Each parses its own
 * options from argv (argv[0] is the command's name) and returns an exit code
 * of contract §4: 0 success, 1 unreadable or damaged trace (after printing
 * the one line "tracetool: FILE: problem"), 2 wrong usage.
 */
#ifndef TT_COMMANDS_H
#define TT_COMMANDS_H

int tt_cmd_summary(int argc, char **argv);
int tt_cmd_histogram(int argc, char **argv);
int tt_cmd_chrome(int argc, char **argv);
int tt_cmd_info(int argc, char **argv);
int tt_cmd_check(int argc, char **argv);

/* Prints "tracetool: FILE: msg" on stderr and returns 1 (main.c). */
int tt_fail_file(const char *path, const char *msg);

#endif /* TT_COMMANDS_H */
