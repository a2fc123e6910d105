/* SPDX-License-Identifier: MIT */
/*
 * test_testutil.c - what the tests' helpers promise (testutil.h): a file a
 * test leaves in tu_path()'s directory or in a tu_tmpdir() is gone when its
 * process exits, whether it removed it or not. F29 (check4): tests that did
 * not (hostile::F18_standard_output_that_is_an_input_is_refused,
 * record::record_names_the_file_of_a_forked_child, ...) left hundreds of
 * files in /tmp. prog_tmpleft (PROG_TMPLEFT) makes the file and exits.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

TestSuite(testutil, .timeout = 60);

/*
 * Runs prog_tmpleft MODE; the path of the file it left, in path, and
 * whether that file, or the directory it was in, is still there. Removes
 * what is left, so that a failure leaves nothing either.
 */
static bool left_behind(const char *mode, char path[TU_PATH_MAX])
{
	const char *prog = getenv("PROG_TMPLEFT");
	char cmd[TU_PATH_MAX + 64], dir[TU_PATH_MAX], *out, *slash;
	bool left;
	int status;

	cr_assert_not_null(prog, "PROG_TMPLEFT is not set (run through meson test)");
	snprintf(cmd, sizeof(cmd), "'%s' %s", prog, mode);
	out = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "%s: status %d", cmd, status);
	cr_assert(strncmp(out, "/tmp/", 5) == 0 && strchr(out, '\n'), "%s", out);
	*strchr(out, '\n') = '\0';
	snprintf(path, TU_PATH_MAX, "%s", out);
	free(out);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	left = access(path, F_OK) == 0 || (strcmp(dir, "/tmp") != 0 && access(dir, F_OK) == 0);
	unlink(path);
	if (strcmp(dir, "/tmp") != 0)
		tu_rm_rf(dir);
	return left;
}

Test(testutil, F29_a_file_a_test_leaves_at_its_tu_path_is_removed_at_exit)
{
	char path[TU_PATH_MAX];

	cr_assert_not(left_behind("path", path), "%s was left behind", path);
}

Test(testutil, F29_a_tu_tmpdir_named_on_a_returned_stack_is_removed_at_exit)
{
	char path[TU_PATH_MAX];

	cr_assert_not(left_behind("stack", path), "%s was left behind", path);
}
