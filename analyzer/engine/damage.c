/* SPDX-License-Identifier: MIT */
/*
 * damage.c - the walk's bookkeeping of what went wrong (FORMAT.md §2):
 * the first problem and where it is, how replicas of a parallel walk agree
 * on it (tt_trace_merge()), and the one-line description every report
 * prints (tracetool(1), DESCRIPTION). The record walk (events.c) and the frame pipeline
 * (pipeline.c) count; this file words it.
 */
#include "engine/events.h"
#include "common/emit.h"
#include "engine/symbols.h"
#include "engine/walk.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tt_trace_note(struct tt_trace *tr, char *slot, size_t slot_bytes, const char *fmt, ...)
{
	va_list ap;

	(void)tr;
	if (slot[0])
		return; /* keep the first */
	va_start(ap, fmt);
	vsnprintf(slot, slot_bytes, fmt, ap);
	va_end(ap);
}

/* Keeps the first problem and where it is, so that replicas of a parallel
 * walk can agree on which came first (tt_trace_merge()). */
void tt_trace_note_problem_at(struct tt_trace *tr, uint64_t frame, uint64_t offset,
			      const char *what)
{
	if (tr->first_problem[0])
		return;
	snprintf(tr->first_problem, sizeof(tr->first_problem), "%s", what);
	tr->first_problem_frame = frame;
	tr->first_problem_offset = offset;
}

void tt_trace_note_err(struct tt_trace *tr, const struct recfmt_error *err)
{
	char buf[256];

	recfmt_error_describe(err, buf, sizeof(buf));
	tt_trace_note_problem_at(tr, err->frame_index, err->record_offset, buf);
}

void tt_trace_note_record(struct tt_trace *tr, struct recfmt_error *err, uint64_t frame_index,
			  uint64_t frame_offset)
{
	err->frame_index = frame_index;
	err->frame_offset = frame_offset;
	tt_trace_note_err(tr, err);
}

void tt_trace_merge(struct tt_trace *dst, const struct tt_trace *src)
{
	/* Everything but what the block function did (and the modules whose
	 * files it opened to name functions) is the same in both: both read
	 * every record. */
	if (src->max_ticks > dst->max_ticks)
		dst->max_ticks = src->max_ticks;
	tt_symbols_merge_warnings(dst->syms, src->syms);
	dst->nr_bad_blocks += src->nr_failed_blocks;
	dst->nr_failed_blocks += src->nr_failed_blocks;
	if (src->first_problem[0] &&
	    (!dst->first_problem[0] || src->first_problem_frame < dst->first_problem_frame ||
	     (src->first_problem_frame == dst->first_problem_frame &&
	      src->first_problem_offset < dst->first_problem_offset))) {
		memcpy(dst->first_problem, src->first_problem, sizeof(dst->first_problem));
		dst->first_problem_frame = src->first_problem_frame;
		dst->first_problem_offset = src->first_problem_offset;
	}
}

void tt_trace_problems(const struct tt_trace *tr, char *out, size_t out_bytes)
{
	size_t n = 0;

	out[0] = '\0';
	if (tr->nr_bad_frames || tr->nr_lost_frames || tr->nr_bad_blocks)
		n += (size_t)snprintf(out, out_bytes,
				      "damaged: %" PRIu64 " frame(s) skipped, %" PRIu64
				      " lost, %" PRIu64 " bad record(s); first: %s",
				      tr->nr_bad_frames, tr->nr_lost_frames, tr->nr_bad_blocks,
				      tr->first_problem);
	if (tr->truncated && n < out_bytes)
		n += (size_t)snprintf(out + n, out_bytes - n,
				      "%struncated: %s; analysed up to frame %" PRIu64,
				      n ? "; " : "", tr->truncation, tr->nr_frames);
	/* Contract §7: a recording that did not end cleanly says so everywhere
	 * (a truncated one has no end marker either; truncation says why). */
	if (tr->has_header && !tr->has_end && !tr->truncated && n < out_bytes)
		snprintf(out + n, out_bytes - n,
			 "%sno end marker: the recording did not end cleanly (the process was "
			 "killed, crashed or is still running); scopes still open at the end are "
			 "errors",
			 n ? "; " : "");
	/* A crash is no damage, but a reader must not take the file for a clean end. */
	if (tr->has_crash && n < out_bytes) {
		char what[224];

		tt_trace_crash_text(tr, what, sizeof(what));
		n = strlen(out);
		snprintf(out + n, out_bytes - n,
			 "%sthe recording %s; what librec held was written, scopes still open at "
			 "the crash are errors",
			 n ? "; " : "", what);
	}
}

const char *tt_signal_name(uint32_t signo, char *buf, size_t buf_bytes)
{
	static const char *const names[] = { NULL,     "SIGHUP",  "SIGINT",  "SIGQUIT",
					     "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
					     "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV",
					     "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM" };

	if (signo < sizeof(names) / sizeof(names[0]) && names[signo])
		snprintf(buf, buf_bytes, "%s", names[signo]);
	else
		snprintf(buf, buf_bytes, "signal %" PRIu32, signo);
	return buf;
}

void tt_trace_crash_text(const struct tt_trace *tr, char *out, size_t out_bytes)
{
	char sig[32];
	int n;

	tt_signal_name(tr->crash.signo, sig, sizeof(sig));
	n = snprintf(out, out_bytes, "ended by a crash: %s", sig);
	/* The thread as every report names it (its tid, and name if any), not
	 * the serial the record carries (FORMAT.md §3.21), which no report shows. */
	for (uint32_t i = 0; tr->crash.thread && i < tr->nr_threads; i++) {
		const struct tt_thread *th = &tr->threads[i];

		if (th->serial != tr->crash.thread || !th->defined)
			continue;
		if (n >= 0 && (size_t)n < out_bytes)
			n += snprintf(out + n, out_bytes - (size_t)n, " on thread %" PRIu32,
				      th->os_tid);
		if (th->name && n >= 0 && (size_t)n < out_bytes)
			n += snprintf(out + n, out_bytes - (size_t)n, " (%.64s)", th->name);
		break;
	}
	/* A fault's address, 0x0 included (a null pointer); FORMAT.md §3.21. */
	if (n >= 0 && (size_t)n < out_bytes &&
	    (tr->crash.addr || (tr->crash.si_code > 0 && tr->crash.signo != 6 /* SIGABRT */)))
		snprintf(out + n, out_bytes - (size_t)n, " at address 0x%" PRIx64, tr->crash.addr);
}

void tt_trace_note_samples_only(const struct tt_trace *tr)
{
	if (!tr->has_sampling || tr->nr_events)
		return;
	fputs("tracetool: ", stderr);
	tt_emit_text(stderr, tr->path);
	fputs(": note: no scopes, only stack samples: tracetool profile, flame --samples and "
	      "tree --samples read them\n",
	      stderr);
}

bool tt_trace_warn(const struct tt_trace *tr)
{
	char buf[768];

	tt_trace_problems(tr, buf, sizeof(buf));
	if (!buf[0])
		return false;
	fprintf(stderr, "tracetool: %s: warning: ", tr->path);
	tt_emit_text(stderr, buf);
	fputc('\n', stderr);
	return true;
}
