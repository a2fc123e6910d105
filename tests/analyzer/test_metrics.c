/* SPDX-License-Identifier: MIT */
/*
 * test_metrics.c - summary's counter figures, summary --interval and
 * --max-duration (docs/ANALYZER.md) on synthetic traces with known answers:
 * inclusive counter totals counted once per recursion and means per call,
 * derived ratios only where both inputs were recorded, empty cells for a
 * thread without counters; interval rows split at the boundaries whose
 * times add up exactly (in ns, whatever the clock's rounding) to summary
 * --by-thread's total_ns; activations longer than --max-duration as errors.
 */
#include "ttest.h"

#include <unistd.h>

static const char *trace;

static void setup(void)
{
	trace = tu_path(0, "metrics.zst");
}

static void teardown(void)
{
	unlink(trace);
}

TestSuite(metrics, .init = setup, .fini = teardown, .timeout = 60);

static struct tu_result run_ok(const char *a1, const char *a2, const char *a3, const char *a4)
{
	struct tu_result r = tu_run("summary", trace, a1, a2, a3, a4, NULL);

	cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
	return r;
}

/*
 * Thread 1 "main" records instructions and cycles (cache-misses failed):
 *   outer [1000, 2000)          instructions +1000, cycles +500
 *     f [1100, 1500)            +300, +150
 *       f [1200, 1300)          +100, +50   (recursion)
 *     f [1600, 1700)            +100, +50
 * Thread 2 "w" has no counters: g [1000, 1100).
 */
static void write_counters(void)
{
	const char *names[3] = { "instructions", "cache-misses", "cycles" };
	const uint32_t flags[3] = { RECFMT_COUNTER_RECORDED, 0, RECFMT_COUNTER_RECORDED };
	struct tg_trace *t = new_trace(trace);
	uint64_t v[][2] = { { 100, 50 }, { 200, 100 }, { 300, 150 }, { 400, 200 },
			    { 500, 250 }, { 600, 300 }, { 700, 350 }, { 1100, 550 } };

	tg_site(t, 1, "outer");
	tg_site(t, 2, "f");
	tg_site(t, 3, "g");
	tg_thread(t, 1, 10, "main");
	tg_thread(t, 2, 11, "w");
	cr_assert_eq(tg_counter_set(t, 1, 3, names, flags), 0);
	tg_enter_ctr(t, 1, 1, 1000, v[0]);
	tg_enter_ctr(t, 1, 2, 1100, v[1]);
	tg_enter_ctr(t, 1, 2, 1200, v[2]);
	tg_exit_ctr(t, 1, 2, 1300, v[3]);
	tg_exit_ctr(t, 1, 2, 1500, v[4]);
	tg_enter_ctr(t, 1, 2, 1600, v[5]);
	tg_exit_ctr(t, 1, 2, 1700, v[6]);
	tg_exit_ctr(t, 1, 1, 2000, v[7]);
	tg_enter(t, 2, 3, 1000);
	tg_exit(t, 2, 3, 1100);
	cr_assert_eq(tg_finish(t, true), 0);
}

Test(metrics, counter_columns_follow_errors_with_totals_once_per_recursion_and_means)
{
	struct tu_result r;

	write_counters();
	r = run_ok("--format=csv", NULL, NULL, NULL);
	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER ",instructions_total,instructions_mean,"
							   "cycles_total,cycles_mean,ipc");
	/* Rows by total: outer 1000, f 500 (400 + 100), g 100. */
	cr_assert_str_eq(tu_line(r.out, 1),
			 "outer,1,1000,500,1000,1000,1000,1000,1000,1000,0,1000,1000.00,500,500.00,2.0000");
	cr_assert_str_eq(tu_line(r.out, 2),
			 "f,3,500,500,100,200,100,400,400,400,0,400,166.67,200,83.33,2.0000");
	cr_assert_str_eq(tu_line(r.out, 3), "g,1,100,100,100,100,100,100,100,100,0,,,,,");
	tu_result_free(&r);

	r = run_ok("--format=csv", "--by-thread", "--thread=main", "--function=^f$");
	cr_assert_str_eq(tu_line(r.out, 1),
			 "main,f,3,500,500,100,200,100,400,400,400,0,400,166.67,200,83.33,2.0000");
	cr_assert_eq(tu_nr_lines(r.out), 2, "%s", r.out);
	tu_result_free(&r);
}

Test(metrics, counter_table_is_a_second_section_within_80_columns)
{
	struct tu_result r;

	write_counters();
	r = run_ok(NULL, NULL, NULL, NULL);
	cr_assert(strstr(r.out, "\ncounters: inclusive total and mean per call\n"), "%s", r.out);
	cr_assert(strstr(r.out, "\nf\n  instructions                          400 total         166.67 "
				"per call\n  cycles                                200 total          "
				"83.33 per call\n  ipc                                 2.000\n"),
		  "%s", r.out);
	/* The rows above are one line each in a pipe (the name's width + 80);
	 * the counter section keeps to 80 columns. */
	for (unsigned i = 0, section = 0; i < tu_nr_lines(r.out); i++) {
		size_t cols = 0; /* display columns: UTF-8 continuation bytes take none */

		section |= strncmp(tu_line(r.out, i), "counters:", 9) == 0;
		for (const char *p = tu_line(r.out, i); *p; p++)
			cols += ((unsigned char)*p & 0xc0) != 0x80;
		cr_assert_leq(cols, section ? 80 : 88, "%s", tu_line(r.out, i));
	}
	tu_result_free(&r);
}

Test(metrics, a_trace_without_counters_keeps_the_documented_header_and_table)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;

	tg_site(t, 1, "f");
	tg_enter(t, 1, 1, 1000);
	tg_exit(t, 1, 1, 1100);
	cr_assert_eq(tg_finish(t, true), 0);
	r = run_ok("--format=csv", NULL, NULL, NULL);
	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER);
	cr_assert_str_eq(tu_line(r.out, 1), "f,1,100,100,100,100,100,100,100,100,0");
	tu_result_free(&r);
	r = run_ok(NULL, NULL, NULL, NULL);
	cr_assert_null(strstr(r.out, "counters"), "%s", r.out);
	tu_result_free(&r);
}

Test(metrics, damaged_counters_block_loses_only_the_counter_values)
{
	const char *names[1] = { "page-faults" };
	const uint32_t flags[1] = { RECFMT_COUNTER_RECORDED };
	struct tg_trace *t = new_trace(trace);
	uint64_t a = 5, b = 9;
	struct tu_result r;

	tg_site(t, 1, "f");
	cr_assert_eq(tg_counter_set(t, 1, 1, names, flags), 0);
	tg_enter_ctr(t, 1, 1, 1000, &a);
	tg_exit_ctr(t, 1, 1, 1100, &b);
	cr_assert_eq(tg_finish(t, true), 0);
	r = run_ok("--format=csv", NULL, NULL, NULL);
	cr_assert_str_eq(tu_line(r.out, 1), "f,1,100,100,100,100,100,100,100,100,0,4,4.00");
	tu_result_free(&r);
}

/*
 * main: outer [1000, 3500) > a [1500, 2600) > a [1700, 1800);
 *       outer > b [2900, 3100)
 * w:    c [1200, 1300)
 * With --interval=1us (time zero at tick 1000): [0, 1us), [1us, 2us), [2us, 3us).
 */
static void write_intervals(void)
{
	struct tg_trace *t = new_trace(trace);

	tg_site(t, 1, "outer");
	tg_site(t, 2, "a");
	tg_site(t, 3, "b");
	tg_site(t, 4, "c");
	tg_thread(t, 1, 10, "main");
	tg_thread(t, 2, 11, "w");
	tg_enter(t, 1, 1, 1000);
	tg_enter(t, 1, 2, 1500);
	tg_enter(t, 1, 2, 1700);
	tg_exit(t, 1, 2, 1800);
	tg_exit(t, 1, 2, 2600);
	tg_enter(t, 1, 3, 2900);
	tg_exit(t, 1, 3, 3100);
	tg_exit(t, 1, 1, 3500);
	tg_enter(t, 2, 4, 1200);
	tg_exit(t, 2, 4, 1300);
	cr_assert_eq(tg_finish(t, true), 0);
}

Test(metrics, interval_rows_split_activations_at_boundaries)
{
	static const char *const want[] = {
		"interval_start_ns,thread,function,calls,total_ns,percent",
		"0,main,outer,1,1000,100.00",
		"0,main,a,2,500,50.00",
		"0,w,c,1,100,10.00",
		"1000,main,outer,0,1000,100.00",
		"1000,main,a,0,600,60.00",
		"1000,main,b,1,100,10.00",
		"2000,main,outer,0,500,50.00",
		"2000,main,b,0,100,10.00",
	};
	struct tu_result r;

	write_intervals();
	r = run_ok("--format=csv", "--interval=1us", NULL, NULL);
	cr_assert_eq(tu_nr_lines(r.out), 9, "%s", r.out);
	for (unsigned i = 0; i < 9; i++)
		cr_assert_str_eq(tu_line(r.out, i), want[i]);
	tu_result_free(&r);

	/* The shared filters apply: one thread, one function. */
	r = run_ok("--format=csv", "--interval=1us", "--thread=main", "--function=^b$");
	cr_assert_eq(tu_nr_lines(r.out), 3, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 1), "1000,main,b,1,100,10.00");
	cr_assert_str_eq(tu_line(r.out, 2), "2000,main,b,0,100,10.00");
	tu_result_free(&r);

	/* Table: a header per interval and thread. */
	r = run_ok("--interval=1us", NULL, NULL, NULL);
	cr_assert(strstr(r.out, "[1.00µs, 2.00µs) thread main\n"), "%s", r.out);
	tu_result_free(&r);
}

Test(metrics, one_ns_intervals_work_and_a_zero_interval_is_a_usage_error)
{
	struct tu_result r;

	write_intervals();
	r = tu_run("summary", "--interval=1ns", "--format=csv", "--function=^b$", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 201, "b's 200 ns, one row each: %s", r.out);
	tu_result_free(&r);
	r = tu_run("summary", "--interval=0s", trace, NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	tu_result_free(&r);
}

/* Sums the interval rows of (thread, function); one scan of the text. */
static void interval_sums(const char *csv, const char *thread, const char *fn, uint64_t *calls,
			  uint64_t *total)
{
	const char *p = strchr(csv, '\n');

	*calls = *total = 0;
	for (; p && p[1]; p = strchr(p + 1, '\n')) {
		char th[64], name[128];
		uint64_t k, c, ns;

		cr_assert_eq(sscanf(p + 1, "%" SCNu64 ",%63[^,],%127[^,],%" SCNu64 ",%" SCNu64 ",",
				    &k, th, name, &c, &ns),
			     5, "%.80s", p + 1);
		if (!strcmp(th, thread) && !strcmp(name, fn)) {
			*calls += c;
			*total += ns;
		}
	}
}

Test(metrics, interval_times_add_up_exactly_to_summary_totals_with_a_rounding_clock)
{
	/* A TSC clock of 2.999999 GHz, so that boundaries and durations are
	 * no whole numbers of ns and every interval's time is rounded. Random nested
	 * activations on two threads, some recursive, some spanning many
	 * intervals. */
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2999999000ull,
				 .start_ticks = 12345 };
	struct tg_trace *t = tg_create(trace, &cfg);
	struct csv_row rows[16];
	struct tu_result r, iv;
	uint64_t seed = 42;
	size_t n;

	cr_assert(t);
	tg_site(t, 1, "p");
	tg_site(t, 2, "q");
	tg_site(t, 3, "r");
	tg_thread(t, 1, 10, "one");
	tg_thread(t, 2, 11, "two");
	for (uint32_t th = 1; th <= 2; th++) {
		uint64_t now = 12345 + th * 7;
		uint32_t stack[64], sp = 0;

		for (int i = 0; i < 20000; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			now += 1 + (seed >> 33) % 5000;
			if (sp < 64 && (sp == 0 || (seed >> 20) % 3)) {
				stack[sp++] = 1 + (uint32_t)((seed >> 40) % 3);
				tg_enter(t, th, stack[sp - 1], now);
			} else {
				tg_exit(t, th, stack[--sp], now);
			}
		}
		while (sp)
			tg_exit(t, th, stack[--sp], now += 3);
	}
	cr_assert_eq(tg_finish(t, true), 0);

	r = run_ok("--format=csv", "--by-thread", NULL, NULL);
	n = parse_summary_csv(r.out, true, rows, 16);
	cr_assert_eq(n, 6, "%s", r.out);
	iv = run_ok("--format=csv", "--interval=7us", NULL, NULL);
	cr_assert_gt(strlen(iv.out), 100 * 20, "many intervals");
	for (size_t i = 0; i < n; i++) {
		uint64_t calls, total;

		interval_sums(iv.out, rows[i].thread, rows[i].name, &calls, &total);
		cr_assert_eq(calls, rows[i].calls, "%s %s", rows[i].thread, rows[i].name);
		cr_assert_eq(total, rows[i].total, "%s %s", rows[i].thread, rows[i].name);
	}
	tu_result_free(&r);
	tu_result_free(&iv);
}

/* f lasts 100, 200 and 5000 ns; g (inside the long f) 50 ns. */
static void write_long(void)
{
	struct tg_trace *t = new_trace(trace);

	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_enter(t, 1, 1, 1000);
	tg_exit(t, 1, 1, 1100);
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 2200);
	tg_enter(t, 1, 1, 3000);
	tg_enter(t, 1, 2, 3100);
	tg_exit(t, 1, 2, 3150);
	tg_exit(t, 1, 1, 8000);
	cr_assert_eq(tg_finish(t, true), 0);
}

Test(metrics, max_duration_makes_longer_activations_errors_in_summary_and_histogram)
{
	struct csv_row rows[4];
	struct tu_result r;

	write_long();
	r = run_ok("--format=csv", "--max-duration=1us", NULL, NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 2);
	cr_assert_str_eq(rows[0].name, "f");
	cr_assert_eq(rows[0].calls, 2);
	cr_assert_eq(rows[0].errors, 1);
	cr_assert_eq(rows[0].total, 300);
	cr_assert_eq(rows[0].max, 200);
	cr_assert_eq(rows[1].calls, 1, "g itself is short");
	tu_result_free(&r);

	/* Exactly at the limit is still a time. */
	r = run_ok("--format=csv", "--max-duration=5us", NULL, NULL);
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 4), 2);
	cr_assert_eq(rows[0].calls, 3);
	cr_assert_eq(rows[0].errors, 0);
	tu_result_free(&r);

	r = tu_run("histogram", "--format=csv", "--max-duration=1us", "--function=^f$", trace,
		   NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	uint64_t count = 0;
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++)
		count += strtoull(strrchr(tu_line(r.out, i), ',') + 1, NULL, 10);
	cr_assert_eq(count, 2, "%s", r.out);
	tu_result_free(&r);

	r = tu_run("summary", "--max-duration=soon", trace, NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);

	/* --interval with --max-duration: the long f is not in the intervals. */
	r = run_ok("--format=csv", "--max-duration=1us", "--interval=1ms", "--function=^f$");
	cr_assert_str_eq(tu_line(r.out, 1), "0,serial1,f,2,300,0.03");
	tu_result_free(&r);
}

Test(metrics, many_threads_each_with_its_first_block_keep_every_activation)
{
	/* Each new thread's EVENTS block grows the thread table while the
	 * previous thread's block waits for a COUNTERS block (scopes.c). */
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;

	tg_site(t, 1, "f");
	for (uint32_t th = 1; th <= 40; th++) {
		tg_enter(t, th, 1, 1000 + th);
		tg_exit(t, th, 1, 1100 + th);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = run_ok("--format=csv", "--interval=1s", NULL, NULL);
	cr_assert_eq(tu_nr_lines(r.out), 41, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 40), "0,serial40,f,1,100,0.00");
	tu_result_free(&r);
}

Test(metrics, check_fails_a_counters_block_that_annotates_nothing_and_summary_ignores_it)
{
	const char *names[1] = { "page-faults" };
	const uint32_t flags[1] = { RECFMT_COUNTER_RECORDED };
	uint64_t a = 5, b = 9, junk[2] = { 1, 1000 };
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;

	tg_site(t, 1, "f");
	cr_assert_eq(tg_counter_set(t, 1, 1, names, flags), 0);
	tg_enter_ctr(t, 1, 1, 1000, &a);
	tg_exit_ctr(t, 1, 1, 1100, &b);
	cr_assert_eq(tg_flush(t), 0);
	/* A stray block: after the good one, claiming 2 events of thread 1. */
	cr_assert_eq(tg_raw_counters(t, 1, 2, 1, junk), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1, "%s", r.out);
	cr_assert(strstr(r.err, "COUNTERS block does not follow the EVENTS block it annotates"),
		  "%s", r.err);
	tu_result_free(&r);
	r = run_ok("--format=csv", NULL, NULL, NULL);
	cr_assert_str_eq(tu_line(r.out, 1), "f,1,100,100,100,100,100,100,100,100,0,4,4.00");
	tu_result_free(&r);
}

Test(metrics, info_names_the_counters_recorded_and_not)
{
	struct tu_result r;

	write_counters();
	r = tu_run("info", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\ncounters:         instructions cycles (not recorded: "
				"cache-misses)\n"),
		  "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert(strstr(r.out, ",\"counters\":{\"recorded\":[\"instructions\",\"cycles\"],"
				"\"not_recorded\":[\"cache-misses\"]}}\n"),
		  "%s", r.out);
	tu_result_free(&r);
}

/*
 * Counters are the pairing engine's (scopes.c), on every walker: thread 1
 * "main" leaves a leaf by longjmp, thread 2 "w2" counts a leaf of its own,
 * thread 3 "w3" records no counters.
 *   main: outer [1000, 1500) instructions 100 -> 600: +500
 *           leaf [1100, ...) left without an exit (an error, no counts)
 *         leaf [1600, 1700) 700 -> 750: +50
 *   w2:   leaf [1000, 1100) 10 -> 40: +30
 *   w3:   leaf [1000, 1100), no counters
 */
Test(metrics, counters_survive_a_longjmp_and_are_the_same_on_every_number_of_walkers)
{
	const char *names[1] = { "instructions" };
	const uint32_t flags[1] = { RECFMT_COUNTER_RECORDED };
	const char *walkers[] = { "1", "2", "3" };
	const char *args[][2] = { { "--format=csv", NULL }, { "--format=csv", "--by-thread" },
				  { "--format=json", NULL }, { NULL, NULL } };
	struct tg_trace *t = new_trace(trace);
	uint64_t v[][1] = { { 100 }, { 200 }, { 600 }, { 700 }, { 750 }, { 10 }, { 40 } };
	struct tu_result r, one[4];

	tg_site(t, 1, "outer");
	tg_site(t, 2, "leaf");
	tg_thread(t, 1, 10, "main");
	tg_thread(t, 2, 11, "w2");
	tg_thread(t, 3, 12, "w3");
	cr_assert_eq(tg_counter_set(t, 1, 1, names, flags), 0);
	cr_assert_eq(tg_counter_set(t, 2, 1, names, flags), 0);
	tg_enter_ctr(t, 1, 1, 1000, v[0]);
	tg_enter_ctr(t, 1, 2, 1100, v[1]);
	tg_exit_ctr(t, 1, 1, 1500, v[2]);
	tg_enter_ctr(t, 1, 2, 1600, v[3]);
	tg_exit_ctr(t, 1, 2, 1700, v[4]);
	tg_enter_ctr(t, 2, 2, 1000, v[5]);
	tg_exit_ctr(t, 2, 2, 1100, v[6]);
	tg_enter(t, 3, 2, 1000);
	tg_exit(t, 3, 2, 1100);
	cr_assert_eq(tg_finish(t, true), 0);

	cr_assert_eq(setenv("TRACETOOL_THREADS", "1", 1), 0);
	for (unsigned a = 0; a < 4; a++)
		one[a] = run_ok(args[a][0], args[a][1], NULL, NULL);
	cr_assert_str_eq(tu_line(one[0].out, 0),
			 SUMMARY_HEADER ",instructions_total,instructions_mean");
	/* The leaf left by longjmp is an error with no counts; the timed
	 * leaves add 50 + 30 over 2 activations with counters. */
	cr_assert_str_eq(tu_line(one[0].out, 1), "outer,1,500,500,500,500,500,500,500,500,0,500,500.00");
	cr_assert_str_eq(tu_line(one[0].out, 2), "leaf,3,300,300,100,100,100,100,100,100,1,80,40.00");
	cr_assert_str_eq(tu_line(one[1].out, 1),
			 "main,outer,1,500,500,500,500,500,500,500,500,0,500,500.00");
	cr_assert(strstr(one[1].out, "\nmain,leaf,1,100,100,100,100,100,100,100,100,1,50,50.00\n"),
		  "%s", one[1].out);
	cr_assert(strstr(one[1].out, "\nw2,leaf,1,100,100,100,100,100,100,100,100,0,30,30.00\n"),
		  "%s", one[1].out);
	cr_assert(strstr(one[1].out, "\nw3,leaf,1,100,100,100,100,100,100,100,100,0,,\n"), "%s",
		  one[1].out);
	for (unsigned w = 1; w < 3; w++) {
		cr_assert_eq(setenv("TRACETOOL_THREADS", walkers[w], 1), 0);
		for (unsigned a = 0; a < 4; a++) {
			r = run_ok(args[a][0], args[a][1], NULL, NULL);
			cr_assert_str_eq(r.out, one[a].out, "TRACETOOL_THREADS=%s", walkers[w]);
			cr_assert_str_eq(r.err, one[a].err, "TRACETOOL_THREADS=%s", walkers[w]);
			tu_result_free(&r);
		}
	}
	unsetenv("TRACETOOL_THREADS");
	for (unsigned a = 0; a < 4; a++)
		tu_result_free(&one[a]);
}
