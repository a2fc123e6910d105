/* SPDX-License-Identifier: MIT */
/*
 * prog_own_zstd.c - a host with its own zstd (issue 11, item 7): it defines
 * every ZSTD_* function librec's writer uses, zstd's weak tracing hooks,
 * and a few decompression entry points. Built with -finstrument-functions
 * (whole-program mode, -rdynamic so they are exported) and linked with
 * librectrace.so, with librectrace.a, or with neither (then run with
 * LD_PRELOAD=librectrace.so). Any call that does not come from main() aborts:
 * librec's calls must land in its own copy. main() calls ZSTD_isError()
 * itself once, so the trace must show it exactly once. Frames are written
 * all along (REC_FLUSH_MS, set by the test), so the writer compresses many.
 * Prints "host zstd calls: N".
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int host_calling; /* set around main's own call */
static int nr_calls;

static void host_zstd(void)
{
	if (!host_calling) {
		fputs("prog_own_zstd: librec called the host's zstd\n", stderr);
		abort();
	}
	nr_calls++;
}

/* Every prototype matches zstd.h's closely enough for the linker: only the
 * names matter here, and nothing but main calls them. */
#define HOST_FN(ret, name, ...)                                                                    \
	ret name(__VA_ARGS__);                                                                     \
	ret name(__VA_ARGS__)                                                                      \
	{                                                                                          \
		host_zstd();                                                                       \
		return (ret)0;                                                                     \
	}
HOST_FN(unsigned, ZSTD_isError, size_t code)
HOST_FN(void *, ZSTD_createCCtx, void)
HOST_FN(size_t, ZSTD_freeCCtx, void *cctx)
HOST_FN(size_t, ZSTD_CCtx_setParameter, void *cctx, int param, int value)
HOST_FN(size_t, ZSTD_CCtx_reset, void *cctx, int reset)
HOST_FN(size_t, ZSTD_CCtx_setPledgedSrcSize, void *cctx, unsigned long long size)
HOST_FN(size_t, ZSTD_compressStream2, void *cctx, void *out, void *in, int end)
HOST_FN(size_t, ZSTD_compressBound, size_t size)
HOST_FN(size_t, ZSTD_compress, void *dst, size_t cap, const void *src, size_t n, int level)
HOST_FN(unsigned long long, ZSTD_trace_compress_begin, const void *cctx)
HOST_FN(unsigned long long, ZSTD_trace_decompress_begin, const void *dctx)
HOST_FN(void *, ZSTD_createDCtx, void)
HOST_FN(size_t, ZSTD_freeDCtx, void *dctx)
HOST_FN(size_t, ZSTD_decompressStream, void *dctx, void *out, void *in)
HOST_FN(size_t, ZSTD_decompressDCtx, void *dctx, void *dst, size_t cap, const void *src,
	size_t n)
HOST_FN(unsigned long long, ZSTD_getFrameContentSize, const void *src, size_t n)
HOST_FN(size_t, ZSTD_findFrameCompressedSize, const void *src, size_t n)
HOST_FN(const char *, ZSTD_getErrorName, size_t code)

void ZSTD_trace_compress_end(unsigned long long ctx, const void *trace);
void ZSTD_trace_compress_end(unsigned long long ctx, const void *trace)
{
	(void)ctx;
	(void)trace;
	host_zstd();
}

void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace);
void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace)
{
	(void)ctx;
	(void)trace;
	host_zstd();
}

static __attribute__((noinline)) unsigned leaf(unsigned v)
{
	return v * 2654435761u;
}

int main(int argc, char **argv)
{
	/* Long enough for several REC_FLUSH_MS frames: argv[1] ms of work. */
	long ms = argc > 1 ? atol(argv[1]) : 200;
	struct timespec t0, t;
	unsigned acc = 0;

	host_calling = 1;
	acc += ZSTD_isError(0);
	host_calling = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (unsigned i = 0; i < 1000; i++)
			acc += leaf(i);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	printf("host zstd calls: %d\n", nr_calls);
	return acc == 1 ? 2 : 0; /* keep acc alive */
}
