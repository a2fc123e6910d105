/* SPDX-License-Identifier: MIT */
/*
 * fuzz_perfetto.c - libFuzzer target: `tracetool perfetto` on arbitrary
 * bytes, written to /dev/null. Every input must give exit 0 or 1 with no
 * sanitizer report, leak or hang. Built with regression_driver.c, it replays files instead
 * (meson test, suite fuzz-smoke, on summary's corpus).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "perfetto", "-o", "/dev/null", NULL };
static const char *const *const arg_lists[] = { args0 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_perfetto, arg_lists, sizeof(arg_lists) / sizeof(arg_lists[0]),
			 data, size);
	return 0;
}
