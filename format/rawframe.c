/* SPDX-License-Identifier: MIT */
/*
 * rawframe.c - a zstd frame made of raw (stored) blocks, and the XXH64 hash
 * that zstd's content checksum is made of, for writers that may not call
 * zstd or malloc: librec's crash handler (librec/crash.c). The frame is a
 * plain RFC 8878 frame -- single segment, content size in the header, raw
 * blocks of at most 128 KiB, the low 32 bits of XXH64 (seed 0) of the
 * content at the end -- so every zstd decoder, frames.c included, reads it
 * like the writer's compressed frames (FORMAT.md §2). Nothing here
 * allocates, locks or depends on libzstd: each function is
 * async-signal-safe as long as the emit callback is.
 */
#include "recfmt.h"

#include <errno.h>

#define XXH_P1 0x9E3779B185EBCA87ull
#define XXH_P2 0xC2B2AE3D27D4EB4Full
#define XXH_P3 0x165667B19E3779F9ull
#define XXH_P4 0x85EBCA77C2B2AE63ull
#define XXH_P5 0x27D4EB2F165667C5ull

#define ZSTD_FRAME_MAGIC 0xFD2FB528u
#define RAW_BLOCK_MAX_BYTES (128u << 10)

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t xxh_round(uint64_t acc, uint64_t input)
{
	acc += input * XXH_P2;
	acc = rotl64(acc, 31);
	return acc * XXH_P1;
}

static inline uint64_t xxh_merge(uint64_t acc, uint64_t val)
{
	acc ^= xxh_round(0, val);
	return acc * XXH_P1 + XXH_P4;
}

void recfmt_xxh64_init(struct recfmt_xxh64 *s, uint64_t seed)
{
	s->v[0] = seed + XXH_P1 + XXH_P2;
	s->v[1] = seed + XXH_P2;
	s->v[2] = seed;
	s->v[3] = seed - XXH_P1;
	s->seed = seed;
	s->total_bytes = 0;
	s->nr_pending = 0;
}

static inline void xxh_stripe(struct recfmt_xxh64 *s, const uint8_t *p)
{
	s->v[0] = xxh_round(s->v[0], recfmt_load_u64le(p));
	s->v[1] = xxh_round(s->v[1], recfmt_load_u64le(p + 8));
	s->v[2] = xxh_round(s->v[2], recfmt_load_u64le(p + 16));
	s->v[3] = xxh_round(s->v[3], recfmt_load_u64le(p + 24));
}

void recfmt_xxh64_update(struct recfmt_xxh64 *s, const void *data, size_t n)
{
	const uint8_t *p = data;

	if (!n)
		return;
	s->total_bytes += n;
	if (s->nr_pending) {
		size_t take = 32 - s->nr_pending < n ? 32 - s->nr_pending : n;

		memcpy(s->pending + s->nr_pending, p, take);
		s->nr_pending += (uint32_t)take;
		p += take;
		n -= take;
		if (s->nr_pending < 32)
			return;
		xxh_stripe(s, s->pending);
		s->nr_pending = 0;
	}
	for (; n >= 32; p += 32, n -= 32)
		xxh_stripe(s, p);
	memcpy(s->pending, p, n);
	s->nr_pending = (uint32_t)n;
}

uint64_t recfmt_xxh64_digest(const struct recfmt_xxh64 *s)
{
	const uint8_t *p = s->pending, *end = s->pending + s->nr_pending;
	uint64_t h;

	if (s->total_bytes >= 32) {
		h = rotl64(s->v[0], 1) + rotl64(s->v[1], 7) + rotl64(s->v[2], 12) +
		    rotl64(s->v[3], 18);
		for (int i = 0; i < 4; i++)
			h = xxh_merge(h, s->v[i]);
	} else {
		h = s->seed + XXH_P5;
	}
	h += s->total_bytes;
	for (; end - p >= 8; p += 8) {
		h ^= xxh_round(0, recfmt_load_u64le(p));
		h = rotl64(h, 27) * XXH_P1 + XXH_P4;
	}
	if (end - p >= 4) {
		h ^= (uint64_t)recfmt_load_u32le(p) * XXH_P1;
		h = rotl64(h, 23) * XXH_P2 + XXH_P3;
		p += 4;
	}
	for (; p < end; p++) {
		h ^= *p * XXH_P5;
		h = rotl64(h, 11) * XXH_P1;
	}
	h ^= h >> 33;
	h *= XXH_P2;
	h ^= h >> 29;
	h *= XXH_P3;
	h ^= h >> 32;
	return h;
}

/* The size of the frame recfmt_rawframe_emit_sum() makes of content bytes. */
size_t recfmt_rawframe_bytes(size_t content, bool checksum)
{
	size_t blocks = content ? (content + RAW_BLOCK_MAX_BYTES - 1) / RAW_BLOCK_MAX_BYTES : 1;

	return 9 + 3 * blocks + content + (checksum ? 4 : 0);
}

/*
 * recfmt_rawframe_emit() - one zstd frame holding the concatenation of the
 * parts, stored in raw blocks, handed to emit() piece by piece (header,
 * block headers, the parts' bytes in place, checksum): no copy, no buffer.
 * Return: 0; -E2BIG if the parts exceed RECFMT_MAX_FRAME_BYTES; else the
 * first non-zero value emit() returned.
 */
int recfmt_rawframe_emit(const struct recfmt_slice *parts, size_t nr_parts,
			 recfmt_emit_fn emit, void *ctx)
{
	return recfmt_rawframe_emit_sum(parts, nr_parts, true, emit, ctx);
}

/* recfmt_rawframe_emit() with the content checksum optional (checksum: false,
 * for containers that check their own data, as Parquet pages). */
int recfmt_rawframe_emit_sum(const struct recfmt_slice *parts, size_t nr_parts, bool checksum,
			     recfmt_emit_fn emit, void *ctx)
{
	struct recfmt_xxh64 xs;
	uint8_t hdr[10], bh[3], sum[4];
	uint64_t total = 0, left;
	size_t part = 0, off = 0;
	int err;

	for (size_t i = 0; i < nr_parts; i++)
		total += parts[i].bytes;
	if (total > RECFMT_MAX_FRAME_BYTES)
		return -E2BIG;
	recfmt_xxh64_init(&xs, 0);
	for (size_t i = 0; checksum && i < nr_parts; i++)
		recfmt_xxh64_update(&xs, parts[i].data, parts[i].bytes);
	/*
	 * Frame header (RFC 8878 §3.1.1.1): magic; descriptor 0xA4 = content
	 * size field of 4 bytes (flag 2), single segment (no window
	 * descriptor: the window is the content), content checksum (0xA0
	 * without it).
	 */
	recfmt_store_u32le(hdr, ZSTD_FRAME_MAGIC);
	hdr[4] = checksum ? 0xA4 : 0xA0;
	recfmt_store_u32le(hdr + 5, (uint32_t)total);
	if ((err = emit(ctx, hdr, 9)))
		return err;
	left = total;
	do {
		uint32_t n = left < RAW_BLOCK_MAX_BYTES ? (uint32_t)left : RAW_BLOCK_MAX_BYTES;
		uint32_t bits = (n << 3) | (left == n ? 1u : 0u); /* type 0: raw; bit 0: last */

		bh[0] = (uint8_t)bits;
		bh[1] = (uint8_t)(bits >> 8);
		bh[2] = (uint8_t)(bits >> 16);
		if ((err = emit(ctx, bh, 3)))
			return err;
		left -= n;
		/* The block's bytes, from as many parts as it spans. */
		while (n) {
			size_t k;

			while (off == parts[part].bytes) {
				part++;
				off = 0;
			}
			k = parts[part].bytes - off < n ? parts[part].bytes - off : n;
			if ((err = emit(ctx, (const uint8_t *)parts[part].data + off, k)))
				return err;
			off += k;
			n -= (uint32_t)k;
		}
	} while (left);
	if (!checksum)
		return 0;
	recfmt_store_u32le(sum, (uint32_t)recfmt_xxh64_digest(&xs));
	return emit(ctx, sum, 4);
}
