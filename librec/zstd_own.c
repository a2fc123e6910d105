/* SPDX-License-Identifier: MIT */
/*
 * zstd_own.c - what makes librec's copy of zstd its own (docs/DESIGN.md,
 * "librec's dependencies are its own"). librec links a static, PIC copy of
 * zstd whose symbols the version script (librec.so) or the prelink of
 * librec.a (bundle_static.sh) makes local, so its calls bind inside librec.
 * One kind of reference would still leave: zstd's tracing hooks, weak
 * undefined symbols that a host defining them would receive (with our
 * contexts) on every frame. These hidden definitions resolve them inside
 * librec instead: 0 from a *_begin means "do not trace this frame", so the
 * *_end hooks are never called.
 */
#include "rec_internal.h"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;
struct ZSTD_Trace;

/* The signatures of zstd's lib/common/zstd_trace.h (not installed by Debian). */
unsigned long long ZSTD_trace_compress_begin(const struct ZSTD_CCtx_s *cctx) REC__HIDDEN;
void ZSTD_trace_compress_end(unsigned long long ctx, const struct ZSTD_Trace *trace) REC__HIDDEN;
unsigned long long ZSTD_trace_decompress_begin(const struct ZSTD_DCtx_s *dctx) REC__HIDDEN;
void ZSTD_trace_decompress_end(unsigned long long ctx, const struct ZSTD_Trace *trace) REC__HIDDEN;

unsigned long long ZSTD_trace_compress_begin(const struct ZSTD_CCtx_s *cctx)
{
	(void)cctx;
	return 0;
}

void ZSTD_trace_compress_end(unsigned long long ctx, const struct ZSTD_Trace *trace)
{
	(void)ctx;
	(void)trace;
}

unsigned long long ZSTD_trace_decompress_begin(const struct ZSTD_DCtx_s *dctx)
{
	(void)dctx;
	return 0;
}

void ZSTD_trace_decompress_end(unsigned long long ctx, const struct ZSTD_Trace *trace)
{
	(void)ctx;
	(void)trace;
}
