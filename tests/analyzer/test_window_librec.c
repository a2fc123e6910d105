/* SPDX-License-Identifier: MIT */
/*
 * test_window_librec.c - issue 29 item 3 on real librec recordings: a
 * --from/--to window read through the writer's index frames (FORMAT.md §6)
 * decodes a few frames, without a pass over the file, and every report is
 * byte for byte the one of the whole file (TRACETOOL_INDEX=0): a program
 * whose main() scope stays open across every window, a recursion whose 40
 * levels' enters lie in many frames, one 5000 levels deep, six threads, short threads
 * (packed index frames, FORMAT.md §6.3), both files of a fork, a
 * flight-recorder snapshot; and a file cut short, a damaged index frame or
 * data frame are read without the writer's index (then as before) with
 * the same reports.
 */
#include "ttest.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void setup(void)
{
	char idx[300];

	snprintf(dir, sizeof(dir), "%s", tu_path(2, "wlib"));
	mkdir(dir, 0700);
	snprintf(idx, sizeof(idx), "%s/idx", dir);
	tt_index_dir(idx);
}

static void teardown(void)
{
	tu_rm_rf(dir);
}

TestSuite(window_librec, .init = setup, .fini = teardown, .timeout = 300);

/* Runs prog_window MODE with env (assignments) recording into dir; the files. */
static size_t record(const char *mode, const char *env, char paths[][512], size_t max)
{
	const char *prog = getenv("PROG_WINDOW");
	char cmd[1024];
	glob_t g;
	size_t n = 0;

	cr_assert(prog, "PROG_WINDOW not set");
	/* Frames of about 1 ms (REC_FLUSH_MS / 4), and 1 MiB ones when busier. */
	snprintf(cmd, sizeof(cmd), "REC_OUTPUT='%s/t-%%p%s.zst' REC_FLUSH_MS=4 %s '%s' %s", dir,
		 strstr(env, "flight") ? "-%n" : "", env, prog, mode);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "%s/t-*.zst", dir);
	cr_assert_eq(glob(cmd, 0, NULL, &g), 0);
	for (; n < g.gl_pathc && n < max; n++)
		snprintf(paths[n], 512, "%s", g.gl_pathv[n]);
	globfree(&g);
	return n;
}

/*
 * Windows at four places of the recording, 0.1 % and 2 % of it long, each
 * with summary, tree and chrome: the same bytes through the index as from
 * the whole file. want: what TRACETOOL_INDEX_STATS must say of the index.
 * Return: the windows that decoded fewer than all frames.
 */
static unsigned count_of(const char *text, const char *needle)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* With windows at the given places (fractions of the recording); *most:
 * the most times needle is in one output through the index. */
static unsigned compare_windows_at(const char *path, const char *want, const double *at,
				   unsigned nr_at, const char *needle, unsigned *most);

static unsigned compare_windows(const char *path, const char *want)
{
	static const double at[] = { 0.13, 0.41, 0.66, 0.92 };

	return compare_windows_at(path, want, at, 4, NULL, NULL);
}

static unsigned compare_windows_at(const char *path, const char *want, const double *at,
				   unsigned nr_at, const char *needle, unsigned *most)
{
	struct tu_result info = tu_run("info", "--format=json", path, NULL);
	uint64_t dur;
	unsigned narrow = 0;

	cr_assert_eq(info.status, 0, "%s", info.err);
	dur = tt_json_u64(info.out, "duration_ns");
	tu_result_free(&info);
	for (unsigned w = 0; w < 2 * nr_at; w++) {
		uint64_t a = (uint64_t)(at[w / 2] * (double)dur), len = w % 2 ? dur / 50 : dur / 1000;
		char from[64], to[64];

		snprintf(from, sizeof(from), "--from=%" PRIu64 "ns", a);
		snprintf(to, sizeof(to), "--to=%" PRIu64 "ns", a + len + 1);
		for (unsigned c = 0; c < TT_WINDOW_REPORTS; c++) {
			const char *args[8];
			struct tu_result fast;
			int of = 0, d;

			fast = tt_same_window(tt_window_args(args, c, from, to, path), "0", "1", want);
			d = tt_index_decoded(fast.err, &of);
			narrow += d >= 0 && d < of;
			if (needle && count_of(fast.out, needle) > *most)
				*most = count_of(fast.out, needle);
			tu_result_free(&fast);
		}
	}
	return narrow;
}

Test(window_librec, main_open_and_a_deep_recursion_through_the_writers_index_equal_the_whole_file)
{
	char paths[4][512];

	cr_assert_eq(record("main", "", paths, 4), 1);
	cr_assert_geq(compare_windows(paths[0], "index: the writer's"), 1);
}

/* 5000 levels of recursion open at a window's start, entered in many frames:
 * chrome shows them all, as the whole file does. */
Test(window_librec, a_5000_level_recursion_through_the_writers_index_equals_the_whole_file)
{
	static const double at[] = { 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9 };
	char paths[4][512];
	unsigned most = 0;

	cr_assert_eq(record("deep", "", paths, 4), 1);
	cr_assert_geq(compare_windows_at(paths[0], "index: the writer's", at, 10,
					 "\"name\":\"deep\"", &most),
		      1);
	/* A window met the recursion at least a thousand levels down. */
	cr_assert_geq(most, 1000, "%u", most);
}

Test(window_librec, six_threads_through_the_writers_index_equal_the_whole_file)
{
	char paths[4][512];

	cr_assert_eq(record("threads", "", paths, 4), 1);
	cr_assert_geq(compare_windows(paths[0], "index: the writer's"), 1);
}

/* Index frames in the file at path, and how many of them are packed (FORMAT.md §6.3). */
static unsigned count_index_frames(const char *path, unsigned *packed)
{
	FILE *f = fopen(path, "rb");
	uint8_t h[32];
	unsigned n = 0;

	cr_assert(f);
	*packed = 0;
	while (fread(h, 1, sizeof(h), f) == sizeof(h)) {
		cr_assert(RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(h)));
		n++;
		*packed += recfmt_load_u32le(h) == RECFMT_INDEX_PACKED_MAGIC;
		cr_assert_eq(fseek(f, (long)(8 + recfmt_load_u32le(h + 4) +
					     recfmt_load_u64le(h + 8 + 16)) - (long)sizeof(h),
				   SEEK_CUR),
			     0);
	}
	fclose(f);
	return n;
}

/* Finding F4: frames of short threads, their index frames packed. */
Test(window_librec, F4_short_threads_through_packed_index_frames_equal_the_whole_file)
{
	char paths[4][512];
	unsigned packed, n;

	cr_assert_eq(record("churn", "", paths, 4), 1);
	n = count_index_frames(paths[0], &packed);
	cr_assert_geq(packed, 1, "%u index frames, none packed", n);
	cr_assert_geq(compare_windows(paths[0], "index: the writer's"), 1);
}

/* The child's file starts inside main, opened in the parent: its exit has no enter. */
Test(window_librec, both_files_of_a_fork_through_the_writers_index_equal_the_whole_file)
{
	char paths[4][512];

	cr_assert_eq(record("fork", "", paths, 4), 2);
	for (unsigned i = 0; i < 2; i++)
		cr_assert_geq(compare_windows(paths[i], "index: the writer's"), 1, "%s", paths[i]);
}

/* A snapshot's window starts inside scopes whose enters it does not hold. */
Test(window_librec, a_flight_snapshot_through_the_writers_index_equals_the_whole_file)
{
	char paths[4][512];

	cr_assert_eq(record("snapshot", "REC_MODE=flight", paths, 4), 1);
	compare_windows(paths[0], "index: the writer's");
}

/* Offset of the data frame after the k-th index frame, and that index frame's. */
static uint64_t nth_frame(const char *path, unsigned k, uint64_t *ix_off)
{
	FILE *f = fopen(path, "rb");
	uint64_t off = 0;
	uint8_t h[64];

	cr_assert(f);
	for (unsigned i = 0;; i++) {
		uint32_t size;
		uint64_t frame_bytes;

		cr_assert_eq(fseek(f, (long)off, SEEK_SET), 0);
		cr_assert_eq(fread(h, 1, 32, f), 32);
		/* Plain or packed (FORMAT.md §6.3): the same head. */
		cr_assert(RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(h)), "at %" PRIu64, off);
		size = recfmt_load_u32le(h + 4);
		frame_bytes = recfmt_load_u64le(h + 8 + 16);
		if (i == k) {
			*ix_off = off;
			fclose(f);
			return off + 8 + size;
		}
		off += 8 + size + frame_bytes;
	}
}

static void flip(const char *path, uint64_t at)
{
	FILE *f = fopen(path, "r+b");
	int c;

	cr_assert(f);
	cr_assert_eq(fseek(f, (long)at, SEEK_SET), 0);
	c = fgetc(f);
	cr_assert_eq(fseek(f, (long)at, SEEK_SET), 0);
	fputc(c ^ 0x10, f);
	fclose(f);
}

Test(window_librec, a_file_cut_short_or_damaged_is_read_without_the_writers_index)
{
	char paths[4][512];
	struct stat st;
	uint64_t ix, data;

	cr_assert_eq(record("main", "", paths, 4), 1);
	/* Cut inside the fifth data frame (a recorder killed while writing). */
	data = nth_frame(paths[0], 4, &ix);
	cr_assert_eq(stat(paths[0], &st), 0);
	cr_assert_eq(truncate(paths[0], (off_t)data + 100), 0);
	compare_windows(paths[0], "index: not the writer's (the file is cut short or damaged)");
	/* Cut inside an index frame. */
	cr_assert_eq(truncate(paths[0], (off_t)ix + 20), 0);
	compare_windows(paths[0], "index: not the writer's (the file is cut short or damaged)");

	cr_assert_eq(unlink(paths[0]), 0);
	cr_assert_eq(record("main", "", paths, 4), 1);
	data = nth_frame(paths[0], 3, &ix);
	/* A byte of an index frame's records. */
	flip(paths[0], ix + 8 + 48 + 30);
	compare_windows(paths[0], "index: not the writer's (a damaged index frame, or a newer one)");
	flip(paths[0], ix + 8 + 48 + 30);
	/* A byte of a data frame: the whole file's reports name the damage. */
	flip(paths[0], data + 200);
	compare_windows(paths[0],
			"index: not the writer's (a frame differs from what its index frame says");
}
