/* SPDX-License-Identifier: MIT */
/*
 * runs.c - the metadata pass of runs.h.
 */
#include "engine/runs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/symbols.h"
#include "common/xalloc.h"

/* The run's figures from r->meta, read by a pass or a skim. */
static void fill(struct tt_run *r)
{
	tt_trace_clock(&r->meta, &r->clock);
	tt_run_set_ratio(r);
	r->program = tt_symbols_program(r->meta.syms);
	r->pid = r->meta.hdr.pid;
	r->start_unix_ns = r->meta.hdr.start_real_ns;
	r->duration_ns = r->meta.max_ticks > r->clock.start_ticks
		? tt_clock_ns(&r->clock, r->meta.max_ticks - r->clock.start_ticks) : 0;
	for (uint32_t i = 0; i < r->meta.nr_threads; i++)
		r->dropped += r->meta.threads[i].nr_dropped;
	if (r->meta.has_end && r->meta.end.nr_dropped > r->dropped)
		r->dropped = r->meta.end.nr_dropped;
	r->events = r->meta.nr_events;
	r->clean = r->meta.has_end && !r->meta.truncated;
}

static void run_init(struct tt_run *r, const char *path, uint32_t run_id)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->run_id = run_id;
	tt_trace_init(&r->meta, path);
}

enum tt_status tt_run_open(struct tt_run *r, const char *path, uint32_t run_id, char *msg,
			   size_t msg_bytes)
{
	run_init(r, path, run_id);
	/* Metadata only: the events are decoded once, by the main pass, which
	 * also gives the exact duration (tt_run_saw_ticks()). */
	if (tt_trace_walk(&r->meta, NULL, NULL, msg, msg_bytes) != TT_OK)
		return TT_ERR_FILE;
	fill(r);
	return TT_OK;
}

enum tt_status tt_run_open_skim(struct tt_run *r, const char *path, uint32_t run_id, char *msg,
				size_t msg_bytes)
{
	run_init(r, path, run_id);
	if (!tt_trace_skim(&r->meta)) { /* the full pass, with its own messages */
		tt_trace_fini(&r->meta);
		return tt_run_open(r, path, run_id, msg, msg_bytes);
	}
	r->skimmed = true;
	fill(r);
	return TT_OK;
}

bool tt_run_skim_matches(const struct tt_run *r, const struct tt_trace *tr)
{
	struct tt_clock c;
	const char *prog = tt_symbols_program(tr->syms);

	tt_trace_clock(tr, &c);
	return c.num == r->clock.num && c.den == r->clock.den &&
	       c.start_ticks == r->clock.start_ticks && tr->hdr.pid == r->pid &&
	       tr->hdr.start_real_ns == r->start_unix_ns &&
	       (prog && r->program ? strcmp(prog, r->program) == 0 : prog == r->program);
}

void tt_run_set_ratio(struct tt_run *r)
{
	uint64_t num = r->clock.num, den = r->clock.den;

	r->fx_hi = r->fx_lo = r->fx_half = r->fx_tlim = 0; /* tlim 0: the exact way */
	if (!den)
		return;
	r->fx_hi = num / den;
	r->fx_lo = (uint64_t)(((unsigned __int128)(num % den) << 64) / den);
	r->fx_half = (uint64_t)(((unsigned __int128)(den / 2) << 64) / den);
	/* ticks * (fx_hi + 1) < 2^63: the result and its sum do not wrap */
	r->fx_tlim = r->fx_hi >> 62 ? 0 : ((uint64_t)1 << 63) / (r->fx_hi + 1);
}

void tt_run_close(struct tt_run *r)
{
	tt_trace_fini(&r->meta);
}

const char *tt_run_program_base(const struct tt_run *r)
{
	if (!r->program)
		return NULL;
	const char *b = strrchr(r->program, '/');
	return b ? b + 1 : r->program;
}

void tt_run_saw_ticks(struct tt_run *r, uint64_t max_ticks)
{
	if (max_ticks > r->clock.start_ticks &&
	    tt_clock_ns(&r->clock, max_ticks - r->clock.start_ticks) > r->duration_ns)
		r->duration_ns = tt_clock_ns(&r->clock, max_ticks - r->clock.start_ticks);
}

/* A recording's identity: its FILE_HEADER's pid and start (ticks and wall
 * clock), and its snapshot's number (0: not a snapshot). */
struct run_id {
	uint32_t pid, snapshot;
	uint64_t start_ticks, start_real_ns;
	unsigned i;
};

/* path's identity from its first frame; false if it has none (not a
 * regular file, unreadable, no FILE_HEADER there: the command says why). */
static bool read_run_id(const char *path, struct run_id *id)
{
	struct recfmt_reader *rd;
	struct recfmt_error err = { 0 };
	struct recfmt_cursor cur;
	struct recfmt_record rec;
	const uint8_t *data;
	size_t len;
	struct stat st;
	bool has_hdr = false;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    recfmt_reader_open(&rd, path, &err) != RECFMT_OK)
		return false;
	if (recfmt_reader_next(rd, &data, &len, &err) == RECFMT_OK) {
		recfmt_cursor_init(&cur, data, len);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			struct recfmt_header h;
			struct recfmt_snapshot sn;

			if (rec.type == RECFMT_FILE_HEADER && !has_hdr &&
			    recfmt_decode_header(&rec, &h, &err) == RECFMT_OK) {
				id->pid = h.pid;
				id->start_ticks = h.start_ticks;
				id->start_real_ns = h.start_real_ns;
				has_hdr = true;
			} else if (rec.type == RECFMT_SNAPSHOT &&
				   recfmt_decode_snapshot(&rec, &sn, &err) == RECFMT_OK) {
				id->snapshot = sn.number;
			}
		}
	}
	recfmt_reader_close(rd);
	return has_hdr;
}

static int cmp_run_id(const void *pa, const void *pb)
{
	const struct run_id *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_real_ns != b->start_real_ns)
		return a->start_real_ns < b->start_real_ns ? -1 : 1;
	if (a->start_ticks != b->start_ticks)
		return a->start_ticks < b->start_ticks ? -1 : 1;
	if (a->snapshot != b->snapshot)
		return a->snapshot < b->snapshot ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

unsigned tt_runs_warn_same_recording(const char *const *paths, unsigned n)
{
	struct run_id *v;
	unsigned m = 0, warned = 0;

	if (n < 2)
		return 0;
	v = tt_xcalloc(n, sizeof(*v));
	for (unsigned i = 0; i < n; i++) {
		memset(&v[m], 0, sizeof(v[m]));
		v[m].i = i;
		m += read_run_id(paths[i], &v[m]);
	}
	qsort(v, m, sizeof(*v), cmp_run_id);
	for (unsigned k = 1, first = 0; k < m; k++) {
		if (v[k].pid != v[first].pid || v[k].start_real_ns != v[first].start_real_ns ||
		    v[k].start_ticks != v[first].start_ticks || v[k].snapshot != v[first].snapshot) {
			first = k; /* sorted: a recording's files are together, first first */
			continue;
		}
		fprintf(stderr,
			"tracetool: %s: warning: the same recording as %s (pid %" PRIu32
			", the same start ticks and wall-clock time): a copy's events count twice\n",
			paths[v[k].i], paths[v[first].i], v[k].pid);
		warned++;
	}
	free(v);
	return warned;
}
