/* SPDX-License-Identifier: MIT */
/*
 * test_index.c - the writer's index frames (FORMAT.md §6): the EVENTS
 * encoder's sums of each block (recfmt_events_track(): depth where it
 * starts, its lowest, where it ends, enters, first and last ticks) and the
 * nesting they trust or give up (an exit that closes anything but the
 * innermost enter of its site, a clock going backwards, too deep), carried
 * across blocks; the index frame built, parsed back, patched for a frame
 * compressed again, and refused when any byte of it changed.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "recfmt.h"

/* "E3" enters site 3, "X3" exits it; ticks 10 apart from `t`. */
static size_t events(struct recfmt_event *ev, const char *s, uint64_t t)
{
	size_t n = 0;

	for (; *s; s += 2) {
		ev[n].ticks = t += 10;
		ev[n].code = RECFMT_CODE((uint32_t)(s[1] - '0'), s[0] == 'X');
		ev[n++].aux = 0;
	}
	return n;
}

/* An EVENTS block's buffers: the record, its deltas column, its sums. */
struct enc {
	struct recfmt_buf buf, scratch, sums;
	bool expect; /* say the block's number of events first (recfmt_events_expect()) */
};

static void enc_init(struct enc *x)
{
	recfmt_buf_init(&x->buf);
	recfmt_buf_init(&x->scratch);
	recfmt_buf_init(&x->sums);
	x->expect = false;
}

static void enc_fini(struct enc *x)
{
	recfmt_buf_fini(&x->buf);
	recfmt_buf_fini(&x->scratch);
	recfmt_buf_fini(&x->sums);
}

/*
 * ev[0 .. n) encoded into x->buf as one block of `thread` with its sums
 * tracked in nest, appended in two halves (the sums go on across appends),
 * or, with rng, in random parts of up to 3 000 events. Return: its sums.
 */
static struct recfmt_index_entry enc_block(struct enc *x, struct recfmt_nest *nest,
					   uint32_t thread, const struct recfmt_event *ev, size_t n,
					   uint64_t *rng)
{
	struct recfmt_events_encoder enc;
	struct recfmt_index_entry e;

	x->buf.len = x->sums.len = 0;
	cr_assert_eq(recfmt_events_begin(&enc, &x->buf, &x->scratch, thread, ev[0].ticks), 0);
	recfmt_events_track(&enc, nest, &x->sums);
	if (x->expect)
		recfmt_events_expect(&enc, n);
	for (size_t k = 0, left = n; left;) {
		size_t part = rng ? 1 + (size_t)((*rng >> 40) % 3000) : k ? left : n / 2 ? n / 2 : n;

		part = part > left ? left : part;
		cr_assert_eq(recfmt_events_append(&enc, ev + k, part), 0);
		k += part;
		left -= part;
		if (rng)
			*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
	}
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	cr_assert_eq(x->sums.len, sizeof(e));
	memcpy(&e, x->sums.data, sizeof(e));
	cr_assert_eq(e.at, 0);
	cr_assert_eq(e.b.thread, thread);
	cr_assert_eq(e.b.nr_events, n);
	return e;
}

/* One block of thread 7 encoded with its sums tracked in nest. */
static struct recfmt_index_entry block(struct recfmt_nest *nest, const char *s, uint64_t t)
{
	struct recfmt_event ev[64];
	struct enc x;
	struct recfmt_index_entry e;
	size_t n = events(ev, s, t);

	enc_init(&x);
	e = enc_block(&x, nest, 7, ev, n, NULL);
	cr_assert_eq(e.b.first_ticks, t + 10);
	cr_assert_eq(e.b.last_ticks, t + 10 * n);
	enc_fini(&x);
	return e;
}

Test(index, a_blocks_sums_carry_the_depth_across_blocks)
{
	struct recfmt_nest nest = { 0 };
	struct recfmt_index_entry a, b, c;

	/* main open; f, g; g returns, f stays open. */
	a = block(&nest, "E1E2E3X3", 0);
	cr_assert_eq(a.b.enters, 3);
	cr_assert_eq(a.b.depth_start, 0);
	cr_assert_eq(a.b.depth_low, 0);
	cr_assert_eq(a.b.depth_end, 2);
	cr_assert_eq(a.b.flags, RECFMT_BLOCK_NESTED);
	/* f returns, h and its child, back to main only. */
	b = block(&nest, "X2E4E5X5X4", 100);
	cr_assert_eq(b.b.enters, 2);
	cr_assert_eq(b.b.depth_start, 2);
	cr_assert_eq(b.b.depth_low, 1);
	cr_assert_eq(b.b.depth_end, 1);
	cr_assert_eq(b.b.flags, RECFMT_BLOCK_NESTED);
	/* main returns: depth 0. */
	c = block(&nest, "X1", 200);
	cr_assert_eq(c.b.depth_low, 0);
	cr_assert_eq(c.b.depth_end, 0);
	cr_assert_eq(c.b.flags, RECFMT_BLOCK_NESTED);
	recfmt_nest_fini(&nest);
}

/* A snapshot or a forked child starts inside scopes: their exits close nothing. */
Test(index, an_exit_with_nothing_open_closes_nothing_and_keeps_the_nesting)
{
	struct recfmt_nest nest = { 0 };
	struct recfmt_index_entry a = block(&nest, "X9X8E2X2E3", 0);

	cr_assert_eq(a.b.depth_start, 0);
	cr_assert_eq(a.b.depth_low, 0);
	cr_assert_eq(a.b.depth_end, 1);
	cr_assert_eq(a.b.flags, RECFMT_BLOCK_NESTED);
	recfmt_nest_fini(&nest);
}

/* longjmp: f's exit while g is open; every later block of the thread too. */
Test(index, an_exit_that_leaves_an_inner_enter_open_breaks_the_nesting_for_good)
{
	struct recfmt_nest nest = { 0 };
	struct recfmt_index_entry a, b;

	a = block(&nest, "E1E2E3X2", 0);
	cr_assert_eq(a.b.flags, 0);
	cr_assert_eq(a.b.enters, 3);
	b = block(&nest, "E4X4", 100);
	cr_assert_eq(b.b.flags, 0);
	cr_assert_eq(b.b.enters, 1);
	/* A new file (recfmt_nest_reset()) trusts it again. */
	recfmt_nest_reset(&nest);
	b = block(&nest, "E4X4", 200);
	cr_assert_eq(b.b.flags, RECFMT_BLOCK_NESTED);
	recfmt_nest_fini(&nest);
}

Test(index, a_clock_that_goes_back_between_blocks_breaks_the_nesting)
{
	struct recfmt_nest nest = { 0 };
	struct recfmt_index_entry a, b;

	a = block(&nest, "E1X1", 1000);
	cr_assert_eq(a.b.flags, RECFMT_BLOCK_NESTED);
	b = block(&nest, "E1X1", 500);
	cr_assert_eq(b.b.flags, 0);
	recfmt_nest_fini(&nest);
}

Test(index, a_nesting_deeper_than_the_limit_is_given_up)
{
	struct recfmt_nest nest = { 0 };
	size_t n = RECFMT_NEST_MAX_DEPTH + 10;
	struct recfmt_event *ev = calloc(n, sizeof(*ev));
	struct enc x;
	struct recfmt_index_entry e;

	cr_assert(ev);
	for (size_t i = 0; i < n; i++) {
		ev[i].ticks = 100 + i;
		ev[i].code = RECFMT_CODE(1, RECFMT_KIND_ENTER);
	}
	enc_init(&x);
	e = enc_block(&x, &nest, 1, ev, n, NULL);
	cr_assert_eq(e.b.flags, 0);
	cr_assert_eq(e.b.enters, n);
	enc_fini(&x);
	recfmt_nest_fini(&nest);
	free(ev);
}

/* A frame: FRAME, SYNC, an EVENTS block, DROPS; its index frame. */
static void make_frame(struct recfmt_buf *frame, struct recfmt_buf *sums, struct recfmt_nest *nest)
{
	struct recfmt_event ev[64];
	struct recfmt_buf scratch;
	struct recfmt_events_encoder enc;
	size_t n = events(ev, "E1E2X2E2X2", 1000);

	recfmt_buf_init(&scratch);
	cr_assert_eq(recfmt_encode_frame_flags(frame, 5, RECFMT_FRAME_FAST), 0);
	cr_assert_eq(recfmt_encode_sync(frame, &(struct recfmt_sync){ 1000, 2000, 3000 }), 0);
	cr_assert_eq(recfmt_events_begin(&enc, frame, &scratch, 2, ev[0].ticks), 0);
	recfmt_events_track(&enc, nest, sums);
	cr_assert_eq(recfmt_events_append(&enc, ev, n), 0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	cr_assert_eq(recfmt_encode_drops(frame, 2, 9), 0);
	recfmt_buf_fini(&scratch);
}

Test(index, an_index_frame_says_its_frame_and_its_records_with_each_block_summed_up)
{
	struct recfmt_nest nest = { 0 };
	struct recfmt_buf frame, sums, ix;
	struct recfmt_index_head h;
	const uint8_t zframe[] = "pretend compressed bytes";
	struct recfmt_cursor c;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	uint8_t types[8];
	unsigned nr = 0;

	recfmt_buf_init(&frame);
	recfmt_buf_init(&sums);
	recfmt_buf_init(&ix);
	make_frame(&frame, &sums, &nest);
	cr_assert_eq(recfmt_index_build(&ix, &frame, 1, 0, (const void *)sums.data,
					sums.len / sizeof(struct recfmt_index_entry), zframe,
					sizeof(zframe)),
		     0);
	/* A zstd skippable frame: magic, then the size of what follows. */
	cr_assert_eq(recfmt_load_u32le(ix.data), RECFMT_INDEX_FRAME_MAGIC);
	cr_assert_eq(recfmt_load_u32le(ix.data + 4), ix.len - 8);
	cr_assert(recfmt_index_parse(ix.data, ix.len, &h));
	cr_assert_eq(h.major, 1);
	cr_assert_eq(h.seq, 5);
	cr_assert_eq(h.flags, 0);
	cr_assert_eq(h.frame_bytes, sizeof(zframe));
	cr_assert_eq(h.content_bytes, frame.len);
	cr_assert_eq(h.frame_hash, recfmt_xxh64(zframe, sizeof(zframe)));
	recfmt_cursor_init(&c, h.records, h.records_bytes);
	while (recfmt_cursor_next(&c, &rec, &err) == RECFMT_OK && nr < 8)
		types[nr++] = rec.type;
	cr_assert_eq(nr, 4);
	cr_assert_eq(types[0], RECFMT_FRAME);
	cr_assert_eq(types[1], RECFMT_SYNC);
	cr_assert_eq(types[2], RECFMT_BLOCK_INDEX);
	cr_assert_eq(types[3], RECFMT_DROPS);
	/* The block: thread 2, 5 events, 3 enters, depth 0 -> 1, NESTED. */
	recfmt_cursor_init(&c, h.records, h.records_bytes);
	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(recfmt_cursor_next(&c, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.size, RECFMT_BLOCK_INDEX_BYTES);
	cr_assert_eq(recfmt_load_u32le(rec.payload), 2);
	cr_assert_eq(recfmt_load_u32le(rec.payload + 4), 5);
	cr_assert_eq(recfmt_load_u64le(rec.payload + 8), 1010);
	cr_assert_eq(recfmt_load_u64le(rec.payload + 16), 1050);
	cr_assert_eq(recfmt_load_u32le(rec.payload + 24), 3);
	cr_assert_eq(recfmt_load_u32le(rec.payload + 28), RECFMT_BLOCK_NESTED);
	cr_assert_eq(recfmt_load_u32le(rec.payload + 32), 0);
	cr_assert_eq(recfmt_load_u32le(rec.payload + 36), 0);
	cr_assert_eq(recfmt_load_u32le(rec.payload + 40), 1);
	/* Compressed again: new length, hash and FRAME flags; still valid. */
	cr_assert(recfmt_index_patch(ix.data, ix.len, 7, 1234, RECFMT_FRAME_RECOMPRESSED));
	cr_assert(recfmt_index_parse(ix.data, ix.len, &h));
	cr_assert_eq(h.frame_bytes, 7);
	cr_assert_eq(h.frame_hash, 1234);
	cr_assert_eq(recfmt_load_u32le(h.records + 16), RECFMT_FRAME_RECOMPRESSED);
	/* Any byte changed: refused. */
	for (size_t i = 0; i < ix.len; i++) {
		ix.data[i] ^= 0x40;
		cr_assert_not(recfmt_index_parse(ix.data, ix.len, &h), "byte %zu", i);
		ix.data[i] ^= 0x40;
	}
	cr_assert_not(recfmt_index_parse(ix.data, ix.len - 1, &h));
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&sums);
	recfmt_buf_fini(&ix);
	recfmt_nest_fini(&nest);
}

/* Annotations, counters, samples are left out and the frame says so; a
 * block encoded without sums makes it incomplete. */
Test(index, records_the_index_leaves_out_or_cannot_sum_are_flagged)
{
	struct recfmt_buf frame, ix, scratch;
	struct recfmt_events_encoder enc;
	struct recfmt_event ev[8];
	struct recfmt_index_head h;
	uint64_t vals[2] = { 1, 2 };
	size_t n = events(ev, "E1X1", 0);

	recfmt_buf_init(&frame);
	recfmt_buf_init(&ix);
	recfmt_buf_init(&scratch);
	cr_assert_eq(recfmt_encode_frame(&frame, 0), 0);
	cr_assert_eq(recfmt_events_begin(&enc, &frame, &scratch, 1, ev[0].ticks), 0);
	cr_assert_eq(recfmt_events_append(&enc, ev, n), 0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	cr_assert_eq(recfmt_index_build(&ix, &frame, 1, 0, NULL, 0, (const uint8_t *)"x", 1), 0);
	cr_assert(recfmt_index_parse(ix.data, ix.len, &h));
	cr_assert_eq(h.flags, RECFMT_INDEX_INCOMPLETE);
	cr_assert_eq(recfmt_encode_counters(&frame, 1, 2, 1, vals), 0);
	cr_assert_eq(recfmt_index_build(&ix, &frame, 1, 0, NULL, 0, (const uint8_t *)"x", 1), 0);
	cr_assert(recfmt_index_parse(ix.data, ix.len, &h));
	cr_assert_eq(h.flags, RECFMT_INDEX_INCOMPLETE | RECFMT_INDEX_PARTIAL);
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&ix);
	recfmt_buf_fini(&scratch);
}

/*
 * Random nestings, as a reference model follows them event by event, against
 * the encoder's sums, blocks cut and appends split at random (the AVX2 pass
 * skips an enter and its exit next to each other: pairs across 8-event
 * groups, 64-event chunks, appends and blocks must count the same): leaf
 * pairs, deeper calls, exits with nothing open, and once in a while a
 * longjmp from which every later block of the thread is not NESTED.
 */
/*
 * Rounds 0-5: sites up to 300 (codes of two bytes, the nesting from the
 * events); 6-11: sites under 64, so every code takes one byte and the
 * nesting reads the ids column (nest_pairs_ids_avx2()), with the deltas
 * built in place (recfmt_events_expect()) in every other round; the last
 * two rounds of each half with longjmps.
 */
Test(index, random_nestings_give_the_sums_of_a_reference_model)
{
	enum { N = 200000 };
	struct recfmt_event *ev = calloc(N, sizeof(*ev));
	uint32_t *ref_st = calloc(N + 2, sizeof(*ref_st));
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	struct enc x;

	cr_assert(ev && ref_st);
	enc_init(&x);
	for (unsigned round = 0; round < 12; round++) {
		struct recfmt_nest nest = { 0 }, reader = { 0 };
		uint32_t d = 0, sp = 0;
		bool broken = false;
		const bool with_longjmp = round % 6 >= 4, narrow = round >= 6;
		const uint32_t sites = narrow ? 63 : 300, stranger = narrow ? 60 : 900;
		size_t at = 0;

		x.expect = narrow && round % 2;

		/* The events: a random walk, leaves most often. */
		for (size_t i = 0; i < N; i++) {
			uint32_t r;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			r = (uint32_t)(rng >> 32);
			ev[i].ticks = 1000 + i;
			if (sp && r % 100 < (sp > 40 ? 70u : 35u)) {
				ev[i].code = RECFMT_CODE(ref_st[--sp], 1);
			} else if (r % 100 < 40) {
				/* An exit of a scope the file has no enter of. */
				ev[i].code = RECFMT_CODE(stranger, 1);
				if (sp) /* only with nothing open: else it is a longjmp */
					ev[i].code = RECFMT_CODE(ref_st[--sp], 1);
			} else if (with_longjmp && r % 1000 == 999 && sp > 2) {
				sp -= 2; /* the exit of the scope below the top */
				ev[i].code = RECFMT_CODE(ref_st[sp], 1);
			} else {
				ref_st[sp++] = 1 + (r >> 8) % sites;
				ev[i].code = RECFMT_CODE(ref_st[sp - 1], 0);
			}
		}
		/* Blocks of random lengths, each in random appends. */
		sp = 0;
		while (at < N) {
			size_t len = 1 + (size_t)((rng >> 20) % 5000);
			struct recfmt_index_entry e;
			struct recfmt_block_index r;
			struct recfmt_cursor cur;
			struct recfmt_record rec;
			struct recfmt_error err = { 0 };
			uint32_t low, start = d, enters = 0;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			len = len > N - at ? N - at : len;
			low = d;
			for (size_t i = at; i < at + len; i++) {
				uint32_t c = ev[i].code;

				if (!RECFMT_CODE_IS_EXIT(c)) {
					ref_st[++d] = c | 1;
					enters++;
				} else if (d) {
					broken |= ref_st[d] != c;
					d--;
				}
				low = d < low ? d : low;
			}
			e = enc_block(&x, &nest, 1, ev + at, len, &rng);
			/* A reader's sums of the same block (check's): the writer's. */
			recfmt_cursor_init(&cur, x.buf.data, x.buf.len);
			cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
			cr_assert_eq(recfmt_block_sum(&rec, &reader, &r, &err), RECFMT_OK);
			cr_assert_eq(r.flags, e.b.flags, "round %u at %zu", round, at);
			cr_assert_eq(r.enters, e.b.enters);
			cr_assert_eq(r.first_ticks, e.b.first_ticks);
			cr_assert_eq(r.last_ticks, e.b.last_ticks);
			if (r.flags)
				cr_assert(r.depth_start == e.b.depth_start &&
					  r.depth_low == e.b.depth_low && r.depth_end == e.b.depth_end,
					  "round %u at %zu", round, at);
			cr_assert_eq(e.b.enters, enters, "round %u at %zu", round, at);
			cr_assert_eq(e.b.flags, broken ? 0 : RECFMT_BLOCK_NESTED, "round %u at %zu", round,
				     at);
			if (!broken) {
				cr_assert_eq(e.b.depth_start, start, "round %u at %zu", round, at);
				cr_assert_eq(e.b.depth_low, low, "round %u at %zu", round, at);
				cr_assert_eq(e.b.depth_end, d, "round %u at %zu", round, at);
			}
			at += len;
		}
		cr_assert_eq(broken, with_longjmp);
		recfmt_nest_fini(&nest);
		recfmt_nest_fini(&reader);
	}
	enc_fini(&x);
	free(ev);
	free(ref_st);
}

/*
 * A record whose size is 2^32 - 8: its header and size added in 32 bits
 * made a record of 0 bytes, and recfmt_index_build() looped on it forever
 * (fuzz_index, building index frames for fuzzed content). Now the record
 * runs past its frame and ends what the index frame holds.
 */
Test(index, a_record_size_that_wraps_in_32_bits_ends_the_records, .timeout = 10)
{
	struct recfmt_buf frame, ix;
	struct recfmt_index_head h;
	uint8_t bad[16] = { RECFMT_SYNC, 0, 0, 0, 0xf8, 0xff, 0xff, 0xff };

	recfmt_buf_init(&frame);
	recfmt_buf_init(&ix);
	cr_assert_eq(recfmt_encode_frame(&frame, 3), 0);
	cr_assert_eq(recfmt_buf_reserve(&frame, sizeof(bad)), 0);
	memcpy(frame.data + frame.len, bad, sizeof(bad));
	frame.len += sizeof(bad);
	cr_assert_eq(recfmt_index_build(&ix, &frame, 1, 0, NULL, 0, (const uint8_t *)"x", 1), 0);
	cr_assert(recfmt_index_parse(ix.data, ix.len, &h));
	cr_assert_eq(h.seq, 3);
	/* The FRAME record only. */
	cr_assert_eq(h.records_bytes, 8 + 8);
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&ix);
}

/*
 * Packed index frames (FORMAT.md §6.3, finding F4): many short threads'
 * records compressed after the raw FRAME record; unpacked they are the
 * plain frame's records byte for byte; patched in place for a frame
 * compressed again; any byte changed, or compressed records that are not
 * one zstd frame of the size said, refused.
 */
Test(index, a_packed_index_frame_unpacks_to_the_plain_ones_records)
{
	struct recfmt_buf frame, plain, ix;
	struct recfmt_index_packer pk = { 0 };
	struct recfmt_index_scratch s = { 0 };
	struct recfmt_index_head h, hp;
	const uint8_t zframe[] = "pretend compressed bytes";
	size_t lead;

	recfmt_buf_init(&frame);
	recfmt_buf_init(&plain);
	recfmt_buf_init(&ix);
	cr_assert_eq(recfmt_encode_frame_flags(&frame, 9, RECFMT_FRAME_FAST), 0);
	lead = frame.len;
	for (uint32_t t = 1; t <= 200; t++) {
		cr_assert_eq(recfmt_encode_thread(&frame, t, 1000 + t, "request"), 0);
		cr_assert_eq(recfmt_encode_thread_end(&frame, &(struct recfmt_thread_end){
								      .thread = t, .nr_events = 2 }),
			     0);
	}
	cr_assert_eq(recfmt_index_build(&plain, &frame, 1, 0, NULL, 0, zframe, sizeof(zframe)), 0);
	cr_assert_eq(recfmt_index_build(&ix, &frame, 1, 0, NULL, 0, zframe, sizeof(zframe)), 0);
	cr_assert_eq(recfmt_index_pack(&ix, lead, &pk), 0);
	cr_assert_eq(recfmt_load_u32le(ix.data), RECFMT_INDEX_PACKED_MAGIC);
	cr_assert_lt(ix.len, plain.len / 4, "%zu of %zu bytes", ix.len, plain.len);
	cr_assert(recfmt_index_parse(plain.data, plain.len, &h));
	cr_assert(recfmt_index_parse(ix.data, ix.len, &hp));
	cr_assert(hp.packed);
	cr_assert_eq(hp.minor, RECFMT_INDEX_PACKED_MINOR);
	cr_assert_eq(hp.seq, 9);
	cr_assert_eq(hp.frame_bytes, sizeof(zframe));
	cr_assert_eq(hp.raw_bytes, lead);
	cr_assert_null(hp.records);
	cr_assert(recfmt_index_unpack(&hp, &s));
	cr_assert_eq(hp.records_bytes, h.records_bytes);
	cr_assert_eq(memcmp(hp.records, h.records, h.records_bytes), 0);
	/* Compressed again (compact.c): the raw FRAME record patched in place. */
	cr_assert(recfmt_index_patch(ix.data, ix.len, 7, 1234, RECFMT_FRAME_RECOMPRESSED));
	cr_assert(recfmt_index_parse(ix.data, ix.len, &hp));
	cr_assert_eq(hp.frame_bytes, 7);
	cr_assert_eq(recfmt_load_u32le(hp.stored + 16), RECFMT_FRAME_RECOMPRESSED);
	cr_assert(recfmt_index_unpack(&hp, &s));
	for (size_t i = 0; i < ix.len; i++) {
		ix.data[i] ^= 0x40;
		cr_assert_not(recfmt_index_parse(ix.data, ix.len, &hp), "byte %zu", i);
		ix.data[i] ^= 0x40;
	}
	/* A records_bytes the compressed records do not have, its hash made right: refused. */
	recfmt_store_u32le(ix.data + 8 + 40, h.records_bytes + 1);
	recfmt_store_u64le(ix.data + ix.len - 8, recfmt_xxh64(ix.data + 8, ix.len - 16));
	cr_assert(recfmt_index_parse(ix.data, ix.len, &hp));
	cr_assert_not(recfmt_index_unpack(&hp, &s));
	/* Nothing after the raw records: left plain. */
	cr_assert_eq(recfmt_index_build(&ix, &frame, 1, 0, NULL, 0, zframe, sizeof(zframe)), 0);
	cr_assert_eq(recfmt_index_pack(&ix, h.records_bytes, &pk), 0);
	cr_assert_eq(recfmt_load_u32le(ix.data), RECFMT_INDEX_FRAME_MAGIC);
	recfmt_index_scratch_fini(&s);
	recfmt_index_packer_fini(&pk);
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&plain);
	recfmt_buf_fini(&ix);
}
