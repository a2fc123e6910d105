/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tree.c - libFuzzer target: `tracetool tree` (plain, upside down with
 * --callers, cut by --depth and --min-percent, per thread) and `tracetool
 * flame` on arbitrary bytes: the call-path consumer of the pairing engine,
 * whose frames are closed in every way a damaged file allows.
 * Every input must give exit 0 or 1 with no sanitizer report, leak or hang.
 * Built with regression_driver.c, it replays files instead (meson test,
 * suite fuzz-smoke, on summary's corpus).
 */
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static const char *const args0[] = { "tree", "--format=csv", NULL };
static const char *const args1[] = { "tree", "--callers=.", "--depth=3", "--min-percent=1",
				     "--by-thread", NULL };
static const char *const *const tree_lists[] = { args0, args1 };
static const char *const args2[] = { "flame", "--by-thread", "--weight=calls", NULL };
static const char *const *const flame_lists[] = { args2 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run_command(tt_cmd_tree, tree_lists, sizeof(tree_lists) / sizeof(tree_lists[0]), data,
			 size);
	fuzz_run_command(tt_cmd_flame, flame_lists, sizeof(flame_lists) / sizeof(flame_lists[0]),
			 data, size);
	return 0;
}
