/* SPDX-License-Identifier: MIT */
/*
 * bench_rate.c - the highest event rate one producer can sustain with zero
 * drops (REC_OVERFLOW=drop, default ring), i.e. how fast the writer thread
 * turns records into the file. One producer emits scopes at a paced rate
 * for --seconds at each of a ladder of rates, then as fast as it can; for
 * each step it prints the rate achieved and the scopes dropped (read back
 * from the file through format/), and the writer's CPU time per event.
 * Also prints bytes per event on disk.
 *
 * Usage: bench_rate [--seconds=S] [--out=PATH]
 */
#define _GNU_SOURCE
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <x86intrin.h>

#include "recfmt.h"

__attribute__((noinline)) static void probed(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Scopes recorded and dropped in a trace, read through format/. */
static void count(const char *path, uint64_t *events, uint64_t *dropped)
{
	struct recfmt_reader *r;
	struct recfmt_error err;
	const uint8_t *data;
	size_t len;

	*events = *dropped = 0;
	if (recfmt_reader_open(&r, path, &err) != RECFMT_OK)
		return;
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor cur;
		struct recfmt_record rec;

		recfmt_cursor_init(&cur, data, len);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			if (rec.type == RECFMT_EVENTS) {
				struct recfmt_events_iter it;
				if (recfmt_events_open(&rec, &it, &err) == RECFMT_OK)
					*events += it.nr_events;
			} else if (rec.type == RECFMT_END) {
				struct recfmt_end e;
				if (recfmt_decode_end(&rec, &e, &err) == RECFMT_OK)
					*dropped = e.nr_dropped;
			}
		}
	}
	recfmt_reader_close(r);
}

static double thread_cpu_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Emits scopes at `rate` events/s (0: unpaced) for `seconds`. Return: events attempted. */
static uint64_t emit(double rate, double seconds)
{
	double t0 = now_s(), t;
	uint64_t n = 0;

	do {
		t = now_s() - t0;
		uint64_t due = rate > 0 ? (uint64_t)(t * rate) : n + 2 * 4096;
		while (n < due) {
			for (int i = 0; i < 64; i++)
				probed();
			n += 128;
		}
	} while (t < seconds);
	return n;
}

int main(int argc, char **argv)
{
	double seconds = 1.0;
	const char *out = "/tmp/bench_rate.zst";
	static const double rates[] = { 10e6, 20e6, 30e6, 40e6, 50e6, 60e6, 70e6, 80e6, 0 };

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--seconds=", 10))
			seconds = atof(argv[i] + 10);
		else if (!strncmp(argv[i], "--out=", 6))
			out = argv[i] + 6;
		else {
			fprintf(stderr, "usage: %s [--seconds=S] [--out=PATH]\n", argv[0]);
			return 2;
		}
	}
	printf("%-12s %12s %12s %10s %14s %10s\n", "target ev/s", "achieved", "dropped", "drop %",
	       "writer ns/ev", "bytes/ev");
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct rec_config cfg = REC_CONFIG_INIT;
		uint64_t attempted, events, dropped;
		double t0, t1, cpu0, cpu1;
		struct stat st;

		cfg.output = out;
		cfg.overflow = REC_OVERFLOW_DROP;
		if (rec_start(&cfg))
			return 1;
		probed(); /* attach this thread before timing */
		rec_flush();
		cpu0 = thread_cpu_s(CLOCK_PROCESS_CPUTIME_ID) - thread_cpu_s(CLOCK_THREAD_CPUTIME_ID);
		t0 = now_s();
		attempted = emit(rates[i], seconds);
		t1 = now_s();
		rec_stop();
		cpu1 = thread_cpu_s(CLOCK_PROCESS_CPUTIME_ID) - thread_cpu_s(CLOCK_THREAD_CPUTIME_ID);
		count(out, &events, &dropped);
		stat(out, &st);
		char label[32];
		if (rates[i] > 0)
			snprintf(label, sizeof(label), "%.0fM", rates[i] / 1e6);
		else
			snprintf(label, sizeof(label), "unpaced");
		printf("%-12s %11.1fM %12llu %9.2f%% %14.2f %10.3f\n", label,
		       attempted / (t1 - t0) / 1e6, (unsigned long long)dropped,
		       100.0 * 2 * dropped / (double)(attempted + 2),
		       (cpu1 - cpu0) * 1e9 / (double)(events ? events : 1),
		       (double)st.st_size / (double)(events ? events : 1));
	}
	return 0;
}
