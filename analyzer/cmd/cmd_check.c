/* SPDX-License-Identifier: MIT */
/*
 * cmd_check.c - `tracetool check TRACE`: exit 0 if the file is intact, else
 * exit 1 with one line saying what is wrong and where (frame index and byte
 * offset): unreadable, not a trace, newer version, damaged frame or checksum,
 * bad record, lost frames (seq gap), truncation, event counts that disagree
 * with THREAD_END/END, records after END, or no END (not ended cleanly),
 * (format 1.1) counter records that do not decode or do not annotate
 * the EVENTS block just before them (FORMAT.md §3.13-§3.14), and an exit
 * without an enter: no enter of its site is open on its thread (FORMAT.md
 * §3.6). An exit whose enter is open below the innermost one closes it and
 * the inner ones were left without an exit (longjmp): the file is intact, and
 * the success line notes how many.
 * The first problem in file order is the one reported.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/commands.h"
#include "engine/events.h"
#include "engine/index.h"
#include "cmd/options.h"
#include "common/progress.h"
#include "common/hmap.h"
#include "common/xalloc.h"

static const struct argp_child check_children[] = {
	{ &tt_progress_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp check_argp = {
	0, tt_options_parse_traces, "TRACE...",
	"Check that a trace file is intact: every frame decompresses with a good "
	"checksum, frames are numbered without gaps, every record decodes, event "
	"counts agree, every exit closes an open enter of its site on its thread and "
	"the recording ended cleanly (activations left without an exit by longjmp are "
	"noted, not a problem).\v"
	"Exit status 0 if intact; 1 with one line naming the problem and its place "
	"(frame index and byte offset) otherwise.",
	check_children, 0, 0,
};

/*
 * Nesting of one thread's events (FORMAT.md §3.6): the open enters' sites,
 * kept up to NEST_MAX_KEPT deep (deeper ones are only counted, so memory
 * follows the file's real nesting, bounded).
 */
#define NEST_MAX_KEPT (1u << 16)
struct nest {
	uint32_t thread;
	uint32_t cap;
	uint64_t depth;
	uint32_t *sites;
};

/* The counter records and the nesting, checked from the walker's record hook. */
struct ctr_check {
	struct nest *nests;	  /* in order of first block */
	uint32_t nr_nests, cap_nests;
	struct tt_hmap nest_map;  /* hmap.h: nests by thread serial (the file's: keyed) */
	uint64_t frame;		  /* of the last record seen */
	uint32_t events_thread;	  /* the last record was an EVENTS block of it; 0: was not */
	uint32_t events_n;
	char problem[256];	  /* the first one, "frame N at byte B (record at +R): ..." */
	uint64_t problem_frame;
	uint64_t nr_abandoned; /* enters left without an exit (longjmp): not a problem */
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

struct nest_key {
	const struct ctr_check *cc;
	uint32_t thread;
};

static bool nest_eq(const void *ctx, uint32_t k)
{
	const struct nest_key *key = ctx;

	return key->cc->nests[k].thread == key->thread;
}

static struct nest *nest_of(struct ctr_check *cc, uint32_t thread)
{
	const struct nest_key key = { cc, thread };
	uint32_t h = tt_hash_u64(thread), k = tt_hmap_find(&cc->nest_map, h, nest_eq, &key);

	if (k != TT_HMAP_NONE)
		return &cc->nests[k];
	if (cc->nr_nests == cc->cap_nests) {
		cc->cap_nests = cc->cap_nests ? 2 * cc->cap_nests : 16;
		cc->nests = tt_xrealloc(cc->nests, cc->cap_nests * sizeof(*cc->nests));
	}
	tt_hmap_put(&cc->nest_map, h, cc->nr_nests);
	cc->nests[cc->nr_nests] = (struct nest){ .thread = thread };
	return &cc->nests[cc->nr_nests++];
}

/* Follows one EVENTS block's enters and exits; the first that does not nest is a problem. */
static void check_nesting(struct ctr_check *cc, const struct recfmt_record *rec, uint64_t frame,
			  uint64_t offset, bool snapshot)
{
	struct recfmt_error err = { 0 };
	struct recfmt_events_iter it;
	struct nest *n;
	uint64_t ticks, i = 0;
	uint32_t code;
	char what[160];

	if (cc->problem[0] || recfmt_events_open(rec, &it, &err) != RECFMT_OK)
		return; /* a block that does not decode is the walker's problem */
	n = nest_of(cc, it.thread);
	for (; recfmt_events_next(&it, &ticks, &code) == 1; i++) {
		uint32_t site = code >> 1;

		if (!(code & 1)) {
			if (n->depth < NEST_MAX_KEPT) {
				if (n->depth == n->cap) {
					n->cap = n->cap ? 2 * n->cap : 64;
					n->sites = tt_xrealloc(n->sites, n->cap * sizeof(*n->sites));
				}
				n->sites[n->depth] = site;
			}
			n->depth++;
			continue;
		}
		if (n->depth) {
			/* The innermost open enter of this site: inner ones above it were
			 * left without an exit (longjmp), which a program may do. */
			uint64_t k = n->depth;

			if (k <= NEST_MAX_KEPT) /* else the top's site is not kept: pop it */
				while (k && n->sites[k - 1] != site)
					k--; /* amortised: each step is one enter popped */
			if (k) {
				cc->nr_abandoned += n->depth - k;
				n->depth = k - 1;
				continue;
			}
		}
		if (snapshot) {
			/* Open when the snapshot's window began (FORMAT.md §3.20); what is
			 * open above it was entered after and left without an exit. */
			cc->nr_abandoned += n->depth;
			n->depth = 0;
			continue;
		}
		snprintf(what, sizeof(what),
			 "thread %" PRIu32 ": event %" PRIu64
			 " of the EVENTS block is an exit of site %" PRIu32 " without an enter",
			 it.thread, i, site);
		ctr_fail(cc, rec, frame, offset, what);
		return;
	}
}

static void check_record(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
			 uint64_t frame, uint64_t offset)
{
	struct ctr_check *cc = ctx;
	struct recfmt_error err = { 0 };
	bool follows = cc->events_thread && cc->frame == frame;
	uint32_t thread = cc->events_thread, n = cc->events_n;

	cc->frame = frame;
	cc->events_thread = 0;
	if (rec->type == RECFMT_EVENTS && rec->size >= 8) {
		cc->events_thread = recfmt_load_u32le(rec->payload);
		cc->events_n = recfmt_load_u32le(rec->payload + 4);
		check_nesting(cc, rec, frame, offset, tr->has_snapshot);
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

static int check_one(const char *path)
{
	struct ctr_check cc = { 0 };
	struct tt_index_survey ix;
	static const bool reject_site0 = true;
	struct tt_trace tr;
	char msg[768];
	int rc = 0;

	tt_trace_init(&tr, path);
	tr.on_record = check_record;
	tr.record_ctx = &cc;
	if (tt_trace_walk(&tr, tt_events_decode_block, (void *)&reject_site0, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(path, msg);
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
	if (!msg[0]) {
		/* The index frames, each against its frame (FORMAT.md §6). */
		tt_index_survey(path, true, &ix);
		if (ix.bad[0])
			snprintf(msg, sizeof(msg),
				 "frame %" PRIu64 " (index frame at byte %" PRIu64 "): %s",
				 ix.bad_frame, ix.bad_offset, ix.bad);
	}
	if (msg[0]) {
		rc = tt_fail_file(path, msg);
	} else {
		printf("%s: ok (%" PRIu64 " frames, %" PRIu64 " events, %" PRIu32 " threads)", path,
		       tr.nr_frames, tr.nr_events, tr.nr_threads);
		if (cc.nr_abandoned)
			printf("; note: %" PRIu64 " activation(s) left without an exit (longjmp)",
			       cc.nr_abandoned);
		/* FORMAT.md §3.21: complete and valid, but not a clean end: say so. */
		if (tr.has_crash) {
			tt_trace_crash_text(&tr, msg, sizeof(msg));
			printf("; warning: the recording %s", msg);
		}
		tt_index_survey_text(&ix, tr.has_crash, msg, sizeof(msg));
		if (msg[0])
			printf("; %s", msg);
		putchar('\n');
	}
out:
	for (uint32_t i = 0; i < cc.nr_nests; i++)
		free(cc.nests[i].sites);
	free(cc.nests);
	tt_hmap_fini(&cc.nest_map);
	tt_trace_fini(&tr);
	return rc;
}

int tt_cmd_check(int argc, char **argv)
{
	struct tt_options o = TT_OPTIONS_INIT;
	int rc = 0;

	argp_parse(&check_argp, argc, argv, 0, NULL, &o);
	/* Several files: each is checked; exit 1 if any is not intact. */
	for (unsigned i = 0; i < o.nr_traces; i++)
		if (check_one(o.traces[i]))
			rc = 1;
	tt_options_fini(&o);
	return rc;
}
