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
#include "views/intervals.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/report.h"
#include "common/hmap.h"
#include "common/xalloc.h"


/*
 * Ticks are the file's choice: a keyed hash (hmap.h) of k plus the (thread,
 * name) pair multiplied in under the key too, so that cells crafted to share
 * a slot (or an input: k1 + x1 = k2 + x2) need the key. One mix a cell: an
 * activation looks up one or two.
 */
static uint32_t cell_hash(uint32_t thread, uint32_t name, uint64_t k)
{
	uint64_t tn = ((uint64_t)thread << 32 | name) ^ (tt_hash_key << 32 | tt_hash_key >> 32);

	return tt_hash_u64(k + tn * 0x9e3779b97f4a7c15ull);
}

struct cell_key {
	const struct tt_iv_table *iv;
	uint32_t thread, name; /* thread + 1, as in the cells */
	uint64_t k;
};

static bool cell_eq(const void *ctx, uint32_t id)
{
	const struct cell_key *key = ctx;
	const struct iv_cell *c = &key->iv->cells[id];

	return c->thread == key->thread && c->name == key->name && c->k == key->k;
}

/* intervals.h: rows follow the activations seen, not the span claimed. */
static uint64_t row_limit(const struct tt_iv_table *iv)
{
	uint64_t n = TT_INTERVAL_ROWS_BASE;

	if (iv->nr_acts < (TT_MAX_INTERVAL_ROWS - n) / TT_INTERVAL_ROWS_PER_ACT)
		return n + iv->nr_acts * TT_INTERVAL_ROWS_PER_ACT;
	return TT_MAX_INTERVAL_ROWS;
}

/* The cell of (thread, name, k); the spare one once there are too many. */
static struct iv_cell *cell(struct tt_iv_table *iv, uint32_t thread, uint32_t name, uint64_t k)
{
	const struct cell_key key = { iv, thread + 1, name, k };
	uint32_t h = cell_hash(thread + 1, name, k), id;

	if (iv->nr_cells >= row_limit(iv)) {
		iv->too_many = true;
		return &iv->spare;
	}
	id = tt_hmap_find(&iv->map, h, cell_eq, &key);
	if (id != TT_HMAP_NONE)
		return &iv->cells[id];
	if (iv->nr_cells == iv->cap_cells) {
		iv->cap_cells = iv->cap_cells ? 2 * iv->cap_cells : 512;
		iv->cells = tt_xrealloc(iv->cells, iv->cap_cells * sizeof(*iv->cells));
	}
	tt_hmap_put(&iv->map, h, (uint32_t)iv->nr_cells);
	iv->cells[iv->nr_cells] = (struct iv_cell){ thread + 1, name, k, 0, 0 };
	return &iv->cells[iv->nr_cells++];
}

/* cell() again for the cell c it returned last: the same row limit, no
 * lookup. */
static struct iv_cell *cell_again(struct tt_iv_table *iv, struct iv_cell *c)
{
	if (iv->nr_cells >= row_limit(iv)) {
		iv->too_many = true;
		return &iv->spare;
	}
	return c;
}

/*
 * The interval holding tick t: k with bounds(k) <= t < bounds(k + 1), where
 * bounds(k) = tt_clock_abs_ticks(k * DUR) is the first tick whose time is
 * at least k * DUR; that is floor(time(t) / DUR). Ticks before time zero
 * belong to interval 0.
 */
static uint64_t interval_of(const struct tt_intervals *iv, uint64_t t)
{
	int64_t ns = tt_clock_rel_ns(&iv->rep.clock, t);

	return ns > 0 ? (uint64_t)ns / iv->interval_ns : 0;
}

static uint64_t bound(const struct tt_intervals *iv, uint64_t k)
{
	if (k > UINT64_MAX / iv->interval_ns)
		return UINT64_MAX;
	return tt_clock_abs_ticks(&iv->rep.clock, k * iv->interval_ns);
}

/* The consumer's state: per walker a table, per thread its index. */
struct iv_walker {
	struct tt_intervals *iv;
	unsigned replica;
	struct tt_iv_table tab;
	struct iv_thread *threads; /* to free */
};

struct iv_thread {
	struct iv_walker *w;
	uint32_t index; /* in the replica's (and rep.tr's) thread table */
	struct iv_thread *next;
};

static void *iv_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct iv_walker *w = ctx;
	const struct tt_trace *tr = tt_report_replica(&w->iv->rep, w->replica);
	struct iv_thread *t = tt_xcalloc(1, sizeof(*t));

	t->w = w;
	t->index = (uint32_t)(th - tr->threads);
	t->next = w->threads;
	w->threads = t;
	return t;
}

static void on_act(void *tctx, const struct tt_activation *a)
{
	struct iv_thread *t = tctx;
	struct tt_intervals *iv = t->w->iv;
	struct tt_iv_table *tab = &t->w->tab;
	uint32_t th = t->index;
	uint64_t k0 = interval_of(iv, a->enter_ticks), k1, from = a->enter_ticks;
	struct iv_cell *c0;

	if (tab->too_many)
		return;
	tab->nr_acts++;
	c0 = cell(tab, th, a->name, k0);
	c0->calls++;
	if (!a->outermost)
		return; /* its time is inside the outermost activation's */
	k1 = interval_of(iv, a->exit_ticks);
	if (k1 - k0 >= row_limit(tab)) {
		tab->too_many = true;
		return;
	}
	for (uint64_t k = k0; k <= k1 && !tab->too_many; k++) {
		uint64_t to = k == k1 ? a->exit_ticks : bound(iv, k + 1);

		if (to > a->exit_ticks)
			to = a->exit_ticks;
		/* k0's cell is c0: the loop runs only if that was no spare, and
		 * nothing was added since. */
		if (to > from)
			(k == k0 ? cell_again(tab, c0) : cell(tab, th, a->name, k))->ticks += to - from;
		from = to > from ? to : from;
	}
}

static const struct tt_consumer iv_consumer = {
	.thread_begin = iv_thread_begin,
	.act = on_act,
	.needs_meta = true, /* the clock, for the boundaries */
	.no_times = true,
};

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
	struct tt_walk_spec spec = { .cons = &iv_consumer };
	enum tt_status st;
	struct iv_cell *cells;
	size_t n;

	memset(iv, 0, sizeof(*iv));
	iv->interval_ns = o->interval_ns;
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
		struct iv_walker *w = tt_xcalloc(1, sizeof(*w));

		w->iv = iv;
		w->replica = r;
		iv->walkers[r] = w;
	}
	/* The engine's pre-pass sets rep.clock before the first activation. */
	memcpy(spec.ctxs, iv->walkers, sizeof(spec.ctxs));
	st = tt_walk(&iv->rep, o, &spec, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	iv->clock = iv->rep.clock;
	/* The walkers' tables into one, with rep.tr's name indices; its row
	 * limit follows every walker's activations. */
	for (unsigned r = 0; r < iv->rep.nr_replicas; r++)
		iv->all.nr_acts += ((struct iv_walker *)iv->walkers[r])->tab.nr_acts;
	for (unsigned r = 0; r < iv->rep.nr_replicas && !iv->all.too_many; r++) {
		struct iv_walker *w = iv->walkers[r];
		struct tt_trace *tr = tt_report_replica(&iv->rep, r);

		iv->all.too_many |= w->tab.too_many;
		for (size_t i = 0; i < w->tab.nr_cells && !iv->all.too_many; i++) {
			const struct iv_cell *c = &w->tab.cells[i];
			struct iv_cell *d;
			uint32_t name;

			name = r ? tt_trace_intern(&iv->rep.tr, tr->names[c->name],
						   strlen(tr->names[c->name]))
				 : c->name;
			d = cell(&iv->all, c->thread - 1, name, c->k);
			d->ticks += c->ticks;
			d->calls += c->calls;
		}
	}
	iv->too_many = iv->all.too_many;
	if (iv->too_many) {
		snprintf(msg, msg_bytes,
			 "--interval: more than %" PRIu64 " rows of interval, thread and scope "
			 "for %" PRIu64 " activations; choose a longer interval",
			 row_limit(&iv->all), iv->all.nr_acts);
		return TT_ERR_FILE;
	}
	snprintf(iv->problems, sizeof(iv->problems), "%s", iv->rep.problems);

	/* Per thread and name, in interval order: cumulative rounding. */
	n = iv->all.nr_cells;
	cells = tt_xrealloc(NULL, n * sizeof(*cells));
	if (n) { /* memcpy() and qsort() take no null pointer, even for 0 bytes */
		memcpy(cells, iv->all.cells, n * sizeof(*cells));
		qsort(cells, n, sizeof(*cells), cmp_cells);
	}
	iv->rows = tt_xrealloc(NULL, n * sizeof(*iv->rows));
	iv->labels = tt_xrealloc(NULL, (iv->rep.tr.nr_threads + 1) * sizeof(*iv->labels));
	for (uint32_t t = 0; t < iv->rep.tr.nr_threads; t++) {
		char buf[4200];

		tt_thread_label(&iv->rep.tr.threads[t], buf, sizeof(buf));
		iv->labels[t] = strdup(buf);
		if (!iv->labels[t])
			tt_oom();
	}
	for (size_t i = 0, j; i < n; i = j) {
		const struct tt_thread *th = &iv->rep.tr.threads[cells[i].thread - 1];
		const char *name = iv->rep.tr.names[cells[i].name];
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
	for (uint32_t t = 0; iv->labels && t < iv->rep.tr.nr_threads; t++)
		free(iv->labels[t]);
	free(iv->labels);
	free(iv->rows);
	free(iv->all.cells);
	tt_hmap_fini(&iv->all.map);
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
		struct iv_walker *w = iv->walkers[r];

		if (!w)
			continue;
		while (w->threads) {
			struct iv_thread *t = w->threads;

			w->threads = t->next;
			free(t);
		}
		free(w->tab.cells);
		tt_hmap_fini(&w->tab.map);
		free(w);
	}
	tt_report_fini(&iv->rep);
	memset(iv, 0, sizeof(*iv));
}
