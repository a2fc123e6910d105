/* SPDX-License-Identifier: MIT */
/*
 * annots.c - see annots.h. A consumer of the pairing engine that keeps the
 * value samples and flow events it is handed (16 and 32 bytes each), per
 * walker; after the walk they are sorted by name and time and reduced to
 * one row per track or flow name. Names are interned per walker and merged
 * by their text.
 */
#include "annots.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "report.h"
#include "scopes.h"
#include "xalloc.h"

struct sample {
	uint32_t track; /* global name index after the walk */
	bool is_double;
	uint64_t ticks;
	uint64_t seq; /* order of arrival on its walker: a thread's own order */
	int64_t i;
	double d;
};

struct flow_ev {
	uint32_t flow;
	uint32_t kind; /* TT_ANNOT_FLOW_* */
	bool in_window;
	uint64_t id, ticks, seq;
};

/* Names: interned strings, a hash of index + 1. */
struct names {
	char **v;
	uint32_t n, cap;
	uint32_t *hash;
	uint32_t mask;
};

static uint32_t hash_str(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static uint32_t intern(struct names *t, const char *s, size_t n)
{
	uint32_t slot;

	if (!t->hash || 2 * (t->n + 1) > t->mask) {
		uint32_t mask = t->mask ? 2 * t->mask + 1 : 63;
		uint32_t *h = tt_xcalloc((size_t)mask + 1, sizeof(*h));

		for (uint32_t k = 0; k < t->n; k++) {
			slot = hash_str(t->v[k], strlen(t->v[k])) & mask;
			while (h[slot])
				slot = (slot + 1) & mask;
			h[slot] = k + 1;
		}
		free(t->hash);
		t->hash = h;
		t->mask = mask;
	}
	/* As reports show it: names shown alike are one (emit.c). */
	char *shown = tt_emit_clean(s, n);

	slot = hash_str(shown, strlen(shown)) & t->mask;
	while (t->hash[slot]) {
		if (strcmp(t->v[t->hash[slot] - 1], shown) == 0) {
			free(shown);
			return t->hash[slot] - 1;
		}
		slot = (slot + 1) & t->mask;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->v = tt_xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n] = shown;
	t->hash[slot] = t->n + 1;
	return t->n++;
}

static void names_fini(struct names *t)
{
	for (uint32_t k = 0; k < t->n; k++)
		free(t->v[k]);
	free(t->v);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* One walker's collection. */
struct walker {
	unsigned what;
	struct names names;
	struct sample *samples;
	size_t nr_samples, cap_samples;
	struct flow_ev *flows;
	size_t nr_flows, cap_flows;
	uint64_t seq;
};

static void *an_thread_begin(void *ctx, const struct tt_thread *th)
{
	(void)th;
	return ctx;
}

static uint32_t an_enter(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			 bool in_window)
{
	(void)tctx;
	(void)parent_slot;
	(void)name;
	(void)ticks;
	(void)in_window;
	return 0;
}

static void an_act(void *tctx, const struct tt_activation *a)
{
	(void)tctx;
	(void)a;
}

static void an_annot(void *tctx, uint32_t slot, uint32_t depth, const struct tt_annot *a)
{
	struct walker *w = tctx;

	(void)slot;
	(void)depth;
	if (a->kind == TT_ANNOT_VALUE && (w->what & TT_ANNOTS_VALUES) && a->in_window) {
		struct sample *s;

		if (w->nr_samples == w->cap_samples) {
			w->cap_samples = w->cap_samples ? 2 * w->cap_samples : 256;
			w->samples = tt_xrealloc(w->samples, w->cap_samples * sizeof(*w->samples));
		}
		s = &w->samples[w->nr_samples++];
		s->track = intern(&w->names, a->name, a->name_bytes);
		s->is_double = a->is_double;
		s->ticks = a->ticks;
		s->seq = w->seq++;
		s->i = a->i;
		s->d = a->d;
	} else if (a->kind >= TT_ANNOT_FLOW_BEGIN && (w->what & TT_ANNOTS_FLOWS)) {
		struct flow_ev *f;

		if (w->nr_flows == w->cap_flows) {
			w->cap_flows = w->cap_flows ? 2 * w->cap_flows : 256;
			w->flows = tt_xrealloc(w->flows, w->cap_flows * sizeof(*w->flows));
		}
		f = &w->flows[w->nr_flows++];
		f->flow = intern(&w->names, a->name, a->name_bytes);
		f->kind = a->kind;
		f->in_window = a->in_window;
		f->id = a->id;
		f->ticks = a->ticks;
		f->seq = w->seq++;
	}
}

static const struct tt_consumer an_consumer = {
	.thread_begin = an_thread_begin,
	.enter = an_enter,
	.act = an_act,
	.annot = an_annot,
	.no_times = true,
};

static int cmp_samples(const void *pa, const void *pb)
{
	const struct sample *a = pa, *b = pb;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->ticks != b->ticks)
		return a->ticks < b->ticks ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_flows(const void *pa, const void *pb)
{
	const struct flow_ev *a = pa, *b = pb;

	if (a->flow != b->flow)
		return a->flow < b->flow ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->ticks != b->ticks)
		return a->ticks < b->ticks ? -1 : 1;
	/* At the same tick: a begin before a step before an end. */
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static struct tt_value_row *value_row(struct tt_annots *an, const char *track)
{
	uint32_t k;

	if (!an->vnames)
		an->vnames = tt_xcalloc(1, sizeof(struct names));
	k = intern(an->vnames, track, strlen(track));
	if (k < an->nr_values)
		return &an->values[k];
	if (an->nr_values == an->cap_values) {
		an->cap_values = an->cap_values ? 2 * an->cap_values : 16;
		an->values = tt_xrealloc(an->values, an->cap_values * sizeof(*an->values));
	}
	struct tt_value_row *r = &an->values[an->nr_values++];

	memset(r, 0, sizeof(*r));
	r->track = tt_xstrndup(track, strlen(track));
	r->last_wall_ns = INT64_MIN;
	return r;
}

static struct tt_flow_row *flow_row(struct tt_annots *an, const char *flow)
{
	uint32_t k;

	if (!an->fnames)
		an->fnames = tt_xcalloc(1, sizeof(struct names));
	k = intern(an->fnames, flow, strlen(flow));
	if (k < an->nr_flows)
		return &an->flows[k];
	if (an->nr_flows == an->cap_flows) {
		an->cap_flows = an->cap_flows ? 2 * an->cap_flows : 16;
		an->flows = tt_xrealloc(an->flows, an->cap_flows * sizeof(*an->flows));
	}
	struct tt_flow_row *r = &an->flows[an->nr_flows++];

	memset(r, 0, sizeof(*r));
	r->flow = tt_xstrndup(flow, strlen(flow));
	r->min_ns = UINT64_MAX;
	return r;
}

static double as_double(const struct sample *s)
{
	return s->is_double ? s->d : (double)s->i;
}

/*
 * One track's samples s[0..n) in time order into its row: each holds its
 * value until the next sample, the last one until end_ticks (the end of
 * the window or of the recording, whichever is first).
 */
static void add_track(struct tt_value_row *r, const struct sample *s, size_t n,
		      const struct tt_clock *c, uint64_t end_ticks, int64_t wall0_ns)
{
	bool dbl = r->is_double;

	for (size_t k = 0; k < n; k++)
		dbl |= s[k].is_double;
	if (dbl && !r->is_double && r->samples) {
		/* Earlier files' integer figures become doubles. */
		r->min_d = (double)r->min_i;
		r->max_d = (double)r->max_i;
		r->last_d = (double)r->last_i;
	}
	r->is_double = dbl;
	for (size_t k = 0; k < n; k++) {
		const uint64_t next = k + 1 < n ? s[k + 1].ticks : end_ticks;
		const uint64_t held = next > s[k].ticks ? tt_clock_ns(c, next - s[k].ticks) : 0;
		const double v = as_double(&s[k]);

		if (dbl) {
			if (!r->samples || v < r->min_d)
				r->min_d = v;
			if (!r->samples || v > r->max_d)
				r->max_d = v;
			r->wsum += (long double)v * held;
		} else {
			if (!r->samples || s[k].i < r->min_i)
				r->min_i = s[k].i;
			if (!r->samples || s[k].i > r->max_i)
				r->max_i = s[k].i;
			r->wsum += (long double)s[k].i * held;
		}
		r->sum += dbl ? (long double)v : (long double)s[k].i;
		r->wns += held;
		r->samples++;
	}
	if (n) {
		int64_t wall = wall0_ns + tt_clock_rel_ns(c, s[n - 1].ticks);

		if (wall >= r->last_wall_ns) {
			r->last_wall_ns = wall;
			r->last_i = s[n - 1].i;
			r->last_d = as_double(&s[n - 1]);
		}
	}
}

/* One flow name's events f[0..n), sorted by id and time, into its row. */
static void add_flow(struct tt_flow_row *r, const struct flow_ev *f, size_t n,
		     const struct tt_clock *c)
{
	size_t k = 0;

	while (k < n) {
		const uint64_t id = f[k].id;
		const struct flow_ev *open = NULL;
		uint64_t steps = 0;

		for (; k < n && f[k].id == id; k++) {
			switch (f[k].kind) {
			case TT_ANNOT_FLOW_BEGIN:
				/* Begun again before it ended: the earlier one is
				 * unfinished. */
				if (open && open->in_window) {
					r->unfinished++;
					r->steps += steps;
				}
				open = &f[k];
				steps = 0;
				break;
			case TT_ANNOT_FLOW_STEP:
				steps += open != NULL;
				break;
			default: /* END */
				if (!open) {
					r->orphan_ends += f[k].in_window;
					break;
				}
				if (open->in_window) {
					/* Sorted by ticks: never earlier, unless the
					 * times are equal. */
					uint64_t ns = tt_clock_ns(c, f[k].ticks - open->ticks);

					r->count++;
					r->steps += steps;
					r->sum_ns += ns;
					r->min_ns = ns < r->min_ns ? ns : r->min_ns;
					r->max_ns = ns > r->max_ns ? ns : r->max_ns;
					tt_hist_add(&r->hist, tt_hist_index(ns), 1);
				}
				open = NULL;
				break;
			}
		}
		if (open && open->in_window) {
			r->unfinished++;
			r->steps += steps;
		}
	}
}

/* One file's walk and its rows merged into an. */
static enum tt_status run_file(struct tt_annots *an, const struct tt_options *fo, unsigned what,
			       char *msg, size_t msg_bytes)
{
	struct walker w[TT_REPORT_MAX_REPLICAS];
	void *ctxs[TT_REPORT_MAX_REPLICAS];
	struct tt_report rep;
	struct names all = { 0 };
	struct sample *s = NULL;
	struct flow_ev *f = NULL;
	size_t ns = 0, nf = 0;
	enum tt_status st;
	uint64_t end_ticks;
	int64_t wall0_ns;

	memset(w, 0, sizeof(w));
	for (unsigned r = 0; r < TT_REPORT_MAX_REPLICAS; r++) {
		w[r].what = what;
		ctxs[r] = &w[r];
	}
	st = tt_report_run_views(&rep, fo, NULL, NULL, &an_consumer, ctxs, msg, msg_bytes);
	if (st != TT_OK)
		goto out;
	tt_trace_warn(&rep.tr);
	/* The file's start on the wall clock: the last value across files. */
	wall0_ns = (int64_t)(rep.tr.hdr.start_real_ns & INT64_MAX);
	an->any_truncated |= rep.tr.truncated;
	an->any_damaged |= rep.tr.nr_bad_frames || rep.tr.nr_lost_frames || rep.tr.nr_bad_blocks;
	if (rep.problems[0] && !an->problems[0])
		snprintf(an->problems, sizeof(an->problems), "%s", rep.problems);
	/* The last sample holds until the window's end or the recording's. */
	end_ticks = rep.tr.max_ticks;
	if (rep.sc.win_span_ticks != UINT64_MAX &&
	    rep.sc.win_lo_ticks + rep.sc.win_span_ticks >= rep.sc.win_lo_ticks &&
	    rep.sc.win_lo_ticks + rep.sc.win_span_ticks < end_ticks)
		end_ticks = rep.sc.win_lo_ticks + rep.sc.win_span_ticks;
	for (unsigned r = 0; r < rep.nr_replicas; r++) {
		an->nr_unbound += (r ? &rep.more_sc[r - 1] : &rep.sc)->nr_unbound;
		ns += w[r].nr_samples;
		nf += w[r].nr_flows;
	}
	s = tt_xcalloc(ns + 1, sizeof(*s));
	f = tt_xcalloc(nf + 1, sizeof(*f));
	ns = nf = 0;
	for (unsigned r = 0; r < rep.nr_replicas; r++) {
		uint32_t *map = tt_xcalloc((size_t)w[r].names.n + 1, sizeof(*map));

		for (uint32_t k = 0; k < w[r].names.n; k++)
			map[k] = intern(&all, w[r].names.v[k], strlen(w[r].names.v[k]));
		for (size_t k = 0; k < w[r].nr_samples; k++) {
			s[ns] = w[r].samples[k];
			s[ns].track = map[s[ns].track];
			/* Walkers hold whole threads: keep each one's order. */
			s[ns++].seq += (uint64_t)r << 56;
		}
		for (size_t k = 0; k < w[r].nr_flows; k++) {
			f[nf] = w[r].flows[k];
			f[nf].flow = map[f[nf].flow];
			f[nf++].seq += (uint64_t)r << 56;
		}
		free(map);
	}
	qsort(s, ns, sizeof(*s), cmp_samples);
	qsort(f, nf, sizeof(*f), cmp_flows);
	for (size_t k = 0, e; k < ns; k = e) {
		for (e = k; e < ns && s[e].track == s[k].track; e++)
			;
		if (tt_options_function_selected(fo, all.v[s[k].track]))
			add_track(value_row(an, all.v[s[k].track]), s + k, e - k, &rep.clock, end_ticks,
				  wall0_ns);
	}
	for (size_t k = 0, e; k < nf; k = e) {
		for (e = k; e < nf && f[e].flow == f[k].flow; e++)
			;
		if (tt_options_function_selected(fo, all.v[f[k].flow]))
			add_flow(flow_row(an, all.v[f[k].flow]), f + k, e - k, &rep.clock);
	}
out:
	for (unsigned r = 0; r < TT_REPORT_MAX_REPLICAS; r++) {
		names_fini(&w[r].names);
		free(w[r].samples);
		free(w[r].flows);
	}
	names_fini(&all);
	free(s);
	free(f);
	tt_report_fini(&rep);
	return st;
}

static int cmp_value_rows(const void *pa, const void *pb)
{
	return strcmp(((const struct tt_value_row *)pa)->track,
		      ((const struct tt_value_row *)pb)->track);
}

static int cmp_flow_rows(const void *pa, const void *pb)
{
	return strcmp(((const struct tt_flow_row *)pa)->flow,
		      ((const struct tt_flow_row *)pb)->flow);
}

enum tt_status tt_annots_run(struct tt_annots *a, const struct tt_options *o, unsigned what,
			     const char **failed, char *msg, size_t msg_bytes)
{
	memset(a, 0, sizeof(*a));
	for (unsigned i = 0; i < (o->nr_traces ? o->nr_traces : 1); i++) {
		struct tt_options fo;

		tt_report_file_options(o, i, &fo);
		if (run_file(a, &fo, what, msg, msg_bytes) != TT_OK) {
			*failed = fo.trace;
			return TT_ERR_FILE;
		}
	}
	/* Sorted: the name indices no longer match the rows. */
	if (a->vnames)
		names_fini(a->vnames);
	if (a->fnames)
		names_fini(a->fnames);
	free(a->vnames);
	free(a->fnames);
	a->vnames = a->fnames = NULL;
	if (a->nr_values)
		qsort(a->values, a->nr_values, sizeof(*a->values), cmp_value_rows);
	if (a->nr_flows)
		qsort(a->flows, a->nr_flows, sizeof(*a->flows), cmp_flow_rows);
	return TT_OK;
}

double tt_value_mean(const struct tt_value_row *r)
{
	if (!r->samples)
		return 0;
	/* Samples that held no time at all (all at the end): their plain mean. */
	if (!r->wns)
		return (double)(r->sum / r->samples);
	return (double)(r->wsum / r->wns);
}

void tt_annots_fini(struct tt_annots *a)
{
	for (size_t i = 0; i < a->nr_values; i++)
		free(a->values[i].track);
	for (size_t i = 0; i < a->nr_flows; i++) {
		free(a->flows[i].flow);
		tt_hist_free_chunks(&a->flows[i].hist);
	}
	free(a->values);
	free(a->flows);
	if (a->vnames)
		names_fini(a->vnames);
	if (a->fnames)
		names_fini(a->fnames);
	free(a->vnames);
	free(a->fnames);
	memset(a, 0, sizeof(*a));
}
