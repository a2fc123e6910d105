/* SPDX-License-Identifier: MIT */
/*
 * recfmt.h - the one place that knows the bytes of a rec trace file.
 *
 * Implements FORMAT.md (version 1.3). librec writes through the encode side
 * (encode.c) and tracetool reads through the decode side (decode.c, frames.c);
 * neither includes the other. Everything on disk is little-endian and is
 * read and written through the load/store helpers below, never by casting a
 * pointer to a struct.
 */
#ifndef RECFMT_H
#define RECFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FORMAT.md §1: versioning. A reader refuses a newer major version. */
#define RECFMT_VERSION_MAJOR 1
#define RECFMT_VERSION_MINOR 5

/* FORMAT.md §3: magic numbers. */
#define RECFMT_FILE_MAGIC "RECTRACE" /* 8 bytes, in FILE_HEADER */
#define RECFMT_FRAME_MAGIC 0x46434552u /* "RECF" little-endian */

/* FORMAT.md §2: limits a reader enforces before it trusts a length. */
#define RECFMT_MAX_FRAME_BYTES (16u << 20) /* decompressed size of one frame */
#define RECFMT_MAX_NAME_BYTES 4096u

/* FORMAT.md §3: record types. Values are on disk; never renumber. */
enum recfmt_type {
	RECFMT_FRAME = 1,
	RECFMT_FILE_HEADER = 2,
	RECFMT_SYNC = 3,
	RECFMT_SITE = 4,
	RECFMT_THREAD = 5,
	RECFMT_EVENTS = 6,
	RECFMT_DROPS = 7,
	RECFMT_THREAD_END = 8,
	RECFMT_END = 9,
	RECFMT_MODULE = 10, /* 1.1: a loaded ELF module (FORMAT.md §3.10) */
	RECFMT_FUNC = 11,   /* 1.1: a site named by a code address (FORMAT.md §3.11) */
	RECFMT_COUNTER_SET = 12, /* 1.1: FORMAT.md §3.13 */
	RECFMT_COUNTERS = 13,	 /* 1.1: FORMAT.md §3.14 */
	RECFMT_BLOCKED = 14,	 /* 1.2: a thread's waits for room (FORMAT.md §3.15) */
	RECFMT_PROBE_COST = 15,	 /* 1.2: what a probe adds to its parent (FORMAT.md §3.16) */
	RECFMT_CRASH = 22,	 /* 1.2: the recording ended by a fatal signal (FORMAT.md §3.21) */
	RECFMT_ANNOT_NAME = 16,	 /* 1.2: an annotation's name (FORMAT.md §3.17) */
	RECFMT_ANNOTS = 17,	 /* 1.2: a thread's annotations (FORMAT.md §3.18) */
	RECFMT_ANNOT_DROPS = 18, /* 1.2: a thread's dropped annotations (FORMAT.md §3.19) */
	/* 19: reserved for annotations (FORMAT.md §3.19); 20-23: flight recorder, crash. */
	RECFMT_SNAPSHOT = 20,	 /* 1.2: a flight-recorder snapshot's trigger (FORMAT.md §3.20) */
	RECFMT_SAMPLING = 24,	  /* 1.3: how the recording sampled stacks (FORMAT.md §3.22) */
	RECFMT_SAMPLES = 25,	  /* 1.3: a thread's stack samples (FORMAT.md §3.23) */
	RECFMT_SAMPLE_DROPS = 26, /* 1.3: a thread's samples not recorded (FORMAT.md §3.24) */
	RECFMT_BLOCK_INDEX = 27,  /* an EVENTS block summed up, in index frames only (FORMAT.md §6) */
	RECFMT_MODULE_MAP = 28, /* 1.4: a module unmapped or mapped again (FORMAT.md §3.25) */
};

/* FORMAT.md §3.2: clock kinds. */
enum recfmt_clock {
	RECFMT_CLOCK_TSC = 1,
	RECFMT_CLOCK_MONOTONIC = 2,
};

/* Every record starts with this 8-byte header (FORMAT.md §2). */
#define RECFMT_RECORD_HEADER_BYTES 8u

/*
 * One event as librec keeps it in memory and hands it to the encoder.
 * code = site id << 1 | kind, kind 0 = enter, 1 = exit. This layout is not
 * on disk (FORMAT.md §3.6 describes the encoded form); it is shared so that
 * the encoder can read a ring slice without copying.
 */
struct recfmt_event {
	uint64_t ticks;
	uint32_t code;
	uint32_t aux; /* reserved, 0 */
};
_Static_assert(sizeof(struct recfmt_event) == 16, "event is 16 bytes");

#define RECFMT_KIND_ENTER 0u
#define RECFMT_KIND_EXIT 1u
#define RECFMT_CODE(site, kind) (((uint32_t)(site) << 1) | (uint32_t)(kind))
#define RECFMT_CODE_SITE(code) ((code) >> 1)
#define RECFMT_CODE_IS_EXIT(code) ((code) & 1u)
#define RECFMT_MAX_SITE_ID 0x7fffffffu

/* ---------------------------------------------------------------------
 * Status and error location (style.md §4).
 */
enum recfmt_status {
	RECFMT_OK = 0,
	RECFMT_TRUNCATED,	    /* input ends inside a frame or a record */
	RECFMT_CORRUPT,		    /* bytes that cannot be what FORMAT.md says */
	RECFMT_UNSUPPORTED_VERSION, /* a newer major version */
	RECFMT_NOMEM,
	RECFMT_IO,
	RECFMT_END_OF_INPUT, /* not an error: no more frames or records */
};

struct recfmt_error {
	enum recfmt_status status;
	uint64_t frame_index;  /* 0-based index of the zstd frame */
	uint64_t frame_offset; /* file offset of that frame's first byte */
	uint64_t record_offset; /* offset inside the decompressed frame */
	char message[192];
};

const char *recfmt_status_str(enum recfmt_status status);
/* Formats "frame N at byte B: message" (or just the message if no frame). */
void recfmt_error_describe(const struct recfmt_error *err, char *out, size_t out_bytes);

/* ---------------------------------------------------------------------
 * Little-endian load/store helpers.
 */
static inline uint16_t recfmt_load_u16le(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t recfmt_load_u32le(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}
static inline uint64_t recfmt_load_u64le(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}
static inline void recfmt_store_u16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void recfmt_store_u32le(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}
static inline void recfmt_store_u64le(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

/* ---------------------------------------------------------------------
 * Decoded record contents (FORMAT.md §3). Strings point into the frame
 * buffer and are NOT NUL-terminated; they live until the next frame.
 */
struct recfmt_header {
	uint16_t major, minor;
	uint32_t clock; /* enum recfmt_clock */
	uint32_t pid;
	uint64_t ticks_per_second; /* writer's estimate; SYNC records refine it */
	uint64_t start_ticks;
	uint64_t start_mono_ns;
	uint64_t start_real_ns;
	/* 1.2, offset 56: the clock's step as the writer observed it at start
	 * (FORMAT.md §3.2); 0: not measured (a 56-byte header). */
	uint64_t clock_step_ticks;
};

struct recfmt_sync {
	uint64_t ticks;
	uint64_t mono_ns;
	uint64_t real_ns;
};

struct recfmt_site {
	uint32_t id;
	uint32_t line;
	const char *name;
	uint32_t name_bytes;
	const char *file;
	uint32_t file_bytes;
};

struct recfmt_thread {
	uint32_t thread; /* file-unique serial, 1-based */
	uint32_t os_tid;
	const char *name; /* NULL when unnamed */
	uint32_t name_bytes;
};

/*
 * nr_filtered (1.1, FORMAT.md §3.7-§3.9): activations not written because
 * they were shorter than REC_MIN_NS. On disk only when has_filtered is set
 * (the recording used REC_MIN_NS); a decoder sets has_filtered when the
 * record carries the field.
 */
struct recfmt_drops {
	uint32_t thread;
	uint64_t nr_dropped; /* cumulative for this thread */
	bool has_filtered;
	uint64_t nr_filtered; /* cumulative for this thread */
};

struct recfmt_thread_end {
	uint32_t thread;
	uint64_t nr_events;  /* cumulative records written for this thread */
	uint64_t nr_dropped; /* cumulative scopes dropped for this thread */
	bool has_filtered;
	uint64_t nr_filtered;
};

/* FORMAT.md §3.15 (1.2): REC_OVERFLOW=block waits of one thread, cumulative. */
struct recfmt_blocked {
	uint32_t thread;
	uint64_t nr_blocked; /* probes that waited for room */
	uint64_t blocked_ns; /* CLOCK_MONOTONIC ns they waited, in all */
};

/*
 * FORMAT.md §3.16 (1.2): the time one recorded activation's probes (enter
 * and exit) add to its parent's activation, measured by the recorder at
 * start, in picoseconds; 0: not measured.
 */
struct recfmt_probe_cost {
	uint64_t scope_ps; /* TRACE_SCOPE */
	uint64_t hook_ps;  /* the -finstrument-functions hooks */
	/* Of each: the part between the pair's own two timestamps, which the
	 * child's activation holds (so the parent's self time does not). */
	uint64_t scope_inner_ps, hook_inner_ps;
};

/* FORMAT.md §3.20 (1.2): what made a flight-recorder snapshot. */
enum recfmt_snapshot_kind {
	RECFMT_SNAPSHOT_API = 1,     /* rec_snapshot() */
	RECFMT_SNAPSHOT_SIGNAL = 2,  /* REC_SNAPSHOT_SIGNAL */
	RECFMT_SNAPSHOT_TRIGGER = 3, /* REC_TRIGGER: a slow activation */
	RECFMT_SNAPSHOT_CRASH = 4,   /* a fatal signal */
};

struct recfmt_snapshot {
	uint64_t trigger_ticks;	    /* when the trigger happened */
	uint64_t window_start_ticks; /* events before it are not in the file */
	uint64_t window_end_ticks;   /* nor those after it */
	uint32_t number;	    /* %n: 1 for the process's first snapshot */
	uint32_t kind;		    /* enum recfmt_snapshot_kind */
	uint64_t nr_suppressed;	    /* triggers not written since the previous snapshot */
	const char *reason;	    /* not NUL-terminated when decoded */
	uint32_t reason_bytes;
};

struct recfmt_end {
	uint64_t end_ticks;
	uint64_t nr_events;
	uint64_t nr_dropped;
	bool has_filtered;
	uint64_t nr_filtered;
};

/* FORMAT.md §3.21: CRASH, the fatal signal that ended the recording. */
struct recfmt_crash {
	uint32_t signo;	 /* Linux signal number: 11 SIGSEGV, 7 SIGBUS, 4 SIGILL, 8 SIGFPE, 6 SIGABRT */
	int32_t si_code; /* siginfo's si_code: > 0 sent by the kernel, <= 0 by a process */
	uint32_t thread; /* serial of the thread that received it; 0: an untraced thread */
	uint32_t flags;	 /* 0 in version 1.2 */
	uint64_t addr;	 /* si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE, else 0 */
	uint64_t ticks;	 /* when the handler ran */
};

/* FORMAT.md §3.10: MODULE flags. */
#define RECFMT_MODULE_MAIN 1u /* the main program */
#define RECFMT_MODULE_VDSO 2u /* the kernel's vDSO: no file on disk */
#define RECFMT_MAX_MODULE_RANGES 64u
#define RECFMT_MAX_BUILD_ID_BYTES 64u

/* One executable range of a module, in run-time addresses: [start, end). */
struct recfmt_range {
	uint64_t start, end;
};

/*
 * FORMAT.md §3.10. Decoded: ranges points into the frame (nr_ranges pairs
 * of u64le, read with recfmt_module_range()); build_id and path are not
 * NUL-terminated.
 */
struct recfmt_module {
	uint32_t id;
	uint32_t flags;
	uint64_t load_bias;
	uint32_t nr_ranges;
	const uint8_t *ranges;
	const uint8_t *build_id;
	uint32_t build_id_bytes;
	const char *path;
	uint32_t path_bytes;
	/* 1.4: mapped at `since_ticks` or later; without it (has_since false),
	 * mapped since before the recording began. */
	bool has_since;
	uint64_t since_ticks;
};

/* FORMAT.md §3.25: MODULE_MAP, a module's mapping changed. */
#define RECFMT_MODULE_UNMAPPED 1u /* no longer mapped at `ticks` */
#define RECFMT_MODULE_MAPPED 2u	  /* mapped again, at `ticks` or later */
struct recfmt_module_map {
	uint32_t id; /* the MODULE's */
	uint32_t what; /* RECFMT_MODULE_UNMAPPED or RECFMT_MODULE_MAPPED */
	uint64_t ticks;
};

static inline struct recfmt_range recfmt_module_range(const struct recfmt_module *m, uint32_t i)
{
	struct recfmt_range r = { recfmt_load_u64le(m->ranges + 16 * i),
				  recfmt_load_u64le(m->ranges + 16 * i + 8) };
	return r;
}

/* FORMAT.md §3.11: a site whose name is the function at a code address. */
struct recfmt_func {
	uint32_t id;
	/* 1.5: the id of the MODULE record the function is in; 0: not said
	 * (the latest MODULE holding addr, as in 1.1-1.4). */
	uint32_t module;
	uint64_t addr; /* run-time address of the function's entry */
};

/*
 * FORMAT.md §3.13-§3.14: per-thread hardware/software counters. A thread
 * has at most RECFMT_MAX_COUNTERS requested counters; flag bit 0 set means
 * the counter is recorded (it has a column in the thread's COUNTERS blocks,
 * in the order of the set), clear means it was requested but could not be
 * opened.
 */
#define RECFMT_MAX_COUNTERS 32u
#define RECFMT_COUNTER_RECORDED 1u
#define RECFMT_MAX_COUNTER_NAME_BYTES 64u

struct recfmt_counter_set {
	uint32_t thread;
	uint32_t nr;	     /* entries in c[] */
	uint32_t nr_columns; /* entries with RECFMT_COUNTER_RECORDED */
	struct {
		uint32_t flags;
		const char *name; /* into the frame; not NUL-terminated */
		uint32_t name_bytes;
	} c[RECFMT_MAX_COUNTERS];
};

/* The fixed part of a COUNTERS block; the columns follow (see decode). */
struct recfmt_counters {
	uint32_t thread;
	uint32_t nr_events;
	uint32_t nr_columns;
	const uint8_t *columns, *end;
};

/* ---------------------------------------------------------------------
 * Annotations (FORMAT.md §3.17-§3.19, version 1.2): values, instants,
 * messages, arguments and flows of rec(3), Annotations.
 */

/* The kind of one annotation (FORMAT.md §3.18). Values are on disk. */
enum recfmt_annot_kind {
	RECFMT_ANNOT_VALUE_I64 = 1,  /* TRACE_VALUE with an integer: i64 */
	RECFMT_ANNOT_VALUE_F64 = 2,  /* TRACE_VALUE with a floating-point value: f64 */
	RECFMT_ANNOT_INSTANT = 3,    /* TRACE_INSTANT: no value */
	RECFMT_ANNOT_MESSAGE = 4,    /* TRACE_MESSAGE: text, no name */
	RECFMT_ANNOT_ARG = 5,	     /* TRACE_ARG: i64 under a key, bound to the innermost scope */
	RECFMT_ANNOT_FLOW_BEGIN = 6, /* TRACE_FLOW_*: u64 id, bound to the innermost scope */
	RECFMT_ANNOT_FLOW_STEP = 7,
	RECFMT_ANNOT_FLOW_END = 8,
};
#define RECFMT_ANNOT_KIND_MAX 8u

/*
 * The name space of an ANNOT_NAME (FORMAT.md §3.17): what its name names.
 * Annotation names have their own ids, apart from SITE/FUNC ids: they are
 * never scopes.
 */
enum recfmt_name_kind {
	RECFMT_NAME_TRACK = 1,	 /* a value track (VALUE_I64, VALUE_F64) */
	RECFMT_NAME_INSTANT = 2, /* an instant (INSTANT) */
	RECFMT_NAME_KEY = 3,	 /* an argument's key (ARG) */
	RECFMT_NAME_FLOW = 4,	 /* a flow (FLOW_BEGIN, FLOW_STEP, FLOW_END) */
};

#define RECFMT_MAX_ANNOT_NAME_ID 0x0fffffffu /* 1 ... 2^28 - 1 */
#define RECFMT_MAX_MESSAGE_BYTES 255u

/* The name space an annotation kind's name_id lives in; 0 for MESSAGE (no name). */
static inline uint32_t recfmt_annot_name_kind(uint32_t kind)
{
	switch (kind) {
	case RECFMT_ANNOT_VALUE_I64:
	case RECFMT_ANNOT_VALUE_F64: return RECFMT_NAME_TRACK;
	case RECFMT_ANNOT_INSTANT: return RECFMT_NAME_INSTANT;
	case RECFMT_ANNOT_ARG: return RECFMT_NAME_KEY;
	case RECFMT_ANNOT_FLOW_BEGIN:
	case RECFMT_ANNOT_FLOW_STEP:
	case RECFMT_ANNOT_FLOW_END: return RECFMT_NAME_FLOW;
	default: return 0;
	}
}

/* FORMAT.md §3.17: ANNOT_NAME. Strings point into the frame, not NUL-terminated. */
struct recfmt_annot_name {
	uint32_t id;   /* 1 ... RECFMT_MAX_ANNOT_NAME_ID, its own id space */
	uint32_t kind; /* enum recfmt_name_kind */
	uint32_t line;
	const char *name;
	uint32_t name_bytes;
	const char *file;
	uint32_t file_bytes;
};

/*
 * One annotation, decoded (or to encode). Which fields mean something
 * depends on kind; the others are 0 / NULL.
 *
 * Position: `pos` events of the thread's EVENTS block that the ANNOTS record
 * directly follows (FORMAT.md §3.18) came before this annotation, the rest
 * after it: 0 <= pos <= nr_events of that block. A stand-alone ANNOTS
 * record (nr_events 0) has pos 0: its annotations come after every event of
 * the thread read so far and before the next. ARG and FLOW_* belong to the
 * innermost activation open at that point (none if none is open).
 */
struct recfmt_annot {
	uint32_t kind;	   /* enum recfmt_annot_kind */
	uint32_t thread;   /* serial */
	uint32_t pos;	   /* see above */
	uint32_t name_id;  /* ANNOT_NAME id; 0 for MESSAGE */
	uint64_t ticks;	   /* when it was recorded (same clock as events) */
	int64_t i64;	   /* VALUE_I64, ARG */
	double f64;	   /* VALUE_F64 */
	uint64_t id;	   /* FLOW_*: the flow's 64-bit id */
	const char *text;  /* MESSAGE: into the frame (decoded) or the caller's (encode) */
	uint32_t text_bytes; /* MESSAGE: 0 ... RECFMT_MAX_MESSAGE_BYTES */
};

/* FORMAT.md §3.19: annotations of a thread dropped since the start, cumulative. */
struct recfmt_annot_drops {
	uint32_t thread;
	uint64_t nr_dropped;
};

/* ---------------------------------------------------------------------
 * Stack samples (FORMAT.md §3.22-§3.24, version 1.3): REC_SAMPLE.
 */

/* FORMAT.md §3.22: what a sample stands for. Values are on disk. */
#define RECFMT_SAMPLE_CLOCK_THREAD_CPU 1u  /* the thread's CPU time (user + system) */
#define RECFMT_SAMPLE_CLOCK_THREAD_USER 2u /* the thread's CPU time in user mode */
/* Both: a signal to the thread, its stack unwound in the handler. */
#define RECFMT_SAMPLE_MECH_TIMER 1u	       /* a POSIX timer on the thread's CPU-time clock */
#define RECFMT_SAMPLE_MECH_PERF_TASK_CLOCK 2u /* a perf_event task-clock event of the thread */
#define RECFMT_SAMPLE_MECH_TIMER_UNWIND RECFMT_SAMPLE_MECH_TIMER /* its first name */
/* FORMAT.md §3.23: the most frames one sample may hold. */
#define RECFMT_MAX_SAMPLE_FRAMES 512u
/* FORMAT.md §3.23: a sample's flags. */
#define RECFMT_SAMPLE_TRUNCATED 1u /* its outermost frames are missing */

struct recfmt_sampling {
	uint32_t hz;	     /* samples per second of a thread's CPU time */
	uint32_t clock;	     /* RECFMT_SAMPLE_CLOCK_* */
	uint32_t mechanism;  /* RECFMT_SAMPLE_MECH_* */
	uint32_t max_frames; /* the deepest stack a sample holds, <= RECFMT_MAX_SAMPLE_FRAMES */
	uint64_t period_ns;  /* the CPU time one sample stands for: 1e9 / hz, rounded */
};

/*
 * One stack sample: frames[0] is the address at which the thread was
 * interrupted, frames[i] (i >= 1) the return address into the i-th caller
 * (its call instruction is at frames[i] - 1). Run-time addresses, named
 * through MODULE records (FORMAT.md §3.10).
 */
struct recfmt_sample {
	uint32_t thread; /* serial (decoded; ignored by the encoder) */
	uint32_t flags;	 /* RECFMT_SAMPLE_TRUNCATED */
	uint64_t ticks;	 /* when it was taken, the events' clock */
	uint32_t nr_frames; /* 1 ... RECFMT_MAX_SAMPLE_FRAMES */
	const uint64_t *frames; /* innermost first */
};

/* FORMAT.md §3.24: samples of a thread not recorded since the start, cumulative. */
struct recfmt_sample_drops {
	uint32_t thread;
	uint64_t nr_dropped;
};

/*
 * SAMPLES iterator (FORMAT.md §3.23): recfmt_samples_open() validates the
 * fixed part; recfmt_samples_next() yields nr_samples samples, each
 * bounds-checked, with s->frames pointing into the iterator (valid until
 * the next call).
 */
struct recfmt_samples_iter {
	uint32_t thread;
	uint32_t nr_samples;
	uint32_t nr_left;
	uint32_t nr_prev;   /* frames of the last sample returned */
	uint64_t ticks;	    /* of the last sample returned; base_ticks at first */
	uint64_t prev_addr; /* the last address decoded */
	const uint8_t *p, *end;
	size_t offset; /* of the record in the frame */
	uint64_t frames[RECFMT_MAX_SAMPLE_FRAMES];
};

/*
 * ANNOTS iterator (FORMAT.md §3.18): recfmt_annots_open() validates the
 * fixed part; recfmt_annots_next() yields nr_annots annotations, each
 * bounds-checked.
 */
struct recfmt_annots_iter {
	uint32_t thread;
	uint32_t nr_annots;
	uint32_t nr_events; /* of the EVENTS block it follows; 0: stand-alone */
	uint32_t nr_left;
	uint32_t pos;	    /* of the last annotation returned; 0 at first */
	uint64_t ticks;	    /* of the last annotation returned; base_ticks at first */
	const uint8_t *p, *end;
	const uint8_t *payload; /* for error offsets */
	size_t offset;		/* of the record in the frame */
};

/* ---------------------------------------------------------------------
 * Encoder (writer side, encode.c). A growable byte buffer that collects one
 * frame's records; librec compresses it into one zstd frame. A fixed buffer
 * (memory the caller owns: librec's crash handler, which may not allocate)
 * never grows: an encoder that needs more room than it has returns -ENOMEM.
 */
struct recfmt_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool fixed;
};

void recfmt_buf_init(struct recfmt_buf *buf);
void recfmt_buf_fini(struct recfmt_buf *buf);
/* Make room for `more` bytes. Return: 0, or -ENOMEM. */
int recfmt_buf_reserve(struct recfmt_buf *buf, size_t more);

/*
 * rawframe.c: a zstd frame of raw blocks with its XXH64 content checksum,
 * written without zstd and without allocating (librec's crash handler).
 */
struct recfmt_xxh64 {
	uint64_t v[4], seed, total_bytes;
	uint8_t pending[32];
	uint32_t nr_pending;
};
void recfmt_xxh64_init(struct recfmt_xxh64 *s, uint64_t seed);
void recfmt_xxh64_update(struct recfmt_xxh64 *s, const void *data, size_t n);
uint64_t recfmt_xxh64_digest(const struct recfmt_xxh64 *s);
struct recfmt_slice {
	const void *data;
	size_t bytes;
};
/* Takes the next n bytes of the frame. Return: 0, or non-zero to stop. */
typedef int (*recfmt_emit_fn)(void *ctx, const uint8_t *p, size_t n);
int recfmt_rawframe_emit(const struct recfmt_slice *parts, size_t nr_parts, recfmt_emit_fn emit,
			 void *ctx);
int recfmt_rawframe_emit_sum(const struct recfmt_slice *parts, size_t nr_parts, bool checksum,
			     recfmt_emit_fn emit, void *ctx);
size_t recfmt_rawframe_bytes(size_t content, bool checksum);

/* Each returns 0, or -ENOMEM. */
int recfmt_encode_frame(struct recfmt_buf *buf, uint32_t seq);
/* FRAME with flags (FORMAT.md §3.1): 12 bytes if flags != 0, else 8. */
#define RECFMT_FRAME_FAST 1u /* compressed with raw literals: the writer was under pressure */
#define RECFMT_FRAME_RECOMPRESSED 2u /* written fast, compressed again at the end (librec) */
int recfmt_encode_frame_flags(struct recfmt_buf *buf, uint32_t seq, uint32_t flags);
int recfmt_encode_header(struct recfmt_buf *buf, const struct recfmt_header *hdr);
int recfmt_encode_sync(struct recfmt_buf *buf, const struct recfmt_sync *sync);
int recfmt_encode_site(struct recfmt_buf *buf, uint32_t id, uint32_t line, const char *name,
		       const char *file);
int recfmt_encode_thread(struct recfmt_buf *buf, uint32_t thread, uint32_t os_tid,
			 const char *name);
int recfmt_encode_drops(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped);
/* DROPS with the 1.1 nr_filtered field (FORMAT.md §3.7). */
int recfmt_encode_drops_filtered(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped,
				 uint64_t nr_filtered);
int recfmt_encode_thread_end(struct recfmt_buf *buf, const struct recfmt_thread_end *te);
int recfmt_encode_end(struct recfmt_buf *buf, const struct recfmt_end *end);
int recfmt_encode_blocked(struct recfmt_buf *buf, const struct recfmt_blocked *b);
int recfmt_encode_probe_cost(struct recfmt_buf *buf, const struct recfmt_probe_cost *pc);
int recfmt_encode_crash(struct recfmt_buf *buf, const struct recfmt_crash *c);
/* FORMAT.md §3.20; reason_bytes is taken from strlen(reason) (cut to 4096). */
int recfmt_encode_snapshot(struct recfmt_buf *buf, const struct recfmt_snapshot *s);
/* Its size on disk, and the same record written into out[0, size) with no
 * allocation (async-signal-safe); Return: bytes written, 0 if out is too small. */
size_t recfmt_snapshot_bytes(const struct recfmt_snapshot *s);
size_t recfmt_store_snapshot(uint8_t *out, size_t out_bytes, const struct recfmt_snapshot *s);
/*
 * MODULE (FORMAT.md §3.10): ranges is nr_ranges executable ranges; the
 * encoder clamps nr_ranges, build_id_bytes and path to the format's limits.
 */
int recfmt_encode_module(struct recfmt_buf *buf, uint32_t id, uint32_t flags, uint64_t load_bias,
			 const struct recfmt_range *ranges, uint32_t nr_ranges,
			 const uint8_t *build_id, uint32_t build_id_bytes, const char *path);
/* MODULE with its 1.4 field: mapped at since_ticks or later (0: before the recording). */
int recfmt_encode_module_since(struct recfmt_buf *buf, uint32_t id, uint32_t flags,
			       uint64_t load_bias, const struct recfmt_range *ranges,
			       uint32_t nr_ranges, const uint8_t *build_id, uint32_t build_id_bytes,
			       const char *path, uint64_t since_ticks);
/* MODULE_MAP (FORMAT.md §3.25). */
int recfmt_encode_module_map(struct recfmt_buf *buf, const struct recfmt_module_map *mm);
int recfmt_encode_func(struct recfmt_buf *buf, uint32_t id, uint64_t addr);
/* FUNC naming its module (1.5, FORMAT.md §3.11): the MODULE's id, 0 if not known. */
int recfmt_encode_func_in(struct recfmt_buf *buf, uint32_t id, uint64_t addr, uint32_t module);
/*
 * COUNTER_SET (FORMAT.md §3.13): names[i] with flags[i] for nr <=
 * RECFMT_MAX_COUNTERS counters. Return: 0, -EINVAL (nr too large) or -ENOMEM.
 */
int recfmt_encode_counter_set(struct recfmt_buf *buf, uint32_t thread, uint32_t nr,
			      const char *const *names, const uint32_t *flags);
/*
 * COUNTERS (FORMAT.md §3.14), to be appended right after the EVENTS block
 * it annotates: values[i * nr_columns + c] is counter c at event i.
 * Return: 0, -EINVAL (nr_columns too large) or -ENOMEM.
 */
int recfmt_encode_counters(struct recfmt_buf *buf, uint32_t thread, uint32_t nr_events,
			   uint32_t nr_columns, const uint64_t *values);

/*
 * ANNOT_NAME (FORMAT.md §3.17): id in 1 ... RECFMT_MAX_ANNOT_NAME_ID, kind
 * an enum recfmt_name_kind. Return: 0, -EINVAL or -ENOMEM.
 */
int recfmt_encode_annot_name(struct recfmt_buf *buf, uint32_t id, uint32_t kind, uint32_t line,
			     const char *name, const char *file);
/* ANNOT_DROPS (FORMAT.md §3.19). Return: 0, or -ENOMEM. */
int recfmt_encode_annot_drops(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped);

/*
 * ANNOTS encoder (FORMAT.md §3.18): begin, then append the annotations of
 * one thread in the order they were recorded (pos never decreasing, at most
 * nr_events), then finish. nr_events: events of the EVENTS block of the same
 * thread that this record will directly follow in the frame; 0 for a
 * stand-alone record (then every pos is 0). A record with no annotation is
 * discarded by finish. The thread field of the appended annotations is not
 * used (the record's is).
 */
struct recfmt_annots_encoder {
	struct recfmt_buf *buf;
	size_t record_start; /* offset of the record header in buf */
	uint64_t prev_ticks;
	uint32_t prev_pos;
	uint32_t nr_events;
	uint32_t nr_annots;
};

/* Return: 0, or -ENOMEM. */
int recfmt_annots_begin(struct recfmt_annots_encoder *enc, struct recfmt_buf *buf,
			uint32_t thread, uint64_t base_ticks, uint32_t nr_events);
/*
 * Return: 0; -EINVAL for an unknown kind, a pos out of order or past
 * nr_events, a name id out of range (0 except for MESSAGE) or a text of
 * more than RECFMT_MAX_MESSAGE_BYTES (nothing appended); -ENOMEM.
 */
int recfmt_annots_append(struct recfmt_annots_encoder *enc, const struct recfmt_annot *a);
/* Return: 0. */
int recfmt_annots_finish(struct recfmt_annots_encoder *enc);

/* SAMPLING (FORMAT.md §3.22). Return: 0, -EINVAL (hz 0, max_frames out of range) or -ENOMEM. */
int recfmt_encode_sampling(struct recfmt_buf *buf, const struct recfmt_sampling *s);
/* SAMPLE_DROPS (FORMAT.md §3.24). Return: 0, or -ENOMEM. */
int recfmt_encode_sample_drops(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped);

/*
 * SAMPLES encoder (FORMAT.md §3.23): begin, append the samples of one
 * thread in the order they were taken, finish. Each row shares the
 * outermost frames it has in common with the row before it in the record.
 * A record with no sample is discarded by finish. The encoder keeps a copy
 * of the last stack (no allocation: librec's crash handler uses it).
 */
struct recfmt_samples_encoder {
	struct recfmt_buf *buf;
	size_t record_start; /* offset of the record header in buf */
	uint64_t prev_ticks;
	uint64_t prev_addr;
	uint32_t nr_samples;
	uint32_t nr_prev;
	uint64_t prev[RECFMT_MAX_SAMPLE_FRAMES];
};

/* Return: 0, or -ENOMEM. */
int recfmt_samples_begin(struct recfmt_samples_encoder *enc, struct recfmt_buf *buf,
			 uint32_t thread, uint64_t base_ticks);
/*
 * Return: 0; -EINVAL for nr_frames 0 or above RECFMT_MAX_SAMPLE_FRAMES, or
 * unknown flags (nothing appended); -ENOMEM.
 */
int recfmt_samples_append(struct recfmt_samples_encoder *enc, const struct recfmt_sample *s);
/* Return: 0. */
int recfmt_samples_finish(struct recfmt_samples_encoder *enc);
/* The most bytes one row can take (a buffer that never grows must have it free). */
#define RECFMT_SAMPLE_ROW_MAX_BYTES (10u + 1u + 5u + 5u + 10u * RECFMT_MAX_SAMPLE_FRAMES)

/*
 * EVENTS block encoder (FORMAT.md §3.6). begin, then any number of append
 * calls with consecutive events of one thread, then finish. The ids column
 * is built in place in `buf`, the deltas column in `scratch`, copied behind
 * the ids at finish (unless recfmt_events_expect() was told the number of
 * events: see there). A block with zero events is discarded by finish.
 */
/*
 * A thread's nesting as the writer's index sees it (FORMAT.md §6.2): its
 * open enters' codes, from its first event in the file on. Zeroed = empty;
 * recfmt_nest_reset() empties it for a new file, keeping its memory.
 */
struct recfmt_nest {
	uint32_t *stack; /* stack[1 .. depth]; stack[0] and stack[depth + 1] scratch */
	uint32_t depth, cap;
	uint64_t last_ticks;
	bool broken; /* nesting no longer known: no later block of it is NESTED */
	/* 1 while the stack is being reallocated: a child forked meanwhile
	 * must not free it (recfmt_nest_fini()), as stack may be stale. */
	uint32_t growing;
};
void recfmt_nest_reset(struct recfmt_nest *n);
void recfmt_nest_fini(struct recfmt_nest *n);
/* Deepest nesting an index follows (FORMAT.md §6.2). */
#define RECFMT_NEST_MAX_DEPTH (1u << 16)

/* BLOCK_INDEX (FORMAT.md §6.2): one EVENTS block summed up. */
struct recfmt_block_index {
	uint32_t thread, nr_events;
	uint64_t first_ticks, last_ticks;
	uint32_t enters, flags;
	uint32_t depth_start, depth_low, depth_end;
};
#define RECFMT_BLOCK_NESTED 1u
#define RECFMT_BLOCK_INDEX_BYTES 48u
struct recfmt_record;
/*
 * recfmt_block_index_read() - a BLOCK_INDEX record (its type checked by the
 * caller) into b, as put_block() (index.c) writes it. Return: false when
 * its payload is shorter than RECFMT_BLOCK_INDEX_BYTES.
 */
bool recfmt_block_index_read(const struct recfmt_record *rec, struct recfmt_block_index *b);

/* A block summed up by its encoder, at offset `at` of the buffer it was encoded into. */
struct recfmt_index_entry {
	uint64_t at;
	struct recfmt_block_index b;
};

struct recfmt_events_encoder {
	struct recfmt_buf *buf;
	struct recfmt_buf *scratch; /* deltas column */
	size_t record_start;	    /* offset of the record header in buf */
	uint64_t prev_ticks;
	uint32_t nr_events;
	uint32_t thread;
	/* recfmt_events_track(): the thread's nesting, where finish() puts the
	 * block's struct recfmt_index_entry, and the block so far. */
	struct recfmt_nest *nest;
	struct recfmt_buf *sums;
	struct recfmt_block_index sum;
	/* recfmt_events_expect(): while not 0, the offset in buf where the
	 * deltas column is built (gap_len bytes so far), for expect events;
	 * split: the ids that come after a wide one go to scratch. */
	size_t gap, gap_len;
	uint32_t expect;
	bool split;
};

int recfmt_events_begin(struct recfmt_events_encoder *enc, struct recfmt_buf *buf,
			struct recfmt_buf *scratch, uint32_t thread, uint64_t base_ticks);
int recfmt_events_append(struct recfmt_events_encoder *enc, const struct recfmt_event *ev,
			 size_t nr);
int recfmt_events_finish(struct recfmt_events_encoder *enc);
/*
 * recfmt_events_expect() - after begin, before the first append: the block
 * will have nr events (a bound: fewer cost a move of the deltas column at
 * finish). The deltas column is then built in buf, nr bytes behind the
 * ids' start: its final place while every id takes one byte (codes under
 * 0x80, site ids under 64), so that finish copies nothing. At the first
 * wider id, or an event past nr, one column goes on in scratch: the deltas
 * built so far if they are few, else the ids still to come; finish then
 * copies it back (and moves the deltas once), no more than without the
 * call. buf must have room for up to 11 bytes an event, not 5. The
 * block's bytes are the same with or without the call.
 */
void recfmt_events_expect(struct recfmt_events_encoder *enc, size_t nr);
/*
 * recfmt_events_track() - after begin: follow the block's nesting in `nest`
 * (the thread's, FORMAT.md §6.2), and have finish() append the block's
 * struct recfmt_index_entry to `sums` (at: the record's offset in buf).
 */
void recfmt_events_track(struct recfmt_events_encoder *enc, struct recfmt_nest *nest,
			 struct recfmt_buf *sums);

/*
 * The writer's index (FORMAT.md §6): before each data frame, a zstd
 * skippable frame (magic RECFMT_INDEX_FRAME_MAGIC) that says where the data
 * frame ends, its hash, and its records with each EVENTS block replaced by
 * a BLOCK_INDEX record, so that a reader finds the frames a time window
 * needs without decompressing the others.
 */
#define RECFMT_INDEX_FRAME_MAGIC 0x184D2A53u
/* A packed index frame (FORMAT.md §6.3): its records zstd-compressed after a raw prefix. */
#define RECFMT_INDEX_PACKED_MAGIC 0x184D2A54u
#define RECFMT_INDEX_ID 0x58434552u /* "RECX" little-endian */
#define RECFMT_INDEX_MAJOR 1
#define RECFMT_INDEX_MINOR 0
#define RECFMT_INDEX_PACKED_MINOR 1
/* Whether the 4 bytes at p are an index frame's magic, plain or packed. */
#define RECFMT_IS_INDEX_MAGIC(m) ((m) == RECFMT_INDEX_FRAME_MAGIC || (m) == RECFMT_INDEX_PACKED_MAGIC)
#define RECFMT_INDEX_HEAD_BYTES 48u /* of the payload, before the records */
/* Index frame flags (FORMAT.md §6.1). */
#define RECFMT_INDEX_PARTIAL 1u	   /* records left out: ANNOTS, COUNTERS, SAMPLES */
#define RECFMT_INDEX_INCOMPLETE 2u /* an EVENTS block without its BLOCK_INDEX sums */

struct recfmt_index_head {
	uint16_t major, minor;
	uint32_t seq, flags;
	uint64_t frame_bytes, content_bytes, frame_hash;
	/* records_bytes of records; NULL for a packed frame until recfmt_index_unpack() */
	const uint8_t *records;
	uint32_t records_bytes;
	/* A packed frame (§6.3): the first raw_bytes of its records as they are, at
	 * stored; the rest compressed, in the zstd frame at stored + raw_bytes. */
	bool packed;
	uint32_t raw_bytes;
	const uint8_t *stored;
	size_t stored_bytes;
};

/*
 * recfmt_index_build() - the index frame of the data frame whose records
 * are parts[0 .. nr_parts) and whose compressed bytes are frame[0 ..
 * frame_bytes), into out (replacing its content). sums: the entries of
 * the EVENTS blocks of parts[sums_part], in order. Return: 0 or -ENOMEM.
 */
int recfmt_index_build(struct recfmt_buf *out, const struct recfmt_buf *parts, size_t nr_parts,
		       size_t sums_part, const struct recfmt_index_entry *sums, size_t nr_sums,
		       const uint8_t *frame, size_t frame_bytes);
/* What recfmt_index_pack() compresses with (zeroed to start; its own zstd context). */
struct recfmt_index_packer {
	void *cctx;
	struct recfmt_buf buf;
};
/*
 * recfmt_index_pack() - the index frame `ix` (from recfmt_index_build())
 * made packed (FORMAT.md §6.3) in place, its records after the first
 * raw_bytes (whole records) compressed, when that makes it at least a
 * quarter smaller; else left as it is. Return: 0, or -ENOMEM (ix left as
 * it is).
 */
int recfmt_index_pack(struct recfmt_buf *ix, size_t raw_bytes, struct recfmt_index_packer *pk);
void recfmt_index_packer_fini(struct recfmt_index_packer *pk);
/*
 * recfmt_index_parse() - frame[0 .. len) as an index frame (the whole
 * skippable frame, its 8-byte header included), plain or packed. Return:
 * true when it is one of a version this reader knows, whole and with its
 * own hash right. A packed one's records are read by recfmt_index_unpack().
 */
bool recfmt_index_parse(const uint8_t *frame, size_t len, struct recfmt_index_head *h);
/* Where recfmt_index_unpack() puts a packed frame's records (zeroed to start). */
struct recfmt_index_scratch {
	struct recfmt_buf buf;
	void *dctx;
};
/*
 * recfmt_index_unpack() - h->records of a packed index frame, decompressed
 * into s (valid until its next use); nothing to do for a plain one.
 * Return: false when its compressed records are not exactly one zstd frame
 * of the size records_bytes says (damage, or a lie: FORMAT.md §6.3).
 */
bool recfmt_index_unpack(struct recfmt_index_head *h, struct recfmt_index_scratch *s);
void recfmt_index_scratch_fini(struct recfmt_index_scratch *s);
/*
 * recfmt_index_patch() - the index frame frame[0 .. len) made to describe
 * its data frame compressed again: frame_bytes, hash and the FRAME record's
 * flags; its own hash again. Return: true, or false (nothing changed) when
 * it is not an index frame this writer made.
 */
bool recfmt_index_patch(uint8_t *frame, size_t len, uint64_t frame_bytes, uint64_t frame_hash,
			uint32_t frame_flags);
/*
 * recfmt_frame_measure() - whether p[0 .. len) is exactly one zstd data frame
 * (not a skippable one) whose header says its decompressed size, which goes
 * to *content_bytes: what an index frame's frame_bytes and content_bytes must
 * describe (FORMAT.md §6.1). Reads the frame's block headers, not its data.
 */
bool recfmt_frame_measure(const uint8_t *p, size_t len, uint64_t *content_bytes);
/* The length of the zstd frame (data or skippable) at p[0 .. avail), or 0 if there is none whole. */
size_t recfmt_frame_length(const uint8_t *p, size_t avail);

/*
 * A reader's check of index frames against their data frames (FORMAT.md
 * §6): each thread's nesting as an honest writer follows it (struct
 * recfmt_nest, zeroed to start), and whether the index frames already
 * gave it up (no later block of the thread may then be NESTED).
 */
struct recfmt_record;
struct recfmt_index_thread {
	struct recfmt_nest nest;
	bool gave_up;
};
/*
 * recfmt_block_sum() - the BLOCK_INDEX an honest writer gives the EVENTS
 * block rec, its thread's nesting n followed on (FORMAT.md §6.2: the
 * depths count from the thread's first event in the file; flags NESTED
 * while n is not broken). Return: RECFMT_OK, or why the block does not
 * decode (err).
 */
enum recfmt_status recfmt_block_sum(const struct recfmt_record *rec, struct recfmt_nest *n,
				    struct recfmt_block_index *b, struct recfmt_error *err);
/*
 * recfmt_index_compare() - whether the index frame h says exactly what the
 * data frame whose records are data[0 .. len) holds: its records byte for
 * byte but those it leaves out (§6.1, PARTIAL), and each EVENTS block's
 * sums (§6.2) as recfmt_block_sum() finds them, the threads' nestings
 * (thread_of(ctx, serial)) followed on. h NULL: a frame without an index
 * frame, whose blocks only move the nestings on. Return: true, or false
 * with what differs in why (a frame that does not decode is not this
 * function's to report: true).
 */
bool recfmt_index_compare(const struct recfmt_index_head *h, const uint8_t *data, size_t len,
			  struct recfmt_index_thread *(*thread_of)(void *ctx, uint32_t serial),
			  void *ctx, char *why, size_t why_bytes);
/* XXH64 (seed 0) of p[0 .. n): an index frame's frame_hash. */
uint64_t recfmt_xxh64(const void *p, size_t n);

/*
 * Frame compressor (compress.c): turns one frame's records into one zstd
 * frame with its content size and checksum (FORMAT.md §2). Used by librec's
 * writer and by tools that generate traces.
 */
struct recfmt_compressor;

/* level: zstd level (librec uses 1). Return: NULL if out of memory. */
struct recfmt_compressor *recfmt_compressor_create(int level);
void recfmt_compressor_destroy(struct recfmt_compressor *c);
/*
 * recfmt_compressor_set_fast() - fast: the frames that follow keep their
 * matches but leave the literals (an EVENTS block's deltas column, mostly)
 * raw, without Huffman coding: about half the compressor's time, a file
 * several times larger (docs/DESIGN.md, "The writer under pressure"). Still
 * ordinary zstd frames. false (the default): the normal compression.
 */
void recfmt_compressor_set_fast(struct recfmt_compressor *c, bool fast);
/*
 * recfmt_compress_frame() - compress `in` into `out` (replacing its content).
 * Return: 0, -ENOMEM, or -E2BIG if `in` exceeds RECFMT_MAX_FRAME_BYTES.
 */
int recfmt_compress_frame(struct recfmt_compressor *c, const struct recfmt_buf *in,
			  struct recfmt_buf *out);
/* The same for a frame whose records lie in several buffers, in order. */
int recfmt_compress_frame_parts(struct recfmt_compressor *c, const struct recfmt_buf *parts,
				size_t nr_parts, struct recfmt_buf *out);

/* ---------------------------------------------------------------------
 * Decoder (reader side, decode.c): records inside one decompressed frame.
 */
struct recfmt_record {
	uint8_t type; /* enum recfmt_type, or unknown (skip it) */
	uint32_t size;
	const uint8_t *payload;
	size_t offset; /* of the record header inside the frame */
};
/* A FRAME record's flags: 0 for an 8-byte FRAME. */
static inline uint32_t recfmt_frame_flags(const struct recfmt_record *rec)
{
	return rec->size >= 12 ? recfmt_load_u32le(rec->payload + 8) : 0;
}

/*
 * recfmt_record_at() - the record whose header is at data[pos], bounds
 * checked: its 8-byte header and its whole payload lie inside data[0 ..
 * len). The one bounds check of every walk over records: a frame's
 * (recfmt_cursor_next()), and an index frame's or its frame's parts
 * (index.c, the analyzer's frame index). It reads no byte before it is
 * checked, and does not judge the type (0 and unknown ones too).
 * Return: true with *rec filled; false, *rec untouched, when fewer than 8
 * bytes are left at pos or the record's size runs past len.
 */
static inline bool recfmt_record_at(const uint8_t *data, size_t len, size_t pos,
				    struct recfmt_record *rec)
{
	const size_t left = pos < len ? len - pos : 0;
	uint32_t size;

	/* Before any pointer arithmetic: an empty frame's data may be NULL. */
	if (left < RECFMT_RECORD_HEADER_BYTES)
		return false;
	size = recfmt_load_u32le(data + pos + 4);
	if (size > left - RECFMT_RECORD_HEADER_BYTES)
		return false;
	rec->type = data[pos];
	rec->size = size;
	rec->payload = data + pos + RECFMT_RECORD_HEADER_BYTES;
	rec->offset = pos;
	return true;
}

struct recfmt_cursor {
	const uint8_t *data;
	size_t len;
	size_t pos;
};

static inline void recfmt_cursor_init(struct recfmt_cursor *c, const uint8_t *data, size_t len)
{
	c->data = data;
	c->len = len;
	c->pos = 0;
}

/*
 * recfmt_cursor_next() - the next record of a frame.
 * Return: RECFMT_OK with *rec filled, RECFMT_END_OF_INPUT at the end of the
 * frame, RECFMT_TRUNCATED or RECFMT_CORRUPT (err filled) otherwise.
 */
enum recfmt_status recfmt_cursor_next(struct recfmt_cursor *c, struct recfmt_record *rec,
				      struct recfmt_error *err);

/* Each returns RECFMT_OK, RECFMT_CORRUPT or (header) RECFMT_UNSUPPORTED_VERSION. */
enum recfmt_status recfmt_decode_frame(const struct recfmt_record *rec, uint32_t *seq,
				       struct recfmt_error *err);
enum recfmt_status recfmt_decode_header(const struct recfmt_record *rec,
					struct recfmt_header *hdr, struct recfmt_error *err);
enum recfmt_status recfmt_decode_sync(const struct recfmt_record *rec, struct recfmt_sync *sync,
				      struct recfmt_error *err);
enum recfmt_status recfmt_decode_site(const struct recfmt_record *rec, struct recfmt_site *site,
				      struct recfmt_error *err);
enum recfmt_status recfmt_decode_thread(const struct recfmt_record *rec,
					struct recfmt_thread *thread, struct recfmt_error *err);
enum recfmt_status recfmt_decode_drops(const struct recfmt_record *rec,
				       struct recfmt_drops *drops, struct recfmt_error *err);
enum recfmt_status recfmt_decode_thread_end(const struct recfmt_record *rec,
					    struct recfmt_thread_end *te,
					    struct recfmt_error *err);
enum recfmt_status recfmt_decode_blocked(const struct recfmt_record *rec,
					 struct recfmt_blocked *b, struct recfmt_error *err);
enum recfmt_status recfmt_decode_snapshot(const struct recfmt_record *rec,
					  struct recfmt_snapshot *s, struct recfmt_error *err);
enum recfmt_status recfmt_decode_probe_cost(const struct recfmt_record *rec,
					    struct recfmt_probe_cost *pc, struct recfmt_error *err);
enum recfmt_status recfmt_decode_end(const struct recfmt_record *rec, struct recfmt_end *end,
				     struct recfmt_error *err);
enum recfmt_status recfmt_decode_crash(const struct recfmt_record *rec, struct recfmt_crash *c,
				       struct recfmt_error *err);
enum recfmt_status recfmt_decode_module(const struct recfmt_record *rec,
					struct recfmt_module *module, struct recfmt_error *err);
enum recfmt_status recfmt_decode_module_map(const struct recfmt_record *rec,
					    struct recfmt_module_map *mm, struct recfmt_error *err);
enum recfmt_status recfmt_decode_func(const struct recfmt_record *rec, struct recfmt_func *func,
				      struct recfmt_error *err);
/* FORMAT.md §3.13. Return: RECFMT_OK or RECFMT_CORRUPT. */
enum recfmt_status recfmt_decode_counter_set(const struct recfmt_record *rec,
					     struct recfmt_counter_set *cs,
					     struct recfmt_error *err);
/*
 * FORMAT.md §3.14: validates the fixed part of a COUNTERS block (a block
 * claiming more values than it has bytes is RECFMT_CORRUPT), so that the
 * caller may size nr_events * nr_columns values from it.
 */
enum recfmt_status recfmt_counters_open(const struct recfmt_record *rec,
					struct recfmt_counters *cb, struct recfmt_error *err);
/*
 * recfmt_counters_decode() - every value of an opened block, column-major:
 * values[c * nr_events + i] is counter c at event i.
 * Return: RECFMT_OK, or RECFMT_CORRUPT if a column is malformed, ends early
 * or the block leaves bytes over.
 */
enum recfmt_status recfmt_counters_decode(const struct recfmt_counters *cb, uint64_t *values,
					  const struct recfmt_record *rec,
					  struct recfmt_error *err);

/* FORMAT.md §3.17. Return: RECFMT_OK or RECFMT_CORRUPT. */
enum recfmt_status recfmt_decode_annot_name(const struct recfmt_record *rec,
					    struct recfmt_annot_name *name,
					    struct recfmt_error *err);
/* FORMAT.md §3.19. Return: RECFMT_OK or RECFMT_CORRUPT. */
enum recfmt_status recfmt_decode_annot_drops(const struct recfmt_record *rec,
					     struct recfmt_annot_drops *d,
					     struct recfmt_error *err);
/* FORMAT.md §3.22. Return: RECFMT_OK or RECFMT_CORRUPT. */
enum recfmt_status recfmt_decode_sampling(const struct recfmt_record *rec,
					  struct recfmt_sampling *s, struct recfmt_error *err);
/* FORMAT.md §3.24. Return: RECFMT_OK or RECFMT_CORRUPT. */
enum recfmt_status recfmt_decode_sample_drops(const struct recfmt_record *rec,
					      struct recfmt_sample_drops *d,
					      struct recfmt_error *err);
/* FORMAT.md §3.23. Return: RECFMT_OK or RECFMT_CORRUPT. */
enum recfmt_status recfmt_samples_open(const struct recfmt_record *rec,
				       struct recfmt_samples_iter *it, struct recfmt_error *err);
/*
 * recfmt_samples_next() - the next sample of an opened SAMPLES record, with
 * s->thread set and s->frames into the iterator.
 * Return: RECFMT_OK; RECFMT_END_OF_INPUT after the last one (the record
 * was used up exactly); RECFMT_CORRUPT (err filled) if a row is malformed
 * or the record leaves bytes over -- samples returned before stay valid,
 * the rest of the record is unusable.
 */
enum recfmt_status recfmt_samples_next(struct recfmt_samples_iter *it, struct recfmt_sample *s,
				       struct recfmt_error *err);
/*
 * recfmt_annots_open() - validates an ANNOTS record's fixed part (FORMAT.md
 * §3.18) and starts iterating it. The caller decides what the record's
 * positions refer to: it->nr_events events of the EVENTS block of
 * it->thread that is the record directly before it in the frame, or directly
 * before that block's COUNTERS record (if that block is not there or has
 * another nr_events, the record annotates nothing: FORMAT.md says to ignore
 * it), or, with nr_events 0, the point after every event of the thread read
 * so far.
 * Return: RECFMT_OK or RECFMT_CORRUPT.
 */
enum recfmt_status recfmt_annots_open(const struct recfmt_record *rec,
				      struct recfmt_annots_iter *it, struct recfmt_error *err);
/*
 * recfmt_annots_next() - the next annotation of an opened ANNOTS record,
 * with a->thread set; a->text points into the frame.
 * Return: RECFMT_OK with *a filled; RECFMT_END_OF_INPUT after the last one
 * (the record was used up exactly); RECFMT_CORRUPT (err filled) if a row is
 * malformed, out of order or the record leaves bytes over -- annotations
 * returned before stay valid, the rest of the record is unusable.
 */
enum recfmt_status recfmt_annots_next(struct recfmt_annots_iter *it, struct recfmt_annot *a,
				      struct recfmt_error *err);

/*
 * EVENTS block iterator. recfmt_events_open() validates the block header;
 * recfmt_events_next() then yields nr_events events. Each column is
 * bounds-checked: a block whose columns run out early is RECFMT_CORRUPT.
 */
struct recfmt_events_iter {
	uint32_t thread;
	uint32_t nr_events;
	uint32_t nr_left;
	uint64_t ticks; /* of the last event returned; base_ticks at first */
	const uint8_t *ids, *ids_end;
	const uint8_t *deltas, *deltas_end;
};

enum recfmt_status recfmt_events_open(const struct recfmt_record *rec,
				      struct recfmt_events_iter *it, struct recfmt_error *err);

/* LEB128 decode, bounds-checked. Return: bytes consumed, 0 if malformed/short. */
static inline unsigned recfmt_leb128_decode(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned i = 0;
	if (__builtin_expect(end - p >= 10, 1)) {
		do {
			uint8_t b = p[i];
			v |= (uint64_t)(b & 0x7f) << (7 * i);
			i++;
			if (!(b & 0x80)) {
				*out = v;
				return i;
			}
		} while (i < 10);
		return 0;
	}
	while (p + i < end && i < 10) {
		uint8_t b = p[i];
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		i++;
		if (!(b & 0x80)) {
			*out = v;
			return i;
		}
	}
	return 0;
}

/*
 * recfmt_leb128_decode3() - one LEB128 value at p where at least 8 bytes
 * are readable, for decoders that fuse decoding into their own loop:
 * values of up to 3 bytes are assembled from one 64-bit load without a
 * branch per byte. Return: bytes used, or 0 if the value is longer (use
 * recfmt_leb128_decode()).
 */
static inline unsigned recfmt_leb128_decode3(const uint8_t *p, uint64_t *out)
{
	uint64_t w = recfmt_load_u64le(p), stop, v;
	unsigned nb;

	stop = ~w & 0x808080u; /* a clear high bit ends the value */
	if (__builtin_expect(!stop, 0))
		return 0;
	nb = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
	v = (w & 0x7f) | ((w >> 1) & 0x3f80) | ((w >> 2) & 0x1fc000);
	*out = v & ((1ull << (7 * nb)) - 1);
	return nb;
}

/*
 * recfmt_events_step() - one event from an EVENTS block's columns at *ids
 * and *deltas (FORMAT.md §3.6), for a caller's loop that keeps the column
 * pointers and the running tick in registers (analyzer/engine/scopes.c): a
 * one-byte id and a delta of up to 3 bytes are the fast paths. Advances
 * both pointers and *ticks.
 * Return: 1 with *code set, or 0 if a column is malformed (nothing moved).
 */
/* Always inlined: a call per event costs a quarter of a pairing loop. */
static inline __attribute__((always_inline)) int
recfmt_events_step(const uint8_t **ids, const uint8_t *ids_end, const uint8_t **deltas,
		   const uint8_t *deltas_end, uint64_t *ticks, uint64_t *code)
{
	const uint8_t *ip = *ids, *dp = *deltas;
	uint64_t id, zz;
	unsigned kb;

	if (__builtin_expect(ip < ids_end && *ip < 0x80, 1)) {
		id = *ip++;
	} else {
		kb = recfmt_leb128_decode(ip, ids_end, &id);
		if (!kb || id > UINT32_MAX)
			return 0;
		ip += kb;
	}
	if (__builtin_expect(deltas_end - dp >= 8 && (kb = recfmt_leb128_decode3(dp, &zz)) != 0,
			     1)) {
		dp += kb;
	} else {
		kb = recfmt_leb128_decode(dp, deltas_end, &zz);
		if (!kb)
			return 0;
		dp += kb;
	}
	/* zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... */
	*ticks += (zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1);
	*ids = ip;
	*deltas = dp;
	*code = id;
	return 1;
}

/*
 * recfmt_events_fast_run() - how many of the next `left` events
 * recfmt_events_step_fast() may take with no bounds check: each reads at
 * most 2 bytes of ids and 8 bytes of deltas and uses at most 2 and 3.
 */
static inline uint32_t recfmt_events_fast_run(const uint8_t *ids, const uint8_t *ids_end,
					      const uint8_t *deltas, const uint8_t *deltas_end,
					      uint32_t left)
{
	size_t a = (size_t)(ids_end - ids) / 2, d = (size_t)(deltas_end - deltas);

	d = d >= 8 ? (d - 8) / 3 + 1 : 0;
	a = a < d ? a : d;
	return a < left ? (uint32_t)a : left;
}

/*
 * recfmt_events_step_fast() - recfmt_events_step() for a caller that keeps
 * within recfmt_events_fast_run() (no bounds checks): ids of 1 or 2 bytes
 * (2 bytes only if below max_code: a caller's table size; 1-byte ids are
 * below 128 whatever it is), deltas of up to 3 bytes. The delta's bytes are
 * masked with the bits up to its last byte's (x ^ (x - 1)) rather than by a
 * shift of its length. Return: 1, or 0 for anything else (nothing moved:
 * recfmt_events_step() then decides).
 */
static inline __attribute__((always_inline)) int
recfmt_events_step_fast(const uint8_t **ids, const uint8_t **deltas, uint64_t *ticks,
			uint64_t *code, uint32_t max_code)
{
	const uint8_t *ip = *ids, *dp = *deltas;
	uint64_t w = recfmt_load_u64le(dp), stop = ~w & 0x808080u, x, zz;
	uint32_t id = ip[0];

	if (__builtin_expect(!stop, 0))
		return 0;
	if (__builtin_expect(id < 0x80, 1)) {
		ip++;
	} else {
		id = (id & 0x7f) | (uint32_t)ip[1] << 7;
		if (ip[1] >= 0x80 || id >= max_code)
			return 0;
		ip += 2;
	}
	x = w & (stop ^ (stop - 1));
	zz = (x & 0x7f) | ((x >> 1) & 0x3f80) | ((x >> 2) & 0x1fc000);
	*deltas = dp + ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
	*ids = ip;
	/* zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... */
	*ticks += (zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1);
	*code = id;
	return 1;
}

#if defined(__x86_64__)
/*
 * recfmt_events_step_fast_pext() - recfmt_events_step_fast() with the
 * delta's 7-bit groups gathered by one PEXT (BMI2) instead of three masks
 * and shifts; the same interface and results. To be run only where
 * recfmt_cpu_fast_pext() says so: PEXT is an illegal instruction without
 * BMI2 and microcoded (tens to hundreds of cycles) on AMD before Zen 3.
 */
static inline __attribute__((always_inline)) int
recfmt_events_step_fast_pext(const uint8_t **ids, const uint8_t **deltas, uint64_t *ticks,
			     uint64_t *code, uint32_t max_code)
{
	const uint8_t *ip = *ids, *dp = *deltas;
	uint64_t w = recfmt_load_u64le(dp), stop = ~w & 0x808080u, zz;
	uint32_t id = ip[0];

	if (__builtin_expect(!stop, 0))
		return 0;
	if (__builtin_expect(id < 0x80, 1)) {
		ip++;
	} else {
		id = (id & 0x7f) | (uint32_t)ip[1] << 7;
		if (ip[1] >= 0x80 || id >= max_code)
			return 0;
		ip += 2;
	}
	/* As an asm statement, so that the portable build of a caller's loop,
	 * which never runs it, still compiles. */
	__asm__("pextq %2, %1, %0" : "=r"(zz) : "r"(w & (stop ^ (stop - 1))), "r"(0x7f7f7full));
	*deltas = dp + ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
	*ids = ip;
	/* zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... */
	*ticks += (zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1);
	*code = id;
	return 1;
}
#endif

/* Whether this CPU runs recfmt_events_step_fast_pext() (x86-64 with BMI1,
 * BMI2 and LZCNT, and a PEXT in hardware: Intel, AMD from Zen 3 on). Decided
 * once; false elsewhere. */
bool recfmt_cpu_fast_pext(void);
/* Whether this CPU and OS run AVX2 (the EVENTS encoder's and Parquet's
 * vector loops). Decided once; false off x86-64. */
bool recfmt_cpu_avx2(void);

/*
 * recfmt_events_next() - the next event of a block.
 * Return: 1 with *ticks and *code set; 0 when the block is exhausted; -1 if
 * a column is malformed (the rest of the block is unusable).
 */
static inline int recfmt_events_next(struct recfmt_events_iter *it, uint64_t *ticks,
				     uint32_t *code)
{
	uint64_t id, zz;
	unsigned n;

	if (it->nr_left == 0)
		return 0;
	if (__builtin_expect(it->ids < it->ids_end && *it->ids < 0x80, 1)) {
		id = *it->ids++;
	} else {
		n = recfmt_leb128_decode(it->ids, it->ids_end, &id);
		if (!n || id > UINT32_MAX)
			return -1;
		it->ids += n;
	}
	if (__builtin_expect(it->deltas < it->deltas_end && *it->deltas < 0x80, 1)) {
		zz = *it->deltas++;
	} else {
		n = recfmt_leb128_decode(it->deltas, it->deltas_end, &zz);
		if (!n)
			return -1;
		it->deltas += n;
	}
	/* zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... (FORMAT.md §3.6) */
	it->ticks += (zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1);
	it->nr_left--;
	*ticks = it->ticks;
	*code = (uint32_t)id;
	return 1;
}

/*
 * recfmt_events_decode_batch() - decode up to `max` next events of a block
 * into flat arrays: ticks[i] (absolute, FORMAT.md §3.6) and codes[i]
 * (site << 1 | kind). Equivalent to calling recfmt_events_next() that many
 * times, but decodes each column on its own, 16 bytes at a time, with a fast
 * path for runs of 1-byte values; it is what an analyzer's hot loop wants.
 * May be mixed with recfmt_events_next() on the same iterator.
 * Return: the number of events decoded (1..max); 0 when the block is
 * exhausted; -1 if the next value of a column is malformed (events before
 * it were returned by this or earlier calls, and the iterator stops there).
 */
int recfmt_events_decode_batch(struct recfmt_events_iter *it, uint64_t *ticks, uint32_t *codes,
			       uint32_t max);

/*
 * recfmt_events_count_enters() - the enter events (kind 0) among the values
 * left in the block's ids column, without decoding it: the values whose
 * first byte has its low bit clear (FORMAT.md §3.6). For a block as written
 * that is its enters; for a damaged one it is never fewer than the enters
 * that decoding it returns before the damage (both see the same value
 * boundaries). Lets a reader number enters across the blocks of a file
 * without pairing them (tracetool's run-wide activation ids).
 */
uint64_t recfmt_events_count_enters(const struct recfmt_events_iter *it);

/*
 * recfmt_events_check_end() - after the last event of a block: true if both
 * columns were used up exactly (FORMAT.md §3.6: a block whose columns leave
 * bytes over is damaged).
 */
static inline bool recfmt_events_check_end(const struct recfmt_events_iter *it)
{
	return it->nr_left == 0 && it->ids == it->ids_end && it->deltas == it->deltas_end;
}

/* ---------------------------------------------------------------------
 * Frame reader (frames.c): a trace file as a sequence of decompressed
 * frames, read with bounded memory (one compressed and one decompressed
 * frame at a time).
 */
struct recfmt_reader;

/*
 * recfmt_reader_open() - open a trace file for reading frame by frame.
 * Return: RECFMT_OK, RECFMT_IO (err->message names the errno) or RECFMT_NOMEM.
 */
enum recfmt_status recfmt_reader_open(struct recfmt_reader **out, const char *path,
				      struct recfmt_error *err);
void recfmt_reader_close(struct recfmt_reader *r);

/*
 * recfmt_reader_next() - decompress the next frame.
 * Return: RECFMT_OK with *data and *len valid until the next call;
 * RECFMT_END_OF_INPUT at a clean end of file; RECFMT_TRUNCATED if the file
 * ends inside a frame (nothing further can be read); RECFMT_CORRUPT if a frame
 * cannot be decompressed (the reader has skipped it when the frame's
 * boundaries could be found, so the caller may call again: see
 * recfmt_reader_can_continue()); RECFMT_IO on a read error.
 */
enum recfmt_status recfmt_reader_next(struct recfmt_reader *r, const uint8_t **data, size_t *len,
				      struct recfmt_error *err);
/*
 * recfmt_reader_next_into() - recfmt_reader_next(), decompressing into the
 * caller's buffer instead of the reader's: buf->data is grown (realloc) to
 * the frame's size and stays the caller's, so several frames can be held at
 * once (a reader thread filling a queue of buffers while another thread
 * parses). Initialise buf with recfmt_buf_init(), free it with
 * recfmt_buf_fini(); calls may alternate with recfmt_reader_next().
 * Return: as recfmt_reader_next(), with the frame in buf->data[0, buf->len);
 * buf->len is 0 on any other status (buf->data stays allocated).
 */
enum recfmt_status recfmt_reader_next_into(struct recfmt_reader *r, struct recfmt_buf *buf,
					   struct recfmt_error *err);
/*
 * Reading and decompressing apart, so that several threads can decompress
 * frames in parallel (frames are independent zstd frames, FORMAT.md §2):
 * recfmt_reader_next_compressed() finds and checks the next frame, as
 * recfmt_reader_next() does, and copies its compressed bytes into fb (one
 * caller at a time: the reader is sequential); recfmt_frame_decompress()
 * then decompresses fb into out with a context of the calling thread's own.
 * Together they return what recfmt_reader_next_into() would, with the same
 * messages, frame index and offset.
 */
struct recfmt_frame_bytes {
	struct recfmt_buf buf;	/* the compressed frame (grown as needed) */
	size_t content_bytes;	/* bound of its decompressed size */
	uint64_t index, offset; /* recfmt_reader_frame_index()/_offset() */
};
struct recfmt_dctx;
struct recfmt_dctx *recfmt_dctx_new(void); /* NULL: out of memory */
void recfmt_dctx_free(struct recfmt_dctx *d);
enum recfmt_status recfmt_reader_next_compressed(struct recfmt_reader *r,
						 struct recfmt_frame_bytes *fb,
						 struct recfmt_error *err);
/* Return: RECFMT_OK with the frame in out->data[0, out->len), RECFMT_CORRUPT
 * (bad checksum, bad frame) or RECFMT_NOMEM; out->len is 0 on error. */
enum recfmt_status recfmt_frame_decompress(struct recfmt_dctx *d,
					   const struct recfmt_frame_bytes *fb,
					   struct recfmt_buf *out, struct recfmt_error *err);
/* True if, after a RECFMT_CORRUPT frame, later frames can still be read. */
bool recfmt_reader_can_continue(const struct recfmt_reader *r);
/* Index and file offset of the frame last returned (or failed). */
uint64_t recfmt_reader_frame_index(const struct recfmt_reader *r);
uint64_t recfmt_reader_frame_offset(const struct recfmt_reader *r);
/* Bytes of the file read so far and the file's size. */
uint64_t recfmt_reader_file_bytes(const struct recfmt_reader *r);

#ifdef __cplusplus
}
#endif
#endif /* RECFMT_H */
