/* SPDX-License-Identifier: MIT */
/*
 * cmd_check.c - `tracetool check TRACE`: exit 0 if the file is intact, else
 * exit 1 with one line saying what is wrong and where (frame index and byte
 * offset): unreadable, not a trace, newer version, damaged frame or checksum,
 * bad record, lost frames (seq gap), truncation, event counts that disagree
 * with THREAD_END/END, records after END, or no END (not ended cleanly),
 * and (format 1.1) counter records that do not decode or do not annotate
 * the EVENTS block just before them (FORMAT.md §3.13-§3.14).
 * The first problem in file order is the one reported.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "events.h"
#include "options.h"
#include "progress.h"
#include "xalloc.h"

static const struct argp_child check_children[] = {
	{ &tt_progress_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp check_argp = {
	0, tt_options_parse_trace, "TRACE",
	"Check that a trace file is intact: every frame decompresses with a good "
	"checksum, frames are numbered without gaps, every record decodes, event "
	"counts agree and the recording ended cleanly.\v"
	"Exit status 0 if intact; 1 with one line naming the problem and its place "
	"(frame index and byte offset) otherwise.",
	check_children, 0, 0,
};

/* The counter records, checked from the walker's record hook. */
struct ctr_check {
	uint64_t frame;		  /* of the last record seen */
	uint32_t events_thread;	  /* the last record was an EVENTS block of it; 0: was not */
	uint32_t events_n;
	char problem[256];	  /* the first one, "frame N at byte B (record at +R): ..." */
	uint64_t problem_frame;
};

static void ctr_fail(struct ctr_check *cc, const struct recfmt_record *rec, uint64_t frame,
		     uint64_t offset, const char *what)
{
	if (cc->problem[0])
		return;
	snprintf(cc->problem, sizeof(cc->problem),
		 "frame %" PRIu64 " at byte %" PRIu64 " (record at +%zu): %s", frame, offset,
		 rec->offset, what);
	cc->problem_frame = frame;
}

static void check_record(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
			 uint64_t frame, uint64_t offset)
{
	struct ctr_check *cc = ctx;
	struct recfmt_error err = { 0 };
	bool follows = cc->events_thread && cc->frame == frame;
	uint32_t thread = cc->events_thread, n = cc->events_n;

	(void)tr;
	cc->frame = frame;
	cc->events_thread = 0;
	if (rec->type == RECFMT_EVENTS && rec->size >= 8) {
		cc->events_thread = recfmt_load_u32le(rec->payload);
		cc->events_n = recfmt_load_u32le(rec->payload + 4);
	} else if (rec->type == RECFMT_COUNTER_SET) {
		struct recfmt_counter_set cs;

		if (recfmt_decode_counter_set(rec, &cs, &err) != RECFMT_OK)
			ctr_fail(cc, rec, frame, offset, err.message);
	} else if (rec->type == RECFMT_COUNTERS) {
		struct recfmt_counters cb;
		uint64_t *vals;

		if (recfmt_counters_open(rec, &cb, &err) != RECFMT_OK) {
			ctr_fail(cc, rec, frame, offset, err.message);
			return;
		}
		if (!follows || cb.thread != thread || cb.nr_events != n) {
			ctr_fail(cc, rec, frame, offset,
				 "COUNTERS block does not follow the EVENTS block it annotates");
			return;
		}
		vals = malloc(((size_t)cb.nr_events * cb.nr_columns + 1) * sizeof(*vals));
		if (!vals)
			tt_oom();
		if (recfmt_counters_decode(&cb, vals, rec, &err) != RECFMT_OK)
			ctr_fail(cc, rec, frame, offset, err.message);
		free(vals);
	}
}

int tt_cmd_check(int argc, char **argv)
{
	struct ctr_check cc = { 0 };
	static const bool reject_site0 = true;
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_trace tr;
	char msg[768];
	int rc = 0;

	argp_parse(&check_argp, argc, argv, 0, NULL, &o);
	tt_trace_init(&tr, o.trace);
	tr.on_record = check_record;
	tr.record_ctx = &cc;
	if (tt_trace_walk(&tr, tt_events_decode_block, (void *)&reject_site0, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(o.trace, msg);
		goto out;
	}
	if (cc.problem[0] && (!tr.first_problem[0] || cc.problem_frame < tr.first_problem_frame))
		snprintf(msg, sizeof(msg), "%s", cc.problem);
	else if (tr.first_problem[0])
		snprintf(msg, sizeof(msg), "%s", tr.first_problem);
	else if (tr.truncated)
		snprintf(msg, sizeof(msg), "truncated: %s", tr.truncation);
	else if (tr.count_problem[0])
		snprintf(msg, sizeof(msg), "%s", tr.count_problem);
	else if (!tr.has_end)
		snprintf(msg, sizeof(msg),
			 "no END record after frame %" PRIu64
			 ": the recording did not end cleanly (killed, or still being written)",
			 tr.nr_frames ? tr.nr_frames - 1 : 0);
	else if (tr.nr_after_end)
		snprintf(msg, sizeof(msg),
			 "frame %" PRIu64 ": %" PRIu64 " record(s) or frame(s) after the END record",
			 tr.end_frame, tr.nr_after_end);
	else if (tr.end.nr_events != tr.nr_events)
		snprintf(msg, sizeof(msg),
			 "frame %" PRIu64 ": END counts %" PRIu64 " events, the file has %" PRIu64,
			 tr.end_frame, tr.end.nr_events, tr.nr_events);
	else
		msg[0] = '\0';
	if (msg[0])
		rc = tt_fail_file(o.trace, msg);
	else
		printf("%s: ok (%" PRIu64 " frames, %" PRIu64 " events, %" PRIu32 " threads)\n",
		       o.trace, tr.nr_frames, tr.nr_events, tr.nr_threads);
out:
	tt_trace_fini(&tr);
	tt_options_fini(&o);
	return rc;
}
