/* SPDX-License-Identifier: MIT */
/*
 * fuzz_check.c - libFuzzer target: `tracetool check` on arbitrary bytes,
 * which validates every frame, record and count.
 * Every input must give exit 0 or 1 with no sanitizer report, leak or hang.
 * Built with regression_driver.c, it replays files instead (meson test,
 * suite fuzz-smoke).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "check", NULL };
static const char *const *const arg_lists[] = { args0, };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_check, arg_lists, sizeof(arg_lists) / sizeof(arg_lists[0]), data,
			 size);
	return 0;
}
