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
 * or after the window's start (or the last frame with events, when none has
 * one: the scopes open at the end overlap such a window), replays the
 * threads' open enters there (TT_REC_REPLAY), decodes frames until no event before the window's end and
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
 * positioned in EVENTS blocks), damage of any kind (but a file that ends
 * inside a frame: its complete frames are indexed, tt_index_cut()), a
 * thread's clock going backwards, a scope left without an exit (longjmp), a
 * site with no name (site#N), or a stack deeper than TT_MIN_DEPTH_LIMIT.
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

/*
 * What a file's index frames say of it (tracetool info and check): its data
 * frames with an index frame that is right (its hash, its frame's length,
 * size, hash and seq; with deep, also everything it says of the frame's
 * records: recfmt_index_compare(), which decompresses every frame), those
 * without one, those with one that is wrong (the first such, where and
 * why), index frames with no data frame of theirs; and how a --from/--to
 * window reads the file: through its index frames, through an index made
 * by a pass (why not the index frames), or whole (why: TRACETOOL_INDEX=0,
 * a file under TT_INDEX_MIN_BYTES).
 */
enum tt_window_read { TT_WINDOW_INDEX_FRAMES, TT_WINDOW_PASS, TT_WINDOW_WHOLE };
struct tt_index_survey {
	uint64_t nr_frames, nr_indexed, nr_missing, nr_bad, nr_stray;
	uint64_t nr_packed; /* of nr_indexed, those packed (FORMAT.md §6.3) */
	uint64_t first_missing;		 /* the first frame without one (nr_missing) */
	uint64_t bad_frame, bad_offset; /* the first wrong one, and its index frame's offset */
	char bad[256];			 /* why it is wrong ("" if none) */
	bool cut;			 /* the frames end before the file does (damage, a cut) */
	enum tt_window_read window;
	const char *window_why; /* why not through the index frames (static text) */
};
void tt_index_survey(const char *path, bool deep, struct tt_index_survey *s);
/*
 * tt_index_survey_text() - s in words for info and check ("" when the file
 * has no index frame and did not crash): "index frames: 40 of 48 frames (the last 8 have
 * none: the crash handler writes none); windows read it through them"; "(12 packed; the
 * last 8 ...)" where some of the right ones are packed (FORMAT.md §6.3).
 * crashed: the file ends with a crash capture (FORMAT.md §3.21).
 */
void tt_index_survey_text(const struct tt_index_survey *s, bool crashed, char *out,
			  size_t out_bytes);
/* How a window reads a file, for JSON: "index_frames", "pass_index" or "whole". */
const char *tt_window_read_name(enum tt_window_read w);

/* Frees the indexes tt_index_for() keeps (a process that reads many files
 * at one path, such as a fuzzer, between them). */
void tt_index_forget(void);

uint32_t tt_index_nr_frames(const struct tt_index *ix);
/* Frame f: its offset, compressed and decompressed bytes in the file. */
void tt_index_frame(const struct tt_index *ix, uint32_t f, uint64_t *offset, uint64_t *cbytes,
		    uint64_t *content_bytes);
/* Whether the file ends inside a frame after the last one indexed (a pass
 * over a file being written, or cut), and what the reader said there. */
bool tt_index_cut(const struct tt_index *ix, struct recfmt_error *err);
/* Frame f's stand-in. */
const uint8_t *tt_index_standin(const struct tt_index *ix, uint32_t f, size_t *len);

#endif /* TT_INDEX_H */
