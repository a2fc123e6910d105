/* SPDX-License-Identifier: MIT */
/*
 * test_rawframe.c - format/rawframe.c: XXH64 against zstd's own checksum
 * (the last 4 bytes of a frame zstd compressed with a checksum), and raw
 * frames that libzstd decompresses back to their parts, checksum verified,
 * at the lengths where blocks and the hash's stripes change. And the CRASH
 * record (FORMAT.md §3.21) that the crash frames end with.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <zstd.h>

#include "recfmt.h"

static uint8_t *pattern(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
	return p;
}

/* zstd's checksum of data: the low 32 bits of XXH64(data, 0). */
static uint32_t zstd_checksum(const uint8_t *data, size_t n)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(n), k;
	uint8_t *out = malloc(cap);
	uint32_t sum;

	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	k = ZSTD_compress2(c, out, cap, data, n);
	cr_assert(!ZSTD_isError(k));
	sum = recfmt_load_u32le(out + k - 4);
	free(out);
	ZSTD_freeCCtx(c);
	return sum;
}

static size_t sizes[] = { 0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 4095, 131071, 131072,
			  131073, 300000 };

ParameterizedTestParameters(rawframe, xxh64_matches_zstd_checksum)
{
	return cr_make_param_array(size_t, sizes, sizeof(sizes) / sizeof(sizes[0]));
}

ParameterizedTest(size_t *n, rawframe, xxh64_matches_zstd_checksum)
{
	uint8_t *data = pattern(*n);
	struct recfmt_xxh64 one, split;
	size_t at = 0, step = 1;

	recfmt_xxh64_init(&one, 0);
	recfmt_xxh64_update(&one, data, *n);
	cr_assert_eq((uint32_t)recfmt_xxh64_digest(&one), zstd_checksum(data, *n), "n=%zu", *n);
	/* Fed in uneven pieces: the same hash. */
	recfmt_xxh64_init(&split, 0);
	while (at < *n) {
		size_t k = *n - at < step ? *n - at : step;

		recfmt_xxh64_update(&split, data + at, k);
		at += k;
		step = step * 3 + 1;
	}
	cr_assert_eq(recfmt_xxh64_digest(&split), recfmt_xxh64_digest(&one));
	free(data);
}

Test(rawframe, xxh64_known_value)
{
	/* XXH64("", 0) from the xxHash reference. */
	struct recfmt_xxh64 s;

	recfmt_xxh64_init(&s, 0);
	cr_assert_eq(recfmt_xxh64_digest(&s), 0xEF46DB3751D8E999ull);
}

struct sink {
	uint8_t *data;
	size_t len, cap;
	size_t nr_calls;
};

static int to_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct sink *s = ctx;

	cr_assert_leq(s->len + n, s->cap);
	memcpy(s->data + s->len, p, n);
	s->len += n;
	s->nr_calls++;
	return 0;
}

ParameterizedTestParameters(rawframe, frame_decompresses_to_its_parts)
{
	return cr_make_param_array(size_t, sizes, sizeof(sizes) / sizeof(sizes[0]));
}

ParameterizedTest(size_t *n, rawframe, frame_decompresses_to_its_parts)
{
	uint8_t *data = pattern(*n), *back = malloc(*n + 1);
	/* Three parts, cut unevenly, one of them empty. */
	struct recfmt_slice parts[4] = {
		{ data, *n / 3 }, { data + *n / 3, 0 }, { data + *n / 3, *n / 2 - *n / 3 },
		{ data + *n / 2, *n - *n / 2 },
	};
	struct sink s = { .cap = *n + 64 + (*n / (128 << 10) + 1) * 3 };
	size_t got;

	s.data = malloc(s.cap);
	cr_assert_eq(recfmt_rawframe_emit(parts, 4, to_sink, &s), 0);
	cr_assert_eq(ZSTD_findFrameCompressedSize(s.data, s.len), s.len);
	cr_assert_eq(ZSTD_getFrameContentSize(s.data, s.len), *n);
	got = ZSTD_decompress(back, *n + 1, s.data, s.len);
	cr_assert(!ZSTD_isError(got), "n=%zu: %s", *n, ZSTD_getErrorName(got));
	cr_assert_eq(got, *n);
	cr_assert_eq(memcmp(back, data, *n), 0);
	/* A flipped content byte is caught by the checksum. */
	if (*n) {
		s.data[9 + 3] ^= 1;
		got = ZSTD_decompress(back, *n + 1, s.data, s.len);
		cr_assert(ZSTD_isError(got));
	}
	free(s.data);
	free(back);
	free(data);
}

/* Without the checksum (Parquet pages): 4 bytes shorter, still a frame zstd reads. */
ParameterizedTestParameters(rawframe, frame_without_checksum)
{
	return cr_make_param_array(size_t, sizes, sizeof(sizes) / sizeof(sizes[0]));
}

ParameterizedTest(size_t *n, rawframe, frame_without_checksum)
{
	uint8_t *data = pattern(*n), *back = malloc(*n + 1);
	struct recfmt_slice part = { data, *n };
	struct sink s = { .cap = *n + 64 + (*n / (128 << 10) + 1) * 3 }, t = s;
	size_t got;

	s.data = malloc(s.cap);
	t.data = malloc(t.cap);
	cr_assert_eq(recfmt_rawframe_emit_sum(&part, 1, false, to_sink, &s), 0);
	cr_assert_eq(recfmt_rawframe_emit(&part, 1, to_sink, &t), 0);
	cr_assert_eq(s.len + 4, t.len);
	cr_assert_eq(s.len, recfmt_rawframe_bytes(*n, false));
	cr_assert_eq(t.len, recfmt_rawframe_bytes(*n, true));
	cr_assert_eq(ZSTD_findFrameCompressedSize(s.data, s.len), s.len);
	got = ZSTD_decompress(back, *n + 1, s.data, s.len);
	cr_assert(!ZSTD_isError(got), "n=%zu: %s", *n, ZSTD_getErrorName(got));
	cr_assert_eq(got, *n);
	cr_assert_eq(memcmp(back, data, *n), 0);
	free(t.data);
	free(s.data);
	free(back);
	free(data);
}

static int refuse(void *ctx, const uint8_t *p, size_t n)
{
	(void)p;
	(void)n;
	return ++*(int *)ctx == 2 ? -5 : 0;
}

Test(rawframe, emit_error_stops_the_frame)
{
	uint8_t b[10] = { 0 };
	struct recfmt_slice part = { b, sizeof(b) };
	int calls = 0;

	cr_assert_eq(recfmt_rawframe_emit(&part, 1, refuse, &calls), -5);
	cr_assert_eq(calls, 2);
}

Test(rawframe, larger_than_a_frame_is_refused)
{
	struct recfmt_slice part = { "", (size_t)RECFMT_MAX_FRAME_BYTES + 1 };
	int calls = 0;

	cr_assert_eq(recfmt_rawframe_emit(&part, 1, refuse, &calls), -E2BIG);
	cr_assert_eq(calls, 0);
}

/* FORMAT.md §3.21: CRASH, 40 bytes, signed si_code; shorter than 32 is damage. */
Test(crash_record, round_trips_and_a_short_one_is_corrupt)
{
	const struct recfmt_crash in = { .signo = 11, .si_code = -6, .thread = 7,
					 .addr = 0xdeadbeef10ull, .ticks = 123456789ull };
	struct recfmt_error err = { 0 };
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	struct recfmt_crash out;
	struct recfmt_buf buf;

	recfmt_buf_init(&buf);
	cr_assert_eq(recfmt_encode_crash(&buf, &in), 0);
	cr_assert_eq(buf.len, 48);
	recfmt_cursor_init(&cur, buf.data, buf.len);
	cr_assert_eq(recfmt_cursor_next(&cur, &rec, &err), RECFMT_OK);
	cr_assert_eq(rec.type, RECFMT_CRASH);
	cr_assert_eq(rec.type, 22);
	cr_assert_eq(rec.size, 40);
	cr_assert_eq(recfmt_decode_crash(&rec, &out, &err), RECFMT_OK);
	cr_assert_eq(out.signo, 11);
	cr_assert_eq(out.si_code, -6);
	cr_assert_eq(out.thread, 7);
	cr_assert_eq(out.flags, 0);
	cr_assert_eq(out.addr, 0xdeadbeef10ull);
	cr_assert_eq(out.ticks, 123456789ull);
	rec.size = 31;
	cr_assert_eq(recfmt_decode_crash(&rec, &out, &err), RECFMT_CORRUPT);
	recfmt_buf_fini(&buf);
}
