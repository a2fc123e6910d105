/* SPDX-License-Identifier: MIT */
/*
 * perfetto.c - the Perfetto writer of perfetto.h. Field numbers are those
 * of perfetto's published protos (trace_packet.proto, clock_snapshot.proto,
 * trace_packet_defaults.proto, track_event/{track_event,track_descriptor,
 * process_descriptor,thread_descriptor,counter_descriptor}.proto,
 * interned_data/interned_data.proto, profiling/profile_common.proto).
 */
#include "out/perfetto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11,
	TP_INTERNED_DATA = 12, TP_SEQUENCE_FLAGS = 13, TP_DEFAULTS = 59,
	TP_TRACK_DESCRIPTOR = 60,
	SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
	/* ClockSnapshot, ClockSnapshot.Clock */
	CS_CLOCKS = 1, CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_INCREMENTAL = 3,
	CLOCK_BOOTTIME = 6, CLOCK_SEQ = 64, /* 64..127: sequence-scoped clocks */
	/* TracePacketDefaults, TrackEventDefaults */
	DEF_CLOCK_ID = 58, DEF_TRACK_EVENT = 11, TED_TRACK_UUID = 11,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	PD_PID = 1, PD_NAME = 6, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	/* TrackEvent */
	TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11, TE_COUNTER_VALUE = 30,
	TE_DEBUG_ANNOTATIONS = 4, TE_NAME = 23, TE_DOUBLE_COUNTER_VALUE = 44, TE_FLOW_IDS = 47,
	TE_TERMINATING_FLOW_IDS = 48,
	/* DebugAnnotation */
	DA_INT_VALUE = 4, DA_STRING_VALUE = 6, DA_NAME = 10,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
	/* InternedData, EventName */
	ID_EVENT_NAMES = 2, EN_IID = 1, EN_NAME = 2,
	/* Stack samples: TracePacket.perf_sample, PerfSample, InternedData's
	 * function_names (InternedString), frames (Frame), callstacks (Callstack) */
	TP_PERF_SAMPLE = 66, PS_PID = 2, PS_TID = 3, PS_CALLSTACK_IID = 4, PS_CPU_MODE = 5,
	CPU_MODE_USER = 2, ID_FUNCTION_NAMES = 5, ID_FRAMES = 6, ID_CALLSTACKS = 7,
	IS_IID = 1, IS_STR = 2, FR_IID = 1, FR_FUNCTION_NAME_ID = 2, CSK_IID = 1, CSK_FRAME_IDS = 2,
	/* Frame's module: InternedData build_ids, mapping_paths (InternedString),
	 * mappings (Mapping); Frame mapping_id, rel_pc */
	ID_BUILD_IDS = 16, ID_MAPPING_PATHS = 17, ID_MAPPINGS = 19, FR_MAPPING_ID = 3, FR_REL_PC = 4,
	MAP_IID = 1, MAP_BUILD_ID = 2, MAP_START_OFFSET = 3, MAP_START = 4, MAP_END = 5,
	MAP_PATH_STRING_IDS = 7,
};

#define FLUSH_BYTES (1u << 20)

void tt_pf_init(struct tt_pf *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->next_seq = 1;
}

void tt_pf_init_out(struct tt_pf *w, struct tt_out *out)
{
	tt_pf_init(w, NULL);
	w->out = out;
}

/* Writes the buffer out (unless a write failed before) and empties it. */
static void write_buffer(struct tt_pf *w)
{
	if (w->pb.n && w->out) {
		tt_out_write(w->out, (const char *)w->pb.p, w->pb.n);
		w->bytes += w->pb.n;
	} else if (w->pb.n && !w->err) {
		if (fwrite(w->pb.p, 1, w->pb.n, w->f) != w->pb.n)
			w->err = errno ? -errno : -EIO;
		else
			w->bytes += w->pb.n;
	}
	tt_pb_clear(&w->pb);
}

/* After a packet: the buffer goes out once it holds FLUSH_BYTES. */
static inline void packet_done(struct tt_pf *w)
{
	if (w->pb.n >= FLUSH_BYTES && !w->err)
		write_buffer(w);
}

void tt_pf_drain(struct tt_pf *w)
{
	write_buffer(w);
}

int tt_pf_flush(struct tt_pf *w)
{
	write_buffer(w);
	if (!w->err && w->f && fflush(w->f) != 0)
		w->err = errno ? -errno : -EIO;
	return w->err;
}

static void packet_begin(struct tt_pf *w)
{
	tt_pb_begin(&w->pb, TRACE_PACKET);
	w->packets++;
}

static void packet_end(struct tt_pf *w)
{
	tt_pb_end(&w->pb);
	packet_done(w);
}

void tt_pf_process(struct tt_pf *w, uint64_t uuid, int32_t pid, const char *name)
{
	uint32_t seq = w->next_seq++;
	packet_begin(w);
	tt_pb_varint(&w->pb, TP_SEQ_ID, seq);
	tt_pb_begin(&w->pb, TP_TRACK_DESCRIPTOR);
	tt_pb_varint(&w->pb, TD_UUID, uuid);
	tt_pb_begin(&w->pb, TD_PROCESS);
	tt_pb_int64(&w->pb, PD_PID, pid);
	if (name)
		tt_pb_string(&w->pb, PD_NAME, name);
	tt_pb_end(&w->pb);
	tt_pb_end(&w->pb);
	packet_end(w);
}

/*
 * Starts sequence s: a packet that clears its state and defines its
 * incremental clock from base_ns, then its defaults packet (that clock, and
 * for a thread's sequence its track's uuid), left open for the caller to
 * add to and end with packet_end().
 */
static void seq_start(struct tt_pf *w, struct tt_pf_seq *s, bool on_track, uint64_t uuid,
		      uint64_t base_ns)
{
	memset(s, 0, sizeof(*s));
	s->id = w->next_seq++;
	s->uuid = uuid;
	s->last_ns = base_ns;

	packet_begin(w);
	tt_pb_varint(&w->pb, TP_SEQ_ID, s->id);
	tt_pb_varint(&w->pb, TP_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	tt_pb_begin(&w->pb, TP_CLOCK_SNAPSHOT);
	tt_pb_begin(&w->pb, CS_CLOCKS);
	tt_pb_varint(&w->pb, CLK_ID, CLOCK_SEQ);
	tt_pb_varint(&w->pb, CLK_TIMESTAMP, base_ns);
	tt_pb_varint(&w->pb, CLK_INCREMENTAL, 1);
	tt_pb_end(&w->pb);
	tt_pb_begin(&w->pb, CS_CLOCKS);
	tt_pb_varint(&w->pb, CLK_ID, CLOCK_BOOTTIME);
	tt_pb_varint(&w->pb, CLK_TIMESTAMP, base_ns);
	tt_pb_end(&w->pb);
	tt_pb_end(&w->pb);
	packet_end(w);

	packet_begin(w);
	tt_pb_varint(&w->pb, TP_SEQ_ID, s->id);
	tt_pb_varint(&w->pb, TP_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	tt_pb_begin(&w->pb, TP_DEFAULTS);
	tt_pb_varint(&w->pb, DEF_CLOCK_ID, CLOCK_SEQ);
	if (on_track) {
		tt_pb_begin(&w->pb, DEF_TRACK_EVENT);
		tt_pb_varint(&w->pb, TED_TRACK_UUID, uuid);
		tt_pb_end(&w->pb);
	}
	tt_pb_end(&w->pb);
}

void tt_pf_thread(struct tt_pf *w, struct tt_pf_seq *s, uint64_t uuid, int32_t pid,
		  int32_t tid, const char *name, uint64_t base_ns)
{
	seq_start(w, s, true, uuid, base_ns);
	/* The defaults packet also describes the thread's track. */
	tt_pb_begin(&w->pb, TP_TRACK_DESCRIPTOR);
	tt_pb_varint(&w->pb, TD_UUID, uuid);
	tt_pb_begin(&w->pb, TD_THREAD);
	tt_pb_int64(&w->pb, THD_PID, pid);
	tt_pb_int64(&w->pb, THD_TID, tid);
	if (name)
		tt_pb_string(&w->pb, THD_NAME, name);
	tt_pb_end(&w->pb);
	tt_pb_end(&w->pb);
	packet_end(w);
}

/* Opens an event packet at ns on s: the delta and the flags. */
static void event_packet(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns)
{
	uint64_t delta = ns > s->last_ns ? ns - s->last_ns : 0;

	s->last_ns += delta;
	packet_begin(w);
	tt_pb_varint(&w->pb, TP_TIMESTAMP, delta);
	tt_pb_varint(&w->pb, TP_SEQ_ID, s->id);
	tt_pb_varint(&w->pb, TP_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
}

/* Sets bit id of *bits (grown as needed); returns whether it was set. */
static bool test_and_set(uint8_t **bits, uint32_t *nr_bits, uint32_t id)
{
	if (id >= *nr_bits) {
		uint32_t n = *nr_bits ? *nr_bits : 256;
		while (n <= id)
			n *= 2;
		*bits = tt_xrealloc(*bits, n / 8);
		memset(*bits + *nr_bits / 8, 0, (n - *nr_bits) / 8);
		*nr_bits = n;
	}
	if ((*bits)[id / 8] & (1u << (id % 8)))
		return true;
	(*bits)[id / 8] |= (uint8_t)(1u << (id % 8));
	return false;
}

/*
 * Interns name (the caller's id) on s with the packet: the sequence's next
 * iid, so that the iids do not depend on the caller's numbering (each
 * walker's replica has its own: cmd_perfetto.c). Return: its iid.
 */
static uint32_t intern(struct tt_pf *w, struct tt_pf_seq *s, uint32_t id, const char *name,
		       size_t len)
{
	if (id >= s->nr_iid_slots) {
		uint32_t n = s->nr_iid_slots ? s->nr_iid_slots : 64;

		while (n <= id)
			n *= 2;
		s->iid = tt_xrealloc(s->iid, (size_t)n * sizeof(*s->iid));
		memset(s->iid + s->nr_iid_slots, 0, (size_t)(n - s->nr_iid_slots) * sizeof(*s->iid));
		s->nr_iid_slots = n;
	}
	s->iid[id] = ++s->nr_iids;
	tt_pb_begin(&w->pb, TP_INTERNED_DATA);
	tt_pb_begin(&w->pb, ID_EVENT_NAMES);
	tt_pb_varint(&w->pb, EN_IID, s->iid[id]);
	tt_pb_bytes(&w->pb, EN_NAME, name, len);
	tt_pb_end(&w->pb);
	tt_pb_end(&w->pb);
	return s->iid[id];
}

void tt_pf_sample_seq(struct tt_pf *w, struct tt_pf_seq *s, uint64_t base_ns)
{
	seq_start(w, s, false, 0, base_ns);
	packet_end(w);
}

/* Interns mapping map (1...) with the packet, its path and build-id. */
static void intern_map(struct tt_pf *w, uint32_t map, const struct tt_pf_frames *fr)
{
	struct tt_pf_map m = { 0 };

	fr->map_of(fr->ctx, map, &m);
	if (m.build_id_bytes) {
		tt_pb_begin(&w->pb, ID_BUILD_IDS);
		tt_pb_varint(&w->pb, IS_IID, map);
		tt_pb_bytes(&w->pb, IS_STR, m.build_id, m.build_id_bytes);
		tt_pb_end(&w->pb);
	}
	tt_pb_begin(&w->pb, ID_MAPPING_PATHS);
	tt_pb_varint(&w->pb, IS_IID, map);
	tt_pb_string(&w->pb, IS_STR, m.path ? m.path : "");
	tt_pb_end(&w->pb);
	tt_pb_begin(&w->pb, ID_MAPPINGS);
	tt_pb_varint(&w->pb, MAP_IID, map);
	if (m.build_id_bytes)
		tt_pb_varint(&w->pb, MAP_BUILD_ID, map);
	tt_pb_varint(&w->pb, MAP_START_OFFSET, m.start_offset);
	tt_pb_varint(&w->pb, MAP_START, m.start);
	tt_pb_varint(&w->pb, MAP_END, m.end);
	tt_pb_varint(&w->pb, MAP_PATH_STRING_IDS, map);
	tt_pb_end(&w->pb);
}

void tt_pf_sample(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, int32_t pid, int32_t tid,
		  uint32_t stack_id, const uint32_t *locs, uint32_t n,
		  const struct tt_pf_frames *fr)
{
	bool new_stack = !test_and_set(&s->interned_cs, &s->nr_cs_bits, stack_id);

	event_packet(w, s, ns);
	if (new_stack) {
		/* The stack's new frames (with their new names and mappings), then the stack. */
		tt_pb_begin(&w->pb, TP_INTERNED_DATA);
		for (uint32_t i = 0; i < n; i++) {
			struct tt_pf_frame f = { 0 };

			if (test_and_set(&s->interned_fr, &s->nr_fr_bits, locs[i]))
				continue;
			fr->frame_of(fr->ctx, locs[i], &f);
			if (!test_and_set(&s->interned_fn, &s->nr_fn_bits, f.func)) {
				tt_pb_begin(&w->pb, ID_FUNCTION_NAMES);
				tt_pb_varint(&w->pb, IS_IID, (uint64_t)f.func + 1);
				tt_pb_string(&w->pb, IS_STR, f.name);
				tt_pb_end(&w->pb);
			}
			if (f.map && !test_and_set(&s->interned_map, &s->nr_map_bits, f.map))
				intern_map(w, f.map, fr);
			tt_pb_begin(&w->pb, ID_FRAMES);
			tt_pb_varint(&w->pb, FR_IID, (uint64_t)locs[i] + 1);
			tt_pb_varint(&w->pb, FR_FUNCTION_NAME_ID, (uint64_t)f.func + 1);
			if (f.map) {
				tt_pb_varint(&w->pb, FR_MAPPING_ID, f.map);
				tt_pb_varint(&w->pb, FR_REL_PC, f.rel_pc);
			}
			tt_pb_end(&w->pb);
		}
		tt_pb_begin(&w->pb, ID_CALLSTACKS);
		tt_pb_varint(&w->pb, CSK_IID, (uint64_t)stack_id + 1);
		for (uint32_t i = 0; i < n; i++) /* unpacked, as the proto2 field is declared */
			tt_pb_varint(&w->pb, CSK_FRAME_IDS, (uint64_t)locs[i] + 1);
		tt_pb_end(&w->pb);
		tt_pb_end(&w->pb);
	}
	tt_pb_begin(&w->pb, TP_PERF_SAMPLE);
	tt_pb_varint(&w->pb, PS_PID, (uint32_t)pid);
	tt_pb_varint(&w->pb, PS_TID, (uint32_t)tid);
	tt_pb_varint(&w->pb, PS_CALLSTACK_IID, (uint64_t)stack_id + 1);
	tt_pb_varint(&w->pb, PS_CPU_MODE, CPU_MODE_USER);
	tt_pb_end(&w->pb);
	packet_end(w);
	s->instants++;
}

/* Stores v as a varint at p; returns the bytes written. */
static inline unsigned put_varint(uint8_t *p, uint64_t v)
{
	unsigned n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/*
 * The hot path: an event packet whose name (if any) is already interned on
 * its sequence, written with direct stores rather than nested tt_pb calls
 * (the same bytes: keys are (field << 3 | wire type), lengths fit one byte).
 *   packet { timestamp: delta, trusted_packet_sequence_id, sequence_flags: 2,
 *            track_event { type, [name_iid] } }
 */
static void fast_event(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, int type,
		       uint64_t iid)
{
	uint64_t delta = ns > s->last_ns ? ns - s->last_ns : 0;
	unsigned nt = 2, nb;
	uint8_t *p, *b;

	s->last_ns += delta;
	if (iid)
		nt += 1 + tt_pb_varint_len(iid);
	/* Written in place (no copies): the packet's one-byte length last. */
	p = w->pb.cap - w->pb.n >= 64 ? w->pb.p + w->pb.n : tt_pb_reserve(&w->pb, 64);
	b = p + 2;
	*b++ = TP_TIMESTAMP << 3;
	b += put_varint(b, delta);
	*b++ = TP_SEQ_ID << 3;
	b += put_varint(b, s->id);
	*b++ = TP_SEQUENCE_FLAGS << 3;
	*b++ = SEQ_NEEDS_INCREMENTAL_STATE;
	*b++ = TP_TRACK_EVENT << 3 | 2;
	*b++ = (uint8_t)nt;
	*b++ = TE_TYPE << 3;
	*b++ = (uint8_t)type;
	if (iid) {
		*b++ = TE_NAME_IID << 3;
		b += put_varint(b, iid);
	}
	nb = (unsigned)(b - (p + 2)); /* < 128: a one-byte length */
	p[0] = TRACE_PACKET << 3 | 2;
	p[1] = (uint8_t)nb;
	w->pb.n += nb + 2;
	w->packets++;
	packet_done(w);
}

static void named_event(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, int type,
			uint32_t name_id, const char *name, size_t len)
{
	uint32_t iid;

	if (tt_pf_seq_has_name(s, name_id)) {
		fast_event(w, s, ns, type, s->iid[name_id]);
		return;
	}
	event_packet(w, s, ns);
	iid = intern(w, s, name_id, name, len == SIZE_MAX ? strlen(name) : len);
	tt_pb_begin(&w->pb, TP_TRACK_EVENT);
	tt_pb_varint(&w->pb, TE_TYPE, (uint64_t)type);
	tt_pb_varint(&w->pb, TE_NAME_IID, iid);
	tt_pb_end(&w->pb);
	packet_end(w);
}

void tt_pf_begin(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint32_t name_id,
		 const char *name, size_t name_len)
{
	named_event(w, s, ns, TYPE_SLICE_BEGIN, name_id, name, name_len);
	s->slices++;
}

void tt_pf_end(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns)
{
	fast_event(w, s, ns, TYPE_SLICE_END, 0);
}

void tt_pf_instant(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint32_t name_id,
		   const char *name, size_t name_len)
{
	named_event(w, s, ns, TYPE_INSTANT, name_id, name, name_len);
	s->instants++;
}

void tt_pf_counter_track(struct tt_pf *w, struct tt_pf_seq *s, uint64_t uuid,
			 uint64_t parent_uuid, const char *name)
{
	packet_begin(w);
	tt_pb_varint(&w->pb, TP_SEQ_ID, s->id);
	tt_pb_begin(&w->pb, TP_TRACK_DESCRIPTOR);
	tt_pb_varint(&w->pb, TD_UUID, uuid);
	tt_pb_string(&w->pb, TD_NAME, name);
	tt_pb_varint(&w->pb, TD_PARENT, parent_uuid);
	tt_pb_begin(&w->pb, TD_COUNTER);
	tt_pb_end(&w->pb);
	tt_pb_end(&w->pb);
	packet_end(w);
}

void tt_pf_counter(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint64_t uuid, int64_t v)
{
	event_packet(w, s, ns);
	tt_pb_begin(&w->pb, TP_TRACK_EVENT);
	tt_pb_varint(&w->pb, TE_TYPE, TYPE_COUNTER);
	tt_pb_varint(&w->pb, TE_TRACK_UUID, uuid);
	tt_pb_int64(&w->pb, TE_COUNTER_VALUE, v);
	tt_pb_end(&w->pb);
	packet_end(w);
	s->counters++;
}

void tt_pf_counter_double(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, uint64_t uuid,
			  double v)
{
	event_packet(w, s, ns);
	tt_pb_begin(&w->pb, TP_TRACK_EVENT);
	tt_pb_varint(&w->pb, TE_TYPE, TYPE_COUNTER);
	tt_pb_varint(&w->pb, TE_TRACK_UUID, uuid);
	tt_pb_double(&w->pb, TE_DOUBLE_COUNTER_VALUE, v);
	tt_pb_end(&w->pb);
	packet_end(w);
	s->counters++;
}

void tt_pf_end_args(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, const char *const *keys,
		    const int64_t *vals, uint32_t n)
{
	if (!n) {
		tt_pf_end(w, s, ns);
		return;
	}
	event_packet(w, s, ns);
	tt_pb_begin(&w->pb, TP_TRACK_EVENT);
	tt_pb_varint(&w->pb, TE_TYPE, TYPE_SLICE_END);
	for (uint32_t i = 0; i < n; i++) {
		tt_pb_begin(&w->pb, TE_DEBUG_ANNOTATIONS);
		tt_pb_string(&w->pb, DA_NAME, keys[i]);
		tt_pb_int64(&w->pb, DA_INT_VALUE, vals[i]);
		tt_pb_end(&w->pb);
	}
	tt_pb_end(&w->pb);
	packet_end(w);
}

void tt_pf_mark(struct tt_pf *w, struct tt_pf_seq *s, uint64_t ns, const char *name,
		size_t name_len, const char *message, size_t message_len, int flow,
		uint64_t flow_id)
{
	event_packet(w, s, ns);
	tt_pb_begin(&w->pb, TP_TRACK_EVENT);
	tt_pb_varint(&w->pb, TE_TYPE, TYPE_INSTANT);
	tt_pb_bytes(&w->pb, TE_NAME, name, name_len);
	if (message) {
		tt_pb_begin(&w->pb, TE_DEBUG_ANNOTATIONS);
		tt_pb_string(&w->pb, DA_NAME, "message");
		tt_pb_bytes(&w->pb, DA_STRING_VALUE, message, message_len);
		tt_pb_end(&w->pb);
	}
	if (flow)
		tt_pb_fixed64(&w->pb, flow > 0 ? TE_FLOW_IDS : TE_TERMINATING_FLOW_IDS, flow_id);
	tt_pb_end(&w->pb);
	packet_end(w);
	s->instants++;
}

void tt_pf_seq_fini(struct tt_pf_seq *s)
{
	free(s->iid);
	free(s->interned_fr);
	free(s->interned_fn);
	free(s->interned_map);
	free(s->interned_cs);
	s->iid = NULL;
	s->interned_fr = s->interned_fn = s->interned_map = s->interned_cs = NULL;
	s->nr_iid_slots = s->nr_iids = s->nr_fr_bits = s->nr_fn_bits = s->nr_map_bits = s->nr_cs_bits = 0;
}

void tt_pf_fini(struct tt_pf *w)
{
	tt_pb_fini(&w->pb);
}
