/* SPDX-License-Identifier: MIT */
/*
 * events.c - the record walk (see events.h): one frame's records decoded
 * and applied to struct tt_trace (header, syncs, sites, threads, drops,
 * end), EVENTS blocks handed to the caller's block function. Implements the
 * reader's side of FORMAT.md §2-§3: frame order and seq numbers and
 * cumulative drop counts (largest value wins, §3.7). The other ideas of a
 * walk have files of their own: the tick clock (clock.c), the thread and
 * name tables (tables.c), the frame pipeline that feeds this walk
 * (pipeline.c) and the bookkeeping of damage (damage.c).
 */
#include "engine/events.h"
#include "engine/walk.h"
#include "engine/symbols.h"
#include "common/emit.h"
#include "common/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void tt_trace_init(struct tt_trace *tr, const char *path)
{
	memset(tr, 0, sizeof(*tr));
	tr->path = path;
	tt_xalloc_set_path(path);
}

void tt_trace_fini(struct tt_trace *tr)
{
	for (uint32_t i = 0; i < tr->nr_threads; i++)
		free(tr->threads[i].name);
	for (uint32_t i = 0; i < tr->nr_names; i++)
		free(tr->names[i]);
	free(tr->threads);
	tt_hmap_fini(&tr->thread_map);
	free(tr->names);
	free(tr->name_hook);
	tt_hmap_fini(&tr->name_map);
	free(tr->site_name);
	free(tr->big_site_ids);
	free(tr->big_site_names);
	tt_hmap_fini(&tr->big_site_map);
	free(tr->snapshot_reason);
	tt_symbols_destroy(tr->syms);
	memset(tr, 0, sizeof(*tr));
}

static void see_ticks(struct tt_trace *tr, uint64_t ticks)
{
	if (ticks > tr->max_ticks)
		tr->max_ticks = ticks;
}

/* One frame's walk: what the steps below share. cur is past the record
 * being applied. */
struct frame_walk {
	struct tt_trace *tr;
	struct recfmt_cursor cur;
	uint64_t index, offset;
	tt_block_fn fn;
	void *ctx;
};

/* ---------------------------------------------------------------------
 * The frame's head: its FRAME record, its seq number, the recording it
 * belongs to, the FILE_HEADER of the first one.
 */

/* The FRAME record. Return: false if the frame cannot be read (noted). */
static bool open_frame(struct frame_walk *w, uint32_t *seq, struct recfmt_error *err)
{
	struct recfmt_record rec;
	enum recfmt_status st = recfmt_cursor_next(&w->cur, &rec, err);

	if (st == RECFMT_OK)
		st = recfmt_decode_frame(&rec, seq, err);
	else if (st == RECFMT_END_OF_INPUT) {
		st = RECFMT_CORRUPT;
		snprintf(err->message, sizeof(err->message), "empty frame");
	}
	if (st == RECFMT_OK) {
		/* FORMAT.md §3.1: written with raw literals, the writer under pressure. */
		if (recfmt_frame_flags(&rec) & RECFMT_FRAME_FAST)
			w->tr->nr_fast_frames++;
		if (recfmt_frame_flags(&rec) & RECFMT_FRAME_RECOMPRESSED)
			w->tr->nr_recompressed_frames++;
		return true;
	}
	w->tr->nr_bad_frames++;
	err->status = RECFMT_CORRUPT;
	tt_trace_note_record(w->tr, err, w->index, w->offset);
	return false;
}

/* Frames lost or out of order by their seq numbers (FORMAT.md §2). */
static void check_seq(struct tt_trace *tr, uint32_t seq, uint64_t index, uint64_t offset)
{
	char what[256];

	if (seq > tr->next_seq) {
		tr->nr_lost_frames += seq - tr->next_seq;
		snprintf(what, sizeof(what),
			 "frame %" PRIu64 " at byte %" PRIu64 ": frame seq %" PRIu32
			 " follows %" PRIu64 " (frames lost)",
			 index, offset, seq, tr->next_seq ? tr->next_seq - 1 : 0);
		tt_trace_note_problem_at(tr, index, 0, what);
	} else if (seq < tr->next_seq) {
		snprintf(what, sizeof(what),
			 "frame %" PRIu64 " at byte %" PRIu64 ": frame seq %" PRIu32
			 " out of order (expected %" PRIu64 ")",
			 index, offset, seq, tr->next_seq);
		tr->nr_lost_frames++;
		tt_trace_note_problem_at(tr, index, 0, what);
	}
	tr->next_seq = (uint64_t)seq + 1;
}

/*
 * Only a recording's first frame has a FILE_HEADER (FORMAT.md §2): a later
 * frame that has one starts another recording, counted, and nothing more
 * of it or of what follows is read. Return: true if the frame is of
 * another recording than the first.
 */
static bool another_recording(struct frame_walk *w)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_cursor peek = w->cur;
	struct recfmt_record rec;
	struct recfmt_error perr = { 0 };

	if (recfmt_cursor_next(&peek, &rec, &perr) == RECFMT_OK &&
	    rec.type == RECFMT_FILE_HEADER && tr->nr_recordings++ == 1) {
		tr->second_header_frame = w->index;
		tr->second_header_offset = w->offset;
	}
	return tr->nr_recordings > 1;
}

/* The first frame's FILE_HEADER, and its seq of 0. Return: TT_OK, or
 * TT_ERR_FILE with msg: the file is not a trace, or its head was lost. */
static enum tt_status read_header(struct frame_walk *w, uint32_t seq, struct recfmt_error *err,
				  char *msg, size_t msg_bytes)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_record rec;
	enum recfmt_status st = recfmt_cursor_next(&w->cur, &rec, err);

	if (st == RECFMT_OK && rec.type == RECFMT_FILE_HEADER)
		st = recfmt_decode_header(&rec, &tr->hdr, err);
	else if (st == RECFMT_OK || st == RECFMT_END_OF_INPUT) {
		st = RECFMT_CORRUPT;
		err->record_offset = rec.offset;
		snprintf(err->message, sizeof(err->message),
			 "no FILE_HEADER in the first frame (not a rec trace)");
	}
	if (st != RECFMT_OK || seq != 0) {
		if (st == RECFMT_OK)
			snprintf(err->message, sizeof(err->message),
				 "first frame has seq %" PRIu32 ", not 0 (file header lost)", seq);
		err->status = st == RECFMT_OK ? RECFMT_CORRUPT : st;
		err->frame_index = w->index;
		err->frame_offset = w->offset;
		recfmt_error_describe(err, msg, msg_bytes);
		return TT_ERR_FILE;
	}
	tr->has_header = true;
	see_ticks(tr, tr->hdr.start_ticks);
	return TT_OK;
}

/* ---------------------------------------------------------------------
 * One function per record type (FORMAT.md §3), each applying a record to
 * the trace. Return: RECFMT_OK, or the record's decoding error in err.
 */

static enum recfmt_status on_sync(struct frame_walk *w, const struct recfmt_record *rec,
				  struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_sync s;
	enum recfmt_status st = recfmt_decode_sync(rec, &s, err);

	if (st != RECFMT_OK)
		return st;
	if (!tr->nr_syncs++)
		tr->first_sync = s;
	tr->last_sync = s;
	see_ticks(tr, s.ticks);
	return RECFMT_OK;
}

/* A TRACE_SCOPE site: its name keyed with its place "file:line". */
static enum recfmt_status on_site(struct frame_walk *w, const struct recfmt_record *rec,
				  struct recfmt_error *err)
{
	struct recfmt_site s;
	enum recfmt_status st = recfmt_decode_site(rec, &s, err);
	char place[RECFMT_MAX_NAME_BYTES + 16];
	int pn;

	if (st != RECFMT_OK)
		return st;
	pn = s.file_bytes ? snprintf(place, sizeof(place), "%.*s:%" PRIu32,
				     (int)(s.file_bytes < RECFMT_MAX_NAME_BYTES
						   ? s.file_bytes
						   : RECFMT_MAX_NAME_BYTES),
				     s.file, s.line)
			  : 0;
	tt_trace_site_define(w->tr, s.id,
			     tt_trace_intern_site(w->tr, s.name, s.name_bytes, place,
						  pn > 0 ? (size_t)pn : 0));
	return RECFMT_OK;
}

static enum recfmt_status on_thread(struct frame_walk *w, const struct recfmt_record *rec,
				    struct recfmt_error *err)
{
	struct recfmt_thread t;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_decode_thread(rec, &t, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(w->tr, t.thread);
	th->defined = true;
	th->os_tid = t.os_tid;
	free(th->name);
	th->name = t.name ? tt_emit_clean(t.name, t.name_bytes) : NULL;
	return RECFMT_OK;
}

/* Annotations positioned in an EVENTS block (FORMAT.md §3.18) come as the
 * next record, or after the block's COUNTERS record: the block function
 * applies them among its events. */
static void peek_annots(struct frame_walk *w)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_cursor peek = w->cur;
	struct recfmt_error perr = { 0 };

	tr->annots_taken = false;
	tr->has_next_annots = recfmt_cursor_next(&peek, &tr->next_annots, &perr) == RECFMT_OK;
	if (tr->has_next_annots && tr->next_annots.type == RECFMT_COUNTERS)
		tr->has_next_annots =
			recfmt_cursor_next(&peek, &tr->next_annots, &perr) == RECFMT_OK;
	tr->has_next_annots &= tr->next_annots.type == RECFMT_ANNOTS;
	tr->next_annots_frame = w->index;
	tr->next_annots_offset = w->offset;
}

/* An EVENTS block: counted, and handed to the block function when its
 * thread is this replica's (tt_trace_walk_many()). */
static enum recfmt_status on_events(struct frame_walk *w, const struct recfmt_record *rec,
				    struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_events_iter it;
	struct tt_thread *th;
	uint64_t enters;
	enum recfmt_status st = recfmt_events_open(rec, &it, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(tr, it.thread);
	th->nr_events += it.nr_events;
	tr->nr_events += it.nr_events;
	tt_trace_see_thread(tr, th);
	/* Before the block function, which uses the iterator up. */
	enters = tr->count_enters ? recfmt_events_count_enters(&it) : 0;
	if (tr->nr_walkers > 1 && (uint32_t)(th - tr->threads) % tr->nr_walkers != tr->walker) {
		/* Another replica's thread. */
		see_ticks(tr, it.ticks);
		tr->enters_before += enters;
		return RECFMT_OK;
	}
	peek_annots(w);
	/* The block's first tick, as the other replicas see it (above): the
	 * file's last tick is then the same whichever replica pairs it. */
	see_ticks(tr, it.ticks);
	if (w->fn && w->fn(w->ctx, tr, th, &it) < 0) {
		/* In the frame's err, as its other records' problems. */
		tr->nr_bad_blocks++;
		tr->nr_failed_blocks++;
		err->record_offset = rec->offset;
		snprintf(err->message, sizeof(err->message),
			 "EVENTS block of thread %" PRIu32 " does not decode to its %" PRIu32
			 " events",
			 it.thread, it.nr_events);
		tt_trace_note_record(tr, err, w->index, w->offset);
	}
	/* The last event's ticks, or base_ticks without fn. */
	see_ticks(tr, it.ticks);
	tr->enters_before += enters;
	return RECFMT_OK;
}

/*
 * A stand-in's TT_REC_SKIPPED (walk.h): an EVENTS block counted as
 * on_events() counts it, its ticks seen as if the block function had
 * decoded it, and nothing paired.
 */
static enum recfmt_status on_skipped(struct frame_walk *w, const struct recfmt_record *rec,
				     struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct tt_skipped sk;
	struct tt_thread *th;
	bool ours;

	if (rec->size < sizeof(sk)) {
		snprintf(err->message, sizeof(err->message), "bad stand-in record");
		return RECFMT_CORRUPT;
	}
	memcpy(&sk, rec->payload, sizeof(sk));
	th = tt_trace_thread(tr, sk.thread);
	th->nr_events += sk.nr_events;
	tr->nr_events += sk.nr_events;
	ours = tr->nr_walkers <= 1 ||
	       (uint32_t)(th - tr->threads) % tr->nr_walkers == tr->walker;
	see_ticks(tr, sk.base_ticks); /* as on_events(): on every replica */
	if (ours && w->fn)
		see_ticks(tr, sk.last_ticks);
	if (tr->count_enters)
		tr->enters_before += sk.enters;
	return RECFMT_OK;
}

/* A stand-in's TT_REC_REPLAY (walk.h): the thread's open enters to the
 * block function, counted nowhere. */
static enum recfmt_status on_replay(struct frame_walk *w, const struct recfmt_record *rec,
				    struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_events_iter it;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_events_open(rec, &it, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(tr, it.thread);
	tt_trace_see_thread(tr, th);
	if (tr->nr_walkers > 1 && (uint32_t)(th - tr->threads) % tr->nr_walkers != tr->walker)
		return RECFMT_OK;
	tr->has_next_annots = false;
	tr->annots_taken = false;
	if (w->fn && w->fn(w->ctx, tr, th, &it) < 0) {
		snprintf(err->message, sizeof(err->message), "stand-in stack of thread %" PRIu32,
			 it.thread);
		return RECFMT_CORRUPT;
	}
	return RECFMT_OK;
}

/* Drop counts are cumulative: the largest is the latest (FORMAT.md §3.7). */
static enum recfmt_status on_drops(struct frame_walk *w, const struct recfmt_record *rec,
				   struct recfmt_error *err)
{
	struct recfmt_drops d;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_decode_drops(rec, &d, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(w->tr, d.thread);
	if (d.nr_dropped > th->nr_dropped)
		th->nr_dropped = d.nr_dropped;
	if (d.nr_filtered > th->nr_filtered)
		th->nr_filtered = d.nr_filtered;
	w->tr->has_filtered |= d.has_filtered;
	return RECFMT_OK;
}

/* Cumulative: the largest is the latest (FORMAT.md §3.15). */
static enum recfmt_status on_blocked(struct frame_walk *w, const struct recfmt_record *rec,
				     struct recfmt_error *err)
{
	struct recfmt_blocked b;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_decode_blocked(rec, &b, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(w->tr, b.thread);
	if (b.nr_blocked > th->nr_blocked)
		th->nr_blocked = b.nr_blocked;
	if (b.blocked_ns > th->blocked_ns)
		th->blocked_ns = b.blocked_ns;
	w->tr->has_blocked = true;
	return RECFMT_OK;
}

static enum recfmt_status on_crash(struct frame_walk *w, const struct recfmt_record *rec,
				   struct recfmt_error *err)
{
	enum recfmt_status st = recfmt_decode_crash(rec, &w->tr->crash, err);

	if (st == RECFMT_OK)
		w->tr->has_crash = true;
	return st;
}

static enum recfmt_status on_annot_name(struct frame_walk *w, const struct recfmt_record *rec,
					struct recfmt_error *err)
{
	struct recfmt_annot_name nm;
	enum recfmt_status st = recfmt_decode_annot_name(rec, &nm, err);

	if (st == RECFMT_OK)
		w->tr->has_annots = true;
	return st;
}

/* Validated here, once per walk, so that check and every report see its
 * damage; applied by the engine (scopes.c). */
static enum recfmt_status on_annots(struct frame_walk *w, const struct recfmt_record *rec,
				    struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_annots_iter ai;
	struct recfmt_annot a;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_annots_open(rec, &ai, err);

	if (st != RECFMT_OK)
		return st;
	while ((st = recfmt_annots_next(&ai, &a, err)) == RECFMT_OK)
		see_ticks(tr, a.ticks);
	if (st == RECFMT_END_OF_INPUT)
		st = RECFMT_OK;
	th = tt_trace_thread(tr, ai.thread);
	th->nr_annots += ai.nr_annots - ai.nr_left;
	tr->nr_annots += ai.nr_annots - ai.nr_left;
	tr->has_annots = true;
	return st;
}

/* Cumulative: the largest is the latest (FORMAT.md §3.19). */
static enum recfmt_status on_annot_drops(struct frame_walk *w, const struct recfmt_record *rec,
					 struct recfmt_error *err)
{
	struct recfmt_annot_drops ad;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_decode_annot_drops(rec, &ad, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(w->tr, ad.thread);
	w->tr->has_annots = true;
	if (ad.nr_dropped > th->nr_annots_dropped)
		th->nr_annots_dropped = ad.nr_dropped;
	return RECFMT_OK;
}

static enum recfmt_status on_probe_cost(struct frame_walk *w, const struct recfmt_record *rec,
					struct recfmt_error *err)
{
	enum recfmt_status st = recfmt_decode_probe_cost(rec, &w->tr->probe_cost, err);

	if (st == RECFMT_OK)
		w->tr->has_probe_cost = true;
	return st;
}

static enum recfmt_status on_snapshot(struct frame_walk *w, const struct recfmt_record *rec,
				      struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	enum recfmt_status st = recfmt_decode_snapshot(rec, &tr->snapshot, err);

	if (st != RECFMT_OK)
		return st;
	free(tr->snapshot_reason);
	tr->snapshot_reason = tt_emit_clean(tr->snapshot.reason, tr->snapshot.reason_bytes);
	tr->snapshot.reason = NULL;
	tr->has_snapshot = true;
	return RECFMT_OK;
}

/* A thread's last counts, checked against the events the file has. */
static enum recfmt_status on_thread_end(struct frame_walk *w, const struct recfmt_record *rec,
					struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_thread_end te;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_decode_thread_end(rec, &te, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(tr, te.thread);
	if (te.nr_dropped > th->nr_dropped)
		th->nr_dropped = te.nr_dropped;
	if (te.nr_filtered > th->nr_filtered)
		th->nr_filtered = te.nr_filtered;
	tr->has_filtered |= te.has_filtered;
	th->ended = true;
	if (te.nr_events != th->nr_events)
		tt_trace_note(tr, tr->count_problem, sizeof(tr->count_problem),
			      "frame %" PRIu64 " at byte %" PRIu64
			      " (record at +%zu): THREAD_END of thread %" PRIu32
			      " counts %" PRIu64 " events, the file has %" PRIu64,
			      w->index, w->offset, rec->offset, te.thread, te.nr_events,
			      th->nr_events);
	return RECFMT_OK;
}

static enum recfmt_status on_end(struct frame_walk *w, const struct recfmt_record *rec,
				 struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	enum recfmt_status st = recfmt_decode_end(rec, &tr->end, err);

	if (st != RECFMT_OK)
		return st;
	tr->has_end = true;
	tr->end_frame = w->index;
	tr->has_filtered |= tr->end.has_filtered;
	see_ticks(tr, tr->end.end_ticks);
	return RECFMT_OK;
}

static enum recfmt_status on_module(struct frame_walk *w, const struct recfmt_record *rec,
				    struct recfmt_error *err)
{
	struct recfmt_module m;
	enum recfmt_status st = recfmt_decode_module(rec, &m, err);

	if (st != RECFMT_OK)
		return st;
	if (!w->tr->syms)
		w->tr->syms = tt_symbols_create(w->tr->path);
	tt_symbols_add_module(w->tr->syms, &m);
	return RECFMT_OK;
}

static enum recfmt_status on_module_map(struct frame_walk *w, const struct recfmt_record *rec,
					struct recfmt_error *err)
{
	struct recfmt_module_map mm;
	enum recfmt_status st = recfmt_decode_module_map(rec, &mm, err);

	if (st != RECFMT_OK)
		return st;
	if (w->tr->syms)
		tt_symbols_module_map(w->tr->syms, &mm);
	return RECFMT_OK;
}

/* A function site: named when first needed (tt_trace_site_name_slow()), or
 * now with eager_names (events.h). */
static enum recfmt_status on_func(struct frame_walk *w, const struct recfmt_record *rec,
				  struct recfmt_error *err)
{
	struct recfmt_func f;
	enum recfmt_status st = recfmt_decode_func(rec, &f, err);

	if (st != RECFMT_OK)
		return st;
	if (!w->tr->syms)
		w->tr->syms = tt_symbols_create(w->tr->path);
	tt_symbols_add_func(w->tr->syms, f.id, f.addr, f.module);
	if (w->tr->eager_names && (f.id >= w->tr->nr_site_slots ||
				   w->tr->site_name[f.id] == TT_NO_NAME))
		(void)tt_trace_site_name_slow(w->tr, f.id);
	return RECFMT_OK;
}

/*
 * A SAMPLES record (FORMAT.md §3.23): its valid rows counted (on every
 * replica, so that each knows the file's totals) and, on the replica that
 * owns the thread, handed to on_sample. Rows after a bad one are lost with
 * the record (the error is returned).
 */
static enum recfmt_status on_samples(struct frame_walk *w, const struct recfmt_record *rec,
				     struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_samples_iter it;
	struct recfmt_sample smp;
	struct tt_thread *th;
	bool mine;
	enum recfmt_status st = recfmt_samples_open(rec, &it, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(tr, it.thread);
	mine = tr->nr_walkers <= 1 || (uint32_t)(th - tr->threads) % tr->nr_walkers == tr->walker;
	while ((st = recfmt_samples_next(&it, &smp, err)) == RECFMT_OK) {
		th->nr_samples++;
		tr->nr_samples++;
		see_ticks(tr, smp.ticks);
		if (mine && tr->on_sample)
			tr->on_sample(tr->sample_ctx, tr, th, &smp);
	}
	return st == RECFMT_END_OF_INPUT ? RECFMT_OK : st;
}

static enum recfmt_status on_sampling(struct frame_walk *w, const struct recfmt_record *rec,
				      struct recfmt_error *err)
{
	enum recfmt_status st = recfmt_decode_sampling(rec, &w->tr->sampling, err);

	if (st == RECFMT_OK)
		w->tr->has_sampling = true;
	return st;
}

/* Cumulative: the largest is the latest (FORMAT.md §3.24). */
static enum recfmt_status on_sample_drops(struct frame_walk *w, const struct recfmt_record *rec,
					  struct recfmt_error *err)
{
	struct recfmt_sample_drops d;
	struct tt_thread *th;
	enum recfmt_status st = recfmt_decode_sample_drops(rec, &d, err);

	if (st != RECFMT_OK)
		return st;
	th = tt_trace_thread(w->tr, d.thread);
	if (d.nr_dropped > th->nr_samples_dropped)
		th->nr_samples_dropped = d.nr_dropped;
	return RECFMT_OK;
}

/* One record of the frame, by its type. */
static enum recfmt_status apply_record(struct frame_walk *w, const struct recfmt_record *rec,
				       struct recfmt_error *err)
{
	switch (rec->type) {
	case RECFMT_SYNC:
		return on_sync(w, rec, err);
	case RECFMT_SITE:
		return on_site(w, rec, err);
	case RECFMT_THREAD:
		return on_thread(w, rec, err);
	case RECFMT_EVENTS:
		return on_events(w, rec, err);
	case RECFMT_DROPS:
		return on_drops(w, rec, err);
	case RECFMT_BLOCKED:
		return on_blocked(w, rec, err);
	case RECFMT_CRASH:
		return on_crash(w, rec, err);
	case RECFMT_ANNOT_NAME:
		return on_annot_name(w, rec, err);
	case RECFMT_ANNOTS:
		return on_annots(w, rec, err);
	case RECFMT_ANNOT_DROPS:
		return on_annot_drops(w, rec, err);
	case RECFMT_PROBE_COST:
		return on_probe_cost(w, rec, err);
	case RECFMT_SNAPSHOT:
		return on_snapshot(w, rec, err);
	case RECFMT_THREAD_END:
		return on_thread_end(w, rec, err);
	case RECFMT_END:
		return on_end(w, rec, err);
	case RECFMT_COUNTER_SET:
		w->tr->nr_counter_sets++; /* the counters themselves: scopes.c */
		return RECFMT_OK;
	case RECFMT_MODULE:
		return on_module(w, rec, err);
	case RECFMT_MODULE_MAP:
		return on_module_map(w, rec, err);
	case RECFMT_FUNC:
		return on_func(w, rec, err);
	case RECFMT_SAMPLING:
		return on_sampling(w, rec, err);
	case RECFMT_SAMPLE_DROPS:
		return on_sample_drops(w, rec, err);
	case RECFMT_SAMPLES:
		return on_samples(w, rec, err);
	case TT_REC_SKIPPED:
		return w->tr->standin ? on_skipped(w, rec, err) : RECFMT_OK;
	case TT_REC_REPLAY:
		return w->tr->standin ? on_replay(w, rec, err) : RECFMT_OK;
	case RECFMT_FRAME:
	case RECFMT_FILE_HEADER:
	default:
		/* FORMAT.md §1: unknown types are skipped. A second FRAME or
		 * FILE_HEADER is not meaningful; ignore it. */
		return RECFMT_OK;
	}
}

/* The frame's records after its head, each to the record hook, then
 * applied; one that does not decode is counted and noted, and a record
 * that cannot be delimited ends the frame. */
static void walk_records(struct frame_walk *w, struct recfmt_error *err)
{
	struct tt_trace *tr = w->tr;
	struct recfmt_record rec;

	for (;;) {
		enum recfmt_status st = recfmt_cursor_next(&w->cur, &rec, err);

		if (st == RECFMT_END_OF_INPUT)
			return;
		if (st != RECFMT_OK) {
			tr->nr_bad_frames++;
			tt_trace_note_record(tr, err, w->index, w->offset);
			return;
		}
		if (tr->has_end)
			tr->nr_after_end++;
		tr->pos = tr->nr_records_met++ * TT_POS_STEP;
		if (tr->on_record)
			tr->on_record(tr->record_ctx, tr, &rec, w->index, w->offset);
		tr->pos = (tr->nr_records_met - 1) * TT_POS_STEP + 2;
		if (apply_record(w, &rec, err) != RECFMT_OK) {
			tr->nr_bad_blocks++;
			tt_trace_note_record(tr, err, w->index, w->offset);
		}
		tr->pos = tr->nr_records_met * TT_POS_STEP; /* the record is done */
		if (tr->on_record_done)
			tr->on_record_done(tr->progress_ctx, tr);
	}
}

/*
 * Decodes one frame's records. Return: TT_OK, or TT_ERR_FILE for a problem
 * that makes the whole file unusable (no header, newer version).
 */
enum tt_status tt_trace_walk_frame(struct tt_trace *tr, const uint8_t *data, size_t len,
				   uint64_t index, uint64_t offset, tt_block_fn fn, void *ctx,
				   char *msg, size_t msg_bytes)
{
	struct frame_walk w = { .tr = tr, .index = index, .offset = offset, .fn = fn, .ctx = ctx };
	struct recfmt_error err = { 0 };
	const bool first_frame = !tr->has_header;
	uint32_t seq;

	recfmt_cursor_init(&w.cur, data, len);
	if (!open_frame(&w, &seq, &err)) {
		if (!first_frame)
			return TT_OK;
		recfmt_error_describe(&err, msg, msg_bytes);
		return TT_ERR_FILE;
	}
	check_seq(tr, seq, index, offset);
	if (first_frame)
		tr->nr_recordings = 1;
	else if (another_recording(&w))
		return TT_OK;
	tr->nr_frames++;
	if (tr->has_end)
		tr->nr_after_end++;
	if (first_frame && read_header(&w, seq, &err, msg, msg_bytes) != TT_OK)
		return TT_ERR_FILE;
	walk_records(&w, &err);
	return TT_OK;
}

int tt_events_decode_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
			   struct recfmt_events_iter *it)
{
	bool reject_site0 = ctx && *(const bool *)ctx;
	uint64_t ticks, last = 0, step = tr->min_step_ticks;
	bool first = true;
	uint32_t code;
	int rc;

	(void)th;
	while ((rc = recfmt_events_next(it, &ticks, &code)) == 1) {
		uint64_t d = ticks > last ? ticks - last : last - ticks;

		if (!first && d && (!step || d < step))
			step = d;
		first = false;
		last = ticks;
		if (reject_site0 && RECFMT_CODE_SITE(code) == 0)
			return -1;
	}
	tr->min_step_ticks = step;
	return rc < 0 || !recfmt_events_check_end(it) ? -1 : 0;
}
