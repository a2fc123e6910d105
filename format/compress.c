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

int recfmt_compress_frame_parts(struct recfmt_compressor *c, const struct recfmt_buf *parts,
				size_t nr_parts, struct recfmt_buf *out)
{
	size_t total = 0, n;
	ZSTD_outBuffer ob;

	for (size_t i = 0; i < nr_parts; i++)
		total += parts[i].len;
	if (total > RECFMT_MAX_FRAME_BYTES)
		return -E2BIG;
	out->len = 0;
	if (recfmt_buf_reserve(out, ZSTD_compressBound(total)))
		return -ENOMEM;
	ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
	ZSTD_CCtx_setPledgedSrcSize(c->cctx, total);
	ob = (ZSTD_outBuffer){ out->data, out->cap, 0 };
	for (size_t i = 0; i < nr_parts; i++) {
		ZSTD_inBuffer ib = { parts[i].data, parts[i].len, 0 };
		ZSTD_EndDirective mode = i + 1 == nr_parts ? ZSTD_e_end : ZSTD_e_continue;

		do {
			n = ZSTD_compressStream2(c->cctx, &ob, &ib, mode);
			if (ZSTD_isError(n))
				return -ENOMEM;
		} while (ib.pos < ib.size || (mode == ZSTD_e_end && n != 0));
	}
	if (nr_parts == 0) {
		ZSTD_inBuffer ib = { NULL, 0, 0 };
		do {
			n = ZSTD_compressStream2(c->cctx, &ob, &ib, ZSTD_e_end);
			if (ZSTD_isError(n))
				return -ENOMEM;
		} while (n != 0);
	}
	out->len = ob.pos;
	return 0;
}

int recfmt_compress_frame(struct recfmt_compressor *c, const struct recfmt_buf *in,
			  struct recfmt_buf *out)
{
	return recfmt_compress_frame_parts(c, in, 1, out);
}
