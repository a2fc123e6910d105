/* SPDX-License-Identifier: MIT */
/*
 * bench_encode.c - what the writer's EVENTS encoder (format/encode.c,
 * recfmt_events_append) costs per event, alone: 512 Ki events of one
 * thread, alternating enter and exit of a few sites, with deltas drawn
 * from [20, 20 + SPAN) ticks (40: a quiet tight loop's one-byte deltas; 80:
 * a third take two bytes), encoded 4 times a round, ROUNDS rounds, best
 * round in CPU time (the machine is shared). Prints ns/event and the bytes
 * of the last block. The encoder is told the number of events
 * (recfmt_events_expect()), as librec's writer tells it.
 *
 * Usage: bench_encode [SPAN [ROUNDS [index|loop]]]
 *
 * With "index", each round also encodes the same events with the sums of
 * the writer's index frames tracked (recfmt_events_track(), FORMAT.md §6.2:
 * a per-thread stack of open enters, each exit checked against it), a
 * random walk of nesting then instead of the alternation, and prints both.
 * With "loop", the same with the alternation kept: a tight loop's leaves,
 * whose codes take a byte each, as the writer sees the peer harness's loop.
 *
 * It asserts nothing about speed (style.md §6).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recfmt.h"

#define NR_EVENTS (512u * 1024u)

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint32_t span = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 40;
	int rounds = argc > 2 ? atoi(argv[2]) : 50;
	int loop = argc > 3 && !strcmp(argv[3], "loop");
	int index = loop || (argc > 3 && !strcmp(argv[3], "index"));
	double best_ix = 1e9;
	struct recfmt_nest nest = { 0 };
	struct recfmt_buf sums;
	uint32_t depth = 0, stack[64];
	struct recfmt_event *ev = malloc(NR_EVENTS * sizeof(*ev));
	struct recfmt_buf buf, scratch;
	uint64_t t = 1000;
	uint32_t seed = 1;
	double best = 1e9;

	if (!ev || span == 0 || rounds <= 0) {
		fprintf(stderr, "usage: bench_encode [SPAN [ROUNDS [index|loop]]]\n");
		return 2;
	}
	for (size_t i = 0; i < NR_EVENTS; i++) {
		seed = seed * 1103515245u + 12345u;
		t += 20 + (seed >> 8) % span;
		ev[i].ticks = t;
		ev[i].code = RECFMT_CODE(1 + (uint32_t)(i / 2) % 3, i & 1);
		if (index && !loop) {
			/* A random walk of calls and returns, 1 to 63 deep, 200 sites. */
			bool up = depth == 0 || (depth < 63 && (seed >> 4) % 2);

			if (up)
				stack[depth++] = 1 + (seed >> 12) % 200;
			ev[i].code = up ? RECFMT_CODE(stack[depth - 1], 0)
					: RECFMT_CODE(stack[--depth], 1);
		}
		ev[i].aux = 0;
	}
	recfmt_buf_init(&buf);
	recfmt_buf_init(&scratch);
	recfmt_buf_init(&sums);
	for (int r = 0; r < rounds; r++) {
		double c0 = cpu_s();

		for (int k = 0; k < 4; k++) {
			struct recfmt_events_encoder enc;

			buf.len = 0;
			if (recfmt_events_begin(&enc, &buf, &scratch, 1, ev[0].ticks)) {
				fprintf(stderr, "bench_encode: out of memory\n");
				return 1;
			}
			recfmt_events_expect(&enc, NR_EVENTS); /* as the writer does */
			if (recfmt_events_append(&enc, ev, NR_EVENTS) || recfmt_events_finish(&enc)) {
				fprintf(stderr, "bench_encode: out of memory\n");
				return 1;
			}
		}
		if (cpu_s() - c0 < best)
			best = cpu_s() - c0;
		c0 = cpu_s();
		for (int k = 0; index && k < 4; k++) {
			struct recfmt_events_encoder enc;

			buf.len = sums.len = 0;
			recfmt_nest_reset(&nest);
			if (recfmt_events_begin(&enc, &buf, &scratch, 1, ev[0].ticks)) {
				fprintf(stderr, "bench_encode: out of memory\n");
				return 1;
			}
			recfmt_events_track(&enc, &nest, &sums);
			recfmt_events_expect(&enc, NR_EVENTS);
			if (recfmt_events_append(&enc, ev, NR_EVENTS) || recfmt_events_finish(&enc)) {
				fprintf(stderr, "bench_encode: out of memory\n");
				return 1;
			}
		}
		if (index && cpu_s() - c0 < best_ix)
			best_ix = cpu_s() - c0;
	}
	if (index)
		printf("span %u, with the index's sums%s: %.3f ns/event (%s)\n", span,
		       loop ? " (leaves)" : "",
		       best_ix * 1e9 / (4.0 * NR_EVENTS),
		       ((const struct recfmt_index_entry *)(void *)sums.data)->b.flags
			       ? "nested"
			       : "NOT nested");
	printf("span %u: %.3f ns/event, %.3f bytes/event\n", span, best * 1e9 / (4.0 * NR_EVENTS),
	       (double)buf.len / NR_EVENTS);
	recfmt_buf_fini(&buf);
	recfmt_buf_fini(&scratch);
	recfmt_buf_fini(&sums);
	recfmt_nest_fini(&nest);
	free(ev);
	return 0;
}
