/* SPDX-License-Identifier: MIT */
/*
 * fuzz_export.c - libFuzzer target: `tracetool export` on arbitrary bytes,
 * as Parquet and as CSV, into a scratch directory of this process (removed
 * at exit). Every input must give exit 0 or 1 with no sanitizer report,
 * leak or hang. Built with regression_driver.c, it replays files instead
 * (meson test, suite fuzz-smoke, on summary's corpus).
 */
#include <dirent.h>
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

/* Every file export wrote (its tables are more than the first four: samples, values,
 * instants, flows, args...), then the directory (F29, check4: it was left in /tmp). */
static void cleanup(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[384];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
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
