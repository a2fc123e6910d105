/* SPDX-License-Identifier: MIT */
/*
 * gen_golden.c - writes the golden traces of tests/golden/v1/ with tracegen:
 * a clean trace of three threads with nested and recursive scopes, drops and
 * several frames, and three damaged copies of it, each named after what it
 * breaks. The committed .zst files are the reference; this program records
 * how they were made and is run by hand only when a new set is wanted
 * (`gen_golden tests/golden/v1`), never by meson test: readers must keep
 * reading the files as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen.h"

static int copy(const char *from, const char *to)
{
	char buf[1 << 16];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;
	int rc = 0;

	if (!in || !out)
		rc = -1;
	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -1;
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

/* One thread's calls: main_loop > work (x3) > step, recursing 1..3 deep. */
static void calls(struct tg_trace *t, uint32_t serial, uint64_t *now, uint32_t round)
{
	tg_enter(t, serial, 1, *now += 100);
	for (uint32_t i = 0; i < 3; i++) {
		tg_enter(t, serial, 2, *now += 50 + 7 * i);
		for (uint32_t d = 0; d <= (round + i) % 3; d++)
			tg_enter(t, serial, 3, *now += 20 + d);
		for (uint32_t d = 0; d <= (round + i) % 3; d++)
			tg_exit(t, serial, 3, *now += 300 + 13 * d + round % 17);
		tg_exit(t, serial, 2, *now += 40);
	}
	tg_exit(t, serial, 1, *now += 25);
}

int main(int argc, char **argv)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2500000000ull,
				 .start_ticks = 1000000, .start_real_ns = 1700000000000000000ull,
				 .pid = 4242, .frame_bytes = 2048, .block_events = 64 };
	char clean[4096], path[4096];
	uint64_t now[4] = { 0, 1000000, 1000500, 1001000 }, offsets[64];
	struct tg_trace *t;
	size_t nr_frames;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_golden DIR\n");
		return 2;
	}
	snprintf(clean, sizeof(clean), "%s/clean_three_threads.zst", argv[1]);
	t = tg_create(clean, &cfg);
	if (!t)
		return 1;
	tg_sync(t, 1000000, 5000000, 1700000000000000000ull);
	tg_site(t, 1, "main_loop");
	tg_site(t, 2, "work");
	tg_site(t, 3, "step");
	tg_thread(t, 1, 101, "main");
	tg_thread(t, 2, 102, "worker-1");
	tg_thread(t, 3, 103, NULL);
	for (uint32_t round = 0; round < 40; round++)
		for (uint32_t s = 1; s <= 3; s++)
			calls(t, s, &now[s], round);
	tg_drops(t, 2, 3);
	tg_thread_end(t, 3);
	tg_sync(t, now[3] + 10, 5000000 + (now[3] + 10 - 1000000) * 2 / 5, 0);
	if (tg_finish(t, true))
		return 1;

	nr_frames = tg_file_frame_offsets(clean, offsets, 64);
	if (nr_frames < 4) {
		fprintf(stderr, "gen_golden: only %zu frames\n", nr_frames);
		return 1;
	}
	/* Killed while writing: the last frame is cut in its middle. */
	snprintf(path, sizeof(path), "%s/truncated_mid_frame.zst", argv[1]);
	if (copy(clean, path) ||
	    tg_file_truncate(path, offsets[nr_frames - 1] +
					   (offsets[nr_frames - 1] - offsets[nr_frames - 2]) / 2))
		return 1;
	/* A flipped byte inside the compressed data of frame 2. */
	snprintf(path, sizeof(path), "%s/corrupt_middle_frame.zst", argv[1]);
	if (copy(clean, path) || tg_file_flip_byte(path, offsets[2] + 40, 0xff))
		return 1;
	/* The last byte of frame 1 is its XXH64 content checksum's. */
	snprintf(path, sizeof(path), "%s/bad_checksum.zst", argv[1]);
	if (copy(clean, path) || tg_file_flip_byte(path, offsets[2] - 1, 0x01))
		return 1;
	printf("%zu frames\n", nr_frames);
	return 0;
}
