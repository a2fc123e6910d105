/* SPDX-License-Identifier: MIT */
/*
 * main.c - tracetool's top level: --version, the global help and the
 * dispatch to tt_cmd_*() through commands.c's table. Exit codes
 * (tracetool(1), EXIT STATUS): 0 success, 1 the trace is unreadable or damaged, 2 wrong usage.
 * Only this file and argp decide them; commands return them.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "common/progress.h"

#ifndef TT_VERSION
#error "TT_VERSION must come from meson.build (the project's single version)"
#endif

const char *argp_program_version = "tracetool (rec) " TT_VERSION;
const char *argp_program_bug_address = "the rec issue tracker";

struct main_args {
	int cmd_index; /* argv index of COMMAND, 0 if none */
};

static error_t parse_main(int key, char *arg, struct argp_state *state)
{
	struct main_args *a = state->input;

	(void)arg;
	switch (key) {
	case 'q':
		tt_progress_set_quiet(true);
		break;
	case ARGP_KEY_ARG:
		a->cmd_index = state->next - 1;
		state->next = state->argc; /* the rest belongs to the command */
		break;
	case ARGP_KEY_END:
		if (!a->cmd_index)
			argp_error(state, "missing COMMAND");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static char *help_filter(int key, const char *text, void *input)
{
	(void)input;
	if (key == ARGP_KEY_HELP_POST_DOC) {
		size_t cap = 4096;
		char *buf = malloc(cap);
		size_t n = 0;

		if (!buf)
			return (char *)text;
		n += (size_t)snprintf(buf, cap, "Commands:\n");
		for (size_t i = 0; i < tt_nr_commands && n < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "  %-10s  %s\n", tt_commands[i].name,
					      tt_commands[i].what);
		if (n < cap)
			snprintf(buf + n, cap - n,
				 "\n`tracetool COMMAND --help` shows a command's options.\n"
				 "Exit status: 0 success, 1 unreadable or damaged trace, "
				 "2 wrong usage, 3 a regression found by diff --fail-on.");
		return buf;
	}
	return (char *)text;
}

static const struct argp_option main_options[] = {
	{ "quiet", 'q', 0, 0, "No progress line on stderr, whatever the command", 0 },
	{ 0 },
};

static const struct argp main_argp = {
	main_options, parse_main, "COMMAND [OPTION...] TRACE",
	"Analyse a trace file written by librec.\v", NULL, help_filter, NULL,
};

int main(int argc, char **argv)
{
	struct main_args a = { 0 };
	char name[64];
	const struct tt_command *command;
	const char *cmd;
	int rc;

	argp_err_exit_status = 2;
	argp_parse(&main_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	cmd = argv[a.cmd_index];
	command = tt_command_find(cmd);
	if (command) {
		/* argp prints argv[0] in usage lines: make it "tracetool CMD". */
		snprintf(name, sizeof(name), "tracetool %s", cmd);
		argv[a.cmd_index] = name;
		rc = command->fn(argc - a.cmd_index, argv + a.cmd_index);
		/* Output lost (a full disk, /dev/full) is a failure: stdio
		 * tells only at the flush. Commands that check it themselves
		 * have already said so and returned 1. */
		errno = 0;
		if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
			fprintf(stderr, "tracetool: stdout: cannot write: %s\n",
				errno ? strerror(errno) : "write error");
			rc = 1;
		}
		return rc;
	}
	fprintf(stderr, "tracetool: unknown command '%s'\n", cmd);
	fprintf(stderr, "Try `tracetool --help' for the list of commands.\n");
	return 2;
}
