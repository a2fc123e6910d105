/* SPDX-License-Identifier: MIT */
/*
 * prog_tmpleft.c - for test_testutil.c: makes a file where a test would,
 * prints its path and exits without removing it, as a test that forgets to
 * or fails first does; its exit must remove it (testutil.h; F29, check4).
 * Usage: prog_tmpleft path   a file named by tu_path()
 *        prog_tmpleft stack  a file in a tu_tmpdir() whose name was an
 *                            array on the stack of a function since returned
 *                            (its memory then reused)
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static void make_file(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs("left\n", f);
		fclose(f);
	}
}

/* A test's own directory, on its stack, and a file in it. */
static __attribute__((noinline)) void in_stack_dir(char path[TU_PATH_MAX])
{
	char dir[TU_TMPDIR_MAX];

	tu_tmpdir(dir, "tt_tmpleft");
	make_file(tu_join(path, dir, "left.zst"));
}

/* The stack in_stack_dir() used, written over, as later calls do. */
static __attribute__((noinline)) void reuse_stack(void)
{
	volatile char big[16384];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = 'x';
}

int main(int argc, char **argv)
{
	char path[TU_PATH_MAX];

	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "path") == 0) {
		snprintf(path, sizeof(path), "%s", tu_path(0, "left.zst"));
		make_file(path);
	} else if (strcmp(argv[1], "stack") == 0) {
		in_stack_dir(path);
	} else {
		return 2;
	}
	reuse_stack();
	printf("%s\n", path);
	return 0;
}
