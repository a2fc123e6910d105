/* SPDX-License-Identifier: MIT */
/*
 * test_index_cache.c - finding F5: a damaged cached frame index (engine/
 * index.h, tracetool(1) FILES) never makes a valid trace unreadable. The
 * cache of a small trace is written by a pass, then, one case at a time,
 * every byte of it flipped, the file cut at every offset, and counts that
 * lie under a checksum made right again: each time tt_index_for() must
 * ignore the cache and make the same index by a pass (the same frames,
 * stand-ins and window plans as the good cache gives), never fail, never
 * allocate what a count in the cache claims.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/index.h"
#include "ttest.h"

static char dir[TU_TMPDIR_MAX], trace[TU_PATH_MAX], cache[TU_PATH_MAX];

static void setup(void)
{
	tu_join(trace, tu_tmpdir(dir, "tt-index-cache"), "t.zst");
	setenv("TRACETOOL_INDEX_DIR", dir, 1);
	setenv("TRACETOOL_INDEX", "pass", 1);
}

static void teardown(void)
{
	tu_tmpdir_remove(dir);
}

TestSuite(index_cache, .init = setup, .fini = teardown, .timeout = 300);

/* main open throughout, f calls g on two threads, small frames: about 20. */
static void write_trace(void)
{
	struct tg_trace *t = tt_main_f_g(trace, 1 << 10, 64, false);
	uint64_t now = 1000;

	tg_thread(t, 2, 78, "worker");
	for (uint32_t th = 1; th <= 2; th++)
		tg_enter(t, th, 1, now += 5);
	for (unsigned i = 0; i < 1500; i++) {
		uint32_t th = 1 + i % 2;

		tg_enter(t, th, 2, now += 10);
		tg_enter(t, th, 3, now += 10);
		tg_exit(t, th, 3, now += 30);
		tg_exit(t, th, 2, now += 50);
	}
	cr_assert_eq(tg_finish(t, true), 0);
}

/* What an index says: its frames, their stand-ins, and the plans of a few
 * windows (which use the stacks), as text. */
static char *fingerprint(struct tt_index *ix)
{
	static const uint64_t windows[][2] = { { 0, 2000 }, { 40000, 41000 },
					       { 90000, 120000 }, { 500000, 600000 } };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	cr_assert(ix);
	fprintf(f, "%" PRIu32 " frames\n", tt_index_nr_frames(ix));
	for (uint32_t i = 0; i < tt_index_nr_frames(ix); i++) {
		uint64_t off, cb, content;
		size_t n;
		const uint8_t *s = tt_index_standin(ix, i, &n);

		tt_index_frame(ix, i, &off, &cb, &content);
		fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " ", off, cb, content);
		for (size_t k = 0; k < n; k++)
			fprintf(f, "%02x", s[k]);
		fputc('\n', f);
	}
	for (unsigned w = 0; w < 4; w++) {
		struct tt_index_plan p;
		bool ok = tt_index_plan(ix, true, windows[w][0], windows[w][1], &p);

		fprintf(f, "plan %d %d %" PRIu32 " %" PRIu32 " ", ok, p.decode, p.first, p.last);
		for (size_t k = 0; k < p.replay_len; k++)
			fprintf(f, "%02x", p.replay[k]);
		fputc('\n', f);
		tt_index_plan_fini(&p);
	}
	fclose(f);
	return out;
}

/* The cache file the pass wrote (the only index-*.idx in dir), its bytes. */
static uint8_t *read_cache(size_t *len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint8_t *buf;

	cr_assert(d);
	cache[0] = '\0';
	while ((e = readdir(d)))
		if (strncmp(e->d_name, "index-", 6) == 0 && strstr(e->d_name, ".idx"))
			tu_join(cache, dir, e->d_name);
	closedir(d);
	cr_assert(cache[0], "no cache file in %s", dir);
	buf = (uint8_t *)tu_read_file(cache, len);
	cr_assert(buf, "cannot read %s", cache);
	return buf;
}

/* The cache replaced by len bytes of buf, then the index of the trace
 * (fresh: tt_index_forget()) must be good's. */
static void expect_ignored(const uint8_t *buf, size_t len, const char *good, const char *what,
			   size_t at)
{
	FILE *f = fopen(cache, "wb");
	char *got;

	cr_assert(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	tt_index_forget();
	got = fingerprint(tt_index_for(trace));
	cr_expect_str_eq(got, good, "%s at %zu: the cache was used", what, at);
	free(got);
}

static char *good_index(uint8_t **buf, size_t *len)
{
	char *good, *again;

	write_trace();
	tt_index_forget();
	good = fingerprint(tt_index_for(trace)); /* by a pass, saved */
	*buf = read_cache(len);
	cr_assert_gt(*len, 200);
	tt_index_forget();
	again = fingerprint(tt_index_for(trace)); /* from the cache */
	cr_assert_str_eq(again, good);
	cr_assert_gt(tt_index_nr_frames(tt_index_for(trace)), 10);
	free(again);
	return good;
}

Test(index_cache, a_cache_with_any_byte_flipped_is_ignored_and_made_again_F5)
{
	uint8_t *buf;
	size_t len;
	char *good = good_index(&buf, &len);

	for (size_t at = 0; at < len; at++) {
		buf[at] ^= 0x41;
		expect_ignored(buf, len, good, "a flip", at);
		buf[at] ^= 0x41;
	}
	free(buf);
	free(good);
}

Test(index_cache, a_cache_cut_at_any_offset_is_ignored_and_made_again_F5)
{
	uint8_t *buf;
	size_t len;
	char *good = good_index(&buf, &len);

	for (size_t at = 0; at < len; at++)
		expect_ignored(buf, at, good, "a cut", at);
	free(buf);
	free(good);
}

/* The cache's layout (engine/index.c): a 280-byte head (nr_frames at 12,
 * standin_bytes at 48, stack_bytes at 56), 72 bytes a frame (cbytes at 8,
 * content_bytes at 16, stack_at at 48, stack_len at 60), the stand-ins,
 * the stacks (16-byte deltas, add at 8), an xxh64 of all that. */
#define HEAD 280

static void reseal(uint8_t *buf, size_t len)
{
	struct recfmt_xxh64 x;
	uint64_t sum;

	recfmt_xxh64_init(&x, 0x52454354544958ull);
	recfmt_xxh64_update(&x, buf, len - 8);
	sum = recfmt_xxh64_digest(&x);
	memcpy(buf + len - 8, &sum, 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

Test(index_cache, a_cache_whose_counts_lie_under_a_right_checksum_is_ignored_F5)
{
	uint8_t *buf, *bad;
	size_t len;
	char *good = good_index(&buf, &len);
	uint32_t nr;
	uint64_t standin_bytes;
	bool lied_add = false;

	memcpy(&nr, buf + 12, 4);
	standin_bytes = get_u64(buf + 48);
	bad = malloc(len);
	cr_assert(bad);
	/* Each lie alone, the checksum made right for it. */
	for (unsigned lie = 0; lie < 7; lie++) {
		memcpy(bad, buf, len);
		switch (lie) {
		case 0: /* far more frames than the file holds */
			put_u32(bad + 12, 1u << 27);
			break;
		case 1: /* a 16 GiB stand-in blob */
			put_u64(bad + 48, 1ull << 34);
			break;
		case 2: /* frame 3 longer than the trace */
			put_u64(bad + HEAD + 3 * 72 + 8, 1ull << 40);
			break;
		case 3: /* frame 3 decompressing to 1 TiB */
			put_u64(bad + HEAD + 3 * 72 + 16, 1ull << 40);
			break;
		case 4: /* frame 2 where frame 1 is */
			put_u64(bad + HEAD + 2 * 72, get_u64(bad + HEAD + 1 * 72));
			break;
		case 5: /* frame 5's stand-in past the blob's end */
			put_u64(bad + HEAD + 5 * 72 + 40, standin_bytes);
			break;
		case 6: /* a stack delta with 2^31 entries */
			for (uint32_t f = 0; f < nr && !lied_add; f++) {
				const uint8_t *fr = bad + HEAD + (size_t)f * 72;
				uint32_t stack_len;

				memcpy(&stack_len, fr + 60, 4);
				if (!stack_len)
					continue;
				put_u32(bad + HEAD + (size_t)nr * 72 + standin_bytes + get_u64(fr + 48) +
						8,
					1u << 31);
				lied_add = true;
			}
			cr_assert(lied_add, "no frame with stack deltas");
			break;
		}
		reseal(bad, len);
		expect_ignored(bad, len, good, "a lie", lie);
	}
	free(bad);
	free(buf);
	free(good);
}

/*
 * info's and check's words on index frames (tt_index_survey_text()): the
 * packed ones among the right ones first in the parentheses, before the
 * frames without one, so that a crashed recording's note stays as it was.
 */
Test(index_text, packed_index_frames_are_counted_before_the_frames_without_one)
{
	struct tt_index_survey s = { .nr_frames = 5, .nr_indexed = 5, .nr_packed = 3,
				     .window = TT_WINDOW_INDEX_FRAMES };
	char text[512];

	tt_index_survey_text(&s, false, text, sizeof(text));
	cr_assert_str_eq(text, "index frames: 5 of 5 frames (3 packed); windows read it through them");
	s.nr_indexed = 4;
	s.nr_missing = 1;
	s.first_missing = 4;
	s.window = TT_WINDOW_WHOLE;
	s.window_why = "under 4 MiB";
	tt_index_survey_text(&s, true, text, sizeof(text));
	cr_assert_str_eq(text, "index frames: 4 of 5 frames (3 packed; the last has none: the crash "
			       "handler writes none); windows read it whole (under 4 MiB)");
	tt_index_survey_text(&s, false, text, sizeof(text));
	cr_assert_str_eq(text, "index frames: 4 of 5 frames (3 packed; 1 without one, the first: "
			       "frame 4); windows read it whole (under 4 MiB)");
	s.nr_packed = 0;
	tt_index_survey_text(&s, false, text, sizeof(text));
	cr_assert_str_eq(text, "index frames: 4 of 5 frames (1 without one, the first: frame 4); "
			       "windows read it whole (under 4 MiB)");
}
