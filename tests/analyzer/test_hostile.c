/* SPDX-License-Identifier: MIT */
/*
 * test_hostile.c - tracetool on crafted files, one test per finding of
 * issue 26 item 10 (docs/ANALYZER.md, "Hostile files"): the work of values,
 * flows and perfetto on files made to be quadratic, XML 1.0 in the SVG flame
 * graph for any name, a placeholder for blank names, no signed overflow of
 * wall-clock times, the same file given twice refused, and CSV text cells a
 * spreadsheet would run as formulas.
 *
 * The complexity tests use sizes at which the old work (an insertion into
 * a reorder FIFO, a scan of the value tracks) takes minutes: ~3.5 minutes
 * for flows of 10^6 annotations whose ticks go back, 10^11+ string
 * comparisons for perfetto's 10^6 tracks; linear work takes about a second
 * (a few under the sanitizers), the tests' limit is 100 s. The reorder
 * queue's work is also counted exactly, machine speed aside, by
 * test_reorder.c.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ttest.h"

static struct tg_trace *trace_at(const char *path, uint32_t pid, uint64_t start_real_ns)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = pid, .start_real_ns = start_real_ns };
	struct tg_trace *t = tg_create(path, &cfg);

	cr_assert(t);
	return t;
}

static void annot(struct tg_trace *t, uint32_t kind, uint32_t name, uint64_t ticks, int64_t i,
		  uint64_t id)
{
	struct recfmt_annot a = { .kind = kind, .name_id = name, .ticks = ticks, .i64 = i,
				  .id = id };

	cr_assert_eq(tg_annot(t, 1, &a), 0);
}

/*
 * n annotations of one thread inside one scope, each earlier than the one
 * before (a clock that steps back between ANNOTS records, or a crafted
 * file): flows begun (flows) or samples of one track (values).
 */
static void write_backwards(const char *path, bool flows, uint32_t n)
{
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);
	const uint64_t top = 1000 + 4ull * n;

	tg_site(t, 1, "work");
	tg_thread(t, 1, 100, "main");
	tg_annot_name(t, 1, flows ? RECFMT_NAME_FLOW : RECFMT_NAME_TRACK, "r");
	tg_enter(t, 1, 1, 1500);
	for (uint32_t i = 0; i < n; i++) {
		annot(t, flows ? RECFMT_ANNOT_FLOW_BEGIN : RECFMT_ANNOT_VALUE_I64, 1, top - i, i, i);
		if (i % 1000 == 999)
			cr_assert_eq(tg_flush(t), 0); /* a record boundary */
	}
	tg_exit(t, 1, 1, top + 10);
	cr_assert_eq(tg_finish(t, true), 0);
}

#define BACKWARDS 1000000u

Test(hostile, flows_quadratic_when_ticks_go_back_between_annots, .timeout = 100)
{
	const char *path = tu_path(0, "hostile_flows_back.zst");

	write_backwards(path, true, BACKWARDS);
	struct tu_result r = tu_run("flows", "--format=csv", path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	/* Every flow begun, none ended: all unfinished. */
	cr_assert(strstr(r.out, "\nr,0,0,0,0,0,0,0,1000000\n"), "%s", r.out);
	cr_assert(strstr(r.err, "warning:"), "the late ones are said: %s", r.err);
	tu_result_free(&r);
	unlink(path);
}

Test(hostile, values_quadratic_when_ticks_go_back_between_annots, .timeout = 100)
{
	const char *path = tu_path(0, "hostile_values_back.zst");

	write_backwards(path, false, BACKWARDS);
	struct tu_result r = tu_run("values", "--format=csv", path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	/* 10^6 samples, 0 ... 999999. */
	cr_assert(strstr(r.out, "\nr,1000000,0,999999,"), "%s", r.out);
	tu_result_free(&r);
	unlink(path);
}

/*
 * Flow ids chosen so that the old fixed hash of the open flows put them all
 * in one slot: h = id × 0x9e3779b97f4a7c15 (flow index 0), slot = (h ^
 * h >> 29) & mask, is 0 for every mask below 2^21 when h = u << 29 | (u &
 * (2^21 − 1)). 4·10^5 begins: ~8·10^10 probes (minutes) before; the seeded
 * hash spreads them.
 */
Test(hostile, flows_open_flow_ids_colliding_in_one_slot, .timeout = 100)
{
	const char *path = tu_path(0, "hostile_flow_ids.zst");
	const uint64_t c = 0x9e3779b97f4a7c15ull;
	const uint32_t n = 400000;
	uint64_t inv = c;
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);

	for (int k = 0; k < 6; k++)
		inv *= 2 - c * inv; /* Newton: c × inv = 1 mod 2^64 */
	cr_assert_eq(c * inv, 1);
	tg_site(t, 1, "work");
	tg_thread(t, 1, 100, "main");
	tg_annot_name(t, 1, RECFMT_NAME_FLOW, "r");
	tg_enter(t, 1, 1, 1500);
	for (uint64_t u = 1; u <= n; u++) {
		uint64_t h = u << 29 | (u & ((1u << 21) - 1));

		annot(t, RECFMT_ANNOT_FLOW_BEGIN, 1, 2000 + u, 0, h * inv);
		if (u % 4096 == 0)
			cr_assert_eq(tg_flush(t), 0);
	}
	tg_exit(t, 1, 1, 2000 + n + 10);
	cr_assert_eq(tg_finish(t, true), 0);
	struct tu_result r = tu_run("flows", "--format=csv", path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "\nr,0,0,0,0,0,0,0,400000\n"), "%s", r.out);
	tu_result_free(&r);
	unlink(path);
}

/* FNV-1a 32 of the 8 bytes b from state h. */
static uint32_t fnv8(uint32_t h, const char *b)
{
	for (int i = 0; i < 8; i++)
		h = (h ^ (uint8_t)b[i]) * 16777619u;
	return h;
}

/*
 * 2^NR_PAIRS names that all have one 32-bit FNV-1a hash from the usual
 * basis (2166136261): step p has two 8-letter blocks that take the state
 * reached so far to the same next state, so any choice of one block per
 * step collides. The pairs were found by a birthday search over 8-letter
 * blocks (~10^7 tries each: seconds, done once); fnv_multicollision()
 * checks them.
 */
#define NR_PAIRS 17
#define NAME_BYTES (8 * NR_PAIRS + 1)
static const char pairs[NR_PAIRS][2][9] = {
	{ "OzJpOaAa", "XjAaAbAa" },
	{ "QgGpCaAa", "FyBaAbAa" },
	{ "YdDxFaAa", "CaErHaAa" },
	{ "TxCxRaAa", "VlDaAbAa" },
	{ "KdDxFaAa", "QaErHaAa" },
	{ "TxCxRaAa", "VlDaAbAa" },
	{ "KdDxFaAa", "QaErHaAa" },
	{ "TxCxRaAa", "VlDaAbAa" },
	{ "KdDxFaAa", "QaErHaAa" },
	{ "TxCxRaAa", "VlDaAbAa" },
	{ "KdDxFaAa", "QaErHaAa" },
	{ "TxCxRaAa", "VlDaAbAa" },
	{ "KdDxFaAa", "QaErHaAa" },
	{ "TxCxRaAa", "VlDaAbAa" },
	{ "KdDxFaAa", "QaErHaAa" },
	{ "TxCxRaAa", "VlDaAbAa" },
	{ "KdDxFaAa", "QaErHaAa" },
};

static void fnv_multicollision(char (*names)[NAME_BYTES])
{
	uint32_t st = 2166136261u;

	for (int p = 0; p < NR_PAIRS; p++) {
		cr_assert_eq(fnv8(st, pairs[p][0]), fnv8(st, pairs[p][1]), "pair %d", p);
		cr_assert_neq(memcmp(pairs[p][0], pairs[p][1], 8), 0);
		st = fnv8(st, pairs[p][0]);
	}
	for (uint32_t n = 0; n < 1u << NR_PAIRS; n++) {
		for (int p = 0; p < NR_PAIRS; p++)
			memcpy(names[n] + 8 * p, pairs[p][n >> p & 1], 8);
		names[n][8 * NR_PAIRS] = '\0';
	}
}

/*
 * 2^17 scope names and value tracks with one FNV-1a hash (from its usual
 * basis): the name tables probed through all of them for each new one
 * (~10^10 string comparisons per table, minutes); the seeded basis
 * (hmap.h) spreads them: 3-9 s on a quiet 2-core machine, so the timeout
 * leaves room for a loaded one (100 s was passed at load 20).
 */
Test(hostile, names_crafted_to_share_one_hash, .timeout = 240)
{
	const char *path = tu_path(0, "hostile_names_hash.zst");
	char (*names)[NAME_BYTES] = calloc(1u << NR_PAIRS, sizeof(*names));
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);
	uint64_t now = 2000;

	cr_assert(names);
	fnv_multicollision(names);
	cr_assert_neq(strcmp(names[0], names[1]), 0);
	tg_thread(t, 1, 100, "main");
	for (uint32_t k = 0; k < 1u << NR_PAIRS; k++) {
		cr_assert_eq(tg_site(t, k + 1, names[k]), 0);
		cr_assert_eq(tg_annot_name(t, k + 1, RECFMT_NAME_TRACK, names[k]), 0);
	}
	for (uint32_t k = 0; k < 1u << NR_PAIRS; k++) {
		tg_enter(t, 1, k + 1, now += 10);
		annot(t, RECFMT_ANNOT_VALUE_I64, k + 1, now += 1, k, 0);
		tg_exit(t, 1, k + 1, now += 10);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	struct tu_result r = tu_run("summary", "--format=csv", path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert_eq(tu_nr_lines(r.out), (1u << NR_PAIRS) + 1);
	tu_result_free(&r);
	r = tu_run("values", "--format=csv", path, NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert_eq(tu_nr_lines(r.out), (1u << NR_PAIRS) + 1);
	tu_result_free(&r);
	free(names);
	unlink(path);
}

/* perfetto: 10^6 value tracks of one sample each, then 10^6 more samples
 * spread over them. */
Test(hostile, perfetto_samples_times_value_tracks, .timeout = 100)
{
	const char *path = tu_path(0, "hostile_tracks.zst");
	const char *out = tu_path(1, "hostile_tracks.pftrace");
	const uint32_t n = 1000000;
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);
	char name[32];
	struct stat st;

	tg_site(t, 1, "work");
	tg_thread(t, 1, 100, "main");
	for (uint32_t k = 1; k <= n; k++) {
		snprintf(name, sizeof(name), "track %u", k);
		cr_assert_eq(tg_annot_name(t, k, RECFMT_NAME_TRACK, name), 0);
	}
	tg_enter(t, 1, 1, 1500);
	for (uint32_t s = 0; s < 2 * n; s++) {
		annot(t, RECFMT_ANNOT_VALUE_I64, 1 + (uint32_t)((s * 7919ull) % n), 2000 + s, s, 0);
		if (s % 4096 == 4095)
			cr_assert_eq(tg_flush(t), 0);
	}
	tg_exit(t, 1, 1, 2000 + 2 * n);
	cr_assert_eq(tg_finish(t, true), 0);
	struct tu_result r = tu_run("perfetto", "-o", out, path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert_eq(stat(out, &st), 0);
	cr_assert_gt(st.st_size, (off_t)n * 10, "%lld bytes", (long long)st.st_size);
	tu_result_free(&r);
	unlink(path);
	unlink(out);
}

/*
 * One activation with 5·10^5 distinct argument keys, each set twice: chrome
 * and export looked each key up by scanning the activation's keys
 * (quadratic: minutes); an index past 16 keys makes it linear. Each key
 * once, with its last value.
 */
Test(hostile, chrome_export_args_quadratic_in_an_activations_keys, .timeout = 100)
{
	const char *path = tu_path(0, "hostile_args.zst"), *json = tu_path(1, "hostile_args.json");
	const char *dir = tu_path(2, "hostile_args_csv");
	const uint32_t n = 500000;
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);
	char name[32], cmd[600];

	tg_site(t, 1, "work");
	tg_thread(t, 1, 100, "main");
	for (uint32_t k = 1; k <= n; k++) {
		snprintf(name, sizeof(name), "key%u", k);
		cr_assert_eq(tg_annot_name(t, k, RECFMT_NAME_KEY, name), 0);
	}
	tg_enter(t, 1, 1, 1500);
	for (uint32_t s = 0; s < 2 * n; s++) {
		annot(t, RECFMT_ANNOT_ARG, 1 + s % n, 2000 + s, s, 0);
		if (s % 4096 == 4095)
			cr_assert_eq(tg_flush(t), 0);
	}
	tg_exit(t, 1, 1, 2000 + 2 * n);
	cr_assert_eq(tg_finish(t, true), 0);
	struct tu_result r = tu_run("chrome", "-o", json, path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	tu_result_free(&r);
	/* key1 was set to 0, then to n: the later value. */
	snprintf(cmd, sizeof(cmd), "grep -c '\"key1\":%u[,}]' '%s' | grep -qx 1 && "
		 "test $(grep -o '\"key[0-9]*\":' '%s' | wc -l) -eq %u", n, json, json, n);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert(tu_rm_rf(dir), "%s", dir);
	r = tu_run("export", "--format=csv", "-o", dir, path, NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	tu_result_free(&r);
	snprintf(cmd, sizeof(cmd), "test $(wc -l < '%s/args.csv') -eq %u && grep -q ',key1,%u$' "
		 "'%s/args.csv'", dir, n + 1, n, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert(tu_rm_rf(dir), "%s", dir);
	unlink(path);
	unlink(json);
}

/* The next code point of s (well-formed UTF-8 assumed checked), or -1. */
static long next_cp(const unsigned char **p, const unsigned char *e)
{
	const unsigned char *s = *p;
	long cp;
	int n;

	if (s[0] < 0x80)
		n = 1, cp = s[0];
	else if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return -1;
	if (e - s < n)
		return -1;
	for (int k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	*p = s + n;
	return cp;
}

/* XML 1.0's Char production, over the whole text. */
static bool xml_chars(const char *text, size_t len, long *bad)
{
	const unsigned char *p = (const unsigned char *)text, *e = p + len;

	while (p < e) {
		long c = next_cp(&p, e);

		if (!(c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
		      (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff))) {
			*bad = c;
			return false;
		}
	}
	return true;
}

Test(hostile, flame_svg_non_xml_for_names_with_fffe_ffff)
{
	const char *path = tu_path(0, "hostile_xml.zst");
	static const char *const names[] = {
		"nonchar\xef\xbf\xbe", /* U+FFFE */
		"nonchar\xef\xbf\xbf", /* U+FFFF */
		"surr\xed\xa0\x80",    /* a surrogate: ill-formed */
		"ctl\x01\x1f",	       /* C0 controls */
		"c1\xc2\x85",	       /* NEL, a C1 control */
		"ok\xef\xbf\xbd\xf0\x9f\x94\xa5", /* U+FFFD and U+1F525: kept */
	};
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);
	uint64_t now = 2000;

	tg_thread(t, 1, 100, "main\xef\xbf\xbf");
	for (uint32_t k = 0; k < 6; k++) {
		tg_site(t, k + 1, names[k]);
		tg_enter(t, 1, k + 1, now += 10);
		tg_exit(t, 1, k + 1, now += 100);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	struct tu_result r = tu_run("flame", "--format=svg", "--by-thread", path, NULL);
	long bad = 0;

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(xml_chars(r.out, r.out_len, &bad), "U+%04lX in the SVG", bad);
	cr_assert(strstr(r.out, "nonchar\xef\xbf\xbd"), "U+FFFE/U+FFFF become U+FFFD");
	cr_assert_null(strstr(r.out, "nonchar\xef\xbf\xbd\xef\xbf\xbd"),
		       "one U+FFFD per code point");
	cr_assert(strstr(r.out, "ok\xef\xbf\xbd\xf0\x9f\x94\xa5"), "valid text is kept");
	tu_result_free(&r);
	unlink(path);
}

Test(hostile, flame_blank_name_gives_folded_line_without_frame)
{
	const char *path = tu_path(0, "hostile_blank.zst");
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);

	tg_site(t, 1, "");
	tg_site(t, 2, "   ");
	tg_site(t, 3, "inner");
	tg_thread(t, 1, 100, "main");
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 2030);
	tg_enter(t, 1, 2, 3000);
	tg_enter(t, 1, 3, 3010);
	tg_exit(t, 1, 3, 3020);
	tg_exit(t, 1, 2, 3050);
	cr_assert_eq(tg_finish(t, true), 0);

	/* Both blank names are one placeholder frame: 30 + 40 self ns. */
	struct tu_result r = tu_run("flame", path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert_str_eq(r.out, "[empty] 70\n[empty];inner 10\n");
	tu_result_free(&r);
	r = tu_run("summary", "--format=csv", path, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "\n[empty],2,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("tree", "--format=json", path, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "\"path\":\"[empty];inner\""), "%s", r.out);
	cr_assert(strstr(r.out, "\"function\":\"[empty]\""), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("flame", "--format=svg", path, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "[empty]"));
	tu_result_free(&r);
	unlink(path);
}

/*
 * A flight snapshot whose wall-clock start is near 2^63 ns and whose trigger
 * is far after it: trigger_unix_ns overflowed (UBSan, cmd_info.c) and came
 * out negative. It is held at INT64_MAX.
 */
Test(hostile, info_snapshot_unix_time_signed_overflow)
{
	const char *path = tu_path(0, "hostile_snapshot.zst");
	struct tg_trace *t = trace_at(path, 4242, (uint64_t)INT64_MAX - 1000);
	struct recfmt_snapshot s = { .trigger_ticks = 1000 + 5000000000000000000ull,
				     .window_start_ticks = 1000,
				     .window_end_ticks = 1000 + 5000000000000000000ull,
				     .number = 1, .kind = RECFMT_SNAPSHOT_API,
				     .reason = "x", .reason_bytes = 1 };

	tg_site(t, 1, "work");
	tg_thread(t, 1, 100, "main");
	cr_assert_eq(tg_snapshot(t, &s), 0);
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 3000);
	cr_assert_eq(tg_finish(t, true), 0);
	struct tu_result r = tu_run("info", "--format=json", path, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "\"trigger_ns\":5000000000000000000,"), "%s", r.out);
	cr_assert(strstr(r.out, "\"trigger_unix_ns\":9223372036854775807,"), "%s", r.out);
	tu_result_free(&r);
	unlink(path);
}

/*
 * values of two files: the row's last value is the sample latest on the
 * wall clock. File a starts near 2^63 ns and its sample lies 5·10^18 ns
 * later: the sum overflowed (UBSan, annots.c) into a negative time, so b's
 * sample was taken for the last. It is held at INT64_MAX: a's is last.
 */
Test(hostile, values_last_wall_clock_signed_overflow)
{
	const char *a = tu_path(0, "hostile_wall_a.zst"), *b = tu_path(1, "hostile_wall_b.zst");
	struct tg_trace *t = trace_at(a, 1, (uint64_t)INT64_MAX - 1000);

	tg_thread(t, 1, 100, "main");
	tg_annot_name(t, 1, RECFMT_NAME_TRACK, "v");
	annot(t, RECFMT_ANNOT_VALUE_I64, 1, 1000 + 5000000000000000000ull, 111, 0);
	cr_assert_eq(tg_finish(t, true), 0);
	t = trace_at(b, 2, 1700000000000000000ull);
	tg_thread(t, 1, 100, "main");
	tg_annot_name(t, 1, RECFMT_NAME_TRACK, "v");
	annot(t, RECFMT_ANNOT_VALUE_I64, 1, 2000, 222, 0);
	cr_assert_eq(tg_finish(t, true), 0);
	struct tu_result r = tu_run("values", "--format=csv", a, b, NULL);

	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	/* track,samples,min,max,mean,last */
	cr_assert(strstr(r.out, "\nv,2,111,222,"), "%s", r.out);
	cr_assert(strstr(r.out, ",111\n"), "a's sample is the last: %s", r.out);
	tu_result_free(&r);
	unlink(a);
	unlink(b);
}

static void write_small(const char *path)
{
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);

	tg_site(t, 1, "work");
	tg_thread(t, 1, 100, "main");
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 3000);
	cr_assert_eq(tg_finish(t, true), 0);
}

/* Exit 2 and one line naming both paths. */
static void assert_refused(struct tu_result *r, const char *again, const char *first)
{
	char want[1024];

	snprintf(want, sizeof(want), "tracetool: %s: the same file as %s: a recording given twice "
		 "would count twice\n", again, first);
	cr_assert_eq(r->status, 2, "exit %d: %s", r->status, r->err);
	cr_assert_str_eq(r->err, want);
	cr_assert_str_eq(r->out, "");
	tu_result_free(r);
}

Test(hostile, summary_same_file_twice_doubles_every_count)
{
	const char *a = tu_path(0, "hostile_twice.zst"), *link = tu_path(1, "hostile_twice_ln.zst");
	const char *other = tu_path(2, "hostile_other.zst"), *out = tu_path(3, "hostile_twice.out");
	static const char *const cmds[] = { "summary", "histogram", "tree", "flame", "chrome",
					    "values", "flows", "info", "check" };
	struct tu_result r;

	write_small(a);
	write_small(other);
	unlink(link);
	cr_assert_eq(symlink(a, link), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		r = tu_run(cmds[i], a, a, NULL);
		assert_refused(&r, a, a);
		/* Another path to it: a symbolic link, after another file. */
		r = tu_run(cmds[i], a, other, link, NULL);
		assert_refused(&r, link, a);
	}
	r = tu_run("perfetto", "-o", out, link, a, NULL);
	assert_refused(&r, a, link);
	r = tu_run("export", "--format=csv", "-o", out, a, a, NULL);
	assert_refused(&r, a, a);
	/* Two files: counted once each. */
	r = tu_run("summary", "--format=csv", a, other, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nwork,2,"), "%s", r.out);
	tu_result_free(&r);
	/* diff compares a file with itself. */
	r = tu_run("diff", a, a, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	unlink(a);
	unlink(link);
	unlink(other);
}

/* A copy of a file (another inode, the same recording: its FILE_HEADER's
 * pid and start): summed, but said in one warning. */
Test(hostile, summary_copy_of_a_recording_is_stated)
{
	const char *a = tu_path(0, "hostile_rec.zst"), *copy = tu_path(1, "hostile_rec_copy.zst");
	const char *other = tu_path(2, "hostile_rec_other.zst");
	char cmd[600], want[1024];
	struct tg_trace *t = trace_at(other, 4243, 1700000000000000000ull);

	tg_site(t, 1, "work");
	tg_thread(t, 1, 100, "main");
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 3000);
	cr_assert_eq(tg_finish(t, true), 0);
	write_small(a);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", a, copy);
	cr_assert_eq(system(cmd), 0);
	struct tu_result r = tu_run("summary", "--format=csv", other, a, copy, NULL);

	snprintf(want, sizeof(want), "tracetool: %s: warning: the same recording as %s (pid 4242, "
		 "the same start ticks and wall-clock time): a copy's events count twice\n", copy, a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.err, want);
	cr_assert(strstr(r.out, "\nwork,3,"), "%s", r.out);
	tu_result_free(&r);
	/* Other pids: no warning. */
	r = tu_run("summary", "--format=csv", other, a, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
	unlink(a);
	unlink(copy);
	unlink(other);
}

/*
 * Names a spreadsheet runs as formulas (=, +, -, @, tab, CR first): every
 * CSV writer puts a ' before such a text cell; numbers, negative ones
 * included, stay numbers.
 */
Test(hostile, csv_cells_not_neutralised_for_spreadsheets)
{
	const char *path = tu_path(0, "hostile_formula.zst");
	const char *dir = tu_path(1, "hostile_formula_csv");
	struct tg_trace *t = trace_at(path, 4242, 1700000000000000000ull);
	char cmd[600];

	tg_site(t, 1, "=HYPERLINK(\"http://x\",\"y\")");
	tg_site(t, 2, "+1+2");
	tg_site(t, 3, "-2-3");
	tg_site(t, 4, "@SUM(A1)");
	tg_site(t, 5, "a=b");
	tg_thread(t, 1, 100, "=thread");
	tg_annot_name(t, 1, RECFMT_NAME_TRACK, "-track");
	tg_annot_name(t, 2, RECFMT_NAME_FLOW, "@flow");
	tg_enter(t, 1, 1, 2000);
	annot(t, RECFMT_ANNOT_VALUE_I64, 1, 2010, -5, 0);
	annot(t, RECFMT_ANNOT_FLOW_BEGIN, 2, 2020, 0, 1);
	annot(t, RECFMT_ANNOT_FLOW_END, 2, 2030, 0, 1);
	{
		struct recfmt_annot m = { .kind = RECFMT_ANNOT_MESSAGE, .ticks = 2040,
					  .text = "=cmd|' /C calc'!A0", .text_bytes = 18 };

		cr_assert_eq(tg_annot(t, 1, &m), 0);
	}
	tg_exit(t, 1, 1, 3000);
	for (uint32_t k = 2; k <= 5; k++) {
		tg_enter(t, 1, k, 3000 + k * 100);
		tg_exit(t, 1, k, 3050 + k * 100);
	}
	cr_assert_eq(tg_finish(t, true), 0);

	struct tu_result r = tu_run("summary", "--format=csv", "--by-thread", path, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\n'=thread,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",1,"), "%s",
		  r.out);
	cr_assert(strstr(r.out, "\n'=thread,'+1+2,1,"), "%s", r.out);
	cr_assert(strstr(r.out, "\n'=thread,'-2-3,1,"), "%s", r.out);
	cr_assert(strstr(r.out, "\n'=thread,'@SUM(A1),1,"), "%s", r.out);
	cr_assert(strstr(r.out, "\n'=thread,a=b,1,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("values", "--format=csv", path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* The name neutralised, the numbers not: min and max -5. */
	cr_assert(strstr(r.out, "\n'-track,1,-5,-5,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("flows", "--format=csv", path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\n'@flow,1,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("tree", "--format=csv", path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\n'+1+2,0,1,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("histogram", "--format=csv", path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\n'@SUM(A1),"), "%s", r.out);
	tu_result_free(&r);

	/* export's CSV tables: the message, thread and scope names. */
	cr_assert(tu_rm_rf(dir), "%s", dir);
	r = tu_run("export", "--format=csv", "-o", dir, path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && grep -q \"'=cmd|' /C calc'!A0\" *.csv && grep -q \"'=thread\" *.csv && "
		 "grep -q \"'-2-3\" *.csv && ! grep -q '^=\\|,=\\|^-2-3\\|,-2-3\\|,@' *.csv && "
		 "grep -q ',-5,\\|,-5$' *.csv",
		 dir);
	cr_assert_eq(system(cmd), 0, "export's CSV: %s", cmd);
	cr_assert(tu_rm_rf(dir), "%s", dir);
	unlink(path);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *p = malloc(1 << 20);

	cr_assert(f && p);
	*n = fread(p, 1, 1 << 20, f);
	fclose(f);
	return p;
}

/*
 * Found by check: `export -o DIR` truncated each DIR/TABLE.EXT before it read
 * its traces, so a trace at DIR/runs.csv (or a link to one) was destroyed.
 * Now, as chrome's -o: exit 2, one line, the trace untouched, no table made.
 */
Test(hostile, export_o_dir_holding_the_input_as_a_table_name_leaves_it_alone)
{
	const char *dir = tu_path(0, "hostile_export_in");
	char csv[256], pq[256], link[256], other[256];
	size_t n0, n1;

	snprintf(csv, sizeof(csv), "%s/runs.csv", dir);
	snprintf(pq, sizeof(pq), "%s/activations.parquet", dir);
	snprintf(link, sizeof(link), "%s/scopes.parquet", dir);
	snprintf(other, sizeof(other), "%s/threads.csv", dir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	write_small(csv);
	char *before = slurp(csv, &n0);

	struct tu_result r = tu_run("export", "--format=csv", "-o", dir, csv, NULL);

	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.err, "runs.csv: is the input trace"), "%s", r.err);
	cr_assert(strstr(r.err, "refusing to overwrite it"), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
	tu_result_free(&r);
	char *after = slurp(csv, &n1);

	cr_assert_eq(n1, n0);
	cr_assert_eq(memcmp(before, after, n0), 0, "the trace was changed");
	free(after);
	cr_assert_neq(access(other, F_OK), 0, "no table written: %s", other);

	/* Parquet, the trace reached through a symbolic link named as a table. */
	cr_assert_eq(rename(csv, pq), 0);
	cr_assert_eq(symlink(pq, link), 0);
	r = tu_run("export", "-o", dir, pq, NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	tu_result_free(&r);
	after = slurp(pq, &n1);
	cr_assert_eq(n1, n0);
	cr_assert_eq(memcmp(before, after, n0), 0, "the trace was changed");
	free(after);
	free(before);
	unlink(link);
	unlink(pq);
	rmdir(dir);
}

/* Found by check: perfetto's -o naming its input exited 1 ("damaged"),
 * not 2 (wrong usage) as chrome's, flame's and pprof's. */
Test(hostile, perfetto_o_naming_the_input_is_wrong_usage)
{
	const char *path = tu_path(0, "hostile_pf_in.zst");
	size_t n0, n1;

	write_small(path);
	char *before = slurp(path, &n0);
	struct tu_result r = tu_run("perfetto", "-o", path, path, NULL);

	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.err, "refusing to overwrite it"), "%s", r.err);
	tu_result_free(&r);
	char *after = slurp(path, &n1);

	cr_assert_eq(n1, n0);
	cr_assert_eq(memcmp(before, after, n0), 0);
	free(before);
	free(after);
	unlink(path);
}

/* Found by check: pprof -o on a full disk said "cannot write: Input/output
 * error"; the other writers name the reason (ENOSPC). */
Test(hostile, pprof_o_on_a_full_disk_names_it)
{
	const char *path = tu_path(0, "hostile_pprof_full.zst");

	write_small(path);
	struct tu_result r = tu_run("pprof", "--weight=time", "-o", "/dev/full", path, NULL);

	cr_assert_eq(r.status, 1, "exit %d: %s", r.status, r.err);
	cr_assert_str_eq(r.err, "tracetool: /dev/full: cannot write: No space left on device\n");
	tu_result_free(&r);
	unlink(path);
}

/*
 * Finding F18 (check3): `tracetool summary t.zst >> t.zst` (standard output
 * appended to the recording it reads, as a script's redirection may be)
 * exited 0 and appended the report to the recording, which every later read
 * then warned was damaged. Like cat's "input file is output", every command
 * now refuses it: exit 2, one line, the recording untouched.
 */
Test(hostile, F18_standard_output_that_is_an_input_is_refused)
{
	const char *a = tu_path(0, "hostile_stdout.zst"), *link = tu_path(1, "hostile_stdout_ln.zst");
	const char *errp = tu_path(2, "hostile_stdout.err");
	static const char *const cmds[] = { "summary", "histogram", "tree", "flame", "chrome",
					    "values", "flows", "info", "check", "profile", "top",
					    "diff" };
	struct stat before, after;
	char want[512];

	write_small(a);
	unlink(link);
	cr_assert_eq(symlink(a, link), 0);
	cr_assert_eq(stat(a, &before), 0);
	snprintf(want, sizeof(want),
		 "tracetool: %s: is also standard output: the output would be written into the "
		 "recording\n",
		 link);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *argv[] = { getenv("TRACETOOL"), cmds[i], link, NULL, NULL };
		int ws, out, err;
		pid_t pid;
		char text[1024] = "";
		ssize_t k;

		if (strcmp(cmds[i], "diff") == 0) { /* BASE NEW: the recording as NEW */
			argv[2] = tu_path(3, "hostile_other_base.zst");
			write_small(argv[2]);
			argv[3] = link;
		}
		out = open(a, O_WRONLY | O_APPEND);
		err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		cr_assert(out >= 0 && err >= 0 && argv[0]);
		pid = fork();
		cr_assert_neq(pid, -1);
		if (pid == 0) {
			dup2(out, 1);
			dup2(err, 2);
			execv(argv[0], (char *const *)argv);
			_exit(127);
		}
		close(out);
		close(err);
		cr_assert_eq(waitpid(pid, &ws, 0), pid);
		cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 2, "%s: status %#x", cmds[i], ws);
		err = open(errp, O_RDONLY);
		cr_assert(err >= 0);
		k = read(err, text, sizeof(text) - 1);
		close(err);
		text[k > 0 ? k : 0] = '\0';
		cr_assert_str_eq(text, want, "%s", cmds[i]);
		cr_assert_eq(stat(a, &after), 0);
		cr_assert_eq(after.st_size, before.st_size, "%s appended to its input", cmds[i]);
	}
	unlink(link);
	unlink(errp);
}
