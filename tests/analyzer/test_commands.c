/* SPDX-License-Identifier: MIT */
/*
 * test_commands.c - info, check, histogram and chrome on traces with known
 * answers, and every command on truncated, damaged and foreign files (exit
 * codes and exact messages, tracetool(1)).
 */
#include "ttest.h"

#include <ctype.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *trace;

static void setup(void)
{
	trace = tu_path(0, "commands.zst");
}

static void teardown(void)
{
	unlink(trace);
}

TestSuite(commands, .init = setup, .fini = teardown, .timeout = 120);

/* ---- traces ---- */

/* Two threads, nested scopes; thread 2 shares thread 1's OS tid. */
static void write_basic(bool clean)
{
	struct tg_trace *t = new_trace(trace);

	tg_site(t, 1, "outer");
	tg_site(t, 2, "in\"ner");
	tg_thread(t, 1, 100, "main");
	tg_thread(t, 2, 100, NULL);
	for (uint64_t i = 0; i < 10; i++) {
		uint64_t b = 2000 + i * 1000;

		tg_enter(t, 1, 1, b);
		tg_enter(t, 1, 2, b + 100);
		tg_exit(t, 1, 2, b + 100 + 10 * i);
		tg_exit(t, 1, 1, b + 500);
		tg_enter(t, 2, 2, b + 1);
		tg_exit(t, 2, 2, b + 2);
	}
	tg_drops(t, 1, 5);
	tg_thread_end(t, 2);
	cr_assert_eq(tg_finish(t, clean), 0);
}

/* Many small frames so that damage can hit one in the middle. */
static size_t write_frames(uint64_t *offsets, size_t max)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .block_events = 100,
				 .frame_bytes = 200 };
	struct tg_trace *t = tg_create(trace, &cfg);

	tg_site(t, 1, "f");
	tg_thread(t, 1, 7, "w");
	for (uint64_t i = 0; i < 2000; i++) {
		tg_enter(t, 1, 1, 10 * i);
		tg_exit(t, 1, 1, 10 * i + 3);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	return tg_file_frame_offsets(trace, offsets, max);
}

/* ---- info ---- */

Test(commands, info_json_has_the_documented_keys_and_values)
{
	struct tu_result r;

	write_basic(true);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	char version[64];

	snprintf(version, sizeof(version), "\"version\":\"%d.%d\"", RECFMT_VERSION_MAJOR,
		 RECFMT_VERSION_MINOR);
	cr_assert(strstr(r.out, version), "%s", r.out);
	cr_assert(strstr(r.out, "\"clock\":\"monotonic\""));
	cr_assert_eq(tt_json_u64(r.out, "ticks_per_second"), 1000000000);
	cr_assert_eq(tt_json_u64(r.out, "start_unix_ns"), 1700000000000000000ull);
	cr_assert_eq(tt_json_u64(r.out, "duration_ns"), 10500);
	cr_assert_eq(tt_json_u64(r.out, "events"), 60);
	cr_assert_eq(tt_json_u64(r.out, "dropped"), 5);
	cr_assert(strstr(r.out, "\"clean\":true"));
	cr_assert(strstr(r.out, "\"threads\":[{\"id\":100,\"serial\":1,\"name\":\"main\","
				"\"events\":40,\"dropped\":5"), "%s", r.out);
	cr_assert(strstr(r.out, "{\"id\":100,\"serial\":2,\"name\":null,\"events\":20,"
				"\"dropped\":0"), "%s", r.out);
	tu_result_free(&r);
}

Test(commands, info_says_when_the_recording_did_not_end_cleanly)
{
	struct tu_result r;

	write_basic(false);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "\"clean\":false"));
	tu_result_free(&r);
	r = tu_run("info", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "ended cleanly:    no (no END record)"), "%s", r.out);
	tu_result_free(&r);
}

/* ---- check ---- */

Test(commands, check_passes_an_intact_file)
{
	struct tu_result r;

	write_basic(true);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
}

Test(commands, check_fails_a_file_without_end)
{
	struct tu_result r;
	char want[256];

	write_basic(false);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1);
	snprintf(want, sizeof(want),
		 "tracetool: %s: no END record after frame 0: the recording did not end "
		 "cleanly (killed, or still being written)\n",
		 trace);
	cr_assert_str_eq(r.err, want);
	tu_result_free(&r);
}

Test(commands, truncated_file_check_fails_and_reports_analyse_the_prefix)
{
	uint64_t off[256];
	size_t nr = write_frames(off, 256);
	char want[256];
	struct tu_result r;

	cr_assert_gt(nr, 5);
	/* Cut the last frame in half. */
	struct stat st;
	cr_assert_eq(stat(trace, &st), 0);
	uint64_t cut = off[nr - 1] + ((uint64_t)st.st_size - off[nr - 1]) / 2;
	cr_assert_eq(tg_file_truncate(trace, cut), 0);

	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1);
	snprintf(want, sizeof(want),
		 "tracetool: %s: truncated: frame %zu at byte %" PRIu64
		 ": file ends inside a frame (%" PRIu64 " bytes of it present)\n",
		 trace, nr - 1, off[nr - 1], cut - off[nr - 1]);
	cr_assert_str_eq(r.err, want);
	tu_result_free(&r);

	r = tu_run("summary", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_str_eq(tu_line(r.out, 0), SUMMARY_HEADER);
	cr_assert_eq(tu_nr_lines(r.out), 2, "stdout stays pure csv: %s", r.out);
	cr_assert(strstr(r.err, "warning: truncated: frame"), "%s", r.err);
	tu_result_free(&r);

	r = tu_run("summary", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "warning: truncated: frame"), "%s", r.out);
	tu_result_free(&r);

	static const char *const cmds[][3] = {
		{ "histogram", "--format=csv", NULL }, { "info", "--format=json", NULL },
		{ "chrome", NULL, NULL },
	};
	for (size_t i = 0; i < 3; i++) {
		r = cmds[i][1] ? tu_run(cmds[i][0], cmds[i][1], trace, NULL)
			       : tu_run(cmds[i][0], trace, NULL);
		cr_assert_eq(r.status, 0, "%s", cmds[i][0]);
		cr_assert(strstr(r.err, "warning: truncated"), "%s: %s", cmds[i][0], r.err);
		if (i > 0)
			cr_assert(tu_json_valid(r.out), "%s", cmds[i][0]);
		tu_result_free(&r);
	}
}

Test(commands, damaged_middle_frame_is_located_by_check_and_skipped_by_summary)
{
	uint64_t off[256];
	size_t nr = write_frames(off, 256);
	char want[256];
	struct tu_result r;

	cr_assert_gt(nr, 5);
	/* A byte in the middle of frame 3's compressed data. */
	cr_assert_eq(tg_file_flip_byte(trace, off[3] + (off[4] - off[3]) / 2, 0x55), 0);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1);
	snprintf(want, sizeof(want), "tracetool: %s: frame 3 at byte %" PRIu64 ": ", trace,
		 off[3]);
	cr_assert_eq(strncmp(r.err, want, strlen(want)), 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1);
	tu_result_free(&r);

	r = tu_run("summary", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.err, "warning: damaged: 1 frame(s) skipped"), "%s", r.err);
	struct csv_row rows[2];
	cr_assert_eq(parse_summary_csv(r.out, false, rows, 2), 1);
	cr_assert_lt(rows[0].calls, 2000);
	cr_assert_gt(rows[0].calls, 1500);
	tu_result_free(&r);
}

Test(commands, every_command_refuses_a_newer_major_version_and_foreign_files)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .major = 2 };
	struct tg_trace *t = tg_create(trace, &cfg);
	static const char *const cmds[] = { "summary", "histogram", "chrome", "info", "check" };
	char want[256];

	cr_assert_eq(tg_finish(t, true), 0);
	snprintf(want, sizeof(want),
		 "tracetool: %s: frame 0 at byte 0 (record at +16): format version 2.%d is "
		 "newer than this reader's 1.%d\n",
		 trace, RECFMT_VERSION_MINOR, RECFMT_VERSION_MINOR);
	for (size_t i = 0; i < 5; i++) {
		struct tu_result r = tu_run(cmds[i], trace, NULL);

		cr_assert_eq(r.status, 1, "%s", cmds[i]);
		cr_assert_str_eq(r.err, want, "%s", cmds[i]);
		cr_assert_str_eq(r.out, "", "%s", cmds[i]);
		tu_result_free(&r);
	}
	FILE *f = fopen(trace, "w");
	fputs("this is not a trace\n", f);
	fclose(f);
	for (size_t i = 0; i < 5; i++) {
		struct tu_result r = tu_run(cmds[i], trace, NULL);

		cr_assert_eq(r.status, 1, "%s", cmds[i]);
		cr_assert(strstr(r.err, "frame 0 at byte 0: bad frame"), "%s: %s", cmds[i], r.err);
		cr_assert_eq(tu_nr_lines(r.err), 1);
		tu_result_free(&r);
	}
	f = fopen(trace, "w");
	fclose(f);
	for (size_t i = 0; i < 5; i++) {
		struct tu_result r = tu_run(cmds[i], trace, NULL);

		cr_assert_eq(r.status, 1, "%s", cmds[i]);
		snprintf(want, sizeof(want), "tracetool: %s: empty file (not a rec trace)\n", trace);
		cr_assert_str_eq(r.err, want, "%s", cmds[i]);
		tu_result_free(&r);
	}
}

/* Every cut of a multi-frame file: no crash, the right exit code. */
Test(commands, every_truncation_offset_is_handled)
{
	uint64_t off[256];
	size_t nr = write_frames(off, 256);
	struct stat st;
	char copy[128];

	cr_assert_eq(stat(trace, &st), 0);
	snprintf(copy, sizeof(copy), "%s.cut", trace);
	for (uint64_t cut = 1; cut < (uint64_t)st.st_size; cut += 1 + cut / 7) {
		char cmd[512];
		struct tu_result r;

		snprintf(cmd, sizeof(cmd), "head -c %" PRIu64 " %s > %s", cut, trace, copy);
		cr_assert_eq(system(cmd), 0);
		r = tu_run("check", copy, NULL);
		cr_assert_eq(r.status, 1, "cut %" PRIu64, cut);
		cr_assert_eq(tu_nr_lines(r.err), 1);
		tu_result_free(&r);
		r = tu_run("summary", "--format=csv", copy, NULL);
		/* Before the first frame is whole there is no header: unreadable. */
		cr_assert_eq(r.status, cut < off[1] ? 1 : 0, "cut %" PRIu64 ": %s", cut, r.err);
		tu_result_free(&r);
	}
	unlink(copy);
	(void)nr;
}

/* ---- histogram ---- */

Test(commands, histogram_csv_buckets_are_half_open_and_count_every_call)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;
	uint64_t total = 0, prev_hi = 0;

	tg_site(t, 1, "f");
	tg_thread(t, 1, 1, NULL);
	/* Durations 1..1000 ns, one each. */
	for (uint64_t i = 1; i <= 1000; i++) {
		tg_enter(t, 1, 1, 10000 * i);
		tg_exit(t, 1, 1, 10000 * i + i);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("histogram", "--format=csv", "--bins=10", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_str_eq(tu_line(r.out, 0), "function,lo_ns,hi_ns,count");
	/* At most 10 buckets: edges that meet on the fine histogram merge. */
	cr_assert(tu_nr_lines(r.out) >= 9 && tu_nr_lines(r.out) <= 11, "%s", r.out);
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++) {
		uint64_t lo, hi, count;

		cr_assert_eq(sscanf(tu_line(r.out, i), "f,%" SCNu64 ",%" SCNu64 ",%" SCNu64, &lo, &hi,
				    &count), 3);
		cr_assert_lt(lo, hi);
		if (i == 1)
			cr_assert_eq(lo, 1);
		else
			cr_assert_eq(lo, prev_hi);
		/* Durations are 1..1000, one each: a bucket [lo, hi) holds hi - lo. */
		cr_assert_eq(count, (hi > 1001 ? 1001 : hi) - lo, "bucket [%" PRIu64 ",%" PRIu64 ")",
			     lo, hi);
		prev_hi = hi;
		total += count;
	}
	cr_assert_eq(total, 1000);
	tu_result_free(&r);
	r = tu_run("histogram", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "f  (1000 calls"), "%s", r.out);
	tu_result_free(&r);
}

/* ---- chrome ---- */

struct xev {
	char name[32];
	uint64_t tid;
	int64_t ts_ns, dur_ns;
};

static int64_t parse_us(const char *p)
{
	bool neg = *p == '-';
	char *end;
	int64_t whole, frac;

	if (neg)
		p++;
	whole = strtoll(p, &end, 10);
	cr_assert_eq(*end, '.');
	cr_assert(isdigit((unsigned char)end[1]) && isdigit((unsigned char)end[2]) &&
		  isdigit((unsigned char)end[3]) && !isdigit((unsigned char)end[4]));
	frac = strtoll(end + 1, NULL, 10);
	return (neg ? -1 : 1) * (whole * 1000 + frac);
}

/*
 * The activations of a chrome output: a complete ("X") event each, or a
 * "B"/"E" pair where an end falls in the nanosecond where a neighbour
 * starts or ends; pairs are matched here per thread, as viewers do, into
 * (ts, dur) in the order of their closing event (a pair is written when
 * its scope closes, or its B when a child starts in the same nanosecond).
 * Asserts that each E closes the innermost open B of its thread with the
 * same name, and that ts and dur have three decimals.
 */
static size_t parse_chrome(const char *json, struct xev *ev, size_t max)
{
	enum { MAX_TIDS = 8, MAX_OPEN = 256 };
	struct {
		uint64_t tid;
		size_t sp;
		struct xev open[MAX_OPEN];
	} *t = calloc(MAX_TIDS, sizeof(*t));
	size_t n = 0, nr_tids = 0;

	cr_assert(t);
	/* Line by line (one event a line), on a copy: strstr over the rest of
	 * a large output per event is quadratic under ASan's interceptors. */
	for (const char *l = json, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		char buf[512], ph;
		const char *p, *name, *end;
		struct xev e;
		size_t k;

		nl = strchr(l, '\n');
		snprintf(buf, sizeof(buf), "%.*s", (int)(nl ? nl - l : (ptrdiff_t)strlen(l)), l);
		p = strstr(buf, "{\"ph\":\"");
		if (!p)
			continue;
		ph = p[7];

		if (ph != 'B' && ph != 'E' && ph != 'X') {
			cr_assert(ph == 'M' || ph == 'i', "event %c", ph);
			continue;
		}
		name = strstr(p, "\"name\":\"") + 8;
		end = strchr(name, '"');
		while (end[-1] == '\\')
			end = strchr(end + 1, '"');
		memset(&e, 0, sizeof(e));
		snprintf(e.name, sizeof(e.name), "%.*s", (int)(end - name), name);
		e.tid = strtoull(strstr(p, "\"tid\":") + 6, NULL, 10);
		e.ts_ns = parse_us(strstr(p, "\"ts\":") + 5);
		if (ph == 'X') {
			e.dur_ns = parse_us(strstr(p, "\"dur\":") + 6);
			cr_assert_geq(e.dur_ns, 0);
			cr_assert_lt(n, max);
			ev[n++] = e;
			continue;
		}
		for (k = 0; k < nr_tids && t[k].tid != e.tid; k++)
			;
		if (k == nr_tids) {
			cr_assert_lt(nr_tids, MAX_TIDS);
			t[nr_tids].tid = e.tid;
			nr_tids++;
		}
		if (ph == 'B') {
			cr_assert_lt(t[k].sp, MAX_OPEN);
			t[k].open[t[k].sp++] = e;
			continue;
		}
		cr_assert(t[k].sp, "E without B");
		t[k].sp--;
		cr_assert_str_eq(t[k].open[t[k].sp].name, e.name);
		cr_assert_lt(n, max);
		ev[n] = t[k].open[t[k].sp];
		ev[n].dur_ns = e.ts_ns - ev[n].ts_ns;
		n++;
	}
	for (size_t k = 0; k < nr_tids; k++)
		cr_assert_eq(t[k].sp, 0, "tid %" PRIu64 ": B without E", t[k].tid);
	free(t);
	return n;
}

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* A scope as a viewer computes it: start and end in double µs. */
struct dspan {
	double s, e;
};

static int dspan_cmp(const void *a, const void *b)
{
	const struct dspan *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->e > y->e ? -1 : x->e < y->e;
}

/*
 * Asserts that the scopes of each thread (tids lo_tid..lo_tid + 7) nest in
 * the arithmetic of the viewers: the JSON numbers read as correctly rounded
 * doubles (strtod, as JSON.parse); an "X" ends at ts + dur added in double
 * precision, either as is (Perfetto's and chrome://tracing's reading of
 * the spec) or after subtracting the thread's first ts (speedscope); a "B"/
 * "E" pair at its two ts. Any two scopes of a thread are disjoint or one
 * holds the other, ends included. Return: the number of scopes.
 */
static size_t assert_nests_as_doubles(const char *json, uint64_t lo_tid, bool rebase)
{
	enum { MAX_OPEN = 256, NR_TIDS = 8 };
	static struct dspan sp[NR_TIDS][40000];
	size_t nr[NR_TIDS] = { 0 }, total = 0;
	double first[NR_TIDS], open_ts[NR_TIDS][MAX_OPEN];
	size_t depth[NR_TIDS] = { 0 };

	for (int k = 0; k < NR_TIDS; k++)
		first[k] = INFINITY;
	/* Pass 1: each thread's first ts (speedscope's origin). */
	for (int pass = 0; pass < 2; pass++) {
		for (const char *l = json, *nl; l && *l; l = nl ? nl + 1 : NULL) {
			char line[512], ph;
			const char *p, *ts;
			uint64_t tid;
			double v, o;

			nl = strchr(l, '\n');
			snprintf(line, sizeof(line), "%.*s", (int)(nl ? nl - l : (ptrdiff_t)strlen(l)),
				 l);
			if (strncmp(line, "{\"ph\":\"", 7) != 0)
				continue;
			ph = line[7];
			p = strstr(line, "\"tid\":");
			ts = strstr(line, "\"ts\":");
			if ((ph != 'X' && ph != 'B' && ph != 'E') || !p || !ts)
				continue;
			tid = strtoull(p + 6, NULL, 10);
			cr_assert(tid >= lo_tid && tid < lo_tid + NR_TIDS, "tid %" PRIu64, tid);
			tid -= lo_tid;
			v = strtod(ts + 5, NULL);
			if (pass == 0) {
				if (v < first[tid])
					first[tid] = v;
				continue;
			}
			o = rebase ? v - first[tid] : v;
			if (ph == 'B') {
				cr_assert_lt(depth[tid], MAX_OPEN);
				open_ts[tid][depth[tid]++] = o;
				continue;
			}
			cr_assert_lt(nr[tid], sizeof(sp[0]) / sizeof(sp[0][0]));
			if (ph == 'E') {
				cr_assert(depth[tid], "E without B: %s", line);
				sp[tid][nr[tid]].s = open_ts[tid][--depth[tid]];
				sp[tid][nr[tid]++].e = o;
			} else {
				sp[tid][nr[tid]].s = o;
				sp[tid][nr[tid]++].e = o + strtod(strstr(line, "\"dur\":") + 6, NULL);
			}
		}
	}
	for (int k = 0; k < NR_TIDS; k++) {
		struct dspan st[MAX_OPEN];
		size_t d = 0;

		qsort(sp[k], nr[k], sizeof(sp[k][0]), dspan_cmp);
		for (size_t i = 0; i < nr[k]; i++) {
			const struct dspan *x = &sp[k][i];

			cr_assert_geq(x->e, x->s);
			/* Done with the scopes that end where x starts, unless x is
			 * inside them (an empty scope at the end of its parent). */
			while (d && st[d - 1].e <= x->s && x->e > st[d - 1].e)
				d--;
			while (d && st[d - 1].e <= x->s && x->s > st[d - 1].s && x->e > x->s)
				d--;
			cr_assert(!d || x->e <= st[d - 1].e,
				  "tid %" PRIu64 "%s: [%.17g, %.17g] overlaps the end of [%.17g, %.17g]",
				  lo_tid + (uint64_t)k, rebase ? " (rebased)" : "", x->s, x->e,
				  st[d - 1].s, st[d - 1].e);
			cr_assert_lt(d, MAX_OPEN);
			st[d++] = *x;
		}
		total += nr[k];
	}
	return total;
}

Test(commands, chrome_output_is_valid_json_with_every_activation_once)
{
	struct tu_result r;
	struct xev ev[64];
	size_t n;

	write_basic(true);
	r = tu_run("chrome", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "{\"traceEvents\":["));
	cr_assert(strstr(r.out, "\"name\":\"thread_name\",\"pid\":4242,\"tid\":100,"
				"\"args\":{\"name\":\"main\"}"), "%s", r.out);
	/* The second thread has the same OS tid: it gets 2^22 + its serial
	 * (2), above every Linux tid, instead. */
	cr_assert(strstr(r.out, "\"name\":\"thread_name\",\"pid\":4242,\"tid\":4194306,"
				"\"args\":{\"name\":\"100\"}"), "%s", r.out);
	cr_assert(strstr(r.out, "\"name\":\"5 scopes dropped\""));
	/* One complete event per activation, ts and dur in exact ns. */
	cr_assert(strstr(r.out, "\n{\"ph\":\"X\",\"name\":\"outer\",\"pid\":4242,\"tid\":100,"
				"\"ts\":1.000,\"dur\":0.500},\n"), "%s", r.out);
	cr_assert(strstr(r.out, "\n{\"ph\":\"X\",\"name\":\"in\\\"ner\",\"pid\":4242,\"tid\":100,"
				"\"ts\":10.100,\"dur\":0.090},\n"), "%s", r.out);
	cr_assert_eq(count_of(r.out, "{\"ph\":\"X\""), 30, "%s", r.out);
	cr_assert(!strstr(r.out, "\"ph\":\"B\"") && !strstr(r.out, "\"ph\":\"E\""));
	n = parse_chrome(r.out, ev, 64);
	cr_assert_eq(n, 30);
	for (uint64_t i = 0; i < 10; i++) {
		int found = 0;

		for (size_t k = 0; k < n; k++) {
			if (ev[k].tid == 100 && !strcmp(ev[k].name, "outer") &&
			    ev[k].ts_ns == (int64_t)(1000 + i * 1000)) {
				cr_assert_eq(ev[k].dur_ns, 500);
				found++;
			}
			if (ev[k].tid == 100 && !strcmp(ev[k].name, "in\\\"ner") &&
			    ev[k].ts_ns == (int64_t)(1100 + i * 1000)) {
				cr_assert_eq(ev[k].dur_ns, (int64_t)(10 * i));
				found++;
			}
			if (ev[k].tid == 4194306 && ev[k].ts_ns == (int64_t)(1001 + i * 1000)) {
				cr_assert_eq(ev[k].dur_ns, 1);
				found++;
			}
		}
		cr_assert_eq(found, 3, "activation set %" PRIu64, i);
	}
	tu_result_free(&r);
}

Test(commands, chrome_events_nest_and_match_summary_times)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r, s;
	struct csv_row rows[8];
	static struct xev ev[4096];
	uint64_t seed = 42, now = 1000;
	size_t n, nr_rows;
	int depth = 0;
	int64_t sum[4] = { 0 };

	tg_site(t, 1, "a");
	tg_site(t, 2, "b");
	tg_site(t, 3, "c");
	tg_thread(t, 1, 5, "t");
	/* Random well-nested scopes, 2000 activations. */
	uint32_t stack[64];
	for (int i = 0; i < 2000;) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		now += 1 + (seed >> 58);
		if (depth < 60 && (depth == 0 || (seed >> 33) % 2)) {
			stack[depth] = 1 + (uint32_t)((seed >> 40) % 3);
			tg_enter(t, 1, stack[depth++], now);
			i++;
		} else {
			tg_exit(t, 1, stack[--depth], now);
		}
	}
	while (depth)
		tg_exit(t, 1, stack[--depth], now += 3);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("chrome", "-o", tu_path(1, "out.json"), trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	tu_result_free(&r);
	FILE *f = fopen(tu_path(1, "out.json"), "r");
	static char json[1 << 20];
	size_t len = fread(json, 1, sizeof(json) - 1, f);
	fclose(f);
	unlink(tu_path(1, "out.json"));
	json[len] = '\0';
	cr_assert(tu_json_valid(json));
	n = parse_chrome(json, ev, 4096);
	cr_assert_eq(n, 2000);
	/* Proper nesting: any two events on the thread are disjoint or nested. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++) {
			int64_t a0 = ev[i].ts_ns, a1 = a0 + ev[i].dur_ns;
			int64_t b0 = ev[k].ts_ns, b1 = b0 + ev[k].dur_ns;

			cr_assert(a1 <= b0 || b1 <= a0 || (a0 <= b0 && b1 <= a1) ||
					  (b0 <= a0 && a1 <= b1),
				  "events %zu and %zu overlap", i, k);
		}
	for (size_t i = 0; i < n; i++)
		sum[ev[i].name[0] - 'a'] += ev[i].dur_ns;
	s = tu_run("summary", "--format=csv", trace, NULL);
	nr_rows = parse_summary_csv(s.out, false, rows, 8);
	cr_assert_eq(nr_rows, 3);
	for (size_t i = 0; i < nr_rows; i++) {
		/* mean * calls is the sum of every activation's duration. */
		int64_t want = sum[rows[i].name[0] - 'a'];
		int64_t got = (int64_t)(rows[i].mean * rows[i].calls);

		cr_assert_leq(llabs(want - got), (int64_t)rows[i].calls,
			      "%s: chrome %" PRId64 " summary %" PRId64, rows[i].name, want, got);
	}
	tu_result_free(&s);
}

Test(commands, chrome_applies_the_filters)
{
	struct tu_result r;
	struct xev ev[64];

	write_basic(true);
	r = tu_run("chrome", "--function=^outer$", "--from=2us", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(tu_json_valid(r.out));
	/* outer starts at 1, 2, ... 10 us: 2 us and later is 9 of them. */
	cr_assert_eq(parse_chrome(r.out, ev, 64), 9);
	tu_result_free(&r);
	r = tu_run("chrome", "--thread=main", trace, NULL);
	cr_assert_eq(parse_chrome(r.out, ev, 64), 20);
	tu_result_free(&r);
}

Test(commands, summary_json_with_counters_and_intervals_is_valid_json)
{
	const char *names[2] = { "instructions", "cycles" };
	const uint32_t flags[2] = { RECFMT_COUNTER_RECORDED, RECFMT_COUNTER_RECORDED };
	struct tg_trace *t = new_trace(trace);
	uint64_t v0[2] = { 10, 10 }, v1[2] = { 310, 110 };
	struct tu_result r;

	tg_site(t, 1, "f\"q");
	tg_site(t, 2, "g");
	tg_thread(t, 1, 100, "main");
	tg_counter_set(t, 1, 2, names, flags);
	tg_enter_ctr(t, 1, 1, 1000, v0);
	tg_exit_ctr(t, 1, 1, 2000, v1);
	tg_enter(t, 2, 2, 1000);
	tg_exit(t, 2, 2, 1500);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("summary", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "\"counters\":{\"instructions\":{\"total\":300,\"mean\":300.00},"
				"\"cycles\":{\"total\":100,\"mean\":100.00}},\"ipc\":3.0000}"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "\"counters\":{\"instructions\":null,\"cycles\":null},\"ipc\":null}"),
		  "%s", r.out);
	tu_result_free(&r);
	r = tu_run("summary", "--format=json", "--interval=500ns", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "{\"interval_start_ns\":500,\"thread\":\"main\",\"function\":"
				"\"f\\\"q\",\"calls\":0,\"total_ns\":500,\"percent\":100.00}"),
		  "%s", r.out);
	tu_result_free(&r);
}

/* ---- several walkers (analyzer/engine/events.c tt_trace_walk_many()) ---- */

/*
 * Two modules whose files are gone, MODULE 1 /nonexistent-rec-test/libgone.so
 * and 2 /nonexistent-rec-test/prog, and a function site in each: site 1 at
 * libgone.so's 0x1100, site 2 at prog's 0x1200.
 */
static void gone_modules(struct tg_trace *t)
{
	tg_module(t, 1, "/nonexistent-rec-test/libgone.so", 0x7f0000000000, 0x7f0000001000,
		  0x7f0000002000);
	tg_module(t, 2, "/nonexistent-rec-test/prog", 0x555500000000, 0x555500001000,
		  0x555500009000);
	tg_func(t, 1, 0x7f0000001100);
	tg_func(t, 2, 0x555500001200);
}

/* The one warning line a command gives for gone_modules()' module (its path). */
static const char *gone_warning(char *want, size_t bytes, const char *module)
{
	snprintf(want, bytes,
		 "tracetool: %s: warning: %s: cannot open: No such file or directory; its "
		 "functions are shown as addresses",
		 trace, module);
	return want;
}

/*
 * Four threads call two functions of two modules whose files are gone and
 * one TRACE_SCOPE site: each walker replica names the function sites of its
 * own threads, so each meets the missing files; the report must still be
 * the one-walker report, with one warning per module, in MODULE order.
 */
Test(commands, names_and_module_warnings_do_not_depend_on_the_number_of_walkers)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result one = { 0 };
	char want[1024];

	gone_modules(t);
	tg_site(t, 3, "manual");
	for (uint32_t th = 1; th <= 4; th++) {
		tg_thread(t, th, 100 + th, NULL);
		for (uint64_t i = 0; i < 5 * th; i++) {
			uint64_t b = 10000 * i + th;

			tg_enter(t, th, 1, b);
			tg_enter(t, th, 2, b + 10);
			tg_exit(t, th, 2, b + 30);
			tg_exit(t, th, 1, b + 50);
			tg_enter(t, th, 3, b + 60);
			tg_exit(t, th, 3, b + 70);
		}
	}
	cr_assert_eq(tg_finish(t, true), 0);

	const char *const walkers[] = { "1", "2", "3", "8" };
	for (size_t w = 0; w < sizeof(walkers) / sizeof(walkers[0]); w++) {
		struct tu_result r;

		cr_assert_eq(setenv("TRACETOOL_THREADS", walkers[w], 1), 0);
		r = tu_run("summary", "--format=csv", "--by-thread", trace, NULL);
		cr_assert_eq(r.status, 0, "%s", r.err);
		if (w == 0) {
			one = r;
			continue;
		}
		cr_assert_str_eq(r.out, one.out, "TRACETOOL_THREADS=%s", walkers[w]);
		cr_assert_str_eq(r.err, one.err, "TRACETOOL_THREADS=%s", walkers[w]);
		tu_result_free(&r);
	}
	unsetenv("TRACETOOL_THREADS");
	cr_assert_eq(tu_nr_lines(one.err), 2, "%s", one.err);
	cr_assert_str_eq(tu_line(one.err, 0),
			 gone_warning(want, sizeof(want), "/nonexistent-rec-test/libgone.so"));
	cr_assert_str_eq(tu_line(one.err, 1),
			 gone_warning(want, sizeof(want), "/nonexistent-rec-test/prog"));
	/* Every thread's rows: 3 functions x 4 threads, named the same way. */
	cr_assert_eq(tu_nr_lines(one.out), 1 + 12, "%s", one.out);
	cr_assert(strstr(one.out, ",0x1100 [libgone.so: missing],"), "%s", one.out);
	cr_assert(strstr(one.out, ",0x1200 [prog: missing],"), "%s", one.out);
	tu_result_free(&one);
}

/*
 * F24 (check4): chrome, perfetto and export name both scopes and stack
 * samples, reading each module twice; a missing module is still one
 * warning line (README, whole-program mode: "one warning line per module").
 */
Test(commands, F24_a_missing_module_is_one_warning_in_commands_that_name_samples_too)
{
	struct tg_trace *t = new_trace(trace);
	const uint64_t stack[] = { 0x7f0000001104, 0x555500001205 };
	const char *out = tu_path(1, "f24.out"), *dir = tu_path(2, "f24.dir");
	char want[1024];

	gone_modules(t);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	tg_thread(t, 1, 101, "main");
	for (uint64_t i = 0; i < 5; i++) {
		tg_enter(t, 1, 2, 10000 * i);
		tg_enter(t, 1, 1, 10000 * i + 10);
		cr_assert_eq(tg_sample(t, 1, 10000 * i + 20, 0, 2, stack), 0);
		tg_exit(t, 1, 1, 10000 * i + 30);
		tg_exit(t, 1, 2, 10000 * i + 50);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	gone_warning(want, sizeof(want), "/nonexistent-rec-test/libgone.so");

	const char *const cmds[][5] = {
		{ "chrome", "-o", out, trace, NULL },	{ "perfetto", "-o", out, trace, NULL },
		{ "export", "-o", dir, trace, NULL },	{ "summary", trace, NULL },
		{ "profile", trace, NULL },
	};
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		struct tu_result r = tu_runv(cmds[c]);

		cr_assert_eq(r.status, 0, "%s: %s", cmds[c][0], r.err);
		cr_assert_eq(tu_nr_lines(r.err), 2, "%s:\n%s", cmds[c][0], r.err);
		cr_assert_str_eq(tu_line(r.err, 0), want, "%s", cmds[c][0]);
		cr_assert(strstr(tu_line(r.err, 1), "/nonexistent-rec-test/prog: cannot open"),
			  "%s:\n%s", cmds[c][0], r.err);
		tu_result_free(&r);
	}
	unlink(out);
	tu_rm_rf(dir);
}

/* Contract §7: a recording with no end marker is reported as such by every
 * command that prints a report: one warning line on stderr, and a footer
 * line in table output; a clean one by none. */
Test(commands, every_report_says_when_there_is_no_end_marker)
{
	static const char *const cmds[][3] = {
		{ "summary", NULL, NULL },     { "summary", "--interval=1us", NULL },
		{ "histogram", NULL, NULL },   { "chrome", NULL, NULL },
		{ "tree", NULL, NULL },	       { "flame", NULL, NULL },
		{ "info", NULL, NULL },	       { "summary", "--format=csv", NULL },
		{ "tree", "--format=json", NULL },
	};
	char want[512];

	snprintf(want, sizeof(want), "tracetool: %s: warning: no end marker: the recording did "
		 "not end cleanly", trace);
	for (int clean = 0; clean < 2; clean++) {
		write_basic(clean);
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			struct tu_result r = tu_run(cmds[i][0], trace, cmds[i][1], NULL);
			bool table = !cmds[i][1] || !strncmp(cmds[i][1], "--interval", 10);

			cr_assert_eq(r.status, 0, "%s: exit %d", cmds[i][0], r.status);
			if (clean) {
				cr_assert_str_eq(r.err, "", "%s: %s", cmds[i][0], r.err);
				cr_assert(!strstr(r.out, "no end marker"), "%s", cmds[i][0]);
			} else {
				cr_assert_eq(tu_nr_lines(r.err), 1, "%s: %s", cmds[i][0], r.err);
				cr_assert(strstr(r.err, want) == r.err, "%s: %s", cmds[i][0], r.err);
				if (table && strcmp(cmds[i][0], "chrome") && strcmp(cmds[i][0], "flame"))
					cr_assert(strstr(r.out, "warning: no end marker") ||
							  strstr(r.out, "warning:          no end marker"),
						  "%s: no footer:\n%s", cmds[i][0], r.out);
			}
			tu_result_free(&r);
		}
	}
}

/*
 * Property: on random nested traces (several threads, a TSC clock whose
 * rate is no whole number of ns, exact ties between a child's exit and its
 * parent's), chrome's events pair up per thread and a thread's times never
 * go back, as decimal strings and as the doubles a viewer reads, so no
 * child ends after its parent; every timed activation is there once; with
 * --from/--to the scopes that enclose the window are kept, clipped to it.
 */
Test(commands, chrome_nests_on_random_traces_and_clips_windows)
{
	static struct xev ev[20000];
	const char *out = tu_path(1, "rand.json");

	for (uint64_t round = 0; round < 8; round++) {
		struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC,
					 .ticks_per_second = 2999999989ull + round * 7919,
					 .start_ticks = 1000 + round, .pid = 77 };
		struct tg_trace *t = tg_create(trace, &cfg);
		/* Later rounds start hours into the recording, where a double
		 * holds microseconds to about 1e-7 ns: ts + dur is rounded. */
		uint64_t base = round < 4 ? 0 : (round - 3) * 3600 * 2999999989ull + 12345;
		uint64_t base_ns = (uint64_t)((unsigned __int128)base * 1000000000u /
					      cfg.ticks_per_second);
		uint64_t seed = 0x9E3779B97F4A7C15ull * (round + 1), now = 2000, calls = 0;
		char from[32], to[32];
		struct csv_row rows[8];
		struct tu_result r, s;
		size_t n, nr;

		cr_assert(t);
		for (uint32_t k = 1; k <= 4; k++) {
			char name[8];

			snprintf(name, sizeof(name), "s%u", k);
			tg_site(t, k, name);
		}
		for (uint32_t th = 1; th <= 3; th++) {
			uint32_t stack[40];
			int depth = 0;

			tg_thread(t, th, 100 + th, NULL);
			now = base + 2000 + th;
			for (int i = 0; i < 1500;) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				/* Often no time passes: ties between exits. */
				now += (seed >> 61) < 3 ? 0 : 1 + (seed >> 54) % 700;
				if (depth < 40 && (depth == 0 || (seed >> 33) % 2)) {
					stack[depth] = 1 + (uint32_t)((seed >> 40) % 4);
					tg_enter(t, th, stack[depth++], now);
					i++;
				} else {
					tg_exit(t, th, stack[--depth], now);
				}
			}
			while (depth)
				tg_exit(t, th, stack[--depth], now);
		}
		cr_assert_eq(tg_finish(t, true), 0);
		r = tu_run("chrome", trace, "-o", out, NULL);
		cr_assert_eq(r.status, 0, "%s", r.err);
		tu_result_free(&r);
		{
			FILE *f = fopen(out, "r");
			static char json[4 << 20];
			size_t len;

			cr_assert(f);
			len = fread(json, 1, sizeof(json) - 1, f);
			fclose(f);
			json[len] = '\0';
			cr_assert(tu_json_valid(json));
			n = parse_chrome(json, ev, 20000);
			cr_assert_eq(assert_nests_as_doubles(json, 101, false), n);
			cr_assert_eq(assert_nests_as_doubles(json, 101, true), n);
		}
		s = tu_run("summary", "--format=csv", trace, NULL);
		nr = parse_summary_csv(s.out, false, rows, 8);
		for (size_t i = 0; i < nr; i++)
			calls += rows[i].calls + rows[i].errors;
		tu_result_free(&s);
		cr_assert_eq(n, calls, "round %" PRIu64 ": %zu events, %" PRIu64 " calls", round, n,
			     calls);
		cr_assert_eq(n, 4500);
		/* A window: everything inside it, enclosing scopes clipped. */
		snprintf(from, sizeof(from), "--from=%" PRIu64 "ns", base_ns + 20000 + round * 1000);
		snprintf(to, sizeof(to), "--to=%" PRIu64 "ns", base_ns + 60000 + round * 1000);
		r = tu_run("chrome", from, to, trace, NULL);
		cr_assert_eq(r.status, 0, "%s", r.err);
		n = parse_chrome(r.out, ev, 20000);
		cr_assert_gt(n, 0);
		for (size_t i = 0; i < n; i++) {
			cr_assert_geq(ev[i].ts_ns, (int64_t)(base_ns + 20000 + round * 1000));
			cr_assert_leq(ev[i].ts_ns + ev[i].dur_ns,
				      (int64_t)(base_ns + 60000 + round * 1000));
		}
		/* Clipped scopes start and end together: still nested. */
		cr_assert_eq(assert_nests_as_doubles(r.out, 101, false), n);
		cr_assert_eq(assert_nests_as_doubles(r.out, 101, true), n);
		tu_result_free(&r);
	}
	unlink(out);
}

Test(commands, chrome_says_when_the_window_is_empty)
{
	struct tu_result r;
	struct xev ev[4];

	write_basic(true);
	r = tu_run("chrome", "--from=1s", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(tu_json_valid(r.out));
	cr_assert_eq(parse_chrome(r.out, ev, 4), 0);
	cr_assert(strstr(r.err, "warning: no activation to show in the window"), "%s", r.err);
	tu_result_free(&r);
}

/* F22 (check4): flame -o - writes to standard output, as chrome -o - does,
 * not into a file named "-" (tracetool(1), flame). */
Test(commands, F22_flame_dash_o_dash_is_standard_output)
{
	struct tu_result plain, dash, svg;

	write_basic(true);
	unlink("-");
	plain = tu_run("flame", trace, NULL);
	dash = tu_run("flame", "-o", "-", trace, NULL);
	svg = tu_run("flame", "--format=svg", "-o", "-", trace, NULL);
	cr_assert_eq(plain.status, 0);
	cr_assert_eq(dash.status, 0, "%s", dash.err);
	cr_assert(strstr(plain.out, "outer "), "%s", plain.out);
	cr_assert_str_eq(dash.out, plain.out);
	cr_assert_eq(svg.status, 0, "%s", svg.err);
	cr_assert(strstr(svg.out, "<svg"), "%.200s", svg.out);
	cr_assert_eq(access("-", F_OK), -1, "flame wrote a file named -");
	unlink("-");
	tu_result_free(&plain);
	tu_result_free(&dash);
	tu_result_free(&svg);
}

/* A clock that steps by 100 ns: info shows the step, and no histogram bin
 * is narrower than it. */
Test(commands, info_shows_the_clock_step_and_histograms_respect_it)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;
	uint64_t now = 1000, seed = 7;

	tg_site(t, 1, "f");
	tg_thread(t, 1, 5, "t");
	for (int i = 0; i < 2000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		tg_enter(t, 1, 1, now);
		now += 100 * (1 + (seed >> 33) % 50);
		tg_exit(t, 1, 1, now);
		now += 200;
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("info", trace, NULL);
	cr_assert(strstr(r.out, "clock step:       100.0 ns (the smallest step between two "
				"events, 100 ticks)"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert(strstr(r.out, "\"clock_step_ns\":100.0"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("histogram", "--bins=40", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_gt(tu_nr_lines(r.out), 3, "%s", r.out);
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++) {
		unsigned long long lo, hi, count;

		cr_assert_eq(sscanf(tu_line(r.out, i), "f,%llu,%llu,%llu", &lo, &hi, &count), 3);
		cr_assert_geq(hi - lo, 100, "bin %u: [%llu, %llu)", i, lo, hi);
	}
	tu_result_free(&r);
}
