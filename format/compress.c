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
	free(c);
}

int recfmt_compress_frame(struct recfmt_compressor *c, const struct recfmt_buf *in,
			  struct recfmt_buf *out)
{
	size_t bound, n;

	if (in->len > RECFMT_MAX_FRAME_BYTES)
		return -E2BIG;
	bound = ZSTD_compressBound(in->len);
	out->len = 0;
	if (recfmt_buf_reserve(out, bound))
		return -ENOMEM;
	n = ZSTD_compress2(c->cctx, out->data, out->cap, in->data, in->len);
	if (ZSTD_isError(n))
		return -ENOMEM; /* only allocation can fail with a large enough output */
	out->len = n;
	return 0;
}
