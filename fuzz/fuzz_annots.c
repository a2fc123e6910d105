/* SPDX-License-Identifier: MIT */
/*
 * fuzz_annots.c - libFuzzer target: the annotation reports on arbitrary
 * bytes: `values` and `flows` (json, and behind --thread, --function and
 * --from/--to) and `summary --arg`, whose annotations come through the
 * pairing engine (scopes.c) from the ANNOT_NAME and ANNOTS records.
 * Every input must give exit 0 or 1 with no sanitizer report, leak or hang.
 * Built with regression_driver.c, it replays files instead (meson test,
 * suite fuzz-smoke).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const values0[] = { "values", "--format=json", NULL };
static const char *const values1[] = { "values", "--format=csv", "--thread=1", "--function=q",
				       "--from=1us", "--to=2s", NULL };
static const char *const *const values_lists[] = { values0, values1 };
static const char *const flows0[] = { "flows", "--format=json", NULL };
static const char *const flows1[] = { "flows", "--from=100ns", NULL };
static const char *const *const flows_lists[] = { flows0, flows1 };
static const char *const summary0[] = { "summary", "--format=json", "--arg=bytes", "--arg=x",
					NULL };
static const char *const *const summary_lists[] = { summary0 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_values, values_lists, 2, data, size);
	fuzz_run_command(tt_cmd_flows, flows_lists, 2, data, size);
	fuzz_run_command(tt_cmd_summary, summary_lists, 1, data, size);
	return 0;
}
