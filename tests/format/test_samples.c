/* SPDX-License-Identifier: MIT */
/*
 * test_samples.c - stack samples (FORMAT.md §3.22-§3.24, version 1.3):
 * SAMPLING, SAMPLES and SAMPLE_DROPS written through format/'s encoder come
 * back identical through its decoder, with shared outermost frames, and a
 * damaged SAMPLES record is refused at the row that is wrong. The bytes of
 * FORMAT.md §4.2's worked example are checked exactly.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "recfmt.h"
#include "tracegen.h"

TestSuite(samples, .timeout = 30);

/* The records of one buffer, in order. */
static size_t records(const struct recfmt_buf *b, struct recfmt_record *rec, size_t max)
{
	struct recfmt_cursor cur;
	struct recfmt_error err = { 0 };
	size_t n = 0;

	recfmt_cursor_init(&cur, b->data, b->len);
	while (n < max && recfmt_cursor_next(&cur, &rec[n], &err) == RECFMT_OK)
		n++;
	return n;
}

Test(samples, sampling_record_is_the_worked_example)
{
	static const uint8_t want[] = {
		0x18, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0xe5, 0x03, 0x00, 0x00,
		0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00,
		0x01, 0x4e, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct recfmt_sampling in = { .hz = 997, .clock = 1, .mechanism = 1, .max_frames = 128,
				      .period_ns = 1003009 };
	struct recfmt_buf b;

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_sampling(&b, &in), 0);
	cr_assert_eq(b.len, sizeof(want));
	cr_assert_arr_eq(b.data, want, sizeof(want));
	recfmt_buf_fini(&b);
}

Test(samples, sampling_and_drops_round_trip)
{
	struct recfmt_buf b;
	struct recfmt_record rec[4];
	struct recfmt_sampling in = { .hz = 997, .clock = RECFMT_SAMPLE_CLOCK_THREAD_CPU,
				      .mechanism = RECFMT_SAMPLE_MECH_TIMER_UNWIND,
				      .max_frames = 128, .period_ns = 1003009 },
			       out;
	struct recfmt_sample_drops d;
	struct recfmt_error err = { 0 };

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_sampling(&b, &in), 0);
	cr_assert_eq(recfmt_encode_sample_drops(&b, 3, 41), 0);
	in.hz = 0;
	cr_assert_eq(recfmt_encode_sampling(&b, &in), -EINVAL, "a rate of 0 is refused");
	cr_assert_eq(records(&b, rec, 4), 2);
	cr_assert_eq(rec[0].type, RECFMT_SAMPLING);
	cr_assert_eq(rec[0].size, 24);
	cr_assert_eq(recfmt_decode_sampling(&rec[0], &out, &err), RECFMT_OK);
	cr_assert_eq(out.hz, 997);
	cr_assert_eq(out.clock, 1);
	cr_assert_eq(out.mechanism, 1);
	cr_assert_eq(out.max_frames, 128);
	cr_assert_eq(out.period_ns, 1003009);
	cr_assert_eq(rec[1].type, RECFMT_SAMPLE_DROPS);
	cr_assert_eq(recfmt_decode_sample_drops(&rec[1], &d, &err), RECFMT_OK);
	cr_assert_eq(d.thread, 3);
	cr_assert_eq(d.nr_dropped, 41);
	recfmt_buf_fini(&b);
}

/* Deterministic stacks: a common root, varying depth, some shared, some not. */
static uint32_t make_stack(uint32_t i, uint64_t *f)
{
	uint32_t n = 1 + (i * 7) % 40;

	if (i % 97 == 0)
		n = RECFMT_MAX_SAMPLE_FRAMES; /* the deepest */
	for (uint32_t k = 0; k < n; k++) {
		uint32_t depth = n - 1 - k; /* 0 = outermost */

		f[k] = 0x555555554000ull + 0x100 * depth + (depth > 20 ? i % 3 : 0);
	}
	if (i % 5 == 0)
		f[0] = 0x7ffff7dd0000ull + i; /* a leaf in a library */
	if (i % 13 == 0)
		f[n - 1] = 0x10; /* an odd root: nothing shared */
	return n;
}

Test(samples, thousand_stacks_round_trip_with_shared_frames)
{
	enum { N = 1000 };
	static uint64_t want[RECFMT_MAX_SAMPLE_FRAMES];
	static struct recfmt_samples_encoder enc;
	static struct recfmt_samples_iter it;
	struct recfmt_buf b;
	struct recfmt_record rec;
	struct recfmt_cursor cur;
	struct recfmt_error err = { 0 };
	struct recfmt_sample s;
	size_t raw = 0;
	uint64_t ticks = 5000;

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_samples_begin(&enc, &b, 7, ticks), 0);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t n = make_stack(i, want);

		ticks += (i % 11 == 0) ? (uint64_t)-3 : 1000003; /* a step back too */
		s = (struct recfmt_sample){ .flags = i % 97 == 0 ? RECFMT_SAMPLE_TRUNCATED : 0,
					    .ticks = ticks, .nr_frames = n, .frames = want };
		cr_assert_eq(recfmt_samples_append(&enc, &s), 0);
		raw += 8 * (size_t)n;
	}
	cr_assert_eq(recfmt_samples_finish(&enc), 0);
	cr_assert_lt(b.len, raw / 4, "shared frames and deltas: %zu bytes for %zu raw", b.len, raw);

	recfmt_cursor_init(&cur, b.data, b.len);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.type, RECFMT_SAMPLES);
	cr_assert_eq(recfmt_samples_open(&rec, &it, &err), RECFMT_OK);
	cr_assert_eq(it.thread, 7);
	cr_assert_eq(it.nr_samples, N);
	ticks = 5000;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t n = make_stack(i, want);

		ticks += (i % 11 == 0) ? (uint64_t)-3 : 1000003;
		cr_assert_eq(recfmt_samples_next(&it, &s, &err), RECFMT_OK, "sample %u: %s", i,
			     err.message);
		cr_assert_eq(s.thread, 7);
		cr_assert_eq(s.ticks, ticks, "sample %u", i);
		cr_assert_eq(s.flags, i % 97 == 0 ? RECFMT_SAMPLE_TRUNCATED : 0u);
		cr_assert_eq(s.nr_frames, n, "sample %u", i);
		cr_assert_arr_eq(s.frames, want, 8 * (size_t)n, "sample %u", i);
	}
	cr_assert_eq(recfmt_samples_next(&it, &s, &err), RECFMT_END_OF_INPUT);
	recfmt_buf_fini(&b);
}

Test(samples, encoder_refuses_empty_and_too_deep_stacks)
{
	static struct recfmt_samples_encoder enc;
	static uint64_t f[RECFMT_MAX_SAMPLE_FRAMES + 1];
	struct recfmt_buf b;
	struct recfmt_sample s = { .ticks = 1, .frames = f };

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_samples_begin(&enc, &b, 1, 0), 0);
	s.nr_frames = 0;
	cr_assert_eq(recfmt_samples_append(&enc, &s), -EINVAL);
	s.nr_frames = RECFMT_MAX_SAMPLE_FRAMES + 1;
	cr_assert_eq(recfmt_samples_append(&enc, &s), -EINVAL);
	s.nr_frames = 1;
	s.flags = 2;
	cr_assert_eq(recfmt_samples_append(&enc, &s), -EINVAL, "unknown flags");
	cr_assert_eq(recfmt_samples_finish(&enc), 0);
	cr_assert_eq(b.len, 0, "a record without samples is discarded");
	recfmt_buf_fini(&b);
}

/* FORMAT.md §4.2's worked example, byte for byte. */
static const uint8_t example[] = {
	0x19, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, /* SAMPLES, 44 bytes */
	0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, /* thread 1, 2 samples */
	0xd0, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* base_ticks 2000 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* reserved */
	/* sample 0: +100 ticks, no flags, 3 frames, none shared */
	0xc8, 0x01, 0x00, 0x03, 0x00,
	0x82, 0xc5, 0xaa, 0xd5, 0xaa, 0xd5, 0x2a, /* 0x555555555141 (zigzag 0xaaaaaaaaa282) */
	0x50, /* 0x555555555169: +40 */
	0x51, /* 0x555555555140: -41 (zigzag 81) */
	/* sample 1: +200 ticks, 2 frames, 1 shared (main's) */
	0x90, 0x03, 0x00, 0x02, 0x01,
	0x5c, /* 0x55555555516e: +46 */
};

Test(samples, worked_example_bytes)
{
	static struct recfmt_samples_encoder enc;
	static struct recfmt_samples_iter it;
	const uint64_t s0[] = { 0x555555555141ull, 0x555555555169ull, 0x555555555140ull };
	const uint64_t s1[] = { 0x55555555516eull, 0x555555555140ull };
	struct recfmt_sample s = { .ticks = 2100, .nr_frames = 3, .frames = s0 };
	struct recfmt_buf b;
	struct recfmt_record rec;
	struct recfmt_cursor cur;
	struct recfmt_error err = { 0 };

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_samples_begin(&enc, &b, 1, 2000), 0);
	cr_assert_eq(recfmt_samples_append(&enc, &s), 0);
	s = (struct recfmt_sample){ .ticks = 2300, .nr_frames = 2, .frames = s1 };
	cr_assert_eq(recfmt_samples_append(&enc, &s), 0);
	cr_assert_eq(recfmt_samples_finish(&enc), 0);
	cr_assert_eq(b.len, sizeof(example));
	cr_assert_arr_eq(b.data, example, sizeof(example));

	recfmt_cursor_init(&cur, example, sizeof(example));
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(recfmt_samples_open(&rec, &it, &err), RECFMT_OK);
	cr_assert_eq(recfmt_samples_next(&it, &s, &err), RECFMT_OK);
	cr_assert_eq(s.ticks, 2100);
	cr_assert_arr_eq(s.frames, s0, sizeof(s0));
	cr_assert_eq(recfmt_samples_next(&it, &s, &err), RECFMT_OK);
	cr_assert_eq(s.ticks, 2300);
	cr_assert_eq(s.nr_frames, 2);
	cr_assert_arr_eq(s.frames, s1, sizeof(s1));
	cr_assert_eq(recfmt_samples_next(&it, &s, &err), RECFMT_END_OF_INPUT);
	recfmt_buf_fini(&b);
}

/* One byte changed in the example: the decoder names the row and stops. */
static enum recfmt_status decode_patched(size_t at, uint8_t v, uint32_t *nr_ok, char *msg)
{
	static struct recfmt_samples_iter it;
	uint8_t bytes[sizeof(example)];
	struct recfmt_record rec;
	struct recfmt_cursor cur;
	struct recfmt_error err = { 0 };
	struct recfmt_sample s;
	enum recfmt_status st;

	memcpy(bytes, example, sizeof(bytes));
	bytes[at] = v;
	recfmt_cursor_init(&cur, bytes, sizeof(bytes));
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	st = recfmt_samples_open(&rec, &it, &err);
	*nr_ok = 0;
	while (st == RECFMT_OK) {
		st = recfmt_samples_next(&it, &s, &err);
		if (st == RECFMT_OK)
			(*nr_ok)++;
	}
	strcpy(msg, err.message);
	return st;
}

Test(samples, damaged_rows_are_refused_where_they_are_wrong)
{
	uint32_t ok;
	char msg[192];

	/* Sample 1 claims 3 shared frames: more than its 2... */
	cr_assert_eq(decode_patched(50, 0x03, &ok, msg), RECFMT_CORRUPT);
	cr_assert_eq(ok, 1, "the first sample stays valid");
	cr_assert_str_eq(msg, "SAMPLES record of thread 1, sample 1: shared frames malformed or "
			      "more than either stack has");
	/* ... the first row claims a shared frame: there is no row before it. */
	cr_assert_eq(decode_patched(36, 0x01, &ok, msg), RECFMT_CORRUPT);
	cr_assert_eq(ok, 0);
	/* No frames at all. */
	cr_assert_eq(decode_patched(35, 0x00, &ok, msg), RECFMT_CORRUPT);
	cr_assert_str_eq(msg, "SAMPLES record of thread 1, sample 0: frame count malformed or "
			      "out of range");
	/* An unknown flag. */
	cr_assert_eq(decode_patched(34, 0x02, &ok, msg), RECFMT_CORRUPT);
	cr_assert_str_eq(msg, "SAMPLES record of thread 1, sample 0: unknown flags");
	/* More samples claimed than rows: the record ends early. */
	cr_assert_eq(decode_patched(12, 0x03, &ok, msg), RECFMT_CORRUPT);
	cr_assert_eq(ok, 2);
	/* Fewer: bytes left over. */
	cr_assert_eq(decode_patched(12, 0x01, &ok, msg), RECFMT_CORRUPT);
	cr_assert_eq(ok, 1);
	cr_assert_str_eq(msg, "SAMPLES record of thread 1 leaves 6 bytes over");
}

/* tracegen (tests/helpers) writes them as a file: the analyzer's tests build on it. */
Test(samples, tracegen_writes_samples_a_reader_reads_back)
{
	static struct recfmt_samples_iter it;
	char path[64];
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .block_events = 3 };
	struct tg_trace *t;
	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	const uint8_t *data;
	size_t len;
	uint64_t stack[3] = { 0x1010, 0x2020, 0x3030 };
	uint32_t nr_samples = 0, nr_sampling = 0, nr_records = 0;
	uint64_t dropped = 0, sum = 0;

	snprintf(path, sizeof(path), "/tmp/rec_samples_%d.zst", (int)getpid());
	t = tg_create(path, &cfg);
	cr_assert_not_null(t);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	cr_assert_eq(tg_thread(t, 1, 11, "main"), 0);
	cr_assert_eq(tg_module(t, 1, "/bin/prog", 0, 0x1000, 0x4000), 0);
	for (uint32_t i = 0; i < 7; i++) {
		stack[0] = 0x1010 + i;
		cr_assert_eq(tg_sample(t, 1, 100 + i, 0, 3 - i % 3, stack + i % 3), 0);
	}
	cr_assert_eq(tg_sample(t, 1, 200, 0, 0, stack), -EINVAL);
	cr_assert_eq(tg_sample_drops(t, 1, 5), 0);
	cr_assert_eq(tg_finish(t, true), 0);

	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK);
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor cur;
		struct recfmt_record rec;

		recfmt_cursor_init(&cur, data, len);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			struct recfmt_sample s;
			struct recfmt_sample_drops d;
			struct recfmt_sampling sp;

			if (rec.type == RECFMT_SAMPLING) {
				cr_assert_eq(recfmt_decode_sampling(&rec, &sp, &err), RECFMT_OK);
				cr_assert_eq(sp.hz, 1000);
				cr_assert_eq(sp.period_ns, 1000000);
				nr_sampling++;
			} else if (rec.type == RECFMT_SAMPLES) {
				nr_records++;
				cr_assert_eq(recfmt_samples_open(&rec, &it, &err), RECFMT_OK);
				while (recfmt_samples_next(&it, &s, &err) == RECFMT_OK) {
					cr_assert_eq(s.ticks, 100 + nr_samples);
					cr_assert_eq(s.nr_frames, 3 - nr_samples % 3);
					cr_assert_eq(s.frames[s.nr_frames - 1], 0x3030);
					sum += s.frames[0];
					nr_samples++;
				}
			} else if (rec.type == RECFMT_SAMPLE_DROPS) {
				cr_assert_eq(recfmt_decode_sample_drops(&rec, &d, &err), RECFMT_OK);
				dropped = d.nr_dropped;
			}
		}
	}
	recfmt_reader_close(r);
	unlink(path);
	cr_assert_eq(nr_sampling, 1);
	cr_assert_eq(nr_samples, 7);
	cr_assert_eq(nr_records, 3, "block_events 3: 3 + 3 + 1 samples");
	cr_assert_eq(dropped, 5);
	/* frame 0: 0x1010 + i for i % 3 == 0 (i = 0, 3, 6), else 0x2020 or 0x3030. */
	cr_assert_eq(sum, 3 * 0x1010 + 9 + 2 * 0x2020 + 2 * 0x3030);
}
