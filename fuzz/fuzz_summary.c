/* SPDX-License-Identifier: MIT */
/*
 * fuzz_summary.c - libFuzzer target: `tracetool summary` on arbitrary bytes,
 * once with defaults (table), once per thread as csv sorted by
 * self time, once as json behind the --thread and --from/--to filters (which
 * add the metadata pre-pass) and a --function regex, and twice with
 * --interval and --max-duration (the engine's counter and interval consumers).
 * Every input must give exit 0 or 1 with no sanitizer report, leak or hang.
 * Built with regression_driver.c, it replays files instead (meson test,
 * suite fuzz-smoke).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "summary", NULL };
static const char *const args1[] = { "summary", "--format=csv", "--by-thread", "--sort=self", NULL };
static const char *const args2[] = { "summary", "--format=json", "--thread=1", "--thread=main", "--from=1us", "--to=2s", "--function=^[a-m]", NULL };
static const char *const args3[] = { "summary", "--format=csv", "--interval=20us", "--max-duration=50us", NULL };
static const char *const args4[] = { "summary", "--format=json", "--by-thread", "--max-duration=1us", "--interval=1ms", NULL };
static const char *const *const arg_lists[] = { args0, args1, args2, args3, args4, };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_summary, arg_lists, sizeof(arg_lists) / sizeof(arg_lists[0]), data,
			 size);
	return 0;
}
