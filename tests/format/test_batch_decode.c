/* SPDX-License-Identifier: MIT */
/*
 * test_batch_decode.c - recfmt_events_decode_batch() yields exactly what
 * recfmt_events_next() yields, event by event, for every value size and any
 * batch size, stops at the same event on a malformed column, and
 * recfmt_events_check_end() finds columns that leave bytes over
 * (FORMAT.md §3.6).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>

#include "recfmt.h"

#define NR 20000

struct block {
	struct recfmt_buf buf, scratch;
	struct recfmt_record rec;
};

/* Encodes events as one EVENTS record and points rec at it. */
static void encode(struct block *b, const struct recfmt_event *ev, size_t nr)
{
	struct recfmt_events_encoder enc;
	struct recfmt_cursor cur;
	struct recfmt_error err;

	recfmt_buf_init(&b->buf);
	recfmt_buf_init(&b->scratch);
	cr_assert_eq(recfmt_events_begin(&enc, &b->buf, &b->scratch, 7, ev[0].ticks), 0);
	cr_assert_eq(recfmt_events_append(&enc, ev, nr), 0);
	cr_assert_eq(recfmt_events_finish(&enc), 0);
	recfmt_cursor_init(&cur, b->buf.data, b->buf.len);
	cr_assert_eq(recfmt_cursor_next(&cur, &b->rec, &err), RECFMT_OK);
}

static void release(struct block *b)
{
	recfmt_buf_fini(&b->buf);
	recfmt_buf_fini(&b->scratch);
}

/*
 * Mostly 1-byte ids and 1-2 byte deltas (the common case), mixed with every
 * LEB128 length: 5-byte ids (site ids up to 2^31 - 1), deltas up to 10 bytes
 * and backwards steps. `mix` is the per-mille of unusual values.
 */
static void make_events(struct recfmt_event *ev, size_t nr, unsigned mix, uint64_t seed)
{
	uint64_t t = 1u << 20;

	for (size_t i = 0; i < nr; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		bool odd = seed % 1000 < mix;
		uint32_t site = odd ? 1 + (uint32_t)((seed >> 10) & (RECFMT_MAX_SITE_ID >> ((seed >> 40) % 31)))
				    : 1 + (uint32_t)((seed >> 10) % 40);
		if (odd) {
			switch ((seed >> 50) % 4) {
			case 0: t -= (seed >> 20) % 1000; break;
			case 1: t += (seed >> 8) & ((1ull << ((seed >> 56) % 63)) - 1); break;
			case 2: t -= t / 2; break;
			default: t += 1ull << 40; break;
			}
		} else {
			t += 20 + (seed >> 58);
		}
		ev[i].ticks = t;
		ev[i].code = RECFMT_CODE(site, (seed >> 33) & 1);
		ev[i].aux = 0;
	}
}

/* Decodes the block with batches of `batch` and checks every event. */
static void check_batches(const struct block *b, const struct recfmt_event *ev, size_t nr,
			  uint32_t batch)
{
	struct recfmt_events_iter it;
	struct recfmt_error err;
	uint64_t *ticks = malloc(batch * sizeof(*ticks));
	uint32_t *codes = malloc(batch * sizeof(*codes));
	size_t seen = 0;
	int n;

	cr_assert_eq(recfmt_events_open(&b->rec, &it, &err), RECFMT_OK);
	while ((n = recfmt_events_decode_batch(&it, ticks, codes, batch)) > 0) {
		cr_assert_leq((uint32_t)n, batch);
		for (int i = 0; i < n; i++, seen++) {
			cr_assert_eq(ticks[i], ev[seen].ticks, "event %zu, batch %u", seen, batch);
			cr_assert_eq(codes[i], ev[seen].code, "event %zu, batch %u", seen, batch);
		}
	}
	cr_assert_eq(n, 0);
	cr_assert_eq(seen, nr);
	cr_assert(recfmt_events_check_end(&it));
	free(ticks);
	free(codes);
}

static uint32_t batch_sizes[] = { 1, 3, 15, 16, 17, 100, 1024, 4096, NR + 5 };

ParameterizedTestParameters(batch_decode, equals_events_next_for_every_value_size)
{
	return cr_make_param_array(uint32_t, batch_sizes,
				   sizeof(batch_sizes) / sizeof(batch_sizes[0]));
}

ParameterizedTest(uint32_t *batch, batch_decode, equals_events_next_for_every_value_size)
{
	static const unsigned mixes[] = { 0, 2, 50, 500, 1000 };
	struct recfmt_event *ev = malloc(NR * sizeof(*ev));

	for (size_t m = 0; m < sizeof(mixes) / sizeof(mixes[0]); m++) {
		struct block b;

		make_events(ev, NR, mixes[m], 0x9e3779b97f4a7c15ull + m);
		encode(&b, ev, NR);
		check_batches(&b, ev, NR, *batch);
		release(&b);
	}
	free(ev);
}

Test(batch_decode, mixes_with_events_next_on_one_iterator)
{
	struct recfmt_event ev[1000];
	struct recfmt_events_iter it;
	struct recfmt_error err;
	uint64_t ticks[37], t;
	uint32_t codes[37], code;
	struct block b;
	size_t seen = 0;

	make_events(ev, 1000, 100, 42);
	encode(&b, ev, 1000);
	cr_assert_eq(recfmt_events_open(&b.rec, &it, &err), RECFMT_OK);
	while (seen < 1000) {
		int n = recfmt_events_decode_batch(&it, ticks, codes, 37);

		cr_assert_gt(n, 0);
		for (int i = 0; i < n; i++, seen++)
			cr_assert_eq(ticks[i], ev[seen].ticks);
		if (seen < 1000) {
			cr_assert_eq(recfmt_events_next(&it, &t, &code), 1);
			cr_assert_eq(t, ev[seen].ticks);
			cr_assert_eq(code, ev[seen].code);
			seen++;
		}
	}
	cr_assert_eq(recfmt_events_decode_batch(&it, ticks, codes, 37), 0);
	cr_assert(recfmt_events_check_end(&it));
	release(&b);
}

/*
 * A hand-made EVENTS payload of nr events whose columns are given, so that
 * they can be wrong. The bytes live in a heap block of exactly the payload's
 * size, so that ASan catches any read past the record.
 */
static uint8_t *make_payload(uint32_t nr, const uint8_t *ids, uint32_t ids_bytes,
			     const uint8_t *deltas, uint32_t deltas_bytes,
			     struct recfmt_record *rec)
{
	uint8_t *p = malloc(24 + ids_bytes + deltas_bytes);

	recfmt_store_u32le(p, 1);
	recfmt_store_u32le(p + 4, nr);
	recfmt_store_u64le(p + 8, 100);
	recfmt_store_u32le(p + 16, ids_bytes);
	recfmt_store_u32le(p + 20, 0);
	memcpy(p + 24, ids, ids_bytes);
	memcpy(p + 24 + ids_bytes, deltas, deltas_bytes);
	rec->type = RECFMT_EVENTS;
	rec->size = 24 + ids_bytes + deltas_bytes;
	rec->payload = p;
	rec->offset = 0;
	return p;
}

/* 40 events: enter/exit of site 1; the deltas column is given. */
static int decode_all(const uint8_t *deltas, uint32_t deltas_bytes, uint32_t nr,
		      uint32_t *decoded, bool *end_ok)
{
	uint8_t ids[64];
	struct recfmt_record rec;
	struct recfmt_events_iter it;
	struct recfmt_error err;
	uint64_t ticks[64];
	uint32_t codes[64];
	int n;

	for (uint32_t i = 0; i < nr; i++)
		ids[i] = (uint8_t)RECFMT_CODE(1, i & 1);
	uint8_t *p = make_payload(nr, ids, nr, deltas, deltas_bytes, &rec);
	cr_assert_eq(recfmt_events_open(&rec, &it, &err), RECFMT_OK);
	*decoded = 0;
	while ((n = recfmt_events_decode_batch(&it, ticks, codes, 64)) > 0)
		*decoded += (uint32_t)n;
	*end_ok = recfmt_events_check_end(&it);
	free(p);
	return n;
}

Test(batch_decode, stops_at_a_value_that_runs_past_its_column)
{
	uint8_t d[64];
	uint32_t got;
	bool end_ok;

	memset(d, 2, sizeof(d));
	d[39] = 0x80; /* the 40th delta says "more" but the column ends */
	cr_assert_eq(decode_all(d, 40, 40, &got, &end_ok), -1);
	cr_assert_eq(got, 39);
	cr_assert_not(end_ok);
}

Test(batch_decode, stops_at_a_delta_longer_than_ten_bytes)
{
	uint8_t d[64];
	uint32_t got;
	bool end_ok;

	memset(d, 2, sizeof(d));
	memset(d + 5, 0x80, 11); /* delta 6 has 12 bytes */
	cr_assert_eq(decode_all(d, 50, 40, &got, &end_ok), -1);
	cr_assert_eq(got, 5);
	cr_assert_not(end_ok);
}

Test(batch_decode, check_end_finds_bytes_left_over)
{
	uint8_t d[64];
	uint32_t got;
	bool end_ok;

	memset(d, 2, sizeof(d));
	cr_assert_eq(decode_all(d, 41, 40, &got, &end_ok), 0);
	cr_assert_eq(got, 40);
	cr_assert_not(end_ok);
	cr_assert_eq(decode_all(d, 40, 40, &got, &end_ok), 0);
	cr_assert_eq(got, 40);
	cr_assert(end_ok);
}

Test(batch_decode, rejects_an_id_above_32_bits)
{
	/* 20 good ids, then 2^32 as a 5-byte LEB128, then more good ones. */
	uint8_t ids[64], d[64];
	struct recfmt_record rec;
	struct recfmt_events_iter it;
	struct recfmt_error err;
	uint64_t ticks[64];
	uint32_t codes[64];
	uint32_t k = 0;

	for (int i = 0; i < 20; i++)
		ids[k++] = 2;
	ids[k++] = 0x80, ids[k++] = 0x80, ids[k++] = 0x80, ids[k++] = 0x80, ids[k++] = 0x10;
	for (int i = 0; i < 20; i++)
		ids[k++] = 3;
	memset(d, 0, sizeof(d));
	uint8_t *p = make_payload(41, ids, k, d, 41, &rec);
	cr_assert_eq(recfmt_events_open(&rec, &it, &err), RECFMT_OK);
	cr_assert_eq(recfmt_events_decode_batch(&it, ticks, codes, 64), 20);
	cr_assert_eq(recfmt_events_decode_batch(&it, ticks, codes, 64), -1);
	free(p);
}

/* recfmt_events_count_enters(): the enters that decoding finds, for every
 * value size, counted on a fresh iterator and on one part-way through. */
Test(batch_decode, count_enters_equals_the_decoded_enters)
{
	static const unsigned mixes[] = { 0, 2, 50, 500, 1000 };
	static const size_t sizes[] = { 0, 1, 15, 16, 17, 33, 1000, NR };
	struct recfmt_event *ev = malloc(NR * sizeof(*ev));

	for (size_t m = 0; m < sizeof(mixes) / sizeof(mixes[0]); m++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t nr = sizes[s] ? sizes[s] : 1;
			struct recfmt_events_iter it;
			struct recfmt_error err;
			uint64_t want = 0, t;
			uint32_t code;
			struct block b;

			make_events(ev, nr, mixes[m], 0x1234567ull + 7 * m + s);
			for (size_t i = 0; i < nr; i++)
				want += (ev[i].code & 1) == RECFMT_KIND_ENTER;
			encode(&b, ev, nr);
			cr_assert_eq(recfmt_events_open(&b.rec, &it, &err), RECFMT_OK);
			cr_assert_eq(recfmt_events_count_enters(&it), want, "mix %u, %zu events",
				     mixes[m], nr);
			/* Part-way: the enters of the values left. */
			for (size_t i = 0; i < nr / 2; i++) {
				cr_assert_eq(recfmt_events_next(&it, &t, &code), 1);
				want -= (code & 1) == RECFMT_KIND_ENTER;
			}
			cr_assert_eq(recfmt_events_count_enters(&it), want);
			release(&b);
		}
	free(ev);
}

/* A damaged ids column: never fewer enters than decoding returns. */
Test(batch_decode, count_enters_covers_what_a_damaged_block_decodes)
{
	uint8_t ids[64], d[64];
	struct recfmt_record rec;
	struct recfmt_events_iter it;
	struct recfmt_error err;
	uint64_t ticks[64];
	uint32_t codes[64], decoded = 0;
	int n;

	for (int i = 0; i < 40; i++)
		ids[i] = (uint8_t)RECFMT_CODE(3, i & 1); /* 20 enters */
	ids[30] = 0x80; /* value 31 runs into the next: 9 values after 29 */
	memset(d, 2, sizeof(d));
	uint8_t *p = make_payload(40, ids, 40, d, 40, &rec);
	cr_assert_eq(recfmt_events_open(&rec, &it, &err), RECFMT_OK);
	uint64_t counted = recfmt_events_count_enters(&it);
	uint64_t enters = 0;
	while ((n = recfmt_events_decode_batch(&it, ticks, codes, 64)) > 0)
		for (int i = 0; i < n; i++, decoded++)
			enters += (codes[i] & 1) == RECFMT_KIND_ENTER;
	cr_assert_lt(decoded, 40);
	cr_assert_geq(counted, enters);
	/* 15 enters before byte 30, byte 30 starts a value with bit 0 clear,
	 * and bytes 32..39 hold 4 more enters: 20. */
	cr_assert_eq(counted, 20);
	free(p);
}
