/* SPDX-License-Identifier: MIT */
/*
 * test_single_read.c - `tracetool perfetto` reads each file once when it
 * can (issue 13 item 1: frame 0 and the last frame give the final clock,
 * each thread's track is written with the name and tid it has at its first
 * events, and that is checked at the file's end), and its output is always
 * byte for byte what two reads give (TRACETOOL_TWO_READS=1: the metadata
 * pass first): on a clean multi-frame recording whose clock rate changes
 * between its SYNC records (read once), on one whose threads are named or
 * renamed after their first events or get their tid late (written again
 * from a metadata pass), on one cut short with no END (read twice, as
 * before), and on several files at once. TRACETOOL_PERFETTO_STATS says how
 * many files were read once.
 */
#include "ttest.h"

#include <stdlib.h>
#include <unistd.h>

#define REAL0 1700000000000000000ull

/*
 * A TSC recording of many small frames: two threads running nested scopes
 * (outer > inner), SYNC records at the start, in the middle and at the end
 * whose rates differ (so the final clock is neither the header's estimate
 * nor the one of the first two SYNCs). late: thread 2 has no THREAD record
 * until after its first events and is then named, and thread 1 is renamed
 * after its first events. clean: END at the end.
 */
static void write_trace(const char *path, uint32_t pid, bool late, bool clean)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 3000000000ull,
				 .start_ticks = 1000, .pid = pid, .start_real_ns = REAL0,
				 .frame_bytes = 2048, .block_events = 32 };
	struct tg_trace *t = tg_create(path, &cfg);
	uint64_t tick = 1000;

	cr_assert(t);
	tg_sync(t, 1000, 5000000, REAL0);
	tg_site(t, 1, "outer");
	tg_site(t, 2, "inner");
	tg_thread(t, 1, pid, "main");
	if (!late)
		tg_thread(t, 2, pid + 1, "worker");
	for (int i = 0; i < 600; i++) {
		for (uint32_t th = 1; th <= 2; th++) {
			tg_enter(t, th, 1, tick);
			tg_enter(t, th, 2, tick + 7);
			tg_exit(t, th, 2, tick + 19);
			tg_exit(t, th, 1, tick + 23);
			tick += 31;
		}
		if (i == 300) {
			/* 3 ticks per ns so far; then a little slower */
			tg_sync(t, tick, 5000000 + (tick - 1000) / 3, REAL0 + (tick - 1000) / 3);
			if (late) {
				tg_thread(t, 2, pid + 1, "worker");
				tg_thread(t, 1, pid, "main renamed");
			}
		}
	}
	tg_sync(t, tick, 5000000 + (tick - 1000) / 3 + 1234, REAL0 + (tick - 1000) / 3 + 1234);
	cr_assert_eq(tg_finish(t, clean), 0);
}

/* Bytes of path (a fresh malloc'd buffer) and their count. */
static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	cr_assert(f, "%s", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	cr_assert(buf);
	cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return buf;
}

/*
 * perfetto of the traces, once as it runs by default and once with the
 * metadata pass first; asserts the same exit code 0, stderr and bytes, and
 * that `once` of the files were read once.
 */
static void same_as_two_reads(unsigned once, const char *const *traces, unsigned n)
{
	const char *one = tu_path(6, "one.pftrace"), *two = tu_path(7, "two.pftrace");
	const char *args[12];
	struct tu_result a, b;
	char *x, *y, want[256];
	size_t nx, ny;
	unsigned k = 0;

	cr_assert(n <= 4);
	args[k++] = "perfetto";
	args[k++] = "-o";
	args[k++] = one;
	for (unsigned i = 0; i < n; i++)
		args[k++] = traces[i];
	args[k] = NULL;
	remove(one);
	remove(two);
	setenv("TRACETOOL_PERFETTO_STATS", "1", 1);
	a = tu_runv(args);
	args[2] = two;
	setenv("TRACETOOL_TWO_READS", "1", 1);
	b = tu_runv(args);
	unsetenv("TRACETOOL_TWO_READS");
	unsetenv("TRACETOOL_PERFETTO_STATS");
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert_eq(b.status, 0, "%s", b.err);
	snprintf(want, sizeof(want), "%s: %u of %u file(s) read once\n", one, once, n);
	cr_assert(strstr(a.err, want), "want \"%s\" in:\n%s", want, a.err);
	snprintf(want, sizeof(want), "%s: 0 of %u file(s) read once\n", two, n);
	cr_assert(strstr(b.err, want), "want \"%s\" in:\n%s", want, b.err);
	x = slurp(one, &nx);
	y = slurp(two, &ny);
	cr_assert_gt(nx, 1000);
	cr_assert(nx == ny && memcmp(x, y, nx) == 0, "outputs differ (%zu and %zu bytes)", nx,
		  ny);
	free(x);
	free(y);
	tu_result_free(&a);
	tu_result_free(&b);
	remove(one);
	remove(two);
}

Test(single_read, clean_recording_is_read_once)
{
	const char *p = tu_path(0, "clean.zst");
	const char *traces[] = { p };

	write_trace(p, 500, false, true);
	same_as_two_reads(1, traces, 1);
	remove(p);
}

Test(single_read, late_names_are_written_again_from_the_metadata_pass)
{
	const char *p = tu_path(0, "late.zst");
	const char *traces[] = { p };

	write_trace(p, 600, true, true);
	same_as_two_reads(0, traces, 1);
	remove(p);
}

Test(single_read, no_end_marker_is_read_twice)
{
	const char *p = tu_path(0, "noend.zst");
	const char *traces[] = { p };

	write_trace(p, 700, false, false);
	same_as_two_reads(0, traces, 1);
	remove(p);
}

Test(single_read, several_files)
{
	const char *a = tu_path(0, "a.zst"), *b = tu_path(1, "b.zst"), *c = tu_path(2, "c.zst");
	const char *clean[] = { a, b };
	const char *mixed[] = { a, c, b };

	write_trace(a, 800, false, true);
	write_trace(b, 900, false, true);
	write_trace(c, 1000, true, true);
	same_as_two_reads(2, clean, 2);
	same_as_two_reads(0, mixed, 3);
	remove(a);
	remove(b);
	remove(c);
}

/*
 * Two recordings in one file: the full walk refuses it before any output
 * (exit 1, OUT not created, an existing OUT untouched); the skim must not
 * let the conversion start (the last frame's seq does not count the frames).
 */
Test(single_read, concatenated_recordings_leave_out_alone)
{
	const char *a = tu_path(0, "c1.zst"), *b = tu_path(1, "c2.zst");
	const char *cat = tu_path(2, "cat.zst"), *out = tu_path(3, "cat.pftrace");
	char *x, *y, *z;
	size_t nx, ny, nz;
	FILE *f;
	struct tu_result r;

	write_trace(a, 1100, false, true);
	write_trace(b, 1200, false, true);
	x = slurp(a, &nx);
	y = slurp(b, &ny);
	f = fopen(cat, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(x, 1, nx, f), nx);
	cr_assert_eq(fwrite(y, 1, ny, f), ny);
	cr_assert_eq(fclose(f), 0);
	remove(out);
	r = tu_run("perfetto", "-o", out, cat, NULL);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert(strstr(r.err, "2 recordings concatenated"), "%s", r.err);
	cr_assert_neq(access(out, F_OK), 0, "OUT was created");
	tu_result_free(&r);
	f = fopen(out, "wb");
	cr_assert(f);
	fputs("keep", f);
	fclose(f);
	r = tu_run("perfetto", "-o", out, cat, NULL);
	cr_assert_eq(r.status, 1, "%s", r.err);
	z = slurp(out, &nz);
	cr_assert(nz == 4 && memcmp(z, "keep", 4) == 0, "OUT was overwritten");
	tu_result_free(&r);
	free(x);
	free(y);
	free(z);
	remove(a);
	remove(b);
	remove(cat);
	remove(out);
}

/*
 * chrome of the traces (extra: one more argument or NULL), once as it runs
 * by default and once with the metadata pass first (TRACETOOL_TWO_READS):
 * the same exit code 0 and bytes on stdout, `once` of the files read once
 * (TRACETOOL_CHROME_STATS). Returns the output (to free).
 */
static char *chrome_same_as_two_reads(unsigned once, const char *const *traces, unsigned n,
				      const char *extra)
{
	const char *args[12];
	struct tu_result a, b;
	char want[256], *out;
	unsigned k = 0;

	cr_assert(n <= 4);
	args[k++] = "chrome";
	if (extra)
		args[k++] = extra;
	for (unsigned i = 0; i < n; i++)
		args[k++] = traces[i];
	args[k] = NULL;
	setenv("TRACETOOL_CHROME_STATS", "1", 1);
	a = tu_runv(args);
	setenv("TRACETOOL_TWO_READS", "1", 1);
	b = tu_runv(args);
	unsetenv("TRACETOOL_TWO_READS");
	unsetenv("TRACETOOL_CHROME_STATS");
	cr_assert_eq(a.status, 0, "%s", a.err);
	cr_assert_eq(b.status, 0, "%s", b.err);
	snprintf(want, sizeof(want), "stdout: %u of %u file(s) read once\n", once, n);
	cr_assert(strstr(a.err, want), "want \"%s\" in:\n%s", want, a.err);
	snprintf(want, sizeof(want), "stdout: 0 of %u file(s) read once\n", n);
	cr_assert(strstr(b.err, want), "want \"%s\" in:\n%s", want, b.err);
	cr_assert_gt(strlen(a.out), 1000);
	cr_assert_str_eq(a.out, b.out);
	out = strdup(a.out);
	cr_assert(out);
	tu_result_free(&a);
	tu_result_free(&b);
	return out;
}

/* The clock rate changes between SYNCs: a wrong one moves the last exit. */
Test(single_read, chrome_clean_recording_is_read_once)
{
	const char *p = tu_path(0, "cclean.zst");
	const char *traces[] = { p };
	char *out;

	write_trace(p, 500, false, true);
	out = chrome_same_as_two_reads(1, traces, 1, NULL);
	/* The thread metadata after the events. */
	cr_assert(strstr(out, "\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":500,\"tid\":501,"
			      "\"args\":{\"name\":\"worker\"}},\n{\"ph\":\"M\",\"name\":"
			      "\"thread_sort_index\",\"pid\":500,\"tid\":501,\"args\":"
			      "{\"sort_index\":1}}\n],"), "%s", out);
	cr_assert(strstr(out, "\"ph\":\"X\""), "%s", out);
	cr_assert_lt(strstr(out, "\"ph\":\"X\""), strstr(out, "\"ph\":\"M\""));
	free(out);
	remove(p);
}

/* Named and renamed after their first events: the final names; a thread
 * with no THREAD record at its first event gets 2^22 + serial. (This file's
 * last frame holds END but not the last SYNC, unlike librec's: the clock
 * cannot be had from a skim, so it is read twice.) */
Test(single_read, chrome_late_names_are_final)
{
	const char *p = tu_path(0, "clate.zst");
	const char *traces[] = { p };
	char *out;

	write_trace(p, 600, true, true);
	out = chrome_same_as_two_reads(0, traces, 1, NULL);
	cr_assert(strstr(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":600,\"tid\":600,"
			      "\"args\":{\"name\":\"main renamed\"}}"), "%s", out);
	cr_assert(strstr(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":600,"
			      "\"tid\":4194306,\"args\":{\"name\":\"worker\"}}"), "%s", out);
	free(out);
	remove(p);
}

/* A killed process's file (no END): the metadata pass, the same output. */
Test(single_read, chrome_no_end_marker_is_read_twice)
{
	const char *p = tu_path(0, "cnoend.zst");
	const char *traces[] = { p };

	write_trace(p, 700, false, false);
	free(chrome_same_as_two_reads(0, traces, 1, NULL));
	remove(p);
}

/* --thread matches final names before the first event: the metadata pass. */
Test(single_read, chrome_thread_filter_keeps_the_metadata_pass)
{
	const char *p = tu_path(0, "cthr.zst");
	const char *traces[] = { p };
	char *out;

	write_trace(p, 650, true, true);
	out = chrome_same_as_two_reads(0, traces, 1, "--thread=main renamed");
	cr_assert(strstr(out, "\"tid\":650"), "%s", out);
	cr_assert_null(strstr(out, "\"tid\":4194306"), "%s", out);
	free(out);
	remove(p);
}

Test(single_read, chrome_several_files)
{
	const char *a = tu_path(0, "ca.zst"), *b = tu_path(1, "cb.zst"), *c = tu_path(2, "cc.zst");
	const char *clean[] = { a, b };
	const char *mixed[] = { a, c, b };

	write_trace(a, 800, false, true);
	write_trace(b, 900, false, true);
	write_trace(c, 1000, false, false);
	free(chrome_same_as_two_reads(2, clean, 2, NULL));
	free(chrome_same_as_two_reads(2, mixed, 3, NULL));
	remove(a);
	remove(b);
	remove(c);
}
