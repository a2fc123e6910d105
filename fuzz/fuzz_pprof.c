/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pprof.c - libFuzzer target: the writers that carry stack samples, on
 * arbitrary bytes: `tracetool pprof` (samples with their mappings and
 * locations, --by-thread and --by-process labels; scope times and calls),
 * and the samples of `chrome` (sample events, stackFrames) and `perfetto`
 * (callstack samples), all written to /dev/null. Every input must give exit
 * 0 or 1 with no sanitizer report, leak or hang. Built with
 * regression_driver.c, it replays files instead (meson test, suite
 * fuzz-smoke, on corpus/profile).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "pprof", "-o", "/dev/null", NULL };
static const char *const args1[] = { "pprof", "-o", "/dev/null", "--by-thread", "--by-process",
				     "--thread=1", "--from=1us", NULL };
static const char *const args2[] = { "pprof", "-o", "/dev/null", "--weight=time", NULL };
static const char *const args3[] = { "pprof", "-o", "/dev/null", "--weight=calls",
				     "--by-thread", NULL };
static const char *const *const pprof_lists[] = { args0, args1, args2, args3 };
static const char *const args4[] = { "chrome", "-o", "/dev/null", NULL };
static const char *const args5[] = { "chrome", "-o", "/dev/null", "--thread=worker",
				     "--from=2us", "--to=1s", NULL };
static const char *const *const chrome_lists[] = { args4, args5 };
static const char *const args6[] = { "perfetto", "-o", "/dev/null", NULL };
static const char *const *const perfetto_lists[] = { args6 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_pprof, pprof_lists, sizeof(pprof_lists) / sizeof(pprof_lists[0]),
			 data, size);
	fuzz_run_command(tt_cmd_chrome, chrome_lists,
			 sizeof(chrome_lists) / sizeof(chrome_lists[0]), data, size);
	fuzz_run_command(tt_cmd_perfetto, perfetto_lists,
			 sizeof(perfetto_lists) / sizeof(perfetto_lists[0]), data, size);
	return 0;
}
