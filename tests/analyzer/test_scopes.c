/* SPDX-License-Identifier: MIT */
/*
 * test_scopes.c - analyzer/engine/scopes.c called directly: traces written by
 * tracegen (monotonic clock, 1 tick = 1 ns) are walked with tt_trace_walk()
 * and tt_scopes_block(), and the per-name statistics are compared with exact
 * expectations: pairing, recursion counted once in the total, self time,
 * unmatched enters and exits, a clock going backwards, deep stacks (beyond
 * the stored depth too), time windows, and random event streams against a
 * plain reference model of the rules in scopes.h.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/events.h"
#include "engine/scopes.h"
#include "testutil.h"
#include "tracegen.h"

TestSuite(scopes, .timeout = 120);

struct walk {
	struct tt_trace tr;
	struct tt_scopes sc;
	char path[128];
};

static struct tg_trace *open_trace(struct walk *w, uint32_t block_events)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 0, .pid = 1,
				 .block_events = block_events };
	struct tg_trace *t;

	snprintf(w->path, sizeof(w->path), "%s", tu_path(0, "scopes.zst"));
	t = tg_create(w->path, &cfg);
	cr_assert(t);
	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_site(t, 3, "h");
	tg_site(t, 4, "f"); /* a second site of the name f: one scope */
	tg_thread(t, 1, 100, "main");
	return t;
}

/* Closes the trace and runs scopes over it, with an optional window. */
static void analyse(struct walk *w, struct tg_trace *t, uint64_t lo, uint64_t span)
{
	char msg[256];

	cr_assert_eq(tg_finish(t, true), 0);
	tt_trace_init(&w->tr, w->path);
	tt_scopes_init(&w->sc, &w->tr);
	w->sc.win_lo_ticks = lo;
	w->sc.win_span_ticks = span;
	cr_assert_eq(tt_trace_walk(&w->tr, tt_scopes_block, &w->sc, msg, sizeof(msg)), TT_OK,
		     "%s", msg);
	cr_assert_eq(w->tr.nr_bad_blocks, 0);
	tt_scopes_finish(&w->sc);
	unlink(w->path);
}

static const struct tt_stat *stat_of(struct walk *w, const char *name)
{
	/* tg_site() puts every site at gen.c:1: the scope's key (events.h). */
	uint32_t n = tt_trace_intern_site(&w->tr, name, strlen(name), "gen.c:1", 7);

	tt_stats_reserve(&w->sc.global, n + 1);
	return &w->sc.global.v[n];
}

static void done(struct walk *w)
{
	tt_scopes_fini(&w->sc);
	tt_trace_fini(&w->tr);
}

#define EXPECT(w, name, calls_, total_, self_, min_, max_, errors_)                         \
	do {                                                                                \
		const struct tt_stat *s_ = stat_of(w, name);                                \
		cr_assert_eq(s_->calls, calls_, "%s calls %lu", name, s_->calls);          \
		cr_assert_eq(s_->total_ticks, total_, "%s total %lu", name, s_->total_ticks); \
		cr_assert_eq(s_->self_ticks, self_, "%s self %lu", name, s_->self_ticks);   \
		if (calls_) {                                                               \
			cr_assert_eq(s_->min_ticks, min_, "%s min %lu", name, s_->min_ticks); \
			cr_assert_eq(s_->max_ticks, max_, "%s max %lu", name, s_->max_ticks); \
		}                                                                           \
		cr_assert_eq(s_->errors, errors_, "%s errors %lu", name, s_->errors);      \
	} while (0)

Test(scopes, nested_scopes_pair_with_exact_inclusive_and_self_time)
{
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	tg_enter(t, 1, 1, 1000); /* f [1000, 1100) */
	tg_enter(t, 1, 2, 1010); /*   g [1010, 1030) */
	tg_exit(t, 1, 2, 1030);
	tg_enter(t, 1, 2, 1040); /*   g [1040, 1070) with h inside */
	tg_enter(t, 1, 3, 1045);
	tg_exit(t, 1, 3, 1050);
	tg_exit(t, 1, 2, 1070);
	tg_exit(t, 1, 1, 1100);
	analyse(&w, t, 0, UINT64_MAX);
	EXPECT(&w, "f", 1, 100, 50, 100, 100, 0);
	EXPECT(&w, "g", 2, 50, 45, 20, 30, 0);
	EXPECT(&w, "h", 1, 5, 5, 5, 5, 0);
	cr_assert_eq(w.sc.nr_unmatched, 0);
	done(&w);
}

Test(scopes, recursion_counts_every_call_and_the_outermost_total_once)
{
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	/* f(10) > f(20) > f(30): exits at 40, 60, 100. Site 4 is also "f". */
	tg_enter(t, 1, 1, 10);
	tg_enter(t, 1, 4, 20);
	tg_enter(t, 1, 1, 30);
	tg_exit(t, 1, 1, 40);
	tg_exit(t, 1, 4, 60);
	tg_exit(t, 1, 1, 100);
	analyse(&w, t, 0, UINT64_MAX);
	/* Durations 10, 40, 90; self 10, 30, 50. */
	EXPECT(&w, "f", 3, 90, 90, 10, 90, 0);
	cr_assert_eq(stat_of(&w, "f")->sum_ticks, 140);
	done(&w);
}

Test(scopes, exit_without_enter_is_one_error_and_changes_nothing_else)
{
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	tg_exit(t, 1, 2, 5); /* g exits, never entered */
	tg_enter(t, 1, 1, 10);
	tg_exit(t, 1, 3, 15); /* h exits inside f, never entered */
	tg_exit(t, 1, 1, 30);
	analyse(&w, t, 0, UINT64_MAX);
	EXPECT(&w, "f", 1, 20, 20, 20, 20, 0);
	EXPECT(&w, "g", 0, 0, 0, 0, 0, 1);
	EXPECT(&w, "h", 0, 0, 0, 0, 0, 1);
	cr_assert_eq(w.sc.nr_unmatched, 2);
	done(&w);
}

Test(scopes, enters_still_open_at_the_end_are_errors)
{
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	tg_enter(t, 1, 1, 10);
	tg_enter(t, 1, 2, 20);
	tg_exit(t, 1, 2, 25);
	tg_enter(t, 1, 3, 30);
	analyse(&w, t, 0, UINT64_MAX);
	EXPECT(&w, "f", 0, 0, 0, 0, 0, 1);
	EXPECT(&w, "g", 1, 5, 5, 5, 5, 0);
	EXPECT(&w, "h", 0, 0, 0, 0, 0, 1);
	done(&w);
}

Test(scopes, exit_of_an_outer_scope_drops_the_inner_enters_and_keeps_their_childrens_time)
{
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	tg_enter(t, 1, 1, 0);	/* f [0, 100) */
	tg_enter(t, 1, 2, 10);	/*   g entered, never exits */
	tg_enter(t, 1, 3, 20);	/*     h [20, 50) */
	tg_exit(t, 1, 3, 50);
	tg_exit(t, 1, 1, 100);	/* closes f: g is unmatched */
	analyse(&w, t, 0, UINT64_MAX);
	/* h's 30 ticks are handed down from g to f: f's self is 70. */
	EXPECT(&w, "f", 1, 100, 70, 100, 100, 0);
	EXPECT(&w, "g", 0, 0, 0, 0, 0, 1);
	EXPECT(&w, "h", 1, 30, 30, 30, 30, 0);
	done(&w);
}

Test(scopes, clock_going_backwards_is_an_error_and_not_timed)
{
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	tg_enter(t, 1, 1, 1000);
	tg_enter(t, 1, 2, 1100);
	tg_exit(t, 1, 2, 1050); /* before its enter */
	tg_exit(t, 1, 1, 1200);
	tg_enter(t, 1, 2, 1300);
	tg_exit(t, 1, 2, 1310);
	analyse(&w, t, 0, UINT64_MAX);
	/* The backwards g is no child time of f. */
	EXPECT(&w, "f", 1, 200, 200, 200, 200, 0);
	EXPECT(&w, "g", 1, 10, 10, 10, 10, 1);
	done(&w);
}

Test(scopes, a_deep_stack_is_timed_at_every_level_across_blocks)
{
	enum { DEPTH = 300000 };
	struct walk w;
	struct tg_trace *t = open_trace(&w, 1000);

	for (uint64_t i = 0; i < DEPTH; i++)
		tg_enter(t, 1, 1 + (i & 1), 10 * i);
	for (uint64_t i = 0; i < DEPTH; i++)
		tg_exit(t, 1, 1 + ((DEPTH - 1 - i) & 1), 10 * DEPTH + i);
	analyse(&w, t, 0, UINT64_MAX);
	/*
	 * Level i (0-based) runs from 10 i to 10 DEPTH + (DEPTH - 1 - i).
	 * f is the even levels, g the odd ones; each level's self time is its
	 * duration minus the next level's.
	 */
	const struct tt_stat *f = stat_of(&w, "f"), *g = stat_of(&w, "g");
	uint64_t dur0 = 10ull * DEPTH + DEPTH - 1, last = 10ull * DEPTH + 0 - 10ull * (DEPTH - 1);
	cr_assert_eq(f->calls, DEPTH / 2);
	cr_assert_eq(g->calls, DEPTH / 2);
	cr_assert_eq(f->total_ticks, dur0);
	cr_assert_eq(g->total_ticks, dur0 - 11);
	cr_assert_eq(f->max_ticks, dur0);
	cr_assert_eq(g->min_ticks, last);
	cr_assert_eq(f->self_ticks + g->self_ticks, dur0);
	cr_assert_eq(f->errors + g->errors, 0);
	done(&w);
}

Test(scopes, enters_beyond_the_stored_depth_are_errors_and_their_exits_are_consumed)
{
	enum { DEPTH = (1 << 20) + 5 };
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	for (uint64_t i = 0; i < DEPTH; i++)
		tg_enter(t, 1, 1, i);
	for (uint64_t i = 0; i < DEPTH; i++)
		tg_exit(t, 1, 1, DEPTH + i);
	tg_enter(t, 1, 2, 3 * (uint64_t)DEPTH);
	tg_exit(t, 1, 2, 3 * (uint64_t)DEPTH + 7);
	analyse(&w, t, 0, UINT64_MAX);
	/* The outermost 2^20 are timed; the 5 deepest are errors. */
	const struct tt_stat *f = stat_of(&w, "f");
	cr_assert_eq(f->calls, 1u << 20);
	cr_assert_eq(f->errors, 5);
	cr_assert_eq(f->total_ticks, 2ull * DEPTH - 1);
	EXPECT(&w, "g", 1, 7, 7, 7, 7, 0);
	done(&w);
}

Test(scopes, window_keeps_activations_that_start_inside_it)
{
	struct walk w;
	struct tg_trace *t = open_trace(&w, 0);

	tg_enter(t, 1, 1, 0); /* f [0, 100): starts before the window */
	tg_enter(t, 1, 2, 10); /* g [10, 20): inside */
	tg_exit(t, 1, 2, 20);
	tg_enter(t, 1, 2, 30); /* g [30, 45): inside */
	tg_exit(t, 1, 2, 45);
	tg_exit(t, 1, 1, 100);
	tg_exit(t, 1, 3, 12); /* an unmatched exit belongs by its own time */
	tg_exit(t, 1, 3, 50);
	analyse(&w, t, 10, 30); /* [10, 40) */
	EXPECT(&w, "f", 0, 0, 0, 0, 0, 0);
	EXPECT(&w, "g", 2, 25, 25, 10, 15, 0);
	EXPECT(&w, "h", 0, 0, 0, 0, 0, 1);
	done(&w);
}

/* ------------------------------------------------------------------
 * A plain reference model of scopes.h's rules, one event at a time.
 */
#define NAMES 3
struct ref {
	struct { uint32_t name; uint64_t enter, child, same; } stack[4096];
	uint32_t sp;
	uint32_t open[NAMES];
	uint64_t calls[NAMES], total[NAMES], self[NAMES], sum[NAMES], min[NAMES], max[NAMES],
		errors[NAMES];
};

/*
 * Time of activations of a name nested in an enclosing one of the same name
 * is covered by it (not in total) while it closes normally; if it is
 * dropped (left without an exit, or open at the end), that time goes to the
 * next enclosing one of the name, or to the total.
 */
static void ref_uncover(struct ref *r, uint32_t below, uint32_t name, uint64_t ticks)
{
	for (uint32_t k = below; k-- > 0;)
		if (r->stack[k].name == name) {
			r->stack[k].same += ticks;
			return;
		}
	r->total[name] += ticks;
}

static void ref_drop_top(struct ref *r)
{
	r->sp--;
	r->open[r->stack[r->sp].name]--;
	r->errors[r->stack[r->sp].name]++;
	if (r->sp)
		r->stack[r->sp - 1].child += r->stack[r->sp].child;
	ref_uncover(r, r->sp, r->stack[r->sp].name, r->stack[r->sp].same);
}

static void ref_event(struct ref *r, uint32_t name, bool is_exit, uint64_t t)
{
	if (!is_exit) {
		r->stack[r->sp].name = name;
		r->stack[r->sp].enter = t;
		r->stack[r->sp].same = 0;
		r->stack[r->sp++].child = 0;
		r->open[name]++;
		return;
	}
	if (!r->open[name]) {
		r->errors[name]++;
		return;
	}
	while (r->stack[r->sp - 1].name != name)
		ref_drop_top(r);
	r->sp--;
	r->open[name]--;
	if (t < r->stack[r->sp].enter) {
		r->errors[name]++;
		return;
	}
	uint64_t dur = t - r->stack[r->sp].enter, child = r->stack[r->sp].child;
	if (r->sp)
		r->stack[r->sp - 1].child += dur;
	r->calls[name]++;
	r->sum[name] += dur;
	r->self[name] += dur > child ? dur - child : 0;
	ref_uncover(r, r->sp, name, dur);
	if (dur < r->min[name])
		r->min[name] = dur;
	if (dur > r->max[name])
		r->max[name] = dur;
}

static void random_stream_matches_the_reference(uint64_t seed, unsigned odd_per_mille)
{
	static const char *const names[NAMES] = { "f", "g", "h" };
	struct ref *r = calloc(1, sizeof(*r));
	struct walk w;
	struct tg_trace *tg = open_trace(&w, 700);
	uint32_t open_names[4096], depth = 0;
	uint64_t now = 1000;

	for (int k = 0; k < NAMES; k++)
		r->min[k] = UINT64_MAX;
	for (int i = 0; i < 200000; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		uint32_t name = (uint32_t)((seed >> 20) % NAMES);
		bool odd = (seed >> 40) % 1000 < odd_per_mille;
		bool is_exit = depth == 4000 || (depth && (seed & 1));
		uint64_t ts = now += (seed >> 50) % 100;

		if (odd) {
			/* Damage: a random exit, or a clock step backwards. */
			if ((seed >> 8) & 1)
				ts = now - (seed >> 52) % 50, now = ts + 1000;
			is_exit = true;
		} else if (is_exit) {
			name = open_names[depth - 1];
		}
		if (!odd && !is_exit)
			open_names[depth++] = name;
		else if (!odd)
			depth--;
		/* Sites 1 and 4 are both "f". */
		uint32_t site = name == 0 && (seed >> 30 & 1) ? 4 : name + 1;
		if (is_exit)
			tg_exit(tg, 1, site, ts);
		else
			tg_enter(tg, 1, site, ts);
		ref_event(r, name, is_exit, ts);
		if (odd) {
			/* Resynchronise the generator with the model's stack. */
			depth = r->sp;
			for (uint32_t k = 0; k < depth; k++)
				open_names[k] = r->stack[k].name;
		}
	}
	analyse(&w, tg, 0, UINT64_MAX);
	while (r->sp)
		ref_drop_top(r); /* open at the end */
	for (int k = 0; k < NAMES; k++) {
		const struct tt_stat *s = stat_of(&w, names[k]);

		cr_assert_eq(s->calls, r->calls[k], "%s", names[k]);
		cr_assert_eq(s->total_ticks, r->total[k], "%s", names[k]);
		cr_assert_eq(s->self_ticks, r->self[k], "%s", names[k]);
		cr_assert_eq(s->sum_ticks, r->sum[k], "%s", names[k]);
		cr_assert_eq(s->errors, r->errors[k], "%s", names[k]);
		if (r->calls[k]) {
			cr_assert_eq(s->min_ticks, r->min[k], "%s", names[k]);
			cr_assert_eq(s->max_ticks, r->max[k], "%s", names[k]);
		}
	}
	done(&w);
	free(r);
}

Test(scopes, random_well_nested_stream_matches_the_reference_model)
{
	random_stream_matches_the_reference(0x9e3779b97f4a7c15ull, 0);
}

Test(scopes, random_damaged_stream_matches_the_reference_model)
{
	random_stream_matches_the_reference(0x2545f4914f6cdd1dull, 20);
}
