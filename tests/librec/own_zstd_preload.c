/* SPDX-License-Identifier: MIT */
/*
 * own_zstd_preload.c - an LD_PRELOAD library that defines the ZSTD_*
 * functions librec's writer uses, each aborting (issue 11, item 7): a
 * program linked with librectrace.so and run with it preloaded must still
 * write a valid trace, because librec's zstd is its own.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void hostile(const char *name)
{
	fprintf(stderr, "own_zstd_preload: %s called\n", name);
	abort();
}

#define HOSTILE_FN(ret, name, ...)                                                                 \
	ret name(__VA_ARGS__);                                                                     \
	ret name(__VA_ARGS__)                                                                      \
	{                                                                                          \
		hostile(#name);                                                                    \
		return (ret)0;                                                                     \
	}
HOSTILE_FN(unsigned, ZSTD_isError, size_t code)
HOSTILE_FN(void *, ZSTD_createCCtx, void)
HOSTILE_FN(size_t, ZSTD_freeCCtx, void *cctx)
HOSTILE_FN(size_t, ZSTD_CCtx_setParameter, void *cctx, int param, int value)
HOSTILE_FN(size_t, ZSTD_CCtx_reset, void *cctx, int reset)
HOSTILE_FN(size_t, ZSTD_CCtx_setPledgedSrcSize, void *cctx, unsigned long long size)
HOSTILE_FN(size_t, ZSTD_compressStream2, void *cctx, void *out, void *in, int end)
HOSTILE_FN(size_t, ZSTD_compressBound, size_t size)
HOSTILE_FN(unsigned long long, ZSTD_trace_compress_begin, const void *cctx)
