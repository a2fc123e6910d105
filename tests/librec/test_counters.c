/* SPDX-License-Identifier: MIT */
/*
 * test_counters.c - REC_COUNTERS and REC_LIVE as a user meets them: an
 * instrumented program (prog_counters) runs with the variables set, and
 * `tracetool summary --format=csv` must show plausible per-scope counts of
 * software events (page faults of a function that first-touches 64 pages a
 * call, context switches of one that sleeps), one clear stderr line for an
 * event the machine lacks or a name librec does not know, and the live
 * report on stderr while the program runs. Where the kernel refuses
 * perf_event_open altogether (a container's seccomp profile, paranoid 3),
 * the tests that need counters are skipped, not failed.
 * Paths from meson: PROG_COUNTERS, TRACETOOL.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char trace[128], errf[128];

static void setup(void)
{
	snprintf(trace, sizeof(trace), "/tmp/rec_ctr_%d.zst", (int)getpid());
	snprintf(errf, sizeof(errf), "/tmp/rec_ctr_%d.err", (int)getpid());
}

static void cleanup(void)
{
	unlink(trace);
	unlink(errf);
}

TestSuite(counters, .init = setup, .fini = cleanup, .timeout = 60);

static char *slurp(const char *path)
{
	char *buf = tu_read_file(path, NULL);

	cr_assert_not_null(buf, "%s", path);
	return buf;
}

/* Runs prog_counters MODE with env; returns its stderr (malloc'd). */
static char *run_prog(const char *env, const char *mode)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "REC_OUTPUT=%s %s %s %s 2>%s", trace, env,
		 getenv("PROG_COUNTERS"), mode, errf);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	return slurp(errf);
}

static char *summary_csv(const char *extra)
{
	char cmd[1024], *buf;
	int status;

	snprintf(cmd, sizeof(cmd), "%s summary --format=csv %s %s", getenv("TRACETOOL"), extra,
		 trace);
	buf = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "%s", cmd);
	return buf;
}

/* The value of column `col` in the row of `fn` (a string, "" if empty). */
static void cell(const char *csv, const char *fn, const char *col, char *out, size_t n)
{
	const char *eol = strchr(csv, '\n'), *row;
	char key[64];
	int idx = 0, k = 0;

	cr_assert_not_null(eol);
	for (const char *p = csv; p < eol; p++) {
		if (strncmp(p, col, strlen(col)) == 0 && (p == csv || p[-1] == ',') &&
		    (p[strlen(col)] == ',' || p[strlen(col)] == '\n'))
			break;
		idx += *p == ',';
	}
	snprintf(key, sizeof(key), "\n%s,", fn);
	row = strstr(csv, key);
	cr_assert_not_null(row, "no row %s in\n%s", fn, csv);
	for (row++; k < idx && *row && *row != '\n'; row++)
		k += *row == ',';
	snprintf(out, n, "%.*s", (int)strcspn(row, ",\n"), row);
}

static double num(const char *csv, const char *fn, const char *col)
{
	char buf[64];

	cell(csv, fn, col, buf, sizeof(buf));
	cr_assert(buf[0], "empty %s of %s in\n%s", col, fn, csv);
	return strtod(buf, NULL);
}

/* Skips the test when this machine gives no perf events at all. */
static void need_software_events(const char *err)
{
	if (strstr(err, "page-faults: not") || strstr(err, "context-switches: not"))
		cr_skip_test("perf_event_open refused here: %s", err);
}

Test(counters, page_faults_of_a_function_touching_fresh_pages_are_counted_per_call)
{
	char *err = run_prog("REC_COUNTERS=page-faults,context-switches", "counters");
	char *csv;

	need_software_events(err);
	cr_assert_str_eq(err, "");
	csv = summary_csv("");
	cr_assert(strstr(csv, ",errors,page-faults_total,page-faults_mean,"
			      "context-switches_total,context-switches_mean\n"),
		  "%s", csv);
	cr_assert_eq(num(csv, "touch_pages", "calls"), 20);
	/* 64 first touches a call: one fault each, give or take the mmap's. */
	cr_assert_geq(num(csv, "touch_pages", "page-faults_mean"), 0.9 * 64, "%s", csv);
	cr_assert_leq(num(csv, "touch_pages", "page-faults_mean"), 2.0 * 64, "%s", csv);
	cr_assert_geq(num(csv, "touch_pages", "page-faults_total"), 0.9 * 64 * 20);
	/* Sleeping faults nothing in. */
	cr_assert_leq(num(csv, "nap", "page-faults_mean"), 4, "%s", csv);
	free(csv);
	free(err);
	/* And the file is intact, counter records included. */
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s check %s >/dev/null", getenv("TRACETOOL"), trace);
	cr_assert_eq(system(cmd), 0);
}

Test(counters, context_switches_of_a_function_that_sleeps_are_at_least_one_per_call)
{
	char *err = run_prog("REC_COUNTERS=context-switches", "counters");
	char *csv;

	need_software_events(err);
	csv = summary_csv("");
	cr_assert_eq(num(csv, "nap", "calls"), 20);
	cr_assert_geq(num(csv, "nap", "context-switches_mean"), 1.0, "%s", csv);
	cr_assert_geq(num(csv, "nap", "context-switches_total"), 20, "%s", csv);
	/* Per thread, the same figures. */
	free(csv);
	csv = summary_csv("--by-thread");
	cr_assert(strstr(csv, "thread,function,calls,"), "%s", csv);
	free(csv);
	free(err);
}

/*
 * A host that puts a pipe of its own at the number of librec's counter
 * descriptor (dup2()): each probe's read(2) of the group took the host's
 * bytes from its pipe (or, blocking, would have waited on it). After a
 * writer pass (rec_flush()) librec must read it no more, and say so once.
 */
Test(counters, a_host_s_file_at_the_counter_descriptor_is_never_read)
{
	char cmd[1024], out[256] = "";
	int status;
	FILE *f;
	char *err;

	snprintf(cmd, sizeof(cmd), "REC_OUTPUT=%s REC_COUNTERS=page-faults %s reuse 2>%s", trace,
		 getenv("PROG_COUNTERS"), errf);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	fread(out, 1, sizeof(out) - 1, f);
	status = pclose(f);
	err = slurp(errf);
	need_software_events(err);
	cr_assert_eq(status, 0, "%s: %s", cmd, out);
	cr_assert(strstr(out, "host bytes 16\n"), "the host lost its pipe's bytes: %s", out);
	cr_assert(strstr(err, "rec: REC_COUNTERS: the program closed or replaced librec's counter "
			      "descriptor "),
		  "%s", err);
	cr_assert_null(strstr(strstr(err, "rec: ") + 1, "rec: "), "one line: %s", err);
	free(err);
}

Test(counters, unsupported_event_gives_one_clear_line_and_the_others_are_recorded)
{
	char *err = run_prog("REC_COUNTERS=instructions,page-faults", "counters");
	const char *want = "rec: REC_COUNTERS: instructions: not supported on this machine (";
	char *csv;

	need_software_events(err);
	csv = summary_csv("");
	if (err[0] == '\0') {
		/* A machine with a PMU: both are recorded. */
		cr_assert(strstr(csv, ",instructions_total,instructions_mean,page-faults_total,"),
			  "%s", csv);
	} else {
		cr_assert_eq(strncmp(err, want, strlen(want)), 0, "stderr: %s", err);
		cr_assert(strstr(err, "); recording the others\n"), "stderr: %s", err);
		cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
		cr_assert(strstr(csv, ",errors,page-faults_total,page-faults_mean\n"), "%s", csv);
	}
	cr_assert_geq(num(csv, "touch_pages", "page-faults_mean"), 0.9 * 64, "%s", csv);
	free(csv);
	free(err);
}

Test(counters, unknown_counter_name_gives_one_line_and_the_others_are_recorded)
{
	char *err = run_prog("REC_COUNTERS=page-fault,page-faults", "counters");
	const char *want = "rec: REC_COUNTERS: 'page-fault' is not a counter name (known: cycles ";
	char *csv;

	need_software_events(err);
	cr_assert_eq(strncmp(err, want, strlen(want)), 0, "stderr: %s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
	csv = summary_csv("");
	cr_assert(strstr(csv, ",errors,page-faults_total,page-faults_mean\n"), "%s", csv);
	free(csv);
	free(err);
}

Test(counters, live_report_appears_on_stderr_while_the_program_runs)
{
	char *err = run_prog("REC_LIVE=100ms", "live");

	/* At least one report line for thread "main" naming both scopes. */
	cr_assert(strstr(err, "rec: live "), "stderr: %s", err);
	cr_assert(strstr(err, " main: live_outer "), "stderr: %s", err);
	cr_assert(strstr(err, "live_busy "), "stderr: %s", err);
	cr_assert(strstr(err, "% "), "stderr: %s", err);
	cr_assert(strstr(err, " calls"), "stderr: %s", err);
	free(err);
}

Test(counters, bad_live_period_gives_one_line_and_recording_goes_on)
{
	char *err = run_prog("REC_LIVE=fast", "counters");
	char *csv;

	cr_assert_str_eq(err, "rec: bad REC_LIVE 'fast' (want a period such as 1s or 500ms, "
			      "10ms to 1h); no live report\n");
	csv = summary_csv("");
	cr_assert_eq(num(csv, "nap", "calls"), 20);
	free(csv);
	free(err);
}

Test(counters, instrumented_functions_take_the_counted_path_with_exact_calls)
{
	char cmd[1024];
	char *err, *csv;

	/* prog_instr (tests/instrument): every kind of instrumented function. */
	if (!getenv("PROG_INSTR") || !getenv("PROG_INSTR")[0])
		cr_skip_test("no C++ compiler: prog_instr not built");
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT=%s REC_COUNTERS=page-faults %s %s 2>%s", trace,
		 getenv("PROG_INSTR"), getenv("DLMOD"), errf);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	err = slurp(errf);
	need_software_events(err);
	csv = summary_csv("");
	cr_assert_eq(num(csv, "main", "calls"), 1, "%s", csv);
	cr_assert_eq(num(csv, "helper(int)", "calls"), 3, "%s", csv);
	cr_assert_eq(num(csv, "Foo::bar(int)", "calls"), 5, "%s", csv);
	cr_assert_eq(num(csv, "shlib_work", "calls"), 7, "%s", csv);
	cr_assert_eq(num(csv, "dl_work", "calls"), 11, "%s", csv);
	cr_assert_eq(num(csv, "manual_block", "calls"), 2, "%s", csv);
	cr_assert_geq(num(csv, "main", "page-faults_total"), 1, "%s", csv);
	cr_assert_eq(num(csv, "main", "errors"), 0, "%s", csv);
	snprintf(cmd, sizeof(cmd), "%s check %s >/dev/null", getenv("TRACETOOL"), trace);
	cr_assert_eq(system(cmd), 0);
	free(csv);
	free(err);
}
