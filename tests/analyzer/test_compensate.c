/* SPDX-License-Identifier: MIT */
/*
 * test_compensate.c - --compensate (docs/ANALYZER.md, "Compensating the
 * probes' cost") on traces of known call structure with a PROBE_COST record
 * (FORMAT.md §3.16): the exact durations and self times summary, tree,
 * flame, histogram and diff report, with TRACE_SCOPE and hooked (FUNC)
 * sites, on one walker and several; the footer that says so; and a file
 * without the record, which is reported as measured with one warning.
 * The clock is monotonic (1 tick = 1 ns), so every expected time is exact.
 */
#include "ttest.h"

#include <unistd.h>

static const char *trace;

static void setup(void)
{
	trace = tu_path(0, "compensate.zst");
}

static void teardown(void)
{
	unlink(trace);
	unsetenv("TRACETOOL_THREADS");
}

TestSuite(compensate, .init = setup, .fini = teardown, .timeout = 60);

/* TRACE_SCOPE: 10 ns a pair, 4 ns of it between its own stamps; the hooks:
 * 30 ns, 12 ns inside. */
static const struct recfmt_probe_cost cost = {
	.scope_ps = 10000, .hook_ps = 30000, .scope_inner_ps = 4000, .hook_inner_ps = 12000,
};

/*
 * Thread 1 "main": main [1000,2000) > { a [1100,1200), b [1300,1500) > c [1350,1400) }
 * Thread 2 "worker": w [1000,1500) > h [1100,1300) (a hooked function) > c [1150,1200)
 *
 * Compensated (each activation less its own inner cost and the whole cost of
 * every activation recorded inside it; self = that less its children's):
 *   c: 50 - 4 = 46, self 46 (twice)     a: 100 - 4 = 96, self 96
 *   b: 200 - 4 - 10 = 186, self 140     main: 1000 - 4 - 3*10 = 966, self 684
 *   h: 200 - 12 - 10 = 178, self 132    w: 500 - 4 - (30 + 10) = 456, self 278
 */
static void write_known(bool with_cost)
{
	struct tg_trace *t = new_trace(trace);

	if (with_cost)
		cr_assert_eq(tg_probe_cost(t, &cost), 0);
	tg_module(t, 1, "/nonexistent-rec-test/prog", 0x555500000000, 0x555500001000,
		  0x555500009000);
	tg_site(t, 1, "main");
	tg_site(t, 2, "a");
	tg_site(t, 3, "b");
	tg_site(t, 4, "c");
	tg_site(t, 5, "w");
	tg_func(t, 6, 0x555500001200);
	tg_thread(t, 1, 701, "main");
	tg_thread(t, 2, 702, "worker");
	tg_enter(t, 1, 1, 1000);
	tg_enter(t, 1, 2, 1100);
	tg_exit(t, 1, 2, 1200);
	tg_enter(t, 1, 3, 1300);
	tg_enter(t, 1, 4, 1350);
	tg_exit(t, 1, 4, 1400);
	tg_exit(t, 1, 3, 1500);
	tg_exit(t, 1, 1, 2000);
	tg_enter(t, 2, 5, 1000);
	tg_enter(t, 2, 6, 1100);
	tg_enter(t, 2, 4, 1150);
	tg_exit(t, 2, 4, 1200);
	tg_exit(t, 2, 6, 1300);
	tg_exit(t, 2, 5, 1500);
	cr_assert_eq(tg_finish(t, true), 0);
}

/* The name summary shows for the hooked function (an address: the module
 * is not on this machine). */
static void hooked_name(const struct csv_row *rows, size_t n, char *out, size_t out_bytes)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = rows[i].name;

		if (strcmp(s, "main") && strcmp(s, "a") && strcmp(s, "b") && strcmp(s, "c") &&
		    strcmp(s, "w")) {
			snprintf(out, out_bytes, "%s", s);
			return;
		}
	}
	cr_assert_fail("no hooked function row");
}

static void assert_row(const struct csv_row *rows, size_t n, const char *name, uint64_t calls,
		       uint64_t total, uint64_t self, uint64_t min, uint64_t max)
{
	const struct csv_row *r = find_row(rows, n, NULL, name);

	cr_assert_eq(r->calls, calls, "%s calls %" PRIu64, name, r->calls);
	cr_assert_eq(r->total, total, "%s total %" PRIu64, name, r->total);
	cr_assert_eq(r->self, self, "%s self %" PRIu64, name, r->self);
	cr_assert_eq(r->min, min, "%s min %" PRIu64, name, r->min);
	cr_assert_eq(r->max, max, "%s max %" PRIu64, name, r->max);
	cr_assert_eq(r->errors, 0);
}

Test(compensate, summary_subtracts_the_probes_cost_exactly)
{
	static const char *const walkers[] = { "1", "2" };
	struct csv_row rows[16];
	char h[128];

	write_known(true);
	for (size_t w = 0; w < 2; w++) {
		struct tu_result r;
		size_t n;

		cr_assert_eq(setenv("TRACETOOL_THREADS", walkers[w], 1), 0);
		r = tu_run("summary", "--format=csv", "--compensate", trace, NULL);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER);
		cr_assert_null(strstr(r.err, "probe cost"), "%s", r.err);
		n = parse_summary_csv(r.out, false, rows, 16);
		cr_assert_eq(n, 6, "%s", r.out);
		hooked_name(rows, n, h, sizeof(h));
		assert_row(rows, n, "main", 1, 966, 684, 966, 966);
		assert_row(rows, n, "a", 1, 96, 96, 96, 96);
		assert_row(rows, n, "b", 1, 186, 140, 186, 186);
		assert_row(rows, n, "c", 2, 92, 92, 46, 46);
		assert_row(rows, n, h, 1, 178, 132, 178, 178);
		assert_row(rows, n, "w", 1, 456, 278, 456, 456);
		tu_result_free(&r);
	}
	/* Without the option: the times as measured. */
	{
		struct tu_result r = tu_run("summary", "--format=csv", trace, NULL);
		size_t n;

		cr_assert_eq(r.status, 0, "%s", r.err);
		n = parse_summary_csv(r.out, false, rows, 16);
		hooked_name(rows, n, h, sizeof(h));
		assert_row(rows, n, "main", 1, 1000, 700, 1000, 1000);
		assert_row(rows, n, "b", 1, 200, 150, 200, 200);
		assert_row(rows, n, "c", 2, 100, 100, 50, 50);
		assert_row(rows, n, h, 1, 200, 150, 200, 200);
		assert_row(rows, n, "w", 1, 500, 300, 500, 500);
		tu_result_free(&r);
	}
}

Test(compensate, table_footer_states_it)
{
	struct tu_result r;

	write_known(true);
	r = tu_run("summary", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\ncompensated: probe cost 10.0 ns a scope (4.0 inside it), "
				"30.0 ns a hook (12.0 inside)\n"),
		  "%s", r.out);
	tu_result_free(&r);
	r = tu_run("summary", "--compensate", "--format=json", trace, NULL);
	cr_assert(strstr(r.out, ",\"compensated\":true,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("tree", "--compensate", "--format=json", trace, NULL);
	cr_assert(strstr(r.out, ",\"compensated\":true,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("tree", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\ncompensated: probe cost 10.0 ns"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("histogram", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\ncompensated: probe cost 10.0 ns"), "%s", r.out);
	tu_result_free(&r);
	/* Not asked: no such line. */
	r = tu_run("summary", trace, NULL);
	cr_assert_null(strstr(r.out, "compensated"), "%s", r.out);
	tu_result_free(&r);
}

Test(compensate, tree_and_flame_paths)
{
	struct tu_result r;
	char h[128], line[256];
	struct csv_row rows[16];
	size_t n;

	write_known(true);
	r = tu_run("summary", "--format=csv", trace, NULL);
	n = parse_summary_csv(r.out, false, rows, 16);
	hooked_name(rows, n, h, sizeof(h));
	tu_result_free(&r);

	r = tu_run("tree", "--format=csv", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 8, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 0), "path,depth,calls,total_ns,self_ns");
	cr_assert_str_eq(tu_line(r.out, 1), "main,0,1,966,684");
	cr_assert_str_eq(tu_line(r.out, 2), "main;b,1,1,186,140");
	cr_assert_str_eq(tu_line(r.out, 3), "main;b;c,2,1,46,46");
	cr_assert_str_eq(tu_line(r.out, 4), "main;a,1,1,96,96");
	cr_assert_str_eq(tu_line(r.out, 5), "w,0,1,456,278");
	snprintf(line, sizeof(line), "w;%s,1,1,178,132", h);
	cr_assert_str_eq(tu_line(r.out, 6), line);
	snprintf(line, sizeof(line), "w;%s;c,2,1,46,46", h);
	cr_assert_str_eq(tu_line(r.out, 7), line);
	tu_result_free(&r);

	/* flame: the same paths' self times; they add up to summary's. */
	r = tu_run("flame", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 7, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 0), "main 684");
	cr_assert_str_eq(tu_line(r.out, 1), "main;b 140");
	cr_assert_str_eq(tu_line(r.out, 2), "main;b;c 46");
	cr_assert_str_eq(tu_line(r.out, 3), "main;a 96");
	cr_assert_str_eq(tu_line(r.out, 4), "w 278");
	snprintf(line, sizeof(line), "w;%s 132", h);
	cr_assert_str_eq(tu_line(r.out, 5), line);
	snprintf(line, sizeof(line), "w;%s;c 46", h);
	cr_assert_str_eq(tu_line(r.out, 6), line);
	tu_result_free(&r);
}

Test(compensate, histogram_and_diff_see_the_compensated_durations)
{
	struct tu_result r;
	bool seen = false;

	write_known(true);
	r = tu_run("histogram", "--format=csv", "--compensate", "--function=^c$", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++) {
		uint64_t lo, hi, count;

		cr_assert_eq(sscanf(tu_line(r.out, i), "c,%" SCNu64 ",%" SCNu64 ",%" SCNu64, &lo,
				    &hi, &count), 3, "%s", r.out);
		if (count) {
			cr_assert(lo <= 46 && 46 < hi && count == 2, "%s", r.out);
			cr_assert(hi <= 50, "the measured 50 ns is not in it: %s", r.out);
			seen = true;
		}
	}
	cr_assert(seen, "%s", r.out);
	tu_result_free(&r);

	/* diff of the file with itself: both sides compensated alike. */
	r = tu_run("diff", "--format=csv", "--compensate", "--function=^(main|b)$", trace, trace,
		   NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 3, "%s", r.out);
	cr_assert(strstr(r.out, "\nmain,1,1,966,966,0.0"), "%s", r.out);
	cr_assert(strstr(r.out, "\nb,1,1,186,186,0.0"), "%s", r.out);
	tu_result_free(&r);
}

Test(compensate, file_without_the_record_is_reported_as_measured)
{
	struct tu_result r;
	struct csv_row rows[16];
	char want[512];
	size_t n;

	write_known(false);
	snprintf(want, sizeof(want),
		 "tracetool: %s: warning: no probe cost recorded (PROBE_COST, format 1.2): "
		 "--compensate not applied, times as measured",
		 trace);
	r = tu_run("summary", "--format=csv", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, want), "%s", r.err);
	n = parse_summary_csv(r.out, false, rows, 16);
	assert_row(rows, n, "main", 1, 1000, 700, 1000, 1000);
	assert_row(rows, n, "c", 2, 100, 100, 50, 50);
	tu_result_free(&r);

	r = tu_run("summary", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nnot compensated: the file records no probe cost\n"), "%s",
		  r.out);
	tu_result_free(&r);
	r = tu_run("summary", "--compensate", "--format=json", trace, NULL);
	cr_assert(strstr(r.out, ",\"compensated\":false,"), "%s", r.out);
	tu_result_free(&r);
	const char *const cmds[] = { "tree", "flame", "histogram" };
	for (size_t i = 0; i < 3; i++) {
		r = tu_run(cmds[i], "--compensate", trace, NULL);
		cr_assert_eq(r.status, 0, "%s: %s", cmds[i], r.err);
		cr_assert(strstr(r.err, want), "%s: %s", cmds[i], r.err);
		tu_result_free(&r);
	}
	r = tu_run("diff", "--compensate", trace, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, want), "%s", r.err);
	tu_result_free(&r);
}

Test(compensate, not_with_interval_nor_on_timelines)
{
	struct tu_result r;

	write_known(true);
	r = tu_run("summary", "--interval=1ms", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--compensate does not apply to --interval"), "%s", r.err);
	tu_result_free(&r);
	r = tu_run("chrome", "--compensate", trace, NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	tu_result_free(&r);
}
