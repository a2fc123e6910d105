/* SPDX-License-Identifier: MIT */
/*
 * test_summary.c - `tracetool summary` on synthetic traces with known answers
 * (tracetool(1); docs/ANALYZER.md, "Meaning of the numbers"): nesting,
 * recursion, self time, errors, every filter, --sort, --by-thread, --top, the
 * CSV header, the table's layout by terminal width (one line per row in a
 * pipe), and the command line.
 */
#include "ttest.h"

#include <unistd.h>

static const char *trace;

static void setup(void)
{
	trace = tu_path(0, "summary.zst");
	/* The table's layout follows $COLUMNS: tests that want a width set it. */
	unsetenv("COLUMNS");
}

static void teardown(void)
{
	unlink(trace);
}

TestSuite(summary, .init = setup, .fini = teardown, .timeout = 60);

static struct tu_result summary_csv(const char *opt1, const char *opt2)
{
	struct tu_result r = tu_run("summary", "--format=csv", trace, opt1, opt2, NULL);

	cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
	cr_assert(strstr(tu_line(r.out, 0), SUMMARY_HEADER), "header: %s", tu_line(r.out, 0));
	return r;
}

/* main [1000, 2000) > f [1100, 1500) > { g [1200, 1250), f [1300, 1400) } */
static void write_nested(void)
{
	struct tg_trace *t = new_trace(trace);

	tg_site(t, 1, "main");
	tg_site(t, 2, "f");
	tg_site(t, 3, "g");
	tg_thread(t, 1, 777, "main");
	tg_enter(t, 1, 1, 1000);
	tg_enter(t, 1, 2, 1100);
	tg_enter(t, 1, 3, 1200);
	tg_exit(t, 1, 3, 1250);
	tg_enter(t, 1, 2, 1300);
	tg_exit(t, 1, 2, 1400);
	tg_exit(t, 1, 2, 1500);
	tg_exit(t, 1, 1, 2000);
	cr_assert_eq(tg_finish(t, true), 0);
}

Test(summary, csv_header_is_exactly_the_documented_one)
{
	struct tu_result r;

	write_nested();
	r = summary_csv(NULL, NULL);
	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER);
	tu_result_free(&r);
	r = summary_csv("--by-thread", NULL);
	cr_assert_str_eq(tu_line(r.out, 0), "thread," SUMMARY_HEADER);
	tu_result_free(&r);
}

Test(summary, nesting_gives_exact_inclusive_self_and_recursion_counted_once)
{
	struct csv_row rows[8];
	struct tu_result r;
	size_t n;

	write_nested();
	r = summary_csv(NULL, NULL);
	n = parse_summary_csv(r.out, false, rows, 8);
	cr_assert_eq(n, 3);
	/* Sorted by total: main, f, g. */
	cr_assert_str_eq(rows[0].name, "main");
	cr_assert_str_eq(rows[1].name, "f");
	cr_assert_str_eq(rows[2].name, "g");
	cr_assert_eq(rows[0].calls, 1);
	cr_assert_eq(rows[0].total, 1000);
	cr_assert_eq(rows[0].self, 600);
	/* f: two activations (every activation is a call), the nested one not
	 * counted twice in total; self = 400 - 50 - 100 + 100. */
	cr_assert_eq(rows[1].calls, 2);
	cr_assert_eq(rows[1].total, 400);
	cr_assert_eq(rows[1].self, 350);
	cr_assert_eq(rows[1].min, 100);
	cr_assert_eq(rows[1].max, 400);
	cr_assert_eq(rows[1].mean, 250);
	cr_assert_eq(rows[1].errors, 0);
	cr_assert_eq(rows[2].calls, 1);
	cr_assert_eq(rows[2].total, 50);
	cr_assert_eq(rows[2].self, 50);
	cr_assert_eq(rows[2].p50, 50);
	tu_result_free(&r);
}

Test(summary, deep_recursion_counts_every_activation_and_the_outermost_time)
{
	struct tg_trace *t = new_trace(trace);
	struct csv_row rows[4];
	struct tu_result r;

	tg_site(t, 1, "rec");
	tg_thread(t, 1, 10, NULL);
	/* rec entered 5 deep at 0,10,20,30,40; exits at 100,110,...,140 reversed. */
	for (int i = 0; i < 5; i++)
		tg_enter(t, 1, 1, 2000 + 10 * (uint64_t)i);
	for (int i = 4; i >= 0; i--)
		tg_exit(t, 1, 1, 2100 + 10 * (uint64_t)(4 - i));
	cr_assert_eq(tg_finish(t, true), 0);
	r = summary_csv(NULL, NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 1);
	cr_assert_eq(rows[0].calls, 5);
	cr_assert_eq(rows[0].total, 140);
	/* Durations 60, 80, 100, 120, 140: self of each is 20 except the innermost. */
	cr_assert_eq(rows[0].min, 60);
	cr_assert_eq(rows[0].max, 140);
	cr_assert_eq(rows[0].mean, 100);
	cr_assert_eq(rows[0].self, 140);
	tu_result_free(&r);
}

Test(summary, sites_sharing_a_name_are_one_row)
{
	struct tg_trace *t = new_trace(trace);
	struct csv_row rows[4];
	struct tu_result r;

	tg_site(t, 1, "work");
	tg_site(t, 2, "work");
	tg_thread(t, 1, 10, NULL);
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 2010);
	tg_enter(t, 1, 2, 2020);
	tg_exit(t, 1, 2, 2050);
	cr_assert_eq(tg_finish(t, true), 0);
	r = summary_csv(NULL, NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 1);
	cr_assert_str_eq(rows[0].name, "work");
	cr_assert_eq(rows[0].calls, 2);
	cr_assert_eq(rows[0].total, 40);
	tu_result_free(&r);
}

Test(summary, unmatched_enter_unmatched_exit_and_backwards_clock_are_errors)
{
	struct tg_trace *t = new_trace(trace);
	struct csv_row rows[8];
	struct tu_result r;
	size_t n;

	tg_site(t, 1, "a");
	tg_site(t, 2, "b");
	tg_site(t, 3, "c");
	tg_site(t, 4, "open");
	tg_thread(t, 1, 10, NULL);
	tg_exit(t, 1, 2, 1500);	 /* b: exit with no enter */
	tg_enter(t, 1, 1, 2000); /* a [2000, 2100) */
	tg_enter(t, 1, 2, 2010); /* b entered, never exits: unmatched under a */
	tg_enter(t, 1, 3, 2020); /* c [2020, 2030) */
	tg_exit(t, 1, 3, 2030);
	tg_exit(t, 1, 1, 2100);	 /* closes a; b above it is an error */
	tg_enter(t, 1, 3, 3000);
	tg_exit(t, 1, 3, 2990);	 /* c: clock went backwards */
	tg_enter(t, 1, 4, 4000); /* still inside when the file ends */
	cr_assert_eq(tg_finish(t, true), 0);
	r = summary_csv(NULL, NULL);
	n = parse_summary_csv(r.out, false, rows, 8);
	cr_assert_eq(n, 4);
	const struct csv_row *a = find_row(rows, n, NULL, "a");
	const struct csv_row *b = find_row(rows, n, NULL, "b");
	const struct csv_row *c = find_row(rows, n, NULL, "c");
	const struct csv_row *o = find_row(rows, n, NULL, "open");
	cr_assert(a->calls == 1 && a->total == 100 && a->errors == 0);
	/* c's 10 ns is inside a's children even though b was lost in between. */
	cr_assert_eq(a->self, 90);
	cr_assert(b->calls == 0 && b->total == 0 && b->errors == 2);
	cr_assert(c->calls == 1 && c->total == 10 && c->errors == 1);
	cr_assert(o->calls == 0 && o->errors == 1);
	tu_result_free(&r);
}

Test(summary, stacks_persist_across_blocks_and_frames)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 0,
				 .block_events = 3, .frame_bytes = 100 };
	struct tg_trace *t = tg_create(trace, &cfg);
	struct csv_row rows[4];
	struct tu_result r;

	tg_site(t, 1, "outer");
	tg_site(t, 2, "inner");
	tg_thread(t, 1, 10, NULL);
	tg_enter(t, 1, 1, 0);
	for (uint64_t i = 0; i < 1000; i++) {
		tg_enter(t, 1, 2, 10 + 10 * i);
		tg_exit(t, 1, 2, 15 + 10 * i);
	}
	tg_exit(t, 1, 1, 20000);
	cr_assert_eq(tg_finish(t, true), 0);
	r = summary_csv(NULL, NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 2);
	cr_assert_str_eq(rows[0].name, "outer");
	cr_assert(rows[0].calls == 1 && rows[0].total == 20000 && rows[0].self == 15000);
	cr_assert(rows[1].calls == 1000 && rows[1].total == 5000 && rows[1].errors == 0);
	tu_result_free(&r);
}

/* Two threads: 100 "main" (tid 100) runs f 3 x 10 ns; "worker" (tid 200)
 * runs f 1 x 50 ns and g at 5000 for 7 ns. */
static void write_two_threads(void)
{
	struct tg_trace *t = new_trace(trace);

	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_thread(t, 1, 100, "main");
	tg_thread(t, 2, 200, "worker");
	for (uint64_t i = 0; i < 3; i++) {
		tg_enter(t, 1, 1, 1000 + 100 * i);
		tg_exit(t, 1, 1, 1010 + 100 * i);
	}
	tg_enter(t, 2, 1, 2000);
	tg_exit(t, 2, 1, 2050);
	tg_enter(t, 2, 2, 6000);
	tg_exit(t, 2, 2, 6007);
	tg_drops(t, 2, 4);
	tg_drops(t, 2, 3); /* cumulative: the largest wins */
	cr_assert_eq(tg_finish(t, true), 0);
}

Test(summary, thread_filter_by_id_and_by_name)
{
	struct csv_row rows[4];
	struct tu_result r;

	write_two_threads();
	r = summary_csv("--thread=100", NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 1);
	cr_assert(rows[0].calls == 3 && rows[0].total == 30);
	tu_result_free(&r);
	r = summary_csv("--thread=worker", NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 2);
	cr_assert_str_eq(rows[0].name, "f");
	cr_assert(rows[0].calls == 1 && rows[0].total == 50);
	tu_result_free(&r);
	r = summary_csv("--thread=worker", "--thread=100");
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 2);
	cr_assert(rows[0].calls == 4 && rows[0].total == 80);
	tu_result_free(&r);
}

Test(summary, thread_filter_naming_no_thread_of_the_file_exits_1_listing_its_threads)
{
	struct tu_result r;
	char want[4200];

	write_two_threads();
	r = tu_run("summary", "--thread=wroker", trace, NULL);
	cr_assert_eq(r.status, 1, "exit %d", r.status);
	cr_assert_str_eq(r.out, "");
	snprintf(want, sizeof(want), "tracetool: %s: no thread 'wroker' (--thread); its threads: "
		 "main (tid 100), worker (tid 200)\n", trace);
	cr_assert_str_eq(r.err, want);
	tu_result_free(&r);
	/* One of two missing is enough; the same for every report command. */
	static const char *const cmds[] = { "summary", "histogram", "tree", "flame", "chrome" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = tu_run(cmds[i], "-t", "main", "-t", "300", trace, NULL);
		cr_assert_eq(r.status, 1, "%s: exit %d", cmds[i], r.status);
		cr_assert(strstr(r.err, "no thread '300' (--thread); its threads: main (tid 100), "
					"worker (tid 200)\n"), "%s: %s", cmds[i], r.err);
		tu_result_free(&r);
	}
}

Test(summary, function_filter_is_an_unanchored_extended_regex)
{
	struct csv_row rows[4];
	struct tu_result r;

	write_nested();
	r = summary_csv("--function=^(f|g)$", NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 2);
	cr_assert_str_eq(rows[0].name, "f");
	cr_assert_str_eq(rows[1].name, "g");
	tu_result_free(&r);
	r = summary_csv("--function=ai", NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 1);
	cr_assert_str_eq(rows[0].name, "main");
	/* A filtered-out child still counts as a child: main's self is unchanged. */
	cr_assert_eq(rows[0].self, 600);
	tu_result_free(&r);
}

Test(summary, time_window_takes_activations_that_start_inside_it)
{
	struct csv_row rows[4];
	struct tu_result r;

	write_two_threads(); /* time zero is tick 1000 */
	/* f starts at 0, 100, 200 (main) and 1000 (worker); g at 5000. */
	r = summary_csv("--from=100ns", "--to=1us");
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 1);
	cr_assert(rows[0].calls == 2 && rows[0].total == 20);
	tu_result_free(&r);
	r = summary_csv("--from=0.2us", "--to=1.001us");
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 1);
	cr_assert(rows[0].calls == 2 && rows[0].total == 60);
	tu_result_free(&r);
	r = summary_csv("--from=5us", NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 1);
	cr_assert_str_eq(rows[0].name, "g");
	tu_result_free(&r);
}

Test(summary, sort_keys_and_ties_by_name)
{
	struct tg_trace *t = new_trace(trace);
	struct csv_row rows[4];
	struct tu_result r;

	/* b: 1 call of 100; a: 4 calls of 25 (same total as b); c: 2 calls of 30. */
	tg_site(t, 1, "a");
	tg_site(t, 2, "b");
	tg_site(t, 3, "c");
	tg_thread(t, 1, 10, NULL);
	uint64_t now = 2000;
	tg_enter(t, 1, 2, now);
	tg_exit(t, 1, 2, now += 100);
	for (int i = 0; i < 4; i++) {
		tg_enter(t, 1, 1, now += 5);
		tg_exit(t, 1, 1, now += 25);
	}
	for (int i = 0; i < 2; i++) {
		tg_enter(t, 1, 3, now += 5);
		tg_exit(t, 1, 3, now += 30);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	static const struct { const char *sort, *order[3]; } cases[] = {
		{ "--sort=total", { "a", "b", "c" } }, { "--sort=self", { "a", "b", "c" } },
		{ "--sort=calls", { "a", "c", "b" } }, { "--sort=mean", { "b", "c", "a" } },
		{ "--sort=max", { "b", "c", "a" } },   { "--sort=name", { "a", "b", "c" } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = summary_csv(cases[i].sort, NULL);
		cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 3);
		for (int k = 0; k < 3; k++)
			cr_assert_str_eq(rows[k].name, cases[i].order[k], "%s row %d",
					 cases[i].sort, k);
		tu_result_free(&r);
	}
}

/*
 * Four names whose orders differ by each key (durations in ns, 100 calls
 * each): a 100 x 50; b 40 x 10 + 60 x 200; c 85 x 20 + 15 x 1000;
 * d 97 x 5 + 3 x 5000.
 */
Test(summary, sort_by_min_and_percentiles)
{
	static const struct { uint64_t n1, d1, n2, d2; } fn[4] = {
		{ 100, 50, 0, 0 }, { 40, 10, 60, 200 }, { 85, 20, 15, 1000 }, { 97, 5, 3, 5000 },
	};
	static const struct { const char *sort, *order; } cases[] = {
		{ "--sort=min", "acbd" }, { "--sort=p50", "bacd" },
		{ "--sort=p90", "cbad" }, { "--sort=p99", "dcba" },
	};
	struct tg_trace *t = new_trace(trace);
	struct csv_row rows[4];
	uint64_t now = 2000;

	tg_thread(t, 1, 10, NULL);
	for (uint32_t k = 0; k < 4; k++) {
		const char name[2] = { (char)('a' + k), '\0' };

		tg_site(t, k + 1, name);
		for (uint64_t i = 0; i < fn[k].n1 + fn[k].n2; i++) {
			tg_enter(t, 1, k + 1, now += 5);
			tg_exit(t, 1, k + 1, now += i < fn[k].n1 ? fn[k].d1 : fn[k].d2);
		}
	}
	cr_assert_eq(tg_finish(t, true), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tu_result r = summary_csv(cases[i].sort, NULL);

		cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 4);
		for (int k = 0; k < 4; k++)
			cr_assert_eq(rows[k].name[0], cases[i].order[k], "%s row %d: %s",
				     cases[i].sort, k, r.out);
		tu_result_free(&r);
	}
}

Test(summary, by_thread_adds_a_thread_column_and_top_cuts_rows)
{
	struct csv_row rows[8];
	struct tu_result r;
	size_t n;

	write_two_threads();
	r = summary_csv("--by-thread", NULL);
	n = parse_summary_csv(r.out, true, rows, 8);
	cr_assert_eq(n, 3);
	cr_assert_eq(find_row(rows, n, "main", "f")->calls, 3);
	cr_assert_eq(find_row(rows, n, "worker", "f")->total, 50);
	cr_assert_eq(find_row(rows, n, "worker", "g")->total, 7);
	tu_result_free(&r);
	r = summary_csv("--top=1", NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 8), 1);
	cr_assert_str_eq(rows[0].name, "f");
	tu_result_free(&r);
}

Test(summary, unnamed_thread_is_labelled_by_its_id)
{
	struct tg_trace *t = new_trace(trace);
	struct csv_row rows[2];
	struct tu_result r;

	tg_site(t, 1, "f");
	tg_thread(t, 1, 31337, NULL);
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 2001);
	cr_assert_eq(tg_finish(t, true), 0);
	r = summary_csv("--by-thread", NULL);
	cr_assert_eq(parse_summary_csv(r.out, true, rows, 2), 1);
	cr_assert_str_eq(rows[0].thread, "31337");
	tu_result_free(&r);
}

static size_t display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

Test(summary, table_reports_totals_and_dropped_scopes)
{
	struct tu_result r;

	write_two_threads();
	r = tu_run("summary", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "2 of 2 scope names, 5 calls, 0 errors, 4 dropped scopes\n"),
		  "%s", r.out);
	/* In a pipe, a row a line: the longest label ("function") + 80. */
	cr_assert_eq(tu_nr_lines(r.out), 7, "%s", r.out);
	for (unsigned i = 0; i < tu_nr_lines(r.out); i++)
		cr_assert_leq(display_width(tu_line(r.out, i)), 88, "line %u too wide: %s", i,
			      tu_line(r.out, i));
	tu_result_free(&r);
}

Test(summary, tsc_clock_converts_with_the_sync_rate_exactly)
{
	/* Header claims 3 GHz; the syncs say 2.5 ticks per ns. */
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 3000000000ull,
				 .start_ticks = 0 };
	struct tg_trace *t = tg_create(trace, &cfg);
	struct csv_row rows[2];
	struct tu_result r;

	tg_sync(t, 0, 1000, 0);
	tg_site(t, 1, "f");
	tg_thread(t, 1, 1, NULL);
	tg_enter(t, 1, 1, 1000);
	tg_exit(t, 1, 1, 1182); /* 72.8 ns */
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 2001); /* 0.4 ns */
	tg_sync(t, 25000000000ull, 10000001000ull, 0);
	cr_assert_eq(tg_finish(t, true), 0);
	r = summary_csv(NULL, NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 2), 1);
	/* Total converted from the exact tick sum 183 -> 73.2 ns. */
	cr_assert_eq(rows[0].total, 73);
	cr_assert_eq(rows[0].max, 73);
	cr_assert_eq(rows[0].min, 0);
	tu_result_free(&r);
}

Test(summary, usage_errors_exit_2_and_missing_file_exits_1)
{
	struct tu_result r;

	r = tu_run("summary", NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
	r = tu_run("summary", "--format=xml", "x.zst", NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
	r = tu_run("summary", "--from=5", "x.zst", NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
	r = tu_run("summary", "--function=(", "x.zst", NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
	r = tu_run("frobnicate", NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
	r = tu_run("summary", "/nonexistent/t.zst", NULL);
	cr_assert_eq(r.status, 1);
	cr_assert_str_eq(r.err,
			 "tracetool: /nonexistent/t.zst: cannot open: No such file or directory\n");
	cr_assert_str_eq(r.out, "");
	tu_result_free(&r);
}

Test(summary, help_and_version)
{
	struct tu_result r = tu_run("--version", NULL);
	char want[64];

	cr_assert_eq(r.status, 0);
	snprintf(want, sizeof(want), "tracetool (rec) %s\n", getenv("REC_VERSION"));
	cr_assert_str_eq(r.out, want);
	tu_result_free(&r);
	r = tu_run("--help", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "summary"));
	tu_result_free(&r);
	r = tu_run("summary", "--help", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "--by-thread"));
	cr_assert(strstr(r.out, "--function"));
	tu_result_free(&r);
}

/* Runs `summary` as a table with $COLUMNS set (the width tracetool uses). */
static struct tu_result summary_table(const char *columns, const char *opt)
{
	struct tu_result r;

	cr_assert_eq(setenv("COLUMNS", columns, 1), 0);
	r = tu_run("summary", trace, opt, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
	return r;
}

Test(summary, table_is_one_line_per_name_when_the_terminal_is_wide_enough)
{
	char rule[89];
	struct tu_result r;

	write_two_threads();
	/* The longest label is the header's "function" (8), plus 80 of numbers. */
	r = summary_table("88", NULL);
	cr_assert_eq(tu_nr_lines(r.out), 7, "%s", r.out); /* with the [*] legend */
	cr_assert(strncmp(tu_line(r.out, 0), "function    calls   total    self", 33) == 0, "%s",
		  r.out);
	memset(rule, '-', 88);
	rule[88] = '\0';
	cr_assert_str_eq(tu_line(r.out, 1), rule);
	cr_assert(strncmp(tu_line(r.out, 2), "f  [*]          4    80ns    80ns    10ns", 41) == 0,
		  "%s", r.out);
	cr_assert(strncmp(tu_line(r.out, 3), "g  [*]          1     7ns     7ns     7ns", 41) == 0,
		  "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 4), rule);
	for (unsigned i = 0; i < tu_nr_lines(r.out); i++)
		cr_assert_leq(display_width(tu_line(r.out, i)), 88, "line %u: %s", i,
			      tu_line(r.out, i));
	tu_result_free(&r);
}

/*
 * Runs `summary` on a terminal (util-linux's script(1)) of `columns`
 * columns; its output, CRs removed, in a static buffer. NULL without script.
 */
static const char *summary_on_tty(const char *columns, const char *opt)
{
	static char out[1 << 16];
	char cmd[8192];
	size_t n = 0;
	FILE *p;
	int c;

	if (system("command -v script >/dev/null 2>&1") != 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "COLUMNS=%s script -qec \"'%s' summary %s '%s'\" /dev/null "
		 "</dev/null", columns, getenv("TRACETOOL"), opt ? opt : "", trace);
	p = popen(cmd, "r");
	cr_assert(p);
	while ((c = fgetc(p)) != EOF && n + 1 < sizeof(out))
		if (c != '\r')
			out[n++] = (char)c;
	out[n] = '\0';
	cr_assert_eq(pclose(p), 0, "%s", out);
	return out;
}

Test(summary, table_puts_names_on_their_own_line_when_the_terminal_is_too_narrow)
{
	const char *out;

	write_two_threads();
	out = summary_on_tty("87", NULL);
	if (!out)
		cr_skip_test("script(1) missing");
	cr_assert_str_eq(tu_line(out, 0), "function", "%s", out);
	cr_assert_str_eq(tu_line(out, 3), "f  [*]"); /* "worker" dropped scopes */
	cr_assert(strncmp(tu_line(out, 4), "        4    80ns", 17) == 0, "%s", out);
	for (unsigned i = 0; i < tu_nr_lines(out); i++)
		cr_assert_leq(display_width(tu_line(out, i)), 80, "line %u: %s", i,
			      tu_line(out, i));
}

/* In a pipe or a file, one line per row whatever $COLUMNS and the names'
 * length: scripts grep and sort rows. */
Test(summary, table_in_a_pipe_is_one_line_per_row_whatever_the_width)
{
	struct tg_trace *t = new_trace(trace);
	char name[201], want[256];
	struct tu_result r;

	memset(name, 'n', 200);
	name[200] = '\0';
	tg_site(t, 1, name);
	tg_site(t, 2, "g");
	tg_thread(t, 1, 100, "main");
	tg_enter(t, 1, 1, 1000);
	tg_exit(t, 1, 1, 1100);
	tg_enter(t, 1, 2, 1200);
	tg_exit(t, 1, 2, 1207);
	cr_assert_eq(tg_finish(t, true), 0);
	r = summary_table("80", NULL);
	cr_assert_eq(tu_nr_lines(r.out), 6, "%s", r.out);
	snprintf(want, sizeof(want), "%-200s    calls   total", "function");
	cr_assert(strncmp(tu_line(r.out, 0), want, strlen(want)) == 0, "%s", r.out);
	snprintf(want, sizeof(want), "%s        1   100ns   100ns   100ns", name);
	cr_assert(strncmp(tu_line(r.out, 2), want, strlen(want)) == 0, "%s", r.out);
	snprintf(want, sizeof(want), "%-200s        1     7ns     7ns     7ns", "g");
	cr_assert(strncmp(tu_line(r.out, 3), want, strlen(want)) == 0, "%s", r.out);
	cr_assert_eq(strlen(tu_line(r.out, 1)), 280);
	cr_assert_str_eq(tu_line(r.out, 5), "2 of 2 scope names, 2 calls, 0 errors, 0 dropped scopes");
	tu_result_free(&r);
}

Test(summary, table_by_thread_pads_thread_and_name_to_one_column)
{
	struct tu_result r;

	write_two_threads();
	/* "thread: function" (16) is the longest label: 96 columns in all. */
	r = summary_table("96", "--by-thread");
	cr_assert(strncmp(tu_line(r.out, 0), "thread: function    calls", 25) == 0, "%s", r.out);
	cr_assert(strncmp(tu_line(r.out, 2), "worker: f  [*]          1    50ns", 33) == 0, "%s",
		  r.out);
	cr_assert(strncmp(tu_line(r.out, 3), "main: f                 3    30ns", 33) == 0, "%s",
		  r.out);
	tu_result_free(&r);
	tu_result_free(&r);
	if (summary_on_tty("95", "--by-thread"))
		cr_assert_str_eq(tu_line(summary_on_tty("95", "--by-thread"), 0), "thread: function");
}
