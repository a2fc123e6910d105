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

/*
 * A SAMPLES record (FORMAT.md §3.23): its valid rows counted (on every
 * replica, so that each knows the file's totals) and, on the replica that
 * owns the thread, handed to on_sample. Rows after a bad one are lost with
 * the record (the error is returned).
 */
static enum recfmt_status walk_samples(struct tt_trace *tr, const struct recfmt_record *rec,
				       struct recfmt_error *err)
{
	struct recfmt_samples_iter it;
	struct recfmt_sample smp;
	enum recfmt_status st;

	if ((st = recfmt_samples_open(rec, &it, err)) != RECFMT_OK)
		return st;
	struct tt_thread *th = tt_trace_thread(tr, it.thread);
	bool mine = tr->nr_walkers <= 1 || (uint32_t)(th - tr->threads) % tr->nr_walkers == tr->walker;

	while ((st = recfmt_samples_next(&it, &smp, err)) == RECFMT_OK) {
		th->nr_samples++;
		tr->nr_samples++;
		see_ticks(tr, smp.ticks);
		if (mine && tr->on_sample)
			tr->on_sample(tr->sample_ctx, tr, th, &smp);
	}
	return st == RECFMT_END_OF_INPUT ? RECFMT_OK : st;
}

/*
 * Decodes one frame's records. Return: TT_OK, or TT_ERR_FILE for a problem
 * that makes the whole file unusable (no header, newer version).
 */
enum tt_status tt_trace_walk_frame(struct tt_trace *tr, const uint8_t *data, size_t len,
				   uint64_t index, uint64_t offset, tt_block_fn fn, void *ctx,
				   char *msg, size_t msg_bytes)
{
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	enum recfmt_status st;
	uint32_t seq;
	bool first_frame = !tr->has_header;

	recfmt_cursor_init(&cur, data, len);
	st = recfmt_cursor_next(&cur, &rec, &err);
	if (st == RECFMT_OK)
		st = recfmt_decode_frame(&rec, &seq, &err);
	else if (st == RECFMT_END_OF_INPUT) {
		st = RECFMT_CORRUPT;
		snprintf(err.message, sizeof(err.message), "empty frame");
	}
	if (st != RECFMT_OK) {
		tr->nr_bad_frames++;
		err.status = RECFMT_CORRUPT;
		tt_trace_note_record(tr, &err, index, offset);
		if (first_frame) {
			recfmt_error_describe(&err, msg, msg_bytes);
			return TT_ERR_FILE;
		}
		return TT_OK;
	}
	if (seq != tr->next_seq) {
		char what[256];

		if (seq > tr->next_seq) {
			tr->nr_lost_frames += seq - tr->next_seq;
			snprintf(what, sizeof(what),
				 "frame %" PRIu64 " at byte %" PRIu64 ": frame seq %" PRIu32
				 " follows %" PRIu64 " (frames lost)",
				 index, offset, seq, tr->next_seq ? tr->next_seq - 1 : 0);
		} else {
			snprintf(what, sizeof(what),
				 "frame %" PRIu64 " at byte %" PRIu64 ": frame seq %" PRIu32
				 " out of order (expected %" PRIu64 ")",
				 index, offset, seq, tr->next_seq);
			tr->nr_lost_frames++;
		}
		tt_trace_note_problem_at(tr, index, 0, what);
	}
	tr->next_seq = (uint64_t)seq + 1;
	/* FORMAT.md §3.1: written with raw literals, the writer under pressure. */
	if (recfmt_frame_flags(&rec) & RECFMT_FRAME_FAST)
		tr->nr_fast_frames++;
	if (first_frame)
		tr->nr_recordings = 1;
	else {
		/* Only a recording's first frame has a FILE_HEADER (FORMAT.md
		 * §2): another one starts another recording. Count it and read
		 * nothing more of it, or of what follows. */
		struct recfmt_cursor peek = cur;
		struct recfmt_error perr = { 0 };

		if (recfmt_cursor_next(&peek, &rec, &perr) == RECFMT_OK &&
		    rec.type == RECFMT_FILE_HEADER && tr->nr_recordings++ == 1) {
			tr->second_header_frame = index;
			tr->second_header_offset = offset;
		}
		if (tr->nr_recordings > 1)
			return TT_OK;
	}
	tr->nr_frames++;
	if (tr->has_end)
		tr->nr_after_end++;
	if (first_frame) {
		st = recfmt_cursor_next(&cur, &rec, &err);
		if (st == RECFMT_OK && rec.type == RECFMT_FILE_HEADER)
			st = recfmt_decode_header(&rec, &tr->hdr, &err);
		else if (st == RECFMT_OK || st == RECFMT_END_OF_INPUT) {
			st = RECFMT_CORRUPT;
			err.record_offset = rec.offset;
			snprintf(err.message, sizeof(err.message),
				 "no FILE_HEADER in the first frame (not a rec trace)");
		}
		if (st != RECFMT_OK || seq != 0) {
			if (st == RECFMT_OK)
				snprintf(err.message, sizeof(err.message),
					 "first frame has seq %" PRIu32 ", not 0 (file header lost)",
					 seq);
			err.status = st == RECFMT_OK ? RECFMT_CORRUPT : st;
			err.frame_index = index;
			err.frame_offset = offset;
			recfmt_error_describe(&err, msg, msg_bytes);
			return TT_ERR_FILE;
		}
		tr->has_header = true;
		see_ticks(tr, tr->hdr.start_ticks);
	}
	for (;;) {
		st = recfmt_cursor_next(&cur, &rec, &err);
		if (st == RECFMT_END_OF_INPUT)
			break;
		if (st != RECFMT_OK) {
			tr->nr_bad_frames++;
			tt_trace_note_record(tr, &err, index, offset);
			break;
		}
		if (tr->has_end)
			tr->nr_after_end++;
		if (tr->on_record)
			tr->on_record(tr->record_ctx, tr, &rec, index, offset);
		switch (rec.type) {
		case RECFMT_SYNC: {
			struct recfmt_sync s;

			if ((st = recfmt_decode_sync(&rec, &s, &err)) != RECFMT_OK)
				break;
			if (!tr->nr_syncs++)
				tr->first_sync = s;
			tr->last_sync = s;
			see_ticks(tr, s.ticks);
			break;
		}
		case RECFMT_SITE: {
			struct recfmt_site s;

			if ((st = recfmt_decode_site(&rec, &s, &err)) != RECFMT_OK)
				break;
			char place[RECFMT_MAX_NAME_BYTES + 16];
			int pn = s.file_bytes ? snprintf(place, sizeof(place), "%.*s:%" PRIu32,
							 (int)(s.file_bytes < RECFMT_MAX_NAME_BYTES
								       ? s.file_bytes
								       : RECFMT_MAX_NAME_BYTES),
							 s.file, s.line)
					      : 0;

			tt_trace_site_define(tr, s.id,
					     tt_trace_intern_site(tr, s.name, s.name_bytes, place,
								  pn > 0 ? (size_t)pn : 0));
			break;
		}
		case RECFMT_THREAD: {
			struct recfmt_thread t;
			struct tt_thread *th;

			if ((st = recfmt_decode_thread(&rec, &t, &err)) != RECFMT_OK)
				break;
			th = tt_trace_thread(tr, t.thread);
			th->defined = true;
			th->os_tid = t.os_tid;
			free(th->name);
			th->name = t.name ? tt_emit_clean(t.name, t.name_bytes) : NULL;
			break;
		}
		case RECFMT_EVENTS: {
			struct recfmt_events_iter it;
			struct tt_thread *th;

			if ((st = recfmt_events_open(&rec, &it, &err)) != RECFMT_OK)
				break;
			th = tt_trace_thread(tr, it.thread);
			th->nr_events += it.nr_events;
			tr->nr_events += it.nr_events;
			/* Before the block function, which uses the iterator up. */
			const uint64_t enters = tr->count_enters ? recfmt_events_count_enters(&it) : 0;
			if (tr->nr_walkers > 1 &&
			    (uint32_t)(th - tr->threads) % tr->nr_walkers != tr->walker) {
				/* Another replica's thread (tt_trace_walk_many()). */
				see_ticks(tr, it.ticks);
				tr->enters_before += enters;
				break;
			}
			{
				/* Annotations positioned in this block (FORMAT.md §3.18)
				 * come as the next record: the block function applies
				 * them among its events. */
				struct recfmt_cursor peek = cur;
				struct recfmt_error perr = { 0 };

				tr->annots_taken = false;
				tr->has_next_annots =
					recfmt_cursor_next(&peek, &tr->next_annots, &perr) == RECFMT_OK;
				/* Or after the block's COUNTERS record (FORMAT.md §3.18). */
				if (tr->has_next_annots && tr->next_annots.type == RECFMT_COUNTERS)
					tr->has_next_annots = recfmt_cursor_next(&peek, &tr->next_annots,
										 &perr) == RECFMT_OK;
				tr->has_next_annots &= tr->next_annots.type == RECFMT_ANNOTS;
				tr->next_annots_frame = index;
				tr->next_annots_offset = offset;
			}
			if (fn && fn(ctx, tr, th, &it) < 0) {
				tr->nr_bad_blocks++;
				tr->nr_failed_blocks++;
				err.record_offset = rec.offset;
				snprintf(err.message, sizeof(err.message),
					 "EVENTS block of thread %" PRIu32
					 " does not decode to its %" PRIu32 " events",
					 it.thread, it.nr_events);
				tt_trace_note_record(tr, &err, index, offset);
			}
			/* The last event's ticks, or base_ticks without fn. */
			see_ticks(tr, it.ticks);
			tr->enters_before += enters;
			break;
		}
		case RECFMT_DROPS: {
			struct recfmt_drops d;

			if ((st = recfmt_decode_drops(&rec, &d, &err)) != RECFMT_OK)
				break;
			struct tt_thread *th = tt_trace_thread(tr, d.thread);
			if (d.nr_dropped > th->nr_dropped)
				th->nr_dropped = d.nr_dropped;
			if (d.nr_filtered > th->nr_filtered)
				th->nr_filtered = d.nr_filtered;
			tr->has_filtered |= d.has_filtered;
			break;
		}
		case RECFMT_BLOCKED: {
			struct recfmt_blocked b;

			if ((st = recfmt_decode_blocked(&rec, &b, &err)) != RECFMT_OK)
				break;
			struct tt_thread *th = tt_trace_thread(tr, b.thread);
			/* Cumulative: the largest is the latest (FORMAT.md §3.15). */
			if (b.nr_blocked > th->nr_blocked)
				th->nr_blocked = b.nr_blocked;
			if (b.blocked_ns > th->blocked_ns)
				th->blocked_ns = b.blocked_ns;
			tr->has_blocked = true;
			break;
		}
		case RECFMT_CRASH:
			if ((st = recfmt_decode_crash(&rec, &tr->crash, &err)) != RECFMT_OK)
				break;
			tr->has_crash = true;
			break;
		case RECFMT_ANNOT_NAME: {
			struct recfmt_annot_name nm;

			if ((st = recfmt_decode_annot_name(&rec, &nm, &err)) != RECFMT_OK)
				break;
			tr->has_annots = true;
			break;
		}
		case RECFMT_ANNOTS: {
			/* Validated here, once per walk, so that check and every
			 * report see its damage; applied by the engine (scopes.c). */
			struct recfmt_annots_iter ai;
			struct recfmt_annot a;
			struct tt_thread *th;

			if ((st = recfmt_annots_open(&rec, &ai, &err)) != RECFMT_OK)
				break;
			while ((st = recfmt_annots_next(&ai, &a, &err)) == RECFMT_OK)
				see_ticks(tr, a.ticks);
			if (st == RECFMT_END_OF_INPUT)
				st = RECFMT_OK;
			th = tt_trace_thread(tr, ai.thread);
			th->nr_annots += ai.nr_annots - ai.nr_left;
			tr->nr_annots += ai.nr_annots - ai.nr_left;
			tr->has_annots = true;
			break;
		}
		case RECFMT_ANNOT_DROPS: {
			struct recfmt_annot_drops ad;

			if ((st = recfmt_decode_annot_drops(&rec, &ad, &err)) != RECFMT_OK)
				break;
			struct tt_thread *th = tt_trace_thread(tr, ad.thread);
			/* Cumulative: the largest is the latest (FORMAT.md §3.19). */
			tr->has_annots = true;
			if (ad.nr_dropped > th->nr_annots_dropped)
				th->nr_annots_dropped = ad.nr_dropped;
			break;
		}
		case RECFMT_PROBE_COST:
			if ((st = recfmt_decode_probe_cost(&rec, &tr->probe_cost, &err)) != RECFMT_OK)
				break;
			tr->has_probe_cost = true;
			break;
		case RECFMT_SNAPSHOT:
			if ((st = recfmt_decode_snapshot(&rec, &tr->snapshot, &err)) != RECFMT_OK)
				break;
			free(tr->snapshot_reason);
			tr->snapshot_reason =
				tt_emit_clean(tr->snapshot.reason, tr->snapshot.reason_bytes);
			tr->snapshot.reason = NULL;
			tr->has_snapshot = true;
			break;
		case RECFMT_THREAD_END: {
			struct recfmt_thread_end te;

			if ((st = recfmt_decode_thread_end(&rec, &te, &err)) != RECFMT_OK)
				break;
			struct tt_thread *th = tt_trace_thread(tr, te.thread);
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
					      index, offset, rec.offset, te.thread, te.nr_events,
					      th->nr_events);
			break;
		}
		case RECFMT_END:
			if ((st = recfmt_decode_end(&rec, &tr->end, &err)) != RECFMT_OK)
				break;
			tr->has_end = true;
			tr->end_frame = index;
			tr->has_filtered |= tr->end.has_filtered;
			see_ticks(tr, tr->end.end_ticks);
			break;
		case RECFMT_COUNTER_SET:
			tr->nr_counter_sets++; /* the counters themselves: scopes.c */
			break;
		case RECFMT_MODULE: {
			struct recfmt_module m;

			if ((st = recfmt_decode_module(&rec, &m, &err)) != RECFMT_OK)
				break;
			if (!tr->syms)
				tr->syms = tt_symbols_create(tr->path);
			tt_symbols_add_module(tr->syms, &m);
			break;
		}
		case RECFMT_FUNC: {
			struct recfmt_func f;

			if ((st = recfmt_decode_func(&rec, &f, &err)) != RECFMT_OK)
				break;
			if (!tr->syms)
				tr->syms = tt_symbols_create(tr->path);
			/* Named when first needed (tt_trace_site_name_slow()). */
			tt_symbols_add_func(tr->syms, f.id, f.addr);
			break;
		}
		case RECFMT_SAMPLING:
			if ((st = recfmt_decode_sampling(&rec, &tr->sampling, &err)) != RECFMT_OK)
				break;
			tr->has_sampling = true;
			break;
		case RECFMT_SAMPLE_DROPS: {
			struct recfmt_sample_drops d;

			if ((st = recfmt_decode_sample_drops(&rec, &d, &err)) != RECFMT_OK)
				break;
			struct tt_thread *th = tt_trace_thread(tr, d.thread);
			/* Cumulative: the largest is the latest (FORMAT.md §3.24). */
			if (d.nr_dropped > th->nr_samples_dropped)
				th->nr_samples_dropped = d.nr_dropped;
			break;
		}
		case RECFMT_SAMPLES:
			st = walk_samples(tr, &rec, &err);
			break;
		case RECFMT_FRAME:
		case RECFMT_FILE_HEADER:
		default:
			/* FORMAT.md §1: unknown types are skipped. A second FRAME or
			 * FILE_HEADER is not meaningful; ignore it. */
			break;
		}
		if (st != RECFMT_OK) {
			tr->nr_bad_blocks++;
			tt_trace_note_record(tr, &err, index, offset);
		}
	}
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
