/* SPDX-License-Identifier: MIT */
/*
 * fuzz_index.c - libFuzzer target: the index frames' path (FORMAT.md §6,
 * analyzer/engine/index.c), which files under 4 MiB never take: with
 * TRACETOOL_INDEX=1 every input is read through its index frames when they
 * hold. An input that starts with an index frame is a file as is, its
 * index frames' hashes made right (fuzz_write_input_indexed()), so that what
 * they say, mutated, reaches the reader's checks; decompressed content gets
 * honest index frames, and then a window through them must print what the
 * whole file does (TRACETOOL_INDEX=0): any difference aborts, naming it.
 * Runs info (text and json, which survey the index frames), check (which
 * compares each with its frame), and summary, tree and chrome on two
 * windows placed by the file's duration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "engine/index.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t duration_ns(void)
{
	static const char *const args[] = { "info", "--format=json", NULL };
	struct fuzz_output o;
	const char *p;
	uint64_t d = 0;

	if (fuzz_run_captured(tt_cmd_info, args, &o) == 0 &&
	    (p = strstr(o.out, "\"duration_ns\":")))
		d = strtoull(p + strlen("\"duration_ns\":"), NULL, 10);
	fuzz_output_free(&o);
	return d;
}

/* cmd with args, through the index frames and from the whole file: the same. */
static void same_whole(tt_cmd_fn cmd, const char *const *args)
{
	struct fuzz_output ix, whole;

	setenv("TRACETOOL_INDEX", "1", 1);
	tt_index_forget();
	fuzz_run_captured(cmd, args, &ix);
	setenv("TRACETOOL_INDEX", "0", 1);
	fuzz_run_captured(cmd, args, &whole);
	setenv("TRACETOOL_INDEX", "1", 1);
	if (ix.rc != whole.rc || ix.out_len != whole.out_len ||
	    memcmp(ix.out, whole.out, ix.out_len) != 0) {
		dprintf(STDERR_FILENO,
			"fuzz_index: %s %s %s: through the index frames (exit %d):\n%s\n"
			"whole (exit %d):\n%s\n",
			args[0], args[1], args[2], ix.rc, ix.out, whole.rc, whole.out);
		abort();
	}
	fuzz_output_free(&ix);
	fuzz_output_free(&whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const info0[] = { "info", NULL };
	static const char *const info1[] = { "info", "--format=json", NULL };
	static const char *const check[] = { "check", NULL };
	static const double at[][2] = { { 0.3, 0.02 }, { 0.72, 0.005 } };
	const bool honest = fuzz_write_input_indexed(data, size);
	uint64_t d;

	setenv("TRACETOOL_INDEX", "1", 1);
	tt_index_forget();
	d = duration_ns();
	for (unsigned w = 0; w < sizeof(at) / sizeof(at[0]); w++) {
		char from[48], to[48];
		const uint64_t a = (uint64_t)(at[w][0] * (double)d);
		const char *const summary[] = { "summary", "--format=csv", from, to, NULL };
		const char *const tree[] = { "tree", "--format=csv", from, to, NULL };
		const char *const chrome[] = { "chrome", from, to, "-o", "-", NULL };

		snprintf(from, sizeof(from), "--from=%lluns", (unsigned long long)a);
		snprintf(to, sizeof(to), "--to=%lluns",
			 (unsigned long long)(a + (uint64_t)(at[w][1] * (double)d) + 1));
		if (honest) {
			same_whole(tt_cmd_summary, summary);
			same_whole(tt_cmd_tree, tree);
		} else {
			tt_index_forget();
			fuzz_run_on_input(tt_cmd_summary, summary);
			tt_index_forget();
			fuzz_run_on_input(tt_cmd_tree, tree);
		}
		tt_index_forget();
		fuzz_run_on_input(tt_cmd_chrome, chrome);
	}
	tt_index_forget();
	fuzz_run_on_input(tt_cmd_info, info0);
	fuzz_run_on_input(tt_cmd_info, info1);
	fuzz_run_on_input(tt_cmd_check, check);
	tt_index_forget();
	return 0;
}
