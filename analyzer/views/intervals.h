/* SPDX-License-Identifier: MIT */
/*
 * intervals.h - summary --interval=DUR (docs/ANALYZER.md, "Intervals"):
 * for each interval [k*DUR, (k+1)*DUR) from the trace start, each thread
 * and each scope name, the calls that started in it and the scope's time
 * inside it. An outermost activation's time is split at the boundaries
 * (nested activations of the same name add no time, as in total_ns), and
 * per thread and name the interval times are rounded cumulatively, so that
 * they add up exactly to summary --by-thread's total_ns. The activations
 * come from the pairing engine (scopes.h) on all walkers; each walker
 * counts into a table of its own, merged at the end.
 */
#ifndef TT_INTERVALS_H
#define TT_INTERVALS_H

#include "common/hmap.h"
#include "engine/events.h"
#include "engine/filter.h"
#include "engine/front.h"
#include "engine/report.h"

struct tt_interval_row {
	uint64_t k; /* interval index: starts at k * interval_ns */
	uint32_t thread; /* index into tr.threads */
	const char *label;
	const char *name;
	uint64_t calls, total_ns;
};

struct iv_cell {
	uint32_t thread, name; /* thread index + 1 */
	uint64_t k;
	uint64_t ticks, calls;
};

/* (thread, name, k) -> ticks, calls: cells in order of first use, and a
 * map (hmap.h) that finds them. */
struct tt_iv_table {
	struct iv_cell *cells;
	size_t nr_cells, cap_cells;
	struct tt_hmap map;
	bool too_many; /* more rows than row_limit() (intervals.c) allows */
	uint64_t nr_acts; /* activations seen so far: the row limit follows them */
	struct iv_cell spare; /* where counts go once there are too many */
};

struct tt_intervals {
	struct tt_report rep; /* rep.tr: the trace, rep.clock: its clock */
	struct tt_clock clock;
	uint64_t interval_ns;
	bool too_many;
	struct tt_iv_table all; /* the walkers' tables merged */
	void *walkers[TT_WALK_MAX_REPLICAS];
	struct tt_interval_row *rows;
	size_t nr_rows;
	char **labels;
	char problems[768];
};

/*
 * Most rows (interval, thread, scope) a run builds; more stops it. Memory
 * follows the file's activations, not the time span they claim (a tiny
 * file with a day between two events and --interval=1ms): at most
 * TT_INTERVAL_ROWS_BASE + TT_INTERVAL_ROWS_PER_ACT rows per activation
 * seen, and never more than TT_MAX_INTERVAL_ROWS (about 64 bytes each).
 */
#define TT_MAX_INTERVAL_ROWS (1u << 22)
#define TT_INTERVAL_ROWS_BASE (1u << 16)
#define TT_INTERVAL_ROWS_PER_ACT 4096u

/*
 * tt_intervals_run() - read the trace (a metadata pass for the clock, then
 * the engine's pass on all walkers) and build the rows, sorted by interval, thread, then
 * --sort (total, calls or name; the other keys sort by total).
 * Return: TT_OK, or TT_ERR_FILE with msg (unreadable, or more than
 * the row limit above).
 */
enum tt_status tt_intervals_run(struct tt_intervals *iv, const struct tt_options *o, char *msg,
				size_t msg_bytes);
void tt_intervals_fini(struct tt_intervals *iv);

#endif /* TT_INTERVALS_H */
