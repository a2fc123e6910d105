/* SPDX-License-Identifier: MIT */
/*
 * test_annots.c - annotation records (FORMAT.md §3.17-§3.19) written through
 * format/'s encoder come back exactly through the frame reader and the
 * decode API (recfmt_annots_open/next), FORMAT.md §4.1's worked example is
 * byte for byte what the encoder writes, the encoder refuses rows FORMAT.md
 * forbids, and the decoder refuses every damaged record without reading
 * past it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "recfmt.h"

static char path[64];

static void make_path(void)
{
	snprintf(path, sizeof(path), "/tmp/rec_annots_%d.zst", (int)getpid());
}

static void cleanup(void)
{
	unlink(path);
}

TestSuite(annots, .init = make_path, .fini = cleanup, .timeout = 30);

static struct recfmt_record one_record(const struct recfmt_buf *buf, size_t at)
{
	struct recfmt_cursor c;
	struct recfmt_record rec;
	struct recfmt_error err;

	recfmt_cursor_init(&c, buf->data + at, buf->len - at);
	cr_assert_eq(recfmt_cursor_next(&c, &rec, &err), RECFMT_OK);
	return rec;
}

/* FORMAT.md §4.1: the annotations of the worked example. */
static const struct recfmt_annot example[] = {
	{ .kind = RECFMT_ANNOT_VALUE_I64, .pos = 1, .ticks = 2040, .name_id = 1, .i64 = 3 },
	{ .kind = RECFMT_ANNOT_FLOW_BEGIN, .pos = 1, .ticks = 2050, .name_id = 3, .id = 7 },
	{ .kind = RECFMT_ANNOT_ARG, .pos = 2, .ticks = 2120, .name_id = 2, .i64 = 4096 },
	{ .kind = RECFMT_ANNOT_VALUE_F64, .pos = 3, .ticks = 2170, .name_id = 4, .f64 = 0.5 },
	{ .kind = RECFMT_ANNOT_MESSAGE, .pos = 4, .ticks = 2190, .text = "hi", .text_bytes = 2 },
};

static const uint8_t example_bytes[] = {
	0x11, 0x00, 0x00, 0x00, 0x3b, 0x00, 0x00, 0x00, /* ANNOTS, 59 bytes */
	0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, /* thread 1, 5 annotations */
	0xd0, 0x07, 0, 0, 0, 0, 0, 0,			/* base_ticks 2000 */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* nr_events 4, reserved */
	0x01, 0x01, 0x50, 0x01, 0x06,
	0x06, 0x00, 0x14, 0x03, 0x07,
	0x05, 0x01, 0x8c, 0x01, 0x02, 0x80, 0x40,
	0x02, 0x01, 0x64, 0x04, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f,
	0x04, 0x01, 0x28, 0x02, 0x68, 0x69,
};

static void encode_example(struct recfmt_buf *buf)
{
	struct recfmt_annots_encoder enc;

	cr_assert_eq(recfmt_annots_begin(&enc, buf, 1, 2000, 4), 0);
	for (size_t i = 0; i < sizeof(example) / sizeof(example[0]); i++)
		cr_assert_eq(recfmt_annots_append(&enc, &example[i]), 0, "row %zu", i);
	cr_assert_eq(recfmt_annots_finish(&enc), 0);
}

Test(annots, worked_example_of_format_md_is_what_the_encoder_writes)
{
	struct recfmt_buf buf;

	recfmt_buf_init(&buf);
	encode_example(&buf);
	cr_assert_eq(buf.len, sizeof(example_bytes));
	cr_assert_arr_eq(buf.data, example_bytes, sizeof(example_bytes));
	recfmt_buf_fini(&buf);
}

Test(annots, worked_example_decodes_to_its_annotations)
{
	struct recfmt_record rec = {
		.type = example_bytes[0],
		.size = sizeof(example_bytes) - 8,
		.payload = example_bytes + 8,
	};
	struct recfmt_annots_iter it;
	struct recfmt_annot a;
	struct recfmt_error err;
	size_t i = 0;

	cr_assert_eq(recfmt_annots_open(&rec, &it, &err), RECFMT_OK);
	cr_assert_eq(it.thread, 1);
	cr_assert_eq(it.nr_annots, 5);
	cr_assert_eq(it.nr_events, 4);
	while (recfmt_annots_next(&it, &a, &err) == RECFMT_OK) {
		const struct recfmt_annot *e = &example[i++];

		cr_assert_eq(a.kind, e->kind);
		cr_assert_eq(a.thread, 1);
		cr_assert_eq(a.pos, e->pos);
		cr_assert_eq(a.ticks, e->ticks);
		cr_assert_eq(a.name_id, e->name_id);
		cr_assert_eq(a.i64, e->i64);
		cr_assert_eq(a.id, e->id);
		cr_assert(a.f64 == e->f64);
		cr_assert_eq(a.text_bytes, e->text_bytes);
		if (e->text_bytes)
			cr_assert_arr_eq(a.text, e->text, e->text_bytes);
	}
	cr_assert_eq(i, 5);
	cr_assert_eq(recfmt_annots_next(&it, &a, &err), RECFMT_END_OF_INPUT);
}

/* Every kind, extreme values, backwards clock, long text, through a file. */
#define NR_ROWS 3000

static void make_rows(struct recfmt_annot *rows, char (*text)[256], uint32_t nr_events)
{
	uint64_t t = 1u << 20;
	uint32_t seed = 777, pos = 0;

	for (uint32_t i = 0; i < NR_ROWS; i++) {
		struct recfmt_annot *a = &rows[i];

		seed = seed * 1103515245u + 12345u;
		memset(a, 0, sizeof(*a));
		a->kind = 1 + i % RECFMT_ANNOT_KIND_MAX;
		if (pos < nr_events && (seed >> 28) < 6)
			pos += 1 + (seed >> 20) % 3 < nr_events - pos ? 1 + (seed >> 20) % 3
								      : nr_events - pos;
		a->pos = pos;
		t += (seed >> 27) == 0 ? (uint64_t)-(int64_t)(seed % 90) : (uint64_t)seed << (i % 24);
		a->ticks = t;
		if (a->kind != RECFMT_ANNOT_MESSAGE)
			a->name_id = i % 5 == 0 ? RECFMT_MAX_ANNOT_NAME_ID : 1 + seed % 1000;
		switch (a->kind) {
		case RECFMT_ANNOT_VALUE_I64:
		case RECFMT_ANNOT_ARG:
			a->i64 = i % 3 == 0 ? INT64_MIN : i % 3 == 1 ? INT64_MAX : -(int64_t)seed;
			break;
		case RECFMT_ANNOT_VALUE_F64:
			a->f64 = i % 4 == 0 ? -0.0 : i % 4 == 1 ? 1e300 : i % 4 == 2 ? -INFINITY : seed / 7.0;
			break;
		case RECFMT_ANNOT_MESSAGE:
			a->text_bytes = i % 2 ? 255 : seed % 17;
			for (uint32_t k = 0; k < a->text_bytes; k++)
				text[i][k] = (char)(seed + k * 31);
			a->text = text[i];
			break;
		case RECFMT_ANNOT_INSTANT:
			break;
		default:
			a->id = i % 2 ? UINT64_MAX : (uint64_t)seed << 32 | i;
			break;
		}
	}
}

Test(annots, every_kind_and_extreme_value_round_trips_through_a_file)
{
	static struct recfmt_annot rows[NR_ROWS];
	static char text[NR_ROWS][256];
	struct recfmt_compressor *zc = recfmt_compressor_create(1);
	struct recfmt_buf frame, out;
	struct recfmt_annots_encoder enc;
	struct recfmt_reader *r;
	struct recfmt_error err;
	const uint8_t *data;
	size_t len, got = 0, names = 0, drops = 0;
	FILE *f = fopen(path, "wb");

	cr_assert(zc && f);
	make_rows(rows, text, 2500);
	recfmt_buf_init(&frame);
	recfmt_buf_init(&out);
	cr_assert_eq(recfmt_encode_frame(&frame, 0), 0);
	cr_assert_eq(recfmt_encode_annot_name(&frame, 1, RECFMT_NAME_TRACK, 12, "queue", "x.c"), 0);
	cr_assert_eq(recfmt_encode_annot_name(&frame, RECFMT_MAX_ANNOT_NAME_ID, RECFMT_NAME_FLOW, 9,
					      "request", "y.c"),
		     0);
	cr_assert_eq(recfmt_annots_begin(&enc, &frame, 7, 1u << 20, 2500), 0);
	for (size_t i = 0; i < NR_ROWS; i++)
		cr_assert_eq(recfmt_annots_append(&enc, &rows[i]), 0, "row %zu", i);
	cr_assert_eq(recfmt_annots_finish(&enc), 0);
	cr_assert_eq(recfmt_encode_annot_drops(&frame, 7, 123456789012ull), 0);
	cr_assert_eq(recfmt_compress_frame(zc, &frame, &out), 0);
	cr_assert_eq(fwrite(out.data, 1, out.len, f), out.len);
	fclose(f);

	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK);
	cr_assert_eq(recfmt_reader_next(r, &data, &len, &err), RECFMT_OK);
	struct recfmt_cursor c;
	struct recfmt_record rec;

	recfmt_cursor_init(&c, data, len);
	while (recfmt_cursor_next(&c, &rec, &err) == RECFMT_OK) {
		if (rec.type == RECFMT_ANNOT_NAME) {
			struct recfmt_annot_name n;

			cr_assert_eq(recfmt_decode_annot_name(&rec, &n, &err), RECFMT_OK);
			if (n.id == 1) {
				cr_assert_eq(n.kind, RECFMT_NAME_TRACK);
				cr_assert_eq(n.line, 12);
				cr_assert_eq(n.name_bytes, 5);
				cr_assert_arr_eq(n.name, "queue", 5);
				cr_assert_arr_eq(n.file, "x.c", 3);
			} else {
				cr_assert_eq(n.id, RECFMT_MAX_ANNOT_NAME_ID);
				cr_assert_eq(n.kind, RECFMT_NAME_FLOW);
			}
			names++;
		} else if (rec.type == RECFMT_ANNOTS) {
			struct recfmt_annots_iter it;
			struct recfmt_annot a;
			enum recfmt_status st;

			cr_assert_eq(recfmt_annots_open(&rec, &it, &err), RECFMT_OK);
			cr_assert_eq(it.thread, 7);
			cr_assert_eq(it.nr_events, 2500);
			while ((st = recfmt_annots_next(&it, &a, &err)) == RECFMT_OK) {
				const struct recfmt_annot *e = &rows[got++];

				cr_assert_eq(a.kind, e->kind, "row %zu", got - 1);
				cr_assert_eq(a.thread, 7);
				cr_assert_eq(a.pos, e->pos);
				cr_assert_eq(a.ticks, e->ticks);
				cr_assert_eq(a.name_id, e->name_id);
				cr_assert_eq(a.i64, e->i64);
				cr_assert_eq(a.id, e->id);
				cr_assert_eq(memcmp(&a.f64, &e->f64, 8), 0, "row %zu: f64 bits", got - 1);
				cr_assert_eq(a.text_bytes, e->text_bytes);
				if (a.text_bytes)
					cr_assert_arr_eq(a.text, e->text, a.text_bytes);
			}
			cr_assert_eq(st, RECFMT_END_OF_INPUT, "%s", err.message);
		} else if (rec.type == RECFMT_ANNOT_DROPS) {
			struct recfmt_annot_drops d;

			cr_assert_eq(recfmt_decode_annot_drops(&rec, &d, &err), RECFMT_OK);
			cr_assert_eq(d.thread, 7);
			cr_assert_eq(d.nr_dropped, 123456789012ull);
			drops++;
		}
	}
	cr_assert_eq(got, NR_ROWS);
	cr_assert_eq(names, 2);
	cr_assert_eq(drops, 1);
	recfmt_reader_close(r);
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&out);
	recfmt_compressor_destroy(zc);
}

Test(annots, encoder_refuses_rows_format_md_forbids)
{
	struct recfmt_buf buf;
	struct recfmt_annots_encoder enc;
	char long_text[300] = { 0 };
	struct recfmt_annot ok = { .kind = RECFMT_ANNOT_INSTANT, .pos = 2, .name_id = 1 };
	struct recfmt_annot bad;
	size_t len;

	recfmt_buf_init(&buf);
	cr_assert_eq(recfmt_annots_begin(&enc, &buf, 1, 0, 3), 0);
	cr_assert_eq(recfmt_annots_append(&enc, &ok), 0);
	len = buf.len;
	bad = ok, bad.pos = 1; /* backwards */
	cr_assert_eq(recfmt_annots_append(&enc, &bad), -EINVAL);
	bad = ok, bad.pos = 4; /* past nr_events */
	cr_assert_eq(recfmt_annots_append(&enc, &bad), -EINVAL);
	bad = ok, bad.kind = 0;
	cr_assert_eq(recfmt_annots_append(&enc, &bad), -EINVAL);
	bad = ok, bad.kind = RECFMT_ANNOT_KIND_MAX + 1;
	cr_assert_eq(recfmt_annots_append(&enc, &bad), -EINVAL);
	bad = ok, bad.name_id = 0;
	cr_assert_eq(recfmt_annots_append(&enc, &bad), -EINVAL);
	bad = ok, bad.name_id = RECFMT_MAX_ANNOT_NAME_ID + 1;
	cr_assert_eq(recfmt_annots_append(&enc, &bad), -EINVAL);
	bad = (struct recfmt_annot){ .kind = RECFMT_ANNOT_MESSAGE, .pos = 3, .text = long_text,
				     .text_bytes = 256 };
	cr_assert_eq(recfmt_annots_append(&enc, &bad), -EINVAL);
	cr_assert_eq(buf.len, len, "a refused row appends nothing");
	cr_assert_eq(recfmt_encode_annot_name(&buf, 0, RECFMT_NAME_KEY, 1, "k", "f"), -EINVAL);
	cr_assert_eq(recfmt_encode_annot_name(&buf, 1, 0, 1, "k", "f"), -EINVAL);
	cr_assert_eq(recfmt_encode_annot_name(&buf, 1, RECFMT_NAME_FLOW + 1, 1, "k", "f"), -EINVAL);
	cr_assert_eq(buf.len, len);
	cr_assert_eq(recfmt_annots_finish(&enc), 0);
	recfmt_buf_fini(&buf);
}

Test(annots, an_annots_record_with_no_row_is_not_written)
{
	struct recfmt_buf buf;
	struct recfmt_annots_encoder enc;

	recfmt_buf_init(&buf);
	cr_assert_eq(recfmt_encode_frame(&buf, 0), 0);
	cr_assert_eq(recfmt_annots_begin(&enc, &buf, 1, 10, 0), 0);
	cr_assert_eq(recfmt_annots_finish(&enc), 0);
	cr_assert_eq(buf.len, 16);
	recfmt_buf_fini(&buf);
}

/* Decodes all of one ANNOTS record. Return: rows decoded; *st: the last status. */
static size_t decode_all(const struct recfmt_record *rec, enum recfmt_status *st)
{
	struct recfmt_annots_iter it;
	struct recfmt_annot a;
	struct recfmt_error err;
	size_t n = 0;

	*st = recfmt_annots_open(rec, &it, &err);
	if (*st != RECFMT_OK)
		return 0;
	while ((*st = recfmt_annots_next(&it, &a, &err)) == RECFMT_OK) {
		if (a.text_bytes)
			cr_assert(a.text >= (const char *)rec->payload &&
				  a.text + a.text_bytes <= (const char *)rec->payload + rec->size);
		n++;
	}
	return n;
}

/*
 * Every shorter size of the example's record (copied to a buffer of exactly
 * that size, so that ASan sees any read past it) is damaged and is refused.
 */
Test(annots, every_cut_of_a_record_is_refused_without_reading_past_it)
{
	for (uint32_t size = 0; size < sizeof(example_bytes) - 8; size++) {
		uint8_t *copy = malloc(size ? size : 1);
		struct recfmt_record rec = { .type = RECFMT_ANNOTS, .size = size, .payload = copy };
		enum recfmt_status st;

		memcpy(copy, example_bytes + 8, size);
		decode_all(&rec, &st);
		cr_assert_eq(st, RECFMT_CORRUPT, "size %u", size);
		free(copy);
	}
}

Test(annots, bytes_left_over_and_bad_fields_are_damage)
{
	uint8_t b[sizeof(example_bytes) + 1];
	struct recfmt_record rec = { .type = RECFMT_ANNOTS, .payload = b + 8 };
	enum recfmt_status st;

	memcpy(b, example_bytes, sizeof(example_bytes));
	b[sizeof(example_bytes)] = 0;
	rec.size = sizeof(example_bytes) - 7; /* one byte over */
	cr_assert_eq(decode_all(&rec, &st), 5);
	cr_assert_eq(st, RECFMT_CORRUPT);

	rec.size = sizeof(example_bytes) - 8;
	b[8 + 16] = 1; /* nr_events 1: the ARG's pos 2 is past it */
	cr_assert_eq(decode_all(&rec, &st), 2);
	cr_assert_eq(st, RECFMT_CORRUPT);
	b[8 + 16] = 4;

	b[8 + 24] = 9; /* unknown kind in the first row */
	cr_assert_eq(decode_all(&rec, &st), 0);
	cr_assert_eq(st, RECFMT_CORRUPT);
	b[8 + 24] = 1;

	b[8 + 4] = 200; /* more rows claimed than the bytes can hold */
	cr_assert_eq(decode_all(&rec, &st), 0);
	cr_assert_eq(st, RECFMT_CORRUPT);
	b[8 + 4] = 6; /* one row more than there is */
	cr_assert_eq(decode_all(&rec, &st), 5);
	cr_assert_eq(st, RECFMT_CORRUPT);
	b[8 + 4] = 5;

	b[8] = 0; /* thread serial 0 */
	cr_assert_eq(decode_all(&rec, &st), 0);
	cr_assert_eq(st, RECFMT_CORRUPT);
}

Test(annots, annot_name_and_drops_refuse_what_format_md_forbids)
{
	struct recfmt_buf buf;
	struct recfmt_record rec;
	struct recfmt_annot_name n;
	struct recfmt_annot_drops d;
	struct recfmt_error err;

	recfmt_buf_init(&buf);
	cr_assert_eq(recfmt_encode_annot_name(&buf, 5, RECFMT_NAME_KEY, 3, "bytes", "io.c"), 0);
	rec = one_record(&buf, 0);
	cr_assert_eq(rec.type, RECFMT_ANNOT_NAME);
	cr_assert_eq(rec.size, 24 + 5 + 4);
	cr_assert_eq(recfmt_decode_annot_name(&rec, &n, &err), RECFMT_OK);
	cr_assert_eq(n.id, 5);
	cr_assert_eq(n.kind, RECFMT_NAME_KEY);
	cr_assert_arr_eq(n.file, "io.c", 4);
	rec.size--; /* file overruns */
	cr_assert_eq(recfmt_decode_annot_name(&rec, &n, &err), RECFMT_CORRUPT);
	rec.size++;
	buf.data[8 + 4] = 5; /* unknown name kind */
	cr_assert_eq(recfmt_decode_annot_name(&rec, &n, &err), RECFMT_CORRUPT);
	buf.data[8 + 4] = 3;
	buf.data[8 + 3] = 0x10; /* id past 2^28 - 1 */
	cr_assert_eq(recfmt_decode_annot_name(&rec, &n, &err), RECFMT_CORRUPT);

	buf.len = 0;
	cr_assert_eq(recfmt_encode_annot_drops(&buf, 3, 9), 0);
	rec = one_record(&buf, 0);
	cr_assert_eq(rec.type, RECFMT_ANNOT_DROPS);
	cr_assert_eq(rec.size, 16);
	cr_assert_eq(recfmt_decode_annot_drops(&rec, &d, &err), RECFMT_OK);
	cr_assert_eq(d.thread, 3);
	cr_assert_eq(d.nr_dropped, 9);
	rec.size = 15;
	cr_assert_eq(recfmt_decode_annot_drops(&rec, &d, &err), RECFMT_CORRUPT);
	recfmt_buf_fini(&buf);
}

Test(annots, kinds_map_to_their_name_spaces)
{
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_VALUE_I64), RECFMT_NAME_TRACK);
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_VALUE_F64), RECFMT_NAME_TRACK);
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_INSTANT), RECFMT_NAME_INSTANT);
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_MESSAGE), 0);
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_ARG), RECFMT_NAME_KEY);
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_FLOW_BEGIN), RECFMT_NAME_FLOW);
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_FLOW_STEP), RECFMT_NAME_FLOW);
	cr_assert_eq(recfmt_annot_name_kind(RECFMT_ANNOT_FLOW_END), RECFMT_NAME_FLOW);
}
