/* SPDX-License-Identifier: MIT */
/*
 * test_roundtrip.c - events and metadata written through format/'s encoder
 * and compressor come back identical through its frame reader and decoder
 * (FORMAT.md §2-§3), including large deltas, backwards clocks, large site
 * ids and blocks split across appends.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>

#include <zstd.h>

#include "recfmt.h"

#define NR_EVENTS 100000

static char path[64];

static void make_path(void)
{
	snprintf(path, sizeof(path), "/tmp/rec_roundtrip_%d.zst", (int)getpid());
}

static void cleanup(void)
{
	unlink(path);
}

TestSuite(format, .init = make_path, .fini = cleanup, .timeout = 30);

static void append_frame(FILE *f, struct recfmt_compressor *c, struct recfmt_buf *frame)
{
	struct recfmt_buf out;

	recfmt_buf_init(&out);
	cr_assert_eq(recfmt_compress_frame(c, frame, &out), 0);
	cr_assert_eq(fwrite(out.data, 1, out.len, f), out.len);
	recfmt_buf_fini(&out);
	frame->len = 0;
}

/* Deterministic events with every delta size, both kinds and backwards steps. */
static void make_events(struct recfmt_event *ev, size_t nr)
{
	uint64_t t = 1000;
	uint32_t seed = 12345;

	for (size_t i = 0; i < nr; i++) {
		seed = seed * 1103515245u + 12345u;
		switch (seed >> 29) {
		case 0: t += seed % 100; break;
		case 1: t += seed % 100000; break;
		case 2: t += (uint64_t)seed << 20; break;
		case 3: t -= seed % 50; break; /* a clock going backwards */
		default: t += 30; break;
		}
		ev[i].ticks = t;
		ev[i].code = RECFMT_CODE((i % 7 == 0) ? 0x7fffffffu - i : 1 + i % 300, i & 1);
		ev[i].aux = 0;
	}
}

Test(format, events_and_metadata_round_trip_through_two_frames)
{
	struct recfmt_event *ev = calloc(NR_EVENTS, sizeof(*ev));
	struct recfmt_buf frame, scratch;
	struct recfmt_compressor *c = recfmt_compressor_create(1);
	struct recfmt_events_encoder enc;
	struct recfmt_header hdr = {
		.clock = RECFMT_CLOCK_TSC, .pid = 77, .ticks_per_second = 2445000000ull,
		.start_ticks = 999, .start_mono_ns = 5, .start_real_ns = 6,
	};
	struct recfmt_sync sync = { 1, 2, 3 };
	struct recfmt_end end = { .end_ticks = 42, .nr_events = NR_EVENTS, .nr_dropped = 9 };
	FILE *f = fopen(path, "wb");

	cr_assert(ev && c && f);
	make_events(ev, NR_EVENTS);
	recfmt_buf_init(&frame);
	recfmt_buf_init(&scratch);

	/* Frame 0: header, sync, site, thread, first half of the events in two appends. */
	cr_assert_eq(recfmt_encode_frame(&frame, 0), 0);
	cr_assert_eq(recfmt_encode_header(&frame, &hdr), 0);
	cr_assert_eq(recfmt_encode_sync(&frame, &sync), 0);
	cr_assert_eq(recfmt_encode_site(&frame, 5, 17, "my_func", "src/x.c"), 0);
	cr_assert_eq(recfmt_encode_thread(&frame, 1, 4242, "worker"), 0);
	cr_assert_eq(recfmt_events_begin(&enc, &frame, &scratch, 1, ev[0].ticks), 0);
	cr_assert_eq(recfmt_events_append(&enc, ev, 1000), 0);
	cr_assert_eq(recfmt_events_append(&enc, ev + 1000, NR_EVENTS / 2 - 1000), 0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	append_frame(f, c, &frame);

	/* Frame 1: an unnamed thread, drops, second half, thread end, end. */
	cr_assert_eq(recfmt_encode_frame(&frame, 1), 0);
	cr_assert_eq(recfmt_encode_thread(&frame, 2, 4243, NULL), 0);
	cr_assert_eq(recfmt_encode_drops(&frame, 1, 7), 0);
	cr_assert_eq(recfmt_events_begin(&enc, &frame, &scratch, 2, ev[NR_EVENTS / 2].ticks), 0);
	cr_assert_eq(recfmt_events_append(&enc, ev + NR_EVENTS / 2, NR_EVENTS / 2), 0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	/* An empty block leaves nothing behind. */
	cr_assert_eq(recfmt_events_begin(&enc, &frame, &scratch, 2, 0), 0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	cr_assert_eq(recfmt_encode_thread_end(&frame,
					      &(struct recfmt_thread_end){ .thread = 2, .nr_events = NR_EVENTS / 2 }),
		     0);
	cr_assert_eq(recfmt_encode_end(&frame, &end), 0);
	append_frame(f, c, &frame);
	fclose(f);

	/* Read it all back. */
	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	const uint8_t *data;
	size_t len, next = 0, nr_frames = 0;
	bool seen_end = false;

	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK);
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor cur;
		struct recfmt_record rec;
		uint32_t seq;

		recfmt_cursor_init(&cur, data, len);
		cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
		cr_assert_eq(recfmt_decode_frame(&rec, &seq, &err), RECFMT_OK);
		cr_assert_eq(seq, nr_frames);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			switch (rec.type) {
			case RECFMT_FILE_HEADER: {
				struct recfmt_header h;
				cr_assert_eq(recfmt_decode_header(&rec, &h, &err), RECFMT_OK);
				cr_assert_eq(h.major, RECFMT_VERSION_MAJOR);
				cr_assert_eq(h.pid, 77);
				cr_assert_eq(h.ticks_per_second, 2445000000ull);
				cr_assert_eq(h.start_ticks, 999);
				cr_assert_eq(h.start_real_ns, 6);
				break;
			}
			case RECFMT_SYNC: {
				struct recfmt_sync s;
				cr_assert_eq(recfmt_decode_sync(&rec, &s, &err), RECFMT_OK);
				cr_assert(s.ticks == 1 && s.mono_ns == 2 && s.real_ns == 3);
				break;
			}
			case RECFMT_SITE: {
				struct recfmt_site s;
				cr_assert_eq(recfmt_decode_site(&rec, &s, &err), RECFMT_OK);
				cr_assert_eq(s.id, 5);
				cr_assert_eq(s.line, 17);
				cr_assert_eq(s.name_bytes, 7);
				cr_assert_eq(memcmp(s.name, "my_func", 7), 0);
				cr_assert_eq(memcmp(s.file, "src/x.c", 7), 0);
				break;
			}
			case RECFMT_THREAD: {
				struct recfmt_thread t;
				cr_assert_eq(recfmt_decode_thread(&rec, &t, &err), RECFMT_OK);
				if (t.thread == 1) {
					cr_assert_eq(t.os_tid, 4242);
					cr_assert_eq(memcmp(t.name, "worker", 6), 0);
				} else {
					cr_assert_null(t.name);
				}
				break;
			}
			case RECFMT_EVENTS: {
				struct recfmt_events_iter it;
				uint64_t ticks;
				uint32_t code;
				int rc;

				cr_assert_eq(recfmt_events_open(&rec, &it, &err), RECFMT_OK);
				while ((rc = recfmt_events_next(&it, &ticks, &code)) == 1) {
					cr_assert_eq(ticks, ev[next].ticks, "event %zu", next);
					cr_assert_eq(code, ev[next].code, "event %zu", next);
					next++;
				}
				cr_assert_eq(rc, 0);
				/* Both columns are used up exactly. */
				cr_assert_eq(it.ids, it.ids_end);
				cr_assert_eq(it.deltas, it.deltas_end);
				break;
			}
			case RECFMT_DROPS: {
				struct recfmt_drops d;
				cr_assert_eq(recfmt_decode_drops(&rec, &d, &err), RECFMT_OK);
				cr_assert(d.thread == 1 && d.nr_dropped == 7);
				break;
			}
			case RECFMT_THREAD_END: {
				struct recfmt_thread_end te;
				cr_assert_eq(recfmt_decode_thread_end(&rec, &te, &err), RECFMT_OK);
				cr_assert(te.thread == 2 && te.nr_events == NR_EVENTS / 2);
				break;
			}
			case RECFMT_END: {
				struct recfmt_end e;
				cr_assert_eq(recfmt_decode_end(&rec, &e, &err), RECFMT_OK);
				cr_assert(e.end_ticks == 42 && e.nr_events == NR_EVENTS && e.nr_dropped == 9);
				seen_end = true;
				break;
			}
			default:
				cr_assert_fail("unexpected record type %u", rec.type);
			}
		}
		nr_frames++;
	}
	cr_assert_eq(nr_frames, 2);
	cr_assert_eq(next, NR_EVENTS);
	cr_assert(seen_end);
	recfmt_reader_close(r);
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&scratch);
	recfmt_compressor_destroy(c);
	free(ev);
}

Test(format, reader_reports_a_file_cut_inside_a_frame_as_truncated)
{
	struct recfmt_buf frame, out;
	struct recfmt_compressor *c = recfmt_compressor_create(1);
	FILE *f = fopen(path, "wb");

	recfmt_buf_init(&frame);
	recfmt_buf_init(&out);
	cr_assert_eq(recfmt_encode_frame(&frame, 0), 0);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(recfmt_encode_site(&frame, (uint32_t)i + 1, 1, "abcdefgh", "x.c"), 0);
	cr_assert_eq(recfmt_compress_frame(c, &frame, &out), 0);
	cr_assert_eq(fwrite(out.data, 1, out.len, f), out.len);
	cr_assert_eq(fwrite(out.data, 1, out.len / 2, f), out.len / 2); /* a second, cut short */
	fclose(f);

	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	const uint8_t *data;
	size_t len;

	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK);
	cr_assert_eq(recfmt_reader_next(r, &data, &len, &err), RECFMT_OK);
	cr_assert_eq(len, frame.len);
	cr_assert_eq(recfmt_reader_next(r, &data, &len, &err), RECFMT_TRUNCATED);
	cr_assert_eq(err.frame_index, 1);
	cr_assert_eq(err.frame_offset, out.len);
	cr_assert_eq(recfmt_reader_next(r, &data, &len, &err), RECFMT_END_OF_INPUT);
	recfmt_reader_close(r);
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&out);
	recfmt_compressor_destroy(c);
}

Test(format, reader_refuses_a_newer_major_version)
{
	struct recfmt_buf frame;
	struct recfmt_error err = { 0 };
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	struct recfmt_header h, in = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 1 };
	char want[128];

	snprintf(want, sizeof(want), "format version %d.%d is newer than this reader's %d.%d",
		 RECFMT_VERSION_MAJOR + 1, RECFMT_VERSION_MINOR, RECFMT_VERSION_MAJOR,
		 RECFMT_VERSION_MINOR);
	recfmt_buf_init(&frame);
	cr_assert_eq(recfmt_encode_header(&frame, &in), 0);
	recfmt_store_u16le(frame.data + RECFMT_RECORD_HEADER_BYTES + 8, RECFMT_VERSION_MAJOR + 1);
	recfmt_cursor_init(&cur, frame.data, frame.len);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(recfmt_decode_header(&rec, &h, &err), RECFMT_UNSUPPORTED_VERSION);
	cr_assert_str_eq(err.message, want);
	recfmt_buf_fini(&frame);
}

/* FORMAT.md §3.10-§3.12 (version 1.1): MODULE, FUNC, nr_filtered. */
Test(format, module_func_and_filtered_counts_round_trip)
{
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3 };
	const struct recfmt_range ranges[2] = { { 0x1000, 0x2000 }, { 0x5000, 0x5800 } };
	struct recfmt_buf b;
	struct recfmt_error err = { 0 };
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	struct recfmt_module m;
	struct recfmt_func f;
	struct recfmt_drops d;
	struct recfmt_thread_end te;
	struct recfmt_end e;

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_module(&b, 3, RECFMT_MODULE_MAIN, 0x7f0000, ranges, 2, bid,
					  sizeof(bid), "/usr/bin/x"),
		     0);
	cr_assert_eq(recfmt_encode_func(&b, 77, 0x7f1139), 0);
	cr_assert_eq(recfmt_encode_func_in(&b, 78, 0x7f1139, 3), 0);
	cr_assert_eq(recfmt_encode_drops(&b, 1, 5), 0);
	cr_assert_eq(recfmt_encode_drops_filtered(&b, 1, 5, 9), 0);
	cr_assert_eq(recfmt_encode_thread_end(&b, &(struct recfmt_thread_end){
							  .thread = 1, .nr_events = 4, .nr_dropped = 5,
							  .has_filtered = true, .nr_filtered = 9 }),
		     0);
	cr_assert_eq(recfmt_encode_end(&b, &(struct recfmt_end){ .end_ticks = 1, .nr_events = 4 }),
		     0);
	recfmt_cursor_init(&cur, b.data, b.len);

	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.type, RECFMT_MODULE);
	cr_assert_eq(rec.size, 32 + 2 * 16 + 20 + 10);
	cr_assert_eq(recfmt_decode_module(&rec, &m, &err), RECFMT_OK, "%s", err.message);
	cr_assert_eq(m.id, 3);
	cr_assert_eq(m.flags, RECFMT_MODULE_MAIN);
	cr_assert_eq(m.load_bias, 0x7f0000);
	cr_assert_eq(m.nr_ranges, 2);
	cr_assert_eq(recfmt_module_range(&m, 1).start, 0x5000);
	cr_assert_eq(recfmt_module_range(&m, 1).end, 0x5800);
	cr_assert_eq(m.build_id_bytes, 20);
	cr_assert_arr_eq(m.build_id, bid, 20);
	cr_assert_eq(m.path_bytes, 10);
	cr_assert_arr_eq(m.path, "/usr/bin/x", 10);

	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(recfmt_decode_func(&rec, &f, &err), RECFMT_OK);
	cr_assert_eq(f.id, 77);
	cr_assert_eq(f.module, 0, "1.1-1.4: the word is reserved, 0");
	cr_assert_eq(f.addr, 0x7f1139);
	/* 1.5 (FORMAT.md §3.11): the word after the id names the MODULE. */
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.size, 16);
	cr_assert_eq(recfmt_decode_func(&rec, &f, &err), RECFMT_OK);
	cr_assert_eq(f.id, 78);
	cr_assert_eq(f.module, 3);
	cr_assert_eq(f.addr, 0x7f1139);

	/* Without REC_MIN_NS the 1.0 sizes, with it the trailing field. */
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.size, 16);
	cr_assert_eq(recfmt_decode_drops(&rec, &d, &err), RECFMT_OK);
	cr_assert(!d.has_filtered);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.size, 24);
	cr_assert_eq(recfmt_decode_drops(&rec, &d, &err), RECFMT_OK);
	cr_assert(d.has_filtered);
	cr_assert_eq(d.nr_filtered, 9);
	cr_assert_eq(d.nr_dropped, 5);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.size, 32);
	cr_assert_eq(recfmt_decode_thread_end(&rec, &te, &err), RECFMT_OK);
	cr_assert(te.has_filtered);
	cr_assert_eq(te.nr_filtered, 9);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.size, 24);
	cr_assert_eq(recfmt_decode_end(&rec, &e, &err), RECFMT_OK);
	cr_assert(!e.has_filtered);
	recfmt_buf_fini(&b);
}

Test(format, a_module_record_whose_contents_overrun_it_is_corrupt)
{
	struct recfmt_buf b;
	struct recfmt_error err = { 0 };
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	struct recfmt_module m;
	const struct recfmt_range r = { 0x1000, 0x2000 };

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_module(&b, 1, 0, 0, &r, 1, NULL, 0, "/x"), 0);
	/* Claim 3 ranges in a record that holds 1. */
	recfmt_store_u32le(b.data + RECFMT_RECORD_HEADER_BYTES + 16, 3);
	recfmt_cursor_init(&cur, b.data, b.len);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(recfmt_decode_module(&rec, &m, &err), RECFMT_CORRUPT);
	cr_assert_str_eq(err.message, "MODULE record's contents overrun it");
	recfmt_buf_fini(&b);
}

/* FORMAT.md §3.10, §3.25 (version 1.4): a MODULE's since_ticks after its
 * path, a 1.3 MODULE without it, and MODULE_MAP. */
Test(format, module_times_round_trip_and_a_1_3_module_has_none)
{
	struct recfmt_buf b;
	struct recfmt_error err = { 0 };
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	struct recfmt_module m;
	struct recfmt_module_map mm;
	const struct recfmt_range r = { 0x1000, 0x2000 };
	const struct recfmt_module_map in = { 2, RECFMT_MODULE_UNMAPPED, 0x123456789abcull };

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_module_since(&b, 2, 0, 0x7000, &r, 1, NULL, 0, "/lib/p.so",
						0xfedcba9876ull),
		     0);
	cr_assert_eq(recfmt_encode_module(&b, 3, 0, 0, &r, 1, NULL, 0, "/x"), 0);
	cr_assert_eq(recfmt_encode_module_map(&b, &in), 0);
	recfmt_cursor_init(&cur, b.data, b.len);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.size, 32 + 16 + 9 + 8);
	cr_assert_eq(recfmt_decode_module(&rec, &m, &err), RECFMT_OK, "%s", err.message);
	cr_assert(m.has_since);
	cr_assert_eq(m.since_ticks, 0xfedcba9876ull);
	cr_assert_arr_eq(m.path, "/lib/p.so", 9);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(recfmt_decode_module(&rec, &m, &err), RECFMT_OK, "%s", err.message);
	cr_assert(!m.has_since);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.type, RECFMT_MODULE_MAP);
	cr_assert_eq(rec.size, 16);
	cr_assert_eq(recfmt_decode_module_map(&rec, &mm, &err), RECFMT_OK, "%s", err.message);
	cr_assert_eq(mm.id, 2);
	cr_assert_eq(mm.what, RECFMT_MODULE_UNMAPPED);
	cr_assert_eq(mm.ticks, 0x123456789abcull);
	/* Neither unmapped nor mapped: damaged. */
	recfmt_store_u32le(b.data + b.len - 12, 3);
	cr_assert_eq(recfmt_decode_module_map(&rec, &mm, &err), RECFMT_CORRUPT);
	recfmt_buf_fini(&b);
}

/* FORMAT.md §3.15-§3.16 (version 1.2): BLOCKED and PROBE_COST. */
Test(format, blocked_and_probe_cost_round_trip)
{
	const struct recfmt_blocked b_in = { .thread = 3, .nr_blocked = 17,
					     .blocked_ns = 123456789012ull };
	const struct recfmt_probe_cost pc_in = { .scope_ps = 9250, .hook_ps = 11875,
						 .scope_inner_ps = 4000, .hook_inner_ps = 5125 };
	struct recfmt_blocked b;
	struct recfmt_probe_cost pc;
	struct recfmt_error err = { 0 };
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	struct recfmt_buf buf;

	recfmt_buf_init(&buf);
	cr_assert_eq(recfmt_encode_blocked(&buf, &b_in), 0);
	cr_assert_eq(recfmt_encode_probe_cost(&buf, &pc_in), 0);
	recfmt_cursor_init(&cur, buf.data, buf.len);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.type, RECFMT_BLOCKED);
	cr_assert_eq(rec.size, 24);
	cr_assert_eq(recfmt_decode_blocked(&rec, &b, &err), RECFMT_OK);
	cr_assert_eq(b.thread, 3);
	cr_assert_eq(b.nr_blocked, 17);
	cr_assert_eq(b.blocked_ns, 123456789012ull);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.type, RECFMT_PROBE_COST);
	cr_assert_eq(rec.size, 32);
	cr_assert_eq(recfmt_decode_probe_cost(&rec, &pc, &err), RECFMT_OK);
	cr_assert_eq(pc.scope_ps, 9250);
	cr_assert_eq(pc.hook_ps, 11875);
	cr_assert_eq(pc.scope_inner_ps, 4000);
	cr_assert_eq(pc.hook_inner_ps, 5125);
	/* Too short is an error. */
	rec.size = 16;
	cr_assert_eq(recfmt_decode_probe_cost(&rec, &pc, &err), RECFMT_CORRUPT);
	recfmt_buf_fini(&buf);
}

/* FORMAT.md §3.6 written out the slow, obvious way: the reference for the encoder. */
static uint8_t *ref_leb128(uint8_t *p, uint64_t v)
{
	do {
		*p++ = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return p;
}

static size_t ref_events_payload(uint8_t *out, uint32_t thread, uint64_t base,
				 const struct recfmt_event *ev, size_t nr)
{
	uint8_t *p = out + 24, *ids_end;
	uint64_t prev = base;

	for (size_t i = 0; i < nr; i++)
		p = ref_leb128(p, ev[i].code);
	ids_end = p;
	for (size_t i = 0; i < nr; i++) {
		int64_t d = (int64_t)(ev[i].ticks - prev);

		p = ref_leb128(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
		prev = ev[i].ticks;
	}
	memset(out, 0, 24);
	recfmt_store_u32le(out, thread);
	recfmt_store_u32le(out + 4, (uint32_t)nr);
	recfmt_store_u64le(out + 8, base);
	recfmt_store_u32le(out + 16, (uint32_t)(ids_end - out - 24));
	return (size_t)(p - out);
}

/*
 * The encoder's four-at-a-time path (one-byte ids and deltas) and its
 * general path give FORMAT.md's bytes exactly, whatever mix of small and
 * large values lands in a group of four and however the appends split the
 * events (lengths that are not multiples of four, one event at a time).
 */
Test(format, events_block_bytes_match_the_format_for_every_split)
{
	enum { NR = 4099 };
	static struct recfmt_event ev[NR];
	static uint8_t want[24 + NR * 15];
	static const size_t splits[][6] = {
		{ NR }, { 1, 2, 3, 5, 7, NR }, { 4, 4, 3, 1, 4096 - 12, NR }, { 3, NR },
	};
	uint64_t t = 1u << 20;
	uint32_t seed = 777;

	for (size_t i = 0; i < NR; i++) {
		seed = seed * 1103515245u + 12345u;
		/* Mostly one-byte values, as in a tight loop; one in eight is not. */
		switch ((seed >> 24) & 7) {
		case 0: t += 64 + seed % 100000; break;	  /* a delta of 2+ bytes */
		case 1: t -= 1 + seed % 30; break;	  /* backwards: odd zigzag */
		default: t += seed % 63; break;		  /* a one-byte delta */
		}
		ev[i].ticks = t;
		ev[i].code = (seed >> 8) % 16 == 0 ? RECFMT_CODE(1000 + i, i & 1)
						   : RECFMT_CODE(1 + (seed >> 12) % 40, i & 1);
		ev[i].aux = 0;
	}
	for (size_t k = 0; k < sizeof(splits) / sizeof(splits[0]); k++) {
		struct recfmt_buf buf, scratch;
		struct recfmt_events_encoder enc;
		size_t done = 0, want_bytes = ref_events_payload(want, 9, ev[0].ticks, ev, NR);

		recfmt_buf_init(&buf);
		recfmt_buf_init(&scratch);
		cr_assert_eq(recfmt_encode_frame(&buf, 0), 0);
		cr_assert_eq(recfmt_events_begin(&enc, &buf, &scratch, 9, ev[0].ticks), 0);
		for (size_t j = 0; j < 6 && done < NR; j++) {
			size_t n = splits[k][j] < NR - done ? splits[k][j] : NR - done;

			cr_assert_eq(recfmt_events_append(&enc, ev + done, n), 0);
			done += n;
		}
		cr_assert_eq(done, NR);
		cr_assert_eq(recfmt_events_finish(&enc), 0);
		/* After the 16-byte FRAME record: the EVENTS header, then the payload. */
		cr_assert_eq(buf.len, 16 + 8 + want_bytes, "split %zu: %zu bytes, want %zu", k,
			     buf.len, 16 + 8 + want_bytes);
		cr_assert_eq(buf.data[16], RECFMT_EVENTS);
		cr_assert_eq(recfmt_load_u32le(buf.data + 20), want_bytes);
		cr_assert_eq(memcmp(buf.data + 24, want, want_bytes), 0, "split %zu differs", k);
		recfmt_buf_fini(&buf);
		recfmt_buf_fini(&scratch);
	}
}

/*
 * The vector path (eight events at a time, format/encode.c) on a tight
 * loop's values: long runs where every id and delta takes one byte, each
 * broken at every position of a group of eight by one value at the edge
 * of one byte (deltas -64 and 63, code 0x7f) or two (deltas -8192 and 8191,
 * code 0x3fff) or just past it (64, -65, 8192, -8193, a huge delta; codes
 * 0x80, 0x4000, 0x7fffffff), with a non-zero aux (not encoded), and
 * appends of many lengths from 1 to 40 events (groups start anywhere).
 */
/* Encodes ev[0..nr) appended `step` events at a time and compares the block's
 * payload with ref_events_payload()'s bytes (want: room for them). */
static void check_appends(const struct recfmt_event *ev, size_t nr, size_t step, uint8_t *want)
{
	struct recfmt_buf buf, scratch;
	struct recfmt_events_encoder enc;
	size_t want_bytes = ref_events_payload(want, 3, ev[0].ticks, ev, nr);

	recfmt_buf_init(&buf);
	recfmt_buf_init(&scratch);
	cr_assert_eq(recfmt_events_begin(&enc, &buf, &scratch, 3, ev[0].ticks), 0);
	for (size_t done = 0; done < nr; done += step)
		cr_assert_eq(recfmt_events_append(&enc, ev + done, nr - done < step ? nr - done : step),
			     0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	cr_assert_eq(buf.len, 8 + want_bytes, "step %zu: %zu bytes, want %zu", step, buf.len,
		     8 + want_bytes);
	cr_assert_eq(memcmp(buf.data + 8, want, want_bytes), 0, "step %zu differs", step);
	recfmt_buf_fini(&buf);
	recfmt_buf_fini(&scratch);
}

Test(format, events_block_bytes_match_the_format_at_one_byte_edges)
{
	enum { KINDS = 14, NR = 64 * KINDS * 8 };
	static struct recfmt_event ev[NR];
	static uint8_t want[24 + NR * 15];
	static const int64_t odd_delta[KINDS] = { -64, 63, 64, -65, -8192, 8191, 8192, -8193,
						  1ll << 40 };
	static const uint32_t odd_code[KINDS] = { 3, 3, 3, 3, 3, 3, 3, 3, 3,
						  0x7f, 0x80, 0x3fff, 0x4000, 0x7fffffffu };
	uint64_t t = 1ull << 40;

	for (size_t i = 0; i < NR; i++) {
		size_t run = i / 64, kind = run % KINDS, at = run / KINDS % 8;
		bool odd = i % 64 >= 8 && i % 8 == at && (i / 8) % 2 == 0;

		t += odd ? (uint64_t)odd_delta[kind] : 20 + i % 40;
		ev[i].ticks = t;
		ev[i].code = odd ? odd_code[kind] : RECFMT_CODE(1 + i % 3, i & 1);
		ev[i].aux = (uint32_t)i * 2654435761u;
	}
	for (size_t step = 1; step <= 40; step += step < 10 ? 1 : 7)
		check_appends(ev, NR, step, want);
	check_appends(ev, NR, NR, want); /* one append: the vector path's longest runs */
}

/*
 * recfmt_events_expect(): told the number of events, the encoder builds the
 * deltas column in its final place while every id takes one byte, and
 * falls back to scratch at the first wider id or an event past the number.
 * A trial's events, its split into appends and its expected number, drawn
 * from seed, are encoded with and without the call and by
 * ref_events_payload(); the three must match byte for byte.
 */
static uint64_t xs64(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

enum { EXPECT_MAX = 6000 };

struct expect_run {
	struct recfmt_buf buf, scratch, sums;
	struct recfmt_nest nest;
	size_t scratch_used; /* scratch.len before finish: deltas built there */
};

/* ev[0..nr) into r->buf (after `lead` bytes of a FRAME record when lead),
 * appended in pieces of split[], told `expect` events unless 0. */
static void expect_encode(struct expect_run *r, const struct recfmt_event *ev, size_t nr,
			  const size_t *split, bool lead, bool track, size_t expect)
{
	struct recfmt_events_encoder enc;

	recfmt_buf_init(&r->buf);
	recfmt_buf_init(&r->scratch);
	recfmt_buf_init(&r->sums);
	memset(&r->nest, 0, sizeof(r->nest));
	if (lead)
		cr_assert_eq(recfmt_encode_frame(&r->buf, 0), 0);
	cr_assert_eq(recfmt_events_begin(&enc, &r->buf, &r->scratch, 5, nr ? ev[0].ticks : 0), 0);
	if (track)
		recfmt_events_track(&enc, &r->nest, &r->sums);
	if (expect)
		recfmt_events_expect(&enc, expect);
	for (size_t done = 0, k = 0; done < nr; done += split[k++])
		cr_assert_eq(recfmt_events_append(&enc, ev + done, split[k]), 0);
	r->scratch_used = r->scratch.len;
	cr_assert_eq(recfmt_events_finish(&enc), 0);
}

static void expect_release(struct expect_run *r)
{
	recfmt_buf_fini(&r->buf);
	recfmt_buf_fini(&r->scratch);
	recfmt_buf_fini(&r->sums);
	recfmt_nest_fini(&r->nest);
}

Test(format, events_block_bytes_are_the_same_when_told_the_number_of_events)
{
	static struct recfmt_event ev[EXPECT_MAX];
	static size_t split[EXPECT_MAX];
	static uint8_t want[24 + EXPECT_MAX * 15];
	static const size_t small_n[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 64, 1024, 1025 };
	size_t in_place = 0, fell_back = 0, moved_ids = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (unsigned trial = 0; trial < 3000; trial++) {
		size_t nr = trial < 16 * 4 ? small_n[trial % 16] : xs64(&x) % EXPECT_MAX;
		unsigned ids = (unsigned)(xs64(&x) % 5), deltas = (unsigned)(xs64(&x) % 4);
		size_t turn = nr ? xs64(&x) % nr : 0, expect, nsplit = 0;
		bool lead = xs64(&x) & 1, track = xs64(&x) % 3 == 0, wide = false;
		unsigned how = (unsigned)(xs64(&x) % 4);
		uint64_t t = 1ull << 30;
		struct expect_run with, without;
		size_t want_bytes;

		/* ids: 0 one byte (sites 0-63), 1 mixed widths, 2 one byte then
		 * mixed from `turn`, 3 one byte but a single 0x80 at `turn`,
		 * 4 codes 0x7e-0x81 around the edge. */
		for (size_t i = 0; i < nr; i++) {
			uint64_t r = xs64(&x);
			uint32_t site = (uint32_t)(r % 64);

			if ((ids == 1 && r % 8 == 0) || (ids == 2 && i >= turn && r % 2 == 0))
				site = 1 + (uint32_t)((r >> 8) &
						      (RECFMT_MAX_SITE_ID >> ((r >> 40) % 31)));
			ev[i].code = RECFMT_CODE(site, (r >> 7) & 1);
			if (ids == 3 && i == turn)
				ev[i].code = 0x80;
			if (ids == 4)
				ev[i].code = 0x7e + (uint32_t)((r >> 9) % 4);
			/* deltas: 0 one byte, 1 a third of two bytes, 2 every
			 * size and backwards steps, 3 all over 2^13 ticks. */
			switch (deltas) {
			case 0: t += 20 + (r >> 20) % 40; break;
			case 1: t += 20 + (r >> 20) % 80; break;
			case 2:
				switch ((r >> 24) % 8) {
				case 0: t += 64 + (r >> 30) % 100000; break;
				case 1: t -= 1 + (r >> 30) % 30; break;
				case 2: t += (r >> 30) << 20; break;
				default: t += (r >> 30) % 63; break;
				}
				break;
			default: t += 8192 + (r >> 20) % 1000; break;
			}
			ev[i].ticks = t;
			ev[i].aux = (uint32_t)r;
			wide |= ev[i].code >= 0x80;
		}
		/* Appends: one, pieces of 1-7 (the scalar path alone), any sizes. */
		for (size_t done = 0; done < nr; done += split[nsplit++]) {
			size_t left = nr - done, piece = left;

			if (how == 1)
				piece = 1 + xs64(&x) % 7;
			else if (how >= 2)
				piece = 1 + xs64(&x) % (xs64(&x) & 1 ? 40 : nr);
			split[nsplit] = piece < left ? piece : left;
		}
		/* Expected: mostly exact, else more (a bound) or fewer than come. */
		switch (xs64(&x) % 6) {
		case 0: expect = nr + 1 + xs64(&x) % 100; break;
		case 1: expect = nr / 2; break;
		case 2: expect = nr ? nr - 1 : 0; break;
		default: expect = nr; break;
		}
		expect_encode(&with, ev, nr, split, lead, track, expect);
		expect_encode(&without, ev, nr, split, lead, track, 0);
		cr_assert_eq(with.buf.len, without.buf.len,
			     "trial %u (n %zu ids %u deltas %u turn %zu expect %zu): %zu bytes, %zu without",
			     trial, nr, ids, deltas, turn, expect, with.buf.len, without.buf.len);
		cr_assert_eq(memcmp(with.buf.data, without.buf.data, with.buf.len), 0,
			     "trial %u (n %zu ids %u deltas %u turn %zu expect %zu) differs", trial, nr,
			     ids, deltas, turn, expect);
		if (nr) {
			size_t at = lead ? 16 : 0;

			want_bytes = ref_events_payload(want, 5, ev[0].ticks, ev, nr);
			cr_assert_eq(with.buf.len, at + 8 + want_bytes, "trial %u", trial);
			cr_assert_eq(memcmp(with.buf.data + at + 8, want, want_bytes), 0,
				     "trial %u differs from the format", trial);
		} else {
			cr_assert_eq(with.buf.len, lead ? 16u : 0u, "trial %u: an empty block stays", trial);
		}
		/* The index's sums and the thread's nesting alike. */
		cr_assert_eq(with.sums.len, without.sums.len);
		cr_assert(!with.sums.len ||
			  !memcmp(with.sums.data, without.sums.data, with.sums.len));
		cr_assert_eq(with.nest.depth, without.nest.depth);
		cr_assert_eq(with.nest.broken, without.nest.broken);
		/* In place (scratch unused) exactly when every id took one byte
		 * and no more events came than expected. */
		if (nr && expect >= nr && !wide) {
			cr_assert_eq(with.scratch_used, 0u, "trial %u: deltas built in scratch", trial);
			in_place++;
		} else if (nr && expect) {
			/* Then scratch holds the deltas, or the ids after a late wide one. */
			cr_assert_gt(without.scratch_used, 0u);
			fell_back += with.scratch_used == without.scratch_used;
			moved_ids += with.scratch_used < without.scratch_used;
		}
		expect_release(&with);
		expect_release(&without);
	}
	/* The draws cover the three ways. */
	cr_assert_gt(in_place, 300u);
	cr_assert_gt(fell_back, 300u);
	cr_assert_gt(moved_ids, 100u);
	/* A tight loop's block with one wide id: early, the few deltas before
	 * it move to scratch; late, the few ids after it go there. */
	for (size_t i = 0; i < 4096; i++) {
		ev[i].ticks = 1000 + 30 * i;
		ev[i].code = RECFMT_CODE(1 + i % 3, i & 1);
	}
	for (int late = 0; late < 2; late++) {
		struct expect_run with, without;
		size_t at = late ? 4090 : 5, one[1] = { 4096 };

		ev[at].code = 0x80;
		expect_encode(&with, ev, 4096, one, false, false, 4096);
		expect_encode(&without, ev, 4096, one, false, false, 0);
		cr_assert_eq(with.buf.len, without.buf.len);
		cr_assert_eq(memcmp(with.buf.data, without.buf.data, with.buf.len), 0);
		cr_assert_eq(without.scratch_used, 4096u); /* one byte a delta */
		cr_assert_eq(with.scratch_used, late ? 7u : 4096u, "wide id at %zu", at);
		ev[at].code = 3;
		expect_release(&with);
		expect_release(&without);
	}
}

/* Compresses buf as one frame and checks that zstd gives back exactly its bytes. */
static void assert_frame_round_trips(struct recfmt_compressor *c, const struct recfmt_buf *buf)
{
	struct recfmt_buf out;
	uint8_t *back = malloc(buf->len + 1);
	size_t n;

	recfmt_buf_init(&out);
	cr_assert(back);
	cr_assert_eq(recfmt_compress_frame(c, buf, &out), 0);
	n = ZSTD_decompress(back, buf->len + 1, out.data, out.len);
	cr_assert(!ZSTD_isError(n), "%s", ZSTD_getErrorName(n));
	cr_assert_eq(n, buf->len);
	cr_assert_eq(memcmp(back, buf->data, n), 0);
	cr_assert_eq(ZSTD_getFrameContentSize(out.data, out.len), buf->len);
	free(back);
	recfmt_buf_fini(&out);
}

/*
 * The compressor's own sequences (compress.c: deltas columns as literals,
 * a matcher elsewhere) give back the frame's exact bytes: EVENTS blocks
 * whose columns straddle zstd's 128 KiB blocks, periodic ids (long
 * overlapping matches), random ids, tiny blocks, and records that lie
 * about their sizes (the compressor must not trust them).
 */
Test(format, frames_compress_to_their_exact_bytes)
{
	enum { NR = 300000 };
	struct recfmt_event *ev = calloc(NR, sizeof(*ev));
	struct recfmt_compressor *c = recfmt_compressor_create(1);
	struct recfmt_buf buf, scratch;
	struct recfmt_events_encoder enc;
	uint64_t t = 5;
	uint32_t seed = 99;
	size_t first;

	cr_assert(ev && c);
	recfmt_buf_init(&buf);
	recfmt_buf_init(&scratch);
	for (size_t i = 0; i < NR; i++) {
		seed = seed * 1103515245u + 12345u;
		t += 24 + (seed >> 30) * 25;
		ev[i].ticks = t;
		/* A tight loop for the first half, then random sites. */
		ev[i].code = i < NR / 2 ? RECFMT_CODE(1, i & 1) : RECFMT_CODE(1 + (seed >> 8) % 500, i & 1);
	}
	cr_assert_eq(recfmt_encode_frame(&buf, 0), 0);
	cr_assert_eq(recfmt_encode_site(&buf, 1, 2, "f", "f.c"), 0);
	first = buf.len;
	for (size_t at = 0, n = 1; at < NR; at += n, n = n * 7 + 3) {
		if (n > NR - at)
			n = NR - at;
		cr_assert_eq(recfmt_events_begin(&enc, &buf, &scratch, 1, ev[at].ticks), 0);
		cr_assert_eq(recfmt_events_append(&enc, ev + at, n), 0);
		cr_assert_eq(recfmt_events_finish(&enc), 0);
	}
	cr_assert_gt(buf.len, 3u << 17);
	assert_frame_round_trips(c, &buf);
	/* The same bytes with an EVENTS header claiming more ids than it holds, then a cut record. */
	cr_assert_eq(buf.data[first], RECFMT_EVENTS);
	recfmt_store_u32le(buf.data + first + 8 + 16, 0xfffffff0u);
	buf.data[buf.len / 2] = RECFMT_EVENTS;
	assert_frame_round_trips(c, &buf);
	buf.len = 100;
	assert_frame_round_trips(c, &buf);
	buf.len = 0;
	assert_frame_round_trips(c, &buf);
	recfmt_compressor_destroy(c);
	recfmt_buf_fini(&buf);
	recfmt_buf_fini(&scratch);
	free(ev);
}
