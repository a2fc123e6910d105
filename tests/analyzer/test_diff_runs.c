/* SPDX-License-Identifier: MIT */
/*
 * test_diff_runs.c - `tracetool diff BASE... -- NEW...` with five runs a
 * side, on traces from tracegen shaped like recordings of this VM: a TSC at
 * 2.6 GHz that advances in 26-tick (10 ns) steps (the header says so), two
 * threads, a hundred scopes from 10 ns to 1 ms, and noise between runs (a
 * factor for the whole run and one per scope and run, log-normal, 1 %).
 * Known answers for the shapes of issue 25: a +10 % p50 shift of a
 * 1000-call scope, one of two threads 3x slower (and --by-thread), a 2x
 * slowdown of a ~10 ns function, +50 % on p99 with p50 unchanged; runs of
 * one build flag nothing; too few calls for a quantile; the command line.
 * Fixed seeds: every answer is the same on every machine.
 */
#include "ttest.h"

#include <math.h>
#include <unistd.h>

#define RUNS 5
#define TICKS_PER_NS 2.6
#define STEP_TICKS 26

static char path[2][RUNS][64];

static void setup(void)
{
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < RUNS; k++)
			snprintf(path[s][k], sizeof(path[s][k]), "/tmp/tt_%d_runs_%c%d.zst",
				 (int)getpid(), s ? 'n' : 'b', k);
}

static void teardown(void)
{
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < RUNS; k++)
			unlink(path[s][k]);
}

TestSuite(diff_runs, .init = setup, .fini = teardown, .timeout = 120);

static uint64_t rng;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((double)((rng * 2685821657736338717ull) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* A scope: calls on one thread, durations log-normal around median_ns; one
 * call in tail_every (0: none) is tail_factor times longer. */
struct scope {
	char name[32];
	uint32_t thread; /* 1 main, 2 worker */
	unsigned calls;
	double median_ns, sigma;
	unsigned tail_every;
	double tail_factor;
};

#define MAX_SCOPES 128
struct program {
	struct scope s[MAX_SCOPES];
	size_t n;
};

/* A hundred scopes like a real program's: 10 ns to 1 ms, 20 to 2000 calls,
 * on two threads, some with a tail of slow calls. */
static void make_program(struct program *p)
{
	rng = 12345;
	p->n = 100;
	for (size_t i = 0; i < p->n; i++) {
		struct scope *s = &p->s[i];

		snprintf(s->name, sizeof(s->name), "fn%03zu", i);
		s->thread = 1 + (uint32_t)(i % 2);
		s->median_ns = 10 * pow(1e5, uniform());
		s->calls = (unsigned)(20 * pow(100, uniform()));
		s->calls = s->median_ns > 1e5 && s->calls > 100 ? 100 : s->calls;
		s->sigma = 0.05 + 0.3 * uniform();
		s->tail_every = i % 3 ? 0 : 50;
		s->tail_factor = 5;
	}
}

static size_t add_scope(struct program *p, const char *name, uint32_t thread, unsigned calls,
			double median_ns, double sigma, unsigned tail_every, double tail_factor)
{
	struct scope *s = &p->s[p->n];

	snprintf(s->name, sizeof(s->name), "%s", name);
	s->thread = thread;
	s->calls = calls;
	s->median_ns = median_ns;
	s->sigma = sigma;
	s->tail_every = tail_every;
	s->tail_factor = tail_factor;
	return p->n++;
}

/*
 * Writes one run of p: each thread runs its scopes' calls interleaved, back
 * to back with 200 ns gaps, on a clock whose stamps are multiples of
 * STEP_TICKS (a scaled TSC). Every duration of the run is multiplied by a
 * factor for the run and one for the scope in this run (1 % each).
 */
static void write_run(const char *file, const struct program *p, uint64_t seed)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC,
				 .ticks_per_second = (uint64_t)(TICKS_PER_NS * 1e9),
				 .start_ticks = 0,
				 .pid = 7,
				 .clock_step_ticks = STEP_TICKS };
	double now[3] = { 0, 1000, 2000 }, run_factor, scope_factor[MAX_SCOPES];
	unsigned most = 0;
	struct tg_trace *t = tg_create(file, &cfg);

	cr_assert(t);
	rng = seed * 0x9E3779B97F4A7C15ull + 1;
	run_factor = exp(0.01 * normal());
	for (size_t k = 0; k < p->n; k++) {
		cr_assert_eq(tg_site(t, (uint32_t)k + 1, p->s[k].name), 0);
		scope_factor[k] = exp(0.01 * normal());
		most = p->s[k].calls > most ? p->s[k].calls : most;
	}
	cr_assert_eq(tg_thread(t, 1, 100, "main"), 0);
	cr_assert_eq(tg_thread(t, 2, 101, "worker"), 0);
	for (unsigned i = 0; i < most; i++) {
		for (size_t k = 0; k < p->n; k++) {
			const struct scope *s = &p->s[k];
			double *clock = &now[s->thread], ns;

			if (i >= s->calls)
				continue;
			ns = s->median_ns * exp(s->sigma * normal()) * run_factor * scope_factor[k];
			if (s->tail_every && i % s->tail_every == s->tail_every - 1)
				ns *= s->tail_factor;
			cr_assert_eq(tg_enter(t, s->thread, (uint32_t)k + 1,
					      (uint64_t)(*clock / STEP_TICKS) * STEP_TICKS),
				     0);
			*clock += ns * TICKS_PER_NS;
			cr_assert_eq(tg_exit(t, s->thread, (uint32_t)k + 1,
					     (uint64_t)(*clock / STEP_TICKS) * STEP_TICKS),
				     0);
			*clock += 200 * TICKS_PER_NS;
		}
	}
	cr_assert_eq(tg_finish(t, true), 0);
}

/* Five runs of base and of next, from seeds that differ by run and side. */
static void write_sides(const struct program *base, const struct program *next, uint64_t seed)
{
	for (int k = 0; k < RUNS; k++) {
		write_run(path[0][k], base, seed * 100 + (uint64_t)k);
		write_run(path[1][k], next, seed * 100 + 50 + (uint64_t)k);
	}
}

/* diff [opts...] BASE(5) -- NEW(5); opts NULL-terminated. */
static struct tu_result diff_runs(const char *const *opts)
{
	const char *args[40];
	size_t n = 0;

	args[n++] = "diff";
	while (opts && *opts)
		args[n++] = *opts++;
	for (int k = 0; k < RUNS; k++)
		args[n++] = path[0][k];
	args[n++] = "--";
	for (int k = 0; k < RUNS; k++)
		args[n++] = path[1][k];
	args[n] = NULL;
	return tu_runv(args);
}

/* The CSV field (0-based) of the row whose first field(s) are key. */
static const char *field(const char *csv, const char *key, unsigned idx)
{
	static char v[64];
	char want[128];
	const char *p, *end;

	snprintf(want, sizeof(want), "\n%s,", key);
	p = strstr(csv, want);
	cr_assert(p, "no row %s in %s", key, csv);
	p++;
	end = strchr(p, '\n');
	for (unsigned i = 0; i < idx; i++) {
		p = strchr(p, ',');
		cr_assert(p && p < end, "row %s has no field %u", key, idx);
		p++;
	}
	snprintf(v, sizeof(v), "%.*s", (int)(strcspn(p, ",\n")), p);
	return v;
}

#define F_VERDICT 15

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Every row's verdict is same or too few calls, except the names given. */
static void assert_only_changed(const char *csv, const char *const *changed, const char *verdict)
{
	for (unsigned i = 1; i < tu_nr_lines(csv); i++) {
		char line[512], *name, *v;
		bool is_changed = false;

		snprintf(line, sizeof(line), "%s", tu_line(csv, i));
		name = line;
		*strchr(line, ',') = '\0';
		v = strdup(field(csv, name, F_VERDICT));
		for (size_t k = 0; changed && changed[k]; k++)
			is_changed |= strcmp(changed[k], name) == 0;
		if (is_changed)
			cr_assert_str_eq(v, verdict, "%s: %s", name, csv);
		else
			cr_assert(strcmp(v, "same") == 0 || strcmp(v, "too few calls") == 0,
				  "%s is %s: %s", name, v, csv);
		free(v);
	}
}

/* ---------------------------------------------------------------------- */

Test(diff_runs, runs_of_one_build_flag_nothing)
{
	static const char *const opts[] = { "--format=csv",	 "--fail-on=p50:+5",
					    "--fail-on=p90:+5",	 "--fail-on=p99:+5",
					    "--fail-on=mean:+5", "--fail-on=total:+5", NULL };
	struct program p;
	struct tu_result r;

	make_program(&p);
	for (uint64_t seed = 1; seed <= 4; seed++) {
		write_sides(&p, &p, seed);
		r = diff_runs(opts);
		cr_assert_eq(r.status, 0, "seed %" PRIu64 ": %s%s", seed, r.out, r.err);
		cr_assert_str_eq(r.err, "");
		cr_assert_eq(tu_nr_lines(r.out), 101, "%s", r.out);
		assert_only_changed(r.out, NULL, NULL);
		cr_assert_str_eq(field(r.out, "fn000", 16), "5");
		cr_assert_str_eq(field(r.out, "fn000", 17), "5");
		tu_result_free(&r);
	}
}

Test(diff_runs, p50_plus_10_percent_of_a_1000_call_scope_is_found)
{
	static const char *const opts[] = { "--format=csv", "--fail-on=p50:+5", NULL };
	static const char *const changed[] = { "target", NULL };
	struct program base, next;
	struct tu_result r;

	make_program(&base);
	add_scope(&base, "target", 1, 1000, 20000, 0.2, 0, 1);
	next = base;
	next.s[base.n - 1].median_ns *= 1.10;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		write_sides(&base, &next, seed);
		r = diff_runs(opts);
		cr_assert_eq(r.status, 3, "seed %" PRIu64 ": %s%s", seed, r.out, r.err);
		assert_only_changed(r.out, changed, "slower");
		cr_assert_eq(tu_nr_lines(r.err), 1, "%s", r.err);
		cr_assert(starts_with(r.err, "tracetool: regression: target: p50 +"), "%s",
			  r.err);
		cr_assert(strstr(r.err, "(limit +5%; 95% interval +"), "%s", r.err);
		cr_assert(strstr(r.err, "; rule --fail-on=p50:+5; runs 5/5)\n"), "%s", r.err);
		/* The shown change is the runs' geometric means': near +10 %. */
		cr_assert(fabs(atof(field(r.out, "target", 8)) - 10) < 3, "%s", r.out);
		tu_result_free(&r);
	}
}

/* leaf runs on both threads; in NEW the worker's calls do 3x the work. */
Test(diff_runs, one_of_two_threads_3x_slower_is_found_and_by_thread_says_which)
{
	static const char *const opts[] = { "--format=csv", "--fail-on=p50:+10",
					    "--fail-on=p99:+10", "--fail-on=total:+10", NULL };
	static const char *const by_thread[] = { "--format=csv", "--by-thread",
						 "--fail-on=p50:+10", NULL };
	static const char *const changed[] = { "leaf", NULL };
	struct program base, next;
	struct tu_result r;
	size_t a, b;

	make_program(&base);
	a = add_scope(&base, "leaf", 1, 1500, 3000, 0.1, 0, 1);
	b = add_scope(&base, "leaf", 2, 1500, 3000, 0.1, 0, 1);
	next = base;
	next.s[b].median_ns *= 3;
	(void)a;
	write_sides(&base, &next, 7);
	r = diff_runs(opts);
	cr_assert_eq(r.status, 3, "%s%s", r.out, r.err);
	assert_only_changed(r.out, changed, "slower");
	cr_assert_str_eq(field(r.out, "leaf", 1), "3000"); /* both threads' calls */
	/* Half the calls 3x: p99 and the total rise, and so does p50 (it is
	 * the slowest of the fast half's now). Each rule that tripped, a line. */
	cr_assert(strstr(r.err, "tracetool: regression: leaf: p99 +"), "%s", r.err);
	cr_assert(strstr(r.err, "tracetool: regression: leaf: total +"), "%s", r.err);
	tu_result_free(&r);

	r = diff_runs(by_thread);
	cr_assert_eq(r.status, 3, "%s%s", r.out, r.err);
	cr_assert(starts_with(r.out, "thread,function,calls_base,"), "%s", r.out);
	cr_assert_str_eq(field(r.out, "worker,leaf", F_VERDICT + 1), "slower", "%s", r.out);
	cr_assert_str_eq(field(r.out, "main,leaf", F_VERDICT + 1), "same", "%s", r.out);
	cr_assert_str_eq(field(r.out, "worker,leaf", 2), "1500", "%s", r.out);
	cr_assert(fabs(atof(field(r.out, "worker,leaf", 9)) - 200) < 10, "%s", r.out);
	cr_assert(starts_with(r.err, "tracetool: regression: leaf [worker]: p50 +"), "%s",
		  r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1, "%s", r.err);
	tu_result_free(&r);
}

/* A ~10 ns function on a clock of 10 ns steps, 2x slower: its durations
 * are mostly 10 ns in BASE and 20 ns in NEW (ties everywhere). */
Test(diff_runs, a_2x_slowdown_of_a_10_ns_function_is_found)
{
	static const char *const opts[] = { "--format=csv", "--fail-on=p50:+5", NULL };
	static const char *const changed[] = { "tiny", NULL };
	struct program base, next;
	struct tu_result r;
	size_t k;

	make_program(&base);
	k = add_scope(&base, "tiny", 1, 5000, 11, 0.15, 0, 1);
	next = base;
	next.s[k].median_ns *= 2;
	write_sides(&base, &next, 3);
	r = diff_runs(opts);
	cr_assert_eq(r.status, 3, "%s%s", r.out, r.err);
	assert_only_changed(r.out, changed, "slower");
	cr_assert(starts_with(r.err, "tracetool: regression: tiny: p50 +"), "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1, "%s", r.err);
	tu_result_free(&r);

	/* The clock's step is the file's: info says so. */
	r = tu_run("info", path[0][0], NULL);
	cr_assert(strstr(r.out, "clock step:       10.0 ns (measured at start, 26 ticks)"), "%s",
		  r.out);
	tu_result_free(&r);
}

/* 2 % of the calls are slow (p99 is among them); in NEW they are 1.5x
 * slower, the other 98 % unchanged. */
Test(diff_runs, p99_plus_50_percent_with_p50_unchanged_is_found_at_p99)
{
	static const char *const p99[] = { "--format=csv", "--fail-on=p99:+10%", NULL };
	static const char *const p50[] = { "--format=csv", "--fail-on=p50:+5", "--fail-on=p90:+5",
					   NULL };
	static const char *const changed[] = { "tail", NULL };
	struct program base, next;
	struct tu_result r;
	size_t k;

	make_program(&base);
	k = add_scope(&base, "tail", 2, 5000, 50000, 0.1, 50, 4);
	next = base;
	next.s[k].tail_factor = 6;
	write_sides(&base, &next, 11);
	r = diff_runs(p99);
	cr_assert_eq(r.status, 3, "%s%s", r.out, r.err);
	assert_only_changed(r.out, changed, "slower");
	cr_assert(fabs(atof(field(r.out, "tail", 14)) - 50) < 10, "%s", r.out);
	cr_assert(fabs(atof(field(r.out, "tail", 8))) < 2, "%s", r.out);
	cr_assert(starts_with(r.err, "tracetool: regression: tail: p99 +"), "%s", r.err);
	cr_assert(strstr(r.err, "rule --fail-on=p99:+10%; runs 5/5)"), "%s", r.err);
	tu_result_free(&r);
	r = diff_runs(p50);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	tu_result_free(&r);
}

/* 33 calls a run have no p99 (nor p90): not judged, shown as such, and
 * --fail-on ignores them there, however large the change. */
Test(diff_runs, too_few_calls_for_a_quantile_are_not_judged_there)
{
	static const char *const p99[] = { "--format=csv", "--fail-on=p99:+10", NULL };
	static const char *const json[] = { "--format=json", "--function=^few$", NULL };
	static const char *const table[] = { "--function=^few$", NULL };
	struct program base, next;
	struct tu_result r;
	size_t k;

	base.n = 0;
	k = add_scope(&base, "few", 1, 33, 40000, 0.1, 11, 3);
	add_scope(&base, "one", 1, 1, 90000, 0.1, 0, 1);
	next = base;
	next.s[k].tail_factor = 9;
	write_sides(&base, &next, 5);
	r = diff_runs(p99);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert_str_eq(r.err, "");
	/* p50 is judged (and the same); p99 would be 3x, but it is not judged. */
	cr_assert_str_neq(field(r.out, "few", F_VERDICT), "too few calls", "%s", r.out);
	cr_assert(fabs(atof(field(r.out, "few", 8))) < 5, "%s", r.out);
	cr_assert_gt(atof(field(r.out, "few", 14)), 150, "%s", r.out);
	/* One call a run: no quantile, but the mean across runs is judged. */
	cr_assert_str_eq(field(r.out, "one", F_VERDICT), "same", "%s", r.out);
	tu_result_free(&r);
	r = diff_runs(json);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "\"p99_judged\":false"), "%s", r.out);
	cr_assert(strstr(r.out, "\"p50_judged\":true"), "%s", r.out);
	cr_assert(strstr(r.out, "\"run_to_run_noise\":true"), "%s", r.out);
	tu_result_free(&r);
	r = diff_runs(table);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "     few\n"), "%s", r.out);
	cr_assert(strstr(r.out, "runs: 5 base, 5 new;"), "%s", r.out);
	cr_assert(strstr(r.out, "  ±  "), "%s", r.out);
	tu_result_free(&r);
}

Test(diff_runs, command_line_of_several_runs)
{
	struct program p;
	struct tu_result r;
	char want[512];

	p.n = 0;
	add_scope(&p, "x", 1, 50, 1000, 0.1, 0, 1);
	for (int k = 0; k < 3; k++) {
		write_run(path[0][k], &p, 1 + (uint64_t)k);
		write_run(path[1][k], &p, 11 + (uint64_t)k);
	}
	/* -- with one run a side is one run a side. */
	r = tu_run("diff", "--format=csv", path[0][0], "--", path[1][0], NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, ",1,1\n"), "%s", r.out);
	tu_result_free(&r);
	/* Options before --; what follows -- is all NEW. */
	r = tu_run("diff", "--fail-on=p50:+10%", path[0][0], path[0][1], "--", path[1][0],
		   path[1][1], path[1][2], NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "runs: 2 base, 3 new"), "%s", r.out);
	tu_result_free(&r);
	/* A run given twice on one side is refused; BASE and NEW may be one file. */
	r = tu_run("diff", path[0][0], path[0][1], path[0][0], "--", path[1][0], path[1][1], NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1, "%s", r.err);
	snprintf(want, sizeof(want),
		 "tracetool: %s: the same file as %s: a run given twice would count twice\n",
		 path[0][0], path[0][0]);
	cr_assert_str_eq(r.err, want);
	tu_result_free(&r);
	r = tu_run("diff", "--format=csv", path[0][0], path[0][1], "--", path[0][1], path[0][0],
		   NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, ",same,2,2\n"), "%s", r.out);
	tu_result_free(&r);

	static const char *const bad[][4] = {
		{ "a", "--", NULL },	       /* no NEW */
		{ "--", "b", NULL },	       /* no BASE */
		{ "a", "b", "c", NULL },       /* three without -- */
		{ "--fail-on=p99:+10%%", "a", "b", NULL },
		{ "--fail-on=p99:10%", "a", "b", NULL },
		{ "--fail-on=p99:+%", "a", "b", NULL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[6] = { "diff" };

		for (size_t k = 0; k < 4 && bad[i][k]; k++)
			args[k + 1] = bad[i][k];
		r = tu_runv(args);
		cr_assert_eq(r.status, 2, "case %zu: exit %d %s", i, r.status, r.err);
		tu_result_free(&r);
	}
}
