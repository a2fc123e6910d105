/* SPDX-License-Identifier: MIT */
/*
 * trace_read.h - for librec's tests: loads a whole trace through format/
 * and checks what the recorder promises: per-thread event and drop counts,
 * thread names, proper nesting of every thread's enters and exits, sync
 * points, and whether the file ended cleanly or was cut short.
 */
#ifndef TRACE_READ_H
#define TRACE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tr_thread {
	uint32_t serial, os_tid;
	char name[256];
	bool named, ended;
	uint64_t nr_events, nr_dropped;
	uint64_t nr_unclosed;	/* enters still open at the end of the file */
	uint64_t nr_bad_exits;	/* exits that did not match the innermost enter */
	uint64_t nr_open_at_start; /* a snapshot's exits of scopes open before its window */
	uint64_t nr_backwards;	/* events stamped earlier than the one before */
	uint32_t depth, max_depth;
	uint32_t stack[4096];
	uint64_t last_ticks;
};

struct tr_trace {
	bool clean;		/* END record seen */
	bool truncated;		/* file ends inside a frame */
	int nr_corrupt;		/* frames that could not be read */
	uint32_t clock, pid;
	uint64_t ticks_per_second;
	uint64_t nr_frames, nr_syncs, nr_events, end_nr_events, end_nr_dropped;
	uint32_t nr_threads, threads_cap;
	struct tr_thread *threads; /* indexed by serial - 1 */
	uint32_t nr_sites;
	char **site_names;	/* indexed by site id */
	uint64_t *site_enters;	/* indexed by site id */
	/* A flight-recorder snapshot's SNAPSHOT record (FORMAT.md §3.20). */
	bool has_snapshot;
	uint64_t snap_trigger_ticks, snap_start_ticks, snap_end_ticks, snap_suppressed;
	uint32_t snap_number, snap_kind;
	char snap_reason[512];
	uint64_t start_ticks;	/* FILE_HEADER */
};

/* Return: 0, or -1 if the file cannot be opened or its header read. */
int tr_load(const char *path, struct tr_trace *tr);
/* As tr_load(), calling fn for every event in file order (serial: its thread). */
typedef void (*tr_event_fn)(void *arg, uint32_t serial, uint64_t ticks, uint32_t code);
int tr_load_each(const char *path, struct tr_trace *tr, tr_event_fn fn, void *arg);
void tr_free(struct tr_trace *tr);
/* Enters recorded for sites named `name`, all threads (or one serial). */
uint64_t tr_calls(const struct tr_trace *tr, const char *name);
uint64_t tr_dropped(const struct tr_trace *tr);
const struct tr_thread *tr_thread_named(const struct tr_trace *tr, const char *name);
/* True when every thread's exits match its innermost open enter. */
bool tr_well_nested(const struct tr_trace *tr);

/* What tr_check() asks of a file besides being whole and clean. */
#define TR_MAX_CALLS 4
struct tr_want {
	uint32_t pid;	    /* the header's pid; 0: any */
	uint64_t nr_events; /* every event (enters and exits); 0: any */
	struct {
		const char *name; /* NULL ends the list */
		uint64_t calls;	  /* tr_calls() of name */
	} calls[TR_MAX_CALLS];
};

/*
 * tr_check() - loads path and checks that it is whole and clean (its END
 * record read, nothing truncated, corrupt or dropped, END's count the
 * events read, every thread's exits matching, no scope left open) and
 * holds what want says (NULL: nothing more). Return: 0, else -1 with why
 * (why_bytes, cut) saying the first difference. *pid (if not NULL): the
 * header's pid, when the file could be read.
 */
int tr_check(const char *path, const struct tr_want *want, uint32_t *pid, char *why,
	     size_t why_bytes);

#ifdef __cplusplus
}
#endif
#endif
