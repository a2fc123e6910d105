/* SPDX-License-Identifier: MIT */
/*
 * perfetto.h - writes a Perfetto trace (the protobuf `Trace` of
 * `TracePacket`s that ui.perfetto.dev and trace_processor load) as a
 * stream, message by message, with protobuf.c. Independent of the trace
 * format and of the pairing engine: cmd_perfetto.c feeds it.
 *
 * Layout (field numbers from perfetto's protos/perfetto/trace/):
 * - one track per process (TrackDescriptor with a ProcessDescriptor) and one
 *   per thread (TrackDescriptor with a ThreadDescriptor: pid, tid, name);
 * - one packet sequence per thread (trusted_packet_sequence_id): its first
 *   packet clears the incremental state (SEQ_INCREMENTAL_STATE_CLEARED) and
 *   carries a ClockSnapshot defining clock 64 as an incremental clock in ns
 *   whose base is the thread's first time on BOOTTIME (6); the next sets
 *   TracePacketDefaults (timestamp_clock_id 64, the thread's track), so that
 *   every event packet holds only the delta from the previous one, a name
 *   iid and the slice type (SEQ_NEEDS_INCREMENTAL_STATE);
 * - event names interned per sequence (InternedData.event_names), sent with
 *   the first event that uses them, their iids 1, 2, ... in that order;
 * - activations as TYPE_SLICE_BEGIN / TYPE_SLICE_END, points as
 *   TYPE_INSTANT, values on counter tracks as TYPE_COUNTER.
 * Times are nanoseconds on the caller's clock (cmd_perfetto.c passes Unix
 * time, so files of several processes share one timeline). A sequence's
 * times must not decrease; an earlier time is written as the last one.
 * Memory: the names interned on each sequence (4 bytes per name id up to
 * the largest it uses) and one buffer of at most ~1 MiB. Not thread-safe:
 * several walkers each have a writer of their own, into a lane of the
 * output (tt_pf_init_out(), out/lanes.h).
 */
#ifndef TT_PERFETTO_H
#define TT_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/emit.h"
#include "out/protobuf.h"

struct tt_pf {
	FILE *f;
	struct tt_out *out; /* instead of f (tt_pf_init_out()) */
	struct tt_pb pb;
	uint32_t next_seq;
	uint64_t bytes, packets;
	int err; /* 0, or the errno of the first failed write */
};

/* One thread's track and packet sequence. */
struct tt_pf_seq {
	uint32_t id;	   /* trusted_packet_sequence_id */
	uint64_t uuid;	   /* its track */
	uint64_t last_ns;  /* time of its last timed packet */
	uint32_t *iid;	   /* by the caller's name id: its iid on this sequence, 0: none yet */
	uint32_t nr_iid_slots, nr_iids;
	/* Stack samples: bit per frame, function name, mapping and callstack
	 * sent (tt_pf_sample()). */
	uint8_t *interned_fr, *interned_fn, *interned_map, *interned_cs;
	uint32_t nr_fr_bits, nr_fn_bits, nr_map_bits, nr_cs_bits;
	uint64_t slices, instants, counters;
};

/* Whether name name_id was interned on s: then tt_pf_begin() and
 * tt_pf_instant() need no name (NULL). */
static inline bool tt_pf_seq_has_name(const struct tt_pf_seq *s, uint32_t name_id)
{
	return name_id < s->nr_iid_slots && s->iid[name_id];
}

void tt_pf_init(struct tt_pf *w, FILE *f);
/* A writer into out (a lane's: lanes.h) instead of a file. */
void tt_pf_init_out(struct tt_pf *w, struct tt_out *out);
/* What the writer buffers, into its file or out. */
void tt_pf_drain(struct tt_pf *w);
/* A process track (uuid); name: the program's, or NULL (viewers show the pid). */
void tt_pf_process(struct tt_pf *w, uint64_t uuid, int32_t pid, const char *name);
/*
 * A thread track (uuid) under process pid, and its sequence, whose clock
 * starts at base_ns (no later than its first event). Sequences are numbered
 * from w->next_seq, which a caller may set.
 */
void tt_pf_thread(struct tt_pf *w, struct tt_pf_seq *s, uint64_t uuid, int32_t pid,
		  int32_t tid, const char *name, uint64_t base_ns);
/* name_id: the caller's id of the name (iid = name_id + 1); name: its text,
 * name_len its length, or SIZE_MAX for strlen(name) when it is needed (the
 * first time the name is met on the sequence). */
void tt_pf_begin(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint32_t name_id,
		 const char *name, size_t name_len);
void tt_pf_end(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns);
void tt_pf_instant(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint32_t name_id,
		   const char *name, size_t name_len);
/* A counter track (uuid) named name under the parent track, described on
 * sequence s (before its first value there). */
void tt_pf_counter_track(struct tt_pf *w, struct tt_pf_seq *s, uint64_t uuid,
			 uint64_t parent_uuid, const char *name);
/* A value of counter track uuid, on sequence s (for its clock). */
void tt_pf_counter(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint64_t uuid, int64_t v);
void tt_pf_counter_double(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint64_t uuid,
			  double v);
/* A slice's END with its arguments as debug annotations (KEY: int). */
void tt_pf_end_args(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, const char *const *keys,
		    const int64_t *vals, uint32_t n);
/*
 * An instant with a literal name (annotations: not interned), with a
 * debug annotation "message" when message is not NULL, and flow > 0 a
 * flow_ids entry, flow < 0 a terminating_flow_ids entry of flow_id.
 */
void tt_pf_mark(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, const char *name,
		size_t name_len, const char *message, size_t message_len, int flow,
		uint64_t flow_id);
/*
 * Stack samples as Perfetto's callstack samples (PerfSample, with
 * InternedData function_names, frames, callstacks, mappings, mapping_paths
 * and build_ids; perf_sample.proto, profile_common.proto), which the UI
 * shows on the thread's track and as a flame graph. tt_pf_sample_seq()
 * starts a sequence for them (no track: a sample names its pid and tid)
 * whose clock starts at base_ns; tt_pf_sample() writes one at ns: callstack
 * stack_id of n frames, root first (location ids), each described by
 * frame_of(ctx, loc) when it is new on the sequence: a frame is one code
 * address, named (its function's name, interned once per func) and, when
 * map is not 0, at rel_pc in mapping map, described by map_of(ctx, map)
 * when it is new on the sequence.
 */
struct tt_pf_frame {
	uint32_t func;	 /* its function's id (one name each) */
	const char *name;
	uint32_t map;	 /* its module's id, 1...; 0: in none */
	uint64_t rel_pc; /* the address's offset in its module's file */
};
struct tt_pf_map {
	uint64_t start, end, start_offset; /* the range mapped, from file offset start_offset */
	const char *path;
	const uint8_t *build_id;
	uint32_t build_id_bytes;
};
struct tt_pf_frames {
	void (*frame_of)(void *ctx, uint32_t loc, struct tt_pf_frame *out);
	void (*map_of)(void *ctx, uint32_t map, struct tt_pf_map *out);
	void *ctx;
};
void tt_pf_sample_seq(struct tt_pf *w, struct tt_pf_seq *s, uint64_t base_ns);
void tt_pf_sample(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, int32_t pid, int32_t tid,
		  uint32_t stack_id, const uint32_t *locs, uint32_t n,
		  const struct tt_pf_frames *fr);
void tt_pf_seq_fini(struct tt_pf_seq *s);
/* Writes what is buffered; 0 or a negative errno value (w->err). */
int tt_pf_flush(struct tt_pf *w);
void tt_pf_fini(struct tt_pf *w);

#endif /* TT_PERFETTO_H */
