/* SPDX-License-Identifier: MIT */
/*
 * decode.c - reader side of FORMAT.md: bounds-checked parsing of the records
 * inside one decompressed frame. It never trusts a length before checking it
 * against the bytes that remain. Frame iteration and zstd live in frames.c.
 */
#include "recfmt.h"

#include <stdarg.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#endif

static enum recfmt_status fail(struct recfmt_error *err, enum recfmt_status status, size_t offset,
			       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum recfmt_status fail(struct recfmt_error *err, enum recfmt_status status, size_t offset,
			       const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->status = status;
		err->record_offset = offset;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return status;
}

#define RETURN_IF(cond, err, rec, ...)                                                      \
	do {                                                                                \
		if (cond)                                                                   \
			return fail(err, RECFMT_CORRUPT, (rec)->offset, __VA_ARGS__);      \
	} while (0)

enum recfmt_status recfmt_cursor_next(struct recfmt_cursor *c, struct recfmt_record *rec,
				      struct recfmt_error *err)
{
	const size_t left = c->len - c->pos;
	struct recfmt_record r;

	if (left == 0)
		return RECFMT_END_OF_INPUT;
	if (!recfmt_record_at(c->data, c->len, c->pos, &r)) {
		if (left < RECFMT_RECORD_HEADER_BYTES)
			return fail(err, RECFMT_CORRUPT, c->pos,
				    "record header cut short (%zu of 8 bytes left in frame)", left);
		return fail(err, RECFMT_CORRUPT, c->pos,
			    "record of type %u claims %u bytes, only %zu left in frame",
			    c->data[c->pos], recfmt_load_u32le(c->data + c->pos + 4),
			    left - RECFMT_RECORD_HEADER_BYTES);
	}
	if (r.type == 0)
		return fail(err, RECFMT_CORRUPT, c->pos, "record of type 0");
	*rec = r;
	c->pos += RECFMT_RECORD_HEADER_BYTES + r.size;
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_frame(const struct recfmt_record *rec, uint32_t *seq,
				       struct recfmt_error *err)
{
	RETURN_IF(rec->type != RECFMT_FRAME || rec->size < 8, err, rec,
		  "frame does not start with a FRAME record");
	RETURN_IF(recfmt_load_u32le(rec->payload) != RECFMT_FRAME_MAGIC, err, rec,
		  "bad frame magic");
	*seq = recfmt_load_u32le(rec->payload + 4);
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_header(const struct recfmt_record *rec,
					struct recfmt_header *hdr, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 12 || memcmp(p, RECFMT_FILE_MAGIC, 8) != 0, err, rec,
		  "not a rec trace (bad file magic)");
	hdr->major = recfmt_load_u16le(p + 8);
	hdr->minor = recfmt_load_u16le(p + 10);
	if (hdr->major > RECFMT_VERSION_MAJOR)
		return fail(err, RECFMT_UNSUPPORTED_VERSION, rec->offset,
			    "format version %u.%u is newer than this reader's %u.%u", hdr->major,
			    hdr->minor, RECFMT_VERSION_MAJOR, RECFMT_VERSION_MINOR);
	RETURN_IF(hdr->major < 1, err, rec, "format version %u.%u is invalid", hdr->major,
		  hdr->minor);
	RETURN_IF(rec->size < 56, err, rec, "file header too short (%u bytes)", rec->size);
	hdr->clock = recfmt_load_u32le(p + 12);
	hdr->pid = recfmt_load_u32le(p + 16);
	hdr->ticks_per_second = recfmt_load_u64le(p + 24);
	hdr->start_ticks = recfmt_load_u64le(p + 32);
	hdr->start_mono_ns = recfmt_load_u64le(p + 40);
	hdr->start_real_ns = recfmt_load_u64le(p + 48);
	/* A trailing field of 1.2 (FORMAT.md §3.2): absent in older headers. */
	hdr->clock_step_ticks = rec->size >= 64 ? recfmt_load_u64le(p + 56) : 0;
	RETURN_IF(hdr->clock != RECFMT_CLOCK_TSC && hdr->clock != RECFMT_CLOCK_MONOTONIC, err,
		  rec, "unknown clock kind %u", hdr->clock);
	RETURN_IF(hdr->ticks_per_second == 0, err, rec, "ticks_per_second is 0");
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_sync(const struct recfmt_record *rec, struct recfmt_sync *sync,
				      struct recfmt_error *err)
{
	RETURN_IF(rec->size < 24, err, rec, "SYNC record too short (%u bytes)", rec->size);
	sync->ticks = recfmt_load_u64le(rec->payload);
	sync->mono_ns = recfmt_load_u64le(rec->payload + 8);
	sync->real_ns = recfmt_load_u64le(rec->payload + 16);
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_site(const struct recfmt_record *rec, struct recfmt_site *site,
				      struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 16, err, rec, "SITE record too short (%u bytes)", rec->size);
	site->id = recfmt_load_u32le(p);
	site->line = recfmt_load_u32le(p + 4);
	site->name_bytes = recfmt_load_u32le(p + 8);
	site->file_bytes = recfmt_load_u32le(p + 12);
	RETURN_IF(site->id == 0 || site->id > RECFMT_MAX_SITE_ID, err, rec, "bad site id %u",
		  site->id);
	RETURN_IF(site->name_bytes > RECFMT_MAX_NAME_BYTES ||
			  site->file_bytes > RECFMT_MAX_NAME_BYTES ||
			  16u + site->name_bytes + site->file_bytes > rec->size,
		  err, rec, "SITE record's strings overrun it");
	site->name = (const char *)p + 16;
	site->file = (const char *)p + 16 + site->name_bytes;
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_thread(const struct recfmt_record *rec,
					struct recfmt_thread *thread, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 16, err, rec, "THREAD record too short (%u bytes)", rec->size);
	thread->thread = recfmt_load_u32le(p);
	thread->os_tid = recfmt_load_u32le(p + 4);
	thread->name_bytes = recfmt_load_u32le(p + 12);
	RETURN_IF(thread->thread == 0, err, rec, "thread serial 0");
	RETURN_IF(thread->name_bytes > RECFMT_MAX_NAME_BYTES || 16u + thread->name_bytes > rec->size,
		  err, rec, "THREAD record's name overruns it");
	thread->name = (recfmt_load_u32le(p + 8) & 1u) ? (const char *)p + 16 : NULL;
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_drops(const struct recfmt_record *rec,
				       struct recfmt_drops *drops, struct recfmt_error *err)
{
	RETURN_IF(rec->size < 16, err, rec, "DROPS record too short (%u bytes)", rec->size);
	drops->thread = recfmt_load_u32le(rec->payload);
	drops->nr_dropped = recfmt_load_u64le(rec->payload + 8);
	drops->has_filtered = rec->size >= 24;
	drops->nr_filtered = drops->has_filtered ? recfmt_load_u64le(rec->payload + 16) : 0;
	RETURN_IF(drops->thread == 0, err, rec, "thread serial 0");
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_thread_end(const struct recfmt_record *rec,
					    struct recfmt_thread_end *te,
					    struct recfmt_error *err)
{
	RETURN_IF(rec->size < 24, err, rec, "THREAD_END record too short (%u bytes)", rec->size);
	te->thread = recfmt_load_u32le(rec->payload);
	te->nr_events = recfmt_load_u64le(rec->payload + 8);
	te->nr_dropped = recfmt_load_u64le(rec->payload + 16);
	te->has_filtered = rec->size >= 32;
	te->nr_filtered = te->has_filtered ? recfmt_load_u64le(rec->payload + 24) : 0;
	RETURN_IF(te->thread == 0, err, rec, "thread serial 0");
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_blocked(const struct recfmt_record *rec,
					 struct recfmt_blocked *b, struct recfmt_error *err)
{
	RETURN_IF(rec->size < 24, err, rec, "BLOCKED record too short (%u bytes)", rec->size);
	b->thread = recfmt_load_u32le(rec->payload);
	b->nr_blocked = recfmt_load_u64le(rec->payload + 8);
	b->blocked_ns = recfmt_load_u64le(rec->payload + 16);
	RETURN_IF(b->thread == 0, err, rec, "thread serial 0");
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_snapshot(const struct recfmt_record *rec,
					  struct recfmt_snapshot *s, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 48, err, rec, "SNAPSHOT record too short (%u bytes)", rec->size);
	s->trigger_ticks = recfmt_load_u64le(p);
	s->window_start_ticks = recfmt_load_u64le(p + 8);
	s->window_end_ticks = recfmt_load_u64le(p + 16);
	s->number = recfmt_load_u32le(p + 24);
	s->kind = recfmt_load_u32le(p + 28);
	s->nr_suppressed = recfmt_load_u64le(p + 32);
	s->reason_bytes = recfmt_load_u32le(p + 40);
	RETURN_IF(s->reason_bytes > RECFMT_MAX_NAME_BYTES || 48u + s->reason_bytes > rec->size,
		  err, rec, "SNAPSHOT record's reason overruns it");
	s->reason = (const char *)p + 48;
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_probe_cost(const struct recfmt_record *rec,
					    struct recfmt_probe_cost *pc, struct recfmt_error *err)
{
	RETURN_IF(rec->size < 32, err, rec, "PROBE_COST record too short (%u bytes)", rec->size);
	pc->scope_ps = recfmt_load_u64le(rec->payload);
	pc->hook_ps = recfmt_load_u64le(rec->payload + 8);
	pc->scope_inner_ps = recfmt_load_u64le(rec->payload + 16);
	pc->hook_inner_ps = recfmt_load_u64le(rec->payload + 24);
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_end(const struct recfmt_record *rec, struct recfmt_end *end,
				     struct recfmt_error *err)
{
	RETURN_IF(rec->size < 24, err, rec, "END record too short (%u bytes)", rec->size);
	end->end_ticks = recfmt_load_u64le(rec->payload);
	end->nr_events = recfmt_load_u64le(rec->payload + 8);
	end->nr_dropped = recfmt_load_u64le(rec->payload + 16);
	end->has_filtered = rec->size >= 32;
	end->nr_filtered = end->has_filtered ? recfmt_load_u64le(rec->payload + 24) : 0;
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_crash(const struct recfmt_record *rec, struct recfmt_crash *c,
				       struct recfmt_error *err)
{
	RETURN_IF(rec->size < 32, err, rec, "CRASH record too short (%u bytes)", rec->size);
	c->signo = recfmt_load_u32le(rec->payload);
	c->si_code = (int32_t)recfmt_load_u32le(rec->payload + 4);
	c->thread = recfmt_load_u32le(rec->payload + 8);
	c->flags = recfmt_load_u32le(rec->payload + 12);
	c->addr = recfmt_load_u64le(rec->payload + 16);
	c->ticks = recfmt_load_u64le(rec->payload + 24);
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_module(const struct recfmt_record *rec,
					struct recfmt_module *m, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;
	uint64_t need;

	RETURN_IF(rec->size < 32, err, rec, "MODULE record too short (%u bytes)", rec->size);
	m->id = recfmt_load_u32le(p);
	m->flags = recfmt_load_u32le(p + 4);
	m->load_bias = recfmt_load_u64le(p + 8);
	m->nr_ranges = recfmt_load_u32le(p + 16);
	m->build_id_bytes = recfmt_load_u32le(p + 20);
	m->path_bytes = recfmt_load_u32le(p + 24);
	RETURN_IF(m->id == 0, err, rec, "module id 0");
	RETURN_IF(m->nr_ranges > RECFMT_MAX_MODULE_RANGES ||
			  m->build_id_bytes > RECFMT_MAX_BUILD_ID_BYTES ||
			  m->path_bytes > RECFMT_MAX_NAME_BYTES,
		  err, rec, "MODULE record's counts are out of range");
	need = 32u + 16u * (uint64_t)m->nr_ranges + m->build_id_bytes + m->path_bytes;
	RETURN_IF(need > rec->size, err, rec, "MODULE record's contents overrun it");
	m->ranges = p + 32;
	m->build_id = m->ranges + 16u * m->nr_ranges;
	m->path = (const char *)m->build_id + m->build_id_bytes;
	/* 1.4: since_ticks after the path; a record without it is a 1.3 one. */
	m->has_since = rec->size >= need + 8;
	m->since_ticks = m->has_since ? recfmt_load_u64le(p + need) : 0;
	for (uint32_t i = 0; i < m->nr_ranges; i++) {
		struct recfmt_range r = recfmt_module_range(m, i);

		RETURN_IF(r.start > r.end, err, rec, "MODULE range %u ends before it starts", i);
	}
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_module_map(const struct recfmt_record *rec,
					    struct recfmt_module_map *mm, struct recfmt_error *err)
{
	RETURN_IF(rec->size < 16, err, rec, "MODULE_MAP record too short (%u bytes)", rec->size);
	mm->id = recfmt_load_u32le(rec->payload);
	mm->what = recfmt_load_u32le(rec->payload + 4);
	mm->ticks = recfmt_load_u64le(rec->payload + 8);
	RETURN_IF(mm->id == 0, err, rec, "module id 0");
	RETURN_IF(mm->what != RECFMT_MODULE_UNMAPPED && mm->what != RECFMT_MODULE_MAPPED, err, rec,
		  "MODULE_MAP says neither unmapped nor mapped (%u)", mm->what);
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_func(const struct recfmt_record *rec, struct recfmt_func *func,
				      struct recfmt_error *err)
{
	RETURN_IF(rec->size < 16, err, rec, "FUNC record too short (%u bytes)", rec->size);
	func->id = recfmt_load_u32le(rec->payload);
	func->module = recfmt_load_u32le(rec->payload + 4); /* 1.5; 0 before */
	func->addr = recfmt_load_u64le(rec->payload + 8);
	RETURN_IF(func->id == 0 || func->id > RECFMT_MAX_SITE_ID, err, rec, "bad site id %u",
		  func->id);
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_counter_set(const struct recfmt_record *rec,
					     struct recfmt_counter_set *cs,
					     struct recfmt_error *err)
{
	const uint8_t *p = rec->payload, *end = rec->payload + rec->size;

	RETURN_IF(rec->size < 8, err, rec, "COUNTER_SET record too short (%u bytes)", rec->size);
	cs->thread = recfmt_load_u32le(p);
	cs->nr = recfmt_load_u32le(p + 4);
	cs->nr_columns = 0;
	RETURN_IF(cs->thread == 0, err, rec, "thread serial 0");
	RETURN_IF(cs->nr > RECFMT_MAX_COUNTERS, err, rec, "COUNTER_SET lists %u counters (max %u)",
		  cs->nr, RECFMT_MAX_COUNTERS);
	p += 8;
	for (uint32_t i = 0; i < cs->nr; i++) {
		RETURN_IF(end - p < 8, err, rec, "COUNTER_SET entry %u cut short", i);
		cs->c[i].flags = recfmt_load_u32le(p);
		cs->c[i].name_bytes = recfmt_load_u32le(p + 4);
		RETURN_IF(cs->c[i].name_bytes == 0 ||
				  cs->c[i].name_bytes > RECFMT_MAX_COUNTER_NAME_BYTES ||
				  cs->c[i].name_bytes > (size_t)(end - p - 8),
			  err, rec, "COUNTER_SET entry %u's name overruns it", i);
		cs->c[i].name = (const char *)p + 8;
		cs->nr_columns += cs->c[i].flags & RECFMT_COUNTER_RECORDED;
		p += 8 + cs->c[i].name_bytes;
	}
	return RECFMT_OK;
}

enum recfmt_status recfmt_counters_open(const struct recfmt_record *rec,
					struct recfmt_counters *cb, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 16, err, rec, "COUNTERS record too short (%u bytes)", rec->size);
	cb->thread = recfmt_load_u32le(p);
	cb->nr_events = recfmt_load_u32le(p + 4);
	cb->nr_columns = recfmt_load_u32le(p + 8);
	RETURN_IF(cb->thread == 0, err, rec, "COUNTERS block of thread serial 0");
	RETURN_IF(cb->nr_columns == 0 || cb->nr_columns > RECFMT_MAX_COUNTERS, err, rec,
		  "COUNTERS block with %u columns", cb->nr_columns);
	/* Each value takes at least one byte. */
	RETURN_IF((uint64_t)cb->nr_events * cb->nr_columns > rec->size - 16u, err, rec,
		  "COUNTERS block claims %u x %u values in %u bytes", cb->nr_events,
		  cb->nr_columns, rec->size);
	cb->columns = p + 16;
	cb->end = p + rec->size;
	return RECFMT_OK;
}

enum recfmt_status recfmt_counters_decode(const struct recfmt_counters *cb, uint64_t *values,
					  const struct recfmt_record *rec,
					  struct recfmt_error *err)
{
	const uint8_t *p = cb->columns;

	for (uint32_t c = 0; c < cb->nr_columns; c++) {
		uint64_t v = 0, zz;

		for (uint32_t i = 0; i < cb->nr_events; i++) {
			unsigned n = recfmt_leb128_decode(p, cb->end, &zz);

			RETURN_IF(!n, err, rec, "COUNTERS column %u ends early", c);
			p += n;
			/* zigzag, as the EVENTS deltas (FORMAT.md §3.6) */
			v += (zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1);
			values[(size_t)c * cb->nr_events + i] = v;
		}
	}
	RETURN_IF(p != cb->end, err, rec, "COUNTERS block leaves %zu bytes over",
		  (size_t)(cb->end - p));
	return RECFMT_OK;
}

enum recfmt_status recfmt_events_open(const struct recfmt_record *rec,
				      struct recfmt_events_iter *it, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;
	uint32_t ids_bytes;

	RETURN_IF(rec->size < 24, err, rec, "EVENTS record too short (%u bytes)", rec->size);
	it->thread = recfmt_load_u32le(p);
	it->nr_events = recfmt_load_u32le(p + 4);
	it->ticks = recfmt_load_u64le(p + 8);
	ids_bytes = recfmt_load_u32le(p + 16);
	RETURN_IF(it->thread == 0, err, rec, "EVENTS block of thread serial 0");
	RETURN_IF(ids_bytes > rec->size - 24, err, rec,
		  "EVENTS ids column (%u bytes) overruns the block (%u bytes)", ids_bytes,
		  rec->size);
	/* Each event takes at least one byte in each column. */
	RETURN_IF(it->nr_events > ids_bytes || it->nr_events > rec->size - 24 - ids_bytes, err,
		  rec, "EVENTS block claims %u events in %u bytes", it->nr_events, rec->size);
	it->nr_left = it->nr_events;
	it->ids = p + 24;
	it->ids_end = it->ids + ids_bytes;
	it->deltas = it->ids_end;
	it->deltas_end = p + rec->size;
	return RECFMT_OK;
}

/*
 * Bit k set if byte k of p[0..15] ends a LEB128 value (its high bit is
 * clear). One SSE2 movemask where available, else two 8-byte SWAR words
 * whose high bits a multiply gathers into one byte.
 */
static inline uint32_t leb_ends16(const uint8_t *p)
{
#if defined(__SSE2__)
	__m128i v = _mm_loadu_si128((const void *)p);

	return ~(uint32_t)_mm_movemask_epi8(v) & 0xffffu;
#else
	uint64_t a = (~recfmt_load_u64le(p) & 0x8080808080808080ull) >> 7;
	uint64_t b = (~recfmt_load_u64le(p + 8) & 0x8080808080808080ull) >> 7;

	return (uint32_t)((a * 0x0102040810204080ull) >> 56) |
	       (uint32_t)((b * 0x0102040810204080ull) >> 56) << 8;
#endif
}

#if defined(__SSE2__)
/*
 * For a 16-byte chunk that starts at a value's first byte: cand[j] is the
 * value that ends at byte j if that value has at most 2 bytes (the byte
 * itself, or it and the continuation byte before it). SSE2 computes all 16
 * at once; the caller picks the ones at the value ends.
 */
static inline void leb_cand16(const uint8_t *p, uint16_t cand[16])
{
	const __m128i zero = _mm_setzero_si128(), m7 = _mm_set1_epi8(0x7f);
	const __m128i b = _mm_loadu_si128((const void *)p);
	const __m128i lo = _mm_and_si128(b, m7);
	const __m128i prev = _mm_slli_si128(b, 1); /* byte j holds byte j - 1 */
	const __m128i pcont = _mm_cmplt_epi8(prev, zero);
	const __m128i plo = _mm_and_si128(_mm_and_si128(prev, m7), pcont);
	__m128i l, c, v;

	l = _mm_unpacklo_epi8(lo, zero);
	c = _mm_unpacklo_epi8(pcont, pcont);
	v = _mm_or_si128(_mm_andnot_si128(c, l), _mm_and_si128(c, _mm_slli_epi16(l, 7)));
	_mm_storeu_si128((void *)cand, _mm_or_si128(v, _mm_unpacklo_epi8(plo, zero)));
	l = _mm_unpackhi_epi8(lo, zero);
	c = _mm_unpackhi_epi8(pcont, pcont);
	v = _mm_or_si128(_mm_andnot_si128(c, l), _mm_and_si128(c, _mm_slli_epi16(l, 7)));
	_mm_storeu_si128((void *)(cand + 8), _mm_or_si128(v, _mm_unpackhi_epi8(plo, zero)));
}
#endif

uint64_t recfmt_events_count_enters(const struct recfmt_events_iter *it)
{
	const uint8_t *p = it->ids, *end = it->ids_end;
	uint64_t n = 0;
	uint32_t carry = 1; /* the column's first byte starts a value */

#if defined(__SSE2__)
	while (end - p >= 16) {
		const __m128i v = _mm_loadu_si128((const void *)p);
		const uint32_t ends = ~(uint32_t)_mm_movemask_epi8(v) & 0xffffu;
		/* bit 0 of each byte into its bit 7 (the shift crosses no byte
		 * that is read: bit 7 of the low byte of a lane is bit 0 of it,
		 * bit 15 is bit 0 of the high byte) */
		const uint32_t low = (uint32_t)_mm_movemask_epi8(_mm_slli_epi16(v, 7));
		const uint32_t starts = (ends << 1 | carry) & 0xffffu;

		uint32_t x = starts & ~low & 0xffffu;

		/* popcount of 16 bits without -mpopcnt (a libgcc call) */
		x -= (x >> 1) & 0x5555u;
		x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
		x = (x + (x >> 4)) & 0x0f0fu;
		n += (x + (x >> 8)) & 0x1fu;
		carry = ends >> 15;
		p += 16;
	}
#endif
	for (; p < end; p++) {
		if (carry && !(*p & 1))
			n++;
		carry = !(*p & 0x80);
	}
	return n;
}

/*
 * Decodes up to n values of one LEB128 column (FORMAT.md §3.6) from *pp
 * into out (uint32_t codes if ids, else uint64_t raw zigzag deltas).
 * Chunks of 16 bytes: the value boundaries come from one mask, so finding
 * the next value does not wait for the previous one's load, and a chunk of
 * sixteen 1-byte values (the usual ids column) is a plain widening copy.
 * Values of up to 3 bytes are assembled from one 8-byte load; longer ones
 * (rare) and the last 24 bytes of the column go through the bounds-checked
 * scalar decoder. Return: values decoded; fewer than n only if the next one
 * is malformed, with *pp left at its first byte.
 */
static inline __attribute__((always_inline)) uint32_t
column_decode(const uint8_t **pp, const uint8_t *end, uint32_t n, void *out, const bool ids)
{
	uint32_t *out32 = out;
	uint64_t *out64 = out;
	const uint8_t *p = *pp;
	uint32_t i = 0;
	uint64_t v;
	unsigned k;

	/* 24 bytes: the chunk plus the 8-byte loads of values starting in it. */
	while (n - i >= 16 && end - p >= 24) {
		uint32_t ends = leb_ends16(p);
		const uint8_t *q = p;

		if (ends == 0xffffu) {
#if defined(__SSE2__)
			if (ids) {
				/* Sixteen 1-byte ids, the usual case: widen in registers. */
				const __m128i zero = _mm_setzero_si128();
				const __m128i b = _mm_loadu_si128((const void *)p);
				const __m128i l = _mm_unpacklo_epi8(b, zero);
				const __m128i h = _mm_unpackhi_epi8(b, zero);

				_mm_storeu_si128((void *)(out32 + i), _mm_unpacklo_epi16(l, zero));
				_mm_storeu_si128((void *)(out32 + i + 4), _mm_unpackhi_epi16(l, zero));
				_mm_storeu_si128((void *)(out32 + i + 8), _mm_unpacklo_epi16(h, zero));
				_mm_storeu_si128((void *)(out32 + i + 12), _mm_unpackhi_epi16(h, zero));
				i += 16;
				p += 16;
				continue;
			}
#endif
			for (k = 0; k < 16; k++) {
				if (ids)
					out32[i + k] = p[k];
				else
					out64[i + k] = p[k];
			}
			i += 16;
			p += 16;
			continue;
		}
		if (!ends)
			break; /* longer than 16 bytes: the scalar path reports it */
#if defined(__SSE2__)
		/* No two continuation bytes in a row: every value here has 1 or
		 * 2 bytes, and they are read from the candidates by position. */
		if (!(~ends & (~ends << 1) & 0xffffu)) {
			uint16_t cand[16];
			unsigned last = 31u - (unsigned)__builtin_clz(ends);

			leb_cand16(p, cand);
			do {
				if (ids)
					out32[i++] = cand[__builtin_ctz(ends)];
				else
					out64[i++] = cand[__builtin_ctz(ends)];
				ends &= ends - 1;
			} while (ends);
			p += last + 1;
			continue;
		}
#endif
		do {
			const uint8_t *e = p + __builtin_ctz(ends) + 1;
			size_t len = (size_t)(e - q);

			if (__builtin_expect(len <= 3, 1)) {
				uint64_t w = recfmt_load_u64le(q);

				v = (w & 0x7f) | ((w >> 1) & 0x3f80) | ((w >> 2) & 0x1fc000);
				v &= (1ull << (7 * len)) - 1;
			} else if (recfmt_leb128_decode(q, end, &v) != len ||
				   (ids && v > UINT32_MAX)) {
				p = q;
				goto scalar;
			}
			if (ids)
				out32[i] = (uint32_t)v;
			else
				out64[i] = v;
			i++;
			q = e;
			ends &= ends - 1;
		} while (ends);
		p = q;
	}
scalar:
	for (; i < n; i++) {
		k = recfmt_leb128_decode(p, end, &v);
		if (!k || (ids && v > UINT32_MAX))
			break;
		if (ids)
			out32[i] = (uint32_t)v;
		else
			out64[i] = v;
		p += k;
	}
	*pp = p;
	return i;
}

int recfmt_events_decode_batch(struct recfmt_events_iter *it, uint64_t *ticks, uint32_t *codes,
			       uint32_t max)
{
	const uint8_t *ids = it->ids;
	uint32_t n = max < it->nr_left ? max : it->nr_left, ni, nd;
	uint64_t t = it->ticks;

	if (!n)
		return 0;
	if (n > INT32_MAX)
		n = INT32_MAX; /* the count must fit the return value */
	ni = column_decode(&it->ids, it->ids_end, n, codes, true);
	nd = column_decode(&it->deltas, it->deltas_end, ni, ticks, false);
	if (nd < ni) {
		/* The deltas column broke first: leave the ids column after the
		 * nd events returned, so that both columns agree. */
		it->ids = ids;
		column_decode(&it->ids, it->ids_end, nd, codes, true);
	}
	for (uint32_t i = 0; i < nd; i++) {
		/* zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... (FORMAT.md §3.6) */
		t += (ticks[i] >> 1) ^ (uint64_t)-(int64_t)(ticks[i] & 1);
		ticks[i] = t;
	}
	it->ticks = t;
	it->nr_left -= nd;
	return nd ? (int)nd : -1;
}

/* ---------------------------------------------------------------------
 * Annotations (FORMAT.md §3.17-§3.19).
 */
enum recfmt_status recfmt_decode_annot_name(const struct recfmt_record *rec,
					    struct recfmt_annot_name *name,
					    struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 24, err, rec, "ANNOT_NAME record too short (%u bytes)", rec->size);
	name->id = recfmt_load_u32le(p);
	name->kind = recfmt_load_u32le(p + 4);
	name->line = recfmt_load_u32le(p + 8);
	name->name_bytes = recfmt_load_u32le(p + 12);
	name->file_bytes = recfmt_load_u32le(p + 16);
	RETURN_IF(name->id == 0 || name->id > RECFMT_MAX_ANNOT_NAME_ID, err, rec,
		  "bad annotation name id %u", name->id);
	RETURN_IF(name->kind < RECFMT_NAME_TRACK || name->kind > RECFMT_NAME_FLOW, err, rec,
		  "ANNOT_NAME %u of unknown kind %u", name->id, name->kind);
	RETURN_IF(name->name_bytes > RECFMT_MAX_NAME_BYTES ||
			  name->file_bytes > RECFMT_MAX_NAME_BYTES ||
			  24u + name->name_bytes + name->file_bytes > rec->size,
		  err, rec, "ANNOT_NAME record's strings overrun it");
	name->name = (const char *)p + 24;
	name->file = (const char *)p + 24 + name->name_bytes;
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_annot_drops(const struct recfmt_record *rec,
					     struct recfmt_annot_drops *d, struct recfmt_error *err)
{
	RETURN_IF(rec->size < 16, err, rec, "ANNOT_DROPS record too short (%u bytes)", rec->size);
	d->thread = recfmt_load_u32le(rec->payload);
	d->nr_dropped = recfmt_load_u64le(rec->payload + 8);
	RETURN_IF(d->thread == 0, err, rec, "thread serial 0");
	return RECFMT_OK;
}

enum recfmt_status recfmt_annots_open(const struct recfmt_record *rec,
				      struct recfmt_annots_iter *it, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 24, err, rec, "ANNOTS record too short (%u bytes)", rec->size);
	it->thread = recfmt_load_u32le(p);
	it->nr_annots = recfmt_load_u32le(p + 4);
	it->ticks = recfmt_load_u64le(p + 8);
	it->nr_events = recfmt_load_u32le(p + 16);
	RETURN_IF(it->thread == 0, err, rec, "ANNOTS record of thread serial 0");
	/* A row takes at least 4 bytes: kind, pos, ticks, and a name or a length. */
	RETURN_IF(it->nr_annots > (rec->size - 24) / 4, err, rec,
		  "ANNOTS record claims %u annotations in %u bytes", it->nr_annots, rec->size);
	it->nr_left = it->nr_annots;
	it->pos = 0;
	it->p = p + 24;
	it->end = p + rec->size;
	it->payload = p;
	it->offset = rec->offset;
	return RECFMT_OK;
}

static enum recfmt_status annot_fail(struct recfmt_annots_iter *it, struct recfmt_error *err,
				     const char *what)
{
	uint32_t index = it->nr_annots - it->nr_left;

	it->nr_left = 0;
	it->p = it->end; /* the rest is unusable */
	return fail(err, RECFMT_CORRUPT, it->offset, "ANNOTS record of thread %u, annotation %u: %s",
		    it->thread, index, what);
}

enum recfmt_status recfmt_annots_next(struct recfmt_annots_iter *it, struct recfmt_annot *a,
				      struct recfmt_error *err)
{
	const uint8_t *p = it->p, *end = it->end;
	uint64_t v, zz;
	unsigned n;

	if (it->nr_left == 0) {
		if (p != end)
			return fail(err, RECFMT_CORRUPT, it->offset,
				    "ANNOTS record of thread %u leaves %zu bytes over", it->thread,
				    (size_t)(end - p));
		return RECFMT_END_OF_INPUT;
	}
	memset(a, 0, sizeof(*a));
	a->thread = it->thread;
	if (p >= end)
		return annot_fail(it, err, "record ends early");
	a->kind = *p++;
	if (a->kind < RECFMT_ANNOT_VALUE_I64 || a->kind > RECFMT_ANNOT_KIND_MAX)
		return annot_fail(it, err, "unknown kind");
	n = recfmt_leb128_decode(p, end, &v);
	if (!n || v > it->nr_events - it->pos)
		return annot_fail(it, err, "position malformed or past the events it follows");
	p += n;
	a->pos = it->pos + (uint32_t)v;
	n = recfmt_leb128_decode(p, end, &zz);
	if (!n)
		return annot_fail(it, err, "time malformed");
	p += n;
	a->ticks = it->ticks + ((zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1));
	if (a->kind == RECFMT_ANNOT_MESSAGE) {
		if (p >= end || (size_t)(end - p) < 1u + p[0])
			return annot_fail(it, err, "message text overruns the record");
		a->text_bytes = p[0];
		a->text = (const char *)p + 1;
		p += 1u + a->text_bytes;
	} else {
		n = recfmt_leb128_decode(p, end, &v);
		if (!n || v == 0 || v > RECFMT_MAX_ANNOT_NAME_ID)
			return annot_fail(it, err, "name id malformed or out of range");
		p += n;
		a->name_id = (uint32_t)v;
		switch (a->kind) {
		case RECFMT_ANNOT_INSTANT:
			break;
		case RECFMT_ANNOT_VALUE_F64:
			if (end - p < 8)
				return annot_fail(it, err, "value overruns the record");
			v = recfmt_load_u64le(p);
			memcpy(&a->f64, &v, 8);
			p += 8;
			break;
		case RECFMT_ANNOT_VALUE_I64:
		case RECFMT_ANNOT_ARG:
			n = recfmt_leb128_decode(p, end, &zz);
			if (!n)
				return annot_fail(it, err, "value malformed");
			p += n;
			a->i64 = (int64_t)((zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1));
			break;
		default: /* FLOW_* */
			n = recfmt_leb128_decode(p, end, &a->id);
			if (!n)
				return annot_fail(it, err, "flow id malformed");
			p += n;
			break;
		}
	}
	it->p = p;
	it->pos = a->pos;
	it->ticks = a->ticks;
	it->nr_left--;
	return RECFMT_OK;
}

bool recfmt_cpu_fast_pext(void)
{
#if defined(__x86_64__)
	/* Walkers ask concurrently: each may compute it, all compute the same,
	 * and relaxed atomics make that no data race. */
	static int ok_cached = -1;
	int ok = __atomic_load_n(&ok_cached, __ATOMIC_RELAXED);

	if (ok < 0) {
		unsigned a, b, c, d, family, max_leaf;
		bool intel, amd, fast = false;

		/* cpuid itself, not __builtin_cpu_supports(): clang's has no "lzcnt". */
		if (__get_cpuid(0, &max_leaf, &b, &c, &d) && max_leaf >= 7) {
			intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e; /* GenuineIntel */
			amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;   /* AuthenticAMD */
			__cpuid(1, a, b, c, d);
			/* The displayed family: base + extended when base is 15. */
			family = (a >> 8) & 0xf;
			if (family == 0xf)
				family += (a >> 20) & 0xff;
			__cpuid_count(7, 0, a, b, c, d);
			fast = (b & (1u << 3)) && (b & (1u << 8)) && /* BMI1, BMI2 */
			       __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 5)) && /* LZCNT */
			       (intel || (amd && family >= 0x19));
		}
		ok = fast;
		__atomic_store_n(&ok_cached, ok, __ATOMIC_RELAXED);
	}
	return ok;
#else
	return false;
#endif
}

/* ---------------------------------------------------------------------
 * Stack samples (FORMAT.md §3.22-§3.24).
 */
enum recfmt_status recfmt_decode_sampling(const struct recfmt_record *rec,
					  struct recfmt_sampling *s, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 24, err, rec, "SAMPLING record too short (%u bytes)", rec->size);
	s->hz = recfmt_load_u32le(p);
	s->clock = recfmt_load_u32le(p + 4);
	s->mechanism = recfmt_load_u32le(p + 8);
	s->max_frames = recfmt_load_u32le(p + 12);
	s->period_ns = recfmt_load_u64le(p + 16);
	RETURN_IF(s->hz == 0, err, rec, "SAMPLING record with a rate of 0");
	RETURN_IF(s->max_frames == 0 || s->max_frames > RECFMT_MAX_SAMPLE_FRAMES, err, rec,
		  "SAMPLING record with %u frames at most (1 ... %u)", s->max_frames,
		  RECFMT_MAX_SAMPLE_FRAMES);
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_sample_drops(const struct recfmt_record *rec,
					      struct recfmt_sample_drops *d,
					      struct recfmt_error *err)
{
	RETURN_IF(rec->size < 16, err, rec, "SAMPLE_DROPS record too short (%u bytes)", rec->size);
	d->thread = recfmt_load_u32le(rec->payload);
	d->nr_dropped = recfmt_load_u64le(rec->payload + 8);
	RETURN_IF(d->thread == 0, err, rec, "thread serial 0");
	return RECFMT_OK;
}

enum recfmt_status recfmt_samples_open(const struct recfmt_record *rec,
				       struct recfmt_samples_iter *it, struct recfmt_error *err)
{
	const uint8_t *p = rec->payload;

	RETURN_IF(rec->size < 24, err, rec, "SAMPLES record too short (%u bytes)", rec->size);
	it->thread = recfmt_load_u32le(p);
	it->nr_samples = recfmt_load_u32le(p + 4);
	it->ticks = recfmt_load_u64le(p + 8);
	RETURN_IF(it->thread == 0, err, rec, "SAMPLES record of thread serial 0");
	/* A row takes at least 4 bytes: ticks, flags, nr_frames, nr_same. */
	RETURN_IF(it->nr_samples > (rec->size - 24) / 4, err, rec,
		  "SAMPLES record claims %u samples in %u bytes", it->nr_samples, rec->size);
	it->nr_left = it->nr_samples;
	it->nr_prev = 0;
	it->prev_addr = 0;
	it->p = p + 24;
	it->end = p + rec->size;
	it->offset = rec->offset;
	return RECFMT_OK;
}

static enum recfmt_status sample_fail(struct recfmt_samples_iter *it, struct recfmt_error *err,
				      const char *what)
{
	uint32_t index = it->nr_samples - it->nr_left;

	it->nr_left = 0;
	it->p = it->end; /* the rest is unusable */
	return fail(err, RECFMT_CORRUPT, it->offset, "SAMPLES record of thread %u, sample %u: %s",
		    it->thread, index, what);
}

enum recfmt_status recfmt_samples_next(struct recfmt_samples_iter *it, struct recfmt_sample *s,
				       struct recfmt_error *err)
{
	const uint8_t *p = it->p, *end = it->end;
	uint64_t zz, n_frames, same, ticks, addr = it->prev_addr;
	uint32_t flags, k;
	unsigned n;

	if (it->nr_left == 0) {
		if (p != end)
			return fail(err, RECFMT_CORRUPT, it->offset,
				    "SAMPLES record of thread %u leaves %zu bytes over", it->thread,
				    (size_t)(end - p));
		return RECFMT_END_OF_INPUT;
	}
	n = recfmt_leb128_decode(p, end, &zz);
	if (!n)
		return sample_fail(it, err, "time malformed");
	p += n;
	ticks = it->ticks + ((zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1));
	if (p >= end)
		return sample_fail(it, err, "record ends early");
	flags = *p++;
	if (flags & ~RECFMT_SAMPLE_TRUNCATED)
		return sample_fail(it, err, "unknown flags");
	n = recfmt_leb128_decode(p, end, &n_frames);
	if (!n || n_frames == 0 || n_frames > RECFMT_MAX_SAMPLE_FRAMES)
		return sample_fail(it, err, "frame count malformed or out of range");
	p += n;
	n = recfmt_leb128_decode(p, end, &same);
	if (!n || same > n_frames || same > it->nr_prev)
		return sample_fail(it, err, "shared frames malformed or more than either stack has");
	p += n;
	k = (uint32_t)(n_frames - same);
	/* The shared outermost frames move to the end of the new stack. */
	if (same)
		memmove(it->frames + k, it->frames + (it->nr_prev - same),
			(size_t)same * sizeof(uint64_t));
	for (uint32_t i = 0; i < k; i++) {
		n = recfmt_leb128_decode(p, end, &zz);
		if (!n)
			return sample_fail(it, err, "address malformed");
		p += n;
		addr += (zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1);
		it->frames[i] = addr;
	}
	it->p = p;
	it->prev_addr = addr;
	it->nr_prev = (uint32_t)n_frames;
	it->ticks = ticks;
	it->nr_left--;
	s->thread = it->thread;
	s->flags = flags;
	s->ticks = it->ticks;
	s->nr_frames = (uint32_t)n_frames;
	s->frames = it->frames;
	return RECFMT_OK;
}
