/* SPDX-License-Identifier: MIT */
/*
 * runs.h - several trace files in one command (contract §10): each file is
 * a run, numbered from 0 in the order given, with what export's `runs` table
 * and perfetto's process tracks need from a metadata pass over it (the final
 * clock, thread names, program, pid, wall-clock start, duration, drops,
 * whether it ended cleanly). Times of a run are put on the wall clock by
 * unix_ns = start_unix_ns + (ticks - start_ticks) in ns, with the tick rate
 * the file's SYNC records refine (tt_trace_clock), so runs of one machine
 * (a fork's parent and child, the processes of a service) share a timeline.
 */
#ifndef TT_RUNS_H
#define TT_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

struct tt_run {
	const char *path;
	uint32_t run_id;
	struct tt_trace meta; /* the metadata pass */
	struct tt_clock clock;
	const char *program;  /* the program's path (MODULE records), or NULL */
	uint32_t pid;
	uint64_t start_unix_ns, duration_ns, dropped, events;
	bool clean;
	double ns_per_tick; /* clock.num / clock.den: tt_run_ns_of()'s first guess */
};

/* Reads path's metadata. TT_OK, or TT_ERR_FILE with the problem in msg. */
enum tt_status tt_run_open(struct tt_run *r, const char *path, uint32_t run_id, char *msg,
			   size_t msg_bytes);
void tt_run_close(struct tt_run *r);

/*
 * tt_clock_ns(&r->clock, ticks) without its 128-bit division (a tenth of
 * export's and perfetto's time on TSC files): a guess in floating point,
 * then corrected to the exact round(ticks * num / den) by multiplications.
 */
static inline uint64_t tt_run_ns_of(const struct tt_run *r, uint64_t ticks)
{
	double g = (double)ticks * r->ns_per_tick;
	unsigned __int128 x, qd;
	uint64_t q;

	if (!(g < 9.0e15)) /* past 2^53 ns (104 days; damaged) or NaN: the exact way */
		return tt_clock_ns(&r->clock, ticks);
	q = (uint64_t)g;
	x = (unsigned __int128)ticks * r->clock.num + r->clock.den / 2;
	qd = (unsigned __int128)q * r->clock.den;
	while (qd > x) {
		q--;
		qd -= r->clock.den;
	}
	while (qd + r->clock.den <= x) {
		q++;
		qd += r->clock.den;
	}
	return q;
}

/* ns since the run's start (negative before it) and on the wall clock. */
static inline int64_t tt_run_rel_ns(const struct tt_run *r, uint64_t ticks)
{
	uint64_t ns;

	if (r->clock.num == r->clock.den)
		return (int64_t)(ticks - r->clock.start_ticks);
	if (ticks < r->clock.start_ticks)
		return tt_clock_rel_ns(&r->clock, ticks);
	ns = tt_run_ns_of(r, ticks - r->clock.start_ticks);
	return ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
}
/* The wall clock of a time since the start (tt_run_rel_ns()'s), so that a
 * caller that has both converts once. */
static inline uint64_t tt_run_unix_of_rel(const struct tt_run *r, int64_t rel)
{
	if (rel < 0) /* before the start; 0 rather than before 1970 (damaged clocks) */
		return (uint64_t)0 - (uint64_t)rel > r->start_unix_ns
			? 0 : r->start_unix_ns - ((uint64_t)0 - (uint64_t)rel);
	return r->start_unix_ns + (uint64_t)rel; /* wraps only on a damaged file */
}
static inline uint64_t tt_run_unix_ns(const struct tt_run *r, uint64_t ticks)
{
	return tt_run_unix_of_rel(r, tt_run_rel_ns(r, ticks));
}
/* ns of a tick count (a duration); exact, with no division when a tick
 * is a nanosecond (the monotonic clock). */
static inline uint64_t tt_run_ns(const struct tt_run *r, uint64_t ticks)
{
	return r->clock.num == r->clock.den ? ticks : tt_run_ns_of(r, ticks);
}
/* The latest tick the main pass saw: the duration from the events (the
 * metadata pass reads no event). */
void tt_run_saw_ticks(struct tt_run *r, uint64_t max_ticks);
/* The program's base name, or NULL. */
const char *tt_run_program_base(const struct tt_run *r);

#endif /* TT_RUNS_H */
