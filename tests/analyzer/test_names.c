/* SPDX-License-Identifier: MIT */
/*
 * test_names.c - names that never merge (docs/ANALYZER.md, "Names"): two
 * sites of one name are two rows in summary, histogram, tree, flame, chrome,
 * perfetto's names, export and diff, shown as "init (a.c:12)"; --by-site
 * gives the name alone and a column site; --function matches the name, not
 * the place; diff matches a scope whose line moved between two builds.
 *
 * Trace A (monotonic clock, 1 tick = 1 ns), one thread:
 *   main [0, 10000) > init@src/a.c:12 x3 of 100 ns, init@lib/b.c:3 x1 of 1000 ns,
 *   solo@m.c:7 x1 of 50 ns.
 */
#include "ttest.h"

#include <unistd.h>

static const char *a_path, *moved_path, *out_dir;

static void write_trace(const char *path, uint32_t solo_line)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .pid = 7 };
	struct tg_trace *t = tg_create(path, &cfg);

	cr_assert(t);
	tg_site_at(t, 1, "main", "m.c", 1);
	tg_site_at(t, 2, "init", "src/a.c", 12);
	tg_site_at(t, 3, "init", "lib/b.c", 3);
	tg_site_at(t, 4, "solo", "m.c", solo_line);
	tg_thread(t, 1, 7, "main");
	tg_enter(t, 1, 1, 0);
	for (uint64_t i = 0; i < 3; i++) {
		tg_enter(t, 1, 2, 1000 + 1000 * i);
		tg_exit(t, 1, 2, 1100 + 1000 * i);
	}
	tg_enter(t, 1, 3, 5000);
	tg_exit(t, 1, 3, 6000);
	tg_enter(t, 1, 4, 7000);
	tg_exit(t, 1, 4, 7050);
	tg_exit(t, 1, 1, 10000);
	cr_assert_eq(tg_finish(t, true), 0);
}

static void setup(void)
{
	a_path = tu_path(0, "names_a.zst");
	moved_path = tu_path(1, "names_moved.zst");
	out_dir = tu_path(2, "names_export");
	write_trace(a_path, 7);
	write_trace(moved_path, 9); /* solo's line moved in the "new build" */
}

static void teardown(void)
{
	unlink(a_path);
	unlink(moved_path);
	cr_assert(tu_rm_rf(out_dir), "%s", out_dir);
}

TestSuite(names, .init = setup, .fini = teardown, .timeout = 60);

Test(names, same_name_at_two_sites_is_two_summary_rows_told_apart_by_site)
{
	struct tu_result r = tu_run("summary", "--format=csv", "--sort=name", a_path, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 5, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 1), "init (a.c:12),3,300,300,100,100,100,100,100,100,0");
	cr_assert_str_eq(tu_line(r.out, 2), "init (b.c:3),1,1000,1000,1000,1000,1000,1000,1000,1000,0");
	cr_assert_str_eq(tu_line(r.out, 3), "main,1,10000,8650,10000,10000,10000,10000,10000,10000,0");
	cr_assert_str_eq(tu_line(r.out, 4), "solo,1,50,50,50,50,50,50,50,50,0");
	tu_result_free(&r);

	r = tu_run("summary", a_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "init (a.c:12)") && strstr(r.out, "init (b.c:3)"), "%s", r.out);
	cr_assert(!strchr(r.out, '\x1f'), "%s", r.out);
	tu_result_free(&r);
}

Test(names, by_site_gives_the_name_alone_and_a_site_column)
{
	struct tu_result r =
		tu_run("summary", "--format=csv", "--by-site", "--sort=name", a_path, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 0), "function,calls,total_ns,self_ns,min_ns,mean_ns,p50_ns,"
					   "p90_ns,p99_ns,max_ns,errors,site");
	cr_assert(strstr(r.out, "\ninit,3,300,300,100,100,100,100,100,100,0,src/a.c:12\n"), "%s",
		  r.out);
	cr_assert(strstr(r.out, "\ninit,1,1000,1000,1000,1000,1000,1000,1000,1000,0,lib/b.c:3\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "\nsolo,1,50,50,50,50,50,50,50,50,0,m.c:7\n"), "%s", r.out);
	tu_result_free(&r);

	r = tu_run("summary", "--format=json", "--by-site", a_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "\"function\":\"init\",\"site\":\"lib/b.c:3\""), "%s", r.out);
	tu_result_free(&r);

	r = tu_run("tree", "--format=csv", "--by-site", a_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 0), "path,depth,calls,total_ns,self_ns,site");
	cr_assert(strstr(r.out, "\nmain;init (b.c:3),1,1,1000,1000,lib/b.c:3\n"), "%s", r.out);
	tu_result_free(&r);
}

Test(names, function_regex_matches_the_name_not_the_place)
{
	struct tu_result r =
		tu_run("summary", "--format=csv", "--function=^init$", "--sort=name", a_path, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 3, "%s", r.out);
	cr_assert(strstr(r.out, "\ninit (a.c:12),3,"), "%s", r.out);
	cr_assert(strstr(r.out, "\ninit (b.c:3),1,"), "%s", r.out);
	tu_result_free(&r);

	/* The place is not part of what --function sees. */
	r = tu_run("summary", "--format=csv", "--function=a\\.c", a_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 1, "%s", r.out);
	tu_result_free(&r);
}

Test(names, tree_flame_and_histogram_keep_the_sites_apart)
{
	struct tu_result r = tu_run("flame", a_path, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "main;init (a.c:12) 300\n"), "%s", r.out);
	cr_assert(strstr(r.out, "main;init (b.c:3) 1000\n"), "%s", r.out);
	cr_assert(strstr(r.out, "main;solo 50\n"), "%s", r.out);
	tu_result_free(&r);

	r = tu_run("tree", "--format=csv", a_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nmain;init (a.c:12),1,3,300,300\n"), "%s", r.out);
	tu_result_free(&r);

	r = tu_run("histogram", a_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "init (a.c:12)  (3 calls"), "%s", r.out);
	cr_assert(strstr(r.out, "init (b.c:3)  (1 calls"), "%s", r.out);
	tu_result_free(&r);
}

Test(names, chrome_names_a_later_site_of_a_name_by_its_place)
{
	const char *json = tu_path(3, "names.json");
	struct tu_result r = tu_run("chrome", "-o", json, a_path, NULL);
	char *text;
	size_t n;
	FILE *f;

	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	f = fopen(json, "r");
	cr_assert(f);
	text = calloc(1, 1 << 20);
	n = fread(text, 1, (1 << 20) - 1, f);
	fclose(f);
	unlink(json);
	cr_assert(n > 0);
	cr_assert(tu_json_valid(text));
	cr_assert(strstr(text, "\"name\":\"init\""), "%s", text);
	cr_assert(strstr(text, "\"name\":\"init (b.c:3)\""), "%s", text);
	free(text);
}

Test(names, export_scopes_have_the_summary_name_and_a_site)
{
	struct tu_result r = tu_run("export", "--format=csv", "-o", out_dir, a_path, NULL);
	char path[512], line[512];
	bool a = false, b = false;
	FILE *f;

	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	snprintf(path, sizeof(path), "%s/scopes.csv", out_dir);
	f = fopen(path, "r");
	cr_assert(f, "%s", path);
	cr_assert(fgets(line, sizeof(line), f));
	cr_assert_str_eq(line, "run_id,scope_id,name,site\n");
	while (fgets(line, sizeof(line), f)) {
		a |= strstr(line, ",init (a.c:12),src/a.c:12\n") != NULL;
		b |= strstr(line, ",init (b.c:3),lib/b.c:3\n") != NULL;
	}
	fclose(f);
	cr_assert(a && b);
}

Test(names, diff_matches_a_scope_whose_line_moved_and_keeps_two_sites_apart)
{
	struct tu_result r = tu_run("diff", "--format=csv", a_path, moved_path, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	/* main, the two inits and solo: solo@m.c:7 and solo@m.c:9 are one scope. */
	cr_assert_eq(tu_nr_lines(r.out), 5, "%s", r.out);
	cr_assert(strstr(r.out, "\nsolo,1,1,50,50,"), "%s", r.out);
	cr_assert(strstr(r.out, "\ninit (a.c:12),3,3,300,300,"), "%s", r.out);
	cr_assert(strstr(r.out, "\ninit (b.c:3),1,1,1000,1000,"), "%s", r.out);
	cr_assert(!strstr(r.out, ",new") && !strstr(r.out, ",gone"), "%s", r.out);
	tu_result_free(&r);
}

Test(names, diff_by_site_gives_the_name_alone_and_the_site_last)
{
	struct tu_result r = tu_run("diff", "--format=csv", "--by-site", a_path, moved_path, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(tu_line(r.out, 0), ",runs_base,runs_new,site"), "%s", r.out);
	cr_assert(strstr(r.out, "\ninit,3,3,300,300,"), "%s", r.out);
	cr_assert(strstr(r.out, ",1,1,src/a.c:12\n"), "%s", r.out);
	cr_assert(strstr(r.out, ",1,1,lib/b.c:3\n"), "%s", r.out);
	/* solo matched across the builds by its name: the new build's place. */
	cr_assert(strstr(r.out, "\nsolo,1,1,50,50,"), "%s", r.out);
	cr_assert(strstr(r.out, ",1,1,m.c:9\n"), "%s", r.out);
	tu_result_free(&r);
}

/*
 * Finding F16 (FORMAT.md §3.11, 1.5): a FUNC is named in the MODULE its
 * record names. Two libraries mapped one after the other at the same
 * addresses (files gone, so the names are the addresses and the modules):
 * the same address in each is two functions; a FUNC of 1.4 (module 0) is
 * named by the latest module holding it; one naming a module the file does
 * not have, or one that does not hold its address, by no module.
 */
static void write_reused(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .pid = 16 };
	struct tg_trace *t = tg_create(path, &cfg);
	const uint64_t bias = 0x7f0000000000ull;
	uint64_t now = 0;

	cr_assert(t);
	cr_assert_eq(tg_reused_libs(t, "/nonexistent-f16", bias), 0);
	tg_func_in(t, 4, bias + 0x1400, 9);
	tg_func_in(t, 5, bias + 0x5000, 1);
	tg_thread(t, 1, 16, "main");
	for (uint32_t site = 1; site <= 5; site++) {
		for (uint32_t i = 0; i < site; i++) {
			tg_enter(t, 1, site, now += 10);
			tg_exit(t, 1, site, now += 100);
		}
	}
	cr_assert_eq(tg_finish(t, true), 0);
}

Test(names, F16_a_function_is_named_in_the_module_its_record_names)
{
	const char *path = tu_path(3, "names_reused.zst");
	struct tu_result r;

	write_reused(path);
	r = tu_run("summary", "--format=csv", "--sort=name", path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "function,calls,total_ns,self_ns,min_ns,mean_ns,p50_ns,p90_ns,"
				"p99_ns,max_ns,errors\n"
				"0x1200 [liba.so: missing],1,100,100,100,100,100,100,100,100,0\n"
				"0x1200 [libb.so: missing],2,200,200,100,100,100,100,100,100,0\n"
				"0x1300 [libb.so: missing],3,300,300,100,100,100,100,100,100,0\n"
				"0x7f0000001400 [no module],4,400,400,100,100,100,100,100,100,0\n"
				"0x7f0000005000 [no module],5,500,500,100,100,100,100,100,100,0\n");
	tu_result_free(&r);
	unlink(path);
}
