/* SPDX-License-Identifier: MIT */
/*
 * test_multi.c - several TRACE files in one command (tracetool(1), "Several TRACE files"): summary,
 * histogram, tree, flame and chrome over two synthetic recordings with
 * known answers (one with a 1 ns monotonic clock, one with a TSC at 2 ticks
 * per ns, so each file's times must be converted with its own clock), the
 * --by-process rows (NAME[PID]), a bad file among several (named, exit 1),
 * and two real recordings: a fork's parent and child, and two runs of one
 * program (prog_fork.c).
 */
#include "ttest.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *a_path, *b_path, *bad_path;

#define A_REAL 1700000000000000000ull
#define B_LATER_NS 5000000ull /* B starts 5 ms after A on the wall clock */

/*
 * A: pid 100, thread "srv" (os_tid 100), monotonic clock from tick 1000:
 *   main [1000, 2000) > f [1100, 1500); f [3000, 3100)
 * So f: 2 calls, total 500, self 500, min 100, max 400; main: 1, 1000, 600.
 */
static void write_a(void)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = 100, .start_real_ns = A_REAL };
	struct tg_trace *t = tg_create(a_path, &cfg);

	cr_assert(t);
	tg_site(t, 1, "main");
	tg_site(t, 2, "f");
	tg_thread(t, 1, 100, "srv");
	tg_enter(t, 1, 1, 1000);
	tg_enter(t, 1, 2, 1100);
	tg_exit(t, 1, 2, 1500);
	tg_exit(t, 1, 1, 2000);
	tg_enter(t, 1, 2, 3000);
	tg_exit(t, 1, 2, 3100);
	cr_assert_eq(tg_finish(t, true), 0);
}

/*
 * B: pid 101, thread "srv" (os_tid 101) and "io" (os_tid 102), a TSC at 2
 * ticks per ns (two SYNC records say so), time zero at tick 10000:
 *   srv: f [10000, 10200) [10400, 10800) [11000, 11600): 100, 200, 300 ns
 *   io:  g [12000, 14000) > f [12200, 12400): g 1000 ns (self 900), f 100 ns
 * So f: 4 calls, total 700, min 100, max 300; g: 1, 1000, 900.
 */
static void write_b(void)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2000000000ull,
				 .start_ticks = 10000, .pid = 101,
				 .start_real_ns = A_REAL + B_LATER_NS };
	struct tg_trace *t = tg_create(b_path, &cfg);

	cr_assert(t);
	tg_sync(t, 10000, 50000000, A_REAL + B_LATER_NS);
	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_thread(t, 1, 101, "srv");
	tg_thread(t, 2, 102, "io");
	tg_enter(t, 1, 1, 10000);
	tg_exit(t, 1, 1, 10200);
	tg_enter(t, 1, 1, 10400);
	tg_exit(t, 1, 1, 10800);
	tg_enter(t, 1, 1, 11000);
	tg_exit(t, 1, 1, 11600);
	tg_enter(t, 2, 2, 12000);
	tg_enter(t, 2, 1, 12200);
	tg_exit(t, 2, 1, 12400);
	tg_exit(t, 2, 2, 14000);
	tg_sync(t, 2010000, 51000000, A_REAL + B_LATER_NS + 1000000);
	cr_assert_eq(tg_finish(t, true), 0);
}

static void setup(void)
{
	a_path = tu_path(0, "multi_a.zst");
	b_path = tu_path(1, "multi_b.zst");
	bad_path = tu_path(2, "multi_bad.zst");
	write_a();
	write_b();
	FILE *f = fopen(bad_path, "w");
	cr_assert(f);
	fputs("not a trace at all\n", f);
	fclose(f);
}

static void teardown(void)
{
	unlink(a_path);
	unlink(b_path);
	unlink(bad_path);
	unlink(tu_path(3, "multi_out.json"));
}

TestSuite(multi, .init = setup, .fini = teardown, .timeout = 60);

static struct tu_result ok(struct tu_result r)
{
	cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
	return r;
}

/* The line of text that starts with prefix, or "". */
static const char *line_with(const char *text, const char *prefix)
{
	for (unsigned i = 0; i < tu_nr_lines(text); i++)
		if (strncmp(tu_line(text, i), prefix, strlen(prefix)) == 0)
			return tu_line(text, i);
	return "";
}

Test(multi, summary_adds_the_files_up_each_with_its_own_clock)
{
	struct tu_result r = ok(tu_run("summary", "--format=csv", a_path, b_path, NULL));
	struct csv_row rows[8];
	size_t n;

	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER);
	n = parse_summary_csv(r.out, false, rows, 8);
	cr_assert_eq(n, 3, "%s", r.out);
	const struct csv_row *f = find_row(rows, n, NULL, "f");
	cr_assert_eq(f->calls, 6);
	cr_assert_eq(f->total, 1200); /* 400 + 100 in A; 100 + 200 + 300 + 100 in B */
	cr_assert_eq(f->self, 1200);
	cr_assert_eq(f->min, 100);
	cr_assert_eq(f->max, 400);
	cr_assert_eq(f->mean, 200);
	cr_assert_eq(f->errors, 0);
	const struct csv_row *m = find_row(rows, n, NULL, "main");
	cr_assert_eq(m->calls, 1);
	cr_assert_eq(m->total, 1000);
	cr_assert_eq(m->self, 600);
	const struct csv_row *g = find_row(rows, n, NULL, "g");
	cr_assert_eq(g->calls, 1);
	cr_assert_eq(g->total, 1000);
	cr_assert_eq(g->self, 900);
	/* Sorted by total, ties by name: f 1200, g 1000, main 1000. */
	cr_assert(strncmp(tu_line(r.out, 1), "f,", 2) == 0);
	cr_assert(strncmp(tu_line(r.out, 2), "g,", 2) == 0);
	cr_assert(strncmp(tu_line(r.out, 3), "main,", 5) == 0);
	tu_result_free(&r);
}

Test(multi, summary_by_process_has_one_row_per_process_and_name)
{
	struct tu_result r =
		ok(tu_run("summary", "--format=csv", "--by-process", a_path, b_path, NULL));

	cr_assert_str_eq(tu_line(r.out, 0), "process," SUMMARY_HEADER);
	cr_assert_eq(tu_nr_lines(r.out), 5, "%s", r.out);
	/* NAME: the main thread's name (no MODULE record in these files). */
	cr_assert_str_eq(line_with(r.out, "srv[100],f,"), "srv[100],f,2,500,500,100,250,100,400,400,400,0");
	cr_assert_str_eq(line_with(r.out, "srv[100],main,"),
			 "srv[100],main,1,1000,600,1000,1000,1000,1000,1000,1000,0");
	cr_assert_str_eq(line_with(r.out, "srv[101],f,"), "srv[101],f,4,700,700,100,175,100,300,300,300,0");
	cr_assert_str_eq(line_with(r.out, "srv[101],g,"),
			 "srv[101],g,1,1000,900,1000,1000,1000,1000,1000,1000,0");
	tu_result_free(&r);

	r = ok(tu_run("summary", "--format=csv", "--by-process", "--by-thread", a_path, b_path,
		      NULL));
	cr_assert_str_eq(tu_line(r.out, 0), "process,thread," SUMMARY_HEADER);
	cr_assert_str_eq(line_with(r.out, "srv[101],io,f,"), "srv[101],io,f,1,100,100,100,100,100,100,100,100,0");
	cr_assert_str_eq(line_with(r.out, "srv[101],srv,f,"), "srv[101],srv,f,3,600,600,100,200,200,300,300,300,0");
	cr_assert_eq(tu_nr_lines(r.out), 6, "%s", r.out);
	tu_result_free(&r);

	r = ok(tu_run("summary", "--format=json", "--by-process", a_path, b_path, NULL));
	cr_assert(strstr(r.out, "{\"process\":\"srv[101]\",\"function\":\"f\",\"calls\":4,"), "%s",
		  r.out);
	cr_assert(strstr(r.out, "\"calls\":8,\"errors\":0,\"dropped\":0,\"truncated\":false,"
				"\"damaged\":false}"), "%s", r.out);
	tu_result_free(&r);

	r = ok(tu_run("summary", "--by-process", a_path, b_path, NULL));
	cr_assert(strstr(r.out, "process: function"), "%s", r.out);
	cr_assert(strstr(r.out, "srv[101]: g"), "%s", r.out);
	cr_assert(strstr(r.out, "4 of 4 scope names, 8 calls, 0 errors"), "%s", r.out);
	tu_result_free(&r);
}

Test(multi, one_file_with_by_process_is_one_process)
{
	struct tu_result r = ok(tu_run("summary", "--format=csv", "--by-process", b_path, NULL));

	cr_assert_eq(tu_nr_lines(r.out), 3, "%s", r.out);
	cr_assert_str_eq(line_with(r.out, "srv[101],f,"), "srv[101],f,4,700,700,100,175,100,300,300,300,0");
	tu_result_free(&r);
}

Test(multi, the_filters_apply_to_every_file)
{
	struct tu_result r = ok(tu_run("summary", "--format=csv", "--thread=io", "--function=^f$",
				       a_path, b_path, NULL));

	cr_assert_eq(tu_nr_lines(r.out), 2, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 1), "f,1,100,100,100,100,100,100,100,100,0");
	tu_result_free(&r);
	/* --from/--to: from each file's own start. */
	r = ok(tu_run("summary", "--format=csv", "--from=0", "--to=1us", "--function=^f$", a_path,
		      b_path, NULL));
	/* A: f at 100 ns (400); B: f at 0, 200, 500 ns (100, 200, 300); not B's at 1100 ns. */
	cr_assert_str_eq(tu_line(r.out, 1), "f,4,1000,1000,100,250,200,400,400,400,0");
	tu_result_free(&r);
}

Test(multi, a_bad_file_among_several_is_named_and_exits_1)
{
	struct tu_result r = tu_run("summary", "--format=csv", a_path, bad_path, b_path, NULL);

	cr_assert_eq(r.status, 1, "exit %d", r.status);
	cr_assert(strstr(r.err, bad_path), "stderr: %s", r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1, "stderr: %s", r.err);
	cr_assert_str_eq(r.out, "");
	tu_result_free(&r);

	static const char *const cmds[] = { "histogram", "tree", "flame", "chrome" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = tu_run(cmds[i], a_path, b_path, "/nonexistent/trace.zst", NULL);
		cr_assert_eq(r.status, 1, "%s: exit %d", cmds[i], r.status);
		cr_assert(strstr(r.err, "tracetool: /nonexistent/trace.zst: "), "%s: %s", cmds[i],
			  r.err);
		tu_result_free(&r);
	}
	r = tu_run("summary", "--interval=1ms", a_path, b_path, NULL);
	cr_assert_eq(r.status, 2, "exit %d", r.status);
	tu_result_free(&r);
}

Test(multi, histogram_by_process_counts_each_process)
{
	struct tu_result r = ok(tu_run("histogram", "--format=csv", "--by-process",
				       "--function=^f$", a_path, b_path, NULL));
	uint64_t count[2] = { 0, 0 };

	cr_assert_str_eq(tu_line(r.out, 0), "process,function,lo_ns,hi_ns,count");
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++) {
		const char *l = tu_line(r.out, i);
		uint64_t c = strtoull(strrchr(l, ',') + 1, NULL, 10);

		if (strncmp(l, "srv[100],f,", 11) == 0)
			count[0] += c;
		else if (strncmp(l, "srv[101],f,", 11) == 0)
			count[1] += c;
		else
			cr_assert_fail("unexpected line %s", l);
	}
	cr_assert_eq(count[0], 2);
	cr_assert_eq(count[1], 4);
	tu_result_free(&r);

	r = ok(tu_run("histogram", "--format=csv", "--function=^f$", a_path, b_path, NULL));
	uint64_t all = 0;
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++)
		all += strtoull(strrchr(tu_line(r.out, i), ',') + 1, NULL, 10);
	cr_assert_eq(all, 6);
	tu_result_free(&r);
}

Test(multi, tree_merges_paths_and_keeps_summarys_self_sum)
{
	struct tu_result r = ok(tu_run("tree", "--format=csv", a_path, b_path, NULL));

	cr_assert_str_eq(tu_line(r.out, 0), "path,depth,calls,total_ns,self_ns");
	cr_assert_eq(tu_nr_lines(r.out), 6, "%s", r.out);
	cr_assert_str_eq(line_with(r.out, "f,"), "f,0,4,700,700"); /* A's second f, B's srv */
	cr_assert_str_eq(line_with(r.out, "main,"), "main,0,1,1000,600");
	cr_assert_str_eq(line_with(r.out, "main;f,"), "main;f,1,1,400,400");
	cr_assert_str_eq(line_with(r.out, "g,"), "g,0,1,1000,900");
	cr_assert_str_eq(line_with(r.out, "g;f,"), "g;f,1,1,100,100");
	tu_result_free(&r);

	r = ok(tu_run("tree", "--format=csv", "--by-process", a_path, b_path, NULL));
	cr_assert_str_eq(tu_line(r.out, 0), "process,path,depth,calls,total_ns,self_ns");
	cr_assert_str_eq(line_with(r.out, "srv[100],f,"), "srv[100],f,0,1,100,100");
	cr_assert_str_eq(line_with(r.out, "srv[101],f,"), "srv[101],f,0,3,600,600");
	cr_assert_str_eq(line_with(r.out, "srv[101],g;f,"), "srv[101],g;f,1,1,100,100");
	cr_assert_eq(tu_nr_lines(r.out), 7, "%s", r.out);
	tu_result_free(&r);
}

Test(multi, flame_by_process_puts_the_process_at_the_root)
{
	struct tu_result r =
		ok(tu_run("flame", "--by-process", "--by-thread", a_path, b_path, NULL));

	cr_assert_eq(tu_nr_lines(r.out), 6, "%s", r.out);
	cr_assert_str_eq(line_with(r.out, "srv[100];srv;main;f "), "srv[100];srv;main;f 400");
	cr_assert_str_eq(line_with(r.out, "srv[101];io;g;f "), "srv[101];io;g;f 100");
	cr_assert_str_eq(line_with(r.out, "srv[101];srv;f "), "srv[101];srv;f 600");
	tu_result_free(&r);

	r = ok(tu_run("flame", "--weight=calls", a_path, b_path, NULL));
	cr_assert_str_eq(line_with(r.out, "f "), "f 4");
	tu_result_free(&r);
}

/* A --thread value need only match in one of the files; one in none of
 * them exits 1, naming the files' count and the last file's threads. */
Test(multi, thread_filter_naming_no_thread_of_any_file_exits_1)
{
	static const char *const cmds[] = { "summary", "histogram", "tree", "values", "chrome" };
	struct tu_result r = ok(tu_run("summary", "--format=csv", "--thread=io", a_path, b_path,
				       NULL));
	char want[4200];

	tu_result_free(&r);
	snprintf(want, sizeof(want), "tracetool: %s: no thread 'nope' (--thread) in any of the 2 "
		 "files; its threads: srv (tid 101), io (tid 102)\n", b_path);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = tu_run(cmds[i], "-t", "io", "-t", "nope", a_path, b_path, NULL);
		cr_assert_eq(r.status, 1, "%s: exit %d: %s", cmds[i], r.status, r.err);
		cr_assert_str_eq(r.err, want, "%s", cmds[i]);
		tu_result_free(&r);
	}
}

/* The value of "key": in a JSON object text (a number), from pos. */
static double json_num(const char *pos, const char *key)
{
	const char *p = strstr(pos, key);

	cr_assert(p, "no %s in %.200s", key, pos);
	return strtod(p + strlen(key), NULL);
}

Test(multi, chrome_puts_each_process_on_one_wall_clock_timeline)
{
	const char *out = tu_path(3, "multi_out.json");
	struct tu_result r = ok(tu_run("chrome", "-o", out, a_path, b_path, NULL));
	FILE *f = fopen(out, "r");
	char *json = calloc(1, 1 << 16), *p;
	size_t n;
	unsigned b100 = 0, b101 = 0;

	cr_assert(f && json);
	n = fread(json, 1, (1 << 16) - 1, f);
	fclose(f);
	cr_assert(n > 0);
	for (p = json; (p = strstr(p, "{\"ph\":\"X\"")) != NULL; p++) {
		unsigned long pid = strtoul(strstr(p, "\"pid\":") + 6, NULL, 10);

		cr_assert(pid == 100 || pid == 101, "pid %lu", pid);
		b100 += pid == 100;
		b101 += pid == 101;
	}
	cr_assert_eq(b100, 3, "%s", json);
	cr_assert_eq(b101, 5, "%s", json);
	cr_assert(strstr(json, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,"), "%s", json);
	cr_assert(strstr(json, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":101,"), "%s", json);
	/* A's main at its start: 0 µs; B's first f at B's start, 5 ms later. */
	p = strstr(json, "{\"ph\":\"X\",\"name\":\"main\",\"pid\":100,");
	cr_assert(p);
	cr_assert_float_eq(json_num(p, "\"ts\":"), 0.0, 1e-9);
	p = strstr(json, "{\"ph\":\"X\",\"name\":\"f\",\"pid\":101,");
	cr_assert(p);
	cr_assert_float_eq(json_num(p, "\"ts\":"), 5000.0, 1e-9);
	/* B's g at tick 12000: 1000 ns after B's start. */
	p = strstr(json, "{\"ph\":\"X\",\"name\":\"g\",\"pid\":101,");
	cr_assert(p);
	cr_assert_float_eq(json_num(p, "\"ts\":"), 5001.0, 1e-9);
	cr_assert_float_eq(json_num(p, "\"dur\":"), 1.0, 1e-9);
	cr_assert(strstr(json, "\"events\":\"8\""), "%s", json);
	free(json);
	tu_result_free(&r);

	/* -o never overwrites an input, the second as well as the first. */
	r = tu_run("chrome", "-o", b_path, a_path, b_path, NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	tu_result_free(&r);
	struct stat st;
	cr_assert_eq(stat(b_path, &st), 0);
	cr_assert(st.st_size > 100);
}

Test(multi, chrome_gives_two_files_of_one_pid_two_processes)
{
	/* A copy of a: another file of the same pid (the same file twice is
	 * refused: test_hostile.c). */
	const char *copy = tu_path(4, "multi_a_copy.zst");
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", a_path, copy);
	cr_assert_eq(system(cmd), 0);
	struct tu_result r = ok(tu_run("chrome", a_path, copy, NULL));

	unlink(copy);

	cr_assert(strstr(r.out, "\"name\":\"process_name\",\"pid\":100,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"name\":\"process_name\",\"pid\":101,"), "%s", r.out);
	tu_result_free(&r);
}

/* ---------------------------------------------------------------------
 * Real recordings: prog_fork.c writes trace-%p.zst for the parent (100
 * before_fork, 300 parent_work) and the child (200 child_work).
 */
static size_t record_fork(const char *dir, char paths[][512], size_t max)
{
	const char *prog = getenv("PROG_FORK");
	char cmd[1024];
	size_t n = 0;
	FILE *ls;

	cr_assert(prog, "PROG_FORK not set");
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT='%s/trace-%%p.zst' '%s' && ls '%s'/trace-*.zst", dir,
		 prog, dir);
	ls = popen(cmd, "r");
	cr_assert(ls);
	while (n < max && fgets(paths[n], 512, ls)) {
		paths[n][strcspn(paths[n], "\n")] = '\0';
		n++;
	}
	cr_assert_eq(pclose(ls), 0);
	return n;
}

static bool sanitized(void)
{
	const char *s = getenv("SANITIZED");

	return s && strcmp(s, "true") == 0;
}

Test(multi, a_forks_parent_and_child_by_process)
{
	char dir[TU_TMPDIR_MAX], paths[4][512], cmd[600];

	if (sanitized())
		cr_skip_test("fork under ASan deadlocks its allocator (tests/librec)");
	tu_tmpdir(dir, "tt_multi");
	cr_assert_eq(record_fork(dir, paths, 4), 2);
	struct tu_result r = ok(tu_run("summary", "--format=csv", "--by-process", paths[0],
				       paths[1], NULL));
	char pp[64] = "", pc[64] = "";

	cr_assert_eq(tu_nr_lines(r.out), 4, "%s", r.out);
	/* Each process's rows say its own pid; the counts are exact. */
	unsigned nb = 0, np = 0, nc = 0;
	for (unsigned i = 1; i < 4; i++) {
		const char *l = tu_line(r.out, i);
		const char *fn = strchr(l, ',') + 1;

		cr_assert(strncmp(l, "prog_fork[", 10) == 0, "%s", l);
		if (strncmp(fn, "before_fork,100,", 16) == 0) {
			snprintf(pp, sizeof(pp), "%.*s", (int)(fn - l - 1), l);
			nb++;
		} else if (strncmp(fn, "parent_work,300,", 16) == 0) {
			np++;
		} else if (strncmp(fn, "child_work,200,", 15) == 0) {
			snprintf(pc, sizeof(pc), "%.*s", (int)(fn - l - 1), l);
			nc++;
		}
	}
	cr_assert(nb == 1 && np == 1 && nc == 1, "%s", r.out);
	cr_assert_str_neq(pp, pc); /* two processes: the parent's pid and the child's */
	/* parent_work is the parent's: its row has before_fork's process. */
	snprintf(cmd, sizeof(cmd), "%s,parent_work,300,", pp);
	cr_assert(strstr(r.out, cmd), "%s", r.out);
	tu_result_free(&r);

	r = ok(tu_run("summary", "--format=csv", paths[0], paths[1], NULL));
	cr_assert_eq(tu_nr_lines(r.out), 4, "%s", r.out);
	tu_result_free(&r);
	cr_assert(tu_tmpdir_remove(dir));
}

Test(multi, two_runs_of_one_program_add_up)
{
	char dir1[TU_TMPDIR_MAX], dir2[TU_TMPDIR_MAX];
	char p1[4][512], p2[4][512], parent1[512] = "", parent2[512] = "";

	if (sanitized())
		cr_skip_test("fork under ASan deadlocks its allocator (tests/librec)");
	tu_tmpdir(dir1, "tt_multi");
	tu_tmpdir(dir2, "tt_multi");
	cr_assert_eq(record_fork(dir1, p1, 4), 2);
	cr_assert_eq(record_fork(dir2, p2, 4), 2);
	/* The parent's file: the one with before_fork. */
	for (int k = 0; k < 2; k++) {
		struct tu_result r = ok(tu_run("summary", "--format=csv", p1[k], NULL));

		if (strstr(r.out, "before_fork"))
			memcpy(parent1, p1[k], sizeof(parent1));
		tu_result_free(&r);
		r = ok(tu_run("summary", "--format=csv", p2[k], NULL));
		if (strstr(r.out, "before_fork"))
			memcpy(parent2, p2[k], sizeof(parent2));
		tu_result_free(&r);
	}
	cr_assert(parent1[0] && parent2[0]);
	struct tu_result r = ok(tu_run("summary", "--format=csv", "--sort=name", parent1, parent2,
				       NULL));
	cr_assert_eq(tu_nr_lines(r.out), 3, "%s", r.out);
	cr_assert(strncmp(tu_line(r.out, 1), "before_fork,200,", 16) == 0, "%s", r.out);
	cr_assert(strncmp(tu_line(r.out, 2), "parent_work,600,", 16) == 0, "%s", r.out);
	tu_result_free(&r);

	r = ok(tu_run("summary", "--format=csv", "--by-process", "--sort=name", parent1, parent2,
		      NULL));
	cr_assert_eq(tu_nr_lines(r.out), 5, "%s", r.out);
	unsigned nb = 0, np = 0;
	for (unsigned i = 1; i < 5; i++) {
		const char *l = tu_line(r.out, i), *fn = strchr(l, ',') + 1;

		nb += strncmp(fn, "before_fork,100,", 16) == 0;
		np += strncmp(fn, "parent_work,300,", 16) == 0;
	}
	cr_assert(nb == 2 && np == 2, "%s", r.out);
	char l1[256];
	snprintf(l1, sizeof(l1), "%s", tu_line(r.out, 1)); /* tu_line()'s buffer is static */
	cr_assert_str_neq(l1, tu_line(r.out, 2));
	tu_result_free(&r);
	cr_assert(tu_tmpdir_remove(dir1) && tu_tmpdir_remove(dir2));
}

/*
 * Counters across files: C records page-faults on f (5 -> 9: 4), D records
 * cycles then page-faults on f (100 -> 160: 60; 1 -> 3: 2). The columns
 * are the union, first seen first; each row adds its files' figures.
 */
Test(multi, counter_columns_are_the_union_of_the_files)
{
	const char *c_path = tu_path(4, "multi_c.zst"), *d_path = tu_path(5, "multi_d.zst");
	const char *n1[1] = { "page-faults" }, *n2[2] = { "cycles", "page-faults" };
	const uint32_t fl[2] = { RECFMT_COUNTER_RECORDED, RECFMT_COUNTER_RECORDED };
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000, .pid = 7,
				 .start_real_ns = A_REAL };
	uint64_t a = 5, b = 9, c[2] = { 100, 1 }, d[2] = { 160, 3 };
	struct tg_trace *t = tg_create(c_path, &cfg);
	struct tu_result r;

	cr_assert(t);
	tg_site(t, 1, "f");
	tg_thread(t, 1, 7, "m");
	cr_assert_eq(tg_counter_set(t, 1, 1, n1, fl), 0);
	tg_enter_ctr(t, 1, 1, 1000, &a);
	tg_exit_ctr(t, 1, 1, 1100, &b);
	cr_assert_eq(tg_finish(t, true), 0);
	cfg.pid = 8;
	t = tg_create(d_path, &cfg);
	cr_assert(t);
	tg_site(t, 1, "f");
	tg_thread(t, 1, 8, "m");
	cr_assert_eq(tg_counter_set(t, 1, 2, n2, fl), 0);
	tg_enter_ctr(t, 1, 1, 1000, c);
	tg_exit_ctr(t, 1, 1, 1300, d);
	cr_assert_eq(tg_finish(t, true), 0);

	r = ok(tu_run("summary", "--format=csv", c_path, d_path, NULL));
	cr_assert_str_eq(tu_line(r.out, 0),
			 SUMMARY_HEADER ",page-faults_total,page-faults_mean,cycles_total,cycles_mean");
	cr_assert_str_eq(tu_line(r.out, 1), "f,2,400,400,100,200,100,300,300,300,0,6,3.00,60,60.00");
	tu_result_free(&r);
	r = ok(tu_run("summary", "--format=csv", "--by-process", c_path, d_path, NULL));
	cr_assert_str_eq(line_with(r.out, "m[7],"), "m[7],f,1,100,100,100,100,100,100,100,100,0,4,4.00,,");
	cr_assert_str_eq(line_with(r.out, "m[8],"),
			 "m[8],f,1,300,300,300,300,300,300,300,300,0,2,2.00,60,60.00");
	tu_result_free(&r);
	unlink(c_path);
	unlink(d_path);
}

Test(multi, info_and_check_take_several_files)
{
	struct tu_result r = ok(tu_run("check", a_path, b_path, NULL));

	cr_assert_eq(tu_nr_lines(r.out), 2, "%s", r.out);
	cr_assert(strstr(tu_line(r.out, 0), ": ok (") && strstr(tu_line(r.out, 1), ": ok ("));
	tu_result_free(&r);
	r = tu_run("check", a_path, bad_path, b_path, NULL);
	cr_assert_eq(r.status, 1);
	cr_assert_eq(tu_nr_lines(r.out), 2, "%s", r.out); /* the good ones still say ok */
	cr_assert(strstr(r.err, bad_path), "%s", r.err);
	tu_result_free(&r);

	r = ok(tu_run("info", "--format=json", a_path, b_path, NULL));
	cr_assert_eq(r.out[0], '[', "%s", r.out);
	cr_assert(strstr(r.out, "\"events\":6,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"events\":10,"), "%s", r.out);
	cr_assert(strstr(r.out, "}\n]\n"), "%s", r.out);
	tu_result_free(&r);
	r = ok(tu_run("info", "--format=json", a_path, NULL));
	cr_assert_eq(r.out[0], '{', "one file: one object, as before");
	tu_result_free(&r);
}
