/* SPDX-License-Identifier: MIT */
/*
 * test_diff_e2e.c - `tracetool diff` on real recordings of prog_diff.c,
 * three runs a side: runs of one build are the same in every scope (exit 0
 * even with --fail-on), and the build with a deliberate 25 % slowdown of
 * `solve` is slower there (exit 3 with --fail-on), whatever else runs on the
 * machine; one run a side finds it too, with a warning. The scopes wait on
 * the clock, so only preemption is noise. Paths come
 * from meson: PROG_DIFF, PROG_DIFF_SLOW, TRACETOOL.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* 0-2: the build, 3-5: the build again, 6-8: the slower build. */
#define NR_PATHS 9
static char path[NR_PATHS][64];

static void setup(void)
{
	for (int i = 0; i < NR_PATHS; i++)
		snprintf(path[i], sizeof(path[i]), "/tmp/tt_%d_diff_e2e_%d.zst", (int)getpid(), i);
}

static void teardown(void)
{
	for (int i = 0; i < NR_PATHS; i++)
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

/* The verdict of scope name in diff's CSV. */
static const char *verdict_of(const char *csv, const char *name)
{
	static char v[16];
	char key[64];
	const char *p, *end, *comma;

	snprintf(key, sizeof(key), "\n%s,", name);
	p = strstr(csv, key);
	cr_assert(p, "no row for %s in %s", name, csv);
	end = strchr(p + 1, '\n');
	/* verdict,runs_base,runs_new: the third field from the end. */
	comma = end;
	for (int k = 0; k < 3; k++) {
		end = comma;
		for (comma = end - 1; comma > p && *comma != ','; comma--)
			;
	}
	snprintf(v, sizeof(v), "%.*s", (int)(end - comma - 1), comma + 1);
	return v;
}

/* diff OPTS... BASE(3 runs from a) -- NEW(3 runs from b). */
static struct tu_result diff3(const char *const *opts, int a, int b)
{
	const char *args[32];
	size_t n = 0;

	args[n++] = "diff";
	args[n++] = "--format=csv";
	while (*opts)
		args[n++] = *opts++;
	for (int i = 0; i < 3; i++)
		args[n++] = path[a + i];
	args[n++] = "--";
	for (int i = 0; i < 3; i++)
		args[n++] = path[b + i];
	args[n] = NULL;
	return tu_runv(args);
}

Test(diff_e2e, runs_of_one_build_are_same_and_a_25_percent_slowdown_is_slower)
{
	static const char *const names[] = { "step", "parse", "solve", "emit" };
	static const char *const all_rules[] = { "--fail-on=p50:+10", "--fail-on=p90:+10",
						 "--fail-on=mean:+10", "--fail-on=total:+10",
						 "--fail-on=calls:+0", NULL };
	static const char *const p50_rule[] = { "--fail-on=p50:+10%", NULL };
	struct tu_result r;

	for (int i = 0; i < NR_PATHS; i++)
		record(i < 6 ? "PROG_DIFF" : "PROG_DIFF_SLOW", path[i]);

	/* A real recording carries the clock step librec measured at start. */
	r = tu_run("info", "--format=json", path[0], NULL);
	cr_assert(strstr(r.out, "\"clock_step_measured\":true"), "%s", r.out);
	tu_result_free(&r);

	r = diff3(all_rules, 0, 3);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	for (size_t i = 0; i < 4; i++)
		cr_assert_str_eq(verdict_of(r.out, names[i]), "same", "%s: %s", names[i], r.out);
	cr_assert(strstr(r.out, ",same,3,3\n"), "%s", r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);

	r = diff3(p50_rule, 0, 6);
	cr_assert_eq(r.status, 3, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_str_eq(verdict_of(r.out, "solve"), "slower", "%s", r.out);
	cr_assert_str_eq(verdict_of(r.out, "parse"), "same", "%s", r.out);
	cr_assert_str_eq(verdict_of(r.out, "emit"), "same", "%s", r.out);
	cr_assert(strstr(r.err, "tracetool: regression: solve: p50 +"), "%s", r.err);
	cr_assert(strstr(r.err, "rule --fail-on=p50:+10%; runs 3/3)"), "%s", r.err);
	tu_result_free(&r);

	/* And back: the slow build against the base is faster, never exit 3. */
	r = diff3(p50_rule, 6, 0);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_str_eq(verdict_of(r.out, "solve"), "faster", "%s", r.out);
	tu_result_free(&r);

	/* One run a side: still found, with the warning that run-to-run noise
	 * is not accounted for. */
	r = tu_run("diff", "--format=csv", "--fail-on=p50:+10", path[0], path[6], NULL);
	cr_assert_eq(r.status, 3, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_str_eq(verdict_of(r.out, "solve"), "slower", "%s", r.out);
	cr_assert_str_eq(tu_line(r.err, 0),
			 "tracetool: warning: one run per side: --fail-on cannot account for "
			 "run-to-run noise (record each side several times: diff BASE... -- "
			 "NEW...)");
	tu_result_free(&r);
}
