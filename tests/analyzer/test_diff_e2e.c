/* SPDX-License-Identifier: MIT */
/*
 * test_diff_e2e.c - `tracetool diff` on real recordings of prog_diff.c:
 * two runs of one build are the same in every scope (exit 0 even with
 * --fail-on), and the build with a deliberate 25 % slowdown of `solve` is
 * slower there (exit 3 with --fail-on), whatever else runs on the machine:
 * the scopes wait on the clock, so only preemption is noise. Paths come
 * from meson: PROG_DIFF, PROG_DIFF_SLOW, TRACETOOL.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char path[3][128];

static void setup(void)
{
	for (int i = 0; i < 3; i++)
		snprintf(path[i], sizeof(path[i]), "/tmp/tt_%d_diff_e2e_%d.zst", (int)getpid(), i);
}

static void teardown(void)
{
	for (int i = 0; i < 3; i++)
		unlink(path[i]);
}

TestSuite(diff_e2e, .init = setup, .fini = teardown, .timeout = 240);

static void record(const char *env_prog, const char *out)
{
	const char *prog = getenv(env_prog);
	char cmd[1024];

	cr_assert(prog, "%s is not set", env_prog);
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT='%s' '%s'", out, prog);
	cr_assert_eq(system(cmd), 0, "%s failed", cmd);
}

/* The verdict of scope name in diff's CSV (the last field of its line). */
static const char *verdict_of(const char *csv, const char *name)
{
	static char v[16];
	char key[64];
	const char *p, *end, *comma;

	snprintf(key, sizeof(key), "\n%s,", name);
	p = strstr(csv, key);
	cr_assert(p, "no row for %s in %s", name, csv);
	end = strchr(p + 1, '\n');
	for (comma = end; comma > p && *comma != ','; comma--)
		;
	snprintf(v, sizeof(v), "%.*s", (int)(end - comma - 1), comma + 1);
	return v;
}

Test(diff_e2e, two_runs_of_one_build_are_same_and_a_25_percent_slowdown_is_slower)
{
	static const char *const names[] = { "step", "parse", "solve", "emit" };
	struct tu_result r;

	record("PROG_DIFF", path[0]);
	record("PROG_DIFF", path[1]);
	record("PROG_DIFF_SLOW", path[2]);

	r = tu_run("diff", "--format=csv", "--fail-on=p50:+10", "--fail-on=p90:+10",
		   "--fail-on=mean:+10", "--fail-on=total:+10", "--fail-on=calls:+0", path[0],
		   path[1], NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	for (size_t i = 0; i < 4; i++)
		cr_assert_str_eq(verdict_of(r.out, names[i]), "same", "%s: %s", names[i], r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);

	r = tu_run("diff", "--format=csv", "--fail-on=p50:+10", path[0], path[2], NULL);
	cr_assert_eq(r.status, 3, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_str_eq(verdict_of(r.out, "solve"), "slower", "%s", r.out);
	cr_assert_str_eq(verdict_of(r.out, "parse"), "same", "%s", r.out);
	cr_assert_str_eq(verdict_of(r.out, "emit"), "same", "%s", r.out);
	cr_assert(strstr(r.err, "tracetool: regression: solve: p50 +"), "%s", r.err);
	tu_result_free(&r);

	/* And back: the slow build against the base is faster, never exit 3. */
	r = tu_run("diff", "--format=csv", "--fail-on=p50:+10", path[2], path[0], NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_str_eq(verdict_of(r.out, "solve"), "faster", "%s", r.out);
	tu_result_free(&r);
}
