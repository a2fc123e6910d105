/* SPDX-License-Identifier: MIT */
/*
 * trace_read.c - see trace_read.h. Deliberately simple and independent of
 * tracetool's code: the recorder's tests should not share the analyzer's
 * bugs.
 */
#include "trace_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recfmt.h"

static struct tr_thread *thread_of(struct tr_trace *tr, uint32_t serial)
{
	if (serial == 0 || serial > 1000000)
		return NULL;
	if (serial > tr->nr_threads) {
		/* Geometric growth: each entry is 16 KiB (its nesting stack). */
		if (serial > tr->threads_cap) {
			uint32_t cap = tr->threads_cap ? tr->threads_cap : 16;

			while (cap < serial)
				cap *= 2;
			tr->threads = realloc(tr->threads, cap * sizeof(*tr->threads));
			tr->threads_cap = cap;
		}
		memset(tr->threads + tr->nr_threads, 0,
		       (serial - tr->nr_threads) * sizeof(*tr->threads));
		for (uint32_t i = tr->nr_threads; i < serial; i++)
			tr->threads[i].serial = i + 1;
		tr->nr_threads = serial;
	}
	return &tr->threads[serial - 1];
}

static void grow_sites(struct tr_trace *tr, uint32_t id)
{
	if (id < tr->nr_sites)
		return;
	tr->site_names = realloc(tr->site_names, (id + 1) * sizeof(char *));
	tr->site_enters = realloc(tr->site_enters, (id + 1) * sizeof(uint64_t));
	for (uint32_t i = tr->nr_sites; i <= id; i++) {
		tr->site_names[i] = NULL;
		tr->site_enters[i] = 0;
	}
	tr->nr_sites = id + 1;
}

/* tr_load_each()'s hook, for the load in progress (tests read on one thread). */
static tr_event_fn each_fn;
static void *each_arg;

static void on_events(struct tr_trace *tr, const struct recfmt_record *rec)
{
	struct recfmt_events_iter it;
	struct recfmt_error err;
	struct tr_thread *t;
	uint64_t ticks;
	uint32_t code;

	if (recfmt_events_open(rec, &it, &err) != RECFMT_OK || !(t = thread_of(tr, it.thread))) {
		tr->nr_corrupt++;
		return;
	}
	while (recfmt_events_next(&it, &ticks, &code) == 1) {
		uint32_t site = RECFMT_CODE_SITE(code);

		if (each_fn)
			each_fn(each_arg, t->serial, ticks, code);
		t->nr_events++;
		tr->nr_events++;
		if (t->nr_events > 1 && ticks < t->last_ticks)
			t->nr_backwards++;
		t->last_ticks = ticks;
		if (!RECFMT_CODE_IS_EXIT(code)) {
			grow_sites(tr, site);
			tr->site_enters[site]++;
			if (t->depth < 4096)
				t->stack[t->depth] = site;
			t->depth++;
			if (t->depth > t->max_depth)
				t->max_depth = t->depth;
		} else if (t->depth == 0 && tr->has_snapshot) {
			t->nr_open_at_start++; /* FORMAT.md §3.20 */
		} else if (t->depth == 0 ||
			   (t->depth <= 4096 && t->stack[t->depth - 1] != site)) {
			t->nr_bad_exits++;
		} else {
			t->depth--;
		}
	}
}

int tr_load(const char *path, struct tr_trace *tr)
{
	struct recfmt_reader *r;
	struct recfmt_error err;
	const uint8_t *data;
	size_t len;
	enum recfmt_status st;

	memset(tr, 0, sizeof(*tr));
	if (recfmt_reader_open(&r, path, &err) != RECFMT_OK)
		return -1;
	for (;;) {
		st = recfmt_reader_next(r, &data, &len, &err);
		if (st == RECFMT_CORRUPT && recfmt_reader_can_continue(r)) {
			tr->nr_corrupt++;
			continue;
		}
		if (st != RECFMT_OK)
			break;
		tr->nr_frames++;
		struct recfmt_cursor cur;
		struct recfmt_record rec;

		recfmt_cursor_init(&cur, data, len);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			switch (rec.type) {
			case RECFMT_FILE_HEADER: {
				struct recfmt_header h;
				if (recfmt_decode_header(&rec, &h, &err) == RECFMT_OK) {
					tr->clock = h.clock;
					tr->pid = h.pid;
					tr->ticks_per_second = h.ticks_per_second;
					tr->start_ticks = h.start_ticks;
				}
				break;
			}
			case RECFMT_SYNC:
				tr->nr_syncs++;
				break;
			case RECFMT_SITE: {
				struct recfmt_site s;
				if (recfmt_decode_site(&rec, &s, &err) == RECFMT_OK) {
					grow_sites(tr, s.id);
					free(tr->site_names[s.id]);
					tr->site_names[s.id] = strndup(s.name, s.name_bytes);
				}
				break;
			}
			case RECFMT_THREAD: {
				struct recfmt_thread th;
				struct tr_thread *t;
				if (recfmt_decode_thread(&rec, &th, &err) == RECFMT_OK &&
				    (t = thread_of(tr, th.thread))) {
					t->os_tid = th.os_tid;
					t->named = th.name != NULL;
					snprintf(t->name, sizeof(t->name), "%.*s", (int)th.name_bytes,
						 th.name ? th.name : "");
				}
				break;
			}
			case RECFMT_EVENTS:
				on_events(tr, &rec);
				break;
			case RECFMT_DROPS: {
				struct recfmt_drops d;
				struct tr_thread *t;
				if (recfmt_decode_drops(&rec, &d, &err) == RECFMT_OK &&
				    (t = thread_of(tr, d.thread)) && d.nr_dropped > t->nr_dropped)
					t->nr_dropped = d.nr_dropped;
				break;
			}
			case RECFMT_THREAD_END: {
				struct recfmt_thread_end te;
				struct tr_thread *t;
				if (recfmt_decode_thread_end(&rec, &te, &err) == RECFMT_OK &&
				    (t = thread_of(tr, te.thread))) {
					t->ended = true;
					if (te.nr_dropped > t->nr_dropped)
						t->nr_dropped = te.nr_dropped;
				}
				break;
			}
			case RECFMT_SNAPSHOT: {
				struct recfmt_snapshot s;
				if (recfmt_decode_snapshot(&rec, &s, &err) == RECFMT_OK) {
					tr->has_snapshot = true;
					tr->snap_trigger_ticks = s.trigger_ticks;
					tr->snap_start_ticks = s.window_start_ticks;
					tr->snap_end_ticks = s.window_end_ticks;
					tr->snap_suppressed = s.nr_suppressed;
					tr->snap_number = s.number;
					tr->snap_kind = s.kind;
					snprintf(tr->snap_reason, sizeof(tr->snap_reason), "%.*s",
						 (int)s.reason_bytes, s.reason);
				}
				break;
			}
			case RECFMT_END: {
				struct recfmt_end e;
				if (recfmt_decode_end(&rec, &e, &err) == RECFMT_OK) {
					tr->clean = true;
					tr->end_nr_events = e.nr_events;
					tr->end_nr_dropped = e.nr_dropped;
				}
				break;
			}
			default:
				break;
			}
		}
	}
	tr->truncated = st == RECFMT_TRUNCATED;
	recfmt_reader_close(r);
	for (uint32_t i = 0; i < tr->nr_threads; i++)
		tr->threads[i].nr_unclosed = tr->threads[i].depth;
	return tr->nr_frames ? 0 : -1;
}

int tr_load_each(const char *path, struct tr_trace *tr, tr_event_fn fn, void *arg)
{
	int rc;

	each_fn = fn;
	each_arg = arg;
	rc = tr_load(path, tr);
	each_fn = NULL;
	each_arg = NULL;
	return rc;
}

void tr_free(struct tr_trace *tr)
{
	for (uint32_t i = 0; i < tr->nr_sites; i++)
		free(tr->site_names[i]);
	free(tr->site_names);
	free(tr->site_enters);
	free(tr->threads);
	memset(tr, 0, sizeof(*tr));
}

uint64_t tr_calls(const struct tr_trace *tr, const char *name)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_sites; i++)
		if (tr->site_names[i] && strcmp(tr->site_names[i], name) == 0)
			n += tr->site_enters[i];
	return n;
}

uint64_t tr_dropped(const struct tr_trace *tr)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < tr->nr_threads; i++)
		n += tr->threads[i].nr_dropped;
	return n;
}

const struct tr_thread *tr_thread_named(const struct tr_trace *tr, const char *name)
{
	for (uint32_t i = 0; i < tr->nr_threads; i++)
		if (tr->threads[i].named && strcmp(tr->threads[i].name, name) == 0)
			return &tr->threads[i];
	return NULL;
}

bool tr_well_nested(const struct tr_trace *tr)
{
	for (uint32_t i = 0; i < tr->nr_threads; i++)
		if (tr->threads[i].nr_bad_exits)
			return false;
	return true;
}

/* One mismatch of tr_check(): the message, then -1. */
static int differs(char *why, size_t why_bytes, const char *path, const char *what,
		   unsigned long long got, unsigned long long want)
{
	snprintf(why, why_bytes, "%s: %s %llu, expected %llu", path, what, got, want);
	return -1;
}

int tr_check(const char *path, const struct tr_want *want, uint32_t *pid, char *why,
	     size_t why_bytes)
{
	struct tr_trace tr;
	int err = -1;

	if (tr_load(path, &tr) != 0) {
		snprintf(why, why_bytes, "%s: cannot read it", path);
		return -1;
	}
	if (pid)
		*pid = tr.pid;
	if (!tr.clean) {
		snprintf(why, why_bytes, "%s: no END record (not ended cleanly)", path);
		goto out;
	}
	if (tr.truncated) {
		snprintf(why, why_bytes, "%s: truncated", path);
		goto out;
	}
	if (tr.nr_corrupt) {
		differs(why, why_bytes, path, "corrupt frames", (unsigned long long)tr.nr_corrupt,
			0);
		goto out;
	}
	if (tr.end_nr_events != tr.nr_events) {
		differs(why, why_bytes, path, "END's count of events", tr.end_nr_events,
			tr.nr_events);
		goto out;
	}
	if (tr_dropped(&tr)) {
		differs(why, why_bytes, path, "dropped", tr_dropped(&tr), 0);
		goto out;
	}
	if (!tr_well_nested(&tr)) {
		snprintf(why, why_bytes, "%s: an exit that does not match its enter", path);
		goto out;
	}
	for (uint32_t i = 0; i < tr.nr_threads; i++)
		if (tr.threads[i].nr_unclosed) {
			differs(why, why_bytes, path, "scopes left open", tr.threads[i].nr_unclosed,
				0);
			goto out;
		}
	if (want && want->pid && tr.pid != want->pid) {
		differs(why, why_bytes, path, "pid", tr.pid, want->pid);
		goto out;
	}
	for (int i = 0; want && i < TR_MAX_CALLS && want->calls[i].name; i++) {
		uint64_t n = tr_calls(&tr, want->calls[i].name);

		if (n != want->calls[i].calls) {
			char what[300];

			snprintf(what, sizeof(what), "\"%s\" activations", want->calls[i].name);
			differs(why, why_bytes, path, what, n, want->calls[i].calls);
			goto out;
		}
	}
	if (want && want->nr_events && tr.nr_events != want->nr_events) {
		differs(why, why_bytes, path, "events", tr.nr_events, want->nr_events);
		goto out;
	}
	err = 0;
out:
	tr_free(&tr);
	return err;
}
