/* SPDX-License-Identifier: MIT */
/*
 * test_diff.c - `tracetool diff` on pairs of traces from tracegen whose
 * durations are drawn from known distributions (log-normal, with rare long
 * outliers, fixed seeds): a 10-30 % shift of a scope with a few hundred calls
 * is slower (or faster), two samples of one distribution are same, a tiny
 * shift on a huge sample is same (practical threshold), new and gone, the
 * CSV header, the row order, --fail-on and exit codes 1, 2 and 3
 * (tracetool(1), diff). Real programs are compared in test_diff_e2e.c.
 */
#include "ttest.h"

#include <criterion/parameterized.h>
#include <math.h>
#include <unistd.h>

static const char *base, *next;

static void setup(void)
{
	base = tu_path(0, "diff_base.zst");
	next = tu_path(1, "diff_new.zst");
}

static void teardown(void)
{
	if (getenv("DIFF_KEEP"))
		return;
	unlink(base);
	unlink(next);
}

TestSuite(diff, .init = setup, .fini = teardown, .timeout = 120);

#define DIFF_HEADER                                                                          \
	"function,calls_base,calls_new,total_base_ns,total_new_ns,total_change_percent,"    \
	"p50_base_ns,p50_new_ns,p50_change_percent,p90_base_ns,p90_new_ns,"                  \
	"p90_change_percent,p99_base_ns,p99_new_ns,p99_change_percent,verdict,runs_base,runs_new"

/* A scope of a synthetic trace: calls durations, log-normal around median_ns
 * with log-sd sigma, times factor; one call in outlier_every (0: none) is
 * 20x longer, as a preempted call is. */
struct scope {
	const char *name;
	unsigned calls;
	double median_ns, sigma, factor;
	unsigned outlier_every;
};

static uint64_t rng_state;

static double uniform(void)
{
	/* xorshift64*: deterministic across machines. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static double normal(void)
{
	double u = uniform(), v = uniform();

	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/*
 * Writes the scopes' calls on one thread, interleaved (call i of every scope
 * before call i + 1 of any), back to back with 100 ns gaps. ticks_per_ns 1
 * is the monotonic clock; otherwise a TSC at that rate.
 */
static void write_scopes(const char *path, const struct scope *s, size_t n, uint64_t seed,
			 double ticks_per_ns)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000, .pid = 7 };
	struct tg_trace *t;
	uint64_t now = 1000;
	unsigned most = 0;

	if (ticks_per_ns != 1) {
		cfg.clock = RECFMT_CLOCK_TSC;
		cfg.ticks_per_second = (uint64_t)(ticks_per_ns * 1e9);
	}
	t = tg_create(path, &cfg);
	cr_assert(t);
	rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t k = 0; k < n; k++) {
		cr_assert_eq(tg_site(t, (uint32_t)k + 1, s[k].name), 0);
		most = s[k].calls > most ? s[k].calls : most;
	}
	cr_assert_eq(tg_thread(t, 1, 100, "main"), 0);
	for (unsigned i = 0; i < most; i++) {
		for (size_t k = 0; k < n; k++) {
			double ns;

			if (i >= s[k].calls)
				continue;
			ns = s[k].median_ns * exp(s[k].sigma * normal()) * s[k].factor;
			if (s[k].outlier_every && i % s[k].outlier_every == s[k].outlier_every - 1)
				ns *= 20;
			cr_assert_eq(tg_enter(t, 1, (uint32_t)k + 1, now), 0);
			now += (uint64_t)(ns * ticks_per_ns) + 1;
			cr_assert_eq(tg_exit(t, 1, (uint32_t)k + 1, now), 0);
			now += (uint64_t)(100 * ticks_per_ns);
		}
	}
	cr_assert_eq(tg_finish(t, true), 0);
}

#define ONE_RUN_WARNING_LINE                                                                 \
	"tracetool: warning: one run per side: --fail-on cannot account for run-to-run noise " \
	"(record each side several times: diff BASE... -- NEW...)"
#define ONE_RUN_WARNING ONE_RUN_WARNING_LINE "\n"

struct diff_row {
	char name[64];
	uint64_t calls[2], total[2], p50[2];
	char total_change[32];
	char verdict[16];
};

/* Runs diff --format=csv BASE NEW with up to two more options. */
static struct tu_result diff_csv(const char *opt1, const char *opt2)
{
	struct tu_result r = tu_run("diff", "--format=csv", base, next, opt1, opt2, NULL);

	cr_assert(r.status == 0 || r.status == 3, "exit %d, stderr: %s", r.status, r.err);
	cr_assert_str_eq(tu_line(r.out, 0), DIFF_HEADER);
	return r;
}

static size_t parse_diff_csv(const char *csv, struct diff_row *rows, size_t max)
{
	size_t n = 0;

	for (unsigned i = 1; i < tu_nr_lines(csv) && n < max; i++) {
		char line[1024], *f[18], *p;
		struct diff_row *r = &rows[n++];
		int k = 0;

		snprintf(line, sizeof(line), "%s", tu_line(csv, i));
		for (p = line, f[k++] = p; *p && k < 18; p++)
			if (*p == ',') {
				*p = '\0';
				f[k++] = p + 1;
			}
		cr_assert_eq(k, 18, "bad csv line %s", tu_line(csv, i));
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%.63s", f[0]);
		r->calls[0] = strtoull(f[1], NULL, 10);
		r->calls[1] = strtoull(f[2], NULL, 10);
		r->total[0] = strtoull(f[3], NULL, 10);
		r->total[1] = strtoull(f[4], NULL, 10);
		snprintf(r->total_change, sizeof(r->total_change), "%.31s", f[5]);
		r->p50[0] = strtoull(f[6], NULL, 10);
		r->p50[1] = strtoull(f[7], NULL, 10);
		snprintf(r->verdict, sizeof(r->verdict), "%.15s", f[15]);
	}
	return n;
}

static const struct diff_row *row_named(const struct diff_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	cr_assert_fail("no row for %s", name);
	return NULL;
}

/* ---------------------------------------------------------------------- */

struct shift_case {
	double factor;
	unsigned calls;
	double sigma;
	/* No pointers: Criterion copies the cases into a re-executed runner. */
};

static struct shift_case shift_cases[] = {
	{ 1.10, 300, 0.10 }, { 1.20, 300, 0.20 }, { 1.30, 200, 0.30 },
	{ 1.25, 1500, 0.50 }, { 0.85, 300, 0.20 }, { 0.75, 200, 0.30 },
};

ParameterizedTestParameters(diff, shift_of_a_scope_with_a_few_hundred_calls_is_found)
{
	return cr_make_param_array(struct shift_case, shift_cases,
				   sizeof(shift_cases) / sizeof(shift_cases[0]));
}

/*
 * One scope shifted among unchanged ones (with outliers on both sides, and
 * different seeds for BASE and NEW): only that one gets the verdict. The
 * margins: a shift s of n calls per side with log-sd sigma gives a z of
 * about log(1 + s) / sigma * sqrt(n / 2); every case here is above 6, and
 * the p10 floors (whose sampling error is about three times larger) move
 * by the threshold with as large a margin (docs/ANALYZER.md, "diff").
 */
ParameterizedTest(struct shift_case *c, diff, shift_of_a_scope_with_a_few_hundred_calls_is_found)
{
	struct scope s[] = {
		{ "parse", c->calls, 20000, c->sigma, 1, 50 },
		{ "solve", c->calls, 50000, c->sigma, 1, 50 },
		{ "emit", c->calls, 8000, c->sigma, 1, 50 },
	};
	struct diff_row rows[8];
	struct tu_result r;
	size_t n;

	for (uint64_t seed = 1; seed <= 5; seed++) {
		write_scopes(base, s, 3, seed, 1);
		s[1].factor = c->factor;
		write_scopes(next, s, 3, seed + 100, 1);
		s[1].factor = 1;
		r = diff_csv(NULL, NULL);
		n = parse_diff_csv(r.out, rows, 8);
		cr_assert_eq(n, 3);
		cr_assert_str_eq(row_named(rows, n, "solve")->verdict,
				 c->factor > 1 ? "slower" : "faster",
				 "seed %" PRIu64 " x%.2f: %s", seed, c->factor, r.out);
		cr_assert_str_eq(row_named(rows, n, "parse")->verdict, "same", "%s", r.out);
		cr_assert_str_eq(row_named(rows, n, "emit")->verdict, "same", "%s", r.out);
		cr_assert_eq(row_named(rows, n, "solve")->calls[1], c->calls);
		tu_result_free(&r);
	}
}

/*
 * Two samples of the same distributions, from 3 to 100 000 calls, narrow
 * and wide, with outliers: nothing is flagged, over 30 seed pairs. The
 * verdicts are a family-wise test at 95 % (Holm), so with 7 scopes a flag
 * by chance is possible but rare; these fixed seeds must show none.
 */
Test(diff, two_samples_of_one_distribution_are_all_same)
{
	struct scope s[] = {
		{ "tiny", 3, 1000, 0.3, 1, 0 },	    { "few", 12, 5000, 0.5, 1, 0 },
		{ "some", 80, 20000, 0.2, 1, 10 },   { "hundreds", 400, 3000, 0.1, 1, 40 },
		{ "wide", 500, 10000, 1.0, 1, 25 },  { "many", 20000, 200, 0.3, 1, 100 },
		{ "huge", 100000, 80, 0.05, 1, 500 },
	};
	struct diff_row rows[8];
	struct tu_result r;

	for (uint64_t seed = 1; seed <= 30; seed++) {
		write_scopes(base, s, 7, seed, 1);
		write_scopes(next, s, 7, seed + 1000, 1);
		r = diff_csv("--fail-on=p90:+5", "--fail-on=total:+5");
		cr_assert_eq(r.status, 0, "seed %" PRIu64 ": %s%s", seed, r.out, r.err);
		cr_assert_eq(parse_diff_csv(r.out, rows, 8), 7);
		for (size_t i = 0; i < 7; i++)
			cr_assert_str_eq(rows[i].verdict,
					 strcmp(rows[i].name, "tiny") && strcmp(rows[i].name, "few")
						 ? "same"
						 : "too few calls",
					 "seed %" PRIu64 ": %s", seed, r.out);
		tu_result_free(&r);
	}
}

/* 2 % on 100 000 calls is very significant and not worth a verdict; with
 * --threshold=1 it is one. */
Test(diff, tiny_shift_on_a_huge_sample_is_same_unless_the_threshold_is_lower)
{
	struct scope s[] = { { "hot", 100000, 5000, 0.05, 1, 0 } };
	struct diff_row rows[2];
	struct tu_result r;

	write_scopes(base, s, 1, 1, 1);
	s[0].factor = 1.02;
	write_scopes(next, s, 1, 2, 1);
	r = diff_csv(NULL, NULL);
	cr_assert_eq(parse_diff_csv(r.out, rows, 2), 1);
	cr_assert_str_eq(rows[0].verdict, "same", "%s", r.out);
	tu_result_free(&r);
	r = diff_csv("--threshold=1", NULL);
	cr_assert_eq(parse_diff_csv(r.out, rows, 2), 1);
	cr_assert_str_eq(rows[0].verdict, "slower", "%s", r.out);
	tu_result_free(&r);
}

/* A TSC file at 2.5 ticks/ns against a monotonic one: durations compare in
 * ns, so the same distribution is same and a shift is still found. */
Test(diff, files_with_different_clocks_compare_in_nanoseconds)
{
	struct scope s[] = { { "a", 300, 20000, 0.2, 1, 0 }, { "b", 300, 4000, 0.2, 1, 0 } };
	struct diff_row rows[4];
	struct tu_result r;
	size_t n;

	write_scopes(base, s, 2, 1, 1);
	s[1].factor = 1.2;
	write_scopes(next, s, 2, 2, 2.5);
	r = diff_csv(NULL, NULL);
	n = parse_diff_csv(r.out, rows, 4);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(row_named(rows, n, "a")->verdict, "same", "%s", r.out);
	cr_assert_str_eq(row_named(rows, n, "b")->verdict, "slower", "%s", r.out);
	tu_result_free(&r);
}

/* Exact numbers: calls, totals, the change, new and gone, and rows in the
 * order of the total's absolute change. */
Test(diff, new_and_gone_scopes_and_rows_sorted_by_the_totals_change)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 0, .pid = 7 };
	struct diff_row rows[8];
	struct tu_result r;
	struct tg_trace *t;
	size_t n;

	/* BASE: keep 4 x 1000 ns, old 2 x 300 ns, small 1 x 100 ns. */
	t = tg_create(base, &cfg);
	tg_site(t, 1, "keep");
	tg_site(t, 2, "old");
	tg_site(t, 3, "small");
	tg_thread(t, 1, 1, NULL);
	for (uint64_t i = 0; i < 4; i++) {
		tg_enter(t, 1, 1, i * 10000);
		tg_exit(t, 1, 1, i * 10000 + 1000);
	}
	for (uint64_t i = 0; i < 2; i++) {
		tg_enter(t, 1, 2, 50000 + i * 1000);
		tg_exit(t, 1, 2, 50000 + i * 1000 + 300);
	}
	tg_enter(t, 1, 3, 60000);
	tg_exit(t, 1, 3, 60100);
	cr_assert_eq(tg_finish(t, true), 0);
	/* NEW: keep 5 x 1000 ns, fresh 3 x 2000 ns, small 1 x 150 ns. */
	t = tg_create(next, &cfg);
	tg_site(t, 1, "keep");
	tg_site(t, 2, "fresh");
	tg_site(t, 3, "small");
	tg_thread(t, 1, 1, NULL);
	for (uint64_t i = 0; i < 5; i++) {
		tg_enter(t, 1, 1, i * 10000);
		tg_exit(t, 1, 1, i * 10000 + 1000);
	}
	for (uint64_t i = 0; i < 3; i++) {
		tg_enter(t, 1, 2, 70000 + i * 10000);
		tg_exit(t, 1, 2, 70000 + i * 10000 + 2000);
	}
	tg_enter(t, 1, 3, 200000);
	tg_exit(t, 1, 3, 200150);
	cr_assert_eq(tg_finish(t, true), 0);

	r = diff_csv(NULL, NULL);
	n = parse_diff_csv(r.out, rows, 8);
	cr_assert_eq(n, 4, "%s", r.out);
	/* |change| of total: fresh 6000, keep 1000, old 600, small 50. */
	cr_assert_str_eq(rows[0].name, "fresh");
	cr_assert_str_eq(rows[1].name, "keep");
	cr_assert_str_eq(rows[2].name, "old");
	cr_assert_str_eq(rows[3].name, "small");
	cr_assert_str_eq(rows[0].verdict, "new");
	cr_assert_eq(rows[0].calls[0], 0);
	cr_assert_eq(rows[0].calls[1], 3);
	cr_assert_eq(rows[0].total[1], 6000);
	cr_assert_str_eq(rows[0].total_change, "");
	/* 4 and 5 calls: too few for a verdict on their durations. */
	cr_assert_str_eq(rows[1].verdict, "too few calls");
	cr_assert_eq(rows[1].total[0], 4000);
	cr_assert_eq(rows[1].total[1], 5000);
	cr_assert_str_eq(rows[1].total_change, "25.00");
	cr_assert_str_eq(rows[2].verdict, "gone");
	cr_assert_eq(rows[2].calls[0], 2);
	cr_assert_eq(rows[2].calls[1], 0);
	cr_assert_str_eq(rows[2].total_change, "-100.00");
	/* One call each side: no test can tell, whatever the change. */
	cr_assert_str_eq(rows[3].verdict, "too few calls");
	cr_assert_eq(rows[3].p50[0], 100);
	cr_assert_eq(rows[3].p50[1], 150);
	tu_result_free(&r);

	/* calls rose 25 % (counts are exact): calls:+20 trips (exit 3), calls:+30
	 * not; total:+20 not either: 4 and 5 calls are too few to judge a time. */
	r = diff_csv("--fail-on=calls:+20", NULL);
	cr_assert_eq(r.status, 3, "%s", r.err);
	cr_assert(strstr(r.err, "tracetool: regression: keep: calls +25.0% (limit +20%; rule "
				"--fail-on=calls:+20; runs 1/1)\n"),
		  "%s", r.err);
	tu_result_free(&r);
	r = diff_csv("--fail-on=total:+20", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	r = diff_csv("--fail-on=calls:+30", "--fail-on=p50:+10");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.err, ONE_RUN_WARNING);
	tu_result_free(&r);
}

/* --fail-on=METRIC:+PCT: exit 3 only past PCT and only when significant;
 * the report is printed in full either way. */
Test(diff, fail_on_exits_3_past_the_limit_and_names_the_scope)
{
	struct scope s[] = { { "step", 300, 40000, 0.2, 1, 30 }, { "idle", 300, 9000, 0.2, 1, 0 } };
	struct tu_result r;

	write_scopes(base, s, 2, 7, 1);
	s[0].factor = 1.25;
	write_scopes(next, s, 2, 8, 1);
	r = diff_csv("--fail-on=p50:+10", NULL);
	cr_assert_eq(r.status, 3, "%s%s", r.out, r.err);
	cr_assert_eq(tu_nr_lines(r.out), 3);
	/* The warning that one run a side cannot see run-to-run noise, then the rule. */
	cr_assert_eq(tu_nr_lines(r.err), 2, "%s", r.err);
	cr_assert_str_eq(tu_line(r.err, 0), ONE_RUN_WARNING_LINE);
	cr_assert(strstr(r.err, "tracetool: regression: step: p50 +"), "%s", r.err);
	cr_assert_null(strstr(r.err, "idle"), "%s", r.err);
	tu_result_free(&r);
	r = diff_csv("--fail-on=p50:+40", "--fail-on=mean:+40");
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	/* The total is mostly the 10 outliers' (1 call in 30, 20x): too few to
	 * tell +25 % from +15 %. */
	r = diff_csv("--fail-on=total:+15", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	/* Faster is never a regression. */
	r = tu_run("diff", "--fail-on=p50:+0", next, base, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "faster"), "%s", r.out);
	tu_result_free(&r);
}

/* --function and --thread apply to both files. */
Test(diff, filters_apply_to_both_files)
{
	struct scope s[] = { { "parse", 50, 1000, 0.1, 1, 0 }, { "solve", 50, 2000, 0.1, 1, 0 } };
	struct diff_row rows[4];
	struct tu_result r;

	write_scopes(base, s, 2, 1, 1);
	write_scopes(next, s, 2, 2, 1);
	r = diff_csv("--function=^so", NULL);
	cr_assert_eq(parse_diff_csv(r.out, rows, 4), 1, "%s", r.out);
	cr_assert_str_eq(rows[0].name, "solve");
	cr_assert_eq(rows[0].calls[0], 50);
	cr_assert_eq(rows[0].calls[1], 50);
	tu_result_free(&r);
	/* A thread neither file has: exit 1, naming the first file's threads. */
	r = tu_run("diff", "--format=csv", base, next, "--thread=other", NULL);
	cr_assert_eq(r.status, 1, "exit %d, stderr: %s", r.status, r.err);
	cr_assert(strstr(r.err, ": no thread 'other' (--thread); its threads: main (tid 100)\n"),
		  "%s", r.err);
	tu_result_free(&r);
	r = diff_csv("--thread=main", "--to=80us");
	cr_assert_eq(parse_diff_csv(r.out, rows, 4), 2, "%s", r.out);
	cr_assert(rows[0].calls[0] < 50 && rows[0].calls[0] > 0, "%s", r.out);
	tu_result_free(&r);
}

Test(diff, table_and_json_say_the_same)
{
	struct scope s[] = { { "step", 300, 40000, 0.2, 1, 0 } };
	struct tu_result r;

	write_scopes(base, s, 1, 1, 1);
	s[0].factor = 1.3;
	write_scopes(next, s, 1, 2, 1);
	r = tu_run("diff", base, next, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "step"), "%s", r.out);
	cr_assert(strstr(r.out, "slower"), "%s", r.out);
	cr_assert(strstr(r.out, "1 scope name: 1 slower, 0 faster, 0 same, 0 new, 0 gone"), "%s",
		  r.out);
	tu_result_free(&r);
	r = tu_run("diff", "--format=json", base, next, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"function\":\"step\",\"verdict\":\"slower\",\"calls_base\":300,"
				"\"calls_new\":300,"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "\"p50_p_slower\":"), "%s", r.out);
	cr_assert(strstr(r.out, "\"run_to_run_noise\":false"), "%s", r.out);
	tu_result_free(&r);
}

/* Exit 1 names the damaged file; exit 2 for wrong usage. */
Test(diff, damaged_input_names_the_file_and_wrong_usage_exits_2)
{
	struct scope s[] = { { "x", 10, 1000, 0.1, 1, 0 } };
	struct tu_result r;
	FILE *f;

	write_scopes(base, s, 1, 1, 1);
	f = fopen(next, "w");
	cr_assert(f);
	fputs("not a trace at all, just some text\n", f);
	fclose(f);
	r = tu_run("diff", base, next, NULL);
	cr_assert_eq(r.status, 1);
	cr_assert(strncmp(r.err, "tracetool: ", 11) == 0 && strstr(r.err, next), "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1, "%s", r.err);
	tu_result_free(&r);
	r = tu_run("diff", next, base, NULL);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, next), "%s", r.err);
	tu_result_free(&r);
	r = tu_run("diff", base, "/nonexistent/new.zst", NULL);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "tracetool: /nonexistent/new.zst: "), "%s", r.err);
	tu_result_free(&r);

	static const char *const bad[][3] = {
		{ "only-one-file", NULL, NULL },
		{ "--fail-on=p50:10", "a", "b" },
		{ "--fail-on=median:+10", "a", "b" },
		{ "--fail-on=p50:+x", "a", "b" },
		{ "--format=xml", "a", "b" },
		{ "--threshold=-1", "a", "b" },
		{ "a", "b", "c" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = tu_run("diff", bad[i][0], bad[i][1], bad[i][2], NULL);
		cr_assert_eq(r.status, 2, "%s: exit %d", bad[i][0], r.status);
		tu_result_free(&r);
	}
}

/* A NEW cut short (the process was killed) is compared up to its last
 * complete frame, with one warning naming it on stderr and in the table. */
Test(diff, truncated_new_is_compared_with_a_warning_naming_it)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .pid = 7, .frame_bytes = 2048,
				 .block_events = 64 };
	uint64_t offsets[64];
	struct tu_result r;
	struct tg_trace *t;
	size_t nr;
	char line[512];

	for (int k = 0; k < 2; k++) {
		t = tg_create(k ? next : base, &cfg);
		cr_assert(t);
		tg_site(t, 1, "work");
		tg_thread(t, 1, 1, "main");
		for (uint64_t i = 0; i < 2000; i++) {
			tg_enter(t, 1, 1, i * 1000);
			tg_exit(t, 1, 1, i * 1000 + 500);
		}
		cr_assert_eq(tg_finish(t, true), 0);
	}
	nr = tg_file_frame_offsets(next, offsets, 64);
	cr_assert_gt(nr, 3, "%zu frames", nr);
	cr_assert_eq(tg_file_truncate(next, offsets[nr - 1] + 10), 0);
	r = tu_run("diff", base, next, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(line, sizeof(line), "tracetool: %s: warning: ", next);
	cr_assert(strstr(r.err, line), "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1, "%s", r.err);
	snprintf(line, sizeof(line), "warning: %s: ", next);
	cr_assert(strstr(r.out, line), "%s", r.out);
	cr_assert(strstr(r.out, "work"), "%s", r.out);
	tu_result_free(&r);
}
