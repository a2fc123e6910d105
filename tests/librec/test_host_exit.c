/* SPDX-License-Identifier: MIT */
/*
 * test_host_exit.c - a host whose main() ends with pthread_exit() ends when
 * its last thread does (POSIX), also with librec loaded. librec's writer
 * thread, made when the library is loaded (README, "Signal handlers and
 * outputs"), is a thread like the host's: the process never ended, and
 * ignored SIGTERM (the writer blocks every signal, the main thread is gone),
 * so that only SIGKILL ended it; with LD_PRELOAD alone, recording nothing.
 * The trace must hold every scope and end cleanly.
 * Paths from meson: PROG_PTHREAD_EXIT, TRACETOOL.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"

static const char *env_or_fail(const char *name)
{
	const char *v = getenv(name);

	cr_assert_not_null(v, "%s is not set (meson sets it)", name);
	return v;
}

Test(host_exit, main_ending_with_pthread_exit_ends_the_process_and_the_trace, .timeout = 120)
{
	char out[128], setting[160];
	const char *argv[] = { env_or_fail("PROG_PTHREAD_EXIT"), NULL };
	const char *env[] = { setting, NULL };
	const char *check[] = { env_or_fail("TRACETOOL"), "check", out, NULL };
	struct tu_child c;

	snprintf(out, sizeof(out), "/tmp/rec_host_exit_%d.zst", (int)getpid());
	snprintf(setting, sizeof(setting), "REC_OUTPUT=%s", out);
	tu_run_child(argv, env, 20000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d (-1: still running after 20 s); stderr: %s", c.status,
		     c.err);
	tu_run_child(check, NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "check: %s%s", c.out, c.err);
	cr_assert(strstr(c.out, ": ok (") && strstr(c.out, " 6000 events"), "check: %s", c.out);
	unlink(out);
}
