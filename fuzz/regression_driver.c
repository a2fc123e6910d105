/* SPDX-License-Identifier: MIT */
/*
 * regression_driver.c - the plain main() that stands in for libFuzzer (zstd's
 * regression_driver.c): runs LLVMFuzzerTestOneInput() once on every file
 * named on the command line, and on every regular file of every directory
 * named (not recursive). Built with any compiler, so that `meson test`
 * replays the committed corpus and the regression inputs in every build
 * (suite fuzz-smoke). Exit 0 if every input ran; a crash, a sanitizer report
 * or the target's abort() fails the test. Prints each file's name before
 * running it (on fd 2, which the target leaves open), so a failure names its
 * input.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long nr_files;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		dprintf(STDERR_FILENO, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (cap - len < 65536) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		dprintf(STDERR_FILENO, "replay: %s: read error\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	dprintf(STDERR_FILENO, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	nr_files++;
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a directory in name order, so that runs are reproducible. */
static int replay_dir(const char *dir)
{
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0;
	int rc = 0;
	DIR *d = opendir(dir);

	if (!d) {
		dprintf(STDERR_FILENO, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue; /* ., .., and dot files such as .gitkeep */
		names = realloc(names, (nr + 1) * sizeof(*names));
		if (!names || asprintf(&names[nr], "%s/%s", dir, de->d_name) < 0)
			abort();
		nr++;
	}
	closedir(d);
	qsort(names, nr, sizeof(*names), compare_names);
	for (size_t i = 0; i < nr; i++) {
		struct stat st;

		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode) && replay_file(names[i]) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		dprintf(STDERR_FILENO, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			dprintf(STDERR_FILENO, "replay: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode) ? replay_dir(argv[i]) < 0
					       : replay_file(argv[i]) < 0) {
			rc = 1;
		}
	}
	dprintf(STDERR_FILENO, "replay: %lu file(s) ran\n", nr_files);
	return rc;
}
