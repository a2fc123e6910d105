/* SPDX-License-Identifier: MIT */
/*
 * intervals.c - see intervals.h. Boundaries are ticks: interval k starts
 * at the first tick at or after k * DUR from time zero (tt_clock_abs_ticks),
 * so an activation's ticks are split exactly, with nothing lost or counted
 * twice; nanoseconds come at the end, from cumulative sums. Only intervals
 * that hold a row cost memory; a run that would build more rows than
 * row_limit() allows (intervals.h: a hostile or damaged file's absurd
 * activation, or a DUR far too short) stops with a message instead of
 * filling memory.
 */
#include "intervals.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "xalloc.h"

struct iv_cell {
	uint32_t thread, name; /* thread index + 1; 0: empty */
	uint64_t k;
	uint64_t ticks, calls;
};

static size_t cell_hash(uint32_t thread, uint32_t name, uint64_t k)
{
	uint64_t h = ((uint64_t)thread << 32 | name) * 0x9e3779b97f4a7c15ull ^
		     k * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 29));
}

/* intervals.h: rows follow the activations seen, not the span claimed. */
static uint64_t row_limit(const struct tt_intervals *iv)
{
	uint64_t n = TT_INTERVAL_ROWS_BASE;

	if (iv->nr_acts < (TT_MAX_INTERVAL_ROWS - n) / TT_INTERVAL_ROWS_PER_ACT)
		return n + iv->nr_acts * TT_INTERVAL_ROWS_PER_ACT;
	return TT_MAX_INTERVAL_ROWS;
}

static struct iv_cell *cell(struct tt_intervals *iv, uint32_t thread, uint32_t name, uint64_t k)
{
	static struct iv_cell spare; /* where counts go once there are too many rows */
	size_t i;

	if (iv->nr_cells >= row_limit(iv)) {
		iv->too_many = true;
		return &spare;
	}
	if ((iv->nr_cells + 1) * 2 > iv->cap_cells) {
		struct iv_cell *old = iv->cells;
		size_t old_cap = iv->cap_cells;

		iv->cap_cells = old_cap ? 2 * old_cap : 1024;
		iv->cells = calloc(iv->cap_cells, sizeof(*iv->cells));
		if (!iv->cells)
			tt_oom();
		for (size_t j = 0; j < old_cap; j++) {
			if (!old[j].thread)
				continue;
			for (i = cell_hash(old[j].thread, old[j].name, old[j].k) & (iv->cap_cells - 1);
			     iv->cells[i].thread; i = (i + 1) & (iv->cap_cells - 1))
				;
			iv->cells[i] = old[j];
		}
		free(old);
	}
	thread++;
	for (i = cell_hash(thread, name, k) & (iv->cap_cells - 1); iv->cells[i].thread;
	     i = (i + 1) & (iv->cap_cells - 1)) {
		struct iv_cell *c = &iv->cells[i];

		if (c->thread == thread && c->name == name && c->k == k)
			return c;
	}
	iv->nr_cells++;
	iv->cells[i] = (struct iv_cell){ thread, name, k, 0, 0 };
	return &iv->cells[i];
}

/*
 * The interval holding tick t: k with bounds(k) <= t < bounds(k + 1), where
 * bounds(k) = tt_clock_abs_ticks(k * DUR) is the first tick whose time is
 * at least k * DUR; that is floor(time(t) / DUR). Ticks before time zero
 * belong to interval 0.
 */
static uint64_t interval_of(const struct tt_intervals *iv, uint64_t t)
{
	int64_t ns = tt_clock_rel_ns(&iv->clock, t);

	return ns > 0 ? (uint64_t)ns / iv->interval_ns : 0;
}

static uint64_t bound(const struct tt_intervals *iv, uint64_t k)
{
	if (k > UINT64_MAX / iv->interval_ns)
		return UINT64_MAX;
	return tt_clock_abs_ticks(&iv->clock, k * iv->interval_ns);
}

static void on_act(void *ctx, const struct tt_act *a)
{
	struct tt_intervals *iv = ctx;
	uint32_t th = (uint32_t)(a->th - iv->tr.threads);
	uint64_t k0 = interval_of(iv, a->enter_ticks), k1, from = a->enter_ticks;

	if (iv->too_many)
		return;
	iv->nr_acts++;
	cell(iv, th, a->name, k0)->calls++;
	if (!a->outermost)
		return; /* its time is inside the outermost activation's */
	k1 = interval_of(iv, a->exit_ticks);
	if (k1 - k0 >= row_limit(iv)) {
		iv->too_many = true;
		return;
	}
	for (uint64_t k = k0; k <= k1 && !iv->too_many; k++) {
		uint64_t to = k == k1 ? a->exit_ticks : bound(iv, k + 1);

		if (to > a->exit_ticks)
			to = a->exit_ticks;
		if (to > from)
			cell(iv, th, a->name, k)->ticks += to - from;
		from = to > from ? to : from;
	}
}

static enum tt_sort sort_key;

static int cmp_cells(const void *pa, const void *pb)
{
	const struct iv_cell *a = pa, *b = pb;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tt_interval_row *a = pa, *b = pb;

	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (sort_key == TT_SORT_CALLS && a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	if (sort_key != TT_SORT_NAME && sort_key != TT_SORT_CALLS && a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

enum tt_status tt_intervals_run(struct tt_intervals *iv, const struct tt_options *o, char *msg,
				size_t msg_bytes)
{
	enum tt_status st;
	struct iv_cell *cells;
	size_t n = 0;

	memset(iv, 0, sizeof(*iv));
	iv->interval_ns = o->interval_ns;
	tt_trace_init(&iv->meta, o->trace);
	tt_trace_init(&iv->tr, o->trace);
	st = tt_trace_walk(&iv->meta, NULL, NULL, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	tt_trace_clock(&iv->meta, &iv->clock);
	tt_acts_init(&iv->acts, &iv->tr);
	tt_report_window(o, &iv->clock, &iv->acts.win_lo_ticks, &iv->acts.win_span_ticks);
	iv->acts.max_dur_ticks = tt_options_max_dur_ticks(o, &iv->clock);
	iv->acts.on_act = on_act;
	iv->acts.ctx = iv;
	st = tt_trace_walk(&iv->tr, tt_acts_block, &iv->acts, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	tt_acts_finish(&iv->acts);
	if (iv->too_many) {
		snprintf(msg, msg_bytes,
			 "--interval: more than %" PRIu64 " rows of interval, thread and scope "
			 "for %" PRIu64 " activations; choose a longer interval",
			 row_limit(iv), iv->nr_acts);
		return TT_ERR_FILE;
	}
	tt_trace_problems(&iv->tr, iv->problems, sizeof(iv->problems));

	/* Per thread and name, in interval order: cumulative rounding. */
	cells = tt_xrealloc(NULL, iv->nr_cells * sizeof(*cells));
	for (size_t i = 0; i < iv->cap_cells; i++)
		if (iv->cells[i].thread)
			cells[n++] = iv->cells[i];
	qsort(cells, n, sizeof(*cells), cmp_cells);
	iv->rows = tt_xrealloc(NULL, n * sizeof(*iv->rows));
	iv->labels = tt_xrealloc(NULL, (iv->tr.nr_threads + 1) * sizeof(*iv->labels));
	for (uint32_t t = 0; t < iv->tr.nr_threads; t++) {
		char buf[4200];

		tt_thread_label(&iv->tr.threads[t], buf, sizeof(buf));
		iv->labels[t] = strdup(buf);
		if (!iv->labels[t])
			tt_oom();
	}
	for (size_t i = 0, j; i < n; i = j) {
		const struct tt_thread *th = &iv->tr.threads[cells[i].thread - 1];
		const char *name = iv->tr.names[cells[i].name];
		bool keep = tt_options_thread_selected(o, th) &&
			    tt_options_function_selected(o, name);
		uint64_t cum = 0, prev_ns = 0;

		for (j = i; j < n && cells[j].thread == cells[i].thread &&
			    cells[j].name == cells[i].name;
		     j++) {
			uint64_t ns;

			cum += cells[j].ticks;
			ns = tt_clock_ns(&iv->clock, cum);
			if (keep && (cells[j].calls || ns != prev_ns))
				iv->rows[iv->nr_rows++] = (struct tt_interval_row){
					cells[j].k, cells[j].thread - 1,
					iv->labels[cells[j].thread - 1], name, cells[j].calls,
					ns - prev_ns
				};
			prev_ns = ns;
		}
	}
	free(cells);
	sort_key = o->sort;
	if (iv->nr_rows)
		qsort(iv->rows, iv->nr_rows, sizeof(*iv->rows), cmp_rows);
	return TT_OK;
}

void tt_intervals_fini(struct tt_intervals *iv)
{
	for (uint32_t t = 0; iv->labels && t < iv->tr.nr_threads; t++)
		free(iv->labels[t]);
	free(iv->labels);
	free(iv->rows);
	free(iv->cells);
	tt_acts_fini(&iv->acts);
	tt_trace_fini(&iv->tr);
	tt_trace_fini(&iv->meta);
	memset(iv, 0, sizeof(*iv));
}
