/* SPDX-License-Identifier: MIT */
/*
 * fuzz_chrome.c - libFuzzer target: `tracetool chrome` on arbitrary bytes,
 * unfiltered and behind --thread, --function and --from (chrome
 * always makes the metadata pass, then the report pass).
 * Every input must give exit 0 or 1 with no sanitizer report, leak or hang.
 * Built with regression_driver.c, it replays files instead (meson test,
 * suite fuzz-smoke).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "chrome", NULL };
static const char *const args1[] = { "chrome", "--thread=1", "--function=.", "--from=10us", NULL };
static const char *const *const arg_lists[] = { args0, args1, };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_chrome, arg_lists, sizeof(arg_lists) / sizeof(arg_lists[0]), data,
			 size);
	return 0;
}
