/* SPDX-License-Identifier: MIT */
/*
 * pq_gen.c - writes, with analyzer/out/parquet.c, a Parquet file whose every
 * value follows from the row number by rules that pq_read.cjs repeats, so an
 * independent reader can check each one: several row groups and pages,
 * negative numbers, nulls in INT32 and string columns, booleans, a
 * dictionary with non-ASCII text and an empty string, and integers whose
 * deltas need every bit width up to 64 (xorshift64, INT64_MIN/MAX).
 *   pq_gen OUT.parquet ROWS ROW_GROUP_ROWS PAGE_ROWS
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/parquet.h"

/* pq_gen --int-row|--values|--thread OUT ROWS ROW_GROUP_ROWS PAGE_ROWS: a
 * table with no string column written by tt_pq_int_row() or by the
 * per-value calls, or by tt_pq_int_row() with the writer's encoding thread
 * (tt_pq_opts.encode_thread); parquet.sh checks that the files are
 * byte-identical. --int-row also
 * checks that tt_pq_int_row() refuses a table with a string column and a
 * null in a REQUIRED column (-EINVAL). */
static int int_rows(bool one_call, bool thread, char **argv)
{
	long rows = atol(argv[1]);
	struct tt_pq_opts o = { .row_group_rows = (uint64_t)atol(argv[2]),
				.page_rows = (uint32_t)atol(argv[3]),
				.encode_thread = thread };
	const struct tt_pq_col cols[] = {
		{ "a", TT_PQ_INT64, false }, { "b", TT_PQ_INT64, true },
		{ "c", TT_PQ_INT32, false }, { "d", TT_PQ_BOOL, false },
	};
	struct tt_pq *w = tt_pq_create(argv[0], cols, 4, &o);
	if (!w) {
		perror(argv[0]);
		return 1;
	}
	uint64_t x = 88172645463325252ull;
	for (long i = 0; i < rows; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* c: every 11th value at an end of the int32 range, so some
		 * differences wrap in 32 bits */
		int64_t v[4] = { i % 5 ? (int64_t)x : i * 3 - 7, i * 1000 - 123456789,
				 i % 11 == 5 ? (i & 1 ? INT32_MAX - i : INT32_MIN + i)
					     : (int32_t)(i * 7919) - 1000000,
				 i % 3 == 1 };
		bool null = i % 7 == 3;
		int rc;
		if (one_call) {
			/* half the rows in place: the same bytes */
			int64_t *row = i % 2 ? tt_pq_int_row_begin(w) : NULL;
			if (row) {
				memcpy(row, v, sizeof(v));
				rc = tt_pq_int_row_done(w, null ? 1u << 1 : 0);
			} else {
				rc = tt_pq_int_row(w, v, null ? 1u << 1 : 0);
			}
		} else {
			tt_pq_i64(w, v[0]);
			if (null)
				tt_pq_null(w);
			else
				tt_pq_i64(w, v[1]);
			tt_pq_i32(w, (int32_t)v[2]);
			tt_pq_bool(w, v[3]);
			rc = tt_pq_row_end(w);
		}
		if (rc) {
			fprintf(stderr, "pq_gen: row %ld: %s\n", i, strerror(-rc));
			return 1;
		}
	}
	if (tt_pq_close(w, NULL))
		return 1;
	if (one_call && !thread) {
		const struct tt_pq_col bad[] = { { "s", TT_PQ_STRING, false } };
		int64_t v[1] = { 0 };
		char path[4096];
		snprintf(path, sizeof(path), "%s.bad", argv[0]);
		w = tt_pq_create(path, bad, 1, &o);
		int rc = w ? tt_pq_int_row(w, v, 0) : -1;
		if (w)
			tt_pq_close(w, NULL);
		/* in place: refused for a string column, and a per-value call
		 * inside an open row */
		w = tt_pq_create(path, bad, 1, &o);
		if (!w || tt_pq_int_row_begin(w) || tt_pq_int_row_done(w, 0) != -EINVAL) {
			fprintf(stderr, "pq_gen: int_row_begin on a string table not refused\n");
			return 1;
		}
		tt_pq_close(w, NULL);
		w = tt_pq_create(path, cols, 4, &o);
		int64_t *row = w ? tt_pq_int_row_begin(w) : NULL;
		if (!row) {
			fprintf(stderr, "pq_gen: int_row_begin refused a valid row\n");
			return 1;
		}
		tt_pq_i64(w, 1);
		if (tt_pq_int_row_done(w, 0) != -EINVAL) {
			fprintf(stderr, "pq_gen: a value inside an open row not refused\n");
			return 1;
		}
		tt_pq_close(w, NULL);
		w = tt_pq_create(path, cols, 1, &o);
		int rc2 = w ? tt_pq_int_row(w, v, 1) : -1;
		if (w)
			tt_pq_close(w, NULL);
		if (rc != -EINVAL || rc2 != -EINVAL) {
			fprintf(stderr, "pq_gen: misuse not refused (%d, %d)\n", rc, rc2);
			return 1;
		}
		remove(path);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && (!strcmp(argv[1], "--int-row") || !strcmp(argv[1], "--values") ||
			  !strcmp(argv[1], "--thread")))
		return int_rows(strcmp(argv[1], "--values") != 0, !strcmp(argv[1], "--thread"),
				argv + 2);
	if (argc != 5) {
		fprintf(stderr, "usage: pq_gen OUT ROWS ROW_GROUP_ROWS PAGE_ROWS\n");
		return 2;
	}
	long rows = atol(argv[2]);
	struct tt_pq_opts o = { .row_group_rows = (uint64_t)atol(argv[3]),
				.page_rows = (uint32_t)atol(argv[4]) };
	const struct tt_pq_col cols[] = {
		{ "id", TT_PQ_INT64, false },
		{ "small", TT_PQ_INT32, true },
		{ "flag", TT_PQ_BOOL, false },
		{ "name", TT_PQ_STRING, true },
		{ "big", TT_PQ_INT64, true },
		{ "rnd", TT_PQ_INT64, false },
	};
	struct tt_pq *w = tt_pq_create(argv[1], cols, 6, &o);
	if (!w) {
		perror(argv[1]);
		return 1;
	}
	tt_pq_meta(w, "rec.test", "pq_gen");
	char name[64];
	uint64_t x = 88172645463325252ull; /* xorshift64: deltas of every bit width to 64 */
	for (long i = 0; i < rows; i++) {
		tt_pq_i64(w, i * 1000003 - 5000000000LL);
		if (i % 7 == 0)
			tt_pq_null(w);
		else
			tt_pq_i32(w, (int32_t)((i * 31) % 1000003) - 500000);
		tt_pq_bool(w, i % 3 == 0);
		if (i % 11 == 0) {
			tt_pq_null(w);
		} else if (i % 13 == 0) {
			tt_pq_str(w, "", 0);
		} else if (i % 17 == 0) {
			tt_pq_str(w, "gr\xc3\xbc\xc3\x9f" "e", 7); /* "grüße" */
		} else {
			int n = snprintf(name, sizeof(name), "name_%ld", i % 50);
			tt_pq_str(w, name, (size_t)n);
		}
		if (i >= 100 && i < rows - 100) /* nulls only at both ends: long runs */
			tt_pq_i64(w, i);
		else
			tt_pq_null(w);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* small steps for a while, then full 64-bit jumps, then INT64 extremes */
		tt_pq_i64(w, i % 1000 < 300 ? i : i % 1000 < 600 ? (int64_t)x
			       : (i & 1) ? INT64_MIN : INT64_MAX);
		int rc = tt_pq_row_end(w);
		if (rc) {
			fprintf(stderr, "pq_gen: row %ld: %s\n", i, strerror(-rc));
			return 1;
		}
	}
	uint64_t bytes;
	int rc = tt_pq_close(w, &bytes);
	if (rc) {
		fprintf(stderr, "pq_gen: close: %s\n", strerror(-rc));
		return 1;
	}
	printf("%llu\n", (unsigned long long)bytes);
	return 0;
}
