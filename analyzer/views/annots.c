/* SPDX-License-Identifier: MIT */
/*
 * annots.c - see annots.h. A consumer of the pairing engine on one walker
 * (the annotations in the order of the file) that folds each value sample
 * and flow event into per-track and per-flow figures as it goes: its
 * memory follows the tracks, flow names and open flows, not the number of
 * annotations (docs/ANALYZER.md "Annotations": memory of values and flows).
 *
 * Order: a track's time-weighted mean needs its samples in time order, a
 * flow's pairing its events in time order, across threads. The file gives
 * each thread's annotations in order but interleaves threads by blocks, so
 * each kind passes through a reorder queue (reorder.h) of at most REORDER
 * entries, which releases the earliest (ticks, then arrival) when full and
 * everything at the end, in O(log REORDER) per annotation whatever the
 * order. Whatever arrives less than REORDER annotations after a later one
 * is placed exactly; an annotation that comes later than that is counted
 * (late), folded in as documented, and a warning says so.
 */
#include "views/annots.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/emit.h"
#include "common/hmap.h"
#include "common/reorder.h"
#include "engine/front.h"
#include "engine/report.h"
#include "engine/scopes.h"
#include "common/xalloc.h"

/* Entries of each reorder queue, at most (40 and 32 bytes each). */
#define REORDER (1u << 16)

/* Names: interned strings, as reports show them. */
struct names {
	char **v;
	uint32_t n, cap;
	struct tt_hmap map; /* hmap.h: names by their bytes */
};

struct name_probe {
	const struct names *t;
	const char *s;
};

static bool name_eq(const void *ctx, uint32_t id)
{
	const struct name_probe *p = ctx;

	return strcmp(p->t->v[id], p->s) == 0;
}

/* The index of s[0..n) in t, as reports show it; *added: it is new. */
static uint32_t intern(struct names *t, const char *s, size_t n, bool *added)
{
	/* As reports show it: names shown alike are one (emit.c). */
	char *shown = tt_emit_clean(s, n);
	const struct name_probe p = { t, shown };
	uint32_t h = tt_hash_bytes(shown, strlen(shown)); /* seeded: hmap.h */
	uint32_t id = tt_hmap_find(&t->map, h, name_eq, &p);

	*added = id == TT_HMAP_NONE;
	if (!*added) {
		free(shown);
		return id;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->v = tt_xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n] = shown;
	tt_hmap_put(&t->map, h, t->n);
	return t->n++;
}

static void names_fini(struct names *t)
{
	for (uint32_t k = 0; k < t->n; k++)
		free(t->v[k]);
	free(t->v);
	tt_hmap_fini(&t->map);
	memset(t, 0, sizeof(*t));
}

/* A value sample, waiting in the reorder heap. */
struct sample {
	uint64_t ticks;
	uint64_t seq; /* order of arrival: a thread's own order */
	int64_t i;
	double d;
	uint32_t track; /* the file's track index */
	bool is_double;
};

/* A flow event, waiting in the reorder heap. */
struct flow_ev {
	uint64_t ticks, seq, id;
	uint32_t flow; /* the file's flow name index */
	uint8_t kind;  /* TT_ANNOT_FLOW_* */
	bool in_window;
};

/*
 * One track of one file, folded in time order. Both readings of each
 * sample are kept (integer and double) because whether the row prints
 * doubles is known only when every file is read; the weights are ticks,
 * converted with the file's final clock at its end.
 */
struct track {
	bool selected; /* --function */
	bool any_double;
	bool has_prev, has_nn;
	uint64_t samples, late;
	int64_t min_i, max_i;
	double min_d, max_d;	   /* in order; a NaN first sticks (as `<` does) */
	double min_nn, max_nn;	   /* of the samples that are not NaN */
	long double sum_i, sum_d;  /* plain sums */
	long double wsum_i, wsum_d; /* value × ticks it held */
	uint64_t wticks;	   /* ticks the samples held */
	struct sample prev;	   /* the latest sample, holding until the next */
};

/* One flow name of one file; latencies in ticks. */
struct flow_name {
	bool selected;
	uint64_t count, unfinished, orphan_ends, steps;
	uint64_t min_ticks, max_ticks, sum_ticks;
	struct tt_hist hist;
};

/* An open flow (begun, not yet ended): the key is (flow, id). */
struct open_flow {
	uint64_t id;
	uint64_t begin_ticks, steps;
	uint32_t flow_plus1;
	bool in_window;
};


static bool sample_before(const struct sample *a, const struct sample *b)
{
	if (a->ticks != b->ticks)
		return a->ticks < b->ticks;
	return a->seq < b->seq;
}

/* At the same tick: a begin before a step before an end, then arrival. */
static bool flow_before(const struct flow_ev *a, const struct flow_ev *b)
{
	if (a->ticks != b->ticks)
		return a->ticks < b->ticks;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->seq < b->seq;
}

static bool sample_before_v(const void *a, const void *b)
{
	return sample_before(a, b);
}

static bool flow_before_v(const void *a, const void *b)
{
	return flow_before(a, b);
}

/* One file's walk (a single walker: no lock). */
struct walker {
	unsigned what;
	const struct tt_options *fo;
	struct names vnames, fnames;
	struct track *tracks;
	uint32_t cap_tracks;
	struct flow_name *fl;
	uint32_t cap_fl;
	struct tt_reorder vq, fq;    /* reorder queues (reorder.h) */
	struct an_thread **threads; /* thread_begin's, to free */
	size_t nr_threads, cap_threads;
	struct open_flow *open; /* the flows begun and not ended, in no order */
	uint32_t nr_open, cap_open;
	struct tt_hmap open_map; /* hmap.h: open flows by (flow, id) */
	uint64_t seq;
	uint64_t late_values, late_flows;
	bool has_fprev; /* the last flow event released, for lateness */
	struct flow_ev fprev;
};

/* A thread of the walk: its FIFOs (thread_begin's context). */
struct an_thread {
	struct walker *w;
	struct tt_reorder_src values, flows;
};

static double as_double(const struct sample *s)
{
	return s->is_double ? s->d : (double)s->i;
}

/* Sample s of its track, in time order: the previous sample held until s. */
static void fold_sample(struct walker *w, const struct sample *s)
{
	struct track *t = &w->tracks[s->track];
	const double v = as_double(s);
	const bool nan = v != v;
	bool late = false;

	if (t->has_prev) {
		if (sample_before(s, &t->prev)) {
			/* Came too late to be placed: counted, holds no time. */
			late = true;
			t->late++;
			w->late_values++;
		} else {
			const uint64_t held = s->ticks - t->prev.ticks;

			t->wsum_i += (long double)t->prev.i * held;
			t->wsum_d += (long double)as_double(&t->prev) * held;
			t->wticks += held;
		}
	}
	if (!t->samples) {
		t->min_i = t->max_i = s->i;
		t->min_d = t->max_d = v;
	} else {
		if (s->i < t->min_i)
			t->min_i = s->i;
		if (s->i > t->max_i)
			t->max_i = s->i;
		if (v < t->min_d)
			t->min_d = v;
		if (v > t->max_d)
			t->max_d = v;
	}
	if (!nan) {
		if (!t->has_nn || v < t->min_nn)
			t->min_nn = v;
		if (!t->has_nn || v > t->max_nn)
			t->max_nn = v;
		t->has_nn = true;
	}
	t->any_double |= s->is_double;
	t->sum_i += (long double)s->i;
	t->sum_d += (long double)v;
	t->samples++;
	if (!late) {
		t->prev = *s;
		t->has_prev = true;
	}
}

/*
 * The open flows' map is keyed by ids the file chooses: with a fixed hash
 * a crafted file puts 10^6 open flows in one slot (hours of probing; issue
 * 26). So the id goes through the keyed hash (hmap.h), and the flow with
 * it through that hash again: (flow, id) pairs crafted to share a slot need
 * the key. Nothing printed depends on the order: the unfinished flows are
 * summed per name.
 */
static uint32_t open_hash(uint32_t flow, uint64_t id)
{
	return tt_hash_u64((uint64_t)flow << 32 | tt_hash_u64(id));
}

struct open_key {
	const struct walker *w;
	uint32_t flow;
	uint64_t id;
};

static bool open_eq(const void *ctx, uint32_t k)
{
	const struct open_key *key = ctx;
	const struct open_flow *o = &key->w->open[k];

	return o->flow_plus1 == key->flow + 1 && o->id == key->id;
}

/* The open flow (flow, id), or NULL. */
static struct open_flow *open_find(struct walker *w, uint32_t flow, uint64_t id)
{
	const struct open_key key = { w, flow, id };
	uint32_t k = tt_hmap_find(&w->open_map, open_hash(flow, id), open_eq, &key);

	return k == TT_HMAP_NONE ? NULL : &w->open[k];
}

/* A new open flow (flow, id), its figures for the caller to set. */
static struct open_flow *open_add(struct walker *w, uint32_t flow, uint64_t id)
{
	if (w->nr_open == w->cap_open) {
		w->cap_open = w->cap_open ? 2 * w->cap_open : 256;
		w->open = tt_xrealloc(w->open, (size_t)w->cap_open * sizeof(*w->open));
	}
	tt_hmap_put(&w->open_map, open_hash(flow, id), w->nr_open);
	return &w->open[w->nr_open++];
}

/* Ends the open flow o: the last one takes its place. */
static void open_delete(struct walker *w, struct open_flow *o)
{
	uint32_t k = (uint32_t)(o - w->open), last = w->nr_open - 1;

	tt_hmap_remove(&w->open_map, open_hash(o->flow_plus1 - 1, o->id), k);
	if (k != last) {
		*o = w->open[last];
		tt_hmap_renumber(&w->open_map, open_hash(o->flow_plus1 - 1, o->id), last, k);
	}
	w->nr_open--;
}

/* The open flow's figures into its name: begun, never ended. */
static void flow_unfinished(struct walker *w, const struct open_flow *o)
{
	struct flow_name *fn = &w->fl[o->flow_plus1 - 1];

	if (o->in_window) {
		fn->unfinished++;
		fn->steps += o->steps;
	}
}

/* Flow event e, in time order among the events of its (flow, id). */
static void fold_flow(struct walker *w, const struct flow_ev *e)
{
	struct flow_name *fn = &w->fl[e->flow];
	struct open_flow *o;

	if (w->has_fprev && flow_before(e, &w->fprev))
		w->late_flows++; /* may be misplaced among its flow's events */
	else
		w->fprev = *e;
	w->has_fprev = true;
	o = open_find(w, e->flow, e->id);
	switch (e->kind) {
	case TT_ANNOT_FLOW_BEGIN:
		if (o) {
			/* Begun again before it ended: the earlier one is
			 * unfinished. */
			flow_unfinished(w, o);
		} else {
			o = open_add(w, e->flow, e->id);
		}
		o->id = e->id;
		o->flow_plus1 = e->flow + 1;
		o->begin_ticks = e->ticks;
		o->in_window = e->in_window;
		o->steps = 0;
		break;
	case TT_ANNOT_FLOW_STEP:
		if (o)
			o->steps++;
		break;
	default: /* END */
		if (!o) {
			fn->orphan_ends += e->in_window;
			break;
		}
		if (o->in_window) {
			/* In time order: never earlier, unless late. */
			const uint64_t t = e->ticks > o->begin_ticks ? e->ticks - o->begin_ticks : 0;

			fn->count++;
			fn->steps += o->steps;
			fn->sum_ticks += t;
			fn->min_ticks = t < fn->min_ticks ? t : fn->min_ticks;
			fn->max_ticks = t > fn->max_ticks ? t : fn->max_ticks;
			tt_hist_add(&fn->hist, tt_hist_index(t), 1);
		}
		open_delete(w, o);
		break;
	}
}

static void *an_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct walker *w = ctx;
	struct an_thread *t = tt_xcalloc(1, sizeof(*t));

	(void)th;
	t->w = w;
	if (w->nr_threads == w->cap_threads) {
		w->cap_threads = w->cap_threads ? 2 * w->cap_threads : 16;
		w->threads = tt_xrealloc(w->threads, w->cap_threads * sizeof(*w->threads));
	}
	w->threads[w->nr_threads++] = t;
	return t;
}

static void an_act(void *tctx, const struct tt_activation *a)
{
	(void)tctx;
	(void)a;
}

/*
 * The file's index of a's name in t, its state (*v)[k] of elem bytes
 * grown and zeroed when the name is new (*added).
 */
static uint32_t name_state(struct names *t, void **v, uint32_t *cap, size_t elem,
			   const struct tt_annot *a, bool *added)
{
	uint32_t k = intern(t, a->name, a->name_bytes, added);

	if (*added) {
		if (k == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			*v = tt_xrealloc(*v, (size_t)*cap * elem);
		}
		memset((char *)*v + (size_t)k * elem, 0, elem);
	}
	return k;
}

/* The file's index of a track (tracks) or flow name (fl). */
static uint32_t value_name(struct walker *w, const struct tt_annot *a)
{
	bool added;
	uint32_t k = name_state(&w->vnames, (void **)&w->tracks, &w->cap_tracks,
				sizeof(*w->tracks), a, &added);

	if (added)
		w->tracks[k].selected = tt_options_function_selected(w->fo, w->vnames.v[k]);
	return k;
}

static uint32_t flow_name(struct walker *w, const struct tt_annot *a)
{
	bool added;
	uint32_t k = name_state(&w->fnames, (void **)&w->fl, &w->cap_fl, sizeof(*w->fl), a, &added);

	if (added) {
		w->fl[k].selected = tt_options_function_selected(w->fo, w->fnames.v[k]);
		w->fl[k].min_ticks = UINT64_MAX;
	}
	return k;
}

static void an_annot(void *tctx, uint32_t slot, uint32_t depth, const struct tt_annot *a)
{
	struct an_thread *th = tctx;
	struct walker *w = th->w;

	(void)slot;
	(void)depth;
	if (a->kind == TT_ANNOT_VALUE && (w->what & TT_ANNOTS_VALUES) && a->in_window) {
		struct sample s = {
			.ticks = a->ticks,
			.seq = w->seq++,
			.i = a->i,
			.d = a->d,
			.track = value_name(w, a),
			.is_double = a->is_double,
		};

		if (!w->tracks[s.track].selected)
			return;
		if (!tt_reorder_push(&w->vq, &th->values, &s)) {
			tt_reorder_pop(&w->vq, &s);
			fold_sample(w, &s);
		}
	} else if (a->kind >= TT_ANNOT_FLOW_BEGIN && (w->what & TT_ANNOTS_FLOWS)) {
		struct flow_ev f = {
			.ticks = a->ticks,
			.seq = w->seq++,
			.id = a->id,
			.flow = flow_name(w, a),
			.kind = (uint8_t)a->kind,
			.in_window = a->in_window,
		};

		if (!w->fl[f.flow].selected)
			return;
		if (!tt_reorder_push(&w->fq, &th->flows, &f)) {
			tt_reorder_pop(&w->fq, &f);
			fold_flow(w, &f);
		}
	}
}

static const struct tt_consumer an_consumer = {
	.thread_begin = an_thread_begin,
	.act = an_act,
	.annot = an_annot,
	.one_walker = true, /* the file's order, which the reorder heaps need */
	.no_times = true,
};

_Static_assert(offsetof(struct tt_value_row, track) == 0, "row_of(): the name comes first");
_Static_assert(offsetof(struct tt_flow_row, flow) == 0, "row_of(): the name comes first");

/*
 * The row of name in the report, added if new (*added); rows[]/nr/cap are a's
 * value or flow rows, of elem bytes each, the name at offset 0.
 */
static void *row_of(struct names **tab, void **rows, size_t *nr, size_t *cap, size_t elem,
		    const char *name, bool *added)
{
	uint32_t k;

	if (!*tab)
		*tab = tt_xcalloc(1, sizeof(struct names));
	k = intern(*tab, name, strlen(name), added);
	if (!*added)
		return (char *)*rows + (size_t)k * elem;
	if (*nr == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*rows = tt_xrealloc(*rows, *cap * elem);
	}
	char *r = (char *)*rows + (*nr)++ * elem;
	char *copy = tt_xstrndup(name, strlen(name));

	memset(r, 0, elem);
	memcpy(r, &copy, sizeof(copy)); /* the row's name, its first member */
	return r;
}

static struct tt_value_row *value_row(struct tt_annots *an, const char *track)
{
	bool added;
	struct tt_value_row *r = row_of(&an->vnames, (void **)&an->values, &an->nr_values,
					&an->cap_values, sizeof(*r), track, &added);

	if (added)
		r->last_wall_ns = INT64_MIN;
	return r;
}

static struct tt_flow_row *flow_row(struct tt_annots *an, const char *flow)
{
	bool added;
	struct tt_flow_row *r = row_of(&an->fnames, (void **)&an->flows, &an->nr_flows,
				       &an->cap_flows, sizeof(*r), flow, &added);

	if (added)
		r->min_ns = UINT64_MAX;
	return r;
}

/*
 * A weighted sum over wticks ticks, in value × ns: scaled by the same
 * rounded ns as the weights (wns), so that a file's mean is exactly
 * Σ value × ticks / Σ ticks whatever its clock.
 */
static long double wsum_ns(const struct tt_clock *c, long double wsum, uint64_t wticks)
{
	if (c->num == c->den || !wticks)
		return wsum;
	return wsum * tt_clock_ns(c, wticks) / wticks;
}

/*
 * One file's track into its row: the last sample holds until end_ticks
 * (the end of the window or of the recording, whichever is first). Rows
 * of several files add up; a row prints doubles once any sample was one.
 */
static void add_track(struct tt_value_row *r, struct track *t, const struct tt_clock *c,
		      uint64_t end_ticks, int64_t wall0_ns)
{
	const bool dbl = r->is_double || t->any_double;

	if (t->has_prev && end_ticks > t->prev.ticks) {
		const uint64_t held = end_ticks - t->prev.ticks;

		t->wsum_i += (long double)t->prev.i * held;
		t->wsum_d += (long double)as_double(&t->prev) * held;
		t->wticks += held;
	}
	if (dbl && !r->is_double && r->samples) {
		/* Earlier files' integer figures become doubles. */
		r->min_d = (double)r->min_i;
		r->max_d = (double)r->max_i;
		r->last_d = (double)r->last_i;
	}
	r->is_double = dbl;
	if (dbl) {
		/* As if compared one by one after the row's: a NaN first sticks,
		 * later NaNs never win. */
		if (!r->samples) {
			r->min_d = t->min_d;
			r->max_d = t->max_d;
		} else if (t->has_nn) {
			if (t->min_nn < r->min_d)
				r->min_d = t->min_nn;
			if (t->max_nn > r->max_d)
				r->max_d = t->max_nn;
		}
		r->wsum += wsum_ns(c, t->wsum_d, t->wticks);
		r->sum += t->sum_d;
	} else {
		if (!r->samples || t->min_i < r->min_i)
			r->min_i = t->min_i;
		if (!r->samples || t->max_i > r->max_i)
			r->max_i = t->max_i;
		r->wsum += wsum_ns(c, t->wsum_i, t->wticks);
		r->sum += t->sum_i;
	}
	r->wns += tt_clock_ns(c, t->wticks);
	r->samples += t->samples;
	if (t->has_prev) {
		int64_t wall = tt_ns_add(wall0_ns, tt_clock_rel_ns(c, t->prev.ticks));

		if (wall >= r->last_wall_ns) {
			r->last_wall_ns = wall;
			r->last_i = t->prev.i;
			r->last_d = as_double(&t->prev);
		}
	}
}

static uint64_t map_ns(const void *ctx, uint64_t ticks)
{
	return tt_clock_ns(ctx, ticks);
}

/* One file's flow name into its row (latencies become ns). */
static void add_flow(struct tt_flow_row *r, struct flow_name *f, const struct tt_clock *c)
{
	const bool first = !r->count;

	r->count += f->count;
	r->unfinished += f->unfinished;
	r->orphan_ends += f->orphan_ends;
	r->steps += f->steps;
	if (!f->count)
		return;
	r->sum_ns += tt_clock_ns(c, f->sum_ticks);
	if (tt_clock_ns(c, f->min_ticks) < r->min_ns)
		r->min_ns = tt_clock_ns(c, f->min_ticks);
	if (tt_clock_ns(c, f->max_ticks) > r->max_ns)
		r->max_ns = tt_clock_ns(c, f->max_ticks);
	if (first) {
		/* The row's first latencies: kept in this file's ticks. */
		r->hist = f->hist;
		memset(&f->hist, 0, sizeof(f->hist));
		r->hist_clock = *c;
		r->hist_min = f->min_ticks;
		r->hist_max = f->max_ticks;
		return;
	}
	if (r->hist_clock.num != r->hist_clock.den) {
		/* A second file: the row's histogram becomes ns. */
		struct tt_hist ns = { 0 };

		tt_hist_merge_mapped(&ns, &r->hist, map_ns, &r->hist_clock);
		tt_hist_free_chunks(&r->hist);
		r->hist = ns;
		r->hist_clock.num = r->hist_clock.den = 1;
	}
	r->hist_min = r->min_ns;
	r->hist_max = r->max_ns;
	if (c->num == c->den)
		tt_hist_merge(&r->hist, &f->hist);
	else
		tt_hist_merge_mapped(&r->hist, &f->hist, map_ns, c);
}

uint64_t tt_flow_percentile(const struct tt_flow_row *r, double q)
{
	if (!r->count)
		return 0;
	return tt_clock_ns(&r->hist_clock,
			   tt_hist_percentile(&r->hist, r->count, q, r->hist_min, r->hist_max));
}

static void walker_fini(struct walker *w)
{
	for (uint32_t k = 0; k < w->fnames.n; k++)
		tt_hist_free_chunks(&w->fl[k].hist);
	names_fini(&w->vnames);
	names_fini(&w->fnames);
	free(w->tracks);
	free(w->fl);
	for (size_t k = 0; k < w->nr_threads; k++) {
		tt_reorder_src_fini(&w->threads[k]->values);
		tt_reorder_src_fini(&w->threads[k]->flows);
		free(w->threads[k]);
	}
	free(w->threads);
	tt_reorder_fini(&w->vq);
	tt_reorder_fini(&w->fq);
	free(w->open);
	tt_hmap_fini(&w->open_map);
}

/* A walk of tt_annots_run(): the file being read has walker w. */
struct pass {
	struct tt_annots *an;
	unsigned what;
	struct walker w;
	bool live; /* w is set up and not yet finished */
};

/* Each file (front.h, each_file): a walker of its own... */
static void file_begin(void *ctx, struct tt_walk_file *f)
{
	struct pass *p = ctx;
	struct walker *w = &p->w;

	memset(w, 0, sizeof(*w));
	w->what = p->what;
	w->fo = f->o;
	tt_reorder_init(&w->vq, sizeof(struct sample), sample_before_v, REORDER);
	tt_reorder_init(&w->fq, sizeof(struct flow_ev), flow_before_v, REORDER);
	p->live = true;
	f->ctxs[0] = w;
}

/* ...whose samples and flows fold into its tracks and flows, merged into
 * an's rows. */
static enum tt_status file_end(void *ctx, struct tt_walk_file *f, char *msg, size_t msg_bytes)
{
	struct pass *p = ctx;
	struct tt_annots *an = p->an;
	struct walker *w = &p->w;
	struct tt_report *rep = f->rep;
	const struct tt_options *fo = f->o;
	uint64_t end_ticks;
	int64_t wall0_ns;

	(void)msg, (void)msg_bytes;
	tt_trace_warn(&rep->tr);
	/* The file's start on the wall clock: the last value across files. */
	wall0_ns = (int64_t)(rep->tr.hdr.start_real_ns & INT64_MAX);
	an->any_truncated |= rep->tr.truncated;
	an->any_damaged |= rep->tr.nr_bad_frames || rep->tr.nr_lost_frames || rep->tr.nr_bad_blocks;
	if (rep->problems[0] && !an->problems[0])
		snprintf(an->problems, sizeof(an->problems), "%s", rep->problems);
	/* The last sample holds until the window's end or the recording's. */
	end_ticks = rep->tr.max_ticks;
	if (rep->sc.win_span_ticks != UINT64_MAX &&
	    rep->sc.win_lo_ticks + rep->sc.win_span_ticks >= rep->sc.win_lo_ticks &&
	    rep->sc.win_lo_ticks + rep->sc.win_span_ticks < end_ticks)
		end_ticks = rep->sc.win_lo_ticks + rep->sc.win_span_ticks;
	for (unsigned r = 0; r < rep->nr_replicas; r++)
		an->nr_unbound += tt_report_replica_scopes(rep, r)->nr_unbound;
	while (w->vq.total) {
		struct sample s;

		tt_reorder_pop(&w->vq, &s);
		fold_sample(w, &s);
	}
	while (w->fq.total) {
		struct flow_ev fl;

		tt_reorder_pop(&w->fq, &fl);
		fold_flow(w, &fl);
	}
	for (uint32_t k = 0; k < w->nr_open; k++)
		flow_unfinished(w, &w->open[k]);
	for (uint32_t k = 0; k < w->vnames.n; k++)
		if (w->tracks[k].selected && w->tracks[k].samples)
			add_track(value_row(an, w->vnames.v[k]), &w->tracks[k], &rep->clock,
				  end_ticks, wall0_ns);
	for (uint32_t k = 0; k < w->fnames.n; k++)
		if (w->fl[k].selected)
			add_flow(flow_row(an, w->fnames.v[k]), &w->fl[k], &rep->clock);
	if (w->late_values)
		fprintf(stderr,
			"tracetool: %s: warning: %" PRIu64 " value samples came more than %u "
			"annotations out of time order: the mean of their tracks is approximate\n",
			fo->trace, w->late_values, REORDER);
	if (w->late_flows)
		fprintf(stderr,
			"tracetool: %s: warning: %" PRIu64 " flow events came more than %u "
			"annotations out of time order: their flows may be paired approximately\n",
			fo->trace, w->late_flows, REORDER);
	walker_fini(w);
	p->live = false;
	return TT_OK;
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
	struct pass *p = tt_xcalloc(1, sizeof(*p));
	struct tt_walk_spec spec = { .cons = &an_consumer, .file_begin = file_begin,
				     .file_end = file_end, .ctx = p, .each_file = true };
	struct tt_report rep;
	enum tt_status st;

	memset(a, 0, sizeof(*a));
	p->an = a;
	p->what = what;
	st = tt_walk(&rep, o, &spec, msg, msg_bytes);
	if (p->live)
		walker_fini(&p->w);
	free(p);
	if (st != TT_OK)
		*failed = tt_report_failed(&rep, o);
	tt_report_fini(&rep);
	if (st != TT_OK)
		return TT_ERR_FILE;
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
