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
#include "common/hmap.h"
#include "engine/front.h"
#include "engine/symbols.h"
#include "common/xalloc.h"

struct str_key {
	const struct tt_strs *l;
	const char *s;
};

static bool str_eq(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;

	return strcmp(k->l->v[id], k->s) == 0;
}

/* s, interned in l: l's copy of it. A map, not a scan: a file of 10^5
 * threads named apart made --by-thread quadratic. */
static const char *intern_str(struct tt_strs *l, const char *s)
{
	const struct str_key k = { l, s };
	uint32_t h = tt_hash_bytes(s, strlen(s)); /* seeded: hmap.h */
	uint32_t id = tt_hmap_find(&l->map, h, str_eq, &k);

	if (id != TT_HMAP_NONE)
		return l->v[id];
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = tt_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	tt_hmap_put(&l->map, h, (uint32_t)l->n);
	l->v[l->n] = tt_xstrndup(s, strlen(s));
	return l->v[l->n++];
}

static void strs_fini(struct tt_strs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	tt_hmap_fini(&l->map);
	memset(l, 0, sizeof(*l));
}

static const char *label_of(struct tt_report *rep, const struct tt_thread *th)
{
	char buf[4200];

	tt_thread_label(th, buf, sizeof(buf));
	return intern_str(&rep->labels, buf);
}

/* Names and labels are interned: pointers identify them (the analyzer's
 * choice, so a fixed mix serves, hmap.h). A map, as whole-program traces
 * have tens of thousands of names per thread. */
static uint32_t row_hash(const char *process, const char *thread, const char *name)
{
	uint64_t h = ((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull) ^
		     ((uint64_t)(uintptr_t)thread * 0xC2B2AE3D27D4EB4Full) ^
		     ((uint64_t)(uintptr_t)process * 0x165667B19E3779F9ull);

	return (uint32_t)(h >> 20);
}

struct row_key {
	const struct tt_report *rep;
	const char *process, *thread, *name;
};

static bool row_eq(const void *ctx, uint32_t id)
{
	const struct row_key *k = ctx;
	const struct tt_row *r = &k->rep->rows[id];

	return r->name == k->name && r->thread == k->thread && r->process == k->process;
}

static struct tt_row *row_for(struct tt_report *rep, const char *process, const char *thread,
			      const char *name, size_t *cap)
{
	const struct row_key key = { rep, process, thread, name };
	uint32_t h = row_hash(process, thread, name);
	uint32_t id = tt_hmap_find(&rep->row_map, h, row_eq, &key);

	if (id != TT_HMAP_NONE)
		return &rep->rows[id];
	if (rep->nr_rows == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		rep->rows = tt_xrealloc(rep->rows, *cap * sizeof(*rep->rows));
	}
	tt_hmap_put(&rep->row_map, h, (uint32_t)rep->nr_rows);
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
 * The rows of a walked file: every replica's tables (one per thread with
 * --by-thread, else each replica's global one) by name, with the names of
 * rep->tr, the threads --thread selects by their final names, the names
 * --function selects; then each row in nanoseconds.
 */
void tt_report_rows(struct tt_report *rep, const struct tt_options *o)
{
	size_t cap = 0;
	uint32_t **maps;
	bool *selected;

	/* The other replicas' names, as name indices of rep->tr. */
	maps = tt_xcalloc(rep->nr_replicas, sizeof(*maps));
	for (unsigned r = 1; r < rep->nr_replicas; r++)
		maps[r] = tt_walk_name_map(&rep->tr, &rep->more_tr[r - 1]);
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
	for (unsigned i = 0; i < rep->nr_kept; i++) {
		tt_report_fini(rep->files[i]);
		free(rep->files[i]);
	}
	free(rep->files);
	strs_fini(&rep->processes);
	for (size_t i = 0; i < rep->nr_rows; i++)
		tt_stats_hist_free(&rep->rows[i].st);
	free(rep->rows);
	tt_hmap_fini(&rep->row_map);
	strs_fini(&rep->labels);
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

char *tt_process_label(const struct tt_trace *tr)
{
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

/* The process label of a file's report. */
static char *process_label(const struct tt_report *sub)
{
	return tt_process_label(sub->has_meta ? &sub->meta : &sub->tr);
}

const char *tt_report_multi_add(struct tt_report *rep, const struct tt_options *o,
				struct tt_report *sub)
{
	char *label = process_label(sub);
	const char *proc = intern_str(&rep->processes, label);
	size_t n = strlen(rep->problems);

	free(label);
	tt_trace_warn(&sub->tr);
	tt_trace_note_samples_only(&sub->tr);
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
			? intern_str(&rep->labels, r->thread) : NULL;
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
	if (!rep->nr_files) {
		tt_trace_warn(&rep->tr);
		tt_trace_note_samples_only(&rep->tr);
	}
}
