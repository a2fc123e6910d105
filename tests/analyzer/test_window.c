/* SPDX-License-Identifier: MIT */
/*
 * test_window.c - issue 29 item 3: a --from/--to window read through the
 * frame index (engine/index.h) decodes only the frames that can matter to
 * it, and every report is byte for byte the one of the whole file
 * (TRACETOOL_INDEX=0), for many random windows of a trace shaped like a
 * whole-program recording: each thread's outermost scope open from start to
 * end, scopes that span many frames, threads whose blocks lag behind each
 * other's, small frames.
 */
#include "ttest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR_THREADS 3
#define NR_SITES 24

static const char *trace, *idx_dir;

static void setup(void)
{
	trace = tu_path(0, "window.zst");
	idx_dir = tu_path(1, "window-idx");
	tt_index_dir(idx_dir);
}

static void teardown(void)
{
	unlink(trace);
	tu_rm_rf(idx_dir);
}

TestSuite(window, .init = setup, .fini = teardown, .timeout = 300);

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	return tt_rnd(&rng, n);
}

/* A program-shaped trace: returns its last tick. Site 1 "main" is open on
 * every thread from its first event; thread 3 never closes it (open at the
 * end); site 2 "serve" spans long stretches. */
static uint64_t write_trace(bool writer_index)
{
	struct tg_trace *t = tt_new_trace(trace, 24 << 10, 700, writer_index);
	uint32_t stack[NR_THREADS][64], sp[NR_THREADS] = { 0 };
	uint64_t now = 1000;
	char name[32];

	tg_site(t, 1, "main");
	tg_site(t, 2, "serve");
	for (uint32_t s = 3; s <= NR_SITES; s++) {
		snprintf(name, sizeof(name), "fn%02u", s);
		tg_site_at(t, s, name, s % 2 ? "a.c" : "b.c", 10 * s);
	}
	for (uint32_t i = 0; i < NR_THREADS; i++)
		tg_thread(t, i + 1, 500 + i, i == 1 ? NULL : "worker");
	for (uint32_t step = 0; step < 240000; step++) {
		uint32_t th = rnd(NR_THREADS), *st = stack[th];

		now += 1 + rnd(40);
		if (sp[th] == 0) {
			st[sp[th]++] = 1;
			cr_assert_eq(tg_enter(t, th + 1, 1, now), 0);
		} else if (sp[th] == 1 || (sp[th] < 60 && rnd(100) < 50)) {
			/* serve only right under main, rarely: it then holds long. */
			uint32_t site = sp[th] == 1 && rnd(4) == 0 ? 2 : 3 + rnd(NR_SITES - 2);

			st[sp[th]++] = site;
			cr_assert_eq(tg_enter(t, th + 1, site, now), 0);
		} else if (sp[th] > 1 && !(st[sp[th] - 1] == 2 && rnd(400))) {
			cr_assert_eq(tg_exit(t, th + 1, st[--sp[th]], now), 0);
		}
		if (step % 50000 == 0)
			tg_drops(t, th + 1, step / 1000);
	}
	for (uint32_t th = 0; th < 2; th++)
		while (sp[th]) {
			now += 3;
			cr_assert_eq(tg_exit(t, th + 1, stack[th][--sp[th]], now), 0);
		}
	cr_assert_eq(tg_finish(t, true), 0);
	return now;
}

/* tracetool ARGS... with the index off (0) or on (1). */
static struct tu_result run_with(const char *index, const char *const *args)
{
	setenv("TRACETOOL_INDEX", index, 1);
	return tu_runv(args);
}

/*
 * tracetool ARGS from the whole file (*whole) and through the index
 * (*fast): both exit 0, with the same stdout.
 */
static void whole_and_fast(const char *const *args, struct tu_result *whole,
			   struct tu_result *fast)
{
	*whole = run_with("0", args);
	*fast = run_with("1", args);
	cr_assert_eq(whole->status, 0, "%s %s: %s", args[0], args[1], whole->err);
	cr_assert_eq(fast->status, 0, "%s %s: %s", args[0], args[1], fast->err);
	cr_assert_str_eq(whole->out, fast->out, "%s %s %s", args[0], args[1], args[2]);
}


/*
 * 16 random windows x 6 reports through the index (TRACETOOL_INDEX=index,
 * whose TRACETOOL_INDEX_STATS line says want) against the whole file.
 */
static void random_windows(bool writer_index, const char *index, const char *want)
{
	uint64_t end = write_trace(writer_index), span = end - 1000;
	static const char *const cmds[][4] = {
		{ "summary", "--format=csv", NULL },
		{ "summary", "--format=csv", "--by-thread", NULL },
		{ "tree", "--format=csv", NULL },
		{ "chrome", "-o", "-", NULL },
		{ "flame", NULL },
		{ "histogram", NULL },
	};
	unsigned nr_narrow = 0, nr_cmp = 0;

	for (unsigned w = 0; w < 16; w++) {
		char from[64], to[64];
		uint64_t a = rnd((uint32_t)span), len = w % 3 == 0 ? span / 200 : rnd((uint32_t)(span / 10));

		snprintf(from, sizeof(from), "--from=%" PRIu64 "ns", a);
		snprintf(to, sizeof(to), "--to=%" PRIu64 "ns", a + len + 1);
		for (unsigned c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
			const char *args[12];
			unsigned n = 0;
			struct tu_result fast;
			int of = 0, d;

			for (unsigned k = 0; cmds[c][k]; k++)
				args[n++] = cmds[c][k];
			/* The other filters with the window. */
			if (w % 4 == 1)
				args[n++] = "--thread=501";
			if (w % 4 == 2)
				args[n++] = "--function=^fn0";
			if (w % 4 == 3 && (c < 2 || c == 5)) /* summary's, histogram's */
				args[n++] = "--max-duration=2us";
			if (w % 8 != 7)
				args[n++] = from;
			if (w % 8 != 6)
				args[n++] = to;
			args[n++] = trace;
			args[n] = NULL;
			fast = tt_same_window(args, "0", index, want);
			cr_assert_eq(fast.status, 0, "%s", fast.err);
			d = tt_index_decoded(fast.err, &of);
			cr_assert(d >= 0, "no index used: %s %s %s: %s", args[0], from, to, fast.err);
			cr_assert(of >= 20, "%d frames", of);
			nr_narrow += w % 8 < 6 && len == span / 200 && d * 4 < of;
			nr_cmp++;
			tu_result_free(&fast);
		}
	}
	cr_assert_eq(nr_cmp, 96);
	/* The narrow windows decoded under a quarter of the frames. */
	cr_assert_geq(nr_narrow, 8, "%u", nr_narrow);
}

Test(window, a_window_through_the_index_equals_the_whole_file_for_random_windows)
{
	random_windows(false, "1", "tracetool:");
}

/* The same trace with the writer's index frames (FORMAT.md §6): no pass. */
Test(window, a_window_through_the_writers_index_equals_the_whole_file_for_random_windows)
{
	random_windows(true, "1", "index: the writer's (");
}

/* And with them ignored (TRACETOOL_INDEX=pass): the index made by a pass. */
Test(window, a_window_through_the_pass_index_of_a_file_with_index_frames_equals_the_whole_file)
{
	random_windows(true, "pass", "tracetool:");
}

/* One thread: main open from 1000 to the end (never closed), a call of f
 * per 100 ns, frames of about 2 000 events. */
static void write_main_open_to(bool longjmp, bool writer_index, uint64_t end_ticks)
{
	struct tg_trace *t = tt_main_f_g(trace, 8 << 10, 500, writer_index);
	uint64_t now = 1000;

	tg_enter(t, 1, 1, now);
	for (unsigned i = 0; i < 60000; i++) {
		tg_enter(t, 1, 2, now += 10);
		if (longjmp && i == 30000)
			tg_enter(t, 1, 3, now += 10); /* g never exits: f's exit leaves it */
		tg_exit(t, 1, 2, now += 90);
	}
	cr_assert_eq(tg_finish_at(t, end_ticks), 0);
}

static void write_main_open(bool longjmp, bool writer_index)
{
	write_main_open_to(longjmp, writer_index, 0);
}

/*
 * chrome --to inside a scope still open when the file ends: the scope is
 * shown up to --to with no error (what happens after the window is not
 * the window's), the same through the index as from the whole file, and
 * otherData counts the window's errors (none).
 */
Test(window, chrome_clips_a_scope_open_past_to_without_an_error_through_the_index)
{
	const char *args[] = { "chrome", "--from=2ms", "--to=2.0005ms", "-o", "-", NULL, NULL };
	struct tu_result whole, fast;
	int of = 0;

	write_main_open(false, false);
	args[5] = trace;
	whole_and_fast(args, &whole, &fast);
	cr_assert(tt_index_decoded(fast.err, &of) == 1 && of >= 20, "%s", fast.err);
	/* main: from the window's start (2 ms = 2 000.000 us) to its end, a
	 * "B"/"E" pair (its first child starts in the same nanosecond). */
	cr_assert(strstr(whole.out, "{\"ph\":\"B\",\"name\":\"main\",\"pid\":4242,\"tid\":77,"
				    "\"ts\":2000.000}"),
		  "%s", whole.out);
	cr_assert(strstr(whole.out, "{\"ph\":\"E\",\"name\":\"main\",\"pid\":4242,\"tid\":77,"
				    "\"ts\":2000.500}"),
		  "%s", whole.out);
	cr_assert_null(strstr(whole.out, "\"error\""), "%s", whole.out);
	cr_assert(strstr(whole.out, "\"errors\":\"0\""), "%s", whole.out);
	cr_assert(tu_json_valid(whole.out));
	tu_result_free(&whole);
	tu_result_free(&fast);
}

/* A scope left without an exit (longjmp) anywhere in the file: no index
 * (replaying a stack cannot say which paths were left), the whole file read,
 * and it says why with TRACETOOL_INDEX_STATS. */
Test(window, a_file_with_a_scope_left_by_longjmp_is_read_whole)
{
	struct tu_result r;
	int of = 0;

	write_main_open(true, false);
	setenv("TRACETOOL_INDEX", "1", 1);
	r = tu_run("summary", "--from=2ms", "--to=2.5ms", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "index: none (a scope is left without an exit (longjmp))"), "%s",
		  r.err);
	cr_assert_eq(tt_index_decoded(r.err, &of), -1, "%s", r.err);
	tu_result_free(&r);
}

/* The same with the writer's index frames: their blocks after the longjmp
 * are not NESTED (FORMAT.md §6.2), so the writer's index is not used, the
 * pass finds the longjmp, and the file is read whole with the same report. */
Test(window, a_longjmp_in_a_file_with_index_frames_is_read_whole)
{
	const char *args[] = { "summary", "--format=csv", "--from=2ms", "--to=2.5ms", NULL, NULL };
	struct tu_result whole, r;
	int of = 0;

	write_main_open(true, true);
	args[4] = trace;
	whole = run_with("0", args);
	r = run_with("1", args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "index: not the writer's (the writer could not follow a thread's "
				"nesting)"),
		  "%s", r.err);
	cr_assert(strstr(r.err, "index: none (a scope is left without an exit (longjmp))"), "%s",
		  r.err);
	cr_assert_eq(tt_index_decoded(r.err, &of), -1, "%s", r.err);
	cr_assert_str_eq(whole.out, r.out);
	tu_result_free(&whole);
	tu_result_free(&r);
}

/*
 * Finding F1: a window after the last event (at 6.000 ms; the recording
 * ends at 9 ms), and one past the recording's end. main is open at the end, so it overlaps the window: chrome shows
 * it (clipped) as the whole read does, through the pass's index and the
 * writer's index frames alike, decoding one frame (the last with events,
 * its stacks replayed) instead of none; summary and tree (activations that
 * start in the window: none) are the same too.
 */
static void window_after_the_last_event(bool writer_index)
{
	static const char *const cmds[][3] = {
		{ "chrome", "-o", "-" }, { "summary", "--format=csv", NULL },
		{ "tree", "--format=csv", NULL } };
	static const char *const windows[][2] = {
		{ "--from=7ms", "--to=7.5ms" }, { "--from=9.5ms", "--to=10ms" } };

	write_main_open_to(false, writer_index, 1000 + 9000000);
	for (unsigned w = 0; w < 2; w++)
		for (unsigned c = 0; c < 3; c++) {
			const char *args[8] = { cmds[c][0], windows[w][0], windows[w][1] };
			struct tu_result whole, fast;
			unsigned n = 3;
			int of = 0;

			for (unsigned i = 1; i < 3 && cmds[c][i]; i++)
				args[n++] = cmds[c][i];
			args[n] = trace;
			whole_and_fast(args, &whole, &fast);
			cr_assert_eq(tt_index_decoded(fast.err, &of), 1, "%s", fast.err);
			cr_assert_geq(of, 20, "%s", fast.err);
			if (c == 0)
				cr_assert((strstr(whole.out, "\"name\":\"main\",\"pid\"") != NULL) == (w == 0),
					  "%s %s", windows[w][0], whole.out);
			tu_result_free(&whole);
			tu_result_free(&fast);
		}
}

Test(window, chrome_after_the_last_event_keeps_the_scope_open_at_the_end_through_the_pass_index)
{
	window_after_the_last_event(false);
}

Test(window, chrome_after_the_last_event_keeps_the_scope_open_at_the_end_through_the_writers_index)
{
	window_after_the_last_event(true);
}

/*
 * Finding F6: a file's tree in ns does not depend on how it was read. Two
 * TSC files (ticks not ns: self ns rounded by running sums), six threads
 * each calling the same functions; tree of both in a window, plain, with
 * --by-thread and with --by-process: the same bytes through the index as
 * from the whole file, and each file's rows under --by-process are the
 * file's tree alone.
 */
static void write_tsc(const char *path, uint32_t pid, uint64_t seed)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2700000007ull,
				 .start_ticks = 5000, .pid = pid,
				 .start_real_ns = 1700000000000000000ull, .frame_bytes = 6 << 10,
				 .block_events = 300 };
	struct tg_trace *t = tg_create(path, &cfg);
	uint32_t stack[6][16], sp[6] = { 0 };
	uint64_t now = 5000;

	rng = seed;
	cr_assert(t);
	for (uint32_t s = 1; s <= 6; s++) {
		char name[8];

		snprintf(name, sizeof(name), "f%u", s);
		tg_site(t, s, name);
	}
	for (uint32_t i = 0; i < 6; i++)
		tg_thread(t, i + 1, pid + 1 + i, i % 2 ? "worker" : "io");
	for (uint32_t step = 0; step < 60000; step++) {
		uint32_t th = rnd(6);

		now += 1 + rnd(7);
		if (sp[th] < 6 && (sp[th] == 0 || rnd(2))) {
			stack[th][sp[th]] = 1 + rnd(6);
			cr_assert_eq(tg_enter(t, th + 1, stack[th][sp[th]++], now), 0);
		} else if (sp[th]) {
			cr_assert_eq(tg_exit(t, th + 1, stack[th][--sp[th]], now), 0);
		}
	}
	for (uint32_t th = 0; th < 6; th++)
		while (sp[th])
			cr_assert_eq(tg_exit(t, th + 1, stack[th][--sp[th]], now += 3), 0);
	cr_assert_eq(tg_finish(t, true), 0);
}

/* The rows of out that start with prefix, prefix taken off. */
static char *rows_of(const char *out, const char *prefix)
{
	size_t n = strlen(prefix), len = 0;
	char *r = calloc(1, strlen(out) + 1);

	cr_assert(r);
	for (const char *p = out; *p;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p + 1) : strlen(p);

		if (strncmp(p, prefix, n) == 0) {
			memcpy(r + len, p + n, l - n);
			len += l - n;
		}
		p += l;
	}
	return r;
}

Test(window, a_tree_of_two_files_is_the_same_through_the_index_and_each_file_alone_F6)
{
	char b[600];
	const char *opts[] = { "--by-thread", "--by-process", NULL };
	struct tu_result whole, fast, alone;

	snprintf(b, sizeof(b), "%s.b.zst", trace);
	write_tsc(trace, 100, 88172645463325252ull);
	write_tsc(b, 200, 1234567891011ull);
	for (unsigned k = 0; k < 3; k++) {
		const char *args[] = { "tree", "--format=csv", "--from=40us", "--to=44us",
				       trace, b, opts[k], NULL };
		char *mine, *theirs;
		int of = 0;

		whole_and_fast(args, &whole, &fast);
		cr_assert_gt(tt_index_decoded(fast.err, &of), 0, "%s", fast.err);
		cr_assert_lt(tt_index_decoded(fast.err, &of), of, "%s", fast.err);
		if (k == 1) {
			for (unsigned f = 0; f < 2; f++) {
				const char *one[] = { "tree", "--format=csv", "--from=40us",
						      "--to=44us", f ? b : trace, NULL };
				char prefix[64];
				const char *nl;

				alone = run_with("0", one);
				cr_assert_eq(alone.status, 0, "%s", alone.err);
				nl = strchr(alone.out, '\n');
				cr_assert(nl);
				snprintf(prefix, sizeof(prefix), "process[%u],", f ? 200 : 100);
				mine = rows_of(whole.out, prefix);
				theirs = strdup(nl + 1);
				cr_assert_gt(strlen(theirs), 1000);
				cr_assert_str_eq(mine, theirs, "file %u: %s", f, whole.out);
				free(mine);
				free(theirs);
				tu_result_free(&alone);
			}
		}
		tu_result_free(&whole);
		tu_result_free(&fast);
	}
	unlink(b);
}

/* err without the lines TRACETOOL_INDEX_STATS adds. */
static char *without_index_lines(const char *err)
{
	char *r = calloc(1, strlen(err) + 1);
	size_t len = 0;

	cr_assert(r);
	for (const char *p = err; *p;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p + 1) : strlen(p);
		const char *ix = strstr(p, ": index: ");

		if (!ix || ix >= p + l) {
			memcpy(r + len, p, l);
			len += l;
		}
		p += l;
	}
	return r;
}

/*
 * Finding F9: a file that ends inside a frame (a recording being written,
 * a copy taken mid-write) gets an index of its complete frames by a pass,
 * and a window through it prints what the whole read prints, the warning
 * about the cut included; the second run reads the index from the cache.
 */
static void cut_inside_a_frame(bool writer_index)
{
	static const char *const cmds[][3] = {
		{ "chrome", "-o", "-" }, { "summary", "--format=csv", NULL },
		{ "tree", "--format=csv", NULL } };
	struct stat st;

	write_main_open(false, writer_index);
	cr_assert_eq(stat(trace, &st), 0);
	cr_assert_eq(tg_file_truncate(trace, (uint64_t)st.st_size * 2 / 3 + 5), 0);
	for (unsigned run = 0; run < 2; run++)
		for (unsigned c = 0; c < 3; c++) {
			const char *args[8] = { cmds[c][0], "--from=2ms", "--to=2.2ms" };
			struct tu_result whole, fast;
			char *we, *fe;
			unsigned n = 3;
			int of = 0, d;

			for (unsigned i = 1; i < 3 && cmds[c][i]; i++)
				args[n++] = cmds[c][i];
			args[n] = trace;
			whole_and_fast(args, &whole, &fast);
			cr_assert(strstr(whole.err, "file ends inside a frame"), "%s", whole.err);
			we = without_index_lines(whole.err);
			fe = without_index_lines(fast.err);
			cr_assert_str_eq(we, fe);
			d = tt_index_decoded(fast.err, &of);
			cr_assert(d >= 1 && d < of / 2, "%s", fast.err);
			free(we);
			free(fe);
			tu_result_free(&whole);
			tu_result_free(&fast);
		}
}

Test(window, a_file_cut_inside_a_frame_is_read_through_a_pass_index_F9)
{
	cut_inside_a_frame(false);
}

Test(window, a_file_with_index_frames_cut_inside_a_frame_is_read_through_a_pass_index_F9)
{
	cut_inside_a_frame(true);
}
