/* SPDX-License-Identifier: MIT */
/*
 * fuzz_histogram.c - libFuzzer target: `tracetool histogram` on arbitrary bytes,
 * as bars, as csv per thread, and as json with 8 bins behind the
 * --thread and --from/--to filters.
 * Every input must give exit 0 or 1 with no sanitizer report, leak or hang.
 * Built with regression_driver.c, it replays files instead (meson test,
 * suite fuzz-smoke).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "histogram", NULL };
static const char *const args1[] = { "histogram", "--format=csv", "--by-thread", NULL };
static const char *const args2[] = { "histogram", "--format=json", "--bins=8", "--thread=2", "--from=0", "--to=500ms", NULL };
static const char *const *const arg_lists[] = { args0, args1, args2, };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_histogram, arg_lists, sizeof(arg_lists) / sizeof(arg_lists[0]), data,
			 size);
	return 0;
}
