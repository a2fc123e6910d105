/* SPDX-License-Identifier: MIT */
/*
 * cmd_info.c - `tracetool info TRACE`: what the file is (tracetool(1), info): format
 * version, clock and its rate, start and duration, threads with their events
 * and drops, totals, bytes per event and whether the recording ended cleanly
 * (END record, FORMAT.md §3.9). Table or JSON. One pass over the file.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/commands.h"
#include "engine/index.h"
#include "common/emit.h"
#include "engine/events.h"
#include "cmd/options.h"
#include "common/progress.h"
#include "engine/symbols.h"

enum { OPT_FORMAT = 0x300 };

static error_t parse_info(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case OPT_FORMAT:
		o->format = tt_options_choose(state, "--format", "table|json", arg) == 1
				    ? TT_FORMAT_JSON
				    : TT_FORMAT_TABLE;
		break;
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

static const struct argp_option info_options[] = {
	{ "format", OPT_FORMAT, "FMT", 0, "Output as table (default) or json", 0 },
	{ 0 },
};

static const struct argp_child info_children[] = {
	{ &tt_progress_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp info_argp = {
	info_options, parse_info, "TRACE...",
	"Describe a trace file: format version, clock, start, duration, threads, "
	"drops, totals and whether the recording ended cleanly.\v"
	"events counts records (an enter and an exit are two); dropped counts scopes "
	"that were not recorded at all, so calls + dropped is what the program ran. "
	"Several TRACE files: one report each, in order (json: an array of them); "
	"exit 1 if any cannot be read.",
	info_children, 0, 0,
};

/* COUNTER_SET records (FORMAT.md §3.13): the names, recorded or not. */
struct ctr_names {
	char name[2][RECFMT_MAX_COUNTERS][RECFMT_MAX_COUNTER_NAME_BYTES + 1];
	uint32_t nr[2]; /* [0] recorded, [1] requested but not recorded */
};

static void add_name(struct ctr_names *cn, int kind, const char *s, uint32_t n)
{
	char buf[RECFMT_MAX_COUNTER_NAME_BYTES + 1];
	char *shown = tt_emit_clean(s, n); /* as scopes.c names them */

	/* Cut at a code point: a U+FFFD takes 3 bytes for 1. */
	n = (uint32_t)strlen(shown);
	while (n >= sizeof(buf))
		while (((unsigned char)shown[--n] & 0xc0) == 0x80)
			;
	memcpy(buf, shown, n);
	buf[n] = '\0';
	free(shown);
	for (uint32_t i = 0; i < cn->nr[kind]; i++)
		if (strcmp(cn->name[kind][i], buf) == 0)
			return;
	if (cn->nr[kind] < RECFMT_MAX_COUNTERS)
		memcpy(cn->name[kind][cn->nr[kind]++], buf, sizeof(buf));
}

static void note_counters(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
			  uint64_t frame, uint64_t offset)
{
	struct recfmt_counter_set cs;
	struct recfmt_error err;

	(void)tr, (void)frame, (void)offset;
	if (rec->type != RECFMT_COUNTER_SET || recfmt_decode_counter_set(rec, &cs, &err))
		return;
	for (uint32_t i = 0; i < cs.nr; i++)
		add_name(ctx, cs.c[i].flags & RECFMT_COUNTER_RECORDED ? 0 : 1, cs.c[i].name,
			 cs.c[i].name_bytes);
}

static uint64_t total_filtered(const struct tt_trace *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_threads; i++)
		n += tr->threads[i].nr_filtered;
	if (tr->has_end && tr->end.nr_filtered > n)
		n = tr->end.nr_filtered;
	return n;
}

/* REC_OVERFLOW=block waits (FORMAT.md §3.15): counted by 1.2 recorders, absent when none. */
static bool counts_blocked(const struct tt_trace *tr)
{
	return tr->has_blocked || tr->hdr.major > 1 || tr->hdr.minor >= 2;
}

static void total_blocked(const struct tt_trace *tr, uint64_t *nr, uint64_t *ns)
{
	*nr = *ns = 0;
	for (uint32_t i = 0; i < tr->nr_threads; i++) {
		*nr += tr->threads[i].nr_blocked;
		*ns += tr->threads[i].blocked_ns;
	}
}

/* Stack samples dropped, all threads (FORMAT.md §3.24); 0 without SAMPLE_DROPS. */
static uint64_t total_samples_dropped(const struct tt_trace *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_threads; i++)
		n += tr->threads[i].nr_samples_dropped;
	return n;
}

/* Annotations dropped, all threads (FORMAT.md §3.19); 0 without ANNOT_DROPS. */
static uint64_t total_annots_dropped(const struct tt_trace *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_threads; i++)
		n += tr->threads[i].nr_annots_dropped;
	return n;
}

static uint64_t total_dropped(const struct tt_trace *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_threads; i++)
		n += tr->threads[i].nr_dropped;
	if (tr->has_end && tr->end.nr_dropped > n)
		n = tr->end.nr_dropped;
	return n;
}

static const char *snapshot_kind(uint32_t kind)
{
	switch (kind) {
	case RECFMT_SNAPSHOT_API: return "rec_snapshot";
	case RECFMT_SNAPSHOT_SIGNAL: return "signal";
	case RECFMT_SNAPSHOT_TRIGGER: return "trigger";
	case RECFMT_SNAPSHOT_CRASH: return "crash";
	default: return "unknown";
	}
}

/*
 * The time the events cover: the earliest first event and the latest last
 * event of the blocks (a thread's events are in time order); and the time
 * the stack samples cover (FORMAT.md §3.23), apart. A snapshot's duration
 * is the span of both together, not its window's (the rings may hold less
 * than REC_WINDOW) nor the time from its start to its END: a snapshot of an
 * unmodified program holds samples only (F26, check4: "duration: 0ns").
 */
struct span {
	uint64_t first_ticks, last_ticks;
	bool any;
	uint64_t smp_first_ticks, smp_last_ticks; /* the samples' */
	bool smp_any;
	/* Each thread's first event or sample (index in tr->threads;
	 * UINT64_MAX: none), for a snapshot's history column (th_history_ns()). */
	uint64_t *thread_first;
	uint32_t nr_thread_first;
};

/* Notes th's first event at `first` (out of memory: the thread's history shows as 0). */
static void span_thread_first(struct span *s, const struct tt_trace *tr, const struct tt_thread *th,
			      uint64_t first)
{
	uint32_t i = (uint32_t)(th - tr->threads);

	if (i >= s->nr_thread_first) {
		uint32_t n = tr->cap_threads > i ? tr->cap_threads : i + 1;
		uint64_t *p = realloc(s->thread_first, (size_t)n * sizeof(*p));

		if (!p)
			return;
		for (uint32_t k = s->nr_thread_first; k < n; k++)
			p[k] = UINT64_MAX;
		s->thread_first = p;
		s->nr_thread_first = n;
	}
	if (first < s->thread_first[i])
		s->thread_first[i] = first;
}

static int span_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		      struct recfmt_events_iter *it)
{
	struct span *s = ctx;
	struct recfmt_events_iter peek = *it;
	uint64_t first;
	uint32_t code;
	int rc;

	if (recfmt_events_next(&peek, &first, &code) != 1)
		return tt_events_decode_block(NULL, tr, th, it);
	rc = tt_events_decode_block(NULL, tr, th, it);
	if (rc == 0 && tr->has_snapshot)
		span_thread_first(s, tr, th, first);
	if (rc == 0) {
		/* it->ticks: the block's last event now. */
		if (!s->any || first < s->first_ticks)
			s->first_ticks = first;
		if (!s->any || it->ticks > s->last_ticks)
			s->last_ticks = it->ticks;
		s->any = true;
	}
	return rc;
}

/* A stack sample (on_sample): the samples' span, and its thread's history. */
static void span_sample(void *ctx, struct tt_trace *tr, struct tt_thread *th,
			const struct recfmt_sample *smp)
{
	struct span *s = ctx;

	if (tr->has_snapshot)
		span_thread_first(s, tr, th, smp->ticks);
	if (!s->smp_any || smp->ticks < s->smp_first_ticks)
		s->smp_first_ticks = smp->ticks;
	if (!s->smp_any || smp->ticks > s->smp_last_ticks)
		s->smp_last_ticks = smp->ticks;
	s->smp_any = true;
}

/* The span of the events and the samples together. Return: false if neither has any. */
static bool span_all(const struct span *s, uint64_t *first, uint64_t *last)
{
	if (!s->any && !s->smp_any)
		return false;
	if (!s->smp_any || (s->any && s->first_ticks < s->smp_first_ticks))
		*first = s->first_ticks;
	else
		*first = s->smp_first_ticks;
	if (!s->smp_any || (s->any && s->last_ticks > s->smp_last_ticks))
		*last = s->last_ticks;
	else
		*last = s->smp_last_ticks;
	return true;
}

/* A flight-recorder snapshot's trigger and window (FORMAT.md §3.20), and its events' span. */
static void print_snapshot(const struct tt_trace *tr, const struct tt_clock *c,
			   const struct span *ev, bool json)
{
	const struct recfmt_snapshot *s = &tr->snapshot;
	int64_t at = tt_clock_rel_ns(c, s->trigger_ticks);
	int64_t from = tt_clock_rel_ns(c, s->window_start_ticks);
	int64_t to = tt_clock_rel_ns(c, s->window_end_ticks);
	int64_t ev_from = ev->any ? tt_clock_rel_ns(c, ev->first_ticks) : 0;
	int64_t ev_to = ev->any ? tt_clock_rel_ns(c, ev->last_ticks) : 0;
	int64_t smp_from = ev->smp_any ? tt_clock_rel_ns(c, ev->smp_first_ticks) : 0;
	int64_t smp_to = ev->smp_any ? tt_clock_rel_ns(c, ev->smp_last_ticks) : 0;

	if (json) {
		printf(",\"snapshot\":{\"number\":%" PRIu32 ",\"kind\":\"%s\",\"reason\":",
		       s->number, snapshot_kind(s->kind));
		tt_emit_json_str(stdout, tr->snapshot_reason ? tr->snapshot_reason : "");
		printf(",\"trigger_ns\":%" PRId64 ",\"trigger_unix_ns\":%" PRId64
		       ",\"window_start_ns\":%" PRId64 ",\"window_end_ns\":%" PRId64
		       ",\"events_start_ns\":%" PRId64 ",\"events_end_ns\":%" PRId64,
		       at, tt_ns_add((int64_t)(tr->hdr.start_real_ns & INT64_MAX), at), from, to,
		       ev_from, ev_to);
		/* Only where there are samples, so that other outputs stay as they were. */
		if (ev->smp_any)
			printf(",\"samples_start_ns\":%" PRId64 ",\"samples_end_ns\":%" PRId64,
			       smp_from, smp_to);
		printf(",\"suppressed\":%" PRIu64 "}", s->nr_suppressed);
		return;
	}
	printf("snapshot:         #%" PRIu32 ", %s: ", s->number, snapshot_kind(s->kind));
	tt_emit_text(stdout, tr->snapshot_reason ? tr->snapshot_reason : "");
	printf("\n                  trigger at %.6f s; window %.6f s to %.6f s; ",
	       (double)at / 1e9, (double)from / 1e9, (double)to / 1e9);
	if (ev->any)
		printf("events %.6f s to %.6f s; ", (double)ev_from / 1e9, (double)ev_to / 1e9);
	else
		fputs("no events; ", stdout);
	if (ev->smp_any)
		printf("samples %.6f s to %.6f s; ", (double)smp_from / 1e9, (double)smp_to / 1e9);
	printf("%" PRIu64 " earlier trigger%s not written\n", s->nr_suppressed,
	       s->nr_suppressed == 1 ? "" : "s");
}

/* What info says of one file: the walk's tables and the figures from them. */
struct info {
	const char *path;
	struct tt_trace tr;
	struct tt_clock c;
	struct ctr_names *cn; /* COUNTER_SET names (static: 16 KiB) */
	struct span ev;	      /* the events' span, for a snapshot */
	char problems[768];
	uint64_t tps;	      /* the effective rate, a whole tick per second */
	uint64_t duration_ns;
	uint64_t dropped, annots_dropped, nr_blocked, blocked_ns;
	uint64_t step_ticks;  /* the clock's step, 0 if unknown */
	double step_ns;
	bool clean;
	struct tt_index_survey ix; /* its index frames (FORMAT.md §6) */
};

/* Walks the file. Return: 0, or what tt_fail_file() returns. */
static int info_read(struct info *in)
{
	static struct ctr_names cn;
	char msg[512];

	memset(&cn, 0, sizeof(cn));
	in->cn = &cn;
	in->tr.on_record = note_counters;
	in->tr.record_ctx = &cn;
	in->tr.on_sample = span_sample;
	in->tr.sample_ctx = &in->ev;
	if (tt_trace_walk(&in->tr, span_block, &in->ev, msg, sizeof(msg)) != TT_OK)
		return tt_fail_file(in->path, msg);
	tt_trace_warn(&in->tr);
	tt_trace_problems(&in->tr, in->problems, sizeof(in->problems));
	tt_trace_clock(&in->tr, &in->c);
	return 0;
}

/* The figures info prints, from the walk's tables. */
static void info_figures(struct info *in)
{
	const struct tt_trace *tr = &in->tr;
	const struct tt_clock *c = &in->c;

	/* The effective rate (FORMAT.md §3.3), rounded to a whole tick per second. */
	in->tps = (uint64_t)(((unsigned __int128)c->den * 1000000000u + c->num / 2) / c->num);
	in->duration_ns = tr->max_ticks > c->start_ticks
				  ? tt_clock_ns(c, tr->max_ticks - c->start_ticks)
				  : 0;
	/* A snapshot: the time its events and samples cover (span_block(), span_sample()). */
	if (tr->has_snapshot) {
		uint64_t first, last;

		in->duration_ns = span_all(&in->ev, &first, &last) && last > first
					  ? tt_clock_ns(c, last - first)
					  : 0;
	}
	in->dropped = total_dropped(tr);
	in->annots_dropped = total_annots_dropped(tr);
	total_blocked(tr, &in->nr_blocked, &in->blocked_ns);
	in->clean = tr->has_end && !tr->truncated && !tr->has_crash;
	/* The clock's step: as librec measured it at start (FORMAT.md §3.2),
	 * else, in older files, the smallest step the events show (which a
	 * virtual TSC's rare 1-tick steps make too small). */
	in->step_ticks = tr->hdr.clock_step_ticks ? tr->hdr.clock_step_ticks : tr->min_step_ticks;
	in->step_ns = (double)in->step_ticks * (double)c->num / (double)c->den;
}

static const char *clock_kind(const struct tt_trace *tr)
{
	return tr->hdr.clock == RECFMT_CLOCK_TSC ? "tsc" : "monotonic";
}

static double bytes_per_event(const struct tt_trace *tr)
{
	return tr->nr_events ? (double)tr->file_bytes / (double)tr->nr_events : 0.0;
}

/*
 * The threads' columns, for both outputs (text: a column each, right-aligned
 * after a space in its width; JSON: a member each), in their order. A
 * column appears where shown() says so (NULL: always): the optional ones
 * only for the recordings that have them, so that other outputs stay as
 * they were.
 */
/* COL_HISTORY: th_history_ns() (JSON: ns; text: seconds, 6 decimals). */
enum thread_col_kind { COL_U64, COL_NAME, COL_BOOL, COL_HISTORY };

struct thread_col {
	const char *key;  /* JSON member, NULL: text only */
	const char *head; /* text heading, NULL: JSON only */
	int width;	  /* text */
	enum thread_col_kind kind;
	bool (*shown)(const struct info *in, bool json);
	uint64_t (*u64)(const struct tt_thread *th); /* COL_U64, COL_BOOL */
};

static uint64_t th_tid(const struct tt_thread *th) { return th->os_tid; }
static uint64_t th_serial(const struct tt_thread *th) { return th->serial; }
static uint64_t th_events(const struct tt_thread *th) { return th->nr_events; }
static uint64_t th_dropped(const struct tt_thread *th) { return th->nr_dropped; }
static uint64_t th_filtered(const struct tt_thread *th) { return th->nr_filtered; }
static uint64_t th_ended(const struct tt_thread *th) { return th->ended; }
static uint64_t th_blocked(const struct tt_thread *th) { return th->nr_blocked; }
static uint64_t th_blocked_ns(const struct tt_thread *th) { return th->blocked_ns; }
static uint64_t th_annots_dropped(const struct tt_thread *th) { return th->nr_annots_dropped; }

/* REC_MIN_NS recordings only. */
static bool has_filtered(const struct info *in, bool json)
{
	(void)json;
	return in->tr.has_filtered;
}

/* JSON: 1.2 recordings (FORMAT.md §3.15); text: where a thread waited. */
static bool has_blocked(const struct info *in, bool json)
{
	return json ? counts_blocked(&in->tr) : in->nr_blocked || in->blocked_ns;
}

/*
 * A snapshot: how far back the thread's history reached, from its first
 * event or stack sample in the file to the trigger (0 if it has none before
 * the trigger).
 * Its ring holds its newest events (README, "the flight recorder"): a
 * history shorter than the window before the trigger is what its ring
 * held, or when the thread began.
 */
static uint64_t th_history_ns(const struct info *in, uint32_t i)
{
	uint64_t first = i < in->ev.nr_thread_first ? in->ev.thread_first[i] : UINT64_MAX;
	uint64_t trigger = in->tr.snapshot.trigger_ticks;

	return first < trigger ? tt_clock_ns(&in->c, trigger - first) : 0;
}

static bool has_snapshot(const struct info *in, bool json)
{
	(void)json;
	return in->tr.has_snapshot;
}

/* Only when annotations were dropped. */
static bool has_annots_dropped(const struct info *in, bool json)
{
	(void)json;
	return in->annots_dropped != 0;
}

static const struct thread_col thread_cols[] = {
	{ "id", "id", 10, COL_U64, NULL, th_tid },
	{ "serial", NULL, 0, COL_U64, NULL, th_serial },
	{ "name", "name", 24, COL_NAME, NULL, NULL },
	{ "events", "events", 14, COL_U64, NULL, th_events },
	{ "dropped", "dropped", 12, COL_U64, NULL, th_dropped },
	{ "filtered", "filtered", 12, COL_U64, has_filtered, th_filtered },
	{ "ended", NULL, 0, COL_BOOL, NULL, th_ended },
	{ "blocked", "blocked", 12, COL_U64, has_blocked, th_blocked },
	{ "blocked_ns", "blocked_ns", 12, COL_U64, has_blocked, th_blocked_ns },
	{ "annotations_dropped", "annots_dropped", 14, COL_U64, has_annots_dropped,
	  th_annots_dropped },
	{ "history_ns", "history_s", 12, COL_HISTORY, has_snapshot, NULL },
};
#define NR_THREAD_COLS (sizeof(thread_cols) / sizeof(thread_cols[0]))

static bool col_shown(const struct thread_col *col, const struct info *in, bool json)
{
	return (json ? col->key : col->head) && (!col->shown || col->shown(in, json));
}

static void json_threads(const struct info *in)
{
	fputs(",\"threads\":[", stdout);
	for (uint32_t i = 0; i < in->tr.nr_threads; i++) {
		const struct tt_thread *th = &in->tr.threads[i];
		bool first = true;

		fputs(i ? ",{" : "{", stdout);
		for (size_t k = 0; k < NR_THREAD_COLS; k++) {
			const struct thread_col *col = &thread_cols[k];

			if (!col_shown(col, in, true))
				continue;
			printf("%s\"%s\":", first ? "" : ",", col->key);
			first = false;
			if (col->kind == COL_NAME && th->name)
				tt_emit_json_str(stdout, th->name);
			else if (col->kind == COL_NAME)
				fputs("null", stdout);
			else if (col->kind == COL_BOOL)
				fputs(col->u64(th) ? "true" : "false", stdout);
			else if (col->kind == COL_HISTORY)
				printf("%" PRIu64, th_history_ns(in, i));
			else
				printf("%" PRIu64, col->u64(th));
		}
		fputc('}', stdout);
	}
	fputc(']', stdout);
}

/* The id first, two spaces either side; the name left-aligned (by its
 * display width); the numbers right-aligned after a space. */
static void text_threads(const struct info *in)
{
	printf("threads:          %" PRIu32 "\n", in->tr.nr_threads);
	for (size_t k = 0; k < NR_THREAD_COLS; k++) {
		const struct thread_col *col = &thread_cols[k];

		if (!col_shown(col, in, false))
			continue;
		if (k == 0)
			printf("  %*s  ", col->width, col->head);
		else if (col->kind == COL_NAME)
			printf("%-*s", col->width, col->head);
		else
			printf(" %*s", col->width, col->head);
	}
	fputc('\n', stdout);
	for (uint32_t i = 0; i < in->tr.nr_threads; i++) {
		const struct tt_thread *th = &in->tr.threads[i];

		for (size_t k = 0; k < NR_THREAD_COLS; k++) {
			const struct thread_col *col = &thread_cols[k];

			if (!col_shown(col, in, false))
				continue;
			if (k == 0)
				printf("  %*" PRIu64 "  ", col->width, col->u64(th));
			else if (col->kind == COL_NAME)
				tt_emit_pad(stdout, th->name ? th->name : "-", (size_t)col->width,
					    false);
			else if (col->kind == COL_HISTORY)
				printf(" %*.6f", col->width, (double)th_history_ns(in, i) / 1e9);
			else
				printf(" %*" PRIu64, col->width, col->u64(th));
		}
		fputc('\n', stdout);
	}
}

/* JSON, up to the threads. */
static void json_head(const struct info *in)
{
	const struct tt_trace *tr = &in->tr;

	printf("{\"file\":");
	tt_emit_json_str(stdout, in->path);
	printf(",\"version\":\"%u.%u\",\"clock\":\"%s\",\"ticks_per_second\":%" PRIu64
	       ",\"header_ticks_per_second\":%" PRIu64 ",\"pid\":%" PRIu32
	       ",\"start_unix_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
	       ",\"events\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"clean\":%s"
	       ",\"truncated\":%s,\"file_bytes\":%" PRIu64 ",\"frames\":%" PRIu64
	       ",\"bytes_per_event\":%.3f,\"problems\":",
	       tr->hdr.major, tr->hdr.minor, clock_kind(tr), in->tps, tr->hdr.ticks_per_second,
	       tr->hdr.pid, tr->hdr.start_real_ns, in->duration_ns, tr->nr_events, in->dropped,
	       in->clean ? "true" : "false", tr->truncated ? "true" : "false", tr->file_bytes,
	       tr->nr_frames, bytes_per_event(tr));
	if (in->problems[0])
		tt_emit_json_str(stdout, in->problems);
	else
		fputs("null", stdout);
	if (in->step_ticks)
		printf(",\"clock_step_ns\":%.1f,\"clock_step_measured\":%s", in->step_ns,
		       tr->hdr.clock_step_ticks ? "true" : "false");
	/* Frames the writer compressed fast, under pressure (FORMAT.md §3.1);
	 * present only when there are some, so that other outputs stay as they were. */
	if (tr->nr_fast_frames)
		printf(",\"fast_frames\":%" PRIu64, tr->nr_fast_frames);
	if (tr->nr_recompressed_frames)
		printf(",\"recompressed_frames\":%" PRIu64, tr->nr_recompressed_frames);
	/* Files with index frames only (FORMAT.md §6). */
	if (in->ix.nr_indexed || in->ix.nr_bad || in->ix.nr_stray ||
	    (tr->has_crash && in->ix.nr_frames)) {
		printf(",\"index_frames\":%" PRIu64 ",\"packed_index_frames\":%" PRIu64
		       ",\"frames_without_index\":%" PRIu64 ",\"bad_index_frames\":%" PRIu64
		       ",\"window_read\":\"%s\"",
		       in->ix.nr_indexed, in->ix.nr_packed, in->ix.nr_missing,
		       in->ix.nr_bad + in->ix.nr_stray, tt_window_read_name(in->ix.window));
		if (in->ix.window_why) {
			fputs(",\"window_read_why\":", stdout);
			tt_emit_json_str(stdout, in->ix.window_why);
		}
	}
	/* 1.1 recordings only: 1.0 outputs stay as they were. */
	if (tt_symbols_program(tr->syms)) {
		fputs(",\"program\":", stdout);
		tt_emit_json_str(stdout, tt_symbols_program(tr->syms));
	}
	/* REC_MIN_NS recordings only: 1.0 outputs stay as they were. */
	if (tr->has_filtered)
		printf(",\"filtered\":%" PRIu64, total_filtered(tr));
}

/* JSON, after the threads: what only some recordings have, each only
 * there, so that earlier outputs stay as they were. */
static void json_tail(const struct info *in)
{
	const struct tt_trace *tr = &in->tr;
	const struct ctr_names *cn = in->cn;

	/* 1.2 recordings only. */
	if (counts_blocked(tr))
		printf(",\"blocked\":%" PRIu64 ",\"blocked_ns\":%" PRIu64, in->nr_blocked,
		       in->blocked_ns);
	/* Crashed recordings only (FORMAT.md §3.21). */
	if (tr->has_crash) {
		char sig[32];

		printf(",\"crash\":{\"signal\":\"%s\",\"signo\":%" PRIu32 ",\"si_code\":%" PRId32
		       ",\"thread\":%" PRIu32 ",\"addr\":%" PRIu64 "}",
		       tt_signal_name(tr->crash.signo, sig, sizeof(sig)), tr->crash.signo,
		       tr->crash.si_code, tr->crash.thread, tr->crash.addr);
	}
	if (in->annots_dropped)
		printf(",\"annotations_dropped\":%" PRIu64, in->annots_dropped);
	/* Sampled recordings only (FORMAT.md §3.22-§3.24). */
	if (tr->has_sampling)
		printf(",\"sampling\":{\"hz\":%" PRIu32 ",\"period_ns\":%" PRIu64
		       ",\"samples\":%" PRIu64 ",\"dropped\":%" PRIu64 "}",
		       tr->sampling.hz, tr->sampling.period_ns, tr->nr_samples,
		       total_samples_dropped(tr));
	if (tr->has_probe_cost)
		printf(",\"probe_cost_ns\":{\"scope\":%.3f,\"hook\":%.3f"
		       ",\"scope_inner\":%.3f,\"hook_inner\":%.3f}",
		       (double)tr->probe_cost.scope_ps / 1000.0,
		       (double)tr->probe_cost.hook_ps / 1000.0,
		       (double)tr->probe_cost.scope_inner_ps / 1000.0,
		       (double)tr->probe_cost.hook_inner_ps / 1000.0);
	if (tr->has_snapshot)
		print_snapshot(tr, &in->c, &in->ev, true);
	if (cn->nr[0] || cn->nr[1]) {
		/* Only for traces with counters: 1.0 traces print as before. */
		for (int k = 0; k < 2; k++) {
			printf(k ? "],\"not_recorded\":[" : ",\"counters\":{\"recorded\":[");
			for (uint32_t i = 0; i < cn->nr[k]; i++) {
				fputs(i ? "," : "", stdout);
				tt_emit_json_str(stdout, cn->name[k][i]);
			}
		}
		fputs("]}", stdout);
	}
}

static void print_json(const struct info *in)
{
	json_head(in);
	json_threads(in);
	json_tail(in);
	fputs("}\n", stdout);
}

/* The text's lines on the file, its process and its clock. */
static void text_file(const struct info *in)
{
	const struct tt_trace *tr = &in->tr;
	time_t secs = (time_t)(tr->hdr.start_real_ns / 1000000000u);
	struct tm tm;
	char when[64] = "?", dur[32];

	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	tt_emit_fmt_duration(dur, sizeof(dur), in->duration_ns);
	printf("file:             %s\n", in->path);
	printf("format:           %u.%u\n", tr->hdr.major, tr->hdr.minor);
	printf("clock:            %s, %" PRIu64 " ticks/s (header estimate %" PRIu64 ")\n",
	       clock_kind(tr), in->tps, tr->hdr.ticks_per_second);
	if (tt_symbols_program(tr->syms))
		printf("process:          %s, pid %" PRIu32 "\n", tt_symbols_program(tr->syms),
		       tr->hdr.pid);
	else
		printf("process:          pid %" PRIu32 "\n", tr->hdr.pid);
	printf("start:            %s.%09" PRIu64 " UTC (%" PRIu64 " ns since the epoch)\n", when,
	       tr->hdr.start_real_ns % 1000000000u, tr->hdr.start_real_ns);
	printf("duration:         %s (%" PRIu64 " ns)\n", dur, in->duration_ns);
	if (in->step_ticks)
		printf("clock step:       %.1f ns (%s, %" PRIu64 " tick%s)\n", in->step_ns,
		       tr->hdr.clock_step_ticks ? "measured at start"
						: "the smallest step between two events",
		       in->step_ticks, in->step_ticks == 1 ? "" : "s");
}

/* The text's lines on what was recorded, lost and how it is stored. */
static void text_events(const struct info *in)
{
	const struct tt_trace *tr = &in->tr;
	char dur[32], ix_text[512];

	printf("events:           %" PRIu64 " records\n", tr->nr_events);
	printf("dropped scopes:   %" PRIu64 "\n", in->dropped);
	if (tr->has_sampling)
		printf("stack samples:    %" PRIu64 " at %" PRIu32 " Hz of CPU time, %" PRIu64
		       " dropped\n",
		       tr->nr_samples, tr->sampling.hz, total_samples_dropped(tr));
	if (in->annots_dropped)
		printf("dropped annots:   %" PRIu64
		       " annotations (values, instants, messages, args, flows) not recorded\n",
		       in->annots_dropped);
	if (tr->has_filtered)
		printf("filtered:         %" PRIu64
		       " activations shorter than REC_MIN_NS not recorded\n",
		       total_filtered(tr));
	if (in->nr_blocked || in->blocked_ns) {
		tt_emit_fmt_duration(dur, sizeof(dur), in->blocked_ns);
		printf("blocked:          %" PRIu64 " waits for room, %s (%" PRIu64
		       " ns; REC_OVERFLOW=block, not inside any activation)\n",
		       in->nr_blocked, dur, in->blocked_ns);
	}
	if (tr->has_probe_cost)
		printf("probe cost:       TRACE_SCOPE %.1f ns (%.1f inside the child), hook %.1f ns"
		       " (%.1f inside); added to the parent per activation, measured at start\n",
		       (double)tr->probe_cost.scope_ps / 1000.0,
		       (double)tr->probe_cost.scope_inner_ps / 1000.0,
		       (double)tr->probe_cost.hook_ps / 1000.0,
		       (double)tr->probe_cost.hook_inner_ps / 1000.0);
	printf("size:             %" PRIu64 " bytes in %" PRIu64 " frames, %.2f bytes/event\n",
	       tr->file_bytes, tr->nr_frames, bytes_per_event(tr));
	if (tr->nr_fast_frames)
		printf("fast frames:      %" PRIu64 " of %" PRIu64
		       " (literals stored raw: the writer was behind or busy)\n",
		       tr->nr_fast_frames, tr->nr_frames);
	tt_index_survey_text(&in->ix, tr->has_crash, ix_text, sizeof(ix_text));
	if (ix_text[0])
		printf("%-18s%s\n", "index frames:", ix_text + strlen("index frames: "));
	if (tr->nr_recompressed_frames)
		printf("recompressed:     %" PRIu64 " of %" PRIu64
		       " frames (written fast under pressure, compressed again at the end)\n",
		       tr->nr_recompressed_frames, tr->nr_frames);
}

/* The text's lines on how the recording ended, and its counters. */
static void text_end(const struct info *in)
{
	const struct tt_trace *tr = &in->tr;
	const struct ctr_names *cn = in->cn;

	if (tr->has_snapshot)
		print_snapshot(tr, &in->c, &in->ev, false);
	if (tr->has_crash && !tr->truncated) {
		char crash_text[224];

		tt_trace_crash_text(tr, crash_text, sizeof(crash_text));
		printf("ended cleanly:    no (%s)\n", crash_text);
	} else {
		printf("ended cleanly:    %s\n",
		       in->clean ? "yes" : tr->truncated ? "no (truncated)" : "no (no END record)");
	}
	if (in->problems[0])
		printf("warning:          %s\n", in->problems);
	if (cn->nr[0] || cn->nr[1]) {
		fputs("counters:        ", stdout);
		for (uint32_t i = 0; i < cn->nr[0]; i++)
			printf(" %s", cn->name[0][i]);
		if (!cn->nr[0])
			fputs(" none", stdout);
		if (cn->nr[1])
			fputs(" (not recorded:", stdout);
		for (uint32_t i = 0; i < cn->nr[1]; i++)
			printf(" %s", cn->name[1][i]);
		fputs(cn->nr[1] ? ")\n" : "\n", stdout);
	}
}

static void print_text(const struct info *in)
{
	text_file(in);
	text_events(in);
	text_end(in);
	text_threads(in);
}

/* One file's report; o: the options, path: the file. */
static int info_one(const struct tt_options *o, const char *path)
{
	struct info in;
	int rc;

	memset(&in, 0, sizeof(in));
	in.path = path;
	tt_trace_init(&in.tr, path);
	rc = info_read(&in);
	if (rc)
		goto out;
	info_figures(&in);
	tt_index_survey(path, false, &in.ix);
	if (o->format == TT_FORMAT_JSON)
		print_json(&in);
	else
		print_text(&in);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
	}
out:
	tt_trace_fini(&in.tr);
	free(in.ev.thread_first);
	return rc;
}

int tt_cmd_info(int argc, char **argv)
{
	struct tt_options o = TT_OPTIONS_INIT;
	int rc = 0;

	argp_parse(&info_argp, argc, argv, 0, NULL, &o);
	/* Several files: a report each, in the order given; JSON: an array. */
	if (o.nr_traces > 1 && o.format == TT_FORMAT_JSON)
		fputs("[", stdout);
	for (unsigned i = 0; i < o.nr_traces; i++) {
		int r;

		if (i)
			fputs(o.format == TT_FORMAT_JSON ? "," : "\n", stdout);
		r = info_one(&o, o.traces[i]);
		rc = r > rc ? r : rc;
	}
	if (o.nr_traces > 1 && o.format == TT_FORMAT_JSON)
		fputs("]\n", stdout);
	if (fflush(stdout) || ferror(stdout))
		rc = 1;
	tt_options_fini(&o);
	return rc;
}
