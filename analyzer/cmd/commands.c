/* SPDX-License-Identifier: MIT */
/*
 * commands.c - the command table and the one-line failure message, in the
 * library rather than in main.c, so that in-process callers (fuzz/, the
 * corruption sweep in tests/analyzer) run a command exactly as tracetool
 * does, without its process.
 */
#include "cmd/commands.h"

#include "common/emit.h"

#include <stdio.h>
#include <string.h>

const struct tt_command tt_commands[] = {
	{ "summary", tt_cmd_summary, "calls, total, self, percentiles and errors per scope" },
	{ "top", tt_cmd_top, "live view of a recording being written, redrawn every second" },
	{ "histogram", tt_cmd_histogram, "duration distribution per scope, as bars" },
	{ "profile", tt_cmd_profile, "hotspots from stack samples: self and total per function" },
	{ "tree", tt_cmd_tree, "the call tree: calls, total, self and share per call path" },
	{ "flame", tt_cmd_flame, "folded stacks (flamegraph.pl, inferno, speedscope)" },
	{ "pprof", tt_cmd_pprof, "pprof profile (go tool pprof, Pyroscope, speedscope)" },
	{ "perfetto", tt_cmd_perfetto, "Perfetto protobuf trace of one or more recordings" },
	{ "export", tt_cmd_export, "runs, threads, scopes, activations as Parquet or CSV tables" },
	{ "values", tt_cmd_values, "per value track: samples, min, max, time-weighted mean, last" },
	{ "flows", tt_cmd_flows, "per flow: begin-to-end latency percentiles, unfinished flows" },
	{ "chrome", tt_cmd_chrome, "Chrome Trace Event JSON (Perfetto, chrome://tracing)" },
	{ "info", tt_cmd_info, "format, clock, threads, drops, whether it ended cleanly" },
	{ "check", tt_cmd_check, "exit 0 if the file is intact, else say what and where" },
	{ "record", tt_cmd_record, "run a command recorded, sampling its stacks (as perf record)" },
	{ "diff", tt_cmd_diff, "per scope, what changed between two traces, with verdicts" },
};

const size_t tt_nr_commands = sizeof(tt_commands) / sizeof(tt_commands[0]);

const struct tt_command *tt_command_find(const char *name)
{
	for (size_t i = 0; i < tt_nr_commands; i++)
		if (strcmp(name, tt_commands[i].name) == 0)
			return &tt_commands[i];
	return NULL;
}

int tt_fail_file(const char *path, const char *msg)
{
	/* The message may quote the trace (a module's path): terminal-safe. */
	fprintf(stderr, "tracetool: %s: ", path);
	tt_emit_text(stderr, msg);
	fputc('\n', stderr);
	return 1;
}
