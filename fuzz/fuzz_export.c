/* SPDX-License-Identifier: MIT */
/*
 * fuzz_export.c - libFuzzer target: `tracetool export` on arbitrary bytes,
 * as Parquet and as CSV, into a scratch directory of this process (removed
 * at exit). Every input must give exit 0 or 1 with no sanitizer report,
 * leak or hang. Built with regression_driver.c, it replays files instead
 * (meson test, suite fuzz-smoke, on summary's corpus).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "fuzz_common.h"

static char dir[64];
static const char *args0[] = { "export", "-o", dir, NULL };
static const char *args1[] = { "export", "--format=csv", "-o", dir, NULL };
static const char *const *arg_lists[] = { args0, args1 };

static void cleanup(void)
{
	static const char *const names[] = { "runs", "threads", "scopes", "activations" };
	char path[128];

	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s.parquet", dir, names[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s.csv", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_export_%d", (int)getpid());
		atexit(cleanup);
	}
	fuzz_run_command(tt_cmd_export, (const char *const *const *)arg_lists,
			 sizeof(arg_lists) / sizeof(arg_lists[0]), data, size);
	return 0;
}
