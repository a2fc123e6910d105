/* SPDX-License-Identifier: MIT */
/*
 * report.c - see report.h. Ticks become nanoseconds here, once, with the
 * clock of the whole file (FORMAT.md §3.3), so totals are converted from
 * exact tick sums rather than summed from rounded values.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "hist.h"

struct filter_ctx {
	const struct tt_options *o;
	struct tt_trace *meta;
};

static bool thread_filter(void *ctx, const struct tt_thread *th)
{
	struct filter_ctx *fc = ctx;
	const struct tt_thread *final = tt_trace_find_thread(fc->meta, th->serial);

	/* Decide by the thread's last name in the file (renames, contract §5). */
	return tt_options_thread_selected(fc->o, final ? final : th);
}

void tt_report_window(const struct tt_options *o, const struct tt_clock *c, uint64_t *lo,
		      uint64_t *span)
{
	uint64_t hi = UINT64_MAX;

	*lo = 0;
	if (o->has_from)
		*lo = tt_clock_abs_ticks(c, o->from_ns);
	if (o->has_to)
		hi = tt_clock_abs_ticks(c, o->to_ns);
	*span = hi > *lo ? hi - *lo : 0;
}

static const char *label_of(struct tt_report *rep, const struct tt_thread *th)
{
	char buf[4200];

	tt_thread_label(th, buf, sizeof(buf));
	for (size_t i = 0; i < rep->nr_labels; i++)
		if (strcmp(rep->labels[i], buf) == 0)
			return rep->labels[i];
	rep->labels = realloc(rep->labels, (rep->nr_labels + 1) * sizeof(*rep->labels));
	if (!rep->labels || !(rep->labels[rep->nr_labels] = strdup(buf)))
		abort();
	return rep->labels[rep->nr_labels++];
}

static struct tt_row *row_for(struct tt_report *rep, const char *thread, const char *name,
			      size_t *cap)
{
	/* Rows are few (names x labels); a linear search per table entry is
	 * done once per name at the end, not per event. */
	for (size_t i = 0; i < rep->nr_rows; i++)
		if (rep->rows[i].name == name && rep->rows[i].thread == thread)
			return &rep->rows[i];
	if (rep->nr_rows == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		rep->rows = realloc(rep->rows, *cap * sizeof(*rep->rows));
		if (!rep->rows)
			abort();
	}
	struct tt_row *r = &rep->rows[rep->nr_rows++];
	memset(r, 0, sizeof(*r));
	r->thread = thread;
	r->name = name;
	r->st.min_ticks = UINT64_MAX;
	return r;
}

static void merge_table(struct tt_report *rep, const struct tt_options *o,
			struct tt_stat_table *tab, const char *thread, size_t *cap,
			bool *selected)
{
	for (uint32_t n = 0; n < tab->n && n < rep->tr.nr_names; n++) {
		struct tt_stat *s = &tab->v[n];

		if (!s->calls && !s->errors)
			continue;
		if (!selected[n])
			continue;
		tt_stats_merge(&row_for(rep, thread, rep->tr.names[n], cap)->st, s);
	}
	(void)o;
}

static void finish_row(struct tt_row *r, const struct tt_clock *c)
{
	const struct tt_stat *s = &r->st;

	r->calls = s->calls;
	r->errors = s->errors;
	r->total_ns = tt_clock_ns(c, s->total_ticks);
	r->self_ns = tt_clock_ns(c, s->self_ticks);
	if (!s->calls)
		return;
	r->min_ns = tt_clock_ns(c, s->min_ticks);
	r->max_ns = tt_clock_ns(c, s->max_ticks);
	r->mean_ns = (tt_clock_ns(c, s->sum_ticks) + s->calls / 2) / s->calls;
	r->p50_ns = tt_clock_ns(c, tt_hist_percentile(s->hist, s->calls, 0.50, s->min_ticks,
						      s->max_ticks));
	r->p90_ns = tt_clock_ns(c, tt_hist_percentile(s->hist, s->calls, 0.90, s->min_ticks,
						      s->max_ticks));
	r->p99_ns = tt_clock_ns(c, tt_hist_percentile(s->hist, s->calls, 0.99, s->min_ticks,
						      s->max_ticks));
}

enum tt_status tt_report_run(struct tt_report *rep, const struct tt_options *o,
			     tt_close_fn on_close, void *close_ctx, char *msg, size_t msg_bytes)
{
	struct filter_ctx fc = { o, NULL };
	enum tt_status st;
	size_t cap = 0;
	bool *selected;

	memset(rep, 0, sizeof(*rep));
	tt_trace_init(&rep->tr, o->trace);
	tt_trace_init(&rep->meta, o->trace);
	tt_scopes_init(&rep->sc, &rep->tr);
	if (tt_options_need_prepass(o) || on_close) {
		st = tt_trace_walk(&rep->meta, NULL, NULL, msg, msg_bytes);
		if (st != TT_OK)
			return st;
		rep->has_meta = true;
		tt_trace_clock(&rep->meta, &rep->clock);
		tt_report_window(o, &rep->clock, &rep->sc.win_lo_ticks, &rep->sc.win_span_ticks);
		fc.meta = &rep->meta;
		if (o->nr_threads) {
			rep->sc.thread_filter = thread_filter;
			rep->sc.filter_ctx = &fc;
		}
	}
	rep->sc.by_thread = o->by_thread;
	rep->sc.on_close = on_close;
	rep->sc.close_ctx = close_ctx;
	st = tt_trace_walk(&rep->tr, tt_scopes_block, &rep->sc, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	tt_scopes_finish(&rep->sc);
	if (!rep->has_meta)
		tt_trace_clock(&rep->tr, &rep->clock);
	tt_trace_problems(&rep->tr, rep->problems, sizeof(rep->problems));

	selected = calloc(rep->tr.nr_names + 1, sizeof(bool));
	if (!selected)
		abort();
	for (uint32_t n = 0; n < rep->tr.nr_names; n++)
		selected[n] = tt_options_function_selected(o, rep->tr.names[n]);
	for (uint32_t i = 0; i < rep->tr.nr_threads; i++) {
		struct tt_thread *th = &rep->tr.threads[i];
		struct tt_stat_table *tab = tt_scopes_table(th);
		const struct tt_thread *final = rep->has_meta
			? tt_trace_find_thread(&rep->meta, th->serial) : NULL;

		if (o->nr_threads && !tt_options_thread_selected(o, final ? final : th))
			continue;
		rep->nr_dropped += th->nr_dropped;
		rep->nr_filtered += th->nr_filtered;
		if (!tab)
			continue;
		if (o->by_thread)
			merge_table(rep, o, tab, label_of(rep, th), &cap, selected);
	}
	if (!o->by_thread)
		merge_table(rep, o, &rep->sc.global, NULL, &cap, selected);
	free(selected);
	for (size_t i = 0; i < rep->nr_rows; i++)
		finish_row(&rep->rows[i], &rep->clock);
	return TT_OK;
}

void tt_report_fini(struct tt_report *rep)
{
	for (size_t i = 0; i < rep->nr_rows; i++)
		free(rep->rows[i].st.hist);
	free(rep->rows);
	for (size_t i = 0; i < rep->nr_labels; i++)
		free(rep->labels[i]);
	free(rep->labels);
	tt_scopes_fini(&rep->sc);
	tt_trace_fini(&rep->tr);
	tt_trace_fini(&rep->meta);
}
