/* SPDX-License-Identifier: MIT */
/*
 * tracegen.h - writes synthetic rec traces through format/'s encoder and
 * compressor, so that tests (and benchmarks) know the ground truth of every
 * number tracetool reports. It owns no analysis: a test states the events and
 * computes what it expects. Files follow FORMAT.md §2-§3: frame 0 carries the
 * FILE_HEADER, each thread's events go out in EVENTS blocks, frames are cut
 * at about tg_config.frame_bytes, and tg_finish() writes the END record.
 */
#ifndef TRACEGEN_H
#define TRACEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recfmt.h"

struct tg_trace;

struct tg_config {
	uint32_t clock;		   /* RECFMT_CLOCK_TSC or RECFMT_CLOCK_MONOTONIC */
	uint64_t ticks_per_second; /* header estimate; 0 means 1e9 */
	uint64_t start_ticks;	   /* time zero */
	uint64_t start_real_ns;
	uint32_t pid;
	size_t frame_bytes;	   /* cut a frame past this many raw bytes; 0 = 1 MiB */
	uint32_t block_events;	   /* events per EVENTS block; 0 = 4096 */
	uint16_t major;		   /* 0 = this format's major; else written as is */
	uint64_t clock_step_ticks; /* the header's measured clock step; 0 = not measured */
	bool writer_index;	   /* an index frame before each frame, as librec (FORMAT.md §6) */
};

/* Creates `path` and writes frame 0's FRAME and FILE_HEADER. NULL on error. */
struct tg_trace *tg_create(const char *path, const struct tg_config *cfg);

/* Metadata records, written into the current frame. Return 0 or -errno. */
int tg_site(struct tg_trace *t, uint32_t id, const char *name);
/* A site at file:line (tg_site(): "gen.c", line 1). */
int tg_site_at(struct tg_trace *t, uint32_t id, const char *name, const char *file, uint32_t line);
int tg_thread(struct tg_trace *t, uint32_t serial, uint32_t os_tid, const char *name);
int tg_sync(struct tg_trace *t, uint64_t ticks, uint64_t mono_ns, uint64_t real_ns);
int tg_drops(struct tg_trace *t, uint32_t serial, uint64_t nr_dropped);
/* FORMAT.md §3.10-§3.11 (1.1): a module mapped at run-time [lo, hi) with
 * load bias `bias` (no build-id), and a function site at run-time `addr`. */
int tg_module(struct tg_trace *t, uint32_t id, const char *path, uint64_t bias, uint64_t lo,
	      uint64_t hi);
/* The calling program's load bias and mapped range (its PT_LOAD
 * segments), for tg_module() of a test's own addresses. */
struct tg_self_map {
	uint64_t bias, lo, hi;
};
void tg_self_map(struct tg_self_map *m);
/* The same with the object's build-id (build_id_bytes at most 64). */
int tg_module_build_id(struct tg_trace *t, uint32_t id, const char *path, uint64_t bias,
		       uint64_t lo, uint64_t hi, const uint8_t *build_id, uint32_t build_id_bytes);
/* The same with the MODULE record's flags (RECFMT_MODULE_MAIN, ...). */
int tg_module_flags(struct tg_trace *t, uint32_t id, uint32_t flags, const char *path,
		    uint64_t bias, uint64_t lo, uint64_t hi, const uint8_t *build_id,
		    uint32_t build_id_bytes);
int tg_func(struct tg_trace *t, uint32_t id, uint64_t addr);
/* A FUNC naming its module (1.5, FORMAT.md §3.11): the MODULE's id, 0 none. */
int tg_func_in(struct tg_trace *t, uint32_t id, uint64_t addr, uint32_t module);
/*
 * tg_reused_libs() - finding F16's two libraries mapped one after the other
 * at the same addresses: MODULE 1 dir/liba.so, then MODULE 2 dir/libb.so,
 * each at load bias `bias` over [bias + 0x1000, bias + 0x2000); function
 * site 1 at bias + 0x1200 in liba.so, site 2 at the same address in
 * libb.so, and site 3 at bias + 0x1300 naming no module (a FUNC of 1.4).
 * Return: 0, or the first error of tg_module() or tg_func_in().
 */
int tg_reused_libs(struct tg_trace *t, const char *dir, uint64_t bias);
/* A PROBE_COST record (FORMAT.md §3.16), in picoseconds. */
int tg_probe_cost(struct tg_trace *t, const struct recfmt_probe_cost *pc);
int tg_thread_end(struct tg_trace *t, uint32_t serial);
/* A SNAPSHOT record (FORMAT.md §3.20, 1.2): the file is a flight snapshot. */
int tg_snapshot(struct tg_trace *t, const struct recfmt_snapshot *s);

/*
 * One event of thread `serial` (defined by tg_thread() or not: readers must
 * cope). Events of a thread are buffered and written as EVENTS blocks in
 * order; blocks of different threads interleave as the buffers fill.
 */
int tg_enter(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks);
int tg_exit(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks);

/*
 * Counters (FORMAT.md §3.13-§3.14): a COUNTER_SET for thread `serial`
 * (its buffered events are written first); from then on each EVENTS block
 * of the thread is followed by a COUNTERS block with one value per
 * recorded counter and event: tg_enter_ctr()/tg_exit_ctr() give them
 * (vals[c], c over the recorded counters in order); tg_enter()/tg_exit()
 * give zeros.
 */
int tg_counter_set(struct tg_trace *t, uint32_t serial, uint32_t nr, const char *const *names,
		   const uint32_t *flags);
int tg_enter_ctr(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks,
		 const uint64_t *vals);
int tg_exit_ctr(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks,
		const uint64_t *vals);

/* A COUNTERS record written as is into the current frame (damage tests). */
int tg_raw_counters(struct tg_trace *t, uint32_t serial, uint32_t nr_events,
		    uint32_t nr_columns, const uint64_t *vals);

/*
 * Annotations (FORMAT.md §3.17-§3.19, 1.2). tg_annot_name() writes an
 * ANNOT_NAME; tg_annot() buffers one annotation of thread `serial` at the
 * current point of its events (pos = the events buffered so far: it comes
 * after them and before the next), written as the ANNOTS record after the
 * thread's next EVENTS block (after its COUNTERS block, if any), or
 * stand-alone when no event is buffered. a->pos and a->thread are ignored;
 * a MESSAGE's text is copied.
 */
int tg_annot_name(struct tg_trace *t, uint32_t id, uint32_t kind, const char *name);
int tg_annot(struct tg_trace *t, uint32_t serial, const struct recfmt_annot *a);
int tg_annot_drops(struct tg_trace *t, uint32_t serial, uint64_t nr_dropped);

/*
 * Stack samples (FORMAT.md §3.22-§3.24, 1.3). tg_sampling() writes the
 * SAMPLING record (rate hz; period_ns 1e9 / hz rounded). tg_sample()
 * buffers one sample of thread `serial` (frames innermost first, copied;
 * flags RECFMT_SAMPLE_TRUNCATED or 0), written in a SAMPLES record after
 * the thread's next EVENTS block (and its ANNOTS), or alone; block_events
 * samples make a record. tg_sample_drops() writes a SAMPLE_DROPS record.
 * Name the addresses with tg_module(). Return 0, -EINVAL or -ENOMEM.
 */
int tg_sampling(struct tg_trace *t, uint32_t hz, uint32_t max_frames);
int tg_sample(struct tg_trace *t, uint32_t serial, uint64_t ticks, uint32_t flags,
	      uint32_t nr_frames, const uint64_t *frames);
int tg_sample_drops(struct tg_trace *t, uint32_t serial, uint64_t nr_dropped);

/*
 * tg_known_tree() - the call tree of known shape that the tree, flame and
 * pprof tests check, into t (times in ticks):
 * Thread 1 "main" (tid 701): main [1000,2000) > { a [1100,1400) > b [1150,1250),
 *   b [1500,1900) > b [1550,1850) > b [1600,1700), a [1950,1990) }
 * Thread 2 "worker" (tid 702): w [1000,1600) > a [1100,1300) > b [1150,1200)
 * Sites 1 main, 2 a, 3 b, 4 w; b at b_file:b_line when b_file is not NULL
 * (else as tg_site()). Return: 0 or the first error (-errno).
 */
int tg_known_tree(struct tg_trace *t, const char *b_file, uint32_t b_line);

/* Writes every buffered block and ends the current frame. */
int tg_flush(struct tg_trace *t);

/* Flushes, writes END (unless `clean` is false), closes and frees. */
int tg_finish(struct tg_trace *t, bool clean);
/* tg_finish(t, true) with END's end_ticks at least end_ticks (a recording
 * that ends after its last event). */
int tg_finish_at(struct tg_trace *t, uint64_t end_ticks);

/* Records written so far (enter + exit = 2), as END counts them. */
uint64_t tg_nr_events(const struct tg_trace *t);

/* File helpers for damage tests. Return 0 or -errno. */
int tg_file_truncate(const char *path, uint64_t bytes);
int tg_file_flip_byte(const char *path, uint64_t offset, uint8_t mask);
/* Byte offsets where each zstd frame starts; returns the number found (≤ max). */
size_t tg_file_frame_offsets(const char *path, uint64_t *offsets, size_t max);

#endif /* TRACEGEN_H */
