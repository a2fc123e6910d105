/* SPDX-License-Identifier: MIT */
/*
 * walk.h - internals of a trace walk shared by its files, not for the
 * walk's users (they include events.h): the record walk (events.c), the
 * tables (tables.c), the damage bookkeeping (damage.c) and the frame
 * pipeline (pipeline.c).
 */
#ifndef TT_WALK_H
#define TT_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/events.h"

/* tables.c: site id -> name index, defined by a SITE or FUNC record. */
void tt_trace_site_define(struct tt_trace *tr, uint32_t site, uint32_t name);

/* damage.c: keeps the first message in slot (a note about counts,
 * truncation). */
void tt_trace_note(struct tt_trace *tr, char *slot, size_t slot_bytes, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The first problem and where it is, so that the replicas of a parallel
 * walk agree on which came first (tt_trace_merge()). */
void tt_trace_note_problem_at(struct tt_trace *tr, uint64_t frame, uint64_t offset,
			      const char *what);
void tt_trace_note_err(struct tt_trace *tr, const struct recfmt_error *err);
/* A record's error, at that frame. */
void tt_trace_note_record(struct tt_trace *tr, struct recfmt_error *err, uint64_t frame_index,
			  uint64_t frame_offset);

/*
 * events.c: decodes one frame's records into tr, EVENTS blocks to fn.
 * Return: TT_OK, or TT_ERR_FILE for a problem that makes the whole file
 * unusable (no header, newer version), with the message in msg.
 */
enum tt_status tt_trace_walk_frame(struct tt_trace *tr, const uint8_t *data, size_t len,
				   uint64_t index, uint64_t offset, tt_block_fn fn, void *ctx,
				   char *msg, size_t msg_bytes);

/* tables.c: whether a site has a name without inventing one ("site#N"):
 * a SITE record, or a FUNC record that names it when first used. */
bool tt_trace_site_known(struct tt_trace *tr, uint32_t site);

/*
 * Records that only a frame index's stand-ins hold (index.c), never a file:
 * events.c applies them only while tr->standin is set, and skips them as
 * unknown types otherwise (FORMAT.md §1).
 *
 * TT_REC_SKIPPED stands for an EVENTS block not decoded: its thread, its
 * counts and its first and last ticks (struct tt_skipped), so that the walk
 * counts what it would have counted. TT_REC_REPLAY is an EVENTS payload
 * (FORMAT.md §3.6) of the enters a thread has open where decoding resumes,
 * handed to the block function without being counted again.
 */
#define TT_REC_SKIPPED 0xf0
#define TT_REC_REPLAY 0xf1
struct tt_skipped {
	uint32_t thread;
	uint32_t nr_events;
	uint64_t enters;
	uint64_t base_ticks, last_ticks;
};

#endif /* TT_WALK_H */
