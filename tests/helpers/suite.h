/* SPDX-License-Identifier: MIT */
/*
 * suite.h - what the Criterion suites that run programs repeat, header
 * only: a suite whose every test has a new temporary directory of its own
 * (TU_TMPDIR_SUITE()), and tu_env(), a setting meson gives the test (a
 * program's path). Needs tu_dep (testutil.h) and Criterion.
 */
#ifndef TU_SUITE_H
#define TU_SUITE_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "testutil.h"

/*
 * TU_TMPDIR_SUITE(suite, dir, prefix, ...) - TestSuite(suite, ...) whose
 * tests each have their own directory: declares static char
 * dir[TU_TMPDIR_MAX], which the suite's .init makes (tu_tmpdir(dir,
 * prefix)) and its .fini removes with everything under it
 * (tu_tmpdir_remove()). The arguments after prefix, one at least, are
 * TestSuite()'s (.timeout = 120). A macro: Criterion's .init and .fini take
 * no argument, so each suite needs functions of its own.
 */
#define TU_TMPDIR_SUITE(suite, dir, prefix, ...) \
	static char dir[TU_TMPDIR_MAX];          \
	static void suite##_tmpdir_make(void)    \
	{                                        \
		tu_tmpdir(dir, prefix);          \
	}                                        \
	static void suite##_tmpdir_remove(void)  \
	{                                        \
		tu_tmpdir_remove(dir);           \
	}                                        \
	TestSuite(suite, .init = suite##_tmpdir_make, .fini = suite##_tmpdir_remove, __VA_ARGS__)

/* tu_env() - the environment variable name, which meson sets (a program's
 * path, a flag); fails the test if it is not set. Return: its value. */
static inline const char *tu_env(const char *name)
{
	const char *v = getenv(name);

	cr_assert_not_null(v, "%s is not set (run through meson test)", name);
	return v;
}

#endif /* TU_SUITE_H */
