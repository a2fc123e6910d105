/* SPDX-License-Identifier: MIT */
/*
 * lanes.h - one output written by the walkers of a parallel walk (front.h),
 * byte for byte what a single walker writes, whatever the number of
 * walkers (docs/ANALYZER.md, "Parallel timelines"). chrome and perfetto
 * use it.
 *
 * Each walker writes into its own lane (struct tt_lane: a struct tt_out
 * over pages), and marks where in the walk its next bytes belong
 * (tt_lane_at(), with tt_trace.pos of events.h, which every replica counts
 * alike). Bytes at one position come from one walker only, and a walker's
 * positions only grow, so sorting the lanes' runs of bytes by position
 * gives what one walker writes. After each record a walker says it is done
 * with every position below its tt_trace.pos (tt_lane_done()); runs below
 * every walker's are then final, and whichever walker finds enough of them
 * writes them out, in order, with writev(2) from the pages themselves.
 *
 * Memory: a lane keeps at most about 8 MiB (TRACETOOL_LANE_BYTES) of bytes
 * not yet written. Past that its walker waits for the walkers that hold the
 * output back, when they run on other threads (they are behind it in the
 * file, and a walker behind never waits for one ahead: pipeline.c);
 * otherwise (one thread walks several replicas in turn: TRACETOOL_THREADS
 * beyond the CPUs, a frame index's walk) it moves its pages into a
 * temporary file ($TMPDIR, else /tmp), read back when their turn comes. So
 * memory is bounded whatever the output's size, and the temporary files
 * hold at most what is not yet written.
 */
#ifndef TT_LANES_H
#define TT_LANES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/emit.h"

struct tt_lane_page;
struct tt_lanes;

struct tt_lane {
	struct tt_out out; /* where the walker writes: its current page */
	struct tt_lanes *ls;
	uint64_t pos;	   /* of the bytes written now (tt_lane_at()) */
	uint32_t nr_marks; /* of the current page, committed or not */
	/* Under ls->lock (the walker's tt_lane_done() and page changes; the
	 * merge; the spill). */
	struct tt_lane_page *head, *tail; /* tail: the page out writes into */
	uint64_t done;	    /* every position below is written */
	uint32_t rd, rd_mark; /* the merge's next byte and mark in head */
	uint64_t rd_pos;    /* the position of the byte at rd */
	uint64_t held;	    /* committed bytes in memory, not yet written */
	bool has_thread;    /* thread: the one that walks it (tt_lane_done()) */
	pthread_t thread;
	int spill_fd;	    /* -1 until it spills */
	uint64_t spill_bytes;
	/* With tt_lanes.timed: its thread's CPU time from its first
	 * tt_lane_done() to its last (the walker's share of the walk). */
	uint64_t cpu_ns, cpu_at;
};

struct tt_lanes {
	pthread_mutex_t lock;
	pthread_cond_t moved; /* a lane's done moved, a merge ended */
	unsigned nr;
	struct tt_lane *lanes;
	struct tt_out *dst;	/* written with writev(2) to dst->fd; failures in dst */
	uint64_t skip;		/* bytes dropped at the start of the merged output */
	uint64_t hold;		/* LANES_HOLD_BYTES, or TRACETOOL_LANE_BYTES */
	uint32_t page_bytes;
	bool merging;		/* one merge at a time */
	bool timed;		/* the caller's: each lane's cpu_ns, for its stats */
	unsigned nr_waiting;
	struct tt_lane_page *free_pages;
	unsigned nr_free;
	uint64_t bytes, spilled; /* written to dst; spilled and read back */
};

/*
 * tt_lanes_init() - nr lanes (1 to 8) writing into dst after what dst has
 * (flushed now); the first skip bytes the lanes write together are dropped
 * (chrome: its first event's comma). tt_lanes_finish() when the walk is
 * done, then tt_lanes_fini().
 */
void tt_lanes_init(struct tt_lanes *ls, unsigned nr, struct tt_out *dst, uint64_t skip);
/* The next bytes of the lane's walker belong at position pos (>= the last). */
void tt_lane_mark(struct tt_lane *l, uint64_t pos);
static inline void tt_lane_at(struct tt_lane *l, uint64_t pos)
{
	if (pos != l->pos)
		tt_lane_mark(l, pos);
}
/* The lane's walker will write nothing below pos: after each record. May
 * write the output, wait for other walkers or spill (above). */
void tt_lane_done(struct tt_lane *l, uint64_t pos);
/* After the walk, on one thread: every lane's bytes into dst, in order. */
void tt_lanes_finish(struct tt_lanes *ls);
void tt_lanes_fini(struct tt_lanes *ls);

#endif /* TT_LANES_H */
