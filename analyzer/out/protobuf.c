/* SPDX-License-Identifier: MIT */
/*
 * protobuf.c - the encoder of protobuf.h. Wire types: 0 varint, 1 fixed64,
 * 2 length-delimited; a field's key is the varint (field << 3 | wire type).
 */
#include "out/protobuf.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

static void reserve(struct tt_pb *pb, size_t more)
{
	if (pb->n + more <= pb->cap)
		return;
	size_t cap = pb->cap ? pb->cap : 4096;
	while (cap < pb->n + more)
		cap *= 2;
	pb->p = tt_xrealloc(pb->p, cap);
	pb->cap = cap;
}

uint8_t *tt_pb_reserve(struct tt_pb *pb, size_t n)
{
	reserve(pb, n);
	return pb->p + pb->n;
}

/* Callers have reserved 10 bytes. */
static inline void put_varint(struct tt_pb *pb, uint64_t v)
{
	while (v >= 0x80) {
		pb->p[pb->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	pb->p[pb->n++] = (uint8_t)v;
}

static inline void key(struct tt_pb *pb, uint32_t field, unsigned wt)
{
	reserve(pb, 20);
	put_varint(pb, (uint64_t)field << 3 | wt);
}

void tt_pb_fini(struct tt_pb *pb)
{
	free(pb->p);
	memset(pb, 0, sizeof(*pb));
}

void tt_pb_varint(struct tt_pb *pb, uint32_t field, uint64_t v)
{
	key(pb, field, WT_VARINT);
	put_varint(pb, v);
}

void tt_pb_int64(struct tt_pb *pb, uint32_t field, int64_t v)
{
	tt_pb_varint(pb, field, (uint64_t)v);
}

void tt_pb_sint64(struct tt_pb *pb, uint32_t field, int64_t v)
{
	tt_pb_varint(pb, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void tt_pb_fixed64(struct tt_pb *pb, uint32_t field, uint64_t v)
{
	key(pb, field, WT_I64);
	for (int i = 0; i < 8; i++)
		pb->p[pb->n++] = (uint8_t)(v >> (8 * i));
}

void tt_pb_double(struct tt_pb *pb, uint32_t field, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof(u));
	tt_pb_fixed64(pb, field, u);
}

void tt_pb_bytes(struct tt_pb *pb, uint32_t field, const void *p, size_t n)
{
	key(pb, field, WT_LEN);
	put_varint(pb, n);
	reserve(pb, n);
	if (n)
		memcpy(pb->p + pb->n, p, n);
	pb->n += n;
}

void tt_pb_string(struct tt_pb *pb, uint32_t field, const char *s)
{
	tt_pb_bytes(pb, field, s, strlen(s));
}

void tt_pb_begin(struct tt_pb *pb, uint32_t field)
{
	if (pb->depth >= TT_PB_MAX_DEPTH)
		abort(); /* a programming error: the messages here nest 4 deep */
	key(pb, field, WT_LEN);
	pb->n++; /* one byte for the length, the common case */
	pb->open[pb->depth++] = pb->n;
}

void tt_pb_end(struct tt_pb *pb)
{
	size_t body = pb->open[--pb->depth];
	size_t len = pb->n - body;
	unsigned ll = tt_pb_varint_len(len);
	if (ll > 1) {
		reserve(pb, ll - 1);
		memmove(pb->p + body + ll - 1, pb->p + body, len);
		pb->n += ll - 1;
	}
	size_t at = pb->n;
	pb->n = body - 1;
	put_varint(pb, len);
	pb->n = at;
}
