/* SPDX-License-Identifier: MIT */
/*
 * test_index_hostile.c - issue 29 follow-up: index frames (FORMAT.md §6)
 * whose hashes are right but whose contents lie. Their hashes are XXH64, not
 * a signature: whoever writes a lie writes its hashes too, so tracetool
 * checks what an index frame says against every frame a window makes it
 * decode, and its shape against the file (a length that is not one whole
 * data frame, a size that is not the frame's, sums no frame can have).
 * Each crafted file here: a window through the index gives the bytes and
 * exit status of the same window through the pass index
 * (TRACETOOL_INDEX=pass), and TRACETOOL_INDEX_STATS or a warning says why
 * the index frames were not used.
 */
#include "ttest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *trace, *idx_dir;

static void setup(void)
{
	trace = tu_path(0, "hostile-ix.zst");
	idx_dir = tu_path(1, "hostile-ix-idx");
	tt_index_dir(idx_dir);
}

static void teardown(void)
{
	unlink(trace);
	tu_rm_rf(idx_dir);
}

TestSuite(index_hostile, .init = setup, .fini = teardown, .timeout = 120);

#define START 1000u /* tt_new_trace()'s first tick */

/*
 * Two threads, index frames before each of about 60 frames: thread 1's main
 * open from its first event to the end with calls of f (and g inside every
 * seventh) under it; thread 2 three levels deep, h, i, j, left and entered
 * again.
 */
static void write_trace(void)
{
	struct tg_trace *t = tt_new_trace(trace, 2 << 10, 200, true);
	uint64_t now = START;

	tg_site(t, 1, "main");
	tg_site(t, 2, "f");
	tg_site(t, 3, "g");
	tg_site(t, 4, "h");
	tg_site(t, 5, "i");
	tg_site(t, 6, "j");
	tg_thread(t, 1, 77, "main");
	tg_thread(t, 2, 78, "worker");
	cr_assert_eq(tg_enter(t, 1, 1, now), 0);
	for (unsigned k = 0; k < 12000; k++) {
		cr_assert_eq(tg_enter(t, 1, 2, now += 10), 0);
		if (k % 7 == 0) {
			cr_assert_eq(tg_enter(t, 1, 3, now += 5), 0);
			cr_assert_eq(tg_exit(t, 1, 3, now += 20), 0);
		}
		cr_assert_eq(tg_exit(t, 1, 2, now += 40 + k % 13), 0);
		if (k == 6000)
			tg_drops(t, 2, 17);
		if (k % 3 == 0) {
			cr_assert_eq(tg_enter(t, 2, 4, now += 1), 0);
			cr_assert_eq(tg_enter(t, 2, 5, now += 1), 0);
			cr_assert_eq(tg_enter(t, 2, 6, now += 1), 0);
			cr_assert_eq(tg_exit(t, 2, 6, now += 7), 0);
			cr_assert_eq(tg_exit(t, 2, 5, now += 1), 0);
			if (k % 2)
				cr_assert_eq(tg_exit(t, 2, 4, now += 1), 0);
		}
	}
	cr_assert_eq(tg_finish(t, true), 0);
}

/* The file in memory, and its index frames' offsets. */
struct file {
	uint8_t *p;
	size_t n;
	uint64_t ix[512];
	unsigned nr_ix;
};

static void load(struct file *f)
{
	FILE *fp = fopen(trace, "rb");
	uint64_t off = 0;

	cr_assert(fp);
	cr_assert_eq(fseek(fp, 0, SEEK_END), 0);
	f->n = (size_t)ftell(fp);
	rewind(fp);
	f->p = malloc(f->n + 1);
	cr_assert(f->p);
	cr_assert_eq(fread(f->p, 1, f->n, fp), f->n);
	fclose(fp);
	f->nr_ix = 0;
	while (off < f->n) {
		cr_assert_eq(recfmt_load_u32le(f->p + off), RECFMT_INDEX_FRAME_MAGIC);
		cr_assert_lt(f->nr_ix, 512);
		f->ix[f->nr_ix++] = off;
		off += 8 + recfmt_load_u32le(f->p + off + 4) + recfmt_load_u64le(f->p + off + 8 + 16);
	}
	cr_assert_eq(off, f->n);
	cr_assert_geq(f->nr_ix, 30, "%u frames", f->nr_ix);
}

static void store(const struct file *f)
{
	FILE *fp = fopen(trace, "wb");

	cr_assert(fp);
	cr_assert_eq(fwrite(f->p, 1, f->n, fp), f->n);
	cr_assert_eq(fclose(fp), 0);
}

/* Index frame k's own hash made right again, as a liar would. */
static void rehash(struct file *f, unsigned k)
{
	uint8_t *p = f->p + f->ix[k];
	uint32_t size = recfmt_load_u32le(p + 4);

	recfmt_store_u64le(p + 8 + size - 8, recfmt_xxh64(p + 8, size - 8));
}

/* The payload of the nth record of type `type` in index frame k, or NULL. */
static uint8_t *find_in(struct file *f, unsigned k, uint8_t type, unsigned nth)
{
	uint8_t *p = f->p + f->ix[k] + 8 + RECFMT_INDEX_HEAD_BYTES;
	uint32_t len = recfmt_load_u32le(f->p + f->ix[k] + 8 + 40);
	struct recfmt_record r;

	for (size_t pos = 0; recfmt_record_at(p, len, pos, &r); pos += 8 + (size_t)r.size)
		if (r.type == type && nth-- == 0)
			return p + pos + 8;
	return NULL;
}

static uint8_t *record_in(struct file *f, unsigned k, uint8_t type, unsigned nth)
{
	uint8_t *p = find_in(f, k, type, nth);

	cr_assert(p, "no record %u of type %u in index frame %u", nth, type, k);
	return p;
}

/* "--from=..ns" and "--to=..ns" around ticks [a, b). */
static void window(char *from, char *to, uint64_t a, uint64_t b)
{
	snprintf(from, 64, "--from=%" PRIu64 "ns", a - START);
	snprintf(to, 64, "--to=%" PRIu64 "ns", b - START);
}

/*
 * summary, tree and chrome over [from, to) through the index frames
 * (TRACETOOL_INDEX=1) and through the pass index: the same status and
 * bytes, and stderr through the index frames says `want`.
 */
static void same_as_pass(const char *from, const char *to, const char *want)
{
	for (unsigned c = 0; c < TT_WINDOW_REPORTS; c++) {
		const char *args[8];
		struct tu_result ix;

		ix = tt_same_window(tt_window_args(args, c, from, to, trace), "pass", "1", want);
		cr_assert_eq(ix.status, 0, "%s", ix.err);
		if (c == 2)
			cr_assert(tu_json_valid(ix.out));
		tu_result_free(&ix);
	}
}

/* BLOCK_INDEX payload fields (FORMAT.md §6.2). */
#define B_THREAD 0
#define B_NR 4
#define B_FIRST 8
#define B_LAST 16
#define B_ENTERS 24
#define B_START 32
#define B_LOW 36
#define B_END 40

#define DIFFERS "differs from what its index frame says"

/* The trace written and read into f, for a test to make it lie. */
static void craft(struct file *f)
{
	write_trace();
	load(f);
}

/* Index frame k's lie told: its hash made right again, and the file stored. */
static void lie_stored(struct file *f, unsigned k)
{
	rehash(f, k);
	store(f);
}

/* same_as_pass() over [t, t + len) ns, t the first tick of index frame k's first block. */
static void same_as_pass_at(struct file *f, unsigned k, uint64_t len, const char *want)
{
	char from[64], to[64];
	const uint64_t t = recfmt_load_u64le(record_in(f, k, RECFMT_BLOCK_INDEX, 0) + B_FIRST);

	window(from, to, t, t + len);
	same_as_pass(from, to, want);
}

/* g: f's bytes with [at, at + cut) replaced by ins[0 .. n) (g->p malloc()ed). */
static void splice(const struct file *f, struct file *g, uint64_t at, uint64_t cut,
		   const uint8_t *ins, uint64_t n)
{
	g->n = f->n - cut + n;
	g->p = malloc(g->n + 1);
	cr_assert(g->p);
	memcpy(g->p, f->p, at);
	if (n)
		memcpy(g->p + at, ins, n);
	memcpy(g->p + at + n, f->p + at + cut, f->n - at - cut);
}

/* The untouched file: the index frames are used, and agree with the pass. */
Test(index_hostile, an_honest_file_uses_its_index_frames)
{
	struct file f;
	char from[64], to[64];
	uint8_t *b;

	craft(&f);
	b = record_in(&f, f.nr_ix / 2, RECFMT_BLOCK_INDEX, 0);
	window(from, to, recfmt_load_u64le(b + B_FIRST), recfmt_load_u64le(b + B_LAST));
	same_as_pass(from, to, "index: the writer's (");
	free(f.p);
}

/* A block's last ticks moved back inside its own range (its thread's
 * blocks still in order): the window's frame, decoded, says otherwise. */
Test(index_hostile, a_blocks_ticks_that_lie_in_a_decoded_frame_are_found)
{
	struct file f;
	const unsigned k = 20;
	uint8_t *b;
	uint64_t first, last;

	craft(&f);
	b = record_in(&f, k, RECFMT_BLOCK_INDEX, 0);
	first = recfmt_load_u64le(b + B_FIRST);
	last = recfmt_load_u64le(b + B_LAST);
	recfmt_store_u64le(b + B_LAST, first + (last - first) / 2);
	lie_stored(&f, k);
	same_as_pass_at(&f, k, 50, DIFFERS);
	free(f.p);
}

/* The enters of a block: one more than it has (the stand-in would count it
 * in every walk that does not decode it). */
Test(index_hostile, a_blocks_enter_count_that_lies_is_found)
{
	struct file f;
	const unsigned k = 25;
	uint8_t *b;

	craft(&f);
	b = record_in(&f, k, RECFMT_BLOCK_INDEX, 0);
	recfmt_store_u32le(b + B_ENTERS, recfmt_load_u32le(b + B_ENTERS) - 1);
	lie_stored(&f, k);
	same_as_pass_at(&f, k, 50, DIFFERS);
	free(f.p);
}

/*
 * Thread 1's depth one deeper from frame k on, every block's depth_start,
 * depth_low and depth_end (a chain that still holds): a window after it
 * would replay an enter that is not open. The frames before the window
 * that the replay decodes say so.
 */
Test(index_hostile, depths_that_lie_from_a_frame_on_are_found_where_they_are_replayed)
{
	struct file f;
	const unsigned k = 10;
	uint8_t *b = NULL;
	bool first = true;

	craft(&f);
	for (unsigned i = k; i < f.nr_ix; i++) {
		for (unsigned nth = 0; (b = find_in(&f, i, RECFMT_BLOCK_INDEX, nth)); nth++) {
			if (recfmt_load_u32le(b + B_THREAD) != 1)
				continue;
			if (first) {
				/* An enter more, left open: the sums still fit the counts. */
				recfmt_store_u32le(b + B_ENTERS, recfmt_load_u32le(b + B_ENTERS) + 1);
				first = false;
			} else {
				recfmt_store_u32le(b + B_START, recfmt_load_u32le(b + B_START) + 1);
				recfmt_store_u32le(b + B_LOW, recfmt_load_u32le(b + B_LOW) + 1);
			}
			recfmt_store_u32le(b + B_END, recfmt_load_u32le(b + B_END) + 1);
		}
		rehash(&f, i);
	}
	store(&f);
	same_as_pass_at(&f, f.nr_ix - 10, 50, DIFFERS);
	free(f.p);
}

/* The DROPS record copied into the index frame with another count: the
 * decoded frame's own record differs. */
Test(index_hostile, a_record_copy_that_lies_in_a_decoded_frame_is_found)
{
	struct file f;
	uint8_t *d = NULL;
	unsigned k = 0;

	craft(&f);
	while (k < f.nr_ix && !(d = find_in(&f, k, RECFMT_DROPS, 0)))
		k++;
	cr_assert(d && k > 0);
	cr_assert_eq(recfmt_load_u64le(d + 8), 17);
	recfmt_store_u64le(d + 8, 170);
	lie_stored(&f, k);
	same_as_pass_at(&f, k, 50, DIFFERS);
	free(f.p);
}

/* A data frame's length made to cover the next index frame and data frame
 * as well (hash of the whole span right, the next index frame's seq one
 * more): not one zstd frame. */
Test(index_hostile, a_length_that_spans_two_frames_is_refused)
{
	struct file f;
	const unsigned k = 12;
	uint8_t *p;
	uint64_t off, span;

	craft(&f);
	p = f.p + f.ix[k];
	off = f.ix[k] + 8 + recfmt_load_u32le(p + 4);
	span = f.ix[k + 2] - off;
	recfmt_store_u64le(p + 8 + 16, span);
	recfmt_store_u64le(p + 8 + 32, recfmt_xxh64(f.p + off, span));
	/* Every later index frame's seq one less, as if frame k+1 were not one. */
	for (unsigned i = k + 2; i < f.nr_ix; i++) {
		recfmt_store_u32le(f.p + f.ix[i] + 8 + 8, i - 1);
		rehash(&f, i);
	}
	lie_stored(&f, k);
	same_as_pass_at(&f, k, 500, "index: not the writer's (an index frame's length or size");
	free(f.p);
}

/* A data frame's content size that is not its zstd header's. */
Test(index_hostile, a_content_size_that_lies_is_refused)
{
	struct file f;
	uint8_t *p;

	craft(&f);
	p = f.p + f.ix[5];
	recfmt_store_u64le(p + 8 + 24, recfmt_load_u64le(p + 8 + 24) + 4096);
	lie_stored(&f, 5);
	same_as_pass_at(&f, 40, 500, "index: not the writer's (an index frame's length or size");
	free(f.p);
}

/*
 * Index frame k twice, the first copy's data frame being the second copy
 * and the data frame (hash of both right): a skippable frame is no data
 * frame. Before, the window decoded "frame k" from the copy's bytes.
 */
Test(index_hostile, a_duplicated_index_frame_is_refused)
{
	struct file f, g;
	const unsigned k = 15;
	uint64_t at, len, data;

	craft(&f);
	at = f.ix[k];
	len = 8 + recfmt_load_u32le(f.p + at + 4);
	data = recfmt_load_u64le(f.p + at + 8 + 16);
	splice(&f, &g, at + len, 0, f.p + at, len);
	recfmt_store_u64le(g.p + at + 8 + 16, len + data);
	recfmt_store_u64le(g.p + at + 8 + 32, recfmt_xxh64(g.p + at + len, len + data));
	recfmt_store_u64le(g.p + at + len - 8, recfmt_xxh64(g.p + at + 8, len - 16));
	store(&g);
	same_as_pass_at(&f, k, 500, "index: not the writer's (an index frame's length or size");
	free(f.p);
	free(g.p);
}

/* An index frame for a frame that is not there: one more at the end, a
 * copy of the last with the next seq and a length of 0. */
Test(index_hostile, an_index_frame_for_a_frame_that_does_not_exist_is_refused)
{
	struct file f, g;
	char from[64], to[64];
	unsigned k;
	uint64_t at, len;
	uint8_t *b;

	craft(&f);
	k = f.nr_ix - 1;
	at = f.ix[k];
	len = 8 + recfmt_load_u32le(f.p + at + 4);
	splice(&f, &g, f.n, 0, f.p + at, len);
	recfmt_store_u32le(g.p + f.n + 8 + 8, f.nr_ix);
	recfmt_store_u64le(g.p + f.n + 8 + 16, 0);
	recfmt_store_u64le(g.p + f.n + 8 + 32, recfmt_xxh64(g.p, 0));
	recfmt_store_u64le(g.p + f.n + len - 8, recfmt_xxh64(g.p + f.n + 8, len - 16));
	store(&g);
	b = record_in(&f, k, RECFMT_BLOCK_INDEX, 0);
	window(from, to, recfmt_load_u64le(b + B_FIRST), recfmt_load_u64le(b + B_LAST) + 1000);
	same_as_pass(from, to, "index: not the writer's (an index frame's length or size");
	free(f.p);
	free(g.p);
}

/*
 * Counts no frame of this size can hold: 4 billion events in a block, and
 * a depth of 65 536 at the end of a block of a few hundred. Each is refused
 * before anything is made of it (the memory a depth takes is a plan's).
 */
Test(index_hostile, absurd_counts_are_refused)
{
	static const struct {
		unsigned field;
		uint32_t value;
	} lies[] = { { B_NR, UINT32_MAX }, { B_END, 1u << 16 }, { B_ENTERS, UINT32_MAX } };

	for (unsigned i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		struct file f;
		uint8_t *b;

		craft(&f);
		b = record_in(&f, 8, RECFMT_BLOCK_INDEX, 1);
		recfmt_store_u32le(b + lies[i].field, lies[i].value);
		lie_stored(&f, 8);
		same_as_pass_at(&f, 40, 500, "index: not the writer's (an index frame's sums cannot be");
		free(f.p);
	}
}

/*
 * A lie where no window looks: a block's last ticks in frame 5, a window at
 * frame 40. The window trusts it (nothing it decodes says otherwise) and
 * its output is valid; check, which compares every index frame with its
 * frame, names the frame and the field, in one line, and exits 1.
 */
Test(index_hostile, check_finds_a_lie_that_no_window_decodes)
{
	const char *chrome[] = { "chrome", NULL, NULL, "-o", "-", NULL, NULL };
	struct file f;
	char from[64], to[64], want[160];
	struct tu_result r;
	uint8_t *b;
	uint64_t first, last;

	craft(&f);
	b = record_in(&f, 5, RECFMT_BLOCK_INDEX, 0);
	first = recfmt_load_u64le(b + B_FIRST);
	last = recfmt_load_u64le(b + B_LAST);
	recfmt_store_u64le(b + B_LAST, first + (last - first) / 2);
	lie_stored(&f, 5);
	b = record_in(&f, 40, RECFMT_BLOCK_INDEX, 0);
	window(from, to, recfmt_load_u64le(b + B_FIRST), recfmt_load_u64le(b + B_FIRST) + 500);
	chrome[1] = from;
	chrome[2] = to;
	chrome[5] = trace;
	setenv("TRACETOOL_INDEX", "1", 1);
	r = tu_runv(chrome);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "index: the writer's ("), "%s", r.err);
	cr_assert(tu_json_valid(r.out));
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1, "%s", r.out);
	snprintf(want, sizeof(want),
		 "frame 5 (index frame at byte %" PRIu64 "): its index frame's sums of EVENTS "
		 "block 0 (thread 1) differ from the block: last ticks\n",
		 f.ix[5]);
	cr_assert(strstr(r.err, want), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n') + 1, r.err + strlen(r.err), "one line: %s", r.err);
	tu_result_free(&r);
	free(f.p);
}

/*
 * A BLOCK_INDEX record whose size runs 2 GiB past its index frame, its sums
 * and hashes right. check took the record whole and held the frame's next
 * record against bytes 2 GiB past the index frame (a read out of bounds, a
 * crash); now the record is the index frame's last word on that block: one
 * line, exit 1. A window reads the file through the pass index.
 */
Test(index_hostile, a_block_index_record_longer_than_its_index_frame_is_refused)
{
	struct file f;
	struct tu_result r;
	char want[200];
	const unsigned k = 9;
	const uint8_t *rec;
	struct recfmt_record ir = { 0 };
	uint32_t nr = 0, pos = 0;

	craft(&f);
	rec = f.p + f.ix[k] + 8 + RECFMT_INDEX_HEAD_BYTES;
	/* Its first BLOCK_INDEX: the how-manieth record of the frame. */
	while (recfmt_record_at(rec, recfmt_load_u32le(f.p + f.ix[k] + 8 + 40), pos, &ir) &&
	       ir.type != RECFMT_BLOCK_INDEX) {
		pos += 8 + ir.size;
		nr++;
	}
	cr_assert_eq(ir.type, RECFMT_BLOCK_INDEX);
	recfmt_store_u32le(f.p + f.ix[k] + 8 + RECFMT_INDEX_HEAD_BYTES + pos + 4, 0x7ffffff0u);
	lie_stored(&f, k);
	setenv("TRACETOOL_INDEX", "1", 1);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	snprintf(want, sizeof(want),
		 "frame %u (index frame at byte %" PRIu64 "): record %" PRIu32
		 " is an EVENTS block, its index frame does not say so\n",
		 k, f.ix[k], nr);
	cr_assert(strstr(r.err, want), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n') + 1, r.err + strlen(r.err), "one line: %s", r.err);
	tu_result_free(&r);
	same_as_pass_at(&f, 40, 500, "index: not the writer's (a damaged index frame)");
	free(f.p);
}

/*
 * info and check count the index frames and say how a window reads the
 * file: an honest file (through them; whole, under 4 MiB, unless
 * TRACETOOL_INDEX=1), one index frame removed (a frame without one: a pass),
 * one damaged (check: exit 1, the frame named).
 */
Test(index_hostile, info_and_check_count_the_index_frames)
{
	struct file f, g;
	struct tu_result r;
	char want[256];
	uint64_t at, len;

	craft(&f);
	setenv("TRACETOOL_INDEX", "1", 1);
	r = tu_run("info", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "\nindex frames:     %u of %u frames; windows read it through them\n",
		 f.nr_ix, f.nr_ix);
	cr_assert(strstr(r.out, want), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert(tu_json_valid(r.out));
	cr_assert_eq(tt_json_u64(r.out, "index_frames"), f.nr_ix);
	cr_assert_eq(tt_json_u64(r.out, "frames_without_index"), 0);
	cr_assert_eq(tt_json_u64(r.out, "bad_index_frames"), 0);
	cr_assert(strstr(r.out, "\"window_read\":\"index_frames\""), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "; index frames: %u of %u frames; windows read it through them\n",
		 f.nr_ix, f.nr_ix);
	cr_assert(strstr(r.out, want), "%s", r.out);
	tu_result_free(&r);
	unsetenv("TRACETOOL_INDEX");
	r = tu_run("check", trace, NULL);
	cr_assert(strstr(r.out, "; windows read it whole (under 4 MiB)\n"), "%s", r.out);
	tu_result_free(&r);

	/* Frame 7's index frame removed. */
	at = f.ix[7];
	len = 8 + recfmt_load_u32le(f.p + at + 4);
	splice(&f, &g, at, len, NULL, 0);
	store(&g);
	setenv("TRACETOOL_INDEX", "1", 1);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want),
		 "; index frames: %u of %u frames (1 without one, the first: frame 7); windows "
		 "read it through an index made by a pass (a frame without its index frame",
		 f.nr_ix - 1, f.nr_ix);
	cr_assert(strstr(r.out, want), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert(tu_json_valid(r.out));
	cr_assert_eq(tt_json_u64(r.out, "frames_without_index"), 1);
	cr_assert(strstr(r.out, "\"window_read\":\"pass_index\",\"window_read_why\":\"a frame "),
		  "%s", r.out);
	tu_result_free(&r);

	/* A byte of frame 3's index frame: its hash is wrong. */
	f.p[f.ix[3] + 8 + RECFMT_INDEX_HEAD_BYTES + 3] ^= 0x40;
	store(&f);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1, "%s", r.out);
	snprintf(want, sizeof(want),
		 "frame 3 (index frame at byte %" PRIu64 "): its index frame is damaged (its "
		 "hash) or of a newer version\n",
		 f.ix[3]);
	cr_assert(strstr(r.err, want), "%s", r.err);
	tu_result_free(&r);
	free(f.p);
	free(g.p);
}

/* fuzz/corpus/index/NAME (FUZZ_CORPUS, from meson), in one of two buffers. */
static const char *index_seed(const char *name)
{
	static char paths[2][TU_PATH_MAX];
	static unsigned k;
	const char *dir = getenv("FUZZ_CORPUS");
	char index_dir[TU_PATH_MAX];

	cr_assert(dir, "FUZZ_CORPUS is not set (run through meson test)");
	return tu_join(paths[k++ % 2], tu_join(index_dir, dir, "index"), name);
}

/*
 * The index frames of the file at path, which holds only index frames and
 * their data frames: how many, how many packed (FORMAT.md §6.3), and the
 * offset of index frame 1 in *frame1.
 */
static unsigned walk_index_frames(const char *path, unsigned *nr_packed, size_t *frame1)
{
	size_t n, at = 0;
	uint8_t *p = (uint8_t *)tu_read_file(path, &n);
	unsigned nr = 0;

	cr_assert(p, "%s", path);
	*nr_packed = 0;
	while (n - at >= 8 && RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(p + at))) {
		*nr_packed += recfmt_load_u32le(p + at) == RECFMT_INDEX_PACKED_MAGIC;
		if (nr++ == 1)
			*frame1 = at;
		at += 8 + recfmt_load_u32le(p + at + 4) + recfmt_load_u64le(p + at + 8 + 16);
	}
	cr_assert_eq(at, n, "%s: frames end at %zu of %zu bytes", path, at, n);
	free(p);
	return nr;
}

/*
 * The seeds of packed index frames (FORMAT.md §6.3) in fuzz/corpus/index,
 * which fuzz_replay_index replays: librec_packed_index, a librec recording
 * of short threads (fuzz/rec_short_threads 3 16) whose index frames after
 * the first are packed, and three lies that `gen_seeds --packed-lies` told
 * in its first packed one (frame 1's), each sealed with a right hash: its
 * zstd frame cut in half, a zstd frame (and records_bytes) that claims 64
 * bytes more than it holds, records_bytes over 32 MiB. A lie is refused:
 * check exits 1 with one line naming frame 1 and why; the reports read the
 * file as the recording itself (its data frames are the same bytes), a
 * window through an index made by a pass.
 */
Test(index_hostile, packed_index_frame_lies_of_the_fuzz_corpus_are_refused_with_one_line)
{
	static const struct {
		const char *name, *why, *index;
	} lies[] = {
		{ "lie_packed_zstd_cut", "its index frame's packed records do not decompress",
		  "index: not the writer's (a damaged index frame)\n" },
		{ "lie_packed_zstd_claims_more", "its index frame's packed records do not decompress",
		  "index: not the writer's (a damaged index frame)\n" },
		{ "lie_packed_over_32_mib", "its index frame is damaged (its hash) or of a newer version",
		  "index: not the writer's (a damaged index frame, or a newer one)\n" },
	};
	const char *seed = index_seed("librec_packed_index");
	struct tu_result r, good[TT_WINDOW_REPORTS];
	size_t frame1 = 0;
	unsigned nr_packed, nr_ix = walk_index_frames(seed, &nr_packed, &frame1);
	uint8_t *p = (uint8_t *)tu_read_file(seed, NULL);
	char want[512];

	/* The seed: plain index frame 0, packed ones after it (1 among them), all right. */
	cr_assert(p, "%s", seed);
	cr_assert_eq(recfmt_load_u32le(p), RECFMT_INDEX_FRAME_MAGIC);
	cr_assert_eq(recfmt_load_u32le(p + frame1), RECFMT_INDEX_PACKED_MAGIC);
	cr_assert_geq(nr_packed, 2, "%u of %u index frames packed", nr_packed, nr_ix);
	free(p);
	r = tu_run("check", seed, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	setenv("TRACETOOL_INDEX", "1", 1);
	for (unsigned c = 0; c < TT_WINDOW_REPORTS; c++) {
		const char *args[8];

		good[c] = tu_runv(tt_window_args(args, c, "--from=10ms", "--to=30ms", seed));
		cr_assert_eq(good[c].status, 0, "%s", good[c].err);
		cr_assert(strstr(good[c].err, "index: the writer's"), "%s", good[c].err);
	}

	for (unsigned i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		const char *lie = index_seed(lies[i].name);

		r = tu_run("check", lie, NULL);
		cr_assert_eq(r.status, 1, "%s: %s", lies[i].name, r.out);
		cr_assert_str_eq(r.out, "", "%s", lies[i].name);
		snprintf(want, sizeof(want), "tracetool: %s: frame 1 (index frame at byte %zu): %s\n",
			 lie, frame1, lies[i].why);
		cr_assert_str_eq(r.err, want);
		tu_result_free(&r);
		for (unsigned c = 0; c < TT_WINDOW_REPORTS; c++) {
			const char *args[8];

			r = tu_runv(tt_window_args(args, c, "--from=10ms", "--to=30ms", lie));
			cr_assert_eq(r.status, 0, "%s: %s", lies[i].name, r.err);
			cr_assert(strstr(r.err, lies[i].index), "%s: %s", lies[i].name, r.err);
			cr_assert_eq(r.out_len, good[c].out_len, "%s: report %u", lies[i].name, c);
			cr_assert(memcmp(r.out, good[c].out, r.out_len) == 0, "%s: report %u differs",
				  lies[i].name, c);
			tu_result_free(&r);
		}
	}
	for (unsigned c = 0; c < TT_WINDOW_REPORTS; c++)
		tu_result_free(&good[c]);
	unsetenv("TRACETOOL_INDEX");
}

/*
 * info and check say how many of the right index frames are packed
 * (FORMAT.md §6.3): tracegen's plain ones none (JSON packed_index_frames 0,
 * no words), librec_packed_index's and those of its lie that holds, with
 * its wrong one not among them. They counted them with the plain ones and
 * never said how many were packed.
 */
Test(index_hostile, info_and_check_count_the_packed_index_frames)
{
	const char *seed = index_seed("librec_packed_index");
	const char *lie = index_seed("lie_packed_zstd_cut");
	struct tu_result r;
	struct file f;
	size_t frame1 = 0;
	unsigned nr_packed, nr_ix = walk_index_frames(seed, &nr_packed, &frame1);
	char want[512];

	cr_assert_geq(nr_packed, 2, "%u of %u index frames packed", nr_packed, nr_ix);
	r = tu_run("info", seed, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want),
		 "\nindex frames:     %u of %u frames (%u packed); windows read it whole (under 4 "
		 "MiB)\n",
		 nr_ix, nr_ix, nr_packed);
	cr_assert(strstr(r.out, want), "want %s in %s", want, r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", seed, NULL);
	cr_assert(tu_json_valid(r.out));
	cr_assert_eq(tt_json_u64(r.out, "index_frames"), nr_ix);
	cr_assert_eq(tt_json_u64(r.out, "packed_index_frames"), nr_packed);
	cr_assert_eq(tt_json_u64(r.out, "bad_index_frames"), 0);
	tu_result_free(&r);
	r = tu_run("check", seed, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "; index frames: %u of %u frames (%u packed); windows read",
		 nr_ix, nr_ix, nr_packed);
	cr_assert(strstr(r.out, want), "want %s in %s", want, r.out);
	tu_result_free(&r);

	/* Frame 1's packed index frame is wrong: the others packed, and it wrong. */
	r = tu_run("info", lie, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want),
		 "\nindex frames:     %u of %u frames (%u packed), 1 wrong (the first: frame 1, its "
		 "index frame's packed records do not decompress); windows read it whole (under 4 "
		 "MiB)\n",
		 nr_ix - 1, nr_ix, nr_packed - 1);
	cr_assert(strstr(r.out, want), "want %s in %s", want, r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", lie, NULL);
	cr_assert_eq(tt_json_u64(r.out, "index_frames"), nr_ix - 1);
	cr_assert_eq(tt_json_u64(r.out, "packed_index_frames"), nr_packed - 1);
	cr_assert_eq(tt_json_u64(r.out, "bad_index_frames"), 1);
	tu_result_free(&r);

	/* tracegen's index frames are plain. */
	craft(&f);
	r = tu_run("info", trace, NULL);
	cr_assert_null(strstr(r.out, "packed"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(tt_json_u64(r.out, "index_frames"), f.nr_ix);
	cr_assert_eq(tt_json_u64(r.out, "packed_index_frames"), 0);
	tu_result_free(&r);
	free(f.p);
}
