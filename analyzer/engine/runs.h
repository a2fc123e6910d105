/* SPDX-License-Identifier: MIT */
/*
 * runs.h - several trace files in one command (tracetool(1)): each file is
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

#include "engine/events.h"

struct tt_run {
	const char *path;
	uint32_t run_id;
	struct tt_trace meta; /* the metadata pass */
	struct tt_clock clock;
	const char *program;  /* the program's path (MODULE records), or NULL */
	uint32_t pid;
	uint64_t start_unix_ns, duration_ns, dropped, events;
	bool clean;
	bool skimmed; /* tt_run_open_skim(): meta holds frame 0 and the last frame only */
	/* clock.num / clock.den in fixed point for tt_run_ns_of() (set by
	 * tt_run_set_ratio()): fx_hi + fx_lo / 2^64, and (den / 2) / den as
	 * fx_half / 2^64, each rounded down; below fx_tlim ticks the result
	 * fits in 63 bits. */
	uint64_t fx_hi, fx_lo, fx_half, fx_tlim;
};

/* Reads path's metadata. TT_OK, or TT_ERR_FILE with the problem in msg. */
enum tt_status tt_run_open(struct tt_run *r, const char *path, uint32_t run_id, char *msg,
			   size_t msg_bytes);
void tt_run_close(struct tt_run *r);

/*
 * tt_run_open_skim() - tt_run_open() without reading every frame: the
 * compressed frames are walked to the end (no decompression), and only the
 * first frame (FILE_HEADER, MODULE, the first SYNC) and the last one (the
 * last SYNC, written at the end) are decompressed and read. The clock and
 * program are then what a metadata pass gives when nothing between those
 * frames changes them (the caller checks that against its own full read:
 * tt_run_skim_matches()). r->skimmed; duration, drops, events and clean are
 * those of the two frames only. Any problem on the way (a frame that cannot
 * be found or decompressed, one frame only) falls back to tt_run_open()
 * (r->skimmed false), so messages and failures are tt_run_open()'s.
 */
enum tt_status tt_run_open_skim(struct tt_run *r, const char *path, uint32_t run_id, char *msg,
				size_t msg_bytes);

/* True if tr, a full read of r's file, has the clock, pid, start and
 * program that r's skim gave. */
bool tt_run_skim_matches(const struct tt_run *r, const struct tt_trace *tr);

/* Sets the fixed-point ratio of r->clock for tt_run_ns_of(). */
void tt_run_set_ratio(struct tt_run *r);

/*
 * tt_clock_ns(&r->clock, ticks) = floor((ticks * num + den / 2) / den)
 * without its 128-bit division (a tenth of export's and perfetto's time on
 * TSC files), by two multiplications in 64.64 fixed point. The product
 * p = ticks * fx_lo + fx_half falls short of the exact value by less than
 * ticks + 1 units of 2^-64 (both constants are rounded down by less than
 * one unit): when p's fraction is at most ~ticks no carry was lost and
 * the integer part is exact; else (about ticks / 2^64 of the time: never
 * on a real trace) and past fx_tlim, the exact division.
 */
static inline uint64_t tt_run_ns_of(const struct tt_run *r, uint64_t ticks)
{
	if (ticks < r->fx_tlim) {
		unsigned __int128 p = (unsigned __int128)ticks * r->fx_lo + r->fx_half;

		if ((uint64_t)p <= ~ticks)
			return ticks * r->fx_hi + (uint64_t)(p >> 64);
	}
	return tt_clock_ns(&r->clock, ticks);
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
/*
 * tt_runs_warn_same_recording() - one warning line per TRACE operand that
 * is the same recording as an earlier one, by its FILE_HEADER (pid, start
 * ticks, start on the wall clock) and its snapshot's number: a copy of a
 * file, whose events a merging command would count twice (issue 26; the
 * same file, by device and inode, is refused before: options.c). Reads the
 * first frame of each regular file; others are left to the command.
 * O(n log n) in the files. Return: the lines written.
 */
unsigned tt_runs_warn_same_recording(const char *const *paths, unsigned n);
/* The program's base name, or NULL. */
const char *tt_run_program_base(const struct tt_run *r);

#endif /* TT_RUNS_H */
