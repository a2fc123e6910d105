/* SPDX-License-Identifier: MIT */
/*
 * pprof.h - a writer of pprof's profile.proto (the format of `go tool
 * pprof`, Pyroscope, Grafana, speedscope; github.com/google/pprof,
 * proto/profile.proto), gzip-compressed as that format requires, through
 * protobuf.h and zlib.
 *
 * A profile is built in memory: its sample types, then samples, each a
 * stack of functions (leaf first) with one value per sample type and up to
 * TT_PPROF_MAX_LABELS string labels (thread, process). A stack is a list of
 * Locations: a code address in a Mapping (a loaded module: its address
 * range, file offset, path and build-id), whose Line names its function, as
 * perf's and Go's profiles are; or, for figures without addresses (scope
 * times), one Location per function without a mapping. Samples with the
 * same stack and labels are merged (their values added), as pprof itself
 * does.
 */
#ifndef TT_PPROF_H
#define TT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TT_PPROF_MAX_TYPES 4
#define TT_PPROF_MAX_LABELS 2

struct tt_pprof;

struct tt_pprof *tt_pprof_create(void);
void tt_pprof_destroy(struct tt_pprof *p);

/* Appends a sample type ("samples", "count"); at most TT_PPROF_MAX_TYPES,
 * all before the first sample. The last one added is the default view. */
void tt_pprof_sample_type(struct tt_pprof *p, const char *type, const char *unit);
/* period_type and period (e.g. "cpu", "nanoseconds", 1e9 / HZ). */
void tt_pprof_period(struct tt_pprof *p, const char *type, const char *unit, int64_t period);
/* time_nanos (wall clock at the start, 0: unknown) and duration_nanos. */
void tt_pprof_times(struct tt_pprof *p, int64_t time_nanos, int64_t duration_nanos);
/* A comment line (pprof shows them under -comments). */
void tt_pprof_comment(struct tt_pprof *p, const char *text);

/*
 * tt_pprof_function() - the id (1...) of the function (name, file, line);
 * the same triple gives the same id. file may be "" and line 0 (unknown).
 * system_name is what the system calls it (a mangled name; NULL: name).
 */
uint64_t tt_pprof_function(struct tt_pprof *p, const char *name, const char *system_name,
			   const char *file, int64_t line);

/*
 * tt_pprof_mapping() - a new Mapping's id (1...): the module loaded at
 * [start, limit) from file offset `offset` of `file`; build_id in hex ("":
 * none); has_functions when the locations in it are named already (pprof
 * then does not look for the file to name them).
 */
uint64_t tt_pprof_mapping(struct tt_pprof *p, uint64_t start, uint64_t limit, uint64_t offset,
			  const char *file, const char *build_id, bool has_functions);

/*
 * tt_pprof_location() - a new Location's id (1...): address `addr` in
 * mapping `mapping` (0: none, and addr 0: no address), in function `func`
 * (tt_pprof_function()) at `line` (0: unknown); func 0: not named, the
 * Location has no Line (its address and mapping only, which pprof shows as
 * the address and may name itself from the module's file).
 */
uint64_t tt_pprof_location(struct tt_pprof *p, uint64_t mapping, uint64_t addr, uint64_t func,
			   int64_t line);

/*
 * tt_pprof_add() - a sample: locs[0] (tt_pprof_location() ids) is the leaf,
 * locs[depth - 1] the root; values has one entry per sample type; label
 * keys and values are nr_labels strings each (a label with a NULL value is
 * left out).
 */
void tt_pprof_add(struct tt_pprof *p, const uint64_t *locs, size_t depth, const int64_t *values,
		  const char *const *label_keys, const char *const *label_vals, size_t nr_labels);

/* Number of distinct samples so far. */
size_t tt_pprof_nr_samples(const struct tt_pprof *p);

/*
 * tt_pprof_write() - encodes the profile and writes it gzip-compressed.
 * Return: 0, or -errno (-EIO when writing failed, -ENOMEM from zlib).
 */
int tt_pprof_write(struct tt_pprof *p, FILE *f);

#endif /* TT_PPROF_H */
