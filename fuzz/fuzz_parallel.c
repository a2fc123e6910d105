/* SPDX-License-Identifier: MIT */
/*
 * fuzz_parallel.c - libFuzzer target, differential: summary and histogram
 * pair events on several walker threads, one replica of the trace per
 * walker, merged by name (analyzer/engine/events.c, report.c); chrome and
 * perfetto put their walkers' output together (analyzer/out/lanes.c). On every input
 * they must print byte for byte what the single-threaded walk prints
 * (TRACETOOL_THREADS=1), stdout, stderr and exit code alike, with 2 and 3
 * walkers (an even and an odd share of the threads), including damaged
 * files, undefined sites and filters. Any difference aborts, naming it.
 * Built with regression_driver.c, it replays the summary corpus and the
 * regression inputs (meson test, suite fuzz-smoke).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

struct variant {
	tt_cmd_fn cmd;
	const char *const *args;
};

static const char *const args0[] = { "summary", "--format=csv", "--by-thread", "--sort=self", NULL };
static const char *const args1[] = { "summary", "--format=json", "--function=^[a-m]", NULL };
static const char *const args2[] = { "summary", NULL };
static const char *const args3[] = { "summary", "--format=csv", "--thread=1", "--thread=3", "--from=1us", "--to=2s", NULL };
static const char *const args4[] = { "histogram", "--format=csv", "--by-thread", NULL };
/* The timeline writers put their walkers' lanes together (out/lanes.h). */
static const char *const args5[] = { "chrome", "-o", "-", NULL };
static const char *const args6[] = { "chrome", "-o", "-", "--thread=2", "--from=1us", "--to=2s", NULL };
static const char *const args7[] = { "perfetto", "-o", "/dev/stdout", NULL };
static const struct variant variants[] = {
	{ tt_cmd_summary, args0 },   { tt_cmd_summary, args1 }, { tt_cmd_summary, args2 },
	{ tt_cmd_summary, args3 },   { tt_cmd_histogram, args4 }, { tt_cmd_chrome, args5 },
	{ tt_cmd_chrome, args6 },    { tt_cmd_perfetto, args7 },
};

static void differ(const char *what, const char *const *args, const char *walkers,
		   const char *one, const char *many)
{
	dprintf(STDERR_FILENO,
		"fuzz_parallel: %s %s differs with TRACETOOL_THREADS=%s:\n--- 1 walker:\n%s\n"
		"--- %s walkers:\n%s\n",
		args[0], what, walkers, one, walkers, many);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const walkers[] = { "2", "3" };

	fuzz_write_input(data, size);
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		struct fuzz_output one;

		setenv("TRACETOOL_THREADS", "1", 1);
		fuzz_run_captured(variants[v].cmd, variants[v].args, &one);
		for (size_t w = 0; w < sizeof(walkers) / sizeof(walkers[0]); w++) {
			struct fuzz_output many;

			setenv("TRACETOOL_THREADS", walkers[w], 1);
			fuzz_run_captured(variants[v].cmd, variants[v].args, &many);
			if (many.rc != one.rc)
				differ("exit code", variants[v].args, walkers[w], "", "");
			if (many.out_len != one.out_len || memcmp(many.out, one.out, one.out_len))
				differ("stdout", variants[v].args, walkers[w], one.out, many.out);
			if (many.err_len != one.err_len || memcmp(many.err, one.err, one.err_len))
				differ("stderr", variants[v].args, walkers[w], one.err, many.err);
			fuzz_output_free(&many);
		}
		fuzz_output_free(&one);
	}
	unsetenv("TRACETOOL_THREADS");
	return 0;
}
