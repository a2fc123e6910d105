/* SPDX-License-Identifier: MIT */
/*
 * annot_gen.c - writes a synthetic trace of many annotations, to measure
 * what `tracetool values` and `flows` (and chrome, perfetto, export) hold
 * in memory as a file grows (issue 15's follow-up: the memory follows the
 * rows printed, not the samples read):
 *
 *   annot_gen OUT SAMPLES [THREADS] [TRACKS] [tsc]
 *
 * Iteration i (0 <= i < SAMPLES) runs on thread i % THREADS at tick
 * 1000 + 10 i: a scope "step" [t, t + 5) holding one sample of track
 * "track<i % TRACKS>" (an integer, every fifth one a double), the begin of
 * flow "req" with id i, and the ends of the earlier ids j with
 * j + 1 + j % 7 == i (so latencies of 10 to 70 ticks, each flow ending on
 * another thread than it began, the last ones unfinished). Threads' events
 * go out in blocks of 4096, so a track's samples of several threads come
 * out of time order in the file, as librec's blocks do. "tsc": a 3 GHz TSC
 * clock with SYNC records at both ends; else the monotonic clock (ns).
 * It asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recfmt.h"
#include "tracegen.h"

static int annot(struct tg_trace *t, uint32_t serial, uint32_t kind, uint32_t name,
		 uint64_t ticks, int64_t i, double d, uint64_t id)
{
	struct recfmt_annot a = { .kind = kind, .name_id = name, .ticks = ticks, .i64 = i,
				  .f64 = d, .id = id };

	return tg_annot(t, serial, &a);
}

int main(int argc, char **argv)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .start_real_ns = 1700000000000000000ull, .pid = 42 };
	uint64_t n, nr_threads = 4, nr_tracks = 8;
	struct tg_trace *t;
	char name[32];
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: annot_gen OUT SAMPLES [THREADS] [TRACKS] [tsc]\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 10);
	if (argc > 3)
		nr_threads = strtoull(argv[3], NULL, 10);
	if (argc > 4)
		nr_tracks = strtoull(argv[4], NULL, 10);
	if (!nr_threads || !nr_tracks || nr_threads > 1000 || nr_tracks > 100000) {
		fprintf(stderr, "annot_gen: THREADS 1..1000, TRACKS 1..100000\n");
		return 2;
	}
	if (argc > 5 && strcmp(argv[5], "tsc") == 0) {
		cfg.clock = RECFMT_CLOCK_TSC;
		cfg.ticks_per_second = 3000000000ull;
	}
	t = tg_create(argv[1], &cfg);
	if (!t) {
		perror(argv[1]);
		return 1;
	}
	if (cfg.clock == RECFMT_CLOCK_TSC)
		rc |= tg_sync(t, 1000, 5000000, cfg.start_real_ns);
	rc |= tg_site(t, 1, "step");
	rc |= tg_annot_name(t, 1, RECFMT_NAME_FLOW, "req");
	for (uint64_t k = 0; k < nr_tracks; k++) {
		snprintf(name, sizeof(name), "track%llu", (unsigned long long)k);
		rc |= tg_annot_name(t, (uint32_t)(2 + k), RECFMT_NAME_TRACK, name);
	}
	for (uint64_t k = 0; k < nr_threads; k++) {
		snprintf(name, sizeof(name), "w%llu", (unsigned long long)k);
		rc |= tg_thread(t, (uint32_t)(k + 1), (uint32_t)(100 + k), name);
	}
	for (uint64_t i = 0; i < n && !rc; i++) {
		const uint32_t th = (uint32_t)(i % nr_threads + 1);
		const uint64_t ticks = 1000 + 10 * i;
		const uint32_t track = (uint32_t)(2 + i % nr_tracks);
		const int64_t v = (int64_t)((i * 7919) % 1000) - 300;

		rc |= tg_enter(t, th, 1, ticks);
		if (i % 5 == 4)
			rc |= annot(t, th, RECFMT_ANNOT_VALUE_F64, track, ticks + 1, 0, v / 8.0, 0);
		else
			rc |= annot(t, th, RECFMT_ANNOT_VALUE_I64, track, ticks + 1, v, 0, 0);
		rc |= annot(t, th, RECFMT_ANNOT_FLOW_BEGIN, 1, ticks + 2, 0, 0, i);
		for (uint64_t j = i >= 7 ? i - 7 : 0; j < i; j++)
			if (j + 1 + j % 7 == i)
				rc |= annot(t, th, RECFMT_ANNOT_FLOW_END, 1, ticks + 3, 0, 0, j);
		rc |= tg_exit(t, th, 1, ticks + 5);
	}
	if (cfg.clock == RECFMT_CLOCK_TSC)
		rc |= tg_sync(t, 1000 + 10 * n, 5000000 + 10 * n / 3, cfg.start_real_ns + 10 * n / 3);
	rc |= tg_finish(t, true);
	if (rc) {
		fprintf(stderr, "annot_gen: cannot write %s\n", argv[1]);
		return 1;
	}
	return 0;
}
