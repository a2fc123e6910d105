/* SPDX-License-Identifier: MIT */
/*
 * ttest.h - shared by the analyzer tests: a summary CSV row parsed back into
 * numbers, a number of a JSON report, a trace file fixture with a monotonic
 * clock (1 tick = 1 ns) so that every expected time is exact, and the
 * fixture and checks of the tests of windows through the frame index.
 */
#ifndef TTEST_H
#define TTEST_H

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "tracegen.h"

struct csv_row {
	char thread[64];
	char name[128];
	uint64_t calls, total, self, min, mean, p50, p90, p99, max, errors;
};

#define SUMMARY_HEADER "function,calls,total_ns,self_ns,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns,errors"

/* Parses the data lines of summary --format=csv (after the header). */
static inline size_t parse_summary_csv(const char *csv, bool by_thread, struct csv_row *rows,
				       size_t max)
{
	size_t n = 0;
	unsigned nr = tu_nr_lines(csv);

	for (unsigned i = 1; i < nr && n < max; i++) {
		char line[1024], *p;
		struct csv_row *r = &rows[n];

		snprintf(line, sizeof(line), "%s", tu_line(csv, i));
		p = line;
		memset(r, 0, sizeof(*r));
		if (by_thread) {
			char *c = strchr(p, ',');
			cr_assert(c, "bad csv line %s", line);
			*c = '\0';
			snprintf(r->thread, sizeof(r->thread), "%.63s", p);
			p = c + 1;
		}
		char *c = strchr(p, ',');
		cr_assert(c, "bad csv line %s", line);
		*c = '\0';
		snprintf(r->name, sizeof(r->name), "%.127s", p);
		cr_assert_eq(sscanf(c + 1,
				    "%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64
				    ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64,
				    &r->calls, &r->total, &r->self, &r->min, &r->mean, &r->p50,
				    &r->p90, &r->p99, &r->max, &r->errors),
			     10, "bad csv line %s", tu_line(csv, i));
		n++;
	}
	return n;
}

static inline const struct csv_row *find_row(const struct csv_row *rows, size_t n,
					     const char *thread, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0 && (!thread || !strcmp(rows[i].thread, thread)))
			return &rows[i];
	cr_assert_fail("no row for %s", name);
	return NULL;
}

/*
 * tt_new_trace() - a trace at path with a monotonic clock from tick 1000
 * (1 tick = 1 ns), pid 4242, frames cut past frame_bytes and blocks of
 * block_events (0: tracegen's defaults), an index frame before each frame
 * if writer_index.
 */
static inline struct tg_trace *tt_new_trace(const char *path, size_t frame_bytes,
					    uint32_t block_events, bool writer_index)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = 4242, .start_real_ns = 1700000000000000000ull,
				 .frame_bytes = frame_bytes, .block_events = block_events,
				 .writer_index = writer_index };
	struct tg_trace *t = tg_create(path, &cfg);

	cr_assert(t);
	return t;
}

static inline struct tg_trace *new_trace(const char *path)
{
	return tt_new_trace(path, 0, 0, false);
}

/* tt_new_trace() with sites 1 "main", 2 "f", 3 "g" and thread 1 "main" (tid 77). */
static inline struct tg_trace *tt_main_f_g(const char *path, size_t frame_bytes,
					   uint32_t block_events, bool writer_index)
{
	struct tg_trace *t = tt_new_trace(path, frame_bytes, block_events, writer_index);

	tg_site(t, 1, "main");
	tg_site(t, 2, "f");
	tg_site(t, 3, "g");
	tg_thread(t, 1, 77, "main");
	return t;
}

/* xorshift64: a number below n from *state, the same sequence on every machine. */
static inline uint32_t tt_rnd(uint64_t *state, uint32_t n)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (uint32_t)(*state % n);
}

/* The number after "key": in json (the first one); a failed assertion if there is none. */
static inline uint64_t tt_json_u64(const char *json, const char *key)
{
	const char *p = tu_json_key(json, key);

	cr_assert(p, "no key %s in %s", key, json);
	return strtoull(p, NULL, 10);
}

/*
 * tt_index_dir() - the setup of the tests of windows: dir (created) as the
 * frame index's cache (TRACETOOL_INDEX_DIR), and TRACETOOL_INDEX_STATS=1,
 * whose line says how a window read the file (tt_index_decoded()).
 */
static inline void tt_index_dir(const char *dir)
{
	mkdir(dir, 0700);
	setenv("TRACETOOL_INDEX_DIR", dir, 1);
	setenv("TRACETOOL_INDEX_STATS", "1", 1);
}

/* "decoded D of N frames" from TRACETOOL_INDEX_STATS's line: D, and N in
 * *of; -1: no such line (the file was not read through an index). */
static inline int tt_index_decoded(const char *err, int *of)
{
	const char *p = strstr(err, "index: decoded ");
	int d;

	if (!p || sscanf(p, "index: decoded %d of %d frames", &d, of) != 2)
		return -1;
	return d;
}

/* The reports a window test compares: summary's and tree's CSV, chrome's JSON (2). */
#define TT_WINDOW_REPORTS 3

/* args (8 at least): report c (< TT_WINDOW_REPORTS) over the window from, to of path. */
static inline const char *const *tt_window_args(const char **args, unsigned c, const char *from,
						 const char *to, const char *path)
{
	static const char *const cmds[TT_WINDOW_REPORTS][4] = {
		{ "summary", "--format=csv", NULL },
		{ "tree", "--format=csv", NULL },
		{ "chrome", "-o", "-", NULL },
	};
	unsigned n = 0;

	for (unsigned k = 0; cmds[c][k]; k++)
		args[n++] = cmds[c][k];
	args[n++] = from;
	args[n++] = to;
	args[n++] = path;
	args[n] = NULL;
	return args;
}

/*
 * tt_same_window() - tracetool ARGS with TRACETOOL_INDEX=ref (the reference:
 * "0" the whole file, "pass" the pass index) and with TRACETOOL_INDEX=index:
 * the same exit status and stdout byte for byte, and the second's stderr
 * says want. Return: the second run (tu_result_free() it).
 */
static inline struct tu_result tt_same_window(const char *const *args, const char *ref,
					      const char *index, const char *want)
{
	struct tu_result a, b;
	char line[512];
	size_t n = 0;

	for (unsigned k = 0; args[k] && n < sizeof(line) - 1; k++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s ", args[k]);
	setenv("TRACETOOL_INDEX", ref, 1);
	a = tu_runv(args);
	setenv("TRACETOOL_INDEX", index, 1);
	b = tu_runv(args);
	cr_assert_eq(a.status, b.status, "%s: exit %d vs %d: %s", line, a.status, b.status, b.err);
	cr_assert(strstr(b.err, want), "%s: want '%s' in: %s", line, want, b.err);
	cr_assert_eq(a.out_len, b.out_len, "%s: %zu vs %zu bytes", line, a.out_len, b.out_len);
	cr_assert(memcmp(a.out, b.out, a.out_len) == 0, "%s: outputs differ", line);
	tu_result_free(&a);
	return b;
}

#endif /* TTEST_H */
