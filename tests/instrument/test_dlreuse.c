/* SPDX-License-Identifier: MIT */
/*
 * test_dlreuse.c - finding F16: in whole-program mode a library closed with
 * dlclose() and another mapped at its addresses keep their own function
 * names and counts (README, "Whole-program mode"; FORMAT.md §3.11), and a
 * library reopened at its old address keeps its sites rather than growing
 * the table. prog_dlreuse cycles two -finstrument-functions libraries
 * (dlreuse_a.c, dlreuse_b.c); tracetool's per-site summary must give each
 * function its exact calls in its own module. Paths come from meson.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recfmt.h"
#include "suite.h"
#include "testutil.h"

TU_TMPDIR_SUITE(dlreuse, dir, "rec_dlreuse", .timeout = 120);

static void skip_unless_hooked(void)
{
	/* Only librectrace.so stands before dlclose() (rec(3)); the static
	 * library keeps naming a function by its address alone. */
	if (strcmp(tu_env("DLCLOSE_HOOKED"), "1") != 0)
		cr_skip_test("librectrace.so has no dlclose() of its own on this platform");
}

struct run {
	int bases_a, bases_b, reused;
};

/* prog_dlreuse ROUNDS MODE PATTERN into trace; what it says of the addresses. */
static struct run record(const char *trace, int rounds, const char *mode, const char *pattern)
{
	char cmd[4096], *out;
	struct run r = { -1, -1, -1 };
	int status;

	snprintf(cmd, sizeof(cmd), "env REC_OUTPUT='%s' '%s' '%s' '%s' %d %s %s", trace,
		 tu_env("PROG_DLREUSE"), tu_env("DLREUSE_A"), tu_env("DLREUSE_B"), rounds, mode,
		 pattern);
	out = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "%s: status %d", cmd, status);
	cr_assert_eq(sscanf(out, "bases_a %d bases_b %d reused %d", &r.bases_a, &r.bases_b,
			    &r.reused), 3, "%s", out);
	free(out);
	return r;
}

/* The CSV row of fn ("fn,calls,...,site"), or NULL. */
static const char *row_of(const char *csv, const char *fn)
{
	static char key[256];
	const char *p;

	snprintf(key, sizeof(key), "\n%s,", fn);
	p = strstr(csv, key);
	return p ? p + 1 : NULL;
}

/* fn's calls, and its row's last field (the module, or file:line) in site. */
static long calls_in(const char *csv, const char *fn, char *site, size_t site_bytes)
{
	const char *row = row_of(csv, fn), *end, *comma;

	site[0] = '\0';
	if (!row)
		return -1;
	end = strchr(row, '\n');
	if (!end)
		end = row + strlen(row);
	for (comma = end; comma > row && comma[-1] != ','; comma--)
		;
	snprintf(site, site_bytes, "%.*s", (int)(end - comma), comma);
	return strtol(row + strlen(fn) + 1, NULL, 10);
}

static void assert_calls(const char *csv, const char *fn, long calls, const char *site)
{
	char got[256];

	const char *file;

	cr_assert_eq(calls_in(csv, fn, got, sizeof(got)), calls, "%s calls\n%s", fn, csv);
	/* A scope's site is its file as the compiler saw it and a line: the
	 * file's name is what counts here ("name.c:" matches any line). */
	file = strrchr(got, '/');
	file = file ? file + 1 : got;
	if (site[strlen(site) - 1] == ':')
		cr_assert(strncmp(file, site, strlen(site)) == 0 &&
				  strspn(file + strlen(site), "0123456789") == strlen(file + strlen(site)),
			  "%s is in %s\n%s", fn, site, csv);
	else
		cr_assert_str_eq(got, site, "%s is in %s\n%s", fn, site, csv);
}

/* The FUNC records of the file (FORMAT.md §3.11), and how many name no module. */
static void count_funcs(const char *trace, unsigned *nr, unsigned *nr_unmoduled)
{
	struct recfmt_reader *rd;
	struct recfmt_error err;
	const uint8_t *data;
	size_t len;

	*nr = *nr_unmoduled = 0;
	cr_assert_eq(recfmt_reader_open(&rd, trace, &err), RECFMT_OK, "%s", err.message);
	while (recfmt_reader_next(rd, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor cur;
		struct recfmt_record rec;

		recfmt_cursor_init(&cur, data, len);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			struct recfmt_func f;

			if (rec.type != RECFMT_FUNC)
				continue;
			cr_assert_eq(recfmt_decode_func(&rec, &f, &err), RECFMT_OK);
			(*nr)++;
			if (!f.module)
				(*nr_unmoduled)++;
		}
	}
	recfmt_reader_close(rd);
}

static void check_cycled(const char *mode)
{
	char trace[TU_PATH_MAX];
	struct run run;
	struct tu_result r;
	unsigned nr_funcs, nr_unmoduled;

	tu_join(trace, dir, mode);
	run = record(trace, 300, mode, "ab");
	/* Else the run tests nothing: the case is a function where another was. */
	cr_assert_gt(run.reused, 0, "the libraries' functions never met at one address");
	r = tu_run("summary", "--by-site", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_calls(r.out, "alpha_run", 200, "libdlreuse_a.so");
	assert_calls(r.out, "alpha_leaf", 1400, "libdlreuse_a.so");
	assert_calls(r.out, "beta_run", 100, "libdlreuse_b.so");
	assert_calls(r.out, "beta_leaf", 700, "libdlreuse_b.so");
	assert_calls(r.out, "alpha_scope", 200, "dlreuse_a.c:");
	assert_calls(r.out, "beta_scope", 100, "dlreuse_b.c:");
	cr_assert_null(row_of(r.out, "beta_pad1"), "beta_pad1 never ran\n%s", r.out);
	cr_assert_null(row_of(r.out, "alpha_pad"), "alpha_pad never ran\n%s", r.out);
	cr_assert_eq(tu_nr_lines(r.out), 7, "nothing else\n%s", r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	/* A site per function and place each library was mapped at, no more. */
	count_funcs(trace, &nr_funcs, &nr_unmoduled);
	cr_assert_leq(nr_funcs, 2u * (unsigned)(run.bases_a + run.bases_b), "%u FUNC records",
		      nr_funcs);
	cr_assert_eq(nr_unmoduled, 0u, "every FUNC names its module");
}

/* Each round on a new thread: the sites' table alone tells the libraries apart. */
Test(dlreuse, F16_library_mapped_where_a_closed_one_was_keeps_its_names_threads,
     .timeout = 120)
{
	skip_unless_hooked();
	check_cycled("thread");
}

/* All on one thread: its cache of sites by address must not outlive the library. */
Test(dlreuse, F16_library_mapped_where_a_closed_one_was_keeps_its_names_one_thread,
     .timeout = 120)
{
	skip_unless_hooked();
	check_cycled("main");
}

/* A plugin host reopening one library: the same sites each time, whatever the rounds. */
Test(dlreuse, F16_library_reopened_at_its_old_address_keeps_its_sites, .timeout = 120)
{
	char trace[TU_PATH_MAX];
	struct run run;
	struct tu_result r;
	unsigned nr_funcs, nr_unmoduled;

	skip_unless_hooked();
	tu_join(trace, dir, "reopen.zst");
	run = record(trace, 200, "main", "a");
	r = tu_run("summary", "--by-site", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_calls(r.out, "alpha_run", 200, "libdlreuse_a.so");
	assert_calls(r.out, "alpha_leaf", 1400, "libdlreuse_a.so");
	assert_calls(r.out, "alpha_scope", 200, "dlreuse_a.c:");
	cr_assert_eq(tu_nr_lines(r.out), 4, "nothing else\n%s", r.out);
	tu_result_free(&r);
	count_funcs(trace, &nr_funcs, &nr_unmoduled);
	cr_assert_eq(nr_funcs, 2u * (unsigned)run.bases_a, "%u FUNC records for %d addresses",
		     nr_funcs, run.bases_a);
	cr_assert_eq(nr_unmoduled, 0u, "every FUNC names its module");
}
