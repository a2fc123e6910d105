/* SPDX-License-Identifier: MIT */
/*
 * encode.c - writer side of FORMAT.md: builds the records of one frame in a
 * growable buffer. It knows nothing of rings, threads or zstd: librec's
 * writer decides what goes into a frame and compresses the result.
 */
#include "recfmt.h"

#include <errno.h>
#include <stdlib.h>
#if defined(__x86_64__)
#include <immintrin.h>

#include "leb_shuffle.h"
#endif

void recfmt_buf_init(struct recfmt_buf *buf)
{
	buf->data = NULL;
	buf->len = 0;
	buf->cap = 0;
	buf->fixed = false;
}

void recfmt_buf_fini(struct recfmt_buf *buf)
{
	free(buf->data);
	recfmt_buf_init(buf);
}

int recfmt_buf_reserve(struct recfmt_buf *buf, size_t more)
{
	size_t cap;
	uint8_t *data;

	if (buf->cap - buf->len >= more)
		return 0;
	if (buf->fixed)
		return -ENOMEM;
	cap = buf->cap ? buf->cap : 4096;
	while (cap - buf->len < more) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	data = realloc(buf->data, cap);
	if (!data)
		return -ENOMEM;
	buf->data = data;
	buf->cap = cap;
	return 0;
}

/* Appends a record header and reserves the payload; returns the payload. */
static uint8_t *record_begin(struct recfmt_buf *buf, enum recfmt_type type, uint32_t size)
{
	uint8_t *p;

	if (recfmt_buf_reserve(buf, RECFMT_RECORD_HEADER_BYTES + size))
		return NULL;
	p = buf->data + buf->len;
	p[0] = (uint8_t)type;
	p[1] = 0;
	recfmt_store_u16le(p + 2, 0);
	recfmt_store_u32le(p + 4, size);
	buf->len += RECFMT_RECORD_HEADER_BYTES + size;
	return p + RECFMT_RECORD_HEADER_BYTES;
}

int recfmt_encode_frame(struct recfmt_buf *buf, uint32_t seq)
{
	return recfmt_encode_frame_flags(buf, seq, 0);
}

int recfmt_encode_frame_flags(struct recfmt_buf *buf, uint32_t seq, uint32_t flags)
{
	/* 8 bytes without flags, as every writer before format 1.2's flags. */
	uint8_t *p = record_begin(buf, RECFMT_FRAME, flags ? 12 : 8);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, RECFMT_FRAME_MAGIC);
	recfmt_store_u32le(p + 4, seq);
	if (flags)
		recfmt_store_u32le(p + 8, flags);
	return 0;
}

int recfmt_encode_header(struct recfmt_buf *buf, const struct recfmt_header *hdr)
{
	uint8_t *p = record_begin(buf, RECFMT_FILE_HEADER, 64);

	if (!p)
		return -ENOMEM;
	memcpy(p, RECFMT_FILE_MAGIC, 8);
	recfmt_store_u16le(p + 8, RECFMT_VERSION_MAJOR);
	recfmt_store_u16le(p + 10, RECFMT_VERSION_MINOR);
	recfmt_store_u32le(p + 12, hdr->clock);
	recfmt_store_u32le(p + 16, hdr->pid);
	recfmt_store_u32le(p + 20, 0);
	recfmt_store_u64le(p + 24, hdr->ticks_per_second);
	recfmt_store_u64le(p + 32, hdr->start_ticks);
	recfmt_store_u64le(p + 40, hdr->start_mono_ns);
	recfmt_store_u64le(p + 48, hdr->start_real_ns);
	recfmt_store_u64le(p + 56, hdr->clock_step_ticks);
	return 0;
}

int recfmt_encode_sync(struct recfmt_buf *buf, const struct recfmt_sync *sync)
{
	uint8_t *p = record_begin(buf, RECFMT_SYNC, 24);

	if (!p)
		return -ENOMEM;
	recfmt_store_u64le(p, sync->ticks);
	recfmt_store_u64le(p + 8, sync->mono_ns);
	recfmt_store_u64le(p + 16, sync->real_ns);
	return 0;
}

static uint32_t clamp_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > RECFMT_MAX_NAME_BYTES ? RECFMT_MAX_NAME_BYTES : (uint32_t)n;
}

int recfmt_encode_site(struct recfmt_buf *buf, uint32_t id, uint32_t line, const char *name,
		       const char *file)
{
	uint32_t name_bytes = clamp_name(name), file_bytes = clamp_name(file);
	uint8_t *p = record_begin(buf, RECFMT_SITE, 16 + name_bytes + file_bytes);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, id);
	recfmt_store_u32le(p + 4, line);
	recfmt_store_u32le(p + 8, name_bytes);
	recfmt_store_u32le(p + 12, file_bytes);
	memcpy(p + 16, name ? name : "", name_bytes);
	memcpy(p + 16 + name_bytes, file ? file : "", file_bytes);
	return 0;
}

int recfmt_encode_thread(struct recfmt_buf *buf, uint32_t thread, uint32_t os_tid,
			 const char *name)
{
	uint32_t name_bytes = clamp_name(name);
	uint8_t *p = record_begin(buf, RECFMT_THREAD, 16 + name_bytes);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, thread);
	recfmt_store_u32le(p + 4, os_tid);
	/* Bit 0 of flags: the thread has a name (an empty name is a name). */
	recfmt_store_u32le(p + 8, name ? 1u : 0u);
	recfmt_store_u32le(p + 12, name_bytes);
	memcpy(p + 16, name ? name : "", name_bytes);
	return 0;
}

/* The layout DROPS and FUNC share: a u32 id, a reserved u32 (0), then n u64. */
static int encode_id_u64s(struct recfmt_buf *buf, enum recfmt_type type, uint32_t id,
			  const uint64_t *v, unsigned n)
{
	uint8_t *p = record_begin(buf, type, 8 + 8 * n);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, id);
	recfmt_store_u32le(p + 4, 0);
	for (unsigned i = 0; i < n; i++)
		recfmt_store_u64le(p + 8 + 8 * i, v[i]);
	return 0;
}

int recfmt_encode_drops(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped)
{
	return encode_id_u64s(buf, RECFMT_DROPS, thread, &nr_dropped, 1);
}

int recfmt_encode_drops_filtered(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped,
				 uint64_t nr_filtered)
{
	const uint64_t v[2] = { nr_dropped, nr_filtered };

	return encode_id_u64s(buf, RECFMT_DROPS, thread, v, 2);
}

int recfmt_encode_thread_end(struct recfmt_buf *buf, const struct recfmt_thread_end *te)
{
	uint8_t *p = record_begin(buf, RECFMT_THREAD_END, te->has_filtered ? 32 : 24);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, te->thread);
	recfmt_store_u32le(p + 4, 0);
	recfmt_store_u64le(p + 8, te->nr_events);
	recfmt_store_u64le(p + 16, te->nr_dropped);
	if (te->has_filtered)
		recfmt_store_u64le(p + 24, te->nr_filtered);
	return 0;
}

int recfmt_encode_blocked(struct recfmt_buf *buf, const struct recfmt_blocked *b)
{
	const uint64_t v[2] = { b->nr_blocked, b->blocked_ns };

	return encode_id_u64s(buf, RECFMT_BLOCKED, b->thread, v, 2);
}

int recfmt_encode_probe_cost(struct recfmt_buf *buf, const struct recfmt_probe_cost *pc)
{
	uint8_t *p = record_begin(buf, RECFMT_PROBE_COST, 32);

	if (!p)
		return -ENOMEM;
	recfmt_store_u64le(p, pc->scope_ps);
	recfmt_store_u64le(p + 8, pc->hook_ps);
	recfmt_store_u64le(p + 16, pc->scope_inner_ps);
	recfmt_store_u64le(p + 24, pc->hook_inner_ps);
	return 0;
}

/*
 * FORMAT.md §3.20. The store form writes header and payload into a caller's
 * buffer with no allocation and no libc call but memcpy, so that a signal
 * handler may write a snapshot's record (crash capture).
 */
static uint32_t snapshot_reason_bytes(const struct recfmt_snapshot *s)
{
	uint32_t n = 0;

	while (s->reason && n < RECFMT_MAX_NAME_BYTES && s->reason[n])
		n++;
	return n;
}

size_t recfmt_snapshot_bytes(const struct recfmt_snapshot *s)
{
	return RECFMT_RECORD_HEADER_BYTES + 48u + snapshot_reason_bytes(s);
}

size_t recfmt_store_snapshot(uint8_t *out, size_t out_bytes, const struct recfmt_snapshot *s)
{
	uint32_t n = snapshot_reason_bytes(s);
	size_t total = RECFMT_RECORD_HEADER_BYTES + 48u + n;
	uint8_t *p = out + RECFMT_RECORD_HEADER_BYTES;

	if (out_bytes < total)
		return 0;
	out[0] = (uint8_t)RECFMT_SNAPSHOT;
	out[1] = 0;
	recfmt_store_u16le(out + 2, 0);
	recfmt_store_u32le(out + 4, 48u + n);
	recfmt_store_u64le(p, s->trigger_ticks);
	recfmt_store_u64le(p + 8, s->window_start_ticks);
	recfmt_store_u64le(p + 16, s->window_end_ticks);
	recfmt_store_u32le(p + 24, s->number);
	recfmt_store_u32le(p + 28, s->kind);
	recfmt_store_u64le(p + 32, s->nr_suppressed);
	recfmt_store_u32le(p + 40, n);
	recfmt_store_u32le(p + 44, 0);
	if (n)
		memcpy(p + 48, s->reason, n);
	return total;
}

int recfmt_encode_snapshot(struct recfmt_buf *buf, const struct recfmt_snapshot *s)
{
	size_t total = recfmt_snapshot_bytes(s);

	if (recfmt_buf_reserve(buf, total))
		return -ENOMEM;
	recfmt_store_snapshot(buf->data + buf->len, total, s);
	buf->len += total;
	return 0;
}

int recfmt_encode_end(struct recfmt_buf *buf, const struct recfmt_end *end)
{
	uint8_t *p = record_begin(buf, RECFMT_END, end->has_filtered ? 32 : 24);

	if (!p)
		return -ENOMEM;
	recfmt_store_u64le(p, end->end_ticks);
	recfmt_store_u64le(p + 8, end->nr_events);
	recfmt_store_u64le(p + 16, end->nr_dropped);
	if (end->has_filtered)
		recfmt_store_u64le(p + 24, end->nr_filtered);
	return 0;
}

/* FORMAT.md §3.21. No allocation when buf has 48 bytes of room (crash handler). */
int recfmt_encode_crash(struct recfmt_buf *buf, const struct recfmt_crash *c)
{
	uint8_t *p = record_begin(buf, RECFMT_CRASH, 40);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, c->signo);
	recfmt_store_u32le(p + 4, (uint32_t)c->si_code);
	recfmt_store_u32le(p + 8, c->thread);
	recfmt_store_u32le(p + 12, c->flags);
	recfmt_store_u64le(p + 16, c->addr);
	recfmt_store_u64le(p + 24, c->ticks);
	recfmt_store_u64le(p + 32, 0);
	return 0;
}

/* FORMAT.md §3.10; since: write the 1.4 field `since_ticks` after the path. */
static int encode_module(struct recfmt_buf *buf, uint32_t id, uint32_t flags, uint64_t load_bias,
			 const struct recfmt_range *ranges, uint32_t nr_ranges,
			 const uint8_t *build_id, uint32_t build_id_bytes, const char *path,
			 bool since, uint64_t since_ticks)
{
	uint32_t path_bytes = clamp_name(path);
	uint8_t *p, *q;

	if (nr_ranges > RECFMT_MAX_MODULE_RANGES)
		nr_ranges = RECFMT_MAX_MODULE_RANGES;
	if (build_id_bytes > RECFMT_MAX_BUILD_ID_BYTES)
		build_id_bytes = RECFMT_MAX_BUILD_ID_BYTES;
	p = record_begin(buf, RECFMT_MODULE,
			 32 + 16 * nr_ranges + build_id_bytes + path_bytes + (since ? 8 : 0));
	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, id);
	recfmt_store_u32le(p + 4, flags);
	recfmt_store_u64le(p + 8, load_bias);
	recfmt_store_u32le(p + 16, nr_ranges);
	recfmt_store_u32le(p + 20, build_id_bytes);
	recfmt_store_u32le(p + 24, path_bytes);
	recfmt_store_u32le(p + 28, 0);
	q = p + 32;
	for (uint32_t i = 0; i < nr_ranges; i++, q += 16) {
		recfmt_store_u64le(q, ranges[i].start);
		recfmt_store_u64le(q + 8, ranges[i].end);
	}
	if (build_id_bytes)
		memcpy(q, build_id, build_id_bytes);
	memcpy(q + build_id_bytes, path ? path : "", path_bytes);
	if (since)
		recfmt_store_u64le(q + build_id_bytes + path_bytes, since_ticks);
	return 0;
}

int recfmt_encode_module(struct recfmt_buf *buf, uint32_t id, uint32_t flags, uint64_t load_bias,
			 const struct recfmt_range *ranges, uint32_t nr_ranges,
			 const uint8_t *build_id, uint32_t build_id_bytes, const char *path)
{
	return encode_module(buf, id, flags, load_bias, ranges, nr_ranges, build_id,
			     build_id_bytes, path, false, 0);
}

int recfmt_encode_module_since(struct recfmt_buf *buf, uint32_t id, uint32_t flags,
			       uint64_t load_bias, const struct recfmt_range *ranges,
			       uint32_t nr_ranges, const uint8_t *build_id, uint32_t build_id_bytes,
			       const char *path, uint64_t since_ticks)
{
	return encode_module(buf, id, flags, load_bias, ranges, nr_ranges, build_id,
			     build_id_bytes, path, true, since_ticks);
}

/* FORMAT.md §3.25. */
int recfmt_encode_module_map(struct recfmt_buf *buf, const struct recfmt_module_map *mm)
{
	uint8_t *p = record_begin(buf, RECFMT_MODULE_MAP, 16);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, mm->id);
	recfmt_store_u32le(p + 4, mm->what);
	recfmt_store_u64le(p + 8, mm->ticks);
	return 0;
}

/* FORMAT.md §3.11. */
int recfmt_encode_func(struct recfmt_buf *buf, uint32_t id, uint64_t addr)
{
	return encode_id_u64s(buf, RECFMT_FUNC, id, &addr, 1);
}

/* FORMAT.md §3.11, 1.5: the word after the id names the function's MODULE. */
int recfmt_encode_func_in(struct recfmt_buf *buf, uint32_t id, uint64_t addr, uint32_t module)
{
	uint8_t *p = record_begin(buf, RECFMT_FUNC, 16);

	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, id);
	recfmt_store_u32le(p + 4, module);
	recfmt_store_u64le(p + 8, addr);
	return 0;
}

/* ---------------------------------------------------------------------
 * EVENTS blocks (FORMAT.md §3.6). The payload is a 24-byte fixed part
 * (u32 thread, u32 nr_events, u64 base_ticks, u32 ids_bytes, u32 0), the ids
 * column, then the deltas column. While appending, the ids column grows in
 * buf right behind the fixed part, in its final place, and the deltas column
 * in scratch; finish() copies the deltas behind the ids (one copy of one
 * column: the ids are never moved). Told the number of events
 * (recfmt_events_expect()), the encoder builds the deltas column in buf
 * too, in its final place if every id takes one byte (fewer than 64 sites:
 * a tight loop's): that many bytes behind the ids' start. At the first
 * wider id one column goes on in scratch (events_fall_back()); the bytes
 * are the same either way, and the copy at finish, about 5 % of the
 * writer's CPU in a tight loop (a cold byte an event), is saved where the
 * guess holds.
 *
 * This loop is most of the writer thread's own work (docs/DESIGN.md, "The
 * writer's cost"): it reads 16 bytes of ring per event that the producer
 * wrote on another core, so it is bound by those loads, not by its
 * arithmetic. Hence a software prefetch a few KiB ahead (the ring is read
 * once, in order; a prefetch past its end faults nothing), and several
 * events at a time with one test for the common case of one-byte ids and
 * one-byte deltas (a tight loop's): eight ids and deltas of one or two
 * bytes with AVX2 where the CPU has it (events_avx2(), measured 1.04 ->
 * 0.60 ns/event on a tight loop's events in CPU time), else four one-byte
 * ones, one cache line of ring, each column then taking one 4-byte store.
 */
#define EVENTS_FIXED_BYTES 24u
/* Events: 8 KiB of ring. 512 took 5 % less of the writer's CPU than 128 on
 * the peer harness's two-worker loop (docs/BENCHMARKS.md, "The writer's CPU
 * per event"): lines another core wrote come slowly, so more in flight. */
#define EVENTS_PREFETCH_AHEAD 512u

static inline uint8_t *leb128_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t zigzag64(uint64_t t, uint64_t prev)
{
	int64_t delta = (int64_t)(t - prev);

	return ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63);
}

int recfmt_events_begin(struct recfmt_events_encoder *enc, struct recfmt_buf *buf,
			struct recfmt_buf *scratch, uint32_t thread, uint64_t base_ticks)
{
	uint8_t *p;

	if (recfmt_buf_reserve(buf, RECFMT_RECORD_HEADER_BYTES + EVENTS_FIXED_BYTES))
		return -ENOMEM;
	enc->buf = buf;
	enc->scratch = scratch;
	enc->record_start = buf->len;
	enc->prev_ticks = base_ticks;
	enc->nr_events = 0;
	enc->thread = thread;
	enc->nest = NULL;
	enc->sums = NULL;
	enc->gap = 0;
	enc->gap_len = 0;
	enc->split = false;
	enc->expect = 0;
	scratch->len = 0;
	p = buf->data + buf->len;
	memset(p, 0, RECFMT_RECORD_HEADER_BYTES + EVENTS_FIXED_BYTES);
	p[0] = RECFMT_EVENTS;
	recfmt_store_u32le(p + 8, thread);
	recfmt_store_u64le(p + 16, base_ticks);
	buf->len += RECFMT_RECORD_HEADER_BYTES + EVENTS_FIXED_BYTES;
	return 0;
}

#if defined(__x86_64__)
/*
 * The common case eight events at a time with AVX2 (runtime-checked):
 * every id and every zigzag delta under 2^14, i.e. one or two LEB128 bytes
 * (a tight loop's deltas straddle the one-byte edge of 64 ticks, so both
 * sizes must be cheap). The scalar loop below costs about 2.5 cycles an
 * event in registers alone; here each column of a group of 8 is built as
 * eight 16-bit LEB128 pairs and compacted by one byte shuffle chosen by
 * which values take two bytes (leb_shuffle.h). Stops at the first group of
 * 8 with a wider value (the caller goes on from there) and returns how many
 * events it encoded; *prev, *s, *d advance past them. Writes up to 16 bytes
 * at *s and *d per group: recfmt_events_append() reserved 5 and 10 bytes
 * an event.
 *
 * Layout: two events per 32-byte load, so after unpacking a vector holds
 * the ticks (or code words) of events {0, 2 | 1, 3} of a group of four
 * (64-bit elements, lanes split by |). The previous ticks come from the
 * same vector by one cross-lane permute, and the byte shuffles put each
 * event's 16 low bits at its index: no reordering pass.
 */
/* Eight values under 2^14, in 16-bit lanes, as LEB128 at p. Return: the end. */
__attribute__((target("avx2"))) static inline uint8_t *leb128_put8(uint8_t *p, __m128i v)
{
	__m128i two = _mm_cmpgt_epi16(v, _mm_set1_epi16(0x7f));
	__m128i pairs = _mm_or_si128(
		_mm_or_si128(_mm_and_si128(v, _mm_set1_epi16(0x7f)),
			     _mm_and_si128(two, _mm_set1_epi16(0x80))),
		_mm_slli_epi16(_mm_srli_epi16(v, 7), 8));
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(two, _mm_setzero_si128()));

	_mm_storeu_si128((__m128i *)(void *)p,
			 _mm_shuffle_epi8(pairs, _mm_loadu_si128((const __m128i *)(const void *)
								 leb_shuffle[m])));
	return p + 8 + __builtin_popcount(m);
}

/*
 * narrow (a constant: two copies, events_avx2() and events_avx2_narrow()):
 * the ids column must keep one byte an event (recfmt_events_expect()), so
 * a group with an id of two bytes stops the run too, and the ids take one
 * 8-byte store (never leb128_put8()'s 16, which could reach past their
 * room into the deltas column behind it).
 */
__attribute__((target("avx2"), always_inline)) static inline size_t
events_avx2_body(const struct recfmt_event *ev, size_t nr, uint64_t *prev_io, uint8_t **s_io,
		 uint8_t **d_io, uint64_t *back_io, const bool narrow)
{
	__m256i back = _mm256_setzero_si256(); /* the zigzags' low bits: a delta < 0 */
	const __m256i half = _mm256_set1_epi64x(1 << 13);
	const __m256i lowmask = _mm256_set1_epi64x(0xffffffff);
	/* The low 16 bits of each 64-bit element to the event's 16-bit lane:
	 * {0,2|1,3} and {4,6|5,7}. */
	const __m256i pick_lo = _mm256_setr_epi8(0, 1, -1, -1, 8, 9, -1, -1, -1, -1, -1, -1, -1, -1,
						 -1, -1, -1, -1, 0, 1, -1, -1, 8, 9, -1, -1, -1, -1,
						 -1, -1, -1, -1);
	const __m256i pick_hi = _mm256_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, 0, 1, -1, -1, 8, 9,
						 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1,
						 -1, -1, 8, 9);
	__m256i prev = _mm256_set1_epi64x((long long)*prev_io);
	uint8_t *s = *s_io, *d = *d_io;
	size_t i = 0;

	for (; i + 8 <= nr; i += 8) {
		const __m256i *p = (const __m256i *)(const void *)&ev[i];
		__m256i a0 = _mm256_loadu_si256(p), a1 = _mm256_loadu_si256(p + 1);
		__m256i a2 = _mm256_loadu_si256(p + 2), a3 = _mm256_loadu_si256(p + 3);
		__m256i t0 = _mm256_unpacklo_epi64(a0, a1); /* ticks 0, 2 | 1, 3 */
		__m256i t1 = _mm256_unpacklo_epi64(a2, a3); /* ticks 4, 6 | 5, 7 */
		__m256i c0 = _mm256_unpackhi_epi64(a0, a1); /* codes (low half) 0, 2 | 1, 3 */
		__m256i c1 = _mm256_unpackhi_epi64(a2, a3);
		/* Previous ticks: {p, 1 | 0, 2} and {3, 5 | 4, 6}. */
		__m256i p0 = _mm256_blend_epi32(_mm256_permute4x64_epi64(t0, 0x48), prev, 0x03);
		__m256i last0 = _mm256_permute4x64_epi64(t0, 0xff);
		__m256i p1 = _mm256_blend_epi32(_mm256_permute4x64_epi64(t1, 0x48), last0, 0x03);
		__m256i d0 = _mm256_sub_epi64(t0, p0), d1 = _mm256_sub_epi64(t1, p1);
		/* Two bytes at most: -2^13 <= delta < 2^13 and code < 2^14. */
		__m256i big = _mm256_or_si256(
			_mm256_or_si256(_mm256_srli_epi64(_mm256_add_epi64(d0, half), 14),
					_mm256_srli_epi64(_mm256_add_epi64(d1, half), 14)),
			_mm256_srli_epi64(_mm256_and_si256(_mm256_or_si256(c0, c1), lowmask),
					  narrow ? 7 : 14));
		__m256i z0, z1, zw, cw;
		__m128i z, c;

		__builtin_prefetch(&ev[i + EVENTS_PREFETCH_AHEAD]);
		__builtin_prefetch(&ev[i + EVENTS_PREFETCH_AHEAD + 4]);
		if (!_mm256_testz_si256(big, big))
			break;
		/* Zigzag; only the low 16 bits are kept, so the low half's sign will do. */
		z0 = _mm256_xor_si256(_mm256_slli_epi64(d0, 1), _mm256_srai_epi32(d0, 31));
		z1 = _mm256_xor_si256(_mm256_slli_epi64(d1, 1), _mm256_srai_epi32(d1, 31));
		back = _mm256_or_si256(back, _mm256_or_si256(z0, z1));
		zw = _mm256_or_si256(_mm256_shuffle_epi8(z0, pick_lo), _mm256_shuffle_epi8(z1, pick_hi));
		cw = _mm256_or_si256(_mm256_shuffle_epi8(c0, pick_lo), _mm256_shuffle_epi8(c1, pick_hi));
		z = _mm_or_si128(_mm256_castsi256_si128(zw), _mm256_extracti128_si256(zw, 1));
		c = _mm_or_si128(_mm256_castsi256_si128(cw), _mm256_extracti128_si256(cw, 1));
		if (narrow) {
			_mm_storel_epi64((__m128i *)(void *)s, _mm_packus_epi16(c, c));
			s += 8;
			if (_mm_testz_si128(z, _mm_set1_epi16(-0x80))) {
				_mm_storel_epi64((__m128i *)(void *)d, _mm_packus_epi16(z, z));
				d += 8;
			} else {
				d = leb128_put8(d, z);
			}
		} else if (_mm_testz_si128(_mm_or_si128(z, c), _mm_set1_epi16(-0x80))) {
			/* All one byte (a tight loop, mostly): one 8-byte store a column. */
			_mm_storel_epi64((__m128i *)(void *)s, _mm_packus_epi16(c, c));
			_mm_storel_epi64((__m128i *)(void *)d, _mm_packus_epi16(z, z));
			s += 8;
			d += 8;
		} else {
			s = leb128_put8(s, c);
			d = leb128_put8(d, z);
		}
		prev = _mm256_permute4x64_epi64(t1, 0xff);
	}
	if (i)
		*prev_io = ev[i - 1].ticks;
	*s_io = s;
	*d_io = d;
	*back_io |= !_mm256_testz_si256(back, _mm256_set1_epi64x(1));
	return i;
}

__attribute__((target("avx2"))) static size_t events_avx2(const struct recfmt_event *ev, size_t nr,
							   uint64_t *prev_io, uint8_t **s_io,
							   uint8_t **d_io, uint64_t *back_io)
{
	return events_avx2_body(ev, nr, prev_io, s_io, d_io, back_io, false);
}

__attribute__((target("avx2"))) static size_t
events_avx2_narrow(const struct recfmt_event *ev, size_t nr, uint64_t *prev_io, uint8_t **s_io,
		   uint8_t **d_io, uint64_t *back_io)
{
	return events_avx2_body(ev, nr, prev_io, s_io, d_io, back_io, true);
}

#endif

bool recfmt_cpu_avx2(void)
{
#if defined(__x86_64__)
	/* Asked once, by any thread (or the crash handler: cpuid only). */
	static int cached = -1;
	int ok = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (ok < 0) {
		__builtin_cpu_init();
		ok = __builtin_cpu_supports("avx2") ? 1 : 0;
		__atomic_store_n(&cached, ok, __ATOMIC_RELAXED);
	}
	return ok;
#else
	return false;
#endif
}

/*
 * The scalar encoder: events [0, nr) into the columns at *s_io, *d_io.
 * narrow (a constant, as events_avx2_body()'s): stop before the first id
 * of more than one byte. Return: the events encoded (nr unless narrow).
 */
static inline __attribute__((always_inline)) size_t
events_scalar_body(const struct recfmt_event *ev, size_t nr, uint64_t *prev_io, uint8_t **s_io,
		   uint8_t **d_io, uint64_t *back_io, const bool narrow)
{
	uint64_t prev = *prev_io, back = 0; /* the zigzags' low bits: a delta < 0 */
	uint8_t *s = *s_io, *d = *d_io;
	size_t i = 0;

	for (; i + 4 <= nr; i += 4) {
		const struct recfmt_event *e = &ev[i];
		uint64_t z0, z1, z2, z3;
		uint32_t c0 = e[0].code, c1 = e[1].code, c2 = e[2].code, c3 = e[3].code;

		if (narrow && (c0 | c1 | c2 | c3) >= 0x80)
			break; /* the loop below stops at the wide one */
		__builtin_prefetch(e + EVENTS_PREFETCH_AHEAD);
		z0 = zigzag64(e[0].ticks, prev);
		z1 = zigzag64(e[1].ticks, e[0].ticks);
		z2 = zigzag64(e[2].ticks, e[1].ticks);
		z3 = zigzag64(e[3].ticks, e[2].ticks);
		prev = e[3].ticks;
		back |= z0 | z1 | z2 | z3;
		if (((c0 | c1 | c2 | c3) | (z0 | z1 | z2 | z3)) < 0x80) {
			recfmt_store_u32le(s, c0 | c1 << 8 | c2 << 16 | c3 << 24);
			recfmt_store_u32le(d, (uint32_t)(z0 | z1 << 8 | z2 << 16 | z3 << 24));
			s += 4;
			d += 4;
			continue;
		}
		s = leb128_put(s, c0);
		s = leb128_put(s, c1);
		s = leb128_put(s, c2);
		s = leb128_put(s, c3);
		d = leb128_put(d, z0);
		d = leb128_put(d, z1);
		d = leb128_put(d, z2);
		d = leb128_put(d, z3);
	}
	for (; i < nr; i++) {
		const uint64_t z = zigzag64(ev[i].ticks, prev);

		if (narrow && ev[i].code >= 0x80)
			break;
		s = leb128_put(s, ev[i].code);
		d = leb128_put(d, z);
		back |= z;
		prev = ev[i].ticks;
	}
	*back_io |= back & 1u;
	*prev_io = prev;
	*s_io = s;
	*d_io = d;
	return i;
}

static void events_scalar(const struct recfmt_event *ev, size_t nr, uint64_t *prev_io,
			  uint8_t **s_io, uint8_t **d_io, uint64_t *back_io)
{
	events_scalar_body(ev, nr, prev_io, s_io, d_io, back_io, false);
}

static size_t events_scalar_narrow(const struct recfmt_event *ev, size_t nr, uint64_t *prev_io,
				   uint8_t **s_io, uint8_t **d_io, uint64_t *back_io)
{
	return events_scalar_body(ev, nr, prev_io, s_io, d_io, back_io, true);
}

/* ---------------------------------------------------------------------
 * The nesting of a thread's events, for the writer's index (FORMAT.md
 * §6.2): its depth as a reader that pairs each exit with the innermost open
 * enter sees it, checked against the sites (an exit that closes anything
 * but the innermost enter of its own site breaks the nesting: longjmp), an
 * exit with nothing open closing nothing.
 */
void recfmt_nest_reset(struct recfmt_nest *n)
{
	n->depth = 0;
	n->last_ticks = 0;
	n->broken = false;
}

void recfmt_nest_fini(struct recfmt_nest *n)
{
	free(n->stack);
	memset(n, 0, sizeof(*n));
}

/* Room for depth want (at most RECFMT_NEST_MAX_DEPTH): stack[0 .. cap + 1].
 * Return: false if out of memory or too deep. */
static bool nest_grow(struct recfmt_nest *n, uint32_t want)
{
	uint32_t cap = n->cap ? n->cap : 256;
	uint32_t *st;

	if (want > RECFMT_NEST_MAX_DEPTH)
		return false;
	if (want <= n->cap)
		return true;
	while (cap < want)
		cap *= 2;
	if (cap > RECFMT_NEST_MAX_DEPTH)
		cap = RECFMT_NEST_MAX_DEPTH;
	__atomic_store_n(&n->growing, 1, __ATOMIC_RELEASE);
	st = realloc(n->stack, ((size_t)cap + 2) * sizeof(*st));
	if (st) {
		if (!n->stack)
			st[0] = 0; /* read (and ignored) at depth 0 */
		n->stack = st;
		n->cap = cap;
	}
	__atomic_store_n(&n->growing, 0, __ATOMIC_RELEASE);
	return st != NULL;
}

void recfmt_events_track(struct recfmt_events_encoder *enc, struct recfmt_nest *nest,
			 struct recfmt_buf *sums)
{
	enc->nest = nest;
	enc->sums = sums;
	memset(&enc->sum, 0, sizeof(enc->sum));
	enc->sum.thread = enc->thread;
	enc->sum.first_ticks = enc->prev_ticks;
	enc->sum.depth_start = enc->sum.depth_low = nest->depth;
	if (!nest->stack && !nest_grow(nest, 1))
		nest->broken = true;
	if (enc->prev_ticks < nest->last_ticks)
		nest->broken = true; /* the clock went back since the thread's last block */
}

/*
 * One event of the nesting, branch-free but for the rare exit with nothing
 * open (it closes nothing: a snapshot's or a forked child's first exits):
 * an enter stores the code of its exit above the top, an exit compares the
 * top with its own code, so that the kinds' order, which a predictor
 * cannot guess in real programs, costs no mispredictions, and the depth is
 * a plain sum (one add on the chain from one event to the next). The stack
 * has room for the event (nest_scan()).
 */
struct nest_run {
	uint32_t *st;
	uint32_t d, low, mis;
	uint64_t closed_nothing;
};

static inline void nest_event(struct nest_run *r, uint32_t c)
{
	const uint32_t k = c & 1u, d = r->d, nd = d + 1u - 2u * k;

	if (__builtin_expect(nd == UINT32_MAX, 0)) {
		r->closed_nothing++;
		return;
	}
	r->mis |= (r->st[d] ^ c) & (0u - k);
	r->st[d + 1] = c | 1u;
	r->d = nd;
	r->low = nd < r->low ? nd : r->low;
}

#if defined(__x86_64__)
/*
 * Bit j set: events j and j + 1 of ev[0 .. n) (n <= 64; ev[n] read only if
 * n < nr) are an enter and the exit of its own site. Such a pair leaves the
 * stack, the depth and its lowest as they were (the depth goes up by one and
 * back), so nest_scan() skips it: in real programs most calls are leaves,
 * and their enter and exit are next to each other. Eight events at a time:
 * their codes from four loads, compared with the next event's.
 */
__attribute__((target("avx2"))) static uint64_t nest_pairs_avx2(const struct recfmt_event *ev,
								 size_t n, size_t nr)
{
	const __m256i pick = _mm256_setr_epi32(2, 6, 2, 6, 2, 6, 2, 6);
	const __m256i next = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
	const __m256i one = _mm256_set1_epi32(1);
	uint64_t pairs = 0;

	for (size_t g = 0; g + 8 <= n; g += 8) {
		const __m256i *p = (const __m256i *)(const void *)&ev[g];
		/* Each load holds two events: ticks (2 lanes), code, aux. */
		__m256i c0 = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(p), pick);
		__m256i c1 = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(p + 1), pick);
		__m256i c2 = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(p + 2), pick);
		__m256i c3 = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(p + 3), pick);
		__m256i codes = _mm256_blend_epi32(_mm256_blend_epi32(c0, c1, 0x0c),
						   _mm256_blend_epi32(c2, c3, 0xc0), 0xf0);
		/* Code 0 is no exit: no pair past the end. */
		uint32_t after = g + 8 < nr ? ev[g + 8].code : 0;
		__m256i nx = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(codes, next),
						_mm256_set1_epi32((int)after), 0x80);
		__m256i pm = _mm256_and_si256(
			_mm256_cmpeq_epi32(nx, _mm256_or_si256(codes, one)),
			_mm256_cmpeq_epi32(_mm256_and_si256(codes, one), _mm256_setzero_si256()));

		pairs |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(pm)) << g;
	}
	return pairs;
}

/*
 * nest_pairs_avx2() from the block's ids column where each event's code took
 * one byte (codes under 128: the ids column is the codes): 32 events a
 * compare from bytes the encoder has just written, where nest_pairs_avx2()
 * takes 8 from the ring's 16-byte events (a tenth of the writer's time on
 * a tight loop). ids[0 .. nr) only are read; bits for ids[0 .. n), n <= 64.
 */
__attribute__((target("avx2"))) static uint64_t nest_pairs_ids_avx2(const uint8_t *ids, size_t n,
								     size_t nr)
{
	const __m256i one = _mm256_set1_epi8(1);
	uint64_t pairs = 0;
	size_t j = 0;

	for (; j + 32 <= n && j + 33 <= nr; j += 32) {
		__m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(ids + j));
		__m256i nx = _mm256_loadu_si256((const __m256i *)(const void *)(ids + j + 1));
		__m256i pm = _mm256_and_si256(
			_mm256_cmpeq_epi8(_mm256_and_si256(c, one), _mm256_setzero_si256()),
			_mm256_cmpeq_epi8(nx, _mm256_or_si256(c, one)));

		pairs |= (uint64_t)(uint32_t)_mm256_movemask_epi8(pm) << j;
	}
	for (; j < n && j + 1 < nr; j++)
		if (!(ids[j] & 1u) && ids[j + 1] == (ids[j] | 1u))
			pairs |= 1ull << j;
	return pairs;
}
#endif

/*
 * The block's events through the thread's nesting: the stack made room for
 * a run of NEST_RUN events at a time (a nesting that could pass the limit
 * in it is given up), then each event, or, with AVX2, each event that is
 * not half of an enter-exit pair (nest_pairs_avx2(), or, given ids, the
 * block's one-byte codes of these events, nest_pairs_ids_avx2()). The
 * enters are counted from the depth at the end, the clock going back by the
 * encoder's deltas (recfmt_events_append()). Locals only in the loops: a
 * store to the stack could alias the nest's fields.
 */
#define NEST_RUN 512u /* room for a run's enters: a shallow thread's stack stays 2 KiB */
#define NEST_SLICE 1024u /* events: 16 KiB of ring */

static void nest_scan(struct recfmt_events_encoder *enc, const struct recfmt_event *ev,
		      const uint8_t *ids, size_t nr)
{
	struct recfmt_nest *n = enc->nest;
	struct nest_run r = { .d = n->depth, .low = enc->sum.depth_low };
	const uint32_t d0 = n->depth;
	size_t i = 0;
#if defined(__x86_64__)
	const bool avx2 = recfmt_cpu_avx2();
#else
	(void)ids;
#endif

	if (!n->broken) {
		while (i < nr && !r.mis) {
			const size_t end = nr - i < NEST_RUN ? nr : i + NEST_RUN;

			/* Room for as many enters as the run has events, no more: a
			 * thread of short blocks keeps the first 1 KiB (1 000 threads
			 * of bench_threads: 12 MiB less than with a whole run's). */
			if (!nest_grow(n, r.d + (uint32_t)(end - i))) {
				r.mis = 1; /* too deep, or out of memory */
				break;
			}
			r.st = n->stack;
#if defined(__x86_64__)
			if (avx2) {
				/* 64 events at a time; a pair's exit may be the next 64's first. */
				uint64_t carry = 0;

				while (i < end) {
					const size_t m = end - i < 64 ? end - i : 64;
					const uint64_t p = ids ? nest_pairs_ids_avx2(ids + i, m, nr - i)
							       : nest_pairs_avx2(ev + i, m, nr - i);
					uint64_t todo = ~(p | p << 1 | carry);

					if (m < 64)
						todo &= (1ull << m) - 1;
					carry = (p >> (m - 1)) & 1u; /* its exit is past m */
					while (todo) {
						nest_event(&r, ev[i + (size_t)__builtin_ctzll(todo)].code);
						todo &= todo - 1;
					}
					i += m;
				}
				/* A pair across runs: its exit is done with the next run. */
				if (carry && i < nr)
					i++;
				continue;
			}
#endif
			for (; i < end; i++)
				nest_event(&r, ev[i].code);
		}
		n->depth = r.d;
		n->broken = r.mis != 0;
		enc->sum.depth_low = r.low;
	}
	/* Enters - exits that closed one = the depth's change. */
	enc->sum.enters += (uint32_t)((i + (uint64_t)r.d - d0 - r.closed_nothing) / 2);
	/* A broken nesting's events (or the rest of them) only counted. */
	for (; i < nr; i++)
		enc->sum.enters += !RECFMT_CODE_IS_EXIT(ev[i].code);
}

/* After a group the vector path could not take, the scalar loop takes this many. */
#define EVENTS_SCALAR_RUN 64u

/*
 * Events [0, nr) into the columns at *s, *d: vector runs where the CPU has
 * AVX2, a group of 8 with a wider value starting a scalar run, longer each
 * time the vector path took nothing, so that a block of mostly wide values
 * (many sites) does not test every group twice. narrow (a constant, see
 * events_avx2_body()): stop before the first id of two bytes or more.
 * Return: the events encoded (nr unless narrow).
 */
static inline __attribute__((always_inline)) size_t
events_encode(const struct recfmt_event *ev, size_t nr, uint64_t *prev, uint8_t **s, uint8_t **d,
	      uint64_t *back, const bool narrow)
{
	size_t i = 0;

#if defined(__x86_64__)
	if (nr >= 8 && recfmt_cpu_avx2()) {
		size_t scalar_run = EVENTS_SCALAR_RUN;

		while (i + 8 <= nr) {
			size_t run, k = narrow ? events_avx2_narrow(ev + i, nr - i, prev, s, d, back)
					       : events_avx2(ev + i, nr - i, prev, s, d, back);

			/* Not one group: the scalar runs grow (to 4096), else start again at 64. */
			if (k)
				scalar_run = EVENTS_SCALAR_RUN;
			else if (scalar_run < 64 * EVENTS_SCALAR_RUN)
				scalar_run *= 2;
			i += k;
			run = nr - i < scalar_run ? nr - i : scalar_run;
			if (!narrow) {
				events_scalar(ev + i, run, prev, s, d, back);
				i += run;
				continue;
			}
			k = events_scalar_narrow(ev + i, run, prev, s, d, back);
			i += k;
			if (k < run)
				return i; /* an id of two bytes */
		}
	}
#endif
	if (narrow)
		return i + events_scalar_narrow(ev + i, nr - i, prev, s, d, back);
	events_scalar(ev + i, nr - i, prev, s, d, back);
	return nr;
}

void recfmt_events_expect(struct recfmt_events_encoder *enc, size_t nr)
{
	/* Before the first event only: the ids column is still empty. */
	if (enc->nr_events || !nr || nr > UINT32_MAX)
		return;
	enc->gap = enc->buf->len + nr;
	enc->expect = (uint32_t)nr;
	enc->gap_len = 0;
	enc->split = false;
}

/*
 * The first id of two bytes or more (or an event past the number
 * expected), with `rest` events still expected: the ids column can no
 * longer end at the gap, so one column leaves buf for scratch, where
 * finish() copies it back from. Moving the deltas built so far costs
 * gap_len bytes now; leaving them and building the rest of the ids in
 * scratch costs their bytes (at least rest) and a move of the deltas
 * column within buf at finish, as long as the copy this spares. So the
 * deltas move when they are few (many sites: a wide id comes early), the
 * ids when few are left (a wide id late in a tight loop's block). Past a
 * quarter: with one wide id at 5 %, 15 %, 25 %, 40 % and 70 % of a block
 * the encoder took +0.7, -1.5, +0.2, -2 and -3 % of the CPU it took without
 * recfmt_events_expect() (512 Ki events, medians of 3; moving the deltas
 * always: up to +3 %, the ids always: +2.4 % at 5 %).
 * scratch has room for either (recfmt_events_append() made it first).
 */
static void events_fall_back(struct recfmt_events_encoder *enc, size_t rest)
{
	if (4 * enc->gap_len > rest) {
		enc->split = true;
		return;
	}
	memcpy(enc->scratch->data, enc->buf->data + enc->gap, enc->gap_len);
	enc->scratch->len = enc->gap_len;
	enc->gap = 0;
	enc->gap_len = 0;
}

int recfmt_events_append(struct recfmt_events_encoder *enc, const struct recfmt_event *ev,
			 size_t nr)
{
	struct recfmt_buf *buf = enc->buf, *scratch = enc->scratch;
	uint64_t prev = enc->prev_ticks, back = 0;
	uint8_t *s, *d;
	size_t i = 0, ids_at = 0;
	bool ids = false; /* the events' codes at buf->data + ids_at, a byte each */

	if (nr > UINT32_MAX - enc->nr_events)
		return -ENOMEM;
	if (enc->nest && nr > NEST_SLICE) {
		/* Slices small enough that nest_scan() finds them in the cache
		 * the encoder just read them into: a ring piece is megabytes. */
		for (size_t at = 0; at < nr; at += NEST_SLICE) {
			int err = recfmt_events_append(enc, ev + at,
						       nr - at < NEST_SLICE ? nr - at : NEST_SLICE);

			if (err)
				return err;
		}
		return 0;
	}
	/* Worst case: 5 bytes of id and 10 bytes of delta per event. */
	if (enc->gap) {
		/* The deltas column at the gap; room in scratch first, for
		 * either column, so that falling back cannot fail halfway. */
		if (recfmt_buf_reserve(scratch, enc->split ? nr * 5 : enc->gap_len + nr * 10) ||
		    recfmt_buf_reserve(buf, enc->gap + enc->gap_len + nr * 10 - buf->len))
			return -ENOMEM;
	}
	if (enc->gap && !enc->split) {
		/* Ids of one byte up to the gap, deltas from it, in place. */
		size_t left = enc->expect - enc->nr_events, m = nr < left ? nr : left;

		ids_at = buf->len;
		s = buf->data + buf->len;
		d = buf->data + enc->gap + enc->gap_len;
		i = events_encode(ev, m, &prev, &s, &d, &back, true);
		buf->len = (size_t)(s - buf->data);
		enc->gap_len = (size_t)(d - (buf->data + enc->gap));
		if (i < nr)
			events_fall_back(enc, left - i > nr - i ? left - i : nr - i);
		else
			ids = true;
	}
	if (i < nr && enc->split) {
		/* The rest of the ids in scratch, the deltas still at the gap. */
		s = scratch->data + scratch->len;
		d = buf->data + enc->gap + enc->gap_len;
		events_encode(ev + i, nr - i, &prev, &s, &d, &back, false);
		scratch->len = (size_t)(s - scratch->data);
		enc->gap_len = (size_t)(d - (buf->data + enc->gap));
	} else if (i < nr) {
		if (recfmt_buf_reserve(buf, (nr - i) * 5) || recfmt_buf_reserve(scratch, (nr - i) * 10))
			return -ENOMEM;
		ids_at = buf->len;
		s = buf->data + buf->len;
		d = scratch->data + scratch->len;
		events_encode(ev + i, nr - i, &prev, &s, &d, &back, false);
		buf->len = (size_t)(s - buf->data);
		scratch->len = (size_t)(d - scratch->data);
		/* All of them, one byte each: the column is their codes. */
		ids = i == 0 && buf->len - ids_at == nr;
	}
	enc->prev_ticks = prev;
	/* FORMAT.md §6.2: the thread's nesting, and a clock that goes back ends its trust. */
	if (enc->nest && nr)
		nest_scan(enc, ev, ids ? buf->data + ids_at : NULL, nr);
	if (enc->nest && back)
		enc->nest->broken = true;
	enc->nr_events += (uint32_t)nr;
	return 0;
}

int recfmt_events_finish(struct recfmt_events_encoder *enc)
{
	struct recfmt_buf *buf = enc->buf, *scratch = enc->scratch;
	size_t start = enc->record_start;
	size_t ids_at = start + RECFMT_RECORD_HEADER_BYTES + EVENTS_FIXED_BYTES;
	size_t ids_bytes = buf->len - ids_at;
	size_t payload;
	uint8_t *p;

	if (enc->nr_events == 0) {
		buf->len = start;
		enc->gap = 0;
		return 0;
	}
	if (enc->gap) {
		/*
		 * The deltas at the gap: where they belong if the ids (some in
		 * scratch after a late wide one) end there, else moved, once.
		 */
		size_t more = enc->split ? scratch->len : 0, to = buf->len + more;

		payload = EVENTS_FIXED_BYTES + ids_bytes + more + enc->gap_len;
		if (payload > UINT32_MAX ||
		    (to > enc->gap && recfmt_buf_reserve(buf, more + enc->gap_len)))
			return -ENOMEM;
		if (to != enc->gap)
			memmove(buf->data + to, buf->data + enc->gap, enc->gap_len);
		if (more)
			memcpy(buf->data + buf->len, scratch->data, more);
		buf->len = to + enc->gap_len;
		ids_bytes += more;
		enc->gap = 0;
	} else {
		payload = EVENTS_FIXED_BYTES + ids_bytes + scratch->len;
		if (payload > UINT32_MAX || recfmt_buf_reserve(buf, scratch->len))
			return -ENOMEM;
		memcpy(buf->data + buf->len, scratch->data, scratch->len);
		buf->len += scratch->len;
	}
	p = buf->data + start;
	recfmt_store_u32le(p + 4, (uint32_t)payload);
	recfmt_store_u32le(p + 12, enc->nr_events);
	recfmt_store_u32le(p + 24, (uint32_t)ids_bytes);
	scratch->len = 0;
	if (enc->sums) {
		/* FORMAT.md §6.2: this block summed up for the index frame. */
		struct recfmt_index_entry e = { .at = start, .b = enc->sum };

		e.b.nr_events = enc->nr_events;
		e.b.last_ticks = enc->prev_ticks;
		enc->nest->last_ticks = enc->prev_ticks;
		e.b.depth_end = enc->nest->depth;
		e.b.flags = enc->nest->broken ? 0 : RECFMT_BLOCK_NESTED;
		if (recfmt_buf_reserve(enc->sums, sizeof(e)))
			return -ENOMEM;
		memcpy(enc->sums->data + enc->sums->len, &e, sizeof(e));
		enc->sums->len += sizeof(e);
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Counters (FORMAT.md §3.13-§3.14, format 1.1).
 */
int recfmt_encode_counter_set(struct recfmt_buf *buf, uint32_t thread, uint32_t nr,
			      const char *const *names, const uint32_t *flags)
{
	uint32_t size = 8, len[RECFMT_MAX_COUNTERS];
	uint8_t *p;

	if (nr > RECFMT_MAX_COUNTERS)
		return -EINVAL;
	for (uint32_t i = 0; i < nr; i++) {
		size_t n = strlen(names[i]);

		len[i] = n > RECFMT_MAX_COUNTER_NAME_BYTES ? RECFMT_MAX_COUNTER_NAME_BYTES
							   : (uint32_t)n;
		size += 8 + len[i];
	}
	p = record_begin(buf, RECFMT_COUNTER_SET, size);
	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, thread);
	recfmt_store_u32le(p + 4, nr);
	p += 8;
	for (uint32_t i = 0; i < nr; i++) {
		recfmt_store_u32le(p, flags[i]);
		recfmt_store_u32le(p + 4, len[i]);
		memcpy(p + 8, names[i], len[i]);
		p += 8 + len[i];
	}
	return 0;
}

#define COUNTERS_FIXED_BYTES 16u

int recfmt_encode_counters(struct recfmt_buf *buf, uint32_t thread, uint32_t nr_events,
			   uint32_t nr_columns, const uint64_t *values)
{
	size_t start = buf->len, worst;
	uint8_t *p, *d;

	if (nr_columns > RECFMT_MAX_COUNTERS)
		return -EINVAL;
	worst = RECFMT_RECORD_HEADER_BYTES + COUNTERS_FIXED_BYTES +
		(size_t)nr_events * nr_columns * 10;
	if (recfmt_buf_reserve(buf, worst))
		return -ENOMEM;
	p = record_begin(buf, RECFMT_COUNTERS, COUNTERS_FIXED_BYTES);
	recfmt_store_u32le(p, thread);
	recfmt_store_u32le(p + 4, nr_events);
	recfmt_store_u32le(p + 8, nr_columns);
	recfmt_store_u32le(p + 12, 0);
	d = p + COUNTERS_FIXED_BYTES;
	for (uint32_t c = 0; c < nr_columns; c++) {
		uint64_t prev = 0;

		for (uint32_t i = 0; i < nr_events; i++) {
			uint64_t v = values[(size_t)i * nr_columns + c];
			int64_t delta = (int64_t)(v - prev);

			prev = v;
			d = leb128_put(d, ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63));
		}
	}
	buf->len = (size_t)(d - buf->data);
	if (buf->len - start - RECFMT_RECORD_HEADER_BYTES > UINT32_MAX) {
		buf->len = start;
		return -ENOMEM;
	}
	recfmt_store_u32le(buf->data + start + 4,
			   (uint32_t)(buf->len - start - RECFMT_RECORD_HEADER_BYTES));
	return 0;
}

/* ---------------------------------------------------------------------
 * Annotations (FORMAT.md §3.17-§3.19).
 */
int recfmt_encode_annot_name(struct recfmt_buf *buf, uint32_t id, uint32_t kind, uint32_t line,
			     const char *name, const char *file)
{
	uint32_t name_bytes = clamp_name(name), file_bytes = clamp_name(file);
	uint8_t *p;

	if (id == 0 || id > RECFMT_MAX_ANNOT_NAME_ID || kind < RECFMT_NAME_TRACK ||
	    kind > RECFMT_NAME_FLOW)
		return -EINVAL;
	p = record_begin(buf, RECFMT_ANNOT_NAME, 24 + name_bytes + file_bytes);
	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, id);
	recfmt_store_u32le(p + 4, kind);
	recfmt_store_u32le(p + 8, line);
	recfmt_store_u32le(p + 12, name_bytes);
	recfmt_store_u32le(p + 16, file_bytes);
	recfmt_store_u32le(p + 20, 0);
	memcpy(p + 24, name ? name : "", name_bytes);
	memcpy(p + 24 + name_bytes, file ? file : "", file_bytes);
	return 0;
}

int recfmt_encode_annot_drops(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped)
{
	return encode_id_u64s(buf, RECFMT_ANNOT_DROPS, thread, &nr_dropped, 1);
}

#define ANNOTS_FIXED_BYTES 24u
/* kind, pos (5), ticks (10), name (5), value: at most 1 + 255 bytes. */
#define ANNOT_ROW_MAX_BYTES (1u + 5u + 10u + 5u + 1u + RECFMT_MAX_MESSAGE_BYTES)

int recfmt_annots_begin(struct recfmt_annots_encoder *enc, struct recfmt_buf *buf,
			uint32_t thread, uint64_t base_ticks, uint32_t nr_events)
{
	uint8_t *p;

	if (recfmt_buf_reserve(buf, RECFMT_RECORD_HEADER_BYTES + ANNOTS_FIXED_BYTES))
		return -ENOMEM;
	enc->buf = buf;
	enc->record_start = buf->len;
	enc->prev_ticks = base_ticks;
	enc->prev_pos = 0;
	enc->nr_events = nr_events;
	enc->nr_annots = 0;
	p = buf->data + buf->len;
	memset(p, 0, RECFMT_RECORD_HEADER_BYTES + ANNOTS_FIXED_BYTES);
	p[0] = RECFMT_ANNOTS;
	recfmt_store_u32le(p + 8, thread);
	recfmt_store_u64le(p + 16, base_ticks);
	recfmt_store_u32le(p + 24, nr_events);
	buf->len += RECFMT_RECORD_HEADER_BYTES + ANNOTS_FIXED_BYTES;
	return 0;
}

int recfmt_annots_append(struct recfmt_annots_encoder *enc, const struct recfmt_annot *a)
{
	struct recfmt_buf *buf = enc->buf;
	int64_t d = (int64_t)(a->ticks - enc->prev_ticks);
	uint8_t *p;

	if (a->kind < RECFMT_ANNOT_VALUE_I64 || a->kind > RECFMT_ANNOT_KIND_MAX ||
	    a->pos < enc->prev_pos || a->pos > enc->nr_events)
		return -EINVAL;
	if (a->kind == RECFMT_ANNOT_MESSAGE ? a->text_bytes > RECFMT_MAX_MESSAGE_BYTES
					    : a->name_id == 0 || a->name_id > RECFMT_MAX_ANNOT_NAME_ID)
		return -EINVAL;
	if (recfmt_buf_reserve(buf, ANNOT_ROW_MAX_BYTES))
		return -ENOMEM;
	p = buf->data + buf->len;
	*p++ = (uint8_t)a->kind;
	p = leb128_put(p, a->pos - enc->prev_pos);
	p = leb128_put(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
	switch (a->kind) {
	case RECFMT_ANNOT_MESSAGE:
		*p++ = (uint8_t)a->text_bytes;
		if (a->text_bytes)
			memcpy(p, a->text, a->text_bytes);
		p += a->text_bytes;
		break;
	case RECFMT_ANNOT_VALUE_I64:
	case RECFMT_ANNOT_ARG:
		p = leb128_put(p, a->name_id);
		p = leb128_put(p, ((uint64_t)a->i64 << 1) ^ (uint64_t)(a->i64 >> 63));
		break;
	case RECFMT_ANNOT_VALUE_F64: {
		uint64_t bits;

		memcpy(&bits, &a->f64, 8);
		p = leb128_put(p, a->name_id);
		recfmt_store_u64le(p, bits);
		p += 8;
		break;
	}
	case RECFMT_ANNOT_INSTANT:
		p = leb128_put(p, a->name_id);
		break;
	default: /* FLOW_BEGIN, FLOW_STEP, FLOW_END */
		p = leb128_put(p, a->name_id);
		p = leb128_put(p, a->id);
		break;
	}
	buf->len = (size_t)(p - buf->data);
	enc->prev_ticks = a->ticks;
	enc->prev_pos = a->pos;
	enc->nr_annots++;
	return 0;
}

int recfmt_annots_finish(struct recfmt_annots_encoder *enc)
{
	struct recfmt_buf *buf = enc->buf;
	uint8_t *p = buf->data + enc->record_start;

	if (!enc->nr_annots) {
		buf->len = enc->record_start;
		return 0;
	}
	recfmt_store_u32le(p + 4, (uint32_t)(buf->len - enc->record_start - RECFMT_RECORD_HEADER_BYTES));
	recfmt_store_u32le(p + RECFMT_RECORD_HEADER_BYTES + 4, enc->nr_annots);
	return 0;
}

/* ---------------------------------------------------------------------
 * Stack samples (FORMAT.md §3.22-§3.24).
 */
int recfmt_encode_sampling(struct recfmt_buf *buf, const struct recfmt_sampling *s)
{
	uint8_t *p;

	if (s->hz == 0 || s->max_frames == 0 || s->max_frames > RECFMT_MAX_SAMPLE_FRAMES)
		return -EINVAL;
	p = record_begin(buf, RECFMT_SAMPLING, 24);
	if (!p)
		return -ENOMEM;
	recfmt_store_u32le(p, s->hz);
	recfmt_store_u32le(p + 4, s->clock);
	recfmt_store_u32le(p + 8, s->mechanism);
	recfmt_store_u32le(p + 12, s->max_frames);
	recfmt_store_u64le(p + 16, s->period_ns);
	return 0;
}

int recfmt_encode_sample_drops(struct recfmt_buf *buf, uint32_t thread, uint64_t nr_dropped)
{
	return encode_id_u64s(buf, RECFMT_SAMPLE_DROPS, thread, &nr_dropped, 1);
}

#define SAMPLES_FIXED_BYTES 24u

int recfmt_samples_begin(struct recfmt_samples_encoder *enc, struct recfmt_buf *buf,
			 uint32_t thread, uint64_t base_ticks)
{
	uint8_t *p;

	if (recfmt_buf_reserve(buf, RECFMT_RECORD_HEADER_BYTES + SAMPLES_FIXED_BYTES))
		return -ENOMEM;
	enc->buf = buf;
	enc->record_start = buf->len;
	enc->prev_ticks = base_ticks;
	enc->prev_addr = 0;
	enc->nr_samples = 0;
	enc->nr_prev = 0;
	p = buf->data + buf->len;
	memset(p, 0, RECFMT_RECORD_HEADER_BYTES + SAMPLES_FIXED_BYTES);
	p[0] = RECFMT_SAMPLES;
	recfmt_store_u32le(p + 8, thread);
	recfmt_store_u64le(p + 16, base_ticks);
	buf->len += RECFMT_RECORD_HEADER_BYTES + SAMPLES_FIXED_BYTES;
	return 0;
}

int recfmt_samples_append(struct recfmt_samples_encoder *enc, const struct recfmt_sample *s)
{
	struct recfmt_buf *buf = enc->buf;
	uint32_t n = s->nr_frames, same = 0;
	uint64_t prev = enc->prev_addr;
	uint8_t *p;

	if (n == 0 || n > RECFMT_MAX_SAMPLE_FRAMES || (s->flags & ~RECFMT_SAMPLE_TRUNCATED))
		return -EINVAL;
	/* The outermost frames this stack shares with the last one. */
	while (same < n && same < enc->nr_prev &&
	       s->frames[n - 1 - same] == enc->prev[enc->nr_prev - 1 - same])
		same++;
	if (recfmt_buf_reserve(buf, 10u + 1u + 5u + 5u + 10u * (size_t)(n - same)))
		return -ENOMEM;
	p = buf->data + buf->len;
	p = leb128_put(p, zigzag64(s->ticks, enc->prev_ticks));
	*p++ = (uint8_t)s->flags;
	p = leb128_put(p, n);
	p = leb128_put(p, same);
	for (uint32_t i = 0; i < n - same; i++) {
		p = leb128_put(p, zigzag64(s->frames[i], prev));
		prev = s->frames[i];
	}
	buf->len = (size_t)(p - buf->data);
	memcpy(enc->prev, s->frames, (size_t)n * sizeof(uint64_t));
	enc->nr_prev = n;
	enc->prev_addr = prev;
	enc->prev_ticks = s->ticks;
	enc->nr_samples++;
	return 0;
}

int recfmt_samples_finish(struct recfmt_samples_encoder *enc)
{
	struct recfmt_buf *buf = enc->buf;
	uint8_t *p = buf->data + enc->record_start;

	if (!enc->nr_samples) {
		buf->len = enc->record_start;
		return 0;
	}
	recfmt_store_u32le(p + 4, (uint32_t)(buf->len - enc->record_start - RECFMT_RECORD_HEADER_BYTES));
	recfmt_store_u32le(p + RECFMT_RECORD_HEADER_BYTES + 4, enc->nr_samples);
	return 0;
}
