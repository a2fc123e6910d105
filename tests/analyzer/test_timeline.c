/* SPDX-License-Identifier: MIT */
/*
 * test_timeline.c - issue 29 item 3: chrome and perfetto pair a file's
 * threads on several walkers and put their output together
 * (analyzer/out/lanes.c), byte for byte what one walker writes: with
 * TRACETOOL_THREADS=1, 2 and 3, on a trace with five threads (two with the
 * same OS tid), scopes of the same name at two places, counters, every kind
 * of annotation (some stand-alone), stack samples, drops and small frames;
 * with --thread, --function and --from/--to; on the file cut in the middle
 * of a frame; with lanes of a few KiB, whose walkers then wait for each
 * other, or spill to temporary files when one thread walks every replica (a
 * window read through the frame index); and with two functions of one name
 * in two files (this one and timeline_twin.c) that threads of different
 * walkers call first, labelled alike by every walker; and chrome's ts and
 * dur digits at every width its formatting takes apart.
 */
#define _GNU_SOURCE /* dl_iterate_phdr, sched_setaffinity */
#include <link.h>
#include <sched.h>

#include "ttest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR_THREADS 5
#define NR_SITES 12

static const char *trace, *cut, *idx_dir, *pf_out;

static void setup(void)
{
	trace = tu_path(0, "timeline.zst");
	cut = tu_path(1, "timeline-cut.zst");
	idx_dir = tu_path(2, "timeline-idx");
	pf_out = tu_path(3, "timeline.pftrace");
	mkdir(idx_dir, 0700);
	setenv("TRACETOOL_INDEX_DIR", idx_dir, 1);
	setenv("TRACETOOL_INDEX", "0", 1);
}

static void teardown(void)
{
	unlink(trace);
	unlink(cut);
	unlink(pf_out);
	tu_rm_rf(idx_dir);
	unsetenv("TRACETOOL_THREADS");
	unsetenv("TRACETOOL_LANE_BYTES");
}

TestSuite(timeline, .init = setup, .fini = teardown, .timeout = 300);

uint64_t timeline_twin_addr(void); /* timeline_twin.c */

static volatile int sink;

static __attribute__((noinline, used)) void twin(void)
{
	sink++;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	return tt_rnd(&rng, n);
}

static void annot(struct tg_trace *t, uint32_t th, uint32_t kind, uint32_t name_id,
		  uint64_t now, int64_t v)
{
	struct recfmt_annot a = { .kind = kind, .name_id = name_id, .ticks = now, .i64 = v,
				  .f64 = (double)v / 3, .id = (uint64_t)v };

	if (kind == RECFMT_ANNOT_MESSAGE) {
		a.text = "hello \"there\"";
		a.text_bytes = 13;
	}
	cr_assert_eq(tg_annot(t, th, &a), 0);
}

/* The trace of the file's comment, without counters, annotations and
 * samples when plain (a frame index then serves it); its last tick. */
static uint64_t write_trace(bool plain)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = 4343, .start_real_ns = 1700000000000000000ull,
				 .frame_bytes = 16 << 10, .block_events = 300 };
	struct tg_trace *t = tg_create(trace, &cfg);
	static const char *const ctr_names[] = { "cycles" };
	static const uint32_t ctr_flags[] = { RECFMT_COUNTER_RECORDED };
	uint32_t stack[NR_THREADS][64], sp[NR_THREADS] = { 0 };
	uint64_t now = 1000, frames[3] = { 0x1000, 0x2000, 0x3000 };
	char name[32];

	cr_assert(t);
	if (!plain)
		cr_assert_eq(tg_sampling(t, 1000, 8), 0);
	for (uint32_t s = 1; s <= NR_SITES; s++) {
		/* "step" at two places: labelled "step" and "step (b.c)". */
		snprintf(name, sizeof(name), s % 4 == 0 ? "step" : "fn%02u", s);
		tg_site_at(t, s, name, s % 8 == 0 ? "b.c" : "a.c", 10 * s);
	}
	if (!plain) {
		tg_annot_name(t, 1, RECFMT_NAME_TRACK, "queue");
		tg_annot_name(t, 2, RECFMT_NAME_INSTANT, "tick");
		tg_annot_name(t, 3, RECFMT_NAME_KEY, "bytes");
		tg_annot_name(t, 4, RECFMT_NAME_FLOW, "request");
	}
	for (uint32_t i = 0; i < NR_THREADS; i++)
		if (i != 4) /* thread 5's THREAD record comes after its first events */
			tg_thread(t, i + 1, i == 3 ? 600 : 600 + i, i == 1 ? NULL : "worker");
	if (!plain) {
		cr_assert_eq(tg_counter_set(t, 3, 1, ctr_names, ctr_flags), 0);
		annot(t, 2, RECFMT_ANNOT_INSTANT, 2, now, 0); /* stand-alone: no event yet */
	}
	for (uint32_t step = 0; step < 60000; step++) {
		uint32_t th = rnd(NR_THREADS), *st = stack[th];

		now += 1 + rnd(30);
		if (step == 20000)
			tg_thread(t, 5, 700, "late");
		if (sp[th] < 40 && (sp[th] == 0 || rnd(100) < 52)) {
			st[sp[th]++] = 1 + rnd(NR_SITES);
			cr_assert_eq(tg_enter(t, th + 1, st[sp[th] - 1], now), 0);
		} else {
			cr_assert_eq(tg_exit(t, th + 1, st[--sp[th]], now), 0);
		}
		switch (plain ? 40 : rnd(40)) {
		case 0:
			annot(t, th + 1, RECFMT_ANNOT_VALUE_I64, 1, now, step);
			break;
		case 1:
			annot(t, th + 1, RECFMT_ANNOT_VALUE_F64, 1, now, step);
			break;
		case 2:
			annot(t, th + 1, RECFMT_ANNOT_ARG, 3, now, step);
			break;
		case 3:
			annot(t, th + 1, step % 2 ? RECFMT_ANNOT_FLOW_BEGIN : RECFMT_ANNOT_FLOW_END, 4,
			      now, step / 4);
			break;
		case 4:
			annot(t, th + 1, RECFMT_ANNOT_MESSAGE, 0, now, 0);
			break;
		case 5:
			frames[0] = 0x1000 + rnd(64);
			cr_assert_eq(tg_sample(t, th + 1, now, 0, 3, frames), 0);
			break;
		default:
			break;
		}
		if (step % 15000 == 0 && !plain)
			tg_drops(t, th + 1, step / 100);
	}
	/* Threads 1 and 2 end with every scope closed; the others are open at
	 * the end of the recording. */
	for (uint32_t th = 0; th < 2; th++)
		while (sp[th])
			cr_assert_eq(tg_exit(t, th + 1, stack[th][--sp[th]], now += 2), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	return now;
}

/* args with TRACETOOL_THREADS=walkers; perfetto's output file read into out. */
static struct tu_result run_walkers(const char *walkers, const char *const *args)
{
	struct tu_result r;

	setenv("TRACETOOL_THREADS", walkers, 1);
	r = tu_runv(args);
	if (strcmp(args[0], "perfetto") == 0 && r.status == 0) {
		FILE *f = fopen(pf_out, "rb");
		long n;

		cr_assert(f);
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		free(r.out);
		r.out = malloc((size_t)n + 1);
		cr_assert_eq(fread(r.out, 1, (size_t)n, f), (size_t)n);
		r.out[n] = '\0';
		r.out_len = (size_t)n;
		fclose(f);
	}
	return r;
}

/* Runs args with 1, 2 and 3 walkers and asserts the same status, stdout
 * (or perfetto's file) and stderr. Return: the one walker's output size. */
static size_t same_with_any_walkers(const char *const *args)
{
	struct tu_result one = run_walkers("1", args);
	size_t n = one.out_len;

	for (const char *w = "2"; *w <= '3'; w = *w == '2' ? "3" : "4") {
		struct tu_result many = run_walkers(w, args);

		cr_assert_eq(many.status, one.status, "%s with %s walkers: %s", args[0], w,
			     many.err);
		cr_assert_eq(many.out_len, one.out_len, "%s %s with %s walkers: %zu vs %zu bytes",
			     args[0], args[1], w, many.out_len, one.out_len);
		cr_assert(memcmp(many.out, one.out, one.out_len) == 0, "%s %s with %s walkers differ",
			  args[0], args[1], w);
		cr_assert_str_eq(many.err, one.err, "%s with %s walkers", args[0], w);
		tu_result_free(&many);
	}
	tu_result_free(&one);
	return n;
}

Test(timeline, chrome_and_perfetto_write_the_same_bytes_with_one_two_or_three_walkers)
{
	char from[64], to[64];
	uint64_t end = write_trace(false);
	const char *const chrome[] = { "chrome", "-o", "-", trace, NULL };
	const char *const perfetto[] = { "perfetto", "-o", pf_out, trace, NULL };
	struct tu_result r;

	/* Three walkers are three: each pairs its share of the threads. */
	setenv("TRACETOOL_CHROME_STATS", "1", 1);
	setenv("TRACETOOL_PERFETTO_STATS", "1", 1);
	r = run_walkers("3", chrome);
	cr_assert(strstr(r.err, "stdout: 3 walker(s), 0 bytes through temporary files\n"), "%s",
		  r.err);
	tu_result_free(&r);
	r = run_walkers("3", perfetto);
	cr_assert(strstr(r.err, " 3 walker(s), 0 bytes through temporary files\n"), "%s", r.err);
	tu_result_free(&r);
	unsetenv("TRACETOOL_CHROME_STATS");
	unsetenv("TRACETOOL_PERFETTO_STATS");

	snprintf(from, sizeof(from), "--from=%" PRIu64 "ns", (end - 1000) / 3);
	snprintf(to, sizeof(to), "--to=%" PRIu64 "ns", (end - 1000) / 2);
	const char *const cmds[][8] = {
		{ "chrome", "-o", "-", trace, NULL },
		{ "chrome", "--thread=600", "--thread=late", "-o", "-", trace, NULL },
		{ "chrome", "--function=^fn0", "-o", "-", trace, NULL },
		{ "chrome", from, to, "-o", "-", trace, NULL },
		{ "perfetto", "-o", pf_out, trace, NULL },
	};

	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
		cr_assert_gt(same_with_any_walkers(cmds[c]), 10000, "%s %s", cmds[c][0], cmds[c][1]);
}

/* A file cut in the middle of a frame: the intact prefix, said the same way. */
Test(timeline, a_cut_file_gives_the_same_bytes_with_any_number_of_walkers)
{
	uint64_t offsets[64];
	size_t nr;
	char cmd[1024];

	write_trace(false);
	nr = tg_file_frame_offsets(trace, offsets, 64);
	cr_assert_gt(nr, 8);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", trace, cut);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(tg_file_truncate(cut, offsets[nr / 2] + 200), 0);
	{
		const char *const chrome[] = { "chrome", "-o", "-", cut, NULL };
		const char *const perfetto[] = { "perfetto", "-o", pf_out, cut, NULL };
		struct tu_result r = run_walkers("2", chrome);

		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert(strstr(r.err, "truncated"), "%s", r.err);
		cr_assert(strstr(r.out, "\"truncated\":\"true\""));
		tu_result_free(&r);
		same_with_any_walkers(chrome);
		same_with_any_walkers(perfetto);
	}
}

/* "W walker(s), N bytes through temporary files" of TRACETOOL_CHROME_STATS:
 * N, asserting W. */
static uint64_t spilled(const char *err, unsigned walkers)
{
	const char *p = strstr(err, "stdout: ");
	unsigned w = 0;
	uint64_t n = 0;

	while (p && sscanf(p, "stdout: %u walker(s), %" SCNu64 " bytes through temporary files",
			   &w, &n) != 2)
		p = strstr(p + 1, "stdout: ");
	cr_assert(p, "no stats in: %s", err);
	cr_assert_eq(w, walkers, "%s", err);
	return n;
}

/*
 * Lanes that hold 2 KiB: walkers on threads of their own wait for the ones
 * behind them; on one CPU, where the calling thread walks every replica in
 * turn (TRACETOOL_THREADS=3 in a process bound to one CPU), the first
 * replica's output of a frame goes through temporary files. The bytes stay
 * one walker's. A window read through the frame index takes one walker (its
 * replicas would take turns on one thread): the same bytes as the whole
 * file's.
 */
Test(timeline, small_lanes_wait_or_spill_and_keep_the_bytes)
{
	const char *const whole[] = { "chrome", "-o", "-", trace, NULL };
	const char *const perfetto[] = { "perfetto", "-o", pf_out, trace, NULL };
	char from[64], to[64];
	uint64_t end = write_trace(true);
	struct tu_result ref, r;
	cpu_set_t all, one;
	int cpu = 0;

	snprintf(from, sizeof(from), "--from=%" PRIu64 "ns", (end - 1000) / 20 * 7);
	snprintf(to, sizeof(to), "--to=%" PRIu64 "ns", (end - 1000) / 20 * 13);
	const char *const window[] = { "chrome", from, to, "-o", "-", trace, NULL };

	ref = run_walkers("1", whole);
	cr_assert_eq(ref.status, 0, "%s", ref.err);
	setenv("TRACETOOL_LANE_BYTES", "2048", 1); /* pages of 16 KiB */
	cr_assert_gt(same_with_any_walkers(whole), 100000);
	same_with_any_walkers(perfetto);
	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	while (!CPU_ISSET(cpu, &all))
		cpu++;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	setenv("TRACETOOL_CHROME_STATS", "1", 1);
	r = run_walkers("3", whole);
	cr_assert_eq(sched_setaffinity(0, sizeof(all), &all), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_gt(spilled(r.err, 3), 0, "%s", r.err);
	cr_assert_eq(r.out_len, ref.out_len);
	cr_assert(memcmp(r.out, ref.out, ref.out_len) == 0, "spilled lanes differ");
	tu_result_free(&r);
	tu_result_free(&ref);
	unsetenv("TRACETOOL_LANE_BYTES");
	ref = run_walkers("1", window); /* the whole file read */
	cr_assert_eq(ref.status, 0, "%s", ref.err);
	setenv("TRACETOOL_INDEX", "1", 1);
	setenv("TRACETOOL_INDEX_STATS", "1", 1);
	r = run_walkers("3", window);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "index: decoded "), "no index used: %s", r.err);
	cr_assert_eq(spilled(r.err, 1), 0, "%s", r.err);
	cr_assert_eq(r.out_len, ref.out_len);
	cr_assert(memcmp(r.out, ref.out, ref.out_len) == 0, "the window through the index differs");
	unsetenv("TRACETOOL_CHROME_STATS");
	unsetenv("TRACETOOL_INDEX_STATS");
	tu_result_free(&r);
	tu_result_free(&ref);
}

/*
 * Function sites 1 (twin of this file) and 2 (twin of timeline_twin.c),
 * their FUNC records in that order; thread 1 (the first walker's) calls
 * site 2 first, thread 2 (the second's) only site 1. Named as the events
 * first need them, each walker would call its first twin "twin"; named at
 * their FUNC records (eager_names), every walker labels site 1 "twin" and
 * site 2 "twin (timeline_twin.c)", as one walker does.
 */
Test(timeline, functions_of_one_name_in_two_files_are_labelled_alike_by_every_walker)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = 4343, .start_real_ns = 1700000000000000000ull,
				 .block_events = 64 };
	struct tg_trace *t = tg_create(trace, &cfg);
	struct tg_self_map m;
	const char *const chrome[] = { "chrome", "-o", "-", trace, NULL };
	const char *const perfetto[] = { "perfetto", "-o", pf_out, trace, NULL };
	struct tu_result r;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t now = 1000;

	cr_assert(t && n > 0);
	exe[n] = '\0';
	tg_self_map(&m);
	cr_assert(m.hi > m.lo, "no PT_LOAD of the test program");
	cr_assert_eq(tg_module(t, 1, exe, m.bias, m.lo, m.hi), 0);
	cr_assert_eq(tg_func(t, 1, (uint64_t)(uintptr_t)&twin + 1), 0);
	cr_assert_eq(tg_func(t, 2, timeline_twin_addr()), 0);
	tg_thread(t, 1, 801, "first");
	tg_thread(t, 2, 802, "second");
	for (unsigned i = 0; i < 200; i++) {
		tg_enter(t, 1, i < 100 ? 2 : 1, now += 10);
		tg_exit(t, 1, i < 100 ? 2 : 1, now += 10);
		tg_enter(t, 2, 1, now += 10);
		tg_exit(t, 2, 1, now += 10);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = run_walkers("1", chrome);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"name\":\"twin (timeline_twin.c)\",\"pid\":4343,\"tid\":801"),
		  "%.2000s", r.out);
	cr_assert(strstr(r.out, "\"name\":\"twin\",\"pid\":4343,\"tid\":802"), "%.2000s", r.out);
	cr_assert_null(strstr(r.out, "\"name\":\"twin (timeline_twin.c)\",\"pid\":4343,"
				     "\"tid\":802"));
	tu_result_free(&r);
	same_with_any_walkers(chrome);
	same_with_any_walkers(perfetto);
}

/*
 * chrome's ts and dur: microseconds with three decimals, exact to the
 * nanosecond (docs/ANALYZER.md, "chrome output"), at every width its
 * formatting takes apart (cmd_chrome.c, fmt_us(): groups of three digits
 * below 1000 s, the general loop above): times and durations of 1, 3, 4,
 * 6, 7, 9, 10, 12 and 13 digits of nanoseconds and the values around each
 * power of ten, each written as printf writes the same integers.
 */
Test(timeline, chrome_writes_ts_and_dur_at_every_width_to_the_nanosecond)
{
	static const uint64_t at[] = {
		0, 7, 999, 1000, 1001, 9999, 10000, 999999, 1000000, 1000001,
		99999999, 123456789, 999999999, 1000000000, 1000000001,
		99999999999ull, 999999999998ull, 999999999999ull, 1000000000000ull,
		1000000000001ull, 1234567890123ull, 99999999999999ull, 1000000000000000ull,
		1234567890123456ull,
	};
	static const uint64_t dur[] = { 1, 999, 1000, 1001, 999999, 1000000, 1000001,
					999999999, 1000000000, 999999999999ull,
					1000000000000ull };
	const size_t nr = sizeof(at) / sizeof(at[0]);
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 5000,
				 .pid = 77, .start_real_ns = 1700000000000000000ull };
	struct tg_trace *t = tg_create(trace, &cfg);
	const char *const chrome[] = { "chrome", "-o", "-", trace, NULL };
	struct tu_result r;
	char want[160];

	cr_assert(t);
	tg_site(t, 1, "w");
	tg_thread(t, 1, 700, "widths");
	for (size_t i = 0; i < nr; i++) {
		/* Ends before the next start: complete events, not B/E pairs. */
		uint64_t d = dur[i % (sizeof(dur) / sizeof(dur[0]))];

		if (i + 1 < nr && at[i] + d >= at[i + 1])
			d = at[i + 1] - at[i] - 1;
		tg_enter(t, 1, 1, 5000 + at[i]);
		tg_exit(t, 1, 1, 5000 + at[i] + d);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = run_walkers("1", chrome);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (size_t i = 0; i < nr; i++) {
		uint64_t d = dur[i % (sizeof(dur) / sizeof(dur[0]))];

		if (i + 1 < nr && at[i] + d >= at[i + 1])
			d = at[i + 1] - at[i] - 1;
		snprintf(want, sizeof(want),
			 "\n{\"ph\":\"X\",\"name\":\"w\",\"pid\":77,\"tid\":700,\"ts\":%" PRIu64
			 ".%03u,\"dur\":%" PRIu64 ".%03u}",
			 at[i] / 1000, (unsigned)(at[i] % 1000), d / 1000, (unsigned)(d % 1000));
		cr_assert(strstr(r.out, want), "no %s in %.3000s", want, r.out);
	}
	tu_result_free(&r);
	same_with_any_walkers(chrome);
}
