/* SPDX-License-Identifier: MIT */
/*
 * test_counters.c - the counter records of format 1.1 (FORMAT.md §3.13,
 * §3.14): COUNTER_SET and COUNTERS blocks written by the encoder come back
 * exactly through the decoder, large jumps and counters going down
 * included, and damaged blocks are refused with a message instead of being
 * misread.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "recfmt.h"

TestSuite(counters, .timeout = 30);

static void first_record(const struct recfmt_buf *b, struct recfmt_record *rec)
{
	struct recfmt_cursor cur;
	struct recfmt_error err = { 0 };

	recfmt_cursor_init(&cur, b->data, b->len);
	cr_assert_eq(recfmt_cursor_next(&cur, rec, &err), RECFMT_OK, "%s", err.message);
}

Test(counters, counter_set_round_trips_names_and_flags)
{
	const char *names[3] = { "instructions", "page-faults", "context-switches" };
	const uint32_t flags[3] = { 0, RECFMT_COUNTER_RECORDED, RECFMT_COUNTER_RECORDED };
	struct recfmt_counter_set cs;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	struct recfmt_buf b;

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_counter_set(&b, 7, 3, names, flags), 0);
	first_record(&b, &rec);
	cr_assert_eq(rec.type, RECFMT_COUNTER_SET);
	cr_assert_eq(recfmt_decode_counter_set(&rec, &cs, &err), RECFMT_OK, "%s", err.message);
	cr_assert_eq(cs.thread, 7);
	cr_assert_eq(cs.nr, 3);
	cr_assert_eq(cs.nr_columns, 2);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(cs.c[i].flags, flags[i]);
		cr_assert_eq(cs.c[i].name_bytes, strlen(names[i]));
		cr_assert_eq(memcmp(cs.c[i].name, names[i], strlen(names[i])), 0);
	}
	recfmt_buf_fini(&b);
}

Test(counters, counters_block_round_trips_every_value_column_major)
{
	enum { N = 1000, K = 3 };
	uint64_t *in = malloc(N * K * sizeof(*in)), *out = malloc(N * K * sizeof(*out));
	struct recfmt_counters cb;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	struct recfmt_buf b;

	for (uint64_t i = 0; i < N; i++) {
		in[i * K + 0] = i * 1000003;		      /* grows */
		in[i * K + 1] = i % 2 ? UINT64_MAX - i : i; /* jumps both ways */
		in[i * K + 2] = 42;			      /* constant */
	}
	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_counters(&b, 3, N, K, in), 0);
	first_record(&b, &rec);
	cr_assert_eq(rec.type, RECFMT_COUNTERS);
	cr_assert_eq(recfmt_counters_open(&rec, &cb, &err), RECFMT_OK, "%s", err.message);
	cr_assert_eq(cb.thread, 3);
	cr_assert_eq(cb.nr_events, N);
	cr_assert_eq(cb.nr_columns, K);
	cr_assert_eq(recfmt_counters_decode(&cb, out, &rec, &err), RECFMT_OK, "%s", err.message);
	for (uint64_t i = 0; i < N; i++)
		for (uint64_t c = 0; c < K; c++)
			cr_assert_eq(out[c * N + i], in[i * K + c], "event %lu column %lu",
				     (unsigned long)i, (unsigned long)c);
	recfmt_buf_fini(&b);
	free(in);
	free(out);
}

Test(counters, counters_block_with_bytes_missing_or_over_is_corrupt)
{
	uint64_t in[4] = { 1, 2, 300, 400 }, out[4];
	struct recfmt_counters cb;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	struct recfmt_buf b;

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_counters(&b, 1, 2, 2, in), 0);
	first_record(&b, &rec);
	/* One byte short: the last column ends early. */
	rec.size--;
	cr_assert_eq(recfmt_counters_open(&rec, &cb, &err), RECFMT_OK);
	cr_assert_eq(recfmt_counters_decode(&cb, out, &rec, &err), RECFMT_CORRUPT);
	cr_assert_str_eq(err.message, "COUNTERS column 1 ends early");
	/* Claiming more events than bytes: refused before any allocation. */
	rec.size++;
	recfmt_store_u32le(b.data + RECFMT_RECORD_HEADER_BYTES + 4, 1000);
	cr_assert_eq(recfmt_counters_open(&rec, &cb, &err), RECFMT_CORRUPT);
	/* One event fewer: bytes left over. */
	recfmt_store_u32le(b.data + RECFMT_RECORD_HEADER_BYTES + 4, 1);
	cr_assert_eq(recfmt_counters_open(&rec, &cb, &err), RECFMT_OK);
	cr_assert_eq(recfmt_counters_decode(&cb, out, &rec, &err), RECFMT_CORRUPT);
	/* Zero columns, or too many. */
	recfmt_store_u32le(b.data + RECFMT_RECORD_HEADER_BYTES + 8, 0);
	cr_assert_eq(recfmt_counters_open(&rec, &cb, &err), RECFMT_CORRUPT);
	recfmt_store_u32le(b.data + RECFMT_RECORD_HEADER_BYTES + 8, RECFMT_MAX_COUNTERS + 1);
	cr_assert_eq(recfmt_counters_open(&rec, &cb, &err), RECFMT_CORRUPT);
	recfmt_buf_fini(&b);
}

Test(counters, counter_set_with_overrunning_name_or_too_many_entries_is_corrupt)
{
	const char *names[1] = { "cycles" };
	const uint32_t flags[1] = { RECFMT_COUNTER_RECORDED };
	struct recfmt_counter_set cs;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	struct recfmt_buf b;

	recfmt_buf_init(&b);
	cr_assert_eq(recfmt_encode_counter_set(&b, 1, 1, names, flags), 0);
	first_record(&b, &rec);
	rec.size--;
	cr_assert_eq(recfmt_decode_counter_set(&rec, &cs, &err), RECFMT_CORRUPT);
	rec.size++;
	recfmt_store_u32le(b.data + RECFMT_RECORD_HEADER_BYTES + 4, RECFMT_MAX_COUNTERS + 1);
	cr_assert_eq(recfmt_decode_counter_set(&rec, &cs, &err), RECFMT_CORRUPT);
	cr_assert_eq(recfmt_encode_counter_set(&b, 1, RECFMT_MAX_COUNTERS + 1, names, flags),
		     -EINVAL);
	recfmt_buf_fini(&b);
}
