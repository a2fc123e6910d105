/* SPDX-License-Identifier: MIT */
/*
 * test_export_sums.c - export's dur_ns and self_ns add up to summary's
 * total_ns and self_ns exactly, per scope and in sum (docs/EXPORT.md, "Sums
 * equal summary's"), on a recording whose clock is not 1 ns a tick: a TSC at
 * 2 596 132 193 ticks/s whose durations are multiples of its 26-tick step,
 * as on a VM whose TSC advances in 10 ns steps. Rounding each row alone
 * loses ~0.015 ns a row there, and the sums drifted (issue 25). Three
 * threads, a recursive scope (only its outermost activations are in
 * total_ns), nested scopes, and the same scope on every thread.
 */
#include "ttest.h"

#include <inttypes.h>
#include <unistd.h>

#define STEP 26 /* ticks */
#define NR_SCOPES 4

static const char *trace, *dir;
static const char *const names[NR_SCOPES] = { "main", "work", "fib", "leaf" };

/* fib(n) of the thread, each activation 1..3 steps of its own time. */
static uint64_t fib(struct tg_trace *t, uint32_t serial, uint64_t ticks, unsigned n, uint64_t *rnd)
{
	tg_enter(t, serial, 3, ticks);
	*rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
	ticks += STEP * (1 + (*rnd >> 62));
	if (n > 1) {
		ticks = fib(t, serial, ticks, n - 1, rnd);
		ticks = fib(t, serial, ticks, n - 2, rnd);
	}
	tg_exit(t, serial, 3, ticks);
	return ticks;
}

static void write_trace(void)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2596132193ull,
				 .start_ticks = 1000000, .pid = 9 };
	struct tg_trace *t = tg_create(trace, &cfg);
	uint64_t rnd = 12345;

	cr_assert(t);
	for (uint32_t s = 0; s < NR_SCOPES; s++)
		tg_site_at(t, s + 1, names[s], "sums.c", 10 + s);
	for (uint32_t th = 1; th <= 3; th++) {
		uint64_t ticks = 1000000 + th * 7;

		tg_thread(t, th, 100 + th, NULL);
		tg_enter(t, th, 1, ticks);
		for (unsigned i = 0; i < 400 * th; i++) {
			tg_enter(t, th, 2, ticks += STEP);
			for (unsigned k = 0; k < 3; k++) {
				tg_enter(t, th, 4, ticks += STEP);
				tg_exit(t, th, 4, ticks += STEP * (1 + k));
			}
			ticks = fib(t, th, ticks + STEP, 3 + i % 4, &rnd);
			tg_exit(t, th, 2, ticks += STEP);
		}
		tg_exit(t, th, 1, ticks += STEP);
	}
	cr_assert_eq(tg_finish(t, true), 0);
}

static void setup(void)
{
	trace = tu_path(0, "sums.zst");
	dir = tu_path(1, "sums_out");
	write_trace();
}

static void teardown(void)
{
	unlink(trace);
	cr_assert(tu_rm_rf(dir), "%s", dir);
}

TestSuite(export_sums, .init = setup, .fini = teardown, .timeout = 60);

static int scope_of(const char *name)
{
	for (int s = 0; s < NR_SCOPES; s++)
		if (strcmp(name, names[s]) == 0)
			return s;
	return -1;
}

Test(export_sums, dur_and_self_add_up_to_summary_exactly_on_a_tsc_recording)
{
	uint64_t want_total[NR_SCOPES] = { 0 }, want_self[NR_SCOPES] = { 0 };
	uint64_t total[NR_SCOPES] = { 0 }, self[NR_SCOPES] = { 0 }, calls[NR_SCOPES] = { 0 };
	uint64_t want_calls[NR_SCOPES] = { 0 };
	int id_scope[64];
	char path[512], line[512], name[64];
	struct tu_result r;
	FILE *f;

	r = tu_run("summary", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++) {
		uint64_t c, tot, sf;

		cr_assert_eq(sscanf(tu_line(r.out, i), "%63[^,],%" SCNu64 ",%" SCNu64 ",%" SCNu64, name,
				    &c, &tot, &sf), 4);
		cr_assert_geq(scope_of(name), 0, "%s", name);
		want_calls[scope_of(name)] = c;
		want_total[scope_of(name)] = tot;
		want_self[scope_of(name)] = sf;
	}
	tu_result_free(&r);

	r = tu_run("export", "--format=csv", "-o", dir, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	snprintf(path, sizeof(path), "%s/scopes.csv", dir);
	f = fopen(path, "r");
	cr_assert(f);
	cr_assert(fgets(line, sizeof(line), f));
	for (unsigned i = 0; i < 64; i++)
		id_scope[i] = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned id;

		cr_assert_eq(sscanf(line, "0,%u,%63[^,]", &id, name), 2, "%s", line);
		cr_assert_lt(id, 64u);
		id_scope[id] = scope_of(name);
	}
	fclose(f);

	/* activations: run_id,thread_id,scope_id,activation_id,parent_id,depth,
	 * start_ns,start_unix_ns,dur_ns,self_ns,error; a fib is outermost when
	 * its parent is not a fib (its parent's scope: a map by activation id). */
	static int scope_of_act[1 << 20];
	uint64_t rows = 0;

	snprintf(path, sizeof(path), "%s/activations.csv", dir);
	f = fopen(path, "r");
	cr_assert(f);
	cr_assert(fgets(line, sizeof(line), f));
	for (unsigned i = 0; i < (1u << 20); i++)
		scope_of_act[i] = -1;
	/* Rows come children first: read all, then sum. */
	struct row { uint64_t id, parent, dur, self; int scope; bool has_parent; } *v = NULL;
	size_t n = 0, cap = 0;

	while (fgets(line, sizeof(line), f)) {
		uint64_t th, sid, id, parent = 0, depth, start, unix_ns, dur, sf;
		char *p = line;
		bool has_parent;

		cr_assert_eq(sscanf(p, "0,%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",", &th, &sid, &id), 3);
		for (int k = 0; k < 4; k++)
			p = strchr(p, ',') + 1;
		has_parent = *p != ',';
		if (has_parent)
			parent = strtoull(p, NULL, 10);
		p = strchr(p, ',') + 1;
		cr_assert_eq(sscanf(p, "%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64,
				    &depth, &start, &unix_ns, &dur, &sf), 5, "%s", line);
		cr_assert(strstr(line, ",false"), "%s", line);
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = realloc(v, cap * sizeof(*v));
		}
		cr_assert_lt(id, 1u << 20);
		v[n++] = (struct row){ id, parent, dur, sf, id_scope[sid], has_parent };
		scope_of_act[id] = id_scope[sid];
		rows++;
	}
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		bool outermost = !v[i].has_parent || scope_of_act[v[i].parent] != v[i].scope;

		cr_assert_geq(v[i].scope, 0);
		calls[v[i].scope]++;
		self[v[i].scope] += v[i].self;
		total[v[i].scope] += outermost ? v[i].dur : 0;
	}
	free(v);
	for (int s = 0; s < NR_SCOPES; s++) {
		cr_assert_eq(calls[s], want_calls[s], "%s calls", names[s]);
		cr_assert_eq(total[s], want_total[s], "%s total_ns: export %" PRIu64 ", summary %" PRIu64,
			     names[s], total[s], want_total[s]);
		cr_assert_eq(self[s], want_self[s], "%s self_ns: export %" PRIu64 ", summary %" PRIu64,
			     names[s], self[s], want_self[s]);
	}
	cr_assert_gt(rows, 10000u);
}
