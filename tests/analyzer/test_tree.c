/* SPDX-License-Identifier: MIT */
/*
 * test_tree.c - `tracetool tree` and `tracetool flame` (tracetool(1), tree, flame) on
 * traces of known call structure: exact calls, totals and self per path,
 * recursion kept, --depth, --min-percent, --callers, --by-thread, the
 * names' ';' made '_', flame's lines equal to tree's rows, and the self
 * times of the paths adding up to summary's, also with a clock that is
 * not 1 ns per tick.
 */
#include "ttest.h"

#include <unistd.h>

static const char *trace;

static void setup(void)
{
	trace = tu_path(0, "tree.zst");
}

static void teardown(void)
{
	unlink(trace);
}

TestSuite(tree, .init = setup, .fini = teardown, .timeout = 60);

#define TREE_HEADER "path,depth,calls,total_ns,self_ns"

/*
 * Thread 1 "main": main [1000,2000) > { a [1100,1400) > b [1150,1250),
 *   b [1500,1900) > b [1550,1850) > b [1600,1700), a [1950,1990) }
 * Thread 2 "worker": w [1000,1600) > a [1100,1300) > b [1150,1200)
 */
static void write_known(void)
{
	struct tg_trace *t = new_trace(trace);

	cr_assert_eq(tg_known_tree(t, NULL, 0), 0);
	cr_assert_eq(tg_finish(t, true), 0);
}

static struct tu_result run_ok(const char *cmd, const char *o1, const char *o2, const char *o3)
{
	struct tu_result r = tu_run(cmd, trace, o1, o2, o3, NULL);

	cr_assert_eq(r.status, 0, "%s: exit %d, stderr: %s", cmd, r.status, r.err);
	return r;
}

static void assert_lines(const char *out, const char *const *want, unsigned n)
{
	cr_assert_eq(tu_nr_lines(out), n, "lines: %u, want %u:\n%s", tu_nr_lines(out), n, out);
	for (unsigned i = 0; i < n; i++)
		cr_assert_str_eq(tu_line(out, i), want[i], "line %u:\n%s", i, out);
}

Test(tree, csv_has_every_path_with_exact_calls_total_and_self)
{
	static const char *const want[] = {
		TREE_HEADER,
		"main,0,1,1000,260",
		"main;b,1,1,400,100",
		"main;b;b,2,1,300,200",
		"main;b;b;b,3,1,100,100",
		"main;a,1,2,340,240",
		"main;a;b,2,1,100,100",
		"w,0,1,600,400",
		"w;a,1,1,200,150",
		"w;a;b,2,1,50,50",
	};
	struct tu_result r;

	write_known();
	r = run_ok("tree", "--format=csv", NULL, NULL);
	assert_lines(r.out, want, sizeof(want) / sizeof(want[0]));
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
}

Test(tree, flame_lines_are_the_tree_rows)
{
	static const char *const self[] = {
		"main 260", "main;b 100", "main;b;b 200", "main;b;b;b 100", "main;a 240",
		"main;a;b 100", "w 400", "w;a 150", "w;a;b 50",
	};
	static const char *const calls[] = {
		"main 1", "main;b 1", "main;b;b 1", "main;b;b;b 1", "main;a 2",
		"main;a;b 1", "w 1", "w;a 1", "w;a;b 1",
	};
	static const char *const by_thread[] = {
		"main;main 260", "main;main;b 100", "main;main;b;b 200", "main;main;b;b;b 100",
		"main;main;a 240", "main;main;a;b 100", "worker;w 400", "worker;w;a 150",
		"worker;w;a;b 50",
	};
	const char *out = tu_path(1, "tree.folded");
	struct tu_result r;
	FILE *f;
	char buf[4096];
	size_t n;

	write_known();
	r = run_ok("flame", NULL, NULL, NULL);
	assert_lines(r.out, self, 9);
	tu_result_free(&r);
	r = run_ok("flame", "--weight=calls", NULL, NULL);
	assert_lines(r.out, calls, 9);
	tu_result_free(&r);
	r = run_ok("flame", "--by-thread", "-o", out);
	cr_assert_str_eq(r.out, "");
	tu_result_free(&r);
	f = fopen(out, "r");
	cr_assert(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(out);
	assert_lines(buf, by_thread, 9);
	/* -o never overwrites the input. */
	r = tu_run("flame", trace, "-o", trace, NULL);
	cr_assert_eq(r.status, 2, "as chrome's -o: wrong usage");
	cr_assert(strstr(r.err, "refusing to overwrite"), "%s", r.err);
	tu_result_free(&r);
	r = tu_run("flame", "--weight=wall", trace, NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
}

Test(tree, depth_and_min_percent_hide_paths)
{
	static const char *const depth1[] = {
		TREE_HEADER, "main,0,1,1000,260", "main;b,1,1,400,100", "main;a,1,2,340,240",
		"w,0,1,600,400", "w;a,1,1,200,150",
	};
	/* Grand total 1600 ns: 30 % is 480 ns. */
	static const char *const min30[] = {
		TREE_HEADER, "main,0,1,1000,260", "w,0,1,600,400",
	};
	struct tu_result r;

	write_known();
	r = run_ok("tree", "--format=csv", "--depth=1", NULL);
	assert_lines(r.out, depth1, 6);
	tu_result_free(&r);
	r = run_ok("tree", "--format=csv", "--min-percent=30", NULL);
	assert_lines(r.out, min30, 3);
	tu_result_free(&r);
	r = tu_run("tree", "--min-percent=abc", trace, NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
}

Test(tree, callers_turns_the_tree_upside_down)
{
	static const char *const want[] = {
		TREE_HEADER,
		"b,0,5,950,550",
		"b;b,1,2,400,300",
		"b;b;main,2,1,300,200",
		"b;b;b,2,1,100,100",
		"b;b;b;main,3,1,100,100",
		"b;main,1,1,400,100",
		"b;a,1,2,150,150",
		"b;a;main,2,1,100,100",
		"b;a;w,2,1,50,50",
	};
	struct tu_result r;

	write_known();
	r = run_ok("tree", "--format=csv", "--callers=^b$", NULL);
	assert_lines(r.out, want, sizeof(want) / sizeof(want[0]));
	tu_result_free(&r);
}

Test(tree, by_thread_and_function_filter)
{
	static const char *const want[] = {
		"thread,path,depth,calls,total_ns,self_ns",
		"main,main;b,1,1,400,100",
		"main,main;b;b,2,1,300,200",
		"main,main;b;b;b,3,1,100,100",
		"main,main;a;b,2,1,100,100",
		"worker,w;a;b,2,1,50,50",
	};
	struct tu_result r;

	write_known();
	r = run_ok("tree", "--format=csv", "--by-thread", "--function=^b$");
	assert_lines(r.out, want, sizeof(want) / sizeof(want[0]));
	tu_result_free(&r);
	r = run_ok("tree", "--format=csv", "--thread=worker", NULL);
	cr_assert_eq(tu_nr_lines(r.out), 4, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 1), "w,0,1,600,400");
	tu_result_free(&r);
}

Test(tree, table_is_indented_with_shares)
{
	struct tu_result r;

	write_known();
	r = run_ok("tree", NULL, NULL, NULL);
	cr_assert(strstr(r.out, " 62.5%  main\n"), "%s", r.out);
	cr_assert(strstr(r.out, " 25.0%    b\n"), "%s", r.out);
	cr_assert(strstr(r.out, "  6.2%        b\n"), "%s", r.out);
	cr_assert(strstr(r.out, "9 paths shown, grand total 1.60µs"), "%s", r.out);
	tu_result_free(&r);
	r = run_ok("tree", "--format=json", NULL, NULL);
	cr_assert(strstr(r.out, "{\"path\":\"main;b;b\",\"function\":\"b\",\"depth\":2,"
				"\"calls\":1,\"total_ns\":300,\"self_ns\":200,\"percent\":18.75}"),
		  "%s", r.out);
	tu_result_free(&r);
}

Test(tree, separators_in_names_become_underscores)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;

	tg_site(t, 1, "a;b");
	tg_site(t, 2, "line\nbreak");
	tg_enter(t, 1, 1, 1000);
	tg_enter(t, 1, 2, 1010);
	tg_exit(t, 1, 2, 1020);
	tg_exit(t, 1, 1, 1100);
	cr_assert_eq(tg_finish(t, true), 0);
	r = run_ok("flame", NULL, NULL, NULL);
	cr_assert_str_eq(r.out, "a_b 90\na_b;line_break 10\n");
	tu_result_free(&r);
}

/* Self per name from a tree csv (the last name of each path). */
static uint64_t tree_self_of(const char *csv, const char *name)
{
	const char *line = strchr(csv, '\n'); /* after the header */
	uint64_t sum = 0;

	while (line && *++line) {
		const char *c = strchr(line, ','), *semi = line, *p;
		uint64_t depth, calls, total, self;

		for (p = line; p < c; p++)
			if (*p == ';')
				semi = p + 1;
		if ((size_t)(c - semi) == strlen(name) && !strncmp(semi, name, strlen(name))) {
			cr_assert_eq(sscanf(c + 1, "%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64,
					    &depth, &calls, &total, &self),
				     4);
			sum += self;
		}
		line = strchr(line, '\n');
	}
	return sum;
}

Test(tree, self_of_the_paths_adds_up_to_summarys_with_any_clock)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2900000007ull,
				 .start_ticks = 5000, .pid = 1 };
	struct tg_trace *t = tg_create(trace, &cfg);
	static const char *const names[] = { "r", "s", "u", "v", "x", "y" };
	struct csv_row rows[16];
	uint64_t rng = 88172645463325252ull, ticks = 5000, sum_tree = 0, sum_summary = 0;
	struct tu_result tr, sr;
	size_t n;

	cr_assert(t);
	for (uint32_t s = 0; s < 6; s++)
		tg_site(t, s + 1, names[s]);
	for (uint32_t th = 1; th <= 3; th++) {
		uint32_t stack[8], sp = 0;

		tg_thread(t, th, 900 + th, NULL);
		for (int i = 0; i < 20000; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			ticks += 1 + rng % 997;
			if (sp < 8 && (sp == 0 || rng % 2)) {
				stack[sp] = 1 + (uint32_t)(rng >> 20) % 6;
				tg_enter(t, th, stack[sp++], ticks);
			} else if (sp) {
				tg_exit(t, th, stack[--sp], ticks);
			}
		}
		while (sp)
			tg_exit(t, th, stack[--sp], ticks += 7);
	}
	tg_sync(t, ticks, ticks / 3, 0);
	cr_assert_eq(tg_finish(t, true), 0);
	tr = run_ok("tree", "--format=csv", NULL, NULL);
	sr = tu_run("summary", "--format=csv", trace, NULL);
	cr_assert_eq(sr.status, 0);
	n = parse_summary_csv(sr.out, false, rows, 16);
	cr_assert_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		uint64_t s = tree_self_of(tr.out, rows[i].name);

		cr_assert_eq(s, rows[i].self, "%s: tree %" PRIu64 ", summary %" PRIu64,
			     rows[i].name, s, rows[i].self);
		sum_tree += s;
		sum_summary += rows[i].self;
	}
	cr_assert_eq(sum_tree, sum_summary);
	tu_result_free(&tr);
	tu_result_free(&sr);
}
