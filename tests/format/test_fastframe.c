/* SPDX-License-Identifier: MIT */
/*
 * test_fastframe.c - frames the writer compresses fast under pressure
 * (recfmt_compressor_set_fast(): raw literals; FRAME flag RECFMT_FRAME_FAST,
 * FORMAT.md §3.1) are ordinary zstd frames: every event comes back exact
 * through format/'s reader, the flag is read back on the fast frame only,
 * and `tracetool info` (TRACETOOL) counts the events and the fast frames.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>

#include "recfmt.h"
#include "testutil.h"

#define NR_EVENTS 200000

static char path[64];

static void make_path(void)
{
	snprintf(path, sizeof(path), "/tmp/rec_fastframe_%d.zst", (int)getpid());
}

static void cleanup(void)
{
	unlink(path);
}

TestSuite(fastframe, .init = make_path, .fini = cleanup, .timeout = 30);

/* A tight loop's events: enter/exit pairs of two sites, jittered deltas. */
static void make_events(struct recfmt_event *ev, size_t nr)
{
	uint64_t t = 5000;
	uint32_t seed = 777;

	for (size_t i = 0; i < nr; i++) {
		seed = seed * 1103515245u + 12345u;
		t += 20 + (seed >> 26);
		ev[i].ticks = t;
		ev[i].code = RECFMT_CODE(1 + (uint32_t)(i / 2 % 2), i & 1);
		ev[i].aux = 0;
	}
}

static size_t write_frame(FILE *f, struct recfmt_compressor *c, struct recfmt_buf *frame)
{
	struct recfmt_buf out;
	size_t n;

	recfmt_buf_init(&out);
	cr_assert_eq(recfmt_compress_frame(c, frame, &out), 0);
	cr_assert_eq(fwrite(out.data, 1, out.len, f), out.len);
	n = out.len;
	recfmt_buf_fini(&out);
	frame->len = 0;
	return n;
}

/* One frame of half the events, with the given FRAME flags. */
static void encode_half(struct recfmt_buf *frame, struct recfmt_buf *scratch, uint32_t seq,
			uint32_t flags, const struct recfmt_event *ev)
{
	struct recfmt_events_encoder enc;

	cr_assert_eq(recfmt_encode_frame_flags(frame, seq, flags), 0);
	if (seq == 0) {
		struct recfmt_header hdr = { .clock = RECFMT_CLOCK_TSC, .pid = 1,
					     .ticks_per_second = 1000000000u, .start_ticks = 1000 };
		struct recfmt_sync sync = { 1000, 1, 1 };

		cr_assert_eq(recfmt_encode_header(frame, &hdr), 0);
		cr_assert_eq(recfmt_encode_sync(frame, &sync), 0);
		cr_assert_eq(recfmt_encode_site(frame, 1, 10, "a", "x.c"), 0);
		cr_assert_eq(recfmt_encode_site(frame, 2, 20, "b", "x.c"), 0);
		cr_assert_eq(recfmt_encode_thread(frame, 1, 42, "w"), 0);
	}
	cr_assert_eq(recfmt_events_begin(&enc, frame, scratch, 1, ev[0].ticks), 0);
	cr_assert_eq(recfmt_events_append(&enc, ev, NR_EVENTS / 2), 0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
}

Test(fastframe, fast_frames_read_back_exact_and_are_counted)
{
	struct recfmt_event *ev = calloc(NR_EVENTS, sizeof(*ev));
	struct recfmt_compressor *c = recfmt_compressor_create(1);
	struct recfmt_buf frame, scratch, same;
	struct recfmt_end end = { .end_ticks = 0, .nr_events = NR_EVENTS };
	size_t normal_bytes, fast_bytes;
	FILE *f = fopen(path, "wb");

	cr_assert(ev && c && f);
	make_events(ev, NR_EVENTS);
	end.end_ticks = ev[NR_EVENTS - 1].ticks;
	recfmt_buf_init(&frame);
	recfmt_buf_init(&scratch);
	recfmt_buf_init(&same);
	/* Frame 0 normal, frame 1 fast (as the writer switches), frame 2 normal again. */
	encode_half(&frame, &scratch, 0, 0, ev);
	write_frame(f, c, &frame);
	encode_half(&frame, &scratch, 1, RECFMT_FRAME_FAST, ev + NR_EVENTS / 2);
	cr_assert_eq(recfmt_buf_reserve(&same, frame.len), 0);
	memcpy(same.data, frame.data, frame.len);
	same.len = frame.len;
	recfmt_compressor_set_fast(c, true);
	fast_bytes = write_frame(f, c, &frame);
	recfmt_compressor_set_fast(c, false);
	cr_assert_eq(recfmt_encode_frame(&frame, 2), 0);
	cr_assert_eq(recfmt_encode_end(&frame, &end), 0);
	write_frame(f, c, &frame);
	fclose(f);
	/* The same content compressed normally: the fast frame left its deltas raw. */
	{
		struct recfmt_buf out;

		recfmt_buf_init(&out);
		cr_assert_eq(recfmt_compress_frame(c, &same, &out), 0);
		normal_bytes = out.len;
		recfmt_buf_fini(&out);
	}
	cr_assert_gt(fast_bytes, normal_bytes, "fast %zu bytes, normal %zu", fast_bytes, normal_bytes);

	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	const uint8_t *data;
	size_t len, next = 0, nr_frames = 0;

	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK);
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor cur;
		struct recfmt_record rec;
		uint32_t seq;

		recfmt_cursor_init(&cur, data, len);
		cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
		cr_assert_eq(recfmt_decode_frame(&rec, &seq, &err), RECFMT_OK);
		cr_assert_eq(seq, nr_frames);
		cr_assert_eq(rec.size, seq == 1 ? 12u : 8u);
		cr_assert_eq(recfmt_frame_flags(&rec), seq == 1 ? RECFMT_FRAME_FAST : 0u);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			struct recfmt_events_iter it;
			uint64_t ticks;
			uint32_t code;
			int rc;

			if (rec.type != RECFMT_EVENTS)
				continue;
			cr_assert_eq(recfmt_events_open(&rec, &it, &err), RECFMT_OK);
			while ((rc = recfmt_events_next(&it, &ticks, &code)) == 1) {
				cr_assert_eq(ticks, ev[next].ticks, "event %zu", next);
				cr_assert_eq(code, ev[next].code, "event %zu", next);
				next++;
			}
			cr_assert_eq(rc, 0);
		}
		nr_frames++;
	}
	recfmt_reader_close(r);
	cr_assert_eq(nr_frames, 3);
	cr_assert_eq(next, NR_EVENTS);

	/* tracetool reads it like any other file, and counts the fast frame. */
	const char *tt = getenv("TRACETOOL");
	char cmd[512], *out;
	int status;

	cr_assert_not_null(tt, "TRACETOOL is not set");
	snprintf(cmd, sizeof(cmd), "%s info --format=json %s", tt, path);
	out = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	cr_assert_not_null(strstr(out, "\"events\":200000,"), "%s", out);
	cr_assert_not_null(strstr(out, "\"frames\":3,"), "%s", out);
	cr_assert_not_null(strstr(out, "\"fast_frames\":1"), "%s", out);
	cr_assert_not_null(strstr(out, "\"problems\":null"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s summary %s", tt, path);
	out = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "%s", out);
	/* 50 000 activations of each site. */
	cr_assert_not_null(strstr(out, "50000"), "%s", out);
	free(out);
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&scratch);
	recfmt_buf_fini(&same);
	recfmt_compressor_destroy(c);
	free(ev);
}
