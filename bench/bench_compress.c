/* SPDX-License-Identifier: MIT */
/*
 * bench_compress.c - what format/compress.c costs per event on a real
 * trace: every frame of TRACE is decompressed (through format/'s reader),
 * then compressed again with recfmt_compress_frame() and decompressed with
 * zstd, ROUNDS times each, timed in CPU time (the machine is shared); the
 * best round is kept. Every frame must come back byte for byte. Prints
 * compression and decompression ns/event and bytes/event; EVENTS is the
 * trace's event count (`tracetool info`).
 *
 * Usage: bench_compress TRACE EVENTS [ROUNDS [fast]]
 *
 * It asserts nothing about speed (style.md §6).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "recfmt.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct recfmt_reader *r;
	struct recfmt_error err;
	struct recfmt_buf *in = NULL, *out = NULL;
	struct recfmt_compressor *c = recfmt_compressor_create(1);
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	size_t nr = 0, cap = 0, packed = 0;
	const uint8_t *data;
	size_t len;
	double events, best_c = 1e30, best_d = 1e30;
	int rounds;
	uint8_t *back;

	if (argc < 3) {
		fprintf(stderr, "usage: %s TRACE EVENTS [ROUNDS]\n", argv[0]);
		return 2;
	}
	events = atof(argv[2]);
	rounds = argc > 3 ? atoi(argv[3]) : 5;
	/* A fourth argument "fast": the writer's mode under pressure. */
	if (argc > 4 && strcmp(argv[4], "fast") == 0)
		recfmt_compressor_set_fast(c, true);
	if (!c || !dc || recfmt_reader_open(&r, argv[1], &err) != RECFMT_OK) {
		fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
		return 1;
	}
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		if (nr == cap) {
			cap = cap ? 2 * cap : 64;
			in = realloc(in, cap * sizeof(*in));
			out = realloc(out, cap * sizeof(*out));
			if (!in || !out)
				return 1;
		}
		recfmt_buf_init(&in[nr]);
		recfmt_buf_init(&out[nr]);
		if (recfmt_buf_reserve(&in[nr], len))
			return 1;
		memcpy(in[nr].data, data, len);
		in[nr++].len = len;
	}
	recfmt_reader_close(r);
	back = malloc(RECFMT_MAX_FRAME_BYTES);
	if (!back)
		return 1;
	for (int k = 0; k < rounds; k++) {
		double t0 = cpu_s(), t1, t2;

		packed = 0;
		for (size_t i = 0; i < nr; i++) {
			if (recfmt_compress_frame(c, &in[i], &out[i]))
				return 1;
			packed += out[i].len;
		}
		t1 = cpu_s();
		for (size_t i = 0; i < nr; i++) {
			size_t n = ZSTD_decompressDCtx(dc, back, RECFMT_MAX_FRAME_BYTES, out[i].data,
						       out[i].len);

			if (ZSTD_isError(n) || n != in[i].len || memcmp(back, in[i].data, n)) {
				fprintf(stderr, "%s: frame %zu does not come back\n", argv[0], i);
				return 1;
			}
		}
		t2 = cpu_s();
		if (t1 - t0 < best_c)
			best_c = t1 - t0;
		if (t2 - t1 < best_d)
			best_d = t2 - t1;
	}
	printf("%zu frames: compress %.3f ns/event, decompress+compare %.3f ns/event, %.3f bytes/event\n",
	       nr, best_c * 1e9 / events, best_d * 1e9 / events, (double)packed / events);
	for (size_t i = 0; i < nr; i++) {
		recfmt_buf_fini(&in[i]);
		recfmt_buf_fini(&out[i]);
	}
	free(in);
	free(out);
	free(back);
	recfmt_compressor_destroy(c);
	ZSTD_freeDCtx(dc);
	return 0;
}
