/* SPDX-License-Identifier: MIT */
/*
 * report.c - see report.h. Ticks become nanoseconds here, once, with the
 * clock of the whole file (FORMAT.md §3.3), so totals are converted from
 * exact tick sums rather than summed from rounded values.
 */
#include "engine/report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hist.h"
#include "engine/symbols.h"
#include "common/xalloc.h"

struct filter_ctx {
	const struct tt_options *o;
	struct tt_trace *meta;
};

static bool thread_filter(void *ctx, const struct tt_thread *th)
{
	struct filter_ctx *fc = ctx;
	const struct tt_thread *final = tt_trace_find_thread(fc->meta, th->serial);

	/* Decide by the thread's last name in the file (renames: rec(3), rec_thread_name). */
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

/* An interned string of a list the report owns (labels, processes). */
static const char *intern_str(char ***list, size_t *nr, const char *s)
{
	for (size_t i = 0; i < *nr; i++)
		if (strcmp((*list)[i], s) == 0)
			return (*list)[i];
	*list = tt_xrealloc(*list, (*nr + 1) * sizeof(**list));
	(*list)[*nr] = tt_xstrndup(s, strlen(s));
	return (*list)[(*nr)++];
}

static const char *label_of(struct tt_report *rep, const struct tt_thread *th)
{
	char buf[4200];

	tt_thread_label(th, buf, sizeof(buf));
	return intern_str(&rep->labels, &rep->nr_labels, buf);
}

static size_t row_slot(const struct tt_report *rep, const char *process, const char *thread,
		       const char *name)
{
	uint64_t h = ((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull) ^
		     ((uint64_t)(uintptr_t)thread * 0xC2B2AE3D27D4EB4Full) ^
		     ((uint64_t)(uintptr_t)process * 0x165667B19E3779F9ull);

	return (size_t)(h >> 20) & rep->row_mask;
}

static void row_rehash(struct tt_report *rep)
{
	rep->row_mask = rep->row_mask ? rep->row_mask * 2 + 1 : 255;
	free(rep->row_hash);
	rep->row_hash = tt_xcalloc(rep->row_mask + 1, sizeof(*rep->row_hash));
	for (size_t i = 0; i < rep->nr_rows; i++) {
		size_t k = row_slot(rep, rep->rows[i].process, rep->rows[i].thread,
				    rep->rows[i].name);

		while (rep->row_hash[k])
			k = (k + 1) & rep->row_mask;
		rep->row_hash[k] = (uint32_t)i + 1;
	}
}

static struct tt_row *row_for(struct tt_report *rep, const char *process, const char *thread,
			      const char *name, size_t *cap)
{
	size_t k;

	/* Names and labels are interned: pointers identify them. A hash, as
	 * whole-program traces have tens of thousands of names per thread. */
	if ((rep->nr_rows + 1) * 2 > rep->row_mask)
		row_rehash(rep);
	for (k = row_slot(rep, process, thread, name); rep->row_hash[k];
	     k = (k + 1) & rep->row_mask) {
		struct tt_row *r = &rep->rows[rep->row_hash[k] - 1];

		if (r->name == name && r->thread == thread && r->process == process)
			return r;
	}
	rep->row_hash[k] = (uint32_t)rep->nr_rows + 1;
	if (rep->nr_rows == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		rep->rows = tt_xrealloc(rep->rows, *cap * sizeof(*rep->rows));
	}
	struct tt_row *r = &rep->rows[rep->nr_rows++];
	memset(r, 0, sizeof(*r));
	r->process = process;
	r->thread = thread;
	r->name = name;
	r->st.min_ticks = UINT64_MAX;
	return r;
}

/* Adds a replica's table to the rows; map[n] is the name index in rep->tr
 * of the replica's name n (NULL: the replica is rep->tr itself). */
static void merge_table(struct tt_report *rep, const struct tt_stat_table *tab,
			const uint32_t *map, uint32_t nr_names, const char *thread, size_t *cap,
			const bool *selected)
{
	for (uint32_t n = 0; n < tab->n && n < nr_names; n++) {
		const struct tt_stat *s = &tab->v[n];
		uint32_t k = map ? map[n] : n;

		if (!s->calls && !s->errors)
			continue;
		if (!selected[k])
			continue;
		tt_stats_merge(&row_for(rep, NULL, thread, rep->tr.names[k], cap)->st, s);
	}
}

static void finish_row(struct tt_row *r, const struct tt_clock *c)
{
	const struct tt_stat *s = &r->st;

	r->calls = s->calls;
	r->errors = s->errors;
	r->left = s->left;
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

/*
 * The main pass, on tt_trace_walkers() replicas of the trace and of the
 * pairing state when no per-activation callback needs the activations in
 * one place (chrome): replica 0 is rep->tr and rep->sc. Each pairs its
 * share of the threads (events.h); their tables are merged by name below.
 */
static enum tt_status walk(struct tt_report *rep, const struct tt_options *o,
			   bool (*filter)(void *, const struct tt_thread *), void *filter_ctx,
			   tt_close_fn on_close, void *close_ctx, const struct tt_consumer *cons,
			   void *const *cons_ctxs, tt_counters_fn on_counters, tt_arg_fn on_arg,
			   void *const *ctr_ctxs, char *msg, size_t msg_bytes)
{
	struct tt_trace *trs[8];
	void *ctxs[8];
	unsigned n = on_close || (cons && cons->one_walker) ? 1 : tt_trace_walkers();
	enum tt_status st;

	if (n > 8)
		n = 8;
	rep->nr_replicas = n;
	if (n > 1) {
		rep->more_tr = tt_xcalloc(n - 1, sizeof(*rep->more_tr));
		rep->more_sc = tt_xcalloc(n - 1, sizeof(*rep->more_sc));
	}
	for (unsigned i = 0; i < n; i++) {
		struct tt_trace *tr = i ? &rep->more_tr[i - 1] : &rep->tr;
		struct tt_scopes *sc = i ? &rep->more_sc[i - 1] : &rep->sc;

		if (i) {
			tt_trace_init(tr, o->trace);
			tt_scopes_init(sc, tr);
			sc->win_lo_ticks = rep->sc.win_lo_ticks;
			sc->win_span_ticks = rep->sc.win_span_ticks;
			sc->max_dur_ticks = rep->sc.max_dur_ticks;
		}
		sc->compensate = o->compensate;
		sc->thread_filter = filter;
		sc->filter_ctx = filter_ctx;
		sc->by_thread = o->by_thread;
		sc->on_close = on_close;
		sc->close_ctx = close_ctx;
		sc->cons = cons;
		sc->cons_ctx = cons ? cons_ctxs[i] : NULL;
		if (on_counters) {
			sc->on_counters = on_counters;
			sc->counters_ctx = ctr_ctxs[i];
		}
		if (on_arg) {
			sc->on_arg = on_arg;
			sc->arg_ctx = ctr_ctxs[i];
			sc->arg_keys = o->arg_keys;
			sc->nr_arg_keys = o->nr_arg_keys;
		}
		tr->count_enters = cons && cons->block;
		/* Counters and annotations come to the engine as records. */
		tr->on_record = tt_scopes_record;
		tr->record_ctx = sc;
		trs[i] = tr;
		ctxs[i] = sc;
	}
	st = tt_trace_walk_many(trs, ctxs, n, tt_scopes_block, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	for (unsigned i = 0; i < n; i++)
		tt_scopes_finish(i ? &rep->more_sc[i - 1] : &rep->sc);
	return TT_OK;
}

static enum tt_status run_files(struct tt_report *rep, const struct tt_options *o, char *msg,
				size_t msg_bytes);

enum tt_status tt_report_run(struct tt_report *rep, const struct tt_options *o,
			     tt_close_fn on_close, void *close_ctx, char *msg, size_t msg_bytes)
{
	if (tt_options_multi(o) && !on_close)
		return run_files(rep, o, msg, msg_bytes);
	return tt_report_run_views(rep, o, on_close, close_ctx, NULL, NULL, msg, msg_bytes);
}

static enum tt_status run(struct tt_report *rep, const struct tt_options *o, tt_close_fn on_close,
			  void *close_ctx, const struct tt_consumer *cons, void *const *cons_ctxs,
			  tt_counters_fn on_counters, tt_arg_fn on_arg, void *const *ctr_ctxs,
			  struct tt_trace *meta, char *msg, size_t msg_bytes);

enum tt_status tt_report_run_views(struct tt_report *rep, const struct tt_options *o,
				   tt_close_fn on_close, void *close_ctx,
				   const struct tt_consumer *cons, void *const *cons_ctxs, char *msg,
				   size_t msg_bytes)
{
	return run(rep, o, on_close, close_ctx, cons, cons_ctxs, NULL, NULL, NULL, NULL, msg,
		   msg_bytes);
}

enum tt_status tt_report_run_views_meta(struct tt_report *rep, const struct tt_options *o,
					struct tt_trace *meta, const struct tt_consumer *cons,
					void *const *cons_ctxs, char *msg, size_t msg_bytes)
{
	return run(rep, o, NULL, NULL, cons, cons_ctxs, NULL, NULL, NULL, meta, msg, msg_bytes);
}

enum tt_status tt_report_run_counters(struct tt_report *rep, const struct tt_options *o,
				      tt_counters_fn on_counters, tt_arg_fn on_arg,
				      void *const *ctr_ctxs, char *msg, size_t msg_bytes)
{
	return run(rep, o, NULL, NULL, NULL, NULL, on_counters, on_arg, ctr_ctxs, NULL, msg,
		   msg_bytes);
}

static enum tt_status run(struct tt_report *rep, const struct tt_options *o, tt_close_fn on_close,
			  void *close_ctx, const struct tt_consumer *cons, void *const *cons_ctxs,
			  tt_counters_fn on_counters, tt_arg_fn on_arg, void *const *ctr_ctxs,
			  struct tt_trace *meta, char *msg, size_t msg_bytes)
{
	struct filter_ctx fc = { o, NULL };
	enum tt_status st;
	size_t cap = 0;
	uint32_t **maps;
	bool *selected;

	memset(rep, 0, sizeof(*rep));
	tt_trace_init(&rep->tr, o->trace);
	tt_trace_init(&rep->meta, o->trace);
	tt_scopes_init(&rep->sc, &rep->tr);
	if (meta) { /* the caller's metadata pass, moved in */
		tt_trace_fini(&rep->meta);
		rep->meta = *meta;
		memset(meta, 0, sizeof(*meta));
	}
	if (meta || tt_options_need_prepass(o) || on_close || (cons && cons->needs_meta)) {
		st = meta ? TT_OK : tt_trace_walk(&rep->meta, NULL, NULL, msg, msg_bytes);
		if (st != TT_OK)
			return st;
		rep->has_meta = true;
		tt_trace_clock(&rep->meta, &rep->clock);
		tt_report_window(o, &rep->clock, &rep->sc.win_lo_ticks, &rep->sc.win_span_ticks);
		rep->sc.max_dur_ticks = tt_options_max_dur_ticks(o, &rep->clock);
		fc.meta = &rep->meta;
		/* A --thread that names no thread of the file is a mistake to
		 * say, not an empty report (with several files: of none, said
		 * at the last). */
		if (o->nr_threads && tt_options_threads_missing(o, &rep->meta, msg, msg_bytes) &&
		    (!o->one_of_several || o->last_of_several))
			return TT_ERR_FILE;
	}
	st = walk(rep, o, o->nr_threads && fc.meta ? thread_filter : NULL, &fc, on_close,
		  close_ctx, cons, cons_ctxs, on_counters, on_arg, ctr_ctxs, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	if (!rep->has_meta)
		tt_trace_clock(&rep->tr, &rep->clock);
	tt_trace_problems(&rep->tr, rep->problems, sizeof(rep->problems));
	if (o->compensate) {
		const struct recfmt_probe_cost *pc = &rep->tr.probe_cost;

		rep->comp_asked = true;
		rep->compensated = rep->tr.has_probe_cost && (pc->scope_ps || pc->hook_ps);
		/* A walker that paired a block before the record was read did not
		 * compensate (scopes.c, compensate_begin()): then none counts. */
		for (unsigned r = 0; r < rep->nr_replicas; r++) {
			const struct tt_scopes *sc = r ? &rep->more_sc[r - 1] : &rep->sc;

			if (sc->comp_checked && !sc->comp_applied)
				rep->compensated = false;
		}
	}

	/* The other replicas' names, as name indices of rep->tr. */
	maps = tt_xcalloc(rep->nr_replicas, sizeof(*maps));
	for (unsigned r = 1; r < rep->nr_replicas; r++) {
		const struct tt_trace *tr = &rep->more_tr[r - 1];

		maps[r] = tt_xcalloc(tr->nr_names + 1, sizeof(**maps));
		for (uint32_t n = 0; n < tr->nr_names; n++)
			maps[r][n] = tt_trace_intern(&rep->tr, tr->names[n], strlen(tr->names[n]));
	}
	selected = tt_xcalloc(rep->tr.nr_names + 1, sizeof(bool));
	for (uint32_t n = 0; n < rep->tr.nr_names; n++)
		selected[n] = tt_options_function_selected(o, rep->tr.names[n]);
	for (uint32_t i = 0; i < rep->tr.nr_threads; i++) {
		struct tt_thread *th = &rep->tr.threads[i];
		const struct tt_thread *final = rep->has_meta
			? tt_trace_find_thread(&rep->meta, th->serial) : NULL;

		if (o->nr_threads && !tt_options_thread_selected(o, final ? final : th))
			continue;
		rep->nr_dropped += th->nr_dropped;
		rep->nr_filtered += th->nr_filtered;
		rep->nr_blocked += th->nr_blocked;
		rep->blocked_ns += th->blocked_ns;
		if (!o->by_thread)
			continue;
		/* The replicas list the same threads in the same order; one of
		 * them paired thread i. */
		for (unsigned r = 0; r < rep->nr_replicas; r++) {
			const struct tt_trace *tr = r ? &rep->more_tr[r - 1] : &rep->tr;
			const struct tt_stat_table *tab =
				i < tr->nr_threads ? tt_scopes_table(&tr->threads[i]) : NULL;

			if (tab)
				merge_table(rep, tab, maps[r], tr->nr_names, label_of(rep, th),
					    &cap, selected);
		}
	}
	for (unsigned r = 0; r < rep->nr_replicas && !o->by_thread; r++) {
		const struct tt_trace *tr = r ? &rep->more_tr[r - 1] : &rep->tr;
		const struct tt_scopes *sc = r ? &rep->more_sc[r - 1] : &rep->sc;

		merge_table(rep, &sc->global, maps[r], tr->nr_names, NULL, &cap, selected);
	}
	for (unsigned r = 0; r < rep->nr_replicas; r++)
		free(maps[r]);
	free(maps);
	free(selected);
	/* With --by-thread, the rows of a label with a thread that dropped. */
	for (uint32_t i = 0; i < rep->tr.nr_threads && o->by_thread; i++) {
		const struct tt_thread *th = &rep->tr.threads[i];
		const struct tt_thread *final = rep->has_meta
			? tt_trace_find_thread(&rep->meta, th->serial) : NULL;
		const char *label;

		if (!th->nr_dropped ||
		    (o->nr_threads && !tt_options_thread_selected(o, final ? final : th)))
			continue;
		label = label_of(rep, th);
		for (size_t k = 0; k < rep->nr_rows; k++)
			rep->rows[k].maybe_dropped |= rep->rows[k].thread == label;
	}
	for (size_t i = 0; i < rep->nr_rows; i++) {
		finish_row(&rep->rows[i], &rep->clock);
		/* Merged threads: which names a dropping thread had is not kept,
		 * so every row may miss some (docs/ANALYZER.md, "Drops"). */
		rep->rows[i].maybe_dropped |= !o->by_thread && rep->nr_dropped;
		rep->nr_left += rep->rows[i].left;
	}
	return TT_OK;
}

void tt_report_comp_warn(const struct tt_report *rep)
{
	if (rep->nr_files) /* several files: each warned as it was merged */
		return;
	if (!rep->comp_asked || rep->compensated)
		return;
	fprintf(stderr, "tracetool: %s: warning: %s: --compensate not applied, times as measured\n",
		rep->tr.path,
		rep->tr.has_probe_cost ? "the probe cost was not measured (PROBE_COST is 0)"
				       : "no probe cost recorded (PROBE_COST, format 1.2)");
}

void tt_report_comp_footer(const struct tt_report *rep, char *out, size_t out_bytes)
{
	const struct recfmt_probe_cost *pc = &rep->tr.probe_cost;

	if (!rep->comp_asked)
		snprintf(out, out_bytes, "%s", "");
	else if (rep->nr_files) /* several files: each by its own probe cost */
		snprintf(out, out_bytes, "%s",
			 rep->compensated ? "compensated: each file by its own probe cost"
					  : "not compensated: a file has no measured probe cost");
	else if (!rep->compensated)
		snprintf(out, out_bytes, "not compensated: %s",
			 rep->tr.has_probe_cost ? "the file's probe cost is 0 (not measured)"
						: "the file records no probe cost");
	else
		snprintf(out, out_bytes,
			 "compensated: probe cost %.1f ns a scope (%.1f inside it), %.1f ns a hook "
			 "(%.1f inside)",
			 (double)pc->scope_ps / 1000.0, (double)pc->scope_inner_ps / 1000.0,
			 (double)pc->hook_ps / 1000.0, (double)pc->hook_inner_ps / 1000.0);
}

void tt_report_fini(struct tt_report *rep)
{
	for (size_t i = 0; i < rep->nr_processes; i++)
		free(rep->processes[i]);
	free(rep->processes);
	for (size_t i = 0; i < rep->nr_rows; i++)
		tt_stats_hist_free(&rep->rows[i].st);
	free(rep->rows);
	free(rep->row_hash);
	for (size_t i = 0; i < rep->nr_labels; i++)
		free(rep->labels[i]);
	free(rep->labels);
	for (unsigned r = 1; r < rep->nr_replicas; r++) {
		tt_scopes_fini(&rep->more_sc[r - 1]);
		tt_trace_fini(&rep->more_tr[r - 1]);
	}
	free(rep->more_sc);
	free(rep->more_tr);
	tt_scopes_fini(&rep->sc);
	tt_trace_fini(&rep->tr);
	tt_trace_fini(&rep->meta);
}

/* ---------------------------------------------------------------------
 * Several files (docs/ANALYZER.md, "Several TRACE files").
 */
void tt_report_multi_init(struct tt_report *rep, const struct tt_options *o)
{
	memset(rep, 0, sizeof(*rep));
	tt_trace_init(&rep->tr, o->trace);
	tt_trace_init(&rep->meta, o->trace);
	tt_scopes_init(&rep->sc, &rep->tr);
	rep->clock.num = rep->clock.den = 1; /* the merged rows are in ns */
	rep->nr_files = o->nr_traces ? o->nr_traces : 1;
	rep->merged = !o->by_thread && !o->by_process;
	rep->compensated = true; /* every file, below */
}

void tt_report_file_options(const struct tt_options *o, unsigned i, struct tt_options *fo)
{
	*fo = *o;
	fo->trace = o->traces ? o->traces[i] : o->trace;
	fo->traces = o->traces ? &o->traces[i] : NULL;
	fo->nr_traces = 1;
	fo->by_process = false;
	fo->one_of_several = o->nr_traces > 1;
	fo->last_of_several = i + 1 == o->nr_traces;
	fo->nr_several = o->nr_traces;
}

char *tt_report_process_label(const struct tt_report *sub)
{
	const struct tt_trace *tr = sub->has_meta ? &sub->meta : &sub->tr;
	const char *prog = tt_symbols_program(tr->syms), *name = NULL;
	char buf[4200];

	if (prog) {
		const char *base = strrchr(prog, '/');

		name = base && base[1] ? base + 1 : prog;
	}
	for (uint32_t i = 0; !name && i < tr->nr_threads; i++)
		if (tr->threads[i].defined && tr->threads[i].os_tid == tr->hdr.pid &&
		    tr->threads[i].name)
			name = tr->threads[i].name;
	snprintf(buf, sizeof(buf), "%s[%" PRIu32 "]", name ? name : "process", tr->hdr.pid);
	return tt_xstrndup(buf, strlen(buf));
}

const char *tt_report_multi_add(struct tt_report *rep, const struct tt_options *o,
				struct tt_report *sub)
{
	char *label = tt_report_process_label(sub);
	const char *proc = intern_str(&rep->processes, &rep->nr_processes, label);
	size_t n = strlen(rep->problems);

	free(label);
	tt_trace_warn(&sub->tr);
	tt_report_comp_warn(sub);
	rep->comp_asked |= sub->comp_asked;
	rep->compensated &= sub->compensated;
	if (sub->problems[0] && n + 4 < sizeof(rep->problems)) {
		int k = snprintf(rep->problems + n, sizeof(rep->problems) - n, "%s%s: ",
				 n ? "; " : "", sub->tr.path);

		if (k > 0 && n + (size_t)k < sizeof(rep->problems))
			memccpy(rep->problems + n + k, sub->problems, '\0',
				sizeof(rep->problems) - n - (size_t)k);
		rep->problems[sizeof(rep->problems) - 1] = '\0';
	}
	rep->any_truncated |= sub->tr.truncated;
	rep->any_unended |= !sub->tr.has_end;
	rep->any_damaged |= sub->tr.nr_bad_frames || sub->tr.nr_lost_frames ||
			    sub->tr.nr_bad_blocks;
	rep->tr.has_filtered |= sub->tr.has_filtered;
	rep->tr.nr_counter_sets += sub->tr.nr_counter_sets;
	rep->nr_dropped += sub->nr_dropped;
	rep->nr_filtered += sub->nr_filtered;
	rep->nr_blocked += sub->nr_blocked;
	rep->blocked_ns += sub->blocked_ns;
	for (size_t i = 0; i < sub->nr_rows; i++) {
		const struct tt_row *r = &sub->rows[i];
		uint32_t k = tt_trace_intern(&rep->tr, r->name, strlen(r->name));
		const char *name = rep->tr.names[k]; /* after: intern may move names */
		const char *thread = r->thread
			? intern_str(&rep->labels, &rep->nr_labels, r->thread) : NULL;
		struct tt_row *row = row_for(rep, o->by_process ? proc : NULL, thread, name,
					     &rep->cap_rows);

		tt_stats_merge_ns(&row->st, &r->st, &sub->clock);
		row->maybe_dropped |= r->maybe_dropped;
	}
	return proc;
}

void tt_report_multi_finish(struct tt_report *rep)
{
	rep->compensated &= rep->comp_asked;
	for (size_t i = 0; i < rep->nr_rows; i++) {
		finish_row(&rep->rows[i], &rep->clock);
		/* As one file's merged threads: a drop anywhere may touch any row. */
		rep->rows[i].maybe_dropped |= rep->merged && rep->nr_dropped;
		rep->nr_left += rep->rows[i].left;
	}
}

void tt_report_warn(const struct tt_report *rep)
{
	if (!rep->nr_files)
		tt_trace_warn(&rep->tr);
}

static enum tt_status run_files(struct tt_report *rep, const struct tt_options *o, char *msg,
				size_t msg_bytes)
{
	tt_report_multi_init(rep, o);
	for (unsigned i = 0; i < rep->nr_files; i++) {
		struct tt_report *sub = tt_xcalloc(1, sizeof(*sub));
		struct tt_options fo;
		enum tt_status st;

		tt_report_file_options(o, i, &fo);
		st = run(sub, &fo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg, msg_bytes);
		if (st == TT_OK)
			tt_report_multi_add(rep, o, sub);
		else
			rep->failed = fo.trace;
		tt_report_fini(sub);
		free(sub);
		if (st != TT_OK)
			return st;
	}
	tt_report_multi_finish(rep);
	return TT_OK;
}
