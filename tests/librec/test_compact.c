/* SPDX-License-Identifier: MIT */
/*
 * test_compact.c - a stream file written under pressure (every frame fast,
 * its literals raw: rec__writer_test_pressure) is compressed again when the
 * recording ends (compact.c): the file that replaces it reads back with the
 * exact counts, holds no fast frame any more (FRAME flag
 * RECFMT_FRAME_RECOMPRESSED instead, FORMAT.md §3.1), is smaller, and
 * leaves no temporary file behind; a file that is not the writer's alone
 * at its path (moved away, a second link) is left as it was written.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pressure.h"
#include "recfmt.h"
#include "trace_read.h"

#define NR_THREADS 4
#define NR_CALLS 200000 /* per thread: 2 events each, several frames */

TestSuite(compact, .init = pressure_setup, .fini = pressure_teardown, .timeout = 120);

static int nr_threads = NR_THREADS, nr_calls = NR_CALLS;

/*
 * The first worker asks for a frame at each quarter of its calls
 * (rec_flush()), so that the file has several frames however fast the
 * machine records: frames written because they were due (REC_FLUSH_MS) or
 * full came to 3 on a quiet machine.
 */
static void *worker(void *arg)
{
	bool flusher = arg != NULL;

	for (int i = 0; i < nr_calls; i++) {
		work(i);
		if (flusher && i % (nr_calls / 4) == nr_calls / 4 - 1)
			cr_assert_eq(rec_flush(), 0);
	}
	return NULL;
}

static void record(void)
{
	pthread_t th[NR_THREADS];

	for (int i = 0; i < nr_threads; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, worker, i == 0 ? (void *)1 : NULL), 0);
	for (int i = 0; i < nr_threads; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(rec_stop(), 0);
}

struct frames {
	uint64_t nr, fast, recompressed;
};

/* Every frame's FRAME flags (FORMAT.md §3.1). */
static struct frames count_frames(const char *path)
{
	struct frames f = { 0 };
	struct recfmt_reader *r;
	struct recfmt_error err;
	const uint8_t *data;
	size_t len;

	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK, "cannot read %s", path);
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor c;
		struct recfmt_record rec;

		recfmt_cursor_init(&c, data, len);
		cr_assert_eq(recfmt_cursor_next(&c, &rec, &err), RECFMT_OK);
		cr_assert_eq(rec.type, RECFMT_FRAME);
		f.nr++;
		f.fast += (recfmt_frame_flags(&rec) & RECFMT_FRAME_FAST) != 0;
		f.recompressed += (recfmt_frame_flags(&rec) & RECFMT_FRAME_RECOMPRESSED) != 0;
		cr_assert(!(recfmt_frame_flags(&rec) & RECFMT_FRAME_FAST) ||
			  !(recfmt_frame_flags(&rec) & RECFMT_FRAME_RECOMPRESSED));
	}
	recfmt_reader_close(r);
	return f;
}

/*
 * Every data frame has its index frame before it (FORMAT.md §6), which
 * says its length, its hash and its FRAME flags as they are after the
 * recompression, up to the file's last byte. Return: the frames.
 */
static uint64_t assert_index_frames(const char *path)
{
	struct recfmt_dctx *d = recfmt_dctx_new();
	struct recfmt_frame_bytes fb = { 0 };
	struct recfmt_buf raw;
	struct recfmt_index_scratch unpacked = { 0 };
	size_t size;
	uint8_t *all = (uint8_t *)tu_read_file(path, &size);
	uint64_t off = 0, nr = 0;

	cr_assert(all && d, "%s", path);
	recfmt_buf_init(&raw);
	while (off < (uint64_t)size) {
		struct recfmt_index_head h;
		struct recfmt_error err = { 0 };
		uint64_t len = 8 + (uint64_t)recfmt_load_u32le(all + off + 4);

		cr_assert(recfmt_index_parse(all + off, (size_t)len, &h), "frame %llu",
			  (unsigned long long)nr);
		cr_assert(recfmt_index_unpack(&h, &unpacked), "frame %llu", (unsigned long long)nr);
		cr_assert_eq(h.seq, nr);
		/* The writer summed up every block (a block it did not would make
		 * windows decode its frame: FORMAT.md §6.1), its body's offsets
		 * taken past the room before it (writer.c: body_records()). */
		cr_assert_eq(h.flags & RECFMT_INDEX_INCOMPLETE, 0, "frame %llu", (unsigned long long)nr);
		off += len;
		cr_assert_eq(recfmt_xxh64(all + off, (size_t)h.frame_bytes), h.frame_hash);
		fb.buf.data = all + off;
		fb.buf.len = (size_t)h.frame_bytes;
		fb.content_bytes = (size_t)h.content_bytes;
		cr_assert_eq(recfmt_frame_decompress(d, &fb, &raw, &err), RECFMT_OK);
		cr_assert_eq(raw.len, h.content_bytes);
		/* The FRAME records, flags and all, are the same. */
		cr_assert_eq(memcmp(raw.data, h.records, 8 + recfmt_load_u32le(raw.data + 4)), 0);
		off += h.frame_bytes;
		nr++;
	}
	cr_assert_eq(off, (uint64_t)size);
	recfmt_buf_fini(&raw);
	recfmt_index_scratch_fini(&unpacked);
	recfmt_dctx_free(d);
	free(all);
	return nr;
}

static void assert_exact(const char *path)
{
	struct tr_trace tr;

	cr_assert_eq(tr_load(path, &tr), 0, "cannot read %s", path);
	cr_assert(tr.clean);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert_eq(tr_calls(&tr, "work"), (uint64_t)nr_threads * (uint64_t)nr_calls);
	cr_assert_eq(tr.nr_events, 2ull * (uint64_t)nr_threads * (uint64_t)nr_calls);
	cr_assert_eq(tr.end_nr_events, tr.nr_events);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

/* Names in dir other than "t.zst" and the ones given. */
static int strangers(const char *also)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "t.zst") &&
		    (!also || strcmp(e->d_name, also)))
			n++;
	closedir(d);
	return n;
}

Test(compact, a_file_written_under_pressure_is_recompressed_with_exact_counts)
{
	struct frames f;
	struct stat st;

	record();
	f = count_frames(out);
	cr_assert_gt(f.nr, 3);
	cr_assert_eq(f.fast, 0, "%llu of %llu frames still fast", (unsigned long long)f.fast,
		     (unsigned long long)f.nr);
	cr_assert_gt(f.recompressed, 0);
	cr_assert_eq(assert_index_frames(out), f.nr);
	assert_exact(out);
	cr_assert_eq(strangers(NULL), 0, "a temporary file was left in %s", dir);
	/* The mode the file was created with (REC_FILE_MODE's default). */
	cr_assert_eq(stat(out, &st), 0);
	cr_assert_eq(st.st_mode & 07777, REC__DEFAULT_FILE_MODE);
}

Test(compact, a_file_moved_during_the_recording_is_left_as_written)
{
	char moved[TU_PATH_MAX];
	struct frames f;

	tu_join(moved, dir, "moved.zst");
	rec_start(NULL);
	cr_assert_eq(rename(out, moved), 0);
	record();
	cr_assert_eq(access(out, F_OK), -1, "nothing may appear at the old path");
	f = count_frames(moved);
	/* As written: every frame fast, none recompressed. */
	cr_assert_eq(f.fast, f.nr, "%llu of %llu frames fast", (unsigned long long)f.fast,
		     (unsigned long long)f.nr);
	cr_assert_eq(f.recompressed, 0);
	assert_exact(moved);
	cr_assert_eq(strangers("moved.zst"), 0);
}

Test(compact, a_file_with_a_second_link_is_left_as_written)
{
	char link2[TU_PATH_MAX];
	struct frames f;
	struct stat a, b;

	tu_join(link2, dir, "link.zst");
	rec_start(NULL);
	cr_assert_eq(link(out, link2), 0);
	record();
	cr_assert_eq(stat(out, &a), 0);
	cr_assert_eq(stat(link2, &b), 0);
	cr_assert_eq(a.st_ino, b.st_ino, "both names still name one file");
	f = count_frames(out);
	cr_assert_eq(f.fast, f.nr);
	cr_assert_eq(f.recompressed, 0);
	assert_exact(out);
}

Test(compact, without_pressure_nothing_is_rewritten)
{
	struct frames f;
	struct stat a, b;

	/* A few events: no pressure, whatever the machine's load. */
	rec__writer_test_pressure = 0;
	nr_threads = 1;
	nr_calls = 1000;
	rec_start(NULL);
	cr_assert_eq(stat(out, &a), 0);
	record();
	cr_assert_eq(stat(out, &b), 0);
	f = count_frames(out);
	cr_assert_eq(f.fast + f.recompressed, 0);
	cr_assert_eq(a.st_ino, b.st_ino, "the file the writer wrote, not a copy");
	assert_exact(out);
}
