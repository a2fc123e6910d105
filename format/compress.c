/* SPDX-License-Identifier: MIT */
/*
 * compress.c - one frame's records into one independent zstd frame, with the
 * content size and an XXH64 checksum in it (FORMAT.md §2). The caller owns
 * the buffers and decides when a frame ends.
 */
#include "recfmt.h"

#include <errno.h>
#include <stdlib.h>
#include <zstd.h>

struct recfmt_compressor {
	ZSTD_CCtx *cctx;
	/* The parts gathered end to end, for one-shot compression (see below). */
	struct recfmt_buf flat;
};

struct recfmt_compressor *recfmt_compressor_create(int level)
{
	struct recfmt_compressor *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cctx = ZSTD_createCCtx();
	if (!c->cctx) {
		free(c);
		return NULL;
	}
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 1);
	return c;
}

void recfmt_compressor_destroy(struct recfmt_compressor *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->cctx);
	recfmt_buf_fini(&c->flat);
	free(c);
}

/*
 * One-shot compression of one contiguous input. Streaming several parts
 * (ZSTD_compressStream2 with ZSTD_e_continue) made zstd copy every byte into
 * its own window buffer and match with its slower extDict block compressor
 * once that buffer wrapped; gathering the parts (lead and meta are small,
 * body is most of it) costs one memcpy and compresses faster. The frame
 * holds the same bytes once decompressed.
 */
int recfmt_compress_frame_parts(struct recfmt_compressor *c, const struct recfmt_buf *parts,
				size_t nr_parts, struct recfmt_buf *out)
{
	size_t total = 0, n, nonempty = 0;
	const uint8_t *src = NULL;

	for (size_t i = 0; i < nr_parts; i++) {
		total += parts[i].len;
		if (parts[i].len) {
			nonempty++;
			src = parts[i].data;
		}
	}
	if (total > RECFMT_MAX_FRAME_BYTES)
		return -E2BIG;
	out->len = 0;
	if (recfmt_buf_reserve(out, ZSTD_compressBound(total)))
		return -ENOMEM;
	if (nonempty > 1) {
		c->flat.len = 0;
		if (recfmt_buf_reserve(&c->flat, total))
			return -ENOMEM;
		for (size_t i = 0; i < nr_parts; i++) {
			if (parts[i].len)
				memcpy(c->flat.data + c->flat.len, parts[i].data, parts[i].len);
			c->flat.len += parts[i].len;
		}
		src = c->flat.data;
	}
	ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
	n = ZSTD_compress2(c->cctx, out->data, out->cap, src, total);
	if (ZSTD_isError(n))
		return -ENOMEM;
	out->len = n;
	return 0;
}

int recfmt_compress_frame(struct recfmt_compressor *c, const struct recfmt_buf *in,
			  struct recfmt_buf *out)
{
	return recfmt_compress_frame_parts(c, in, 1, out);
}
