/* SPDX-License-Identifier: MIT */
/*
 * test_reader_into.c - recfmt_reader_next_into() (frames.c) returns the same
 * frames, statuses, messages and error locations as recfmt_reader_next(),
 * on clean, damaged and truncated files, while each frame stays in the
 * caller's buffer after later calls (what tracetool's reader thread needs to
 * queue several frames).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <unistd.h>

#include "recfmt.h"

#define NR_FRAMES 3

static char path[64];

static void make_path(void)
{
	snprintf(path, sizeof(path), "/tmp/rec_reader_into_%d.zst", (int)getpid());
}

static void cleanup(void)
{
	unlink(path);
}

TestSuite(reader_into, .init = make_path, .fini = cleanup, .timeout = 30);

/* What is done to the file after its three frames are written. */
enum damage {
	CLEAN,
	BAD_CHECKSUM_IN_FRAME_1, /* skipped; frame 2 still read */
	GARBAGE_BEFORE_FRAME_2,	 /* resync finds frame 2 */
	CUT_INSIDE_FRAME_2,	 /* truncated */
	NR_DAMAGE,
};

/*
 * Writes NR_FRAMES frames of different sizes (so each buffer must grow on
 * its own) and keeps their decompressed bytes in plain[] for comparison.
 */
static void write_trace(enum damage damage, struct recfmt_buf plain[NR_FRAMES])
{
	struct recfmt_compressor *c = recfmt_compressor_create(1);
	struct recfmt_buf out;
	size_t offset[NR_FRAMES + 1] = { 0 };
	uint8_t *file = NULL;
	size_t file_len = 0;
	FILE *f;

	cr_assert(c);
	recfmt_buf_init(&out);
	for (uint32_t i = 0; i < NR_FRAMES; i++) {
		recfmt_buf_init(&plain[i]);
		cr_assert_eq(recfmt_encode_frame(&plain[i], i), 0);
		for (uint32_t s = 0; s < 200u * (i + 1) * (i + 1); s++)
			cr_assert_eq(recfmt_encode_site(&plain[i], s + 1, s, "name_of_a_function",
							"file.c"),
				     0);
		cr_assert_eq(recfmt_compress_frame(c, &plain[i], &out), 0);
		file = realloc(file, file_len + out.len + 16);
		cr_assert(file);
		memcpy(file + file_len, out.data, out.len);
		file_len += out.len;
		offset[i + 1] = file_len;
	}
	switch (damage) {
	case BAD_CHECKSUM_IN_FRAME_1:
		file[offset[2] - 1] ^= 0x40; /* the last byte is the checksum's */
		break;
	case GARBAGE_BEFORE_FRAME_2:
		memmove(file + offset[2] + 7, file + offset[2], file_len - offset[2]);
		memset(file + offset[2], 0xa5, 7);
		file_len += 7;
		break;
	case CUT_INSIDE_FRAME_2:
		file_len = offset[2] + (offset[3] - offset[2]) / 2;
		break;
	default:
		break;
	}
	f = fopen(path, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(file, 1, file_len, f), file_len);
	cr_assert_eq(fclose(f), 0);
	free(file);
	recfmt_buf_fini(&out);
	recfmt_compressor_destroy(c);
}

ParameterizedTestParameters(reader_into, matches_reader_next_on_every_damage)
{
	static enum damage damage[NR_DAMAGE] = { CLEAN, BAD_CHECKSUM_IN_FRAME_1,
						 GARBAGE_BEFORE_FRAME_2, CUT_INSIDE_FRAME_2 };

	return cr_make_param_array(enum damage, damage, NR_DAMAGE);
}

ParameterizedTest(enum damage *damage, reader_into, matches_reader_next_on_every_damage)
{
	struct recfmt_buf plain[NR_FRAMES], held[NR_FRAMES + 2];
	struct recfmt_reader *a, *b;
	struct recfmt_error ea = { 0 }, eb = { 0 };
	enum recfmt_status sa, sb;
	const uint8_t *data;
	size_t len;
	uint32_t nr_calls = 0, nr_ok = 0;

	write_trace(*damage, plain);
	cr_assert_eq(recfmt_reader_open(&a, path, &ea), RECFMT_OK);
	cr_assert_eq(recfmt_reader_open(&b, path, &eb), RECFMT_OK);
	for (uint32_t i = 0; i < NR_FRAMES + 2; i++)
		recfmt_buf_init(&held[i]);
	do {
		cr_assert_lt(nr_calls, NR_FRAMES + 2, "the readers never reach the end");
		sa = recfmt_reader_next(a, &data, &len, &ea);
		sb = recfmt_reader_next_into(b, &held[nr_calls], &eb);
		cr_assert_eq(sb, sa, "call %u: status %d, recfmt_reader_next says %d", nr_calls,
			     sb, sa);
		cr_assert_eq(recfmt_reader_frame_index(b), recfmt_reader_frame_index(a));
		cr_assert_eq(recfmt_reader_frame_offset(b), recfmt_reader_frame_offset(a));
		cr_assert_eq(recfmt_reader_can_continue(b), recfmt_reader_can_continue(a));
		if (sa == RECFMT_OK) {
			cr_assert_eq(held[nr_calls].len, len);
			cr_assert_eq(memcmp(held[nr_calls].data, data, len), 0);
			nr_ok++;
		} else {
			cr_assert_eq(held[nr_calls].len, 0);
		}
		if (sa != RECFMT_OK && sa != RECFMT_END_OF_INPUT) {
			cr_assert_eq(eb.frame_index, ea.frame_index);
			cr_assert_eq(eb.frame_offset, ea.frame_offset);
			cr_assert_str_eq(eb.message, ea.message);
		}
		nr_calls++;
	} while (sa == RECFMT_OK || (sa == RECFMT_CORRUPT && recfmt_reader_can_continue(a)));

	/* Every frame read is still intact in its own buffer, and is frame seq. */
	for (uint32_t i = 0, k = 0; i < nr_calls; i++) {
		struct recfmt_cursor cur;
		struct recfmt_record rec;
		uint32_t seq;

		if (!held[i].len)
			continue;
		recfmt_cursor_init(&cur, held[i].data, held[i].len);
		cr_assert_eq(recfmt_cursor_next(&cur, &rec, &ea), RECFMT_OK);
		cr_assert_eq(recfmt_decode_frame(&rec, &seq, &ea), RECFMT_OK);
		cr_assert_eq(held[i].len, plain[seq].len, "frame seq %u", seq);
		cr_assert_eq(memcmp(held[i].data, plain[seq].data, held[i].len), 0);
		k++;
		cr_assert_leq(k, nr_ok);
	}
	switch (*damage) {
	case CLEAN:
	case GARBAGE_BEFORE_FRAME_2: /* one CORRUPT call, then frame 2 */
		cr_assert_eq(nr_ok, 3);
		cr_assert_eq(nr_calls, *damage == CLEAN ? 4 : 5);
		cr_assert_eq(sa, RECFMT_END_OF_INPUT);
		break;
	case BAD_CHECKSUM_IN_FRAME_1:
		cr_assert_eq(nr_ok, 2);
		cr_assert_eq(nr_calls, 4);
		cr_assert_eq(sa, RECFMT_END_OF_INPUT);
		break;
	default:
		cr_assert_eq(nr_ok, 2);
		cr_assert_eq(sa, RECFMT_TRUNCATED);
		cr_assert_eq(ea.frame_index, 2);
		break;
	}
	for (uint32_t i = 0; i < NR_FRAMES + 2; i++)
		recfmt_buf_fini(&held[i]);
	for (uint32_t i = 0; i < NR_FRAMES; i++)
		recfmt_buf_fini(&plain[i]);
	recfmt_reader_close(a);
	recfmt_reader_close(b);
}

Test(reader_into, one_buffer_is_reused_and_calls_mix_with_reader_next)
{
	struct recfmt_buf plain[NR_FRAMES], buf;
	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	const uint8_t *data;
	size_t len;

	write_trace(CLEAN, plain);
	recfmt_buf_init(&buf);
	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK);
	cr_assert_eq(recfmt_reader_next_into(r, &buf, &err), RECFMT_OK);
	cr_assert_eq(buf.len, plain[0].len);
	cr_assert_eq(memcmp(buf.data, plain[0].data, buf.len), 0);
	cr_assert_eq(recfmt_reader_next(r, &data, &len, &err), RECFMT_OK);
	cr_assert_eq(len, plain[1].len);
	cr_assert_eq(memcmp(data, plain[1].data, len), 0);
	/* The frame in buf was not touched by recfmt_reader_next(). */
	cr_assert_eq(memcmp(buf.data, plain[0].data, buf.len), 0);
	cr_assert_eq(recfmt_reader_next_into(r, &buf, &err), RECFMT_OK);
	cr_assert_eq(buf.len, plain[2].len);
	cr_assert_geq(buf.cap, buf.len);
	cr_assert_eq(memcmp(buf.data, plain[2].data, buf.len), 0);
	cr_assert_eq(recfmt_reader_frame_index(r), 2);
	cr_assert_eq(recfmt_reader_next_into(r, &buf, &err), RECFMT_END_OF_INPUT);
	cr_assert_eq(buf.len, 0);
	recfmt_reader_close(r);
	recfmt_buf_fini(&buf);
	for (uint32_t i = 0; i < NR_FRAMES; i++)
		recfmt_buf_fini(&plain[i]);
}

/*
 * recfmt_reader_next_compressed() + recfmt_frame_decompress() (what
 * tracetool's walkers do to decompress frames in parallel) give what
 * recfmt_reader_next() gives, call for call, on every damage: the frames
 * are claimed two at a time and decompressed in reverse order with two
 * contexts, as two threads may.
 */
ParameterizedTestParameters(reader_into, split_read_and_decompress_match_reader_next)
{
	static enum damage damage[NR_DAMAGE] = { CLEAN, BAD_CHECKSUM_IN_FRAME_1,
						 GARBAGE_BEFORE_FRAME_2, CUT_INSIDE_FRAME_2 };

	return cr_make_param_array(enum damage, damage, NR_DAMAGE);
}

ParameterizedTest(enum damage *damage, reader_into, split_read_and_decompress_match_reader_next)
{
	struct recfmt_buf plain[NR_FRAMES], out[2];
	struct recfmt_frame_bytes fb[2];
	struct recfmt_dctx *dctx[2] = { recfmt_dctx_new(), recfmt_dctx_new() };
	struct recfmt_reader *a, *b;
	struct recfmt_error ea = { 0 }, eb[2];
	enum recfmt_status sa = RECFMT_OK, sb[2];
	bool more = true;
	const uint8_t *data;
	size_t len;
	uint32_t nr_calls = 0, nr_ok = 0;

	cr_assert(dctx[0] && dctx[1]);
	write_trace(*damage, plain);
	cr_assert_eq(recfmt_reader_open(&a, path, &ea), RECFMT_OK);
	cr_assert_eq(recfmt_reader_open(&b, path, &ea), RECFMT_OK);
	for (int j = 0; j < 2; j++) {
		recfmt_buf_init(&fb[j].buf);
		recfmt_buf_init(&out[j]);
	}
	while (more) {
		uint64_t index[2], offset[2];
		bool cont[2];
		int n = 0;

		cr_assert_lt(nr_calls, NR_FRAMES + 3, "the readers never reach the end");
		/* Claim up to two frames, in file order. */
		for (; n < 2; n++) {
			memset(&eb[n], 0, sizeof(eb[n]));
			sb[n] = recfmt_reader_next_compressed(b, &fb[n], &eb[n]);
			index[n] = recfmt_reader_frame_index(b);
			offset[n] = recfmt_reader_frame_offset(b);
			cont[n] = recfmt_reader_can_continue(b);
			if (sb[n] != RECFMT_OK) {
				cr_assert_eq(fb[n].buf.len, 0);
				if (!(sb[n] == RECFMT_CORRUPT && cont[n])) {
					n++;
					break;
				}
			} else {
				cr_assert_eq(fb[n].index, index[n]);
				cr_assert_eq(fb[n].offset, offset[n]);
			}
		}
		/* Decompress them last first, each with its own context. */
		for (int j = n - 1; j >= 0; j--)
			if (sb[j] == RECFMT_OK)
				sb[j] = recfmt_frame_decompress(dctx[j], &fb[j], &out[j], &eb[j]);
		for (int j = 0; j < n && more; j++) {
			sa = recfmt_reader_next(a, &data, &len, &ea);
			cr_assert_eq(sb[j], sa, "call %u: status %d, recfmt_reader_next says %d",
				     nr_calls, sb[j], sa);
			cr_assert_eq(index[j], recfmt_reader_frame_index(a));
			cr_assert_eq(offset[j], recfmt_reader_frame_offset(a));
			cr_assert_eq(cont[j], recfmt_reader_can_continue(a));
			if (sa == RECFMT_OK) {
				cr_assert_eq(out[j].len, len);
				cr_assert_eq(memcmp(out[j].data, data, len), 0);
				nr_ok++;
			} else if (sa != RECFMT_END_OF_INPUT) {
				cr_assert_eq(eb[j].frame_index, ea.frame_index);
				cr_assert_eq(eb[j].frame_offset, ea.frame_offset);
				cr_assert_str_eq(eb[j].message, ea.message);
			}
			nr_calls++;
			more = sa == RECFMT_OK || (sa == RECFMT_CORRUPT && recfmt_reader_can_continue(a));
		}
	}
	switch (*damage) {
	case CLEAN:
	case GARBAGE_BEFORE_FRAME_2:
		cr_assert_eq(nr_ok, 3);
		cr_assert_eq(sa, RECFMT_END_OF_INPUT);
		break;
	case BAD_CHECKSUM_IN_FRAME_1:
		cr_assert_eq(nr_ok, 2);
		cr_assert_eq(sa, RECFMT_END_OF_INPUT);
		break;
	default:
		cr_assert_eq(nr_ok, 2);
		cr_assert_eq(sa, RECFMT_TRUNCATED);
		break;
	}
	for (int j = 0; j < 2; j++) {
		recfmt_buf_fini(&fb[j].buf);
		recfmt_buf_fini(&out[j]);
		recfmt_dctx_free(dctx[j]);
	}
	for (uint32_t i = 0; i < NR_FRAMES; i++)
		recfmt_buf_fini(&plain[i]);
	recfmt_reader_close(a);
	recfmt_reader_close(b);
}
