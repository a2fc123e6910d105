/* SPDX-License-Identifier: MIT */
/*
 * protobuf.h - a minimal protocol-buffers encoder (the wire format of
 * protobuf.dev/programming-guides/encoding): varints, zigzag, fixed64 and
 * length-delimited fields, and nested messages whose length is back-patched
 * when they end. Enough for the Perfetto messages of perfetto.c; no schema,
 * no decoding. Not thread-safe: one encoder per thread.
 *
 * A message is written into one growable buffer: tt_pb_begin(field) leaves
 * room for a one-byte length; tt_pb_end() writes the real length and, when
 * it needs more than one byte, moves the body up (a memmove of the body:
 * the messages here are a few dozen bytes, the outer ones a few KiB).
 */
#ifndef TT_PROTOBUF_H
#define TT_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#define TT_PB_MAX_DEPTH 16

struct tt_pb {
	uint8_t *p;
	size_t n, cap;
	size_t open[TT_PB_MAX_DEPTH]; /* where each open message's body starts */
	int depth;
};

void tt_pb_fini(struct tt_pb *pb);
/* Forgets the bytes written (keeps the memory); no message may be open. */
static inline void tt_pb_clear(struct tt_pb *pb)
{
	pb->n = 0;
}

void tt_pb_varint(struct tt_pb *pb, uint32_t field, uint64_t v);  /* uint32/64, enum, bool */
void tt_pb_int64(struct tt_pb *pb, uint32_t field, int64_t v);    /* int32/int64 (two's complement) */
void tt_pb_sint64(struct tt_pb *pb, uint32_t field, int64_t v);   /* sint32/sint64 (zigzag) */
void tt_pb_fixed64(struct tt_pb *pb, uint32_t field, uint64_t v);
void tt_pb_double(struct tt_pb *pb, uint32_t field, double v);
void tt_pb_bytes(struct tt_pb *pb, uint32_t field, const void *p, size_t n); /* string, bytes */
void tt_pb_string(struct tt_pb *pb, uint32_t field, const char *s);

/* Room for n more bytes at p + n (the caller writes them, then adds n). */
uint8_t *tt_pb_reserve(struct tt_pb *pb, size_t n);

/* A nested message as field `field`: its fields follow, then tt_pb_end. */
void tt_pb_begin(struct tt_pb *pb, uint32_t field);
void tt_pb_end(struct tt_pb *pb);

/* Bytes of the varint encoding of v (1..10). */
static inline unsigned tt_pb_varint_len(uint64_t v)
{
	unsigned n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

#endif /* TT_PROTOBUF_H */
