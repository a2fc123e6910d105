/* SPDX-License-Identifier: MIT */
/*
 * gen_golden.c - writes the golden traces of tests/golden/v1/ with tracegen:
 * a clean trace of three threads with nested and recursive scopes, drops and
 * several frames, and three damaged copies of it, each named after what it
 * breaks; and a trace of every annotation (format 1.2). The committed .zst
 * files are the reference; this program records how they were made and is
 * run by hand only when a new set is wanted, never by meson test: readers
 * must keep reading the files as they are. `gen_golden DIR` writes them all
 * (today's encoder writes format 1.2 headers: the four first files of v1/
 * were written as 1.0 and stay so); `gen_golden DIR annotated` only the
 * annotated one.
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

static void annot(struct tg_trace *t, uint32_t serial, uint32_t kind, uint32_t name,
		  uint64_t ticks, int64_t i, double d, uint64_t id, const char *text)
{
	struct recfmt_annot a = { .kind = kind, .name_id = name, .ticks = ticks, .i64 = i,
				  .f64 = d, .id = id, .text = text,
				  .text_bytes = text ? (uint32_t)strlen(text) : 0 };

	tg_annot(t, serial, &a);
}

/*
 * annotated.zst: the monotonic clock (a tick is a ns), two threads, 12
 * rounds of 10 us. Thread 1 "main" (tid 201): serve > parse, with the
 * argument bytes, the value track queue and the begin of flow request #r+1
 * inside parse, then log (net.c:40); an instant tick every 4 rounds and a
 * message every 6. Thread 2 "io" (tid 202): reply, in which flow #r+1 steps
 * (even rounds) and ends (all but the last round: one flow is unfinished),
 * then log (disk.c:7: a second site of the name) and the float track load.
 */
static int write_annotated(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .start_real_ns = 1700000100000000000ull, .pid = 5151,
				 .frame_bytes = 1024, .block_events = 32 };
	struct tg_trace *t = tg_create(path, &cfg);
	char text[32];

	if (!t)
		return 1;
	tg_site(t, 1, "serve");
	tg_site(t, 2, "parse");
	tg_site(t, 3, "reply");
	tg_site_at(t, 4, "log", "net.c", 40);
	tg_site_at(t, 5, "log", "disk.c", 7);
	tg_thread(t, 1, 201, "main");
	tg_thread(t, 2, 202, "io");
	tg_annot_name(t, 1, RECFMT_NAME_TRACK, "queue");
	tg_annot_name(t, 2, RECFMT_NAME_TRACK, "load");
	tg_annot_name(t, 3, RECFMT_NAME_KEY, "bytes");
	tg_annot_name(t, 4, RECFMT_NAME_FLOW, "request");
	tg_annot_name(t, 5, RECFMT_NAME_INSTANT, "tick");
	for (uint64_t r = 0; r < 12; r++) {
		uint64_t b = 1000 + 2000 + 10000 * r;

		tg_enter(t, 1, 1, b);
		tg_enter(t, 1, 2, b + 100);
		annot(t, 1, RECFMT_ANNOT_ARG, 3, b + 150, 100 + 10 * (int64_t)r, 0, 0, NULL);
		annot(t, 1, RECFMT_ANNOT_VALUE_I64, 1, b + 160, (int64_t)(r % 4), 0, 0, NULL);
		annot(t, 1, RECFMT_ANNOT_FLOW_BEGIN, 4, b + 200, 0, 0, r + 1, NULL);
		tg_exit(t, 1, 2, b + 700 + 13 * r);
		tg_enter(t, 1, 4, b + 800);
		tg_exit(t, 1, 4, b + 850 + r);
		if (r % 4 == 0)
			annot(t, 1, RECFMT_ANNOT_INSTANT, 5, b + 900, 0, 0, 0, NULL);
		if (r % 6 == 0) {
			snprintf(text, sizeof(text), "round %u", (unsigned)r);
			annot(t, 1, RECFMT_ANNOT_MESSAGE, 0, b + 950, 0, 0, 0, text);
		}
		tg_exit(t, 1, 1, b + 1000);
		tg_enter(t, 2, 3, b + 1500);
		if (r % 2 == 0)
			annot(t, 2, RECFMT_ANNOT_FLOW_STEP, 4, b + 1600, 0, 0, r + 1, NULL);
		if (r < 11)
			annot(t, 2, RECFMT_ANNOT_FLOW_END, 4, b + 2000 + 37 * (r % 5), 0, 0, r + 1,
			      NULL);
		tg_enter(t, 2, 5, b + 2500);
		tg_exit(t, 2, 5, b + 2600 + 3 * r);
		annot(t, 2, RECFMT_ANNOT_VALUE_F64, 2, b + 2700, 0, 0.25 * (double)r, 0, NULL);
		tg_exit(t, 2, 3, b + 3000 + 50 * (r % 3));
		if (r % 4 == 3)
			tg_flush(t);
	}
	return tg_finish(t, true) ? 1 : 0;
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

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "annotated"))) {
		fprintf(stderr, "usage: gen_golden DIR [annotated]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/annotated.zst", argv[1]);
	if (write_annotated(path))
		return 1;
	if (argc == 3)
		return 0;
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
