/* SPDX-License-Identifier: MIT */
/*
 * bench_analyzer.c - tracetool's throughput against issue #4's targets.
 * Generates synthetic traces through format/ (4 threads of nested scopes,
 * TSC ticks with jitter, SYNC records, 4 MiB frames like librec), then times,
 * as child processes, `tracetool summary` (by default: a reader thread and a
 * pairing walker per CPU, analyzer/engine/events.c; and with
 * TRACETOOL_THREADS=1: one core), `zstd -d` of the same file and `tracetool
 * chrome`, `tracetool perfetto -o /dev/null` (the timeline writers, wall
 * and CPU time), `tracetool tree`, `tracetool flame` (the call-path
 * consumers of the pairing engine) and `tracetool diff` of the file against itself,
 * reporting the median of several runs, and compares the peak RSS
 * (wait4's ru_maxrss) of summary on a trace and on one 10x longer.
 *
 *   bench_analyzer TRACETOOL [EVENTS] [RUNS]     (defaults: 100000000, 5)
 *
 * With BENCH_KEEP=1 in the environment the generated traces are kept (for
 * profiling) and their paths printed. With BENCH_TRACE=FILE nothing is
 * generated: FILE (a real librec trace) is timed instead, EVENTS must be its
 * event count (`tracetool info`), and the RSS comparison is skipped.
 *
 * It asserts nothing: machine speed is not a test (style.md §6).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recfmt.h"

#define NR_THREADS 4
#define NR_SITES 24
#define FRAME_BYTES (4u << 20)
#define BATCH 8192

struct gen_thread {
	uint64_t ticks, rng;
	uint32_t stack[64];
	int depth;
	uint32_t phase, todo;
	struct recfmt_event ev[BATCH];
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * The next event of a thread. "program" mode (the default) replays a server
 * loop's call tree with random fan-out and recursion depth at each visit:
 * request > parse > token x1..4, request > compute > solve (recursive 1..4
 * deep), request > reply; plus rare long stalls. "random" mode
 * (BENCH_RANDOM=1) is a random walk over 24 sites up to 12 deep: each event
 * is an independent coin toss, the worst case for branch prediction.
 */
static bool random_mode;

static void push(struct gen_thread *g, struct recfmt_event *ev, uint32_t site)
{
	g->stack[g->depth++] = site;
	ev->code = RECFMT_CODE(site, RECFMT_KIND_ENTER);
}

static void pop(struct gen_thread *g, struct recfmt_event *ev)
{
	ev->code = RECFMT_CODE(g->stack[--g->depth], RECFMT_KIND_EXIT);
}

enum { S_REQUEST = 1, S_PARSE, S_TOKEN, S_COMPUTE, S_SOLVE, S_REPLY };

static void next_program(struct gen_thread *g, struct recfmt_event *ev, uint64_t r)
{
	uint32_t top = g->depth ? g->stack[g->depth - 1] : 0;

	/* g->todo: children still to enter under the current scope. */
	switch (top) {
	case 0:
		push(g, ev, S_REQUEST);
		g->phase = 0;
		return;
	case S_REQUEST:
		if (g->phase == 3) {
			pop(g, ev);
			return;
		}
		g->phase++;
		if (g->phase == 1) {
			push(g, ev, S_PARSE);
			g->todo = 1 + (uint32_t)(r % 4);
		} else if (g->phase == 2) {
			push(g, ev, S_COMPUTE);
			g->todo = 1 + (uint32_t)((r >> 8) % 4);
		} else {
			push(g, ev, S_REPLY);
		}
		return;
	case S_PARSE:
		if (g->todo) {
			g->todo--;
			push(g, ev, S_TOKEN);
		} else {
			pop(g, ev);
		}
		return;
	case S_COMPUTE:
	case S_SOLVE:
		/* solve recurses todo deep, then unwinds to compute and out. */
		if (g->todo) {
			g->todo--;
			push(g, ev, S_SOLVE);
		} else {
			pop(g, ev);
		}
		return;
	default:
		pop(g, ev);
	}
}

static void next_event(struct gen_thread *g, struct recfmt_event *ev)
{
	uint64_t r = rnd(&g->rng);

	g->ticks += 20 + (r >> 58) + ((r >> 40) & 0xff ? 0 : (r >> 20) & 0xffff);
	ev->ticks = g->ticks;
	ev->aux = 0;
	if (!random_mode) {
		next_program(g, ev, r);
		return;
	}
	if (g->depth == 0 || (g->depth < 12 && (r & 3) < 2))
		push(g, ev, 1 + (uint32_t)(((r >> 8) % 5) + (uint32_t)g->depth * 2) % NR_SITES);
	else
		pop(g, ev);
}

static int write_all(FILE *f, const struct recfmt_buf *b)
{
	return fwrite(b->data, 1, b->len, f) == b->len ? 0 : -1;
}

static int generate(const char *path, uint64_t nr_events)
{
	static struct gen_thread g[NR_THREADS];
	/* The writer's index frames, as librec writes them (FORMAT.md §6). */
	static struct recfmt_nest nest[NR_THREADS];
	struct recfmt_buf frame, scratch, out, ix, sums;
	struct recfmt_compressor *c = recfmt_compressor_create(1);
	struct recfmt_events_encoder enc;
	const uint64_t tps = 2445000000ull, t0 = 1000000;
	struct recfmt_header hdr = { .clock = RECFMT_CLOCK_TSC, .pid = 1, .ticks_per_second = tps,
				     .start_ticks = t0, .start_real_ns = 1700000000000000000ull };
	uint64_t done = 0, per_thread = nr_events / NR_THREADS;
	uint32_t seq = 0;
	FILE *f = fopen(path, "wb");
	char name[32];

	if (!f || !c)
		return -1;
	recfmt_buf_init(&frame);
	recfmt_buf_init(&scratch);
	recfmt_buf_init(&out);
	recfmt_buf_init(&ix);
	recfmt_buf_init(&sums);
	recfmt_encode_frame(&frame, seq++);
	recfmt_encode_header(&frame, &hdr);
	recfmt_encode_sync(&frame, &(struct recfmt_sync){ t0, 5000, 0 });
	for (uint32_t s = 1; s <= NR_SITES; s++) {
		static const char *const program[] = { "", "request", "parse", "token",
						       "compute", "solve", "reply" };

		if (!random_mode && s <= S_REPLY)
			snprintf(name, sizeof(name), "%s", program[s]);
		else
			snprintf(name, sizeof(name), "function_%02u", s);
		recfmt_encode_site(&frame, s, s * 10, name, "bench.c");
	}
	for (uint32_t t = 0; t < NR_THREADS; t++) {
		snprintf(name, sizeof(name), "worker-%u", t);
		recfmt_encode_thread(&frame, t + 1, 1000 + t, name);
		g[t].ticks = t0 + t;
		g[t].rng = 0x9e3779b97f4a7c15ull * (t + 1);
	}
	while (done < per_thread) {
		uint32_t n = per_thread - done < BATCH ? (uint32_t)(per_thread - done) : BATCH;

		for (uint32_t t = 0; t < NR_THREADS; t++) {
			for (uint32_t i = 0; i < n; i++)
				next_event(&g[t], &g[t].ev[i]);
			recfmt_events_begin(&enc, &frame, &scratch, t + 1, g[t].ev[0].ticks);
			recfmt_events_track(&enc, &nest[t], &sums);
			recfmt_events_append(&enc, g[t].ev, n);
			recfmt_events_finish(&enc);
		}
		done += n;
		if (frame.len >= FRAME_BYTES || done == per_thread) {
			if (done == per_thread) {
				uint64_t last = g[0].ticks;

				/* Close every open scope, then the last sync and END. */
				for (uint32_t t = 0; t < NR_THREADS; t++) {
					uint32_t k = 0;

					while (g[t].depth) {
						g[t].ticks += 10;
						g[t].ev[k].ticks = g[t].ticks;
						g[t].ev[k++].code = RECFMT_CODE(
							g[t].stack[--g[t].depth], RECFMT_KIND_EXIT);
					}
					if (k) {
						recfmt_events_begin(&enc, &frame, &scratch, t + 1,
								    g[t].ev[0].ticks);
						recfmt_events_track(&enc, &nest[t], &sums);
						recfmt_events_append(&enc, g[t].ev, k);
						recfmt_events_finish(&enc);
					}
					if (g[t].ticks > last)
						last = g[t].ticks;
				}
				recfmt_encode_sync(&frame, &(struct recfmt_sync){
					last, 5000 + (uint64_t)((last - t0) / 2.445), 0 });
				recfmt_encode_end(&frame, &(struct recfmt_end){ .end_ticks = last });
			}
			if (recfmt_compress_frame(c, &frame, &out) ||
			    recfmt_index_build(&ix, &frame, 1, 0,
					       (const struct recfmt_index_entry *)(void *)sums.data,
					       sums.len / sizeof(struct recfmt_index_entry), out.data,
					       out.len) ||
			    write_all(f, &ix) || write_all(f, &out))
				return -1;
			frame.len = 0;
			sums.len = 0;
			recfmt_encode_frame(&frame, seq++);
		}
	}
	recfmt_buf_fini(&frame);
	recfmt_buf_fini(&scratch);
	recfmt_buf_fini(&out);
	recfmt_buf_fini(&ix);
	recfmt_buf_fini(&sums);
	for (uint32_t t = 0; t < NR_THREADS; t++)
		recfmt_nest_fini(&nest[t]);
	recfmt_compressor_destroy(c);
	return fclose(f);
}

struct run {
	double seconds;
	double cpu_seconds; /* user + system of the child (wait4) */
	long max_rss_kib;
	int status;
};

/* Runs argv with stdout to stdout_path; threads: TRACETOOL_THREADS, or NULL. */
static struct run run_env(char *const argv[], const char *stdout_path, const char *threads)
{
	struct run r = { 0, 0, 0, -1 };
	struct timespec a, b;
	struct rusage ru;
	int ws;
	pid_t pid;

	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid == 0) {
		FILE *o = freopen(stdout_path, "w", stdout);

		(void)o;
		if (threads)
			setenv("TRACETOOL_THREADS", threads, 1);
		else
			unsetenv("TRACETOOL_THREADS");
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &ws, 0, &ru) < 0)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &b);
	r.seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	r.cpu_seconds = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
			(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	r.max_rss_kib = ru.ru_maxrss;
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128;
	return r;
}

static struct run run(char *const argv[], const char *stdout_path)
{
	return run_env(argv, stdout_path, NULL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	const char *tool = argc > 1 ? argv[1] : "tracetool";
	uint64_t nr = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000000ull;
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	char path[128], small[128];
	const char *given = getenv("BENCH_TRACE");
	double ts[64], t1[64], tz[64], tc[64], tt[64], tf[64], td[64], tp[64];
	/* CPU seconds (user + system): the figures that hold on a loaded machine */
	double cs[64], cz[64], ct[64], cf[64], cd[64], cc[64], cp[64];
	struct stat st;
	struct run r;

	random_mode = getenv("BENCH_RANDOM") != NULL;
	if (runs < 1 || runs > 64) {
		fprintf(stderr, "usage: bench_analyzer TRACETOOL [EVENTS] [RUNS<=64]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/tmp/bench_analyzer_%d.zst", (int)getpid());
	snprintf(small, sizeof(small), "/tmp/bench_analyzer_%d_small.zst", (int)getpid());
	if (given)
		snprintf(path, sizeof(path), "%s", given);
	if ((!given && (generate(path, nr) || generate(small, nr / 10))) || stat(path, &st)) {
		fprintf(stderr, "bench_analyzer: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (given)
		printf("trace: %s, %" PRIu64 " events, %lld bytes (%.2f bytes/event)\n", given, nr,
		       (long long)st.st_size, (double)st.st_size / (double)nr);
	else
		printf("trace: %s mode, %" PRIu64 " events, %d threads, %lld bytes (%.2f bytes/event)\n",
		       random_mode ? "random" : "program", nr, NR_THREADS, (long long)st.st_size,
		       (double)st.st_size / (double)nr);
	for (int i = 0; i < runs; i++) {
		char *s[] = { (char *)tool, "summary", "--format=csv", path, NULL };
		char *z[] = { "zstd", "-q", "-d", "-c", path, NULL };

		r = run(s, "/dev/null");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: summary exited %d\n", r.status);
			return 1;
		}
		ts[i] = r.seconds;
		cs[i] = r.cpu_seconds;
		r = run_env(s, "/dev/null", "1");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: summary exited %d\n", r.status);
			return 1;
		}
		t1[i] = r.seconds;
		r = run(z, "/dev/null");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: zstd -d exited %d\n", r.status);
			return 1;
		}
		tz[i] = r.seconds;
		cz[i] = r.cpu_seconds;
	}
	for (int i = 0; i < runs; i++) {
		char *c[] = { (char *)tool, "chrome", path, NULL };
		char *pf[] = { (char *)tool, "perfetto", "-o", "/dev/null", path, NULL };

		char *tr[] = { (char *)tool, "tree", "--format=csv", path, NULL };
		char *fl[] = { (char *)tool, "flame", path, NULL };
		/* diff reads both files: twice the events. */
		char *df[] = { (char *)tool, "diff", "--format=csv", path, path, NULL };

		r = run(c, "/dev/null");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: chrome exited %d\n", r.status);
			return 1;
		}
		tc[i] = r.seconds;
		cc[i] = r.cpu_seconds;
		r = run(pf, "/dev/null");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: perfetto exited %d\n", r.status);
			return 1;
		}
		tp[i] = r.seconds;
		cp[i] = r.cpu_seconds;
		r = run(tr, "/dev/null");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: tree exited %d\n", r.status);
			return 1;
		}
		tt[i] = r.seconds;
		ct[i] = r.cpu_seconds;
		r = run(fl, "/dev/null");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: flame exited %d\n", r.status);
			return 1;
		}
		tf[i] = r.seconds;
		cf[i] = r.cpu_seconds;
		r = run(df, "/dev/null");
		if (r.status) {
			fprintf(stderr, "bench_analyzer: diff exited %d\n", r.status);
			return 1;
		}
		td[i] = r.seconds;
		cd[i] = r.cpu_seconds;
	}
	double ms = median(ts, runs), m1 = median(t1, runs), mz = median(tz, runs);
	double mc = median(tc, runs), mt = median(tt, runs), mf = median(tf, runs);
	double md = median(td, runs), mp = median(tp, runs);

	printf("summary:   %.3f s median of %d, %.1f M events/s (default: reader + walker per CPU)\n",
	       ms, runs, (double)nr / ms / 1e6);
	printf("summary:   %.3f s median of %d, %.1f M events/s (TRACETOOL_THREADS=1, one core)\n",
	       m1, runs, (double)nr / m1 / 1e6);
	printf("zstd -d:   %.3f s median of %d; summary / zstd -d = %.2f (one core: %.2f)\n", mz,
	       runs, ms / mz, m1 / mz);
	printf("chrome:    %.3f s median of %d, %.1f M events/s; chrome / zstd -d = %.2f\n", mc, runs,
	       (double)nr / mc / 1e6, mc / mz);
	printf("perfetto:  %.3f s median of %d, %.1f M events/s; perfetto / zstd -d = %.2f\n", mp,
	       runs, (double)nr / mp / 1e6, mp / mz);
	printf("tree:      %.3f s median of %d, %.1f M events/s; tree / zstd -d = %.2f\n", mt, runs,
	       (double)nr / mt / 1e6, mt / mz);
	printf("flame:     %.3f s median of %d, %.1f M events/s; flame / zstd -d = %.2f\n", mf, runs,
	       (double)nr / mf / 1e6, mf / mz);
	printf("diff:      %.3f s median of %d, %.1f M events/s (the file against itself); "
	       "diff / 2 zstd -d = %.2f\n",
	       md, runs, 2.0 * (double)nr / md / 1e6, md / (2 * mz));
	{
		/* CPU time (user + system, all threads): under load, wall time
		 * measures the other processes; CPU time the work done. */
		double qs = median(cs, runs), qz = median(cz, runs), qt = median(ct, runs);
		double qf = median(cf, runs), qd = median(cd, runs);
		double qc = median(cc, runs), qp = median(cp, runs);

		printf("cpu time:  zstd -d %.3f s, summary %.3f s (%.2fx), tree %.3f s (%.2fx), "
		       "flame %.3f s (%.2fx), diff %.3f s (%.2fx of 2 zstd -d)\n",
		       qz, qs, qs / qz, qt, qt / qz, qf, qf / qz, qd, qd / (2 * qz));
		printf("cpu rate:  summary %.1f, tree %.1f, flame %.1f, diff %.1f M events per "
		       "CPU-second\n",
		       (double)nr / qs / 1e6, (double)nr / qt / 1e6, (double)nr / qf / 1e6,
		       2.0 * (double)nr / qd / 1e6);
		printf("cpu time:  chrome %.3f s (%.2fx zstd -d, %.1f M events per CPU-second), "
		       "perfetto %.3f s (%.2fx, %.1f M)\n",
		       qc, qc / qz, (double)nr / qc / 1e6, qp, qp / qz, (double)nr / qp / 1e6);
	}
	if (given)
		return 0;
	{
		char *s1[] = { (char *)tool, "summary", small, NULL };
		char *s2[] = { (char *)tool, "summary", path, NULL };
		struct run a = run(s1, "/dev/null"), b = run(s2, "/dev/null");

		printf("peak RSS:  summary of %" PRIu64 " events %ld KiB, of %" PRIu64
		       " events %ld KiB (ratio %.3f)\n",
		       nr / 10, a.max_rss_kib, nr, b.max_rss_kib,
		       (double)b.max_rss_kib / (double)a.max_rss_kib);
	}
	if (getenv("BENCH_KEEP")) {
		printf("kept %s and %s (BENCH_KEEP)\n", path, small);
		return 0;
	}
	unlink(path);
	unlink(small);
	return 0;
}
