/* SPDX-License-Identifier: MIT */
/*
 * fuzz_profile.c - libFuzzer target: the reports of stack samples on
 * arbitrary bytes: `tracetool profile` (each format, --by-thread,
 * --by-process, --within, the shared filters), `flame --samples` and `tree
 * --samples`: views/samples.c (the SAMPLES records through the symbols of
 * the MODULE records) and its counting. Every input must give exit 0 or 1
 * with no sanitizer report, leak or hang. Built with regression_driver.c,
 * it replays files instead (meson test, suite fuzz-smoke, on corpus/profile).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "profile", NULL };
static const char *const args1[] = { "profile", "--format=csv", "--by-thread", "--by-process",
				     "--within=^(handle|parse)", NULL };
static const char *const args2[] = { "profile", "--format=json", "--thread=1", "--thread=worker",
				     "--from=1us", "--to=2s", "--function=^[a-m]", "--top=3",
				     NULL };
static const char *const *const profile_lists[] = { args0, args1, args2 };
static const char *const args3[] = { "flame", "--samples", "--by-thread", NULL };
static const char *const *const flame_lists[] = { args3 };
static const char *const args4[] = { "tree", "--samples", "--format=csv", "--by-process", NULL };
static const char *const args5[] = { "tree", "--samples", "--depth=3", "--min-percent=1",
				     "--by-thread", NULL };
static const char *const *const tree_lists[] = { args4, args5 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_profile, profile_lists,
			 sizeof(profile_lists) / sizeof(profile_lists[0]), data, size);
	fuzz_run_command(tt_cmd_flame, flame_lists, sizeof(flame_lists) / sizeof(flame_lists[0]),
			 data, size);
	fuzz_run_command(tt_cmd_tree, tree_lists, sizeof(tree_lists) / sizeof(tree_lists[0]), data,
			 size);
	return 0;
}
