/* SPDX-License-Identifier: MIT */
/*
 * events.c - one streaming pass over a trace file (see events.h). Memory is
 * bounded by a few decompressed frames (NR_SLOTS) plus the thread and name
 * tables, whatever the file's length. Implements the reader's side of
 * FORMAT.md §2-§3: frame order and seq numbers, the clock rate of §3.3, sites
 * grouped by name, and cumulative drop counts (largest value wins, §3.7).
 * Frames are decompressed on a reader thread, ahead of the parsing on the
 * calling thread (see "The frame pipeline" below).
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "events.h"
#include "progress.h"
#include "symbols.h"
#include "emit.h"
#include "xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SITE_DIRECT_MAX (1u << 20) /* larger site ids go through big_sites */

uint64_t tt_clock_ns(const struct tt_clock *c, uint64_t ticks)
{
	unsigned __int128 v = (unsigned __int128)ticks * c->num + c->den / 2;

	v /= c->den;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

int64_t tt_clock_rel_ns(const struct tt_clock *c, uint64_t abs_ticks)
{
	uint64_t ns;

	if (abs_ticks >= c->start_ticks) {
		ns = tt_clock_ns(c, abs_ticks - c->start_ticks);
		return ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
	}
	ns = tt_clock_ns(c, c->start_ticks - abs_ticks);
	return ns > INT64_MAX ? INT64_MIN : -(int64_t)ns;
}

uint64_t tt_clock_abs_ticks(const struct tt_clock *c, uint64_t rel_ns)
{
	/* The smallest tick count whose rounded ns is >= rel_ns, by bisection
	 * (tt_clock_ns is monotonic): 64 steps whatever the ratio. Estimating
	 * rel_ns * den / num and stepping by one tick from there took ~den/num
	 * steps, billions for a damaged file's absurd clock (found by fuzzing). */
	uint64_t lo = 0, hi = UINT64_MAX - c->start_ticks;

	if (tt_clock_ns(c, hi) < rel_ns)
		return UINT64_MAX;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (tt_clock_ns(c, mid) >= rel_ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	return c->start_ticks + lo;
}

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
	free(tr->thread_hash);
	free(tr->names);
	free(tr->name_hook);
	free(tr->name_hash);
	free(tr->site_name);
	free(tr->big_sites);
	tt_symbols_destroy(tr->syms);
	memset(tr, 0, sizeof(*tr));
}

static uint32_t hash_str(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

struct tt_thread *tt_trace_find_thread(const struct tt_trace *tr, uint32_t serial)
{
	if (!tr->thread_hash)
		return NULL;
	for (uint32_t i = tt_hash_u32(serial) & tr->hash_mask;; i = (i + 1) & tr->hash_mask) {
		uint32_t v = tr->thread_hash[i];

		if (!v)
			return NULL;
		if (tr->threads[v - 1].serial == serial)
			return &tr->threads[v - 1];
	}
}

static void thread_rehash(struct tt_trace *tr, uint32_t slots)
{
	free(tr->thread_hash);
	tr->thread_hash = calloc(slots, sizeof(uint32_t));
	if (!tr->thread_hash)
		tt_oom();
	tr->hash_mask = slots - 1;
	for (uint32_t t = 0; t < tr->nr_threads; t++) {
		uint32_t i = tt_hash_u32(tr->threads[t].serial) & tr->hash_mask;

		while (tr->thread_hash[i])
			i = (i + 1) & tr->hash_mask;
		tr->thread_hash[i] = t + 1;
	}
}

struct tt_thread *tt_trace_thread(struct tt_trace *tr, uint32_t serial)
{
	struct tt_thread *th = tt_trace_find_thread(tr, serial);

	if (th)
		return th;
	if (tr->nr_threads == tr->cap_threads) {
		tr->cap_threads = tr->cap_threads ? 2 * tr->cap_threads : 16;
		tr->threads = tt_xrealloc(tr->threads, tr->cap_threads * sizeof(*tr->threads));
	}
	th = &tr->threads[tr->nr_threads++];
	memset(th, 0, sizeof(*th));
	th->serial = serial;
	if (!tr->thread_hash || tr->nr_threads * 2 > tr->hash_mask + 1)
		thread_rehash(tr, tr->thread_hash ? 2 * (tr->hash_mask + 1) : 64);
	else {
		uint32_t i = tt_hash_u32(serial) & tr->hash_mask;

		while (tr->thread_hash[i])
			i = (i + 1) & tr->hash_mask;
		tr->thread_hash[i] = tr->nr_threads;
	}
	return th;
}

void tt_thread_label(const struct tt_thread *th, char *out, size_t out_bytes)
{
	if (th->name)
		snprintf(out, out_bytes, "%s", th->name);
	else if (th->defined)
		snprintf(out, out_bytes, "%" PRIu32, th->os_tid);
	else
		snprintf(out, out_bytes, "serial%" PRIu32, th->serial);
}

static void name_rehash(struct tt_trace *tr, uint32_t slots)
{
	free(tr->name_hash);
	tr->name_hash = calloc(slots, sizeof(uint32_t));
	if (!tr->name_hash)
		tt_oom();
	tr->name_hash_mask = slots - 1;
	for (uint32_t n = 0; n < tr->nr_names; n++) {
		uint32_t i = hash_str(tr->names[n], strlen(tr->names[n])) & tr->name_hash_mask;

		while (tr->name_hash[i])
			i = (i + 1) & tr->name_hash_mask;
		tr->name_hash[i] = n + 1;
	}
}

/* Interns a name without NUL bytes; takes `own` (a copy of it) if given. */
static uint32_t intern(struct tt_trace *tr, const char *name, size_t name_bytes, char *own)
{
	uint32_t h = hash_str(name, name_bytes), i;
	char *copy;

	if (tr->name_hash) {
		for (i = h & tr->name_hash_mask; tr->name_hash[i]; i = (i + 1) & tr->name_hash_mask) {
			const char *s = tr->names[tr->name_hash[i] - 1];

			if (strncmp(s, name, name_bytes) == 0 && s[name_bytes] == '\0') {
				free(own);
				return tr->name_hash[i] - 1;
			}
		}
	}
	if (tr->nr_names == tr->cap_names) {
		tr->cap_names = tr->cap_names ? 2 * tr->cap_names : 64;
		tr->names = tt_xrealloc(tr->names, tr->cap_names * sizeof(*tr->names));
		tr->name_hook = tt_xrealloc(tr->name_hook, tr->cap_names);
	}
	tr->name_hook[tr->nr_names] = 0;
	copy = own ? own : tt_xstrndup(name, name_bytes);
	tr->names[tr->nr_names++] = copy;
	if (!tr->name_hash || tr->nr_names * 2 > tr->name_hash_mask + 1)
		name_rehash(tr, tr->name_hash ? 2 * (tr->name_hash_mask + 1) : 256);
	else {
		for (i = h & tr->name_hash_mask; tr->name_hash[i]; i = (i + 1) & tr->name_hash_mask)
			;
		tr->name_hash[i] = tr->nr_names;
	}
	return tr->nr_names - 1;
}

uint32_t tt_trace_intern(struct tt_trace *tr, const char *name, size_t name_bytes)
{
	char *copy;

	if (tt_emit_is_clean(name, name_bytes))
		return intern(tr, name, name_bytes, NULL);
	/* Ill-formed UTF-8, a control character or a NUL (which would cut
	 * the name short) is shown as U+FFFD (emit.c). The name is the one
	 * shown, so "a\xffb" and "a\uFFFDb" are one name. */
	copy = tt_emit_clean(name, name_bytes);
	return intern(tr, copy, strlen(copy), copy);
}

/* Big site ids (rare) live in an open-addressed table of (id, name) pairs. */
static uint32_t *big_site_slot(struct tt_trace *tr, uint32_t site, bool insert)
{
	uint32_t i;

	if (insert && (tr->nr_big_sites + 1) * 2 > tr->big_mask + 1) {
		uint32_t old_slots = tr->big_sites ? tr->big_mask + 1 : 0;
		uint32_t *old = tr->big_sites;

		tr->big_mask = old_slots ? 2 * old_slots - 1 : 63;
		tr->big_sites = calloc(2 * (size_t)(tr->big_mask + 1), sizeof(uint32_t));
		if (!tr->big_sites)
			tt_oom();
		for (uint32_t k = 0; k < old_slots; k++) {
			if (!old[2 * k])
				continue;
			for (i = tt_hash_u32(old[2 * k]) & tr->big_mask; tr->big_sites[2 * i];
			     i = (i + 1) & tr->big_mask)
				;
			tr->big_sites[2 * i] = old[2 * k];
			tr->big_sites[2 * i + 1] = old[2 * k + 1];
		}
		free(old);
	}
	if (!tr->big_sites)
		return NULL;
	for (i = tt_hash_u32(site) & tr->big_mask; tr->big_sites[2 * i]; i = (i + 1) & tr->big_mask)
		if (tr->big_sites[2 * i] == site)
			return &tr->big_sites[2 * i + 1];
	if (!insert)
		return NULL;
	tr->nr_big_sites++;
	tr->big_sites[2 * i] = site;
	tr->big_sites[2 * i + 1] = TT_NO_NAME;
	return &tr->big_sites[2 * i + 1];
}

static void site_define(struct tt_trace *tr, uint32_t site, uint32_t name)
{
	if (site >= SITE_DIRECT_MAX) {
		*big_site_slot(tr, site, true) = name;
		return;
	}
	if (site >= tr->nr_site_slots) {
		uint32_t n = tr->nr_site_slots ? tr->nr_site_slots : 256;

		while (n <= site)
			n *= 2;
		/* One more slot: site_name[nr_site_slots] stays TT_NO_NAME, so
		 * that a lookup can clamp its index instead of testing it. */
		tr->site_name = tt_xrealloc(tr->site_name, ((size_t)n + 1) * sizeof(uint32_t));
		for (uint32_t i = tr->nr_site_slots; i <= n; i++)
			tr->site_name[i] = TT_NO_NAME;
		tr->nr_site_slots = n;
	}
	tr->site_name[site] = name;
}

uint32_t tt_trace_site_name_slow(struct tt_trace *tr, uint32_t site)
{
	char buf[32];
	uint32_t name;

	if (site >= SITE_DIRECT_MAX) {
		uint32_t *slot = big_site_slot(tr, site, false);

		if (slot && *slot != TT_NO_NAME)
			return *slot;
	}
	/* FORMAT.md §3.11: a site named by a function's address (symbols.c). */
	uint64_t addr;
	if (tt_symbols_func_addr(tr->syms, site, &addr)) {
		char fn[RECFMT_MAX_NAME_BYTES + 64];

		tt_symbols_name(tr->syms, addr, fn, sizeof(fn));
		name = tt_trace_intern(tr, fn, strlen(fn));
		tr->name_hook[name] = 1;
		site_define(tr, site, name);
		return name;
	}
	/* FORMAT.md §2: a site whose SITE record was lost is named by its number. */
	snprintf(buf, sizeof(buf), "site#%" PRIu32, site);
	name = tt_trace_intern(tr, buf, strlen(buf));
	site_define(tr, site, name);
	return name;
}

void tt_trace_clock(const struct tt_trace *tr, struct tt_clock *c)
{
	c->start_ticks = tr->hdr.start_ticks;
	if (tr->hdr.clock == RECFMT_CLOCK_MONOTONIC) {
		c->num = c->den = 1;
	} else if (tr->nr_syncs >= 2 && tr->last_sync.ticks > tr->first_sync.ticks &&
		   tr->last_sync.mono_ns > tr->first_sync.mono_ns) {
		c->num = tr->last_sync.mono_ns - tr->first_sync.mono_ns;
		c->den = tr->last_sync.ticks - tr->first_sync.ticks;
	} else {
		c->num = 1000000000ull;
		c->den = tr->hdr.ticks_per_second ? tr->hdr.ticks_per_second : 1000000000ull;
	}
}

static void note(struct tt_trace *tr, char *slot, size_t slot_bytes, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void note(struct tt_trace *tr, char *slot, size_t slot_bytes, const char *fmt, ...)
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
static void note_problem_at(struct tt_trace *tr, uint64_t frame, uint64_t offset,
			    const char *what)
{
	if (tr->first_problem[0])
		return;
	snprintf(tr->first_problem, sizeof(tr->first_problem), "%s", what);
	tr->first_problem_frame = frame;
	tr->first_problem_offset = offset;
}

static void note_err(struct tt_trace *tr, const struct recfmt_error *err)
{
	char buf[256];

	recfmt_error_describe(err, buf, sizeof(buf));
	note_problem_at(tr, err->frame_index, err->record_offset, buf);
}

static void note_record(struct tt_trace *tr, struct recfmt_error *err, uint64_t frame_index,
			uint64_t frame_offset)
{
	err->frame_index = frame_index;
	err->frame_offset = frame_offset;
	note_err(tr, err);
}

static void see_ticks(struct tt_trace *tr, uint64_t ticks)
{
	if (ticks > tr->max_ticks)
		tr->max_ticks = ticks;
}

/*
 * Decodes one frame's records. Return: TT_OK, or TT_ERR_FILE for a problem
 * that makes the whole file unusable (no header, newer version).
 */
static enum tt_status walk_frame(struct tt_trace *tr, const uint8_t *data, size_t len,
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
		note_record(tr, &err, index, offset);
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
		note_problem_at(tr, index, 0, what);
	}
	tr->next_seq = (uint64_t)seq + 1;
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
			note_record(tr, &err, index, offset);
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
			site_define(tr, s.id, tt_trace_intern(tr, s.name, s.name_bytes));
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
			if (tr->nr_walkers > 1 &&
			    (uint32_t)(th - tr->threads) % tr->nr_walkers != tr->walker) {
				/* Another replica's thread (tt_trace_walk_many()). */
				see_ticks(tr, it.ticks);
				break;
			}
			if (fn && fn(ctx, tr, th, &it) < 0) {
				tr->nr_bad_blocks++;
				tr->nr_failed_blocks++;
				err.record_offset = rec.offset;
				snprintf(err.message, sizeof(err.message),
					 "EVENTS block of thread %" PRIu32
					 " does not decode to its %" PRIu32 " events",
					 it.thread, it.nr_events);
				note_record(tr, &err, index, offset);
			}
			/* The last event's ticks, or base_ticks without fn. */
			see_ticks(tr, it.ticks);
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
		case RECFMT_PROBE_COST:
			if ((st = recfmt_decode_probe_cost(&rec, &tr->probe_cost, &err)) != RECFMT_OK)
				break;
			tr->has_probe_cost = true;
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
				note(tr, tr->count_problem, sizeof(tr->count_problem),
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
		case RECFMT_FRAME:
		case RECFMT_FILE_HEADER:
		default:
			/* FORMAT.md §1: unknown types are skipped. A second FRAME or
			 * FILE_HEADER is not meaningful; ignore it. */
			break;
		}
		if (st != RECFMT_OK) {
			tr->nr_bad_blocks++;
			note_record(tr, &err, index, offset);
		}
	}
	return TT_OK;
}

/*
 * The frame pipeline. Reading and decompressing are 15-30 % of a walk's CPU
 * time (perf, on the traces of docs/ANALYZER.md's Benchmarks), and they do
 * not depend on what the frames say: a reader thread runs
 * recfmt_reader_next_into() ahead into a ring of NR_SLOTS frame buffers while
 * walkers parse and pair the frames, in file order. Each slot records one
 * reader call exactly (status, error, frame index and offset), and every
 * walker applies it with the same code as the single-threaded path
 * (take_slot()), so messages, counts and locations are the same either way.
 *
 * A walk may have several replicas (tt_trace_walk_many()): each is a whole
 * struct tt_trace that reads every record, and pairs the EVENTS blocks of
 * its own share of the threads. Each replica has its own walker thread
 * (the first runs on the calling thread); they read the same slots, which
 * are read-only while full, and a slot is refilled only when every walker
 * is done with it. Memory stays bounded: NR_SLOTS decompressed frames.
 *
 * TRACETOOL_THREADS=1 in the environment reads on the calling thread, with
 * one slot and one walker, so that events/s on one core can be measured; so
 * do a process bound to one CPU and a failed pthread_create().
 */
/* Four: walkers may drift a frame or two apart, and the reader must stay a
 * frame ahead of the slowest; more would only cost memory. */
#define NR_SLOTS 4

/* One call of recfmt_reader_next_into() and what it left behind. */
struct frame_slot {
	struct recfmt_buf buf;	 /* the frame, when st is RECFMT_OK */
	enum recfmt_status st;
	struct recfmt_error err; /* when st is an error */
	uint64_t index, offset;	 /* recfmt_reader_frame_index()/_offset() */
	bool can_continue;	 /* recfmt_reader_can_continue() */
};

static void read_slot(struct recfmt_reader *r, struct frame_slot *s)
{
	s->st = recfmt_reader_next_into(r, &s->buf, &s->err);
	s->index = recfmt_reader_frame_index(r);
	s->offset = recfmt_reader_frame_offset(r);
	s->can_continue = recfmt_reader_can_continue(r);
	tt_progress_read(s->offset, recfmt_reader_file_bytes(r)); /* progress.h */
}

/* True if the reader has nothing after this slot (recfmt_reader_next()). */
static bool slot_is_last(const struct frame_slot *s)
{
	return s->st != RECFMT_OK && !(s->st == RECFMT_CORRUPT && s->can_continue);
}

/*
 * Applies one reader call's outcome to tr. Return: true to take the next
 * slot; false when the walk is over (*ts says how).
 */
static bool take_slot(struct tt_trace *tr, const struct frame_slot *s, tt_block_fn fn, void *ctx,
		      char *msg, size_t msg_bytes, enum tt_status *ts)
{
	switch (s->st) {
	case RECFMT_OK:
		*ts = walk_frame(tr, s->buf.data, s->buf.len, s->index, s->offset, fn, ctx, msg,
				 msg_bytes);
		return *ts == TT_OK;
	case RECFMT_END_OF_INPUT:
		return false;
	case RECFMT_TRUNCATED:
		tr->truncated = true;
		recfmt_error_describe(&s->err, tr->truncation, sizeof(tr->truncation));
		return false;
	case RECFMT_CORRUPT:
		tr->nr_bad_frames++;
		note_err(tr, &s->err);
		return s->can_continue;
	default:
		recfmt_error_describe(&s->err, msg, msg_bytes);
		*ts = TT_ERR_FILE;
		return false;
	}
}

/* One replica of a walk and how its walk ended. */
struct replica {
	struct tt_trace *tr;
	void *ctx;
	tt_block_fn fn;
	enum tt_status ts;
	bool more; /* take_slot() wants the next slot */
	char msg[512];
};

/* Applies a slot to each replica still walking. Return: true if any is. */
static bool take_all(struct replica **rs, unsigned nr, const struct frame_slot *s)
{
	bool any = false;

	for (unsigned i = 0; i < nr; i++) {
		struct replica *r = rs[i];

		if (r->more)
			r->more = take_slot(r->tr, s, r->fn, r->ctx, r->msg, sizeof(r->msg), &r->ts);
		any |= r->more;
	}
	return any;
}

/*
 * The queue between the reader thread and the walkers. Slot k (counted from
 * 0 over the whole walk) lives in slot[k % NR_SLOTS]. Slots
 * [min(done), nr_filled) are full and read by the walkers that have not
 * passed them; the others belong to the reader. A slot changes hands only
 * when nr_filled or a done[] changes under the lock, so the unlock after
 * filling (reader) or after finishing (walker) orders the slot's contents
 * before the other side's lock.
 */
#define MAX_WALKERS 8

struct frame_pipe {
	pthread_mutex_t lock;
	pthread_cond_t filled;	/* reader broadcasts, walkers wait: a new slot or reader_done */
	pthread_cond_t emptied; /* walkers signal, reader waits: room or stop */
	/* Written before the threads start, then read-only until they are joined. */
	struct recfmt_reader *r;
	unsigned nr_walkers;
	/* Under lock. */
	uint64_t nr_filled;	      /* reader increments */
	uint64_t done[MAX_WALKERS];  /* walker w increments done[w] */
	bool reader_done;	      /* the reader fills no more slots */
	bool stop;		      /* a walker wants nothing more: stop reading */
	struct frame_slot slot[NR_SLOTS];
};

struct walker {
	struct frame_pipe *p;
	unsigned id;
	struct replica *rs[MAX_WALKERS]; /* the replicas this thread walks */
	unsigned nr;
};

static uint64_t min_done(const struct frame_pipe *p)
{
	uint64_t m = p->done[0];

	for (unsigned w = 1; w < p->nr_walkers; w++)
		m = p->done[w] < m ? p->done[w] : m;
	return m;
}

static void *reader_main(void *arg)
{
	struct frame_pipe *p = arg;

	for (uint64_t k = 0;; k++) {
		struct frame_slot *s = &p->slot[k % NR_SLOTS];
		bool stop, last;

		pthread_mutex_lock(&p->lock);
		/* min_done() is UINT64_MAX once no walker reads any more. */
		for (uint64_t m; (m = min_done(p)) != UINT64_MAX && k - m >= NR_SLOTS && !p->stop;)
			pthread_cond_wait(&p->emptied, &p->lock);
		stop = p->stop;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			break;
		read_slot(p->r, s); /* slot k is the reader's: every walker passed k - NR_SLOTS */
		last = slot_is_last(s);
		pthread_mutex_lock(&p->lock);
		p->nr_filled = k + 1; /* hands s to the walkers */
		pthread_cond_broadcast(&p->filled);
		pthread_mutex_unlock(&p->lock);
		if (last)
			break;
	}
	pthread_mutex_lock(&p->lock);
	p->reader_done = true;
	pthread_cond_broadcast(&p->filled);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void *walker_main(void *arg)
{
	struct walker *w = arg;
	struct frame_pipe *p = w->p;
	bool more = true;

	for (uint64_t k = 0; more; k++) {
		bool have;

		pthread_mutex_lock(&p->lock);
		while (k == p->nr_filled && !p->reader_done)
			pthread_cond_wait(&p->filled, &p->lock);
		have = k < p->nr_filled;
		pthread_mutex_unlock(&p->lock);
		/* Replicas see the same slots and so end at the same one; a
		 * walker left without a slot by another's stop just ends. */
		if (!have)
			break;
		more = take_all(w->rs, w->nr, &p->slot[k % NR_SLOTS]);
		pthread_mutex_lock(&p->lock);
		p->done[w->id] = k + 1; /* s is no longer read by this walker */
		p->stop |= !more;
		pthread_cond_signal(&p->emptied);
		pthread_mutex_unlock(&p->lock);
	}
	/* Stop counting this walker in min_done(): it reads no more slots. */
	pthread_mutex_lock(&p->lock);
	p->done[w->id] = UINT64_MAX;
	pthread_cond_signal(&p->emptied);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/*
 * The walk with a reader thread and one walker per replica (a walker whose
 * thread cannot start is run by the calling thread's walker). Return: false
 * if the reader could not start (nothing was read).
 */
static bool walk_pipelined(struct recfmt_reader *r, struct replica *rs, unsigned n)
{
	struct frame_pipe p = { .r = r, .nr_walkers = n };
	struct walker w[MAX_WALKERS];
	pthread_t reader, tid[MAX_WALKERS];
	bool started[MAX_WALKERS] = { false };
	bool ok = false;

	/* With default attributes these cannot fail (POSIX lists no error
	 * for them that applies, and glibc returns 0). */
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.filled, NULL);
	pthread_cond_init(&p.emptied, NULL);
	for (unsigned i = 0; i < NR_SLOTS; i++)
		recfmt_buf_init(&p.slot[i].buf);
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct walker){ .p = &p, .id = i };
		w[i].rs[w[i].nr++] = &rs[i];
	}
	if (pthread_create(&reader, NULL, reader_main, &p))
		goto out;
	for (unsigned i = 1; i < n; i++) {
		started[i] = pthread_create(&tid[i], NULL, walker_main, &w[i]) == 0;
		if (!started[i]) {
			/* No thread: the calling thread walks this replica too. */
			w[0].rs[w[0].nr++] = &rs[i];
			pthread_mutex_lock(&p.lock);
			p.done[i] = UINT64_MAX;
			pthread_mutex_unlock(&p.lock);
		}
	}
	walker_main(&w[0]);
	for (unsigned i = 1; i < n; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	pthread_join(reader, NULL);
	ok = true;
out:
	pthread_cond_destroy(&p.filled);
	pthread_cond_destroy(&p.emptied);
	pthread_mutex_destroy(&p.lock);
	for (unsigned i = 0; i < NR_SLOTS; i++)
		recfmt_buf_fini(&p.slot[i].buf);
	return ok;
}

/*
 * True if TRACETOOL_THREADS asks for everything on the calling thread, or if
 * this process may run on one CPU only (taskset): a reader thread would
 * then only take turns with the walker.
 */
static bool single_threaded(void)
{
	const char *v = getenv("TRACETOOL_THREADS");
	cpu_set_t cpus;

	if (v && strcmp(v, "1") == 0)
		return true;
	return sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) == 1;
}

unsigned tt_trace_walkers(void)
{
	const char *v = getenv("TRACETOOL_THREADS");
	cpu_set_t cpus;
	char *end;
	long n;

	if (single_threaded())
		return 1;
	/* TRACETOOL_THREADS=N (2..8) asks for N walkers whatever the CPUs. */
	if (v && *v) {
		n = strtol(v, &end, 10);
		if (!*end && n >= 1)
			return n > MAX_WALKERS ? MAX_WALKERS : (unsigned)n;
	}
	if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0)
		return 1;
	n = CPU_COUNT(&cpus);
	return n < 1 ? 1 : n > MAX_WALKERS ? MAX_WALKERS : (unsigned)n;
}

enum tt_status tt_trace_walk_many(struct tt_trace **trs, void **ctxs, unsigned n, tt_block_fn fn,
				  char *msg, size_t msg_bytes)
{
	struct replica rs[MAX_WALKERS], *all[MAX_WALKERS];
	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	enum recfmt_status st;
	enum tt_status ts = TT_OK;

	if (n < 1 || n > MAX_WALKERS) {
		snprintf(msg, msg_bytes, "internal error: %u walkers", n);
		return TT_ERR_FILE;
	}
	st = recfmt_reader_open(&r, trs[0]->path, &err);
	if (st != RECFMT_OK) {
		recfmt_error_describe(&err, msg, msg_bytes);
		return TT_ERR_FILE;
	}
	for (unsigned i = 0; i < n; i++) {
		trs[i]->file_bytes = recfmt_reader_file_bytes(r);
		trs[i]->walker = i;
		trs[i]->nr_walkers = n;
		rs[i] = (struct replica){ .tr = trs[i], .ctx = ctxs ? ctxs[i] : NULL, .fn = fn,
					  .ts = TT_OK, .more = true };
		all[i] = &rs[i];
	}
	if (single_threaded() || !walk_pipelined(r, rs, n)) {
		struct frame_slot s = { .st = RECFMT_OK };

		recfmt_buf_init(&s.buf);
		do
			read_slot(r, &s);
		while (take_all(all, n, &s));
		recfmt_buf_fini(&s.buf);
	}
	recfmt_reader_close(r);
	tt_progress_done();
	/* Every replica ends the same way; report the first that failed. */
	for (unsigned i = 0; i < n && ts == TT_OK; i++) {
		ts = rs[i].ts;
		if (ts != TT_OK)
			snprintf(msg, msg_bytes, "%s", rs[i].msg);
	}
	for (unsigned i = 1; i < n && ts == TT_OK; i++)
		tt_trace_merge(trs[0], trs[i]);
	if (ts == TT_OK && trs[0]->nr_recordings > 1) {
		/* Never merged: each has its own clock, threads and sites. */
		snprintf(msg, msg_bytes,
			 "%" PRIu32 " recordings concatenated (the second starts at frame %" PRIu64
			 ", byte %" PRIu64 "); analyse each in a file of its own",
			 trs[0]->nr_recordings, trs[0]->second_header_frame,
			 trs[0]->second_header_offset);
		ts = TT_ERR_FILE;
	}
	if (ts == TT_OK)
		tt_symbols_warn(trs[0]->syms); /* once, whatever the replicas met */
	if (ts == TT_OK && !trs[0]->has_header) {
		struct tt_trace *tr = trs[0];

		if (tr->first_problem[0])
			snprintf(msg, msg_bytes, "%s", tr->first_problem);
		else if (tr->truncation[0])
			snprintf(msg, msg_bytes, "%s", tr->truncation);
		else if (tr->file_bytes == 0)
			snprintf(msg, msg_bytes, "empty file (not a rec trace)");
		else
			snprintf(msg, msg_bytes, "no FILE_HEADER (not a rec trace)");
		ts = TT_ERR_FILE;
	}
	return ts;
}

enum tt_status tt_trace_walk(struct tt_trace *tr, tt_block_fn fn, void *ctx, char *msg,
			     size_t msg_bytes)
{
	return tt_trace_walk_many(&tr, &ctx, 1, fn, msg, msg_bytes);
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
