/* SPDX-License-Identifier: MIT */
/*
 * events.h - streams a trace file through format/ in bounded memory: frames,
 * records, metadata (header, clock syncs, sites, threads, drops, end) and the
 * EVENTS blocks, which it hands to a caller's function one block at a time.
 * It owns the thread table, the name table (sites grouped by name, FORMAT.md
 * §3.4), the tick-to-nanosecond clock (FORMAT.md §3.3) and the list of
 * problems met on the way (truncation, skipped frames). It does not pair
 * enters with exits (scopes.c) or print reports (cmd_*.c). One file per
 * idea: the record walk (events.c), the tick clock (clock.c), the thread and
 * name tables (tables.c), the frame pipeline and its walker replicas
 * (pipeline.c), the bookkeeping of damage (damage.c); walk.h is what they
 * share among themselves.
 */
#ifndef TT_EVENTS_H
#define TT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "recfmt.h"

#include "common/hmap.h"

struct tt_symbols; /* symbols.h */

/* Ticks to nanoseconds as an exact ratio: ns = ticks * num / den (rounded). */
struct tt_clock {
	uint64_t num, den;
	uint64_t start_ticks; /* time zero (FILE_HEADER start_ticks) */
};

/* ns for a tick count (a duration), rounded to nearest. */
uint64_t tt_clock_ns(const struct tt_clock *c, uint64_t ticks);
/* ns of an absolute tick value relative to time zero (may be negative). */
int64_t tt_clock_rel_ns(const struct tt_clock *c, uint64_t abs_ticks);
/* a + b in ns, held at INT64_MIN / INT64_MAX rather than overflowing (a
 * crafted file's clock and wall-clock start are any 64-bit values). */
static inline int64_t tt_ns_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}
/* a - b in ns, held likewise. */
static inline int64_t tt_ns_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}
/*
 * A clock prepared for converting many ticks (chrome, two an activation):
 * tt_clock_rel_ns()'s results by two multiplications in 64.64 fixed point
 * instead of its estimate in floating point and 128-bit checks. The product
 * p = ticks * lo + half falls short of the exact value by less than ticks + 1
 * units of 2^-64 (both constants are rounded down by less than one unit): when
 * p's fraction is at most ~ticks no carry was lost and the integer part is
 * exact; else (about ticks / 2^64 of the time) and past tlim, the exact way.
 */
struct tt_clock_fx {
	struct tt_clock c;
	uint64_t hi, lo, half, tlim;
};
void tt_clock_fx_init(struct tt_clock_fx *f, const struct tt_clock *c);
static inline int64_t tt_clock_fx_rel_ns(const struct tt_clock_fx *f, uint64_t abs_ticks)
{
	uint64_t t = abs_ticks - f->c.start_ticks;

	if (abs_ticks >= f->c.start_ticks && t < f->tlim) {
		unsigned __int128 p = (unsigned __int128)t * f->lo + f->half;

		if ((uint64_t)p <= ~t)
			return (int64_t)(t * f->hi + (uint64_t)(p >> 64));
	}
	return tt_clock_rel_ns(&f->c, abs_ticks);
}
/* Smallest absolute tick value whose relative time is >= rel_ns. */
uint64_t tt_clock_abs_ticks(const struct tt_clock *c, uint64_t rel_ns);

struct tt_thread {
	uint32_t serial;
	uint32_t os_tid;
	char *name; /* NUL-terminated, NULL when unnamed; latest THREAD record */
	bool defined; /* a THREAD record was seen */
	bool ended;   /* THREAD_END seen */
	uint64_t nr_events;  /* records decoded from EVENTS blocks */
	uint64_t nr_dropped; /* largest DROPS/THREAD_END count */
	uint64_t nr_filtered; /* REC_MIN_NS: largest DROPS/THREAD_END nr_filtered (1.1) */
	uint64_t nr_blocked, blocked_ns; /* REC_OVERFLOW=block: largest BLOCKED counts (1.2) */
	uint64_t nr_annots_dropped; /* largest ANNOT_DROPS count (1.2, FORMAT.md §3.19) */
	uint64_t nr_annots;	   /* annotations in its ANNOTS records (the valid ones) */
	uint64_t nr_samples;	     /* stack samples in its SAMPLES records (valid rows, 1.3) */
	uint64_t nr_samples_dropped; /* largest SAMPLE_DROPS count (FORMAT.md §3.24) */
	void *user;	     /* the consumer's per-thread state */
	uint64_t out_id;     /* a consumer's id for the thread (chrome tid) */
	bool has_out_id;
	bool seen; /* tt_trace_see_thread() ran for it */
};

/*
 * Where a walk is (tt_trace.pos), the same on every replica of a parallel
 * walk, so that what several walkers write can be put in the order of one
 * walk (out/lanes.h): 4 x the records met before the one being handled
 * (frames in file order, records in frame order), + 1 once the record hook
 * has paired the block it kept pending (scopes.c), + 2 while the record
 * itself is applied. tt_scopes_finish() goes on from TT_POS_END: + 0 for
 * the last pending block, + 1 + i for what thread index i still had open.
 */
#define TT_POS_STEP 4
#define TT_POS_END (UINT64_C(1) << 62)

#define TT_NO_NAME UINT32_MAX

struct tt_trace {
	const char *path;
	struct recfmt_header hdr;
	bool has_header;
	struct recfmt_sync first_sync, last_sync;
	uint64_t nr_syncs;
	struct recfmt_end end;
	bool has_end;
	uint64_t max_ticks; /* latest tick seen in events, syncs and END */
	uint64_t file_bytes;

	/* Threads in order of first appearance; a map finds them by serial. */
	struct tt_thread *threads;
	uint32_t nr_threads, cap_threads;
	struct tt_hmap thread_map; /* hmap.h: keyed by serial */

	/* Names, interned; sites map to names. */
	char **names;
	uint32_t nr_names, cap_names;
	uint8_t *name_hook; /* per name: 1 once a function site (FUNC record,
			     * -finstrument-functions) is named so, else 0 */
	struct tt_hmap name_map; /* hmap.h: keyed by the name's bytes */
	uint32_t *site_name; /* site id -> name index, TT_NO_NAME if none;
			      * site_name[nr_site_slots] is TT_NO_NAME too */
	uint32_t nr_site_slots;
	/* Site ids >= 2^20: (id, name) pairs in a map keyed by the id. */
	uint32_t *big_site_ids, *big_site_names;
	uint32_t nr_big_sites, cap_big_sites;
	struct tt_hmap big_site_map;
	/* MODULE and FUNC records (1.1): names of function sites, resolved
	 * when first needed; NULL if the file has none. */
	struct tt_symbols *syms;
	bool has_filtered; /* the recording used REC_MIN_NS (FORMAT.md §3.7) */
	bool has_blocked;  /* a BLOCKED record was seen (FORMAT.md §3.15) */
	struct recfmt_probe_cost probe_cost; /* FORMAT.md §3.16; 0s when absent */
	bool has_probe_cost;
	struct recfmt_crash crash; /* FORMAT.md §3.21: the fatal signal that ended it */
	bool has_crash;
	/*
	 * A flight-recorder snapshot (FORMAT.md §3.20): its trigger and window;
	 * reason is a NUL-terminated cleaned copy. In such a file an exit with
	 * no enter is a scope open at the window's start, and an enter with no
	 * exit one still open at its end: neither is an error (scopes.c).
	 */
	struct recfmt_snapshot snapshot;
	char *snapshot_reason;
	bool has_snapshot;

	/* What was read and what went wrong on the way. */
	uint64_t nr_frames;	    /* frames decoded */
	uint64_t nr_fast_frames;    /* of them, FRAME flag RECFMT_FRAME_FAST (FORMAT.md §3.1) */
	uint64_t nr_recompressed_frames; /* of them, RECFMT_FRAME_RECOMPRESSED */
	uint64_t nr_events;	    /* records in EVENTS blocks */
	uint64_t nr_bad_frames;	    /* skipped: damaged or unreadable */
	uint64_t nr_lost_frames;    /* missing from the seq numbering */
	uint64_t nr_bad_blocks;	    /* EVENTS blocks that did not decode */
	uint64_t nr_counter_sets;   /* COUNTER_SET records (FORMAT.md §3.13) */
	uint64_t next_seq;
	bool truncated;
	uint64_t nr_after_end;	    /* records or frames after the END record */
	/* Recordings in the file: a later frame whose second record is a
	 * FILE_HEADER starts another (`cat a.zst b.zst`); from there on frames
	 * are counted, never merged, and the walk fails (docs/ANALYZER.md). */
	uint32_t nr_recordings;
	uint64_t second_header_frame, second_header_offset;
	uint64_t end_frame;	    /* frame index holding END */
	/*
	 * Optional: called for every record of a frame after its FRAME (and
	 * FILE_HEADER) record, before the walker handles it, with the frame's
	 * index and file offset; for consumers of records the walker does not
	 * interpret (scopes.c, cmd_check.c, cmd_info.c: the counter records of
	 * FORMAT.md §3.13-§3.14). In a parallel walk, each replica's own.
	 */
	void (*on_record)(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
			  uint64_t frame_index, uint64_t frame_offset);
	void *record_ctx;
	/*
	 * Set before the walk: a function site is named when its FUNC record
	 * is read, not when an event first needs it, and a site never defined
	 * is shown as "site#N" without being defined, so that every replica of
	 * a parallel walk defines the names that have a place in the same
	 * order whatever blocks it pairs (labels.h's tt_inc_label(): chrome,
	 * perfetto).
	 */
	bool eager_names;
	/* Where the walk is (TT_POS_STEP above); nr_records_met counts for it. */
	uint64_t pos, nr_records_met;
	/*
	 * Optional, on each replica: on_thread_seen() the first time an EVENTS
	 * block, a stand-in's replay, a stand-alone ANNOTS record or a
	 * COUNTER_SET of a thread is met, whether this replica pairs it or
	 * not, before anything of it is paired (tt_trace_see_thread(): every
	 * place where scopes.c may start a thread's state); on_record_done() after each
	 * record is applied, and once before the first frame on the thread
	 * of a pipelined walker (pipeline.c), pos 0. Both in the same order on
	 * every replica.
	 */
	void (*on_thread_seen)(void *ctx, struct tt_trace *tr, struct tt_thread *th);
	void (*on_record_done)(void *ctx, struct tt_trace *tr);
	void *progress_ctx;
	char count_problem[256];    /* first THREAD_END count that disagrees */
	char first_problem[256];    /* "frame N at byte B: what" */
	uint64_t first_problem_frame, first_problem_offset; /* where it is */
	char truncation[256];

	/* A replica of a parallel walk (tt_trace_walk_many()) passes the
	 * EVENTS blocks of thread index i (order of first appearance) to the
	 * block function only when i % nr_walkers == walker. */
	uint32_t walker, nr_walkers;
	/* With count_enters (set before the walk): enters_before is, while
	 * an EVENTS block is handed to the block function, the enter events
	 * of every EVENTS block before it in the file, of all threads
	 * (recfmt_events_count_enters()): a run-wide numbering of enters that
	 * every replica of a parallel walk agrees on (export's activation ids). */
	bool count_enters;
	uint64_t enters_before;
	uint64_t nr_failed_blocks; /* blocks the block function rejected
				    * (also in nr_bad_blocks) */
	/* The ANNOTS record directly after the EVENTS block being handed to
	 * the block function, if any (FORMAT.md §3.18: its positions are in
	 * that block), with its frame's index and offset; annots_taken: the
	 * block function applied it, so the record hook skips it. */
	bool has_next_annots, annots_taken;
	struct recfmt_record next_annots;
	uint64_t next_annots_frame, next_annots_offset;
	uint64_t nr_annots;	   /* annotations in ANNOTS records (valid rows) */
	bool has_annots;	   /* an annotation record was seen (1.2) */
	uint64_t min_step_ticks;   /* tt_events_decode_block(): the smallest
				    * nonzero tick step between two events of a
				    * block (the clock's resolution); 0: none */
	/*
	 * Stack samples (FORMAT.md §3.22-§3.24, 1.3): the SAMPLING record, the
	 * valid rows of the SAMPLES records (also per thread), and, when
	 * on_sample is set, each sample handed to it as it is decoded, in
	 * file order, on the replica that owns its thread (as EVENTS blocks):
	 * s->frames is valid during the call only.
	 */
	/*
	 * A frame index (index.h): with use_index, a walk of a file that has a
	 * usable index decodes only the frames that can matter to the window
	 * [index_lo, index_hi) of absolute ticks (a walk without a block
	 * function: none), and reads the others' stand-ins, while standin is
	 * set (pipeline.c).
	 */
	bool use_index;
	uint64_t index_lo, index_hi;
	bool standin;
	uint64_t nr_decoded_frames; /* frames decompressed (standin: not) */
	struct recfmt_sampling sampling;
	bool has_sampling;
	uint64_t nr_samples;
	void (*on_sample)(void *ctx, struct tt_trace *tr, struct tt_thread *th,
			  const struct recfmt_sample *s);
	void *sample_ctx;
};

/*
 * Called for each EVENTS block of a known thread. Return: 0 if the block
 * decoded to its end with both columns used up; -1 if it is malformed (the
 * walker counts it as damaged).
 */
typedef int (*tt_block_fn)(void *ctx, struct tt_trace *tr, struct tt_thread *th,
			   struct recfmt_events_iter *it);

/* The first time a thread's events are met on this replica: on_thread_seen(). */
static inline void tt_trace_see_thread(struct tt_trace *tr, struct tt_thread *th)
{
	if (th->seen)
		return;
	th->seen = true;
	if (tr->on_thread_seen)
		tr->on_thread_seen(tr->progress_ctx, tr, th);
}

/* Fatal problems stop a walk: the file cannot be read or is not a trace. */
enum tt_status {
	TT_OK = 0,
	TT_ERR_FILE = 1,  /* unreadable, damaged beyond use, newer version */
	TT_ERR_USAGE = 2, /* wrong usage (option values) */
};

void tt_trace_init(struct tt_trace *tr, const char *path);
void tt_trace_fini(struct tt_trace *tr);

/*
 * tt_events_decode_block() - a tt_block_fn that decodes every event of the
 * block and nothing more, for commands that need only the walk's bookkeeping
 * (info) or its validation (check). ctx: NULL, or a const bool that, when
 * true, also rejects site id 0 (FORMAT.md §3.4: ids start at 1).
 * Return: 0, or -1 if the block is malformed.
 */
int tt_events_decode_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
			   struct recfmt_events_iter *it);

/*
 * tt_trace_walk() - read the whole file once, calling fn on every EVENTS
 * block (fn may be NULL to read only the metadata).
 * Return: TT_OK (damage met on the way is recorded in tr, see
 * tt_trace_warn()), or TT_ERR_FILE with the one-line problem in msg.
 */
enum tt_status tt_trace_walk(struct tt_trace *tr, tt_block_fn fn, void *ctx, char *msg,
			     size_t msg_bytes);

/*
 * tt_trace_walk_many() - tt_trace_walk() by n replicas at once, for a block
 * function that can run on several threads: each trs[i] (initialised with
 * the same path) reads every record of the file, and fn(ctxs[i], trs[i], ...)
 * is called on the EVENTS blocks of its share of the threads (above), on a
 * thread of its own. The file is read and decompressed once. On return the
 * replicas agree on everything but what fn did, and trs[0] has the others'
 * walk state folded in (tt_trace_merge()): damage found by fn in any
 * replica, the latest tick. Merging what fn computed is the caller's.
 * n is 1 to MAX_WALKERS (tt_trace_walkers() says how many are worth it).
 */
enum tt_status tt_trace_walk_many(struct tt_trace **trs, void **ctxs, unsigned n, tt_block_fn fn,
				  char *msg, size_t msg_bytes);
/*
 * tt_trace_skim() - the metadata of a file's first and last frames only:
 * every frame is found (its compressed bytes read, not decompressed) and
 * only frame 0 (FILE_HEADER, MODULE, the first SYNC) and the last frame
 * (the last SYNC, END) are decompressed and read into tr (no EVENTS block
 * is decoded). So tr's clock is the file's final one (FORMAT.md §3.3: the
 * first and the last SYNC) when the last frame holds the file's last SYNC,
 * as librec writes it with END; its threads, names and counts are those of
 * the two frames only. Return: false if the file cannot be read so (it
 * cannot be opened, a frame cannot be found or is cut short, one of the two
 * is damaged, the file has one frame, or its last frame has no END: a
 * recording that did not end cleanly): read it whole.
 */
bool tt_trace_skim(struct tt_trace *tr);
/*
 * tt_trace_skim_exact() - tt_trace_skim(), and false unless frame 0 holds a
 * SYNC and the last frame another (or the clock is monotonic): then tr's
 * clock is the file's final one for certain (the first and the last SYNC
 * are in the two frames read), with nothing to check afterwards. Used by
 * chrome, which cannot write its output again.
 */
bool tt_trace_skim_exact(struct tt_trace *tr);
/* How many replicas to walk with: the CPUs this process may use (at most
 * 8), or 1 with TRACETOOL_THREADS=1. */
unsigned tt_trace_walkers(void);
/* TRACETOOL_PORTABLE=1 in the environment: the portable loops everywhere
 * (summary's pairing without PEXT, Parquet's packing without AVX2), the
 * same output, so that tests compare them with the vector ones. */
bool tt_portable(void);
/* Folds src's walk state into dst, replicas of the same walk. */
void tt_trace_merge(struct tt_trace *dst, const struct tt_trace *src);

/* Prints what was lost (truncation, skipped frames) on stderr; true if any. */
bool tt_trace_warn(const struct tt_trace *tr);
/* For the reports of scopes (summary, tree, histogram, flame, diff, top): a file
 * of stack samples and no scope events (tracetool record) says where its
 * samples are read, one note on stderr, instead of an empty table alone. */
void tt_trace_note_samples_only(const struct tt_trace *tr);
/* One-line description of what was lost, "" if nothing. */
void tt_trace_problems(const struct tt_trace *tr, char *out, size_t out_bytes);
/* "SIGSEGV" for 11 (Linux numbers), "signal N" for others; buf: 16 bytes at least. */
const char *tt_signal_name(uint32_t signo, char *buf, size_t buf_bytes);
/* "ended by a crash: SIGSEGV on thread 1 at address 0x10" (FORMAT.md §3.21). */
void tt_trace_crash_text(const struct tt_trace *tr, char *out, size_t out_bytes);

/* The clock of the file as read so far (FORMAT.md §3.3). */
void tt_trace_clock(const struct tt_trace *tr, struct tt_clock *c);

struct tt_thread *tt_trace_thread(struct tt_trace *tr, uint32_t serial);
struct tt_thread *tt_trace_find_thread(const struct tt_trace *tr, uint32_t serial);
/* Name index of a site; defines "site#N" for a site never defined. */
uint32_t tt_trace_site_name_slow(struct tt_trace *tr, uint32_t site);
static inline uint32_t tt_trace_site_name(struct tt_trace *tr, uint32_t site)
{
	if (site < tr->nr_site_slots && tr->site_name[site] != TT_NO_NAME)
		return tr->site_name[site];
	return tt_trace_site_name_slow(tr, site);
}
/* A scope name that is empty or spaces only, as every command shows it. */
#define TT_BLANK_NAME "[empty]"
/* The index of name in tr's names, as shown (tt_emit_clean(); a blank name
 * is TT_BLANK_NAME), added if new. */
uint32_t tt_trace_intern(struct tt_trace *tr, const char *name, size_t name_bytes);
/* A malloc'd copy of an annotation's name as shown: tt_emit_clean()'s, or
 * TT_BLANK_NAME for a blank one. */
char *tt_name_shown(const char *name, size_t name_bytes);

/*
 * Names that never merge (docs/ANALYZER.md, "Names"): a scope is interned by
 * its name and its place (a TRACE_SCOPE site's "file:line", a hooked
 * function's source file or module) as the key "name" TT_SITE_SEP "place",
 * each part cleaned for output. Rows, paths and merges key on it; reports
 * print labels.h's label for it.
 */
#define TT_SITE_SEP '\x1f'
uint32_t tt_trace_intern_site(struct tt_trace *tr, const char *name, size_t name_bytes,
			      const char *place, size_t place_bytes);

/* A thread's label in reports: its name, else its OS tid. */
void tt_thread_label(const struct tt_thread *th, char *out, size_t out_bytes);

#endif /* TT_EVENTS_H */
