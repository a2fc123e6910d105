/* SPDX-License-Identifier: MIT */
/*
 * index.h - a trace's frame index, so that a --from/--to window decodes only
 * the frames that can matter to it (tracetool(1), "FRAME INDEX";
 * docs/ANALYZER.md, "Windows and the frame index").
 *
 * A frame does not say its time range, and a thread's open scopes where a
 * frame starts are known only from every frame before it (FORMAT.md §2). The
 * index, made by one pass over the file and kept in the cache directory,
 * says for each frame where it is, the range of its events' ticks, each
 * thread's open enters where it starts (as changes from the frame before),
 * and its stand-in: the frame's records with each EVENTS block replaced by
 * its counts (walk.h, TT_REC_SKIPPED). A windowed walk (pipeline.c) then
 * reads the stand-ins of the frames before the first frame with an event at
 * or after the window's start, replays the threads' open enters there
 * (TT_REC_REPLAY), decodes frames until no event before the window's end and
 * no enter inside the window is left open, and reads stand-ins again to the
 * end: the same activations, counts, names and warnings as the whole walk.
 *
 * A file librec wrote carries the same in its index frames (FORMAT.md §6):
 * each frame's place, its records with each EVENTS block summed up (its
 * ticks, counts and its thread's depth at its start, lowest and end). Then
 * the index is read from them each time, every frame's bytes checked
 * against its hash, and a plan decodes, instead of the stacks blob, the
 * blocks where the enters open at the window's start were made (the last
 * earlier block of each thread at or below each depth) and the window's
 * blocks (how far its own enters stay open); anything amiss in the index
 * frames, and the pass is made as for any other file. Their hashes are no
 * signature: every frame a plan decodes is held against its index frame
 * (records, each block's sums), and on a difference the file gets the
 * pass's index instead (tt_index_plan() warns once); claims about frames
 * no plan decodes are bounded (FORMAT.md §6.1) so that a lie changes which
 * frames are read and the stand-ins' counts, never memory or work.
 *
 * A file gets no index (and is read whole) when what the stand-ins leave out
 * could change a report: annotations, counters or stack samples (records
 * positioned in EVENTS blocks), damage of any kind, a thread's clock going
 * backwards, a scope left without an exit (longjmp), a site with no name
 * (site#N), or a stack deeper than TT_MIN_DEPTH_LIMIT.
 */
#ifndef TT_INDEX_H
#define TT_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/events.h"

struct tt_index;

/*
 * tt_index_for() - the index of the trace at path, loaded from the cache, or
 * made (one pass over the file, saved for the next time when the cache
 * directory is writable); NULL when it is not wanted (TRACETOOL_INDEX=0, a
 * file under TT_INDEX_MIN_BYTES without TRACETOOL_INDEX=1) or the file
 * cannot have one (above). Kept for the life of the process (a command's
 * metadata pass and main pass share it), for its first 64 traces.
 */
struct tt_index *tt_index_for(const char *path);

/* Files from this size on get an index by default. */
#define TT_INDEX_MIN_BYTES (4u << 20)

/*
 * What a walk reads: frames [first, last] decoded, the others' stand-ins;
 * replay (TT_REC_REPLAY records) appended to the stand-in of frame first - 1.
 * decode: false when no frame needs decoding (every frame a stand-in).
 */
struct tt_index_plan {
	bool decode;
	uint32_t first, last;
	uint8_t *replay;
	size_t replay_len;
};

/*
 * tt_index_plan() - the frames a walk must decode for the window
 * [lo, hi) of absolute ticks (events: a walk that pairs; false: a walk of
 * the metadata only, which decodes nothing). Return: false when decoding
 * the plan would cost about as much as the whole file (read it whole).
 */
bool tt_index_plan(struct tt_index *ix, bool events, uint64_t lo, uint64_t hi,
		   struct tt_index_plan *p);
void tt_index_plan_fini(struct tt_index_plan *p);

uint32_t tt_index_nr_frames(const struct tt_index *ix);
/* Frame f: its offset, compressed and decompressed bytes in the file. */
void tt_index_frame(const struct tt_index *ix, uint32_t f, uint64_t *offset, uint64_t *cbytes,
		    uint64_t *content_bytes);
/* Frame f's stand-in. */
const uint8_t *tt_index_standin(const struct tt_index *ix, uint32_t f, size_t *len);

#endif /* TT_INDEX_H */
