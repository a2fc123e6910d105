/* SPDX-License-Identifier: MIT */
/*
 * decode.c - reader side of FORMAT.md: bounds-checked parsing of the records
 * inside one decompressed frame. It never trusts a length before checking it
 * against the bytes that remain. Frame iteration and zstd live in frames.c.
 */
#include "recfmt.h"

#include <stdarg.h>

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
	size_t left = c->len - c->pos;
	const uint8_t *p = c->data + c->pos;
	uint32_t size;

	if (left == 0)
		return RECFMT_END_OF_INPUT;
	if (left < RECFMT_RECORD_HEADER_BYTES)
		return fail(err, RECFMT_CORRUPT, c->pos,
			    "record header cut short (%zu of 8 bytes left in frame)", left);
	size = recfmt_load_u32le(p + 4);
	if (size > left - RECFMT_RECORD_HEADER_BYTES)
		return fail(err, RECFMT_CORRUPT, c->pos,
			    "record of type %u claims %u bytes, only %zu left in frame", p[0], size,
			    left - RECFMT_RECORD_HEADER_BYTES);
	if (p[0] == 0)
		return fail(err, RECFMT_CORRUPT, c->pos, "record of type 0");
	rec->type = p[0];
	rec->size = size;
	rec->payload = p + RECFMT_RECORD_HEADER_BYTES;
	rec->offset = c->pos;
	c->pos += RECFMT_RECORD_HEADER_BYTES + size;
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
	RETURN_IF(te->thread == 0, err, rec, "thread serial 0");
	return RECFMT_OK;
}

enum recfmt_status recfmt_decode_end(const struct recfmt_record *rec, struct recfmt_end *end,
				     struct recfmt_error *err)
{
	RETURN_IF(rec->size < 24, err, rec, "END record too short (%u bytes)", rec->size);
	end->end_ticks = recfmt_load_u64le(rec->payload);
	end->nr_events = recfmt_load_u64le(rec->payload + 8);
	end->nr_dropped = recfmt_load_u64le(rec->payload + 16);
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
