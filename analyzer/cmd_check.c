/* SPDX-License-Identifier: MIT */
/*
 * cmd_check.c - `tracetool check TRACE`: exit 0 if the file is intact, else
 * exit 1 with one line saying what is wrong and where (frame index and byte
 * offset): unreadable, not a trace, newer version, damaged frame or checksum,
 * bad record, lost frames (seq gap), truncation, event counts that disagree
 * with THREAD_END/END, records after END, or no END (not ended cleanly).
 * The first problem in file order is the one reported.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>

#include "commands.h"
#include "events.h"
#include "options.h"

static const struct argp check_argp = {
	0, tt_options_parse_trace, "TRACE",
	"Check that a trace file is intact: every frame decompresses with a good "
	"checksum, frames are numbered without gaps, every record decodes, event "
	"counts agree and the recording ended cleanly.\v"
	"Exit status 0 if intact; 1 with one line naming the problem and its place "
	"(frame index and byte offset) otherwise.",
	0, 0, 0,
};

int tt_cmd_check(int argc, char **argv)
{
	static const bool reject_site0 = true;
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_trace tr;
	char msg[768];
	int rc = 0;

	argp_parse(&check_argp, argc, argv, 0, NULL, &o);
	tt_trace_init(&tr, o.trace);
	if (tt_trace_walk(&tr, tt_events_decode_block, (void *)&reject_site0, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(o.trace, msg);
		goto out;
	}
	if (tr.first_problem[0])
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
