/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - names for the sites that librec's -finstrument-functions hooks
 * registered by code address (FORMAT.md §3.10-§3.11): the trace's MODULE
 * records say which ELF file was loaded where, and this module reads those
 * files' symbol tables (elfutils' libelf) to name an address, demangling C++
 * names. A file that is missing or whose build-id differs from the recorded
 * one never gives a name: the address is shown with the reason, and one
 * warning line per module goes to stderr. Used by events.c when a site's
 * name is first needed; it knows nothing of events or reports.
 */
#ifndef TT_SYMBOLS_H
#define TT_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recfmt.h"

struct tt_symbols;

/* trace_path names the trace in warnings. Return: NULL if out of memory. */
struct tt_symbols *tt_symbols_create(const char *trace_path);
void tt_symbols_destroy(struct tt_symbols *s);

/* A MODULE record (copied). A later module with the same id replaces it. */
void tt_symbols_add_module(struct tt_symbols *s, const struct recfmt_module *m);
/* A MODULE_MAP record (FORMAT.md §3.25): the module unmapped, or mapped again. */
void tt_symbols_module_map(struct tt_symbols *s, const struct recfmt_module_map *mm);
/* A FUNC record: site `id` is the function at run-time address `addr`, in
 * the module whose MODULE record has id `module` (1.5; 0: not said, the
 * latest MODULE that holds addr). */
void tt_symbols_add_func(struct tt_symbols *s, uint32_t id, uint64_t addr, uint32_t module);
/* True if site `id` came from a FUNC record; *addr is its address. */
bool tt_symbols_func_addr(const struct tt_symbols *s, uint32_t id, uint64_t *addr);

/*
 * tt_symbols_name() - the name of the function at run-time address `addr`:
 * its demangled symbol, or "0xFILEADDR [module: reason]" when it cannot be
 * named truthfully (file missing or changed, no symbol, no module). Opens
 * and reads each module's file once, on first use, and warns then. `loc`
 * gets where the function is, to tell same-named functions apart: a local
 * (static) symbol's source file, else the module's file name; "" when the
 * function could not be named.
 */
void tt_symbols_name(struct tt_symbols *s, uint64_t addr, char *out, size_t out_bytes,
		     char *loc, size_t loc_bytes);
/*
 * tt_symbols_func_name() - the name of FUNC site `id` as tt_symbols_name()
 * gives it, in the module its FUNC record names (FORMAT.md §3.11, 1.5): a
 * library closed and another mapped at its addresses each name their own
 * functions. A named module that was never recorded (its frame lost), or
 * that does not hold the address, names it "0xADDR [no module]". Return:
 * false if id came from no FUNC record.
 */
bool tt_symbols_func_name(struct tt_symbols *s, uint32_t id, char *out, size_t out_bytes,
			  char *loc, size_t loc_bytes);

/* The file name (no directories) of the module that holds run-time
 * address addr (the latest MODULE record whose ranges contain it), or "". */
const char *tt_symbols_module(struct tt_symbols *s, uint64_t addr);

/*
 * tt_symbols_mapping() - the module that holds run-time address addr (as
 * tt_symbols_module() finds it), for a profile's mapping table (pprof):
 * start and limit span its executable ranges; offset is the file offset of
 * the first of them, read from the file's program headers when the file was
 * read with the recorded build-id (has_offset), else 0; has_functions when
 * its symbols were read. The pointers live as long as s and its module.
 * Return: false when no module holds addr.
 */
struct tt_symbols_mapping {
	uint32_t id; /* the MODULE record's */
	uint64_t start, limit, offset;
	const char *path; /* as recorded, "" if none */
	const uint8_t *build_id;
	uint32_t build_id_bytes;
	bool has_offset, has_functions, vdso;
	bool main; /* the main program (MODULE flag RECFMT_MODULE_MAIN) */
};
bool tt_symbols_mapping(struct tt_symbols *s, uint64_t addr, struct tt_symbols_mapping *out);

/*
 * By time, for a sample's addresses (FORMAT.md §3.23): tt_symbols_find()
 * gives the module that held run-time address addr at `ticks` (the latest
 * MODULE record whose ranges contain it and that was mapped then; with
 * none mapped then, the latest that contains it), as an index > 0, or 0
 * when no module holds addr. An index stays valid as long as s, and names
 * the same module. tt_symbols_mapped_at() says whether module mod was
 * mapped at ticks (always, for a module the file gives no times for). The
 * _in/_of functions are those above for a module found so (0: none).
 */
uint32_t tt_symbols_find(struct tt_symbols *s, uint64_t addr, uint64_t ticks);
bool tt_symbols_mapped_at(const struct tt_symbols *s, uint32_t mod, uint64_t ticks);
void tt_symbols_name_in(struct tt_symbols *s, uint32_t mod, uint64_t addr, char *out,
			size_t out_bytes, char *loc, size_t loc_bytes);
const char *tt_symbols_module_of(struct tt_symbols *s, uint32_t mod);
bool tt_symbols_mapping_of(struct tt_symbols *s, uint32_t mod, struct tt_symbols_mapping *out);

/* The main program's path (its MODULE record, 1.1), or NULL. */
const char *tt_symbols_program(const struct tt_symbols *s);

/*
 * Warnings (a file missing or changed) are kept until the walk is over:
 * tt_symbols_merge_warnings() gives dst the warnings of src's modules that
 * dst has none for (replicas of one walk), and tt_symbols_warn() prints
 * each module's once, in the order of the MODULE records, on stderr.
 */
void tt_symbols_merge_warnings(struct tt_symbols *dst, const struct tt_symbols *src);
void tt_symbols_warn(struct tt_symbols *s);
/* Forgets the lines printed: each is printed once per command, and a
 * process that runs several (the fuzz targets) resets between them. */
void tt_symbols_warn_reset(void);

#endif /* TT_SYMBOLS_H */
