/* SPDX-License-Identifier: MIT */
/*
 * ctrs.c - see ctrs.h. A consumer of the engine's counter deltas and
 * arguments only (no activations): adds them per walker, thread
 * and name; the thread filter is applied at lookup, with the names the file
 * ends with (as report.c does), and the walkers are summed there, by name
 * (a replica's name indices are its own).
 */
#include "views/ctrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/report.h"
#include "common/xalloc.h"

static struct tt_ctr_agg *agg_of(struct tt_ctrs_walker *w, uint32_t thread, uint32_t name)
{
	if (thread >= w->cap_threads) {
		uint32_t cap = w->cap_threads ? w->cap_threads : 16;

		while (cap <= thread)
			cap *= 2;
		w->agg = realloc(w->agg, cap * sizeof(*w->agg));
		w->nr_agg = realloc(w->nr_agg, cap * sizeof(*w->nr_agg));
		if (!w->agg || !w->nr_agg)
			tt_oom();
		memset(w->agg + w->cap_threads, 0, (cap - w->cap_threads) * sizeof(*w->agg));
		memset(w->nr_agg + w->cap_threads, 0,
		       (cap - w->cap_threads) * sizeof(*w->nr_agg));
		w->cap_threads = cap;
	}
	if (name >= w->nr_agg[thread]) {
		uint32_t n = w->nr_agg[thread] ? w->nr_agg[thread] : 16;

		while (n <= name)
			n *= 2;
		w->agg[thread] = realloc(w->agg[thread], n * sizeof(**w->agg));
		if (!w->agg[thread])
			tt_oom();
		memset(w->agg[thread] + w->nr_agg[thread], 0,
		       (n - w->nr_agg[thread]) * sizeof(**w->agg));
		w->nr_agg[thread] = n;
	}
	return &w->agg[thread][name];
}

/* tt_counters_fn, on the walker whose table ctx is. */
static void on_counters(void *ctx, uint32_t thread, uint32_t name, bool outermost, uint32_t mask,
			const uint64_t *delta)
{
	struct tt_ctr_agg *g = agg_of(ctx, thread, name);

	for (uint32_t k = 0; k < TT_MAX_COUNTERS; k++) {
		if (!(mask & (1u << k)))
			continue;
		g->sum[k] += delta[k];
		g->n[k]++;
		if (outermost)
			g->total[k] += delta[k];
	}
}

/* tt_arg_fn, on the walker whose table ctx is: summary --arg. */
static void on_arg(void *ctx, uint32_t thread, uint32_t name, uint32_t key, int64_t value)
{
	struct tt_ctr_agg *g = agg_of(ctx, thread, name);

	if (key >= TT_MAX_ARG_KEYS)
		return;
	/* Wraps like the program's own int64_t would, never traps. */
	g->arg_sum[key] = (int64_t)((uint64_t)g->arg_sum[key] + (uint64_t)value);
	g->arg_n[key]++;
}

struct tt_ctrs_file {
	struct tt_ctrs c;    /* c.rep: the file's report, kept in the merged one */
	const char *process; /* owned by the merged report */
};

static const struct tt_consumer ctrs_consumer = {
	.counters = on_counters,
	.arg = on_arg, /* with --arg only (front.c) */
};

/* Several files: file i's figures into a tt_ctrs of its own. */
static void file_begin(void *ctx, struct tt_walk_file *f)
{
	struct tt_ctrs *fc = &((struct tt_ctrs *)ctx)->files[f->index].c;

	fc->rep = f->rep;
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++)
		f->ctxs[r] = &fc->w[r];
}

/* ...merged: its process, and its counter names into the union. */
static enum tt_status file_end(void *ctx, struct tt_walk_file *f, char *msg, size_t msg_bytes)
{
	struct tt_ctrs *c = ctx;
	const struct tt_ctrs *fc = &c->files[f->index].c;
	struct tt_report *rep = c->rep;

	(void)msg, (void)msg_bytes;
	c->files[f->index].process = f->process;
	for (uint32_t g = 0; g < tt_ctrs_count(fc); g++) {
		const char *name = tt_ctrs_name(fc, g);

		if (tt_ctrs_find(c, name) == UINT32_MAX && rep->sc.nr_ctr < TT_MAX_COUNTERS)
			rep->sc.ctr_names[rep->sc.nr_ctr++] = tt_xstrndup(name, strlen(name));
	}
	return TT_OK;
}

void tt_ctrs_spec(struct tt_ctrs *c, struct tt_report *rep, const struct tt_options *o,
		  struct tt_walk_spec *spec)
{
	memset(c, 0, sizeof(*c));
	memset(spec, 0, sizeof(*spec));
	c->rep = rep;
	spec->cons = &ctrs_consumer;
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++)
		spec->ctxs[r] = &c->w[r];
	if (tt_options_multi(o)) {
		c->nr_files = o->nr_traces ? o->nr_traces : 1;
		c->files = tt_xcalloc(c->nr_files, sizeof(*c->files));
		spec->file_begin = file_begin;
		spec->file_end = file_end;
		spec->ctx = c;
		spec->keep_files = true;
	}
}

uint32_t tt_ctrs_find(const struct tt_ctrs *c, const char *name)
{
	for (uint32_t g = 0; g < tt_ctrs_count(c); g++)
		if (strcmp(tt_ctrs_name(c, g), name) == 0)
			return g;
	return UINT32_MAX;
}

void tt_ctrs_lookup(const struct tt_ctrs *c, const struct tt_options *o, const char *process,
		    const char *label, const char *name, struct tt_ctr_agg *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < c->nr_files; i++) {
		const struct tt_ctrs_file *f = &c->files[i];
		struct tt_ctr_agg one;

		if (!f->process || (process && strcmp(process, f->process) != 0))
			continue;
		tt_ctrs_lookup(&f->c, o, NULL, label, name, &one);
		for (uint32_t k = 0; k < TT_MAX_ARG_KEYS; k++) {
			out->arg_sum[k] = (int64_t)((uint64_t)out->arg_sum[k] + (uint64_t)one.arg_sum[k]);
			out->arg_n[k] += one.arg_n[k];
		}
		for (uint32_t g = 0; g < tt_ctrs_count(&f->c); g++) {
			uint32_t k = tt_ctrs_find(c, tt_ctrs_name(&f->c, g));

			if (k == UINT32_MAX)
				continue;
			out->total[k] += one.total[g];
			out->sum[k] += one.sum[g];
			out->n[k] += one.n[g];
		}
	}
	if (c->nr_files)
		return;
	for (unsigned r = 0; r < c->rep->nr_replicas; r++) {
		const struct tt_trace *tr = tt_report_replica(c->rep, r);
		const struct tt_ctrs_walker *w = &c->w[r];
		uint32_t n;

		for (n = 0; n < tr->nr_names && strcmp(tr->names[n], name) != 0; n++)
			;
		if (n == tr->nr_names)
			continue;
		for (uint32_t i = 0; i < tr->nr_threads && i < w->cap_threads; i++) {
			const struct tt_thread *th = &tr->threads[i];
			const struct tt_ctr_agg *g;

			if (n >= w->nr_agg[i] || !tt_options_thread_selected(o, th))
				continue;
			if (label) {
				char buf[4200];

				tt_thread_label(th, buf, sizeof(buf));
				if (strcmp(buf, label) != 0)
					continue;
			}
			g = &w->agg[i][n];
			for (uint32_t k = 0; k < TT_MAX_COUNTERS; k++) {
				out->total[k] += g->total[k];
				out->sum[k] += g->sum[k];
				out->n[k] += g->n[k];
			}
			for (uint32_t k = 0; k < TT_MAX_ARG_KEYS; k++) {
				out->arg_sum[k] = (int64_t)((uint64_t)out->arg_sum[k] +
							    (uint64_t)g->arg_sum[k]);
				out->arg_n[k] += g->arg_n[k];
			}
		}
	}
}

void tt_ctrs_fini(struct tt_ctrs *c)
{
	for (unsigned i = 0; i < c->nr_files; i++)
		tt_ctrs_fini(&c->files[i].c); /* its report is the merged one's */
	free(c->files);
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
		for (uint32_t i = 0; i < c->w[r].cap_threads; i++)
			free(c->w[r].agg[i]);
		free(c->w[r].agg);
		free(c->w[r].nr_agg);
	}
	memset(c, 0, sizeof(*c));
}
