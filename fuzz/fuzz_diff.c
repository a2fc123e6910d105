/* SPDX-License-Identifier: MIT */
/*
 * fuzz_diff.c - libFuzzer target: `tracetool diff` of arbitrary bytes with
 * themselves, as csv behind --fail-on rules at +0 %, as json behind the
 * filters, and as a table. Every input must give exit 0 or 1 (never 3: a
 * file does not regress against itself) with no sanitizer report, leak or
 * hang, and every csv row must be `same` with changes of 0.00. Built with
 * regression_driver.c, it replays files instead (meson test, suite
 * fuzz-smoke; summary's corpus).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int ok, const char *what, const struct fuzz_output *o)
{
	if (ok)
		return;
	dprintf(STDERR_FILENO, "fuzz_diff: %s\n%s%s", what, o->out, o->err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_output o;
	const char *path;

	fuzz_write_input(data, size);
	path = fuzz_input_path();
	{
		const char *args[] = { "diff", "--format=csv", "--fail-on=p99:+0", "--fail-on=total:+0",
				       "--fail-on=calls:+0", path, NULL };

		fuzz_run_captured(tt_cmd_diff, args, &o);
		if (o.rc == 0) {
			/* Each record (a name may hold quoted line breaks) ends in
			 * ",same" (or ",too few calls": no quantile to judge) and the
			 * runs of each side, ",1,1"; the header is the first record. */
			bool quoted = false, header = true;
			size_t start = 0;

			for (size_t i = 0; i < o.out_len; i++) {
				if (o.out[i] == '"')
					quoted = !quoted;
				if (o.out[i] != '\n' || quoted)
					continue;
				must(header ||
					     (i - start >= 9 && memcmp(o.out + i - 9, ",same,1,1", 9) == 0) ||
					     (i - start >= 18 &&
					      memcmp(o.out + i - 18, ",too few calls,1,1", 18) == 0),
				     "a file against itself is not all same", &o);
				header = false;
				start = i + 1;
			}
		}
		fuzz_output_free(&o);
	}
	{
		const char *args[] = { "diff", "--format=json", "--thread=1", "--from=1us",
				       "--to=2s", "--function=^[a-m]", path, NULL };

		fuzz_run_captured(tt_cmd_diff, args, &o);
		fuzz_output_free(&o);
	}
	{
		const char *args[] = { "diff", "--threshold=0", path, NULL };

		fuzz_run_captured(tt_cmd_diff, args, &o);
		fuzz_output_free(&o);
	}
	return 0;
}
