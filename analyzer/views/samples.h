/* SPDX-License-Identifier: MIT */
/*
 * samples.h - the stack samples of a recording (FORMAT.md §3.22-§3.24,
 * REC_SAMPLE), read, named and filtered for `profile`, `pprof`, `flame
 * --samples` and `tree --samples` (tracetool(1)).
 *
 * Each sample's frames are named as whole-program mode names functions
 * (engine/symbols.h: the MODULE records, build-ids checked): frame 0 by its
 * address, a caller's frame by its return address - 1 (the call). A
 * function is a key "name" TT_SITE_SEP "place" (a static's source file, else
 * its module's file name), so same-named functions of different objects stay
 * apart; a frame that cannot be named is its module's "[module: reason]"
 * (one per module and reason, as perf's [unknown]). A sample's stack is
 * interned as a list of function ids, leaf first.
 *
 * The shared filters apply to samples: --thread (the thread's final name or
 * id), --from/--to (the sample's time), and --within=REGEX keeps the samples
 * taken while a scope whose name matches was open on their thread: an
 * activation [enter, exit), or one still open when the file ended, found by
 * a second pass through the pairing engine (scopes.h).
 */
#ifndef TT_SAMPLES_H
#define TT_SAMPLES_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/hmap.h"
#include "engine/events.h"
#include "engine/filter.h"
#include "engine/report.h"
#include "views/labels.h"

struct tt_sfunc {
	char *key;	    /* name TT_SITE_SEP place */
	char *module;	    /* the module's file name, "" if none */
	uint64_t self;	    /* kept samples whose leaf it is */
	uint64_t total;	    /* kept samples with it anywhere on the stack (once each) */
	uint32_t hash;
};

struct tt_sstack {
	uint32_t at, n;	 /* function ids in tt_samples.frames, leaf first */
	uint32_t hash;
};

/* A code address of one file's samples: a location of pprof's. */
struct tt_sloc {
	uint64_t addr;	  /* frame 0's address, or a caller's return address - 1 */
	uint32_t func;	  /* its function */
	uint32_t mapping; /* its module in tt_samples.maps, TT_SAMPLES_NO_MAP outside all */
	uint32_t mod;	  /* that module in its file's symbols (symbols.h's index), 0: none */
};
#define TT_SAMPLES_NO_MAP UINT32_MAX

/* A module of one file that holds a sampled address (symbols.h's
 * tt_symbols_mapping(), copied). */
struct tt_smap {
	uint32_t file, module_id;
	uint64_t start, limit, offset;
	char *path;	   /* as recorded; "[vdso]" for the vDSO */
	char *build_id;	   /* lower-case hex, "" if none */
	bool has_functions; /* its symbols were read: the names are the file's */
	bool main;	    /* the main program */
};

struct tt_srow {
	uint64_t ticks;	  /* the sample's time, its file's clock */
	uint32_t file;	  /* index of its TRACE */
	uint32_t thread;  /* index in its file's threads */
	uint32_t stack;
	uint32_t loc_stack; /* in loc_stacks, with tt_samples_opts.locations */
	bool truncated;	  /* its outermost frames are missing */
};

struct tt_samples_file {
	struct tt_trace tr; /* the walk: threads, clock, sampling */
	struct tt_clock clock;
	char *process; /* NAME[PID] (the program's name, else "process") */
};

struct tt_samples {
	struct tt_samples_file *files;
	unsigned nr_files;
	struct tt_sfunc *funcs;
	uint32_t nr_funcs, cap_funcs;
	struct tt_hmap func_map; /* hmap.h: funcs by (key, module) */
	uint32_t *frames;
	size_t nr_frames, cap_frames;
	struct tt_sstack *stacks;
	uint32_t nr_stacks, cap_stacks;
	struct tt_hmap stack_map; /* hmap.h: stacks by their function ids */
	struct tt_sloc *locs; /* every distinct (file, address) sampled */
	uint32_t nr_locs, cap_locs;
	struct tt_smap *maps; /* the modules that hold them, per file */
	uint32_t nr_maps, cap_maps;
	/* With tt_samples_opts.locations: each sample's stack as location ids
	 * (leaf first), interned as stacks are. */
	uint32_t *loc_frames;
	size_t nr_loc_frames, cap_loc_frames;
	struct tt_sstack *loc_stacks;
	uint32_t nr_loc_stacks, cap_loc_stacks;
	struct tt_hmap loc_stack_map;
	struct tt_srow *rows; /* the kept samples, by file and then in file order */
	size_t nr_rows, cap_rows;
	uint64_t nr_read;      /* samples in the files, kept or not */
	uint64_t nr_dropped;   /* SAMPLE_DROPS, of the selected threads */
	uint64_t nr_truncated; /* kept samples whose stack is incomplete */
	bool has_sampling;     /* some file has a SAMPLING record */
	uint32_t hz;	       /* the first file's rate (0: none) */
	uint64_t period_ns;    /* the first file's period_ns */
	struct tt_labels labels; /* of the functions' keys */
	const char *failed;	 /* the file that could not be read */
};

struct tt_samples_opts {
	bool locations; /* keep each sample's addresses (tt_srow.loc_stack) */
	bool has_within;
	regex_t within; /* --within=REGEX (POSIX extended) */
};

/*
 * tt_samples_read() - reads o's TRACE files' samples, keeps those the
 * filters of o and so select, counts self and total per function over the
 * kept ones and labels the functions (labels.h).
 * Return: TT_OK, or TT_ERR_FILE with the problem in msg (the file in
 * s->failed), also when a --thread value names no thread (msg lists those
 * there are). tt_samples_fini() in any case.
 */
enum tt_status tt_samples_read(struct tt_samples *s, const struct tt_options *o,
			       const struct tt_samples_opts *so, char *msg, size_t msg_bytes);
void tt_samples_fini(struct tt_samples *s);

/* What a report prints for function f: its name, or "name (place)" when
 * another function has that name. */
const char *tt_samples_label(const struct tt_samples *s, uint32_t f);
/* The function's name alone (without place). */
const char *tt_samples_name(const struct tt_samples *s, uint32_t f);
/* The label of row r's thread (tt_thread_label()), in buf. */
const char *tt_samples_thread(const struct tt_samples *s, const struct tt_srow *r, char *buf,
			      size_t buf_bytes);

/*
 * tt_samples_folded() - the kept samples as folded stacks: one entry per
 * distinct path "root;...;leaf" (names as tree prints them, ';' and line
 * breaks made '_'), with --by-process and --by-thread (o) the process and
 * thread as root frames, and its number of samples; sorted by path.
 * *paths and each path are malloc'd.
 */
struct tt_sfolded {
	char *path;
	uint64_t samples;
};
struct tt_sfolded *tt_samples_folded(const struct tt_samples *s, const struct tt_options *o,
				     size_t *nr);

/* The warnings of the files (truncated, damaged, symbols), on stderr. */
void tt_samples_warn(const struct tt_samples *s);

/*
 * tt_samples_missing() - why s, without a SAMPLING record, has nothing to
 * show, in buf: the recording was made without sampling, or a file ends
 * (cut) before the frame that holds it, which a hint to record with
 * sampling would misread. One line, for tt_fail_file().
 */
const char *tt_samples_missing(const struct tt_samples *s, char *buf, size_t bytes);

#endif /* TT_SAMPLES_H */
