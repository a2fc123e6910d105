/* SPDX-License-Identifier: MIT */
/*
 * runs.c - the metadata pass of runs.h.
 */
#include "runs.h"

#include <string.h>

#include "symbols.h"

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
