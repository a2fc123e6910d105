/* SPDX-License-Identifier: MIT */
/*
 * test_golden.c - every tracetool command on every golden trace of format
 * version 1 (the .zst files of tests/golden/v1), compared exactly with
 * v1/expected/<trace>.<command>.txt: the exit code, stderr and stdout, with
 * the golden folder's path shown as @GOLDEN@ and the project version as
 * @VERSION@. Future readers must keep reading these files the same way.
 * summary_table is the table as a pipe gets it: one line per row, whatever
 * $COLUMNS. perfetto and export, whose outputs are files, are compared by
 * convert.sh (decoded, read back).
 *
 * GOLDEN_UPDATE=1 rewrites the expected files instead of comparing (review
 * the diff before committing it, as with zstd's cli-tests).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

struct golden_case {
	const char *trace;
	const char *command; /* file name part */
	const char *args[4];
};

#define BASE "@GOLDEN@/clean_three_threads.zst"

#define CASES(trace)                                                                       \
	{ trace, "summary", { "summary", "--format=csv", NULL } },                          \
	{ trace, "summary_table", { "summary", "--by-thread", NULL } },                    \
	{ trace, "histogram", { "histogram", "--format=csv", NULL } },                     \
	{ trace, "chrome", { "chrome", NULL } },                                           \
	{ trace, "info", { "info", "--format=json", NULL } },                              \
	{ trace, "check", { "check", NULL } },                                             \
	{ trace, "tree", { "tree", NULL } },                                               \
	{ trace, "tree_csv", { "tree", "--format=csv", "--by-thread", NULL } },            \
	{ trace, "flame", { "flame", NULL } },                                             \
	{ trace, "diff", { "diff", "--format=csv", BASE, NULL } },                         \
	{ trace, "diff_table", { "diff", BASE, NULL } },                                   \
	{ trace, "values", { "values", "--format=csv", NULL } },                           \
	{ trace, "flows", { "flows", "--format=csv", NULL } }

/*
 * annotated.zst (format 1.2) holds every annotation and two sites of one
 * name; diff's BASE is clean_three_threads (so every row is new or gone).
 */
static struct golden_case cases[] = {
	CASES("clean_three_threads"),
	CASES("truncated_mid_frame"),
	CASES("corrupt_middle_frame"),
	CASES("bad_checksum"),
	CASES("annotated"),
	{ "annotated", "summary_arg", { "summary", "--format=csv", "--arg=bytes", NULL } },
	{ "annotated", "values_table", { "values", NULL } },
	{ "annotated", "flows_table", { "flows", NULL } },
};

/* Appends src to *buf with every `from` replaced by `to`. */
static void append_replaced(char **buf, size_t *len, const char *src, const char *from,
			    const char *to)
{
	size_t nf = strlen(from), nt = strlen(to);

	while (*src) {
		const char *hit = nf ? strstr(src, from) : NULL;
		size_t n = hit ? (size_t)(hit - src) : strlen(src);

		*buf = realloc(*buf, *len + n + nt + 1);
		memcpy(*buf + *len, src, n);
		*len += n;
		src += n;
		if (hit) {
			memcpy(*buf + *len, to, nt);
			*len += nt;
			src += nf;
		}
		(*buf)[*len] = '\0';
	}
}

static char *normalise(const char *text, const char *dir, const char *version)
{
	char *a = calloc(1, 1), *b = calloc(1, 1);
	size_t la = 0, lb = 0;

	append_replaced(&a, &la, text, dir, "@GOLDEN@");
	append_replaced(&b, &lb, a, version, "@VERSION@");
	free(a);
	return b;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	s[fread(s, 1, (size_t)n, f)] = '\0';
	fclose(f);
	return s;
}

/* Parameters are indices: Criterion may run each test in a new process,
 * where the cases' string pointers would not be valid. */
static int case_index[sizeof(cases) / sizeof(cases[0])];

ParameterizedTestParameters(golden, every_command_on_every_v1_trace_is_as_recorded)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		case_index[i] = (int)i;
	return cr_make_param_array(int, case_index, sizeof(case_index) / sizeof(case_index[0]));
}

ParameterizedTest(int *index, golden, every_command_on_every_v1_trace_is_as_recorded,
		  .timeout = 30)
{
	const struct golden_case *c = &cases[*index];
	const char *dir = getenv("GOLDEN_DIR"), *version = getenv("REC_VERSION");
	const char *args[8];
	char trace[4096], expected_path[4096], head[64], other[4][4096];
	struct tu_result r;
	char *out, *err, *got = NULL, *want;
	size_t n = 0, len = 0;

	cr_assert(dir && version, "GOLDEN_DIR and REC_VERSION come from meson");
	snprintf(trace, sizeof(trace), "%s/%s.zst", dir, c->trace);
	snprintf(expected_path, sizeof(expected_path), "%s/expected/%s.%s.txt", dir, c->trace,
		 c->command);
	for (; c->args[n]; n++) {
		/* @GOLDEN@/NAME: another trace of the folder (diff's BASE). */
		if (!strncmp(c->args[n], "@GOLDEN@/", 9)) {
			snprintf(other[n], sizeof(other[n]), "%s/%s", dir, c->args[n] + 9);
			args[n] = other[n];
		} else {
			args[n] = c->args[n];
		}
	}
	args[n++] = trace;
	args[n] = NULL;
	r = tu_runv(args);
	out = normalise(r.out, dir, version);
	err = normalise(r.err, dir, version);
	snprintf(head, sizeof(head), "exit %d\n--- stderr\n", r.status);
	append_replaced(&got, &len, head, "", "");
	append_replaced(&got, &len, err, "", "");
	append_replaced(&got, &len, "--- stdout\n", "", "");
	append_replaced(&got, &len, out, "", "");
	if (getenv("GOLDEN_UPDATE")) {
		FILE *f = fopen(expected_path, "wb");

		cr_assert(f, "cannot write %s", expected_path);
		fputs(got, f);
		fclose(f);
	} else {
		want = read_file(expected_path);
		cr_assert(want, "missing %s (run with GOLDEN_UPDATE=1)", expected_path);
		cr_assert_str_eq(got, want, "%s %s differs from %s", c->command, c->trace,
				 expected_path);
		free(want);
	}
	free(got);
	free(out);
	free(err);
	tu_result_free(&r);
}
