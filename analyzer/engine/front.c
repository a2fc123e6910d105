/* SPDX-License-Identifier: MIT */
/*
 * front.c - see front.h. One file: walk_file() (metadata pass, filters,
 * walk_replicas(), rows); several: walk_files(), each file by walk_file()
 * into a report of its own, merged by report.c.
 */
#include "engine/front.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

const struct tt_walk_spec tt_walk_stats;

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

/* A consumer that sees activations; one with counters() or arg() only
 * keeps the pairing loop's fast paths (scopes.c). */
static bool sees_activations(const struct tt_consumer *cons)
{
	return cons && cons->act;
}

void tt_walk_attach(struct tt_scopes *sc, const struct tt_consumer *cons, void *ctx)
{
	struct tt_trace *tr = sc->tr;

	if (sees_activations(cons)) {
		sc->cons = cons;
		sc->cons_ctx = ctx;
	}
	if (cons && cons->counters) {
		sc->on_counters = cons->counters;
		sc->counters_ctx = ctx;
	}
	tr->count_enters = sees_activations(cons) && cons->block;
	if (sees_activations(cons)) {
		tr->on_thread_seen = cons->thread_seen;
		tr->on_record_done = cons->progress;
		tr->progress_ctx = ctx;
		tr->eager_names = cons->eager_names;
	}
	/* Counters and annotations come to the engine as records. */
	tr->on_record = tt_scopes_record;
	tr->record_ctx = sc;
}

/* Replica i's pairing state, like replica 0's (rep->sc, set up by
 * walk_file()), with the consumer's context ctx. */
static void setup_replica(struct tt_report *rep, unsigned i, const struct tt_options *o,
			  struct filter_ctx *fc, const struct tt_consumer *cons, void *ctx)
{
	struct tt_trace *tr = tt_report_replica(rep, i);
	struct tt_scopes *sc = tt_report_replica_scopes(rep, i);

	if (i) {
		tt_trace_init(tr, o->trace);
		tt_scopes_init(sc, tr);
		sc->win_lo_ticks = rep->sc.win_lo_ticks;
		sc->win_span_ticks = rep->sc.win_span_ticks;
		sc->max_dur_ticks = rep->sc.max_dur_ticks;
	}
	sc->compensate = o->compensate;
	sc->thread_filter = o->nr_threads && fc->meta ? thread_filter : NULL;
	sc->filter_ctx = fc;
	sc->by_thread = o->by_thread;
	tt_walk_attach(sc, cons, ctx);
	if (cons && cons->arg && o->nr_arg_keys) {
		sc->on_arg = cons->arg;
		sc->arg_ctx = ctx;
		sc->arg_keys = o->arg_keys;
		sc->nr_arg_keys = o->nr_arg_keys;
	}
}

unsigned tt_walk_nr_walkers(const struct tt_consumer *cons)
{
	unsigned n = cons && cons->one_walker ? 1 : tt_trace_walkers();

	return n > TT_WALK_MAX_REPLICAS ? TT_WALK_MAX_REPLICAS : n;
}

/*
 * The main pass, on tt_trace_walkers() replicas of the trace and of the
 * pairing state (one when the consumer needs the activations in the order
 * of the events): replica 0 is rep->tr and rep->sc. Each pairs its share
 * of the threads (events.h); report.c merges their tables by name.
 */
static enum tt_status walk_replicas(struct tt_report *rep, const struct tt_options *o,
				    struct filter_ctx *fc, const struct tt_consumer *cons,
				    void *const *ctxs, unsigned n, const struct tt_options *wo,
				    char *msg, size_t msg_bytes)
{
	struct tt_trace *trs[TT_WALK_MAX_REPLICAS];
	void *scs[TT_WALK_MAX_REPLICAS];
	enum tt_status st;

	rep->nr_replicas = n;
	if (n > 1) {
		rep->more_tr = tt_xcalloc(n - 1, sizeof(*rep->more_tr));
		rep->more_sc = tt_xcalloc(n - 1, sizeof(*rep->more_sc));
	}
	for (unsigned i = 0; i < n; i++) {
		setup_replica(rep, i, o, fc, cons, cons ? ctxs[i] : NULL);
		trs[i] = tt_report_replica(rep, i);
		scs[i] = tt_report_replica_scopes(rep, i);
	}
	if (wo && (wo->has_from || wo->has_to) && rep->has_meta) {
		/* The frames the window needs (index.h), when the file has an index. */
		uint64_t lo, span;

		tt_options_window(wo, &rep->clock, &lo, &span);

		trs[0]->use_index = true;
		trs[0]->index_lo = lo;
		trs[0]->index_hi = span == UINT64_MAX || lo > UINT64_MAX - span ? UINT64_MAX
										: lo + span;
	}
	st = tt_trace_walk_many(trs, scs, n, tt_scopes_block, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	for (unsigned i = 0; i < n; i++) {
		/* What is still open ends at the file's last tick (replica 0's,
		 * merged), not at the last this replica paired. */
		tt_report_replica(rep, i)->max_ticks = rep->tr.max_ticks;
		tt_scopes_finish(tt_report_replica_scopes(rep, i));
	}
	return TT_OK;
}

/*
 * The metadata pass (or the caller's, meta), and what the filters take
 * from it: the final clock, the window, --max-duration in ticks, the
 * threads --thread names. Return: TT_OK, or TT_ERR_FILE with msg.
 */
static enum tt_status meta_pass(struct tt_report *rep, const struct tt_options *o,
				struct tt_trace *meta, const struct tt_options *wo, char *msg,
				size_t msg_bytes)
{
	/* From the index's stand-ins alone when the file has one (index.h). */
	rep->meta.use_index = wo && (wo->has_from || wo->has_to);
	if (meta) { /* the caller's, moved in */
		tt_trace_fini(&rep->meta);
		rep->meta = *meta;
		memset(meta, 0, sizeof(*meta));
	} else if (tt_trace_walk(&rep->meta, NULL, NULL, msg, msg_bytes) != TT_OK) {
		return TT_ERR_FILE;
	}
	rep->has_meta = true;
	tt_trace_clock(&rep->meta, &rep->clock);
	tt_options_window(o, &rep->clock, &rep->sc.win_lo_ticks, &rep->sc.win_span_ticks);
	rep->sc.max_dur_ticks = tt_options_max_dur_ticks(o, &rep->clock);
	/* A --thread that names no thread of the file is a mistake to say, not
	 * an empty report (with several files: of none, said at the last). */
	if (o->nr_threads && tt_options_threads_missing(o, &rep->meta, msg, msg_bytes) &&
	    (!o->one_of_several || o->last_of_several))
		return TT_ERR_FILE;
	return TT_OK;
}

/* --compensate: done when the file records a measured probe cost and every
 * walker applied it. */
static void compensation(struct tt_report *rep, const struct tt_options *o)
{
	const struct recfmt_probe_cost *pc = &rep->tr.probe_cost;

	if (!o->compensate)
		return;
	rep->comp_asked = true;
	rep->compensated = rep->tr.has_probe_cost && (pc->scope_ps || pc->hook_ps);
	/* A walker that paired a block before the record was read did not
	 * compensate (scopes.c, compensate_begin()): then none counts. */
	for (unsigned r = 0; r < rep->nr_replicas; r++) {
		const struct tt_scopes *sc = tt_report_replica_scopes(rep, r);

		if (sc->comp_checked && !sc->comp_applied)
			rep->compensated = false;
	}
}

/* One file into rep, on nr_walkers replicas with the consumer's contexts
 * ctxs and the caller's metadata pass meta (NULL: the engine's, if needed). */
static enum tt_status walk_file(struct tt_report *rep, const struct tt_options *o,
				const struct tt_consumer *cons, void *const *ctxs,
				unsigned nr_walkers, struct tt_trace *meta,
				const struct tt_options *wo, char *msg, size_t msg_bytes)
{
	struct filter_ctx fc = { o, NULL };
	enum tt_status st;

	memset(rep, 0, sizeof(*rep));
	tt_trace_init(&rep->tr, o->trace);
	tt_trace_init(&rep->meta, o->trace);
	tt_scopes_init(&rep->sc, &rep->tr);
	if (meta || tt_options_need_prepass(o) || (cons && cons->needs_meta)) {
		st = meta_pass(rep, o, meta, wo, msg, msg_bytes);
		if (st != TT_OK)
			return st;
		fc.meta = &rep->meta;
	}
	st = walk_replicas(rep, o, &fc, cons, ctxs, nr_walkers, wo, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	if (!rep->has_meta)
		tt_trace_clock(&rep->tr, &rep->clock);
	tt_trace_problems(&rep->tr, rep->problems, sizeof(rep->problems));
	compensation(rep, o);
	tt_report_rows(rep, o);
	return TT_OK;
}

void tt_walk_file_options(const struct tt_options *o, unsigned i, struct tt_options *fo)
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

/* The options whose window the index serves (front.h), or NULL. */
static const struct tt_options *window_opts(const struct tt_walk_spec *spec,
					    const struct tt_options *o)
{
	return !spec->window_index ? NULL : spec->window_of ? spec->window_of : o;
}

/* File i: its walk into a report of its own, merged into rep (unless
 * each_file), then the spec's merge step; the report is kept or freed. */
static enum tt_status walk_one_of(struct tt_report *rep, const struct tt_options *o, unsigned i,
				  const struct tt_walk_spec *spec, char *msg, size_t msg_bytes)
{
	struct tt_report *sub = tt_xcalloc(1, sizeof(*sub));
	void *ctxs[TT_WALK_MAX_REPLICAS];
	struct tt_options fo;
	struct tt_walk_file f = { .index = i, .o = &fo, .rep = sub, .ctxs = ctxs,
				  .nr_walkers = tt_walk_nr_walkers(spec->cons) };
	enum tt_status st;

	tt_walk_file_options(o, i, &fo);
	memcpy(ctxs, spec->ctxs, sizeof(ctxs));
	if (spec->file_begin)
		spec->file_begin(spec->ctx, &f);
	if (f.nr_walkers < 1 || f.nr_walkers > tt_walk_nr_walkers(spec->cons))
		f.nr_walkers = 1; /* file_begin() may only lower it */
	st = walk_file(sub, &fo, spec->cons, ctxs, f.nr_walkers,
		       spec->metas ? &spec->metas[i] : NULL,
		       window_opts(spec, &fo), msg, msg_bytes);
	if (st != TT_OK)
		rep->failed = fo.trace;
	if (st == TT_OK && !spec->each_file)
		f.process = sub->process = tt_report_multi_add(rep, o, sub);
	if (st == TT_OK && spec->file_end)
		st = spec->file_end(spec->ctx, &f, msg, msg_bytes);
	if (st == TT_OK && spec->keep_files) {
		rep->files = tt_xrealloc(rep->files, (rep->nr_kept + 1) * sizeof(*rep->files));
		rep->files[rep->nr_kept++] = sub;
		return TT_OK;
	}
	tt_report_fini(sub);
	free(sub);
	return st;
}

/* Several files (docs/ANALYZER.md, "Several TRACE files"), or each_file: one after the
 * other, in the order given. */
static enum tt_status walk_files(struct tt_report *rep, const struct tt_options *o,
				 const struct tt_walk_spec *spec, char *msg, size_t msg_bytes)
{
	tt_report_multi_init(rep, o);
	for (unsigned i = 0; i < rep->nr_files; i++) {
		enum tt_status st = walk_one_of(rep, o, i, spec, msg, msg_bytes);

		if (st != TT_OK)
			return st;
	}
	if (!spec->each_file)
		tt_report_multi_finish(rep);
	return TT_OK;
}

enum tt_status tt_walk(struct tt_report *rep, const struct tt_options *o,
		       const struct tt_walk_spec *spec, char *msg, size_t msg_bytes)
{
	if (spec->each_file || tt_options_multi(o))
		return walk_files(rep, o, spec, msg, msg_bytes);
	return walk_file(rep, o, spec->cons, spec->ctxs, tt_walk_nr_walkers(spec->cons),
			 spec->metas, window_opts(spec, o), msg,
			 msg_bytes);
}

uint32_t *tt_walk_name_map(struct tt_trace *into, const struct tt_trace *from)
{
	uint32_t *map = tt_xcalloc((size_t)from->nr_names + 1, sizeof(*map));

	for (uint32_t n = 0; n < from->nr_names; n++)
		map[n] = tt_trace_intern(into, from->names[n], strlen(from->names[n]));
	return map;
}
