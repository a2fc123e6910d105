/* SPDX-License-Identifier: MIT */
/*
 * test_cli_e2e.c - the whole path as a user meets it: an instrumented
 * program (prog_nested, 4 threads) runs with REC_OUTPUT set, then
 * `tracetool summary --format=csv` must print tracetool(1)'s header and
 * exact calls per function. Paths come from meson: PROG_NESTED, TRACETOOL.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char out[256];

static void cleanup(void)
{
	unlink(out);
}

TestSuite(e2e, .fini = cleanup, .timeout = 60);

static long calls_of(const char *csv, const char *fn)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s,", fn);
	p = strstr(csv, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

Test(e2e, four_threads_nested_calls_are_exact_in_summary_csv)
{
	char cmd[1024];
	char *csv;
	int status;

	snprintf(out, sizeof(out), "/tmp/rec_e2e_%d.zst", (int)getpid());
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT=%s %s", out, getenv("PROG_NESTED"));
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s summary --format=csv %s", getenv("TRACETOOL"), out);
	csv = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "tracetool failed: %s", csv);
	cr_assert_eq(strncmp(csv, "function,calls,total_ns,self_ns,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns,errors\n",
			     strlen("function,calls,total_ns,self_ns,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns,errors\n")),
		     0, "header: %s", csv);
	cr_assert_eq(calls_of(csv, "outer"), 4000);
	cr_assert_eq(calls_of(csv, "middle"), 4000);
	cr_assert_eq(calls_of(csv, "block"), 4000);
	cr_assert_eq(calls_of(csv, "leaf"), 12000);
	cr_assert_eq(calls_of(csv, "recurse"), 20000);
	free(csv);

	/* And per thread: each worker did a quarter. */
	snprintf(cmd, sizeof(cmd), "%s summary --format=csv --by-thread --function='^outer$' %s",
		 getenv("TRACETOOL"), out);
	csv = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	for (int i = 0; i < 4; i++) {
		char row[64];
		snprintf(row, sizeof(row), "\nworker-%d,outer,1000,", i);
		cr_assert_not_null(strstr(csv, row), "no row %s in %s", row + 1, csv);
	}
	free(csv);
}

/* Runs prog_timed with REC_CLOCK=clock; its scopes must measure within its own bounds. */
static void check_timing(const char *clock)
{
	char cmd[1024], *outp, *csv, *row;
	unsigned long long lo, hi, sum, max_ns, total_ns;
	int status;

	snprintf(out, sizeof(out), "/tmp/rec_e2e_timed_%d.zst", (int)getpid());
	snprintf(cmd, sizeof(cmd), "REC_CLOCK=%s REC_OUTPUT=%s %s", clock, out,
		 getenv("PROG_TIMED"));
	outp = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	cr_assert_eq(sscanf(outp, "%llu %llu %llu", &lo, &hi, &sum), 3);
	snprintf(cmd, sizeof(cmd), "%s summary --format=csv --function='^nap$' %s",
		 getenv("TRACETOOL"), out);
	csv = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	row = strstr(csv, "\nnap,20,");
	cr_assert_not_null(row, "%s", csv);
	/* function,calls,total_ns,self_ns,min_ns,mean_ns,p50,p90,p99,max_ns,errors */
	cr_assert_eq(sscanf(row, "\nnap,20,%llu,%*u,%*u,%*u,%*u,%*u,%*u,%llu,0", &total_ns, &max_ns),
		     2);
	/* Each scope lies inside its outside measure, and sleeps at least 10 ms. */
	cr_assert_geq(total_ns, 20ull * 10000000ull);
	cr_assert_leq(total_ns, sum, "%s: traced %llu ns > measured outside %llu ns", clock,
		      total_ns, sum);
	cr_assert_leq(max_ns, hi);
	free(outp);
	free(csv);
}

Test(e2e, tsc_ticks_become_the_right_nanoseconds)
{
	check_timing("tsc");
}

Test(e2e, monotonic_ticks_become_the_right_nanoseconds)
{
	check_timing("monotonic");
}

Test(e2e, default_clock_is_tsc_exactly_where_it_is_invariant)
{
	char cmd[1024], *outp;
	int status;
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool constant = false, nonstop = false;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) == 0) {
			constant = strstr(line, " constant_tsc") != NULL;
			nonstop = strstr(line, " nonstop_tsc") != NULL;
			break;
		}
	}
	fclose(f);
	snprintf(out, sizeof(out), "/tmp/rec_e2e_clock_%d.zst", (int)getpid());
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT=%s %s >/dev/null && %s info --format=json %s", out,
		 getenv("PROG_TIMED"), getenv("TRACETOOL"), out);
	outp = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	cr_assert_not_null(strstr(outp, constant && nonstop ? "\"clock\":\"tsc\"" : "\"clock\":\"monotonic\""),
			   "%s", outp);
	free(outp);
}

/* The file names its program (MODULE, format 1.1): info says which, and
 * chrome names the process after it, as the viewers list processes. */
Test(e2e, info_and_chrome_name_the_traced_program)
{
	char cmd[1024], want[4200], real[4096];
	const char *prog = getenv("PROG_NESTED"), *base = strrchr(prog, '/');
	char *text;
	int status;

	cr_assert_not_null(realpath(prog, real));
	snprintf(out, sizeof(out), "/tmp/rec_e2e_prog_%d.zst", (int)getpid());
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT=%s %s", out, prog);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s info --format=json %s", getenv("TRACETOOL"), out);
	text = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "%s", text);
	snprintf(want, sizeof(want), ",\"program\":\"%s\"", real);
	cr_assert(strstr(text, want), "want %s in %s", want, text);
	free(text);
	snprintf(cmd, sizeof(cmd), "%s chrome %s", getenv("TRACETOOL"), out);
	text = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	snprintf(want, sizeof(want), "\"name\":\"process_name\",\"pid\":");
	cr_assert(strstr(text, want), "%.400s", text);
	snprintf(want, sizeof(want), ",\"tid\":0,\"args\":{\"name\":\"%s\"}}", base ? base + 1 : prog);
	cr_assert(strstr(text, want), "want %s in %.400s", want, text);
	free(text);
}

static unsigned long long field_of(const char *csv, const char *fn, int col)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s,", fn);
	p = strstr(csv, key);
	cr_assert_not_null(p, "no row %s in %s", fn, csv);
	p += strlen(key);
	while (col-- > 1)
		p = strchr(p, ',') + 1;
	return strtoull(p, NULL, 10);
}

/* A scope left by longjmp 10 times, then called 10 times normally. */
Test(e2e, a_scope_left_by_longjmp_does_not_spoil_its_later_calls)
{
	char cmd[1024], *csv, *json, *tree;
	int status;

	snprintf(out, sizeof(out), "/tmp/rec_e2e_lj_%d.zst", (int)getpid());
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT=%s %s", out, getenv("PROG_LONGJMP"));
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s summary --format=csv %s", getenv("TRACETOOL"), out);
	csv = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	/* calls, total, self, ..., errors (column 10) */
	cr_assert_eq(field_of(csv, "leaf", 1), 10, "%s", csv);
	cr_assert_gt(field_of(csv, "leaf", 2), 0, "%s", csv);
	cr_assert_eq(field_of(csv, "leaf", 2), field_of(csv, "leaf", 3), "%s", csv);
	cr_assert_leq(field_of(csv, "leaf", 2), field_of(csv, "main", 2), "%s", csv);
	cr_assert_eq(field_of(csv, "leaf", 10), 10, "%s", csv);
	cr_assert_eq(field_of(csv, "main", 1), 1, "%s", csv);
	cr_assert_eq(field_of(csv, "main", 10), 0, "%s", csv);
	snprintf(cmd, sizeof(cmd), "%s summary --format=json %s", getenv("TRACETOOL"), out);
	json = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	cr_assert_not_null(strstr(json, "\"errors\":10,\"left_without_exit\":10}"), "%s", json);
	/* The normal calls are main's children, not nested in the ghosts. */
	snprintf(cmd, sizeof(cmd), "%s tree --format=csv %s", getenv("TRACETOOL"), out);
	tree = tu_sh(cmd, &status);
	cr_assert_eq(status, 0);
	cr_assert_not_null(strstr(tree, "\nmain;leaf,1,10,"), "%s", tree);
	cr_assert_null(strstr(tree, "leaf;leaf"), "%s", tree);
	free(csv);
	free(json);
	free(tree);
}
