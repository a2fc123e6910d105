/* SPDX-License-Identifier: MIT */
/*
 * gen_hostile.c - writes the hostile traces of issue 12 (docs/ANALYZER.md,
 * "Hostile files"), one file per finding, for check_hostile.sh and for
 * fuzz/regression/. Each is a well-formed trace that says something a
 * careless reader trusts: thread ids that collide with serials, names that
 * are not UTF-8 or hold escape sequences, a time span of days for a few
 * events, threads left very deep, a module path naming a device; and those
 * of issue 26: annotations whose ticks go back, many value tracks, names
 * XML forbids or a spreadsheet runs, a wall clock near 2^63 ns.
 * Deterministic: a rerun writes the same bytes.
 *
 *     gen_hostile DIR [small|big|regression] [FIFO]
 *
 * writes DIR/<name>.zst for every case, among them 100 000 threads (a
 * second); with "big", also 150 threads each 2^20 deep (157 M events). A
 * module of module_devices.zst names FIFO when given. "regression" writes
 * only small copies of issue 26's files, as kept in fuzz/regression/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen.h"

static const struct tg_config mono = { .clock = RECFMT_CLOCK_MONOTONIC,
				       .ticks_per_second = 1000000000ull,
				       .start_ticks = 1000,
				       .pid = 4242,
				       .frame_bytes = 64 * 1024,
				       .block_events = 256 };

static struct tg_trace *create(const char *dir, const char *name, const struct tg_config *cfg)
{
	char path[4096];
	struct tg_trace *t;

	snprintf(path, sizeof(path), "%s/%s.zst", dir, name);
	t = tg_create(path, cfg ? cfg : &mono);
	if (!t) {
		fprintf(stderr, "gen_hostile: cannot create %s\n", path);
		exit(1);
	}
	return t;
}

static void finish(struct tg_trace *t, bool clean)
{
	if (tg_finish(t, clean) != 0) {
		fprintf(stderr, "gen_hostile: write failed\n");
		exit(1);
	}
}

/* One enter and exit of site 1 on thread serial, at *now. */
static void one_call(struct tg_trace *t, uint32_t serial, uint64_t *now)
{
	tg_enter(t, serial, 1, *now += 10);
	tg_exit(t, serial, 1, *now += 100);
}

/* Two threads with serials 1 and 2 and the same OS tid 2 (chrome looped). */
static void tid_serial_clash(const char *dir)
{
	struct tg_trace *t = create(dir, "tid_serial_clash", NULL);
	uint64_t now = 1000;

	tg_site(t, 1, "work");
	tg_thread(t, 1, 2, "a");
	tg_thread(t, 2, 2, "b");
	one_call(t, 1, &now);
	one_call(t, 2, &now);
	finish(t, true);
}

/* 999 threads whose OS tids are few and equal to other threads' serials. */
static void tid_reused_999(const char *dir)
{
	struct tg_trace *t = create(dir, "tid_reused_999", NULL);
	uint64_t now = 1000;

	tg_site(t, 1, "work");
	for (uint32_t s = 1; s <= 999; s++) {
		tg_thread(t, s, s == 999 ? 2 : 2 + s % 3, NULL);
		one_call(t, s, &now);
	}
	finish(t, true);
}

/* n threads, one call each; OS tids collide (tid = serial % 1000 + 1). */
static void many_threads(const char *dir, const char *name, uint32_t n)
{
	struct tg_config cfg = mono;
	struct tg_trace *t;
	uint64_t now = 1000;

	cfg.block_events = 2;
	t = create(dir, name, &cfg);
	tg_site(t, 1, "work");
	for (uint32_t s = 1; s <= n; s++) {
		tg_thread(t, s, s % 1000 + 1, NULL);
		one_call(t, s, &now);
		tg_thread_end(t, s);
	}
	finish(t, true);
}

/* Names a program can give rec_thread_name() and TRACE_SCOPE_NAMED(). */
static const char *const evil[] = {
	"bad\xff\xfe",	      /* bytes never in UTF-8 */
	"lone\x80\xbf",	      /* continuation bytes with no lead */
	"over\xc0\xaf",	      /* overlong '/' */
	"over3\xe0\x80\xaf",  /* overlong, 3 bytes */
	"surr\xed\xa0\x80",   /* a UTF-16 surrogate */
	"big\xf4\x90\x80\x80", /* above U+10FFFF */
	"cut\xe2\x82",	      /* a sequence cut short */
	"\x1b[31mred\x1b[0m", /* a terminal escape */
	"csi\302\23331m",     /* C1 CSI (\xc2\x9b), well-formed UTF-8 */
	"q\"uo\"te",
	"com,ma",
	"new\nline",
	"cr\rlf",
	"tab\tbed",
	"back\\slash",
	"del\x7f",
	"ok \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", /* valid: kept */
};
#define NR_EVIL (sizeof(evil) / sizeof(evil[0]))

static void evil_names(const char *dir)
{
	struct tg_trace *t = create(dir, "evil_names", NULL);
	static const char *const ctr_names[] = { "a,b", "q\"x", "\x1b[2Jclear" };
	static const uint32_t flags[] = { RECFMT_COUNTER_RECORDED, RECFMT_COUNTER_RECORDED,
					  RECFMT_COUNTER_RECORDED };
	uint64_t now = 1000, vals[3] = { 1, 2, 3 };

	for (uint32_t i = 0; i < NR_EVIL; i++)
		tg_site(t, i + 1, evil[i]);
	for (uint32_t s = 1; s <= NR_EVIL; s++)
		tg_thread(t, s, 100 + s, evil[s - 1]);
	tg_counter_set(t, 1, 3, ctr_names, flags);
	for (uint32_t s = 1; s <= NR_EVIL; s++)
		for (uint32_t i = 0; i < NR_EVIL; i++) {
			if (s == 1) {
				tg_enter_ctr(t, s, i + 1, now += 10, vals);
				vals[0] += 7;
				tg_exit_ctr(t, s, i + 1, now += 50 + i, vals);
			} else {
				tg_enter(t, s, i + 1, now += 10);
				tg_exit(t, s, i + 1, now += 50 + i);
			}
		}
	finish(t, true);
}

/* Annotations with every evil name (tracks, keys, flows, instants) and
 * message text, non-finite and extreme values, arguments and flow events
 * outside any scope, ends with no begin, ids never defined, and 20000 flows
 * left unfinished. */
static void evil_annotations(const char *dir)
{
	struct tg_trace *t = create(dir, "evil_annotations", NULL);
	static const uint32_t kinds[] = { RECFMT_NAME_TRACK, RECFMT_NAME_KEY, RECFMT_NAME_FLOW,
					  RECFMT_NAME_INSTANT };
	uint64_t now = 1000;

	tg_site(t, 1, "work");
	tg_thread(t, 1, 101, "main");
	for (uint32_t i = 0; i < NR_EVIL; i++)
		for (uint32_t k = 0; k < 4; k++)
			tg_annot_name(t, 1 + i * 4 + k, kinds[k], evil[i]);
	for (uint32_t i = 0; i < NR_EVIL; i++) {
		const uint32_t base = 1 + i * 4;
		const double dv[] = { 0.0 / 0.0, 1.0 / 0.0, -1.0 / 0.0, 1e308, -0.0 };
		struct recfmt_annot a[] = {
			{ .kind = RECFMT_ANNOT_VALUE_I64, .name_id = base, .i64 = INT64_MIN },
			{ .kind = RECFMT_ANNOT_VALUE_I64, .name_id = base, .i64 = INT64_MAX },
			{ .kind = RECFMT_ANNOT_VALUE_F64, .name_id = base, .f64 = dv[i % 5] },
			{ .kind = RECFMT_ANNOT_ARG, .name_id = base + 1, .i64 = INT64_MAX },
			{ .kind = RECFMT_ANNOT_ARG, .name_id = base + 1, .i64 = INT64_MIN },
			{ .kind = RECFMT_ANNOT_FLOW_BEGIN, .name_id = base + 2, .id = UINT64_MAX },
			{ .kind = RECFMT_ANNOT_FLOW_END, .name_id = base + 2, .id = UINT64_MAX },
			{ .kind = RECFMT_ANNOT_FLOW_END, .name_id = base + 2, .id = 5 },
			{ .kind = RECFMT_ANNOT_INSTANT, .name_id = base + 3 },
			{ .kind = RECFMT_ANNOT_MESSAGE, .text = evil[i],
			  .text_bytes = (uint32_t)strlen(evil[i]) },
			{ .kind = RECFMT_ANNOT_VALUE_I64, .name_id = 0x0fffffff, .i64 = 1 },
		};

		tg_enter(t, 1, 1, now += 10);
		for (size_t k = 0; k < sizeof(a) / sizeof(a[0]); k++) {
			a[k].ticks = now += 3;
			tg_annot(t, 1, &a[k]);
		}
		tg_exit(t, 1, 1, now += 10);
		/* The same outside any scope. */
		for (size_t k = 0; k < sizeof(a) / sizeof(a[0]); k++) {
			a[k].ticks = now += 3;
			tg_annot(t, 1, &a[k]);
		}
	}
	for (uint64_t id = 0; id < 20000; id++) {
		struct recfmt_annot b = { .kind = RECFMT_ANNOT_FLOW_BEGIN, .name_id = 3,
					  .id = id * 0x9e3779b97f4a7c15ull, .ticks = now += 1 };

		if (id % 1000 == 0)
			tg_enter(t, 1, 1, now += 1);
		tg_annot(t, 1, &b);
		if (id % 1000 == 999)
			tg_exit(t, 1, 1, now += 1);
	}
	finish(t, true);
}

/*
 * Issue 26: annotations whose ticks go back between (and within) ANNOTS
 * records — flow begins, steps and ends, and value samples, each earlier
 * than the one before, on two threads — the reorder queue's stragglers.
 */
static void annots_ticks_backwards(const char *dir, const char *name, uint32_t n)
{
	struct tg_trace *t = create(dir, name, NULL);
	const uint64_t top = 1000000;

	tg_site(t, 1, "work");
	tg_annot_name(t, 1, RECFMT_NAME_FLOW, "back");
	tg_annot_name(t, 2, RECFMT_NAME_TRACK, "back");
	for (uint32_t s = 1; s <= 2; s++) {
		tg_thread(t, s, 100 + s, NULL);
		tg_enter(t, s, 1, 2000);
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t s = 1 + i % 2;
		struct recfmt_annot f = { .kind = RECFMT_ANNOT_FLOW_BEGIN + i % 3, .name_id = 1,
					  .id = i / 3, .ticks = top - i };
		struct recfmt_annot v = { .kind = RECFMT_ANNOT_VALUE_I64, .name_id = 2,
					  .i64 = (int64_t)i - n / 2, .ticks = top - 2 * i };

		tg_annot(t, s, &f);
		tg_annot(t, s, &v);
		if (i % 500 == 499)
			tg_flush(t);
	}
	for (uint32_t s = 1; s <= 2; s++)
		tg_exit(t, s, 1, top + 10);
	finish(t, true);
}

/*
 * Issue 26: many value tracks (perfetto scanned them per sample), names XML
 * 1.0 forbids (U+FFFE, U+FFFF), blank names, names a spreadsheet runs as
 * formulas, and a wall-clock start near 2^63 ns with a snapshot trigger
 * and samples 5·10^18 ns after it (signed overflow of start + time).
 */
static void names_and_wall_clock(const char *dir, const char *file, uint32_t nr_tracks)
{
	struct tg_config cfg = mono;
	struct tg_trace *t;
	static const char *const names[] = {
		"nonchar\xef\xbf\xbe", "nonchar\xef\xbf\xbf", "", "   ", "=1+1", "+cmd", "-2",
		"@SUM(A1)", "\tx",
	};
	struct recfmt_snapshot snap = { .trigger_ticks = 1000 + 5000000000000000000ull,
					.window_start_ticks = 1000,
					.window_end_ticks = 1000 + 5000000000000000000ull,
					.number = 1, .kind = RECFMT_SNAPSHOT_API,
					.reason = "\xef\xbf\xbf", .reason_bytes = 3 };
	uint64_t now = 2000;
	char name[32];

	cfg.start_real_ns = (uint64_t)INT64_MAX - 1000;
	t = create(dir, file, &cfg);
	tg_snapshot(t, &snap);
	for (uint32_t k = 0; k < 9; k++) {
		tg_site(t, k + 1, names[k]);
		tg_annot_name(t, k + 1, RECFMT_NAME_TRACK, names[k]);
		tg_annot_name(t, 100 + k, RECFMT_NAME_FLOW, names[k]);
	}
	for (uint32_t k = 0; k < nr_tracks; k++) {
		snprintf(name, sizeof(name), "track %u", k);
		tg_annot_name(t, 1000 + k, RECFMT_NAME_TRACK, name);
	}
	tg_thread(t, 1, 101, "=thread\xef\xbf\xbe");
	for (uint32_t k = 0; k < 9; k++) {
		struct recfmt_annot a[] = {
			{ .kind = RECFMT_ANNOT_VALUE_I64, .name_id = k + 1, .i64 = -5 },
			{ .kind = RECFMT_ANNOT_FLOW_BEGIN, .name_id = 100 + k, .id = k },
			{ .kind = RECFMT_ANNOT_FLOW_END, .name_id = 100 + k, .id = k },
			{ .kind = RECFMT_ANNOT_MESSAGE, .text = names[k],
			  .text_bytes = (uint32_t)strlen(names[k]) },
		};

		tg_enter(t, 1, k + 1, now += 10);
		for (size_t j = 0; j < 4; j++) {
			a[j].ticks = now += 3;
			tg_annot(t, 1, &a[j]);
		}
		tg_exit(t, 1, k + 1, now += 100);
	}
	for (uint32_t k = 0; k < 3 * nr_tracks; k++) {
		struct recfmt_annot v = { .kind = RECFMT_ANNOT_VALUE_I64,
					  .name_id = 1000 + (k * 7919) % nr_tracks, .i64 = k,
					  .ticks = now += 1 };

		tg_annot(t, 1, &v);
		if (k % 1000 == 999)
			tg_flush(t);
	}
	{
		struct recfmt_annot v = { .kind = RECFMT_ANNOT_VALUE_I64, .name_id = 1, .i64 = 7,
					  .ticks = 1000 + 5000000000000000000ull };

		tg_enter(t, 1, 5, 1000 + 5000000000000000000ull - 1);
		tg_annot(t, 1, &v);
		tg_exit(t, 1, 5, 1000 + 5000000000000000000ull + 1);
	}
	finish(t, true);
}

/* A module named by a trace: a device, and a terminal escape. */
static void module_devices(const char *dir, const char *fifo)
{
	struct tg_trace *t = create(dir, "module_devices", NULL);
	uint64_t now = 1000;

	tg_module(t, 1, "/dev/zero", 0, 0x1000, 0x2000);
	tg_module(t, 2, "/dev/urandom", 0, 0x3000, 0x4000);
	tg_module(t, 3, "\x1b[31m/nonexistent\xff", 0, 0x5000, 0x6000);
	if (fifo)
		tg_module(t, 4, fifo, 0, 0x7000, 0x8000);
	tg_func(t, 1, 0x1100);
	tg_func(t, 2, 0x3100);
	tg_func(t, 3, 0x5100);
	tg_func(t, 4, 0x7100);
	tg_thread(t, 1, 7, "main");
	for (uint32_t f = 1; f <= 4; f++) {
		tg_enter(t, 1, f, now += 10);
		tg_exit(t, 1, f, now += 100);
	}
	finish(t, true);
}

/* Four events over a day: --interval=1ms must not make 86 M rows. */
static void huge_span(const char *dir)
{
	struct tg_trace *t = create(dir, "interval_huge_span", NULL);

	tg_site(t, 1, "work");
	tg_thread(t, 1, 7, "main");
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 3000);
	tg_enter(t, 1, 1, 86400ull * 1000000000ull);
	tg_exit(t, 1, 1, 86400ull * 1000000000ull + 500);
	finish(t, true);
}

/* One activation over a day: at 1ms, 86 M intervals for one event pair. */
static void long_activation(const char *dir)
{
	struct tg_trace *t = create(dir, "interval_long_activation", NULL);

	tg_site(t, 1, "main");
	tg_thread(t, 1, 7, "main");
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 86400ull * 1000000000ull);
	finish(t, true);
}

/* nr threads each left depth deep (enters with no exit). */
static void deep(const char *dir, const char *name, uint32_t nr, uint32_t depth)
{
	struct tg_config cfg = mono;
	struct tg_trace *t;
	uint64_t now = 1000;

	cfg.block_events = 4096;
	cfg.frame_bytes = 1 << 20;
	t = create(dir, name, &cfg);
	tg_site(t, 1, "down");
	for (uint32_t s = 1; s <= nr; s++) {
		tg_thread(t, s, 10 + s, NULL);
		for (uint32_t d = 0; d < depth; d++)
			tg_enter(t, s, 1, now += 1);
	}
	finish(t, false);
}

/* nr threads each depth deep, then back out: past tt_depth_limit() for
 * the later threads, so the deepest enters are errors and their exits
 * consumed, alike for any number of walkers. */
static void deep_closed(const char *dir, const char *name, uint32_t nr, uint32_t depth)
{
	struct tg_config cfg = mono;
	struct tg_trace *t;
	uint64_t now = 1000;

	cfg.block_events = 4096;
	cfg.frame_bytes = 1 << 20;
	t = create(dir, name, &cfg);
	tg_site(t, 1, "down");
	tg_site(t, 2, "up");
	for (uint32_t s = 1; s <= nr; s++) {
		tg_thread(t, s, 10 + s, NULL);
		for (uint32_t d = 0; d < depth; d++)
			tg_enter(t, s, 1 + (d & 1), now += 1);
		for (uint32_t d = depth; d-- > 0;)
			tg_exit(t, s, 1 + (d & 1), now += 1);
	}
	finish(t, true);
}

int main(int argc, char **argv)
{
	const char *dir;
	bool big;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: gen_hostile DIR [small|big|regression] [FIFO]\n");
		return 2;
	}
	dir = argv[1];
	big = argc > 2 && strcmp(argv[2], "big") == 0;
	if (argc > 2 && strcmp(argv[2], "regression") == 0) {
		/* The small copies of issue 26's files in fuzz/regression/. */
		annots_ticks_backwards(dir, "annots_ticks_go_back_between_records", 300);
		names_and_wall_clock(dir, "names_fffe_blank_formula_wall_clock_overflow", 20);
		return 0;
	}
	tid_serial_clash(dir);
	tid_reused_999(dir);
	many_threads(dir, "threads_2000", 2000);
	evil_names(dir);
	evil_annotations(dir);
	module_devices(dir, argc > 3 ? argv[3] : NULL);
	annots_ticks_backwards(dir, "annots_ticks_backwards", 3000);
	names_and_wall_clock(dir, "names_and_wall_clock", 2000);
	huge_span(dir);
	long_activation(dir);
	deep(dir, "deep_6x2e19", 6, 1u << 19);
	deep_closed(dir, "deep_40_closed", 40, (1u << 16) + 100);
	many_threads(dir, "threads_100k", 100000);
	if (big)
		deep(dir, "deep_150x2e20", 150, 1u << 20);
	return 0;
}
