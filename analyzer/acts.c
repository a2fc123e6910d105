/* SPDX-License-Identifier: MIT */
/*
 * acts.c - see acts.h. An EVENTS block is decoded when it is met and kept
 * pending until the next record shows whether a COUNTERS block annotates it
 * (FORMAT.md §3.14: it must be the very next record of the same frame);
 * then its events are paired one by one, by the rules of scopes.h. Every
 * record but that COUNTERS block flushes the pending block in the record
 * hook, before the walker handles the record (which may move tr->threads,
 * where the pending thread lives).
 */
#include "acts.h"
#include "emit.h"
#include "scopes.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH TT_MAX_DEPTH /* as scopes.c: deeper enters are errors */

struct aframe {
	uint32_t name;
	uint32_t in; /* inside the window */
	uint64_t enter;
	uint32_t ctr_mask; /* counters valid at the enter */
};

struct adepth {
	uint32_t open, in;
};

struct athread {
	struct aframe *stack; /* frames 1..sp; stack[0] is a sentinel */
	uint64_t *ctr;	      /* TT_MAX_COUNTERS values per frame, when has_ctr */
	uint32_t sp, cap;
	uint32_t overflow;
	struct adepth *depth;
	uint32_t nr_depth;
	bool has_ctr;
	uint32_t nr_cols; /* columns of the thread's COUNTER_SET */
	uint32_t col_ctr[TT_MAX_COUNTERS];
};

static void record_hook(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
			uint64_t frame_index, uint64_t frame_offset);

void tt_acts_init(struct tt_acts *a, struct tt_trace *tr)
{
	memset(a, 0, sizeof(*a));
	a->tr = tr;
	a->win_span_ticks = UINT64_MAX;
	a->max_dur_ticks = UINT64_MAX;
	tr->on_record = record_hook;
	tr->record_ctx = a;
}

static struct athread *thread_state(struct tt_thread *th)
{
	struct athread *t = th->user;

	if (t)
		return t;
	t = tt_xrealloc(NULL, sizeof(*t));
	memset(t, 0, sizeof(*t));
	t->cap = 64;
	t->stack = tt_xrealloc(NULL, (t->cap + 1) * sizeof(*t->stack));
	memset(&t->stack[0], 0, sizeof(t->stack[0]));
	t->stack[0].name = UINT32_MAX;
	th->user = t;
	return t;
}

static uint32_t counter_index(struct tt_acts *a, const char *name, uint32_t bytes)
{
	/* The name as reports show it (emit.c: a NUL, a control character or
	 * ill-formed UTF-8 becomes U+FFFD), so that names shown alike are one. */
	char *shown = tt_emit_clean(name, bytes);

	for (uint32_t g = 0; g < a->nr_ctr; g++)
		if (strcmp(a->ctr_names[g], shown) == 0) {
			free(shown);
			return g;
		}
	if (a->nr_ctr == TT_MAX_COUNTERS) {
		free(shown);
		return UINT32_MAX;
	}
	a->ctr_names[a->nr_ctr] = shown;
	return a->nr_ctr++;
}

static void error(struct tt_acts *a, const struct tt_thread *th, uint32_t name)
{
	if (a->on_error)
		a->on_error(a->ctx, th, name);
}

static void cover(struct athread *t, uint32_t nr_names)
{
	if (t->nr_depth < nr_names) {
		uint32_t n = t->nr_depth ? t->nr_depth : 64;

		while (n < nr_names)
			n *= 2;
		t->depth = tt_xrealloc(t->depth, n * sizeof(*t->depth));
		memset(t->depth + t->nr_depth, 0, (n - t->nr_depth) * sizeof(*t->depth));
		t->nr_depth = n;
	}
}

static void drop_top(struct tt_acts *a, struct athread *t, const struct tt_thread *th)
{
	struct aframe *f = &t->stack[t->sp--];

	t->depth[f->name].open--;
	if (f->in) {
		t->depth[f->name].in--;
		error(a, th, f->name);
	}
}

/* One event, by the rules of scopes.h (event_slow() there). */
static void event(struct tt_acts *a, struct athread *t, const struct tt_thread *th, uint32_t name,
		  uint64_t ticks, bool is_exit, uint32_t mask, const uint64_t *vals)
{
	const bool in_window = a->win_span_ticks == UINT64_MAX ||
			       ticks - a->win_lo_ticks < a->win_span_ticks;
	uint64_t delta[TT_MAX_COUNTERS];
	struct aframe *f;
	struct tt_act act;

	if (!is_exit) {
		/* As scopes.c: stored up to tt_depth_limit() when growing. */
		const uint32_t limit = t->sp + 1 > t->cap ? tt_depth_limit(a->tr->nr_threads) : 0;

		if (t->sp == MAX_DEPTH || t->overflow || (limit && t->sp + 1 > limit)) {
			t->overflow++;
			if (in_window)
				error(a, th, name);
			return;
		}
		if (t->sp + 1 > t->cap) {
			t->cap = t->cap * 2 > limit ? limit : t->cap * 2;
			t->stack = tt_xrealloc(t->stack, ((size_t)t->cap + 1) * sizeof(*t->stack));
			if (t->has_ctr)
				t->ctr = tt_xrealloc(t->ctr, ((size_t)t->cap + 1) * TT_MAX_COUNTERS *
								  sizeof(*t->ctr));
		}
		f = &t->stack[++t->sp];
		f->name = name;
		f->in = in_window;
		f->enter = ticks;
		f->ctr_mask = t->has_ctr ? mask : 0;
		if (f->ctr_mask)
			memcpy(&t->ctr[(size_t)t->sp * TT_MAX_COUNTERS], vals,
			       TT_MAX_COUNTERS * sizeof(*vals));
		t->depth[name].open++;
		t->depth[name].in += f->in;
		return;
	}
	if (t->overflow) {
		t->overflow--;
		return;
	}
	if (t->stack[t->sp].name != name) {
		if (!t->depth[name].open) {
			if (in_window)
				error(a, th, name);
			return;
		}
		while (t->stack[t->sp].name != name)
			drop_top(a, t, th);
	}
	f = &t->stack[t->sp--];
	t->depth[name].open--;
	if (!f->in)
		return;
	if (ticks < f->enter || ticks - f->enter > a->max_dur_ticks) {
		/* Clock backwards, or longer than --max-duration: an error. */
		t->depth[name].in--;
		error(a, th, name);
		return;
	}
	act.th = th;
	act.name = name;
	act.enter_ticks = f->enter;
	act.exit_ticks = ticks;
	act.outermost = --t->depth[name].in == 0;
	act.ctr_mask = f->ctr_mask & mask;
	act.delta = delta;
	if (act.ctr_mask) {
		const uint64_t *at = &t->ctr[(size_t)(t->sp + 1) * TT_MAX_COUNTERS];

		for (uint32_t g = 0; g < TT_MAX_COUNTERS; g++) {
			delta[g] = vals[g] - at[g];
			/* A counter going down is no count: leave it out. */
			if (vals[g] < at[g])
				act.ctr_mask &= ~(1u << g);
		}
	}
	a->on_act(a->ctx, &act);
}

/* Pairs the pending block, with its counter values if vals is set. */
static void flush(struct tt_acts *a, const uint64_t *cols)
{
	struct tt_thread *th = a->pend_th;
	struct athread *t;
	uint64_t vals[TT_MAX_COUNTERS] = { 0 };
	uint32_t mask = 0;

	if (!th)
		return;
	a->pend_th = NULL;
	a->pend_next = false;
	t = thread_state(th);
	if (cols) {
		for (uint32_t c = 0; c < t->nr_cols; c++)
			if (t->col_ctr[c] != UINT32_MAX)
				mask |= 1u << t->col_ctr[c];
		if (mask && !t->has_ctr) {
			t->has_ctr = true;
			t->ctr = tt_xrealloc(t->ctr, ((size_t)t->cap + 1) * TT_MAX_COUNTERS *
							  sizeof(*t->ctr));
		}
	}
	for (uint32_t i = 0; i < a->pend_n; i++) {
		uint32_t site = a->pend_codes[i] >> 1, name = tt_trace_site_name(a->tr, site);

		cover(t, a->tr->nr_names);
		if (mask)
			for (uint32_t c = 0; c < t->nr_cols; c++)
				if (t->col_ctr[c] != UINT32_MAX)
					vals[t->col_ctr[c]] = cols[(size_t)c * a->pend_n + i];
		event(a, t, th, name, a->pend_ticks[i], a->pend_codes[i] & 1, mask, vals);
	}
}

int tt_acts_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		  struct recfmt_events_iter *it)
{
	struct tt_acts *a = ctx;
	int n, rc = 0;

	(void)tr;
	flush(a, NULL);
	if (it->nr_events > a->pend_cap || !a->pend_ticks) {
		/* Never NULL, even for a block of 0 events (found by fuzzing:
		 * NULL + 0 is undefined). */
		a->pend_cap = it->nr_events > 64 ? it->nr_events : 64;
		a->pend_ticks = tt_xrealloc(a->pend_ticks, a->pend_cap * sizeof(*a->pend_ticks));
		a->pend_codes = tt_xrealloc(a->pend_codes, a->pend_cap * sizeof(*a->pend_codes));
	}
	a->pend_n = 0;
	while ((n = recfmt_events_decode_batch(it, a->pend_ticks + a->pend_n,
					       a->pend_codes + a->pend_n,
					       it->nr_events - a->pend_n)) > 0)
		a->pend_n += (uint32_t)n;
	if (n < 0 || !recfmt_events_check_end(it))
		rc = -1; /* the events before the damage still count */
	a->pend_th = th;
	/* A damaged block's counters cannot be matched to its events. */
	a->pend_next = rc == 0;
	return rc;
}

static void record_hook(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
			uint64_t frame_index, uint64_t frame_offset)
{
	struct tt_acts *a = ctx;

	(void)frame_offset;
	struct recfmt_error err = { 0 };

	if (rec->type == RECFMT_EVENTS) {
		/* Flush now, before the walker looks the block's thread up: that
		 * may grow tr->threads and move the pending block's thread.
		 * tt_acts_block() follows and keeps the new block pending. */
		flush(a, NULL);
		a->pend_frame = frame_index;
		return;
	}
	if (rec->type == RECFMT_COUNTERS) {
		struct recfmt_counters cb;
		struct athread *t;

		if (!a->pend_th || !a->pend_next || a->pend_frame != frame_index ||
		    recfmt_counters_open(rec, &cb, &err) != RECFMT_OK ||
		    cb.thread != a->pend_th->serial || cb.nr_events != a->pend_n) {
			a->nr_bad_counters++;
			flush(a, NULL);
			return;
		}
		t = thread_state(a->pend_th);
		if (cb.nr_columns != t->nr_cols) {
			a->nr_bad_counters++; /* no COUNTER_SET that fits: unnamed */
			flush(a, NULL);
			return;
		}
		if ((size_t)cb.nr_events * cb.nr_columns > a->vals_cap) {
			a->vals_cap = (size_t)cb.nr_events * cb.nr_columns;
			a->vals = tt_xrealloc(a->vals, a->vals_cap * sizeof(*a->vals));
		}
		if (recfmt_counters_decode(&cb, a->vals, rec, &err) != RECFMT_OK) {
			a->nr_bad_counters++;
			flush(a, NULL);
			return;
		}
		flush(a, a->vals);
		return;
	}
	flush(a, NULL);
	if (rec->type == RECFMT_COUNTER_SET) {
		struct recfmt_counter_set cs;
		struct athread *t;
		uint32_t col = 0;

		if (recfmt_decode_counter_set(rec, &cs, &err) != RECFMT_OK) {
			a->nr_bad_counters++;
			return;
		}
		t = thread_state(tt_trace_thread(tr, cs.thread));
		for (uint32_t i = 0; i < cs.nr; i++)
			if (cs.c[i].flags & RECFMT_COUNTER_RECORDED)
				t->col_ctr[col++] =
					counter_index(a, cs.c[i].name, cs.c[i].name_bytes);
		t->nr_cols = col;
	}
}

void tt_acts_finish(struct tt_acts *a)
{
	struct tt_trace *tr = a->tr;

	flush(a, NULL);
	for (uint32_t i = 0; i < tr->nr_threads; i++) {
		struct athread *t = tr->threads[i].user;

		if (!t)
			continue;
		while (t->sp)
			drop_top(a, t, &tr->threads[i]);
	}
}

void tt_acts_fini(struct tt_acts *a)
{
	struct tt_trace *tr = a->tr;

	for (uint32_t i = 0; tr && i < tr->nr_threads; i++) {
		struct athread *t = tr->threads[i].user;

		if (!t)
			continue;
		free(t->stack);
		free(t->ctr);
		free(t->depth);
		free(t);
		tr->threads[i].user = NULL;
	}
	for (uint32_t g = 0; g < a->nr_ctr; g++)
		free(a->ctr_names[g]);
	free(a->pend_ticks);
	free(a->pend_codes);
	free(a->vals);
	if (tr) {
		tr->on_record = NULL;
		tr->record_ctx = NULL;
	}
	memset(a, 0, sizeof(*a));
}
