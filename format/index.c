/* SPDX-License-Identifier: MIT */
/*
 * index.c - the writer's index frames (FORMAT.md §6): a zstd skippable
 * frame before each data frame with the data frame's length and hash and
 * its records, each EVENTS block replaced by its BLOCK_INDEX sums, so that
 * a reader can find and start a time window without decompressing the
 * frames before it. Built by librec's writer (and bench_analyzer) from the
 * frame's record buffers and the sums its EVENTS encoder kept
 * (recfmt_events_track(), encode.c); parsed by tracetool's frame index.
 */
#include "recfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

#define SKIP_HEADER_BYTES 8u
#define HASH_BYTES 8u
/* A packed frame's records, decompressed, at most (FORMAT.md §6.3): an EVENTS
 * block of one event (34 bytes) becomes a BLOCK_INDEX (56). */
#define PACKED_MAX_RECORDS (2 * (size_t)RECFMT_MAX_FRAME_BYTES)

uint64_t recfmt_xxh64(const void *p, size_t n)
{
	struct recfmt_xxh64 s;

	recfmt_xxh64_init(&s, 0);
	recfmt_xxh64_update(&s, p, n);
	return recfmt_xxh64_digest(&s);
}

static uint8_t *grab(struct recfmt_buf *b, size_t n)
{
	uint8_t *p;

	if (recfmt_buf_reserve(b, n))
		return NULL;
	p = b->data + b->len;
	b->len += n;
	return p;
}

/* A BLOCK_INDEX record (FORMAT.md §6.2). */
static int put_block(struct recfmt_buf *out, const struct recfmt_block_index *b)
{
	uint8_t *p = grab(out, RECFMT_RECORD_HEADER_BYTES + RECFMT_BLOCK_INDEX_BYTES);

	if (!p)
		return -ENOMEM;
	memset(p, 0, RECFMT_RECORD_HEADER_BYTES + RECFMT_BLOCK_INDEX_BYTES);
	p[0] = RECFMT_BLOCK_INDEX;
	recfmt_store_u32le(p + 4, RECFMT_BLOCK_INDEX_BYTES);
	p += RECFMT_RECORD_HEADER_BYTES;
	recfmt_store_u32le(p + 0, b->thread);
	recfmt_store_u32le(p + 4, b->nr_events);
	recfmt_store_u64le(p + 8, b->first_ticks);
	recfmt_store_u64le(p + 16, b->last_ticks);
	recfmt_store_u32le(p + 24, b->enters);
	recfmt_store_u32le(p + 28, b->flags);
	recfmt_store_u32le(p + 32, b->depth_start);
	recfmt_store_u32le(p + 36, b->depth_low);
	recfmt_store_u32le(p + 40, b->depth_end);
	return 0;
}

bool recfmt_block_index_read(const struct recfmt_record *rec, struct recfmt_block_index *b)
{
	const uint8_t *p = rec->payload;

	if (rec->size < RECFMT_BLOCK_INDEX_BYTES)
		return false;
	b->thread = recfmt_load_u32le(p + 0);
	b->nr_events = recfmt_load_u32le(p + 4);
	b->first_ticks = recfmt_load_u64le(p + 8);
	b->last_ticks = recfmt_load_u64le(p + 16);
	b->enters = recfmt_load_u32le(p + 24);
	b->flags = recfmt_load_u32le(p + 28);
	b->depth_start = recfmt_load_u32le(p + 32);
	b->depth_low = recfmt_load_u32le(p + 36);
	b->depth_end = recfmt_load_u32le(p + 40);
	return true;
}

int recfmt_index_build(struct recfmt_buf *out, const struct recfmt_buf *parts, size_t nr_parts,
		       size_t sums_part, const struct recfmt_index_entry *sums, size_t nr_sums,
		       const uint8_t *frame, size_t frame_bytes)
{
	uint32_t seq = 0, flags = 0;
	uint64_t content = 0;
	size_t si = 0, head_at, records_at;
	uint8_t *p;

	out->len = 0;
	if (!grab(out, SKIP_HEADER_BYTES + RECFMT_INDEX_HEAD_BYTES))
		return -ENOMEM;
	head_at = SKIP_HEADER_BYTES;
	records_at = out->len;
	for (size_t k = 0; k < nr_parts; k++) {
		const uint8_t *d = parts[k].data;
		size_t len = parts[k].len, pos = 0, rec;
		struct recfmt_record r;

		content += len;
		/* Up to a record cut short: not ours to judge, the data frame says the same. */
		for (; recfmt_record_at(d, len, pos, &r); pos += rec) {
			rec = RECFMT_RECORD_HEADER_BYTES + (size_t)r.size;
			if (r.type == RECFMT_FRAME && r.size >= 8 && !seq)
				seq = recfmt_load_u32le(r.payload + 4);
			if (r.type == RECFMT_EVENTS) {
				struct recfmt_block_index b = { 0 };

				if (k == sums_part && si < nr_sums && sums[si].at == pos) {
					b = sums[si++].b;
				} else if (r.size >= 16) {
					/* Encoded without sums: the reader must decode it. */
					flags |= RECFMT_INDEX_INCOMPLETE;
					b.thread = recfmt_load_u32le(r.payload);
					b.nr_events = recfmt_load_u32le(r.payload + 4);
					b.first_ticks = b.last_ticks = recfmt_load_u64le(r.payload + 8);
				}
				if (put_block(out, &b))
					return -ENOMEM;
			} else if (r.type == RECFMT_ANNOTS || r.type == RECFMT_COUNTERS ||
				   r.type == RECFMT_SAMPLES) {
				/* Positioned in the EVENTS blocks: left out, and said so. */
				flags |= RECFMT_INDEX_PARTIAL;
			} else {
				if (!(p = grab(out, rec)))
					return -ENOMEM;
				memcpy(p, d + pos, rec);
			}
		}
	}
	p = out->data + head_at;
	recfmt_store_u32le(p + 0, RECFMT_INDEX_ID);
	p[4] = RECFMT_INDEX_MAJOR;
	p[5] = 0;
	p[6] = RECFMT_INDEX_MINOR;
	p[7] = 0;
	recfmt_store_u32le(p + 8, seq);
	recfmt_store_u32le(p + 12, flags);
	recfmt_store_u64le(p + 16, frame_bytes);
	recfmt_store_u64le(p + 24, content);
	recfmt_store_u64le(p + 32, recfmt_xxh64(frame, frame_bytes));
	recfmt_store_u32le(p + 40, (uint32_t)(out->len - records_at));
	recfmt_store_u32le(p + 44, 0);
	if (!(p = grab(out, HASH_BYTES)))
		return -ENOMEM;
	recfmt_store_u64le(p, recfmt_xxh64(out->data + head_at, out->len - HASH_BYTES - head_at));
	recfmt_store_u32le(out->data, RECFMT_INDEX_FRAME_MAGIC);
	recfmt_store_u32le(out->data + 4, (uint32_t)(out->len - SKIP_HEADER_BYTES));
	return 0;
}

int recfmt_index_pack(struct recfmt_buf *ix, size_t raw_bytes, struct recfmt_index_packer *pk)
{
	const size_t records_at = SKIP_HEADER_BYTES + RECFMT_INDEX_HEAD_BYTES;
	uint8_t *p = ix->data + SKIP_HEADER_BYTES;
	size_t records_bytes, len, rest, n;

	if (ix->len < records_at + HASH_BYTES || recfmt_load_u32le(ix->data) != RECFMT_INDEX_FRAME_MAGIC)
		return 0;
	records_bytes = recfmt_load_u32le(p + 40);
	if (raw_bytes >= records_bytes)
		return 0;
	if (!pk->cctx) {
		/*
		 * zstd's own level 1, not the frame compressor's match finder
		 * (compress.c): that one looks for matches of 8 bytes or more,
		 * and index records repeat in shorter pieces (a thread's
		 * serial and name, its block's sums).
		 */
		if (!(pk->cctx = ZSTD_createCCtx()))
			return -ENOMEM;
		ZSTD_CCtx_setParameter(pk->cctx, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(pk->cctx, ZSTD_c_checksumFlag, 1);
		ZSTD_CCtx_setParameter(pk->cctx, ZSTD_c_contentSizeFlag, 1);
	}
	rest = records_bytes - raw_bytes;
	pk->buf.len = 0;
	if (recfmt_buf_reserve(&pk->buf, ZSTD_compressBound(rest)))
		return -ENOMEM;
	n = ZSTD_compress2(pk->cctx, pk->buf.data, pk->buf.cap,
			   ix->data + records_at + raw_bytes, rest);
	/* Worth it only when it saves a quarter: else a reader that knows only
	 * plain index frames keeps reading this one. */
	if (ZSTD_isError(n) || n > rest - rest / 4)
		return 0;
	memcpy(ix->data + records_at + raw_bytes, pk->buf.data, n);
	len = records_at + raw_bytes + n;
	p[6] = RECFMT_INDEX_PACKED_MINOR;
	p[7] = 0;
	recfmt_store_u32le(p + 44, (uint32_t)raw_bytes);
	recfmt_store_u64le(ix->data + len, recfmt_xxh64(p, len - SKIP_HEADER_BYTES));
	ix->len = len + HASH_BYTES;
	recfmt_store_u32le(ix->data, RECFMT_INDEX_PACKED_MAGIC);
	recfmt_store_u32le(ix->data + 4, (uint32_t)(ix->len - SKIP_HEADER_BYTES));
	return 0;
}

void recfmt_index_packer_fini(struct recfmt_index_packer *pk)
{
	ZSTD_freeCCtx(pk->cctx);
	pk->cctx = NULL;
	recfmt_buf_fini(&pk->buf);
}

bool recfmt_index_parse(const uint8_t *frame, size_t len, struct recfmt_index_head *h)
{
	const uint8_t *p = frame + SKIP_HEADER_BYTES;
	size_t size, room;
	uint32_t magic;

	if (len < SKIP_HEADER_BYTES + RECFMT_INDEX_HEAD_BYTES + HASH_BYTES)
		return false;
	magic = recfmt_load_u32le(frame);
	if (!RECFMT_IS_INDEX_MAGIC(magic))
		return false;
	size = recfmt_load_u32le(frame + 4);
	if (size != len - SKIP_HEADER_BYTES || recfmt_load_u32le(p) != RECFMT_INDEX_ID)
		return false;
	h->major = recfmt_load_u16le(p + 4);
	h->minor = recfmt_load_u16le(p + 6);
	if (h->major != RECFMT_INDEX_MAJOR)
		return false;
	h->seq = recfmt_load_u32le(p + 8);
	h->flags = recfmt_load_u32le(p + 12);
	h->frame_bytes = recfmt_load_u64le(p + 16);
	h->content_bytes = recfmt_load_u64le(p + 24);
	h->frame_hash = recfmt_load_u64le(p + 32);
	h->records_bytes = recfmt_load_u32le(p + 40);
	h->packed = magic == RECFMT_INDEX_PACKED_MAGIC;
	h->stored = p + RECFMT_INDEX_HEAD_BYTES;
	room = size - RECFMT_INDEX_HEAD_BYTES - HASH_BYTES;
	if (h->packed) {
		/* §6.3: a raw prefix of whole records, then one zstd frame at least. */
		h->raw_bytes = recfmt_load_u32le(p + 44);
		h->records = NULL;
		h->stored_bytes = room;
		if (h->raw_bytes >= h->records_bytes || h->raw_bytes > room ||
		    h->records_bytes > PACKED_MAX_RECORDS)
			return false;
	} else {
		h->raw_bytes = h->records_bytes;
		h->records = h->stored;
		h->stored_bytes = h->records_bytes;
		if (h->records_bytes > room)
			return false;
	}
	return recfmt_xxh64(p, size - HASH_BYTES) == recfmt_load_u64le(p + size - HASH_BYTES);
}

bool recfmt_index_unpack(struct recfmt_index_head *h, struct recfmt_index_scratch *s)
{
	const uint8_t *z;
	size_t zlen, n;
	unsigned long long content;

	if (!h->packed || h->records)
		return true;
	z = h->stored + h->raw_bytes;
	zlen = h->stored_bytes - h->raw_bytes;
	/* Exactly one zstd data frame (a later minor may add bytes after it), of the size said. */
	n = zlen >= 4 && recfmt_load_u32le(z) == 0xFD2FB528u ? ZSTD_findFrameCompressedSize(z, zlen) : 0;
	if (!n || ZSTD_isError(n))
		return false;
	content = ZSTD_getFrameContentSize(z, n);
	if (content != (unsigned long long)(h->records_bytes - h->raw_bytes))
		return false;
	if (!s->dctx && !(s->dctx = ZSTD_createDCtx()))
		return false;
	s->buf.len = 0;
	if (recfmt_buf_reserve(&s->buf, h->records_bytes))
		return false;
	memcpy(s->buf.data, h->stored, h->raw_bytes);
	if (ZSTD_decompressDCtx(s->dctx, s->buf.data + h->raw_bytes, (size_t)content, z, n) !=
	    (size_t)content)
		return false; /* an error code, or fewer bytes than its header said */
	s->buf.len = h->records_bytes;
	h->records = s->buf.data;
	return true;
}

void recfmt_index_scratch_fini(struct recfmt_index_scratch *s)
{
	recfmt_buf_fini(&s->buf);
	ZSTD_freeDCtx(s->dctx);
	s->dctx = NULL;
}

bool recfmt_index_patch(uint8_t *frame, size_t len, uint64_t frame_bytes, uint64_t frame_hash,
			uint32_t frame_flags)
{
	struct recfmt_index_head h;
	struct recfmt_record r;
	uint8_t *p = frame + SKIP_HEADER_BYTES;
	size_t size;

	/* The FRAME record first, as it is (a packed frame's raw prefix holds it). */
	if (!recfmt_index_parse(frame, len, &h) ||
	    !recfmt_record_at(h.stored, h.raw_bytes, 0, &r) || r.type != RECFMT_FRAME ||
	    r.size < 12)
		return false;
	size = len - SKIP_HEADER_BYTES;
	/* The FRAME record's flags: h.stored lies inside frame, which is ours to write. */
	recfmt_store_u32le(p + RECFMT_INDEX_HEAD_BYTES + RECFMT_RECORD_HEADER_BYTES + 8, frame_flags);
	recfmt_store_u64le(p + 16, frame_bytes);
	recfmt_store_u64le(p + 32, frame_hash);
	recfmt_store_u64le(p + size - HASH_BYTES, recfmt_xxh64(p, size - HASH_BYTES));
	return true;
}

/* ---------------------------------------------------------------------
 * The reader's side: an index frame held against its data frame.
 */

/* Room in n->stack for depth `want` (stack[1 .. want]). */
static bool sum_room(struct recfmt_nest *n, uint32_t want)
{
	uint32_t cap = n->cap ? n->cap : 64;
	uint32_t *st;

	if (want <= n->cap && n->stack)
		return true;
	if (want > RECFMT_NEST_MAX_DEPTH)
		return false;
	while (cap < want)
		cap *= 2;
	st = realloc(n->stack, ((size_t)cap + 2) * sizeof(*st));
	if (!st)
		return false;
	n->stack = st;
	n->cap = cap;
	return true;
}

enum recfmt_status recfmt_block_sum(const struct recfmt_record *rec, struct recfmt_nest *n,
				    struct recfmt_block_index *b, struct recfmt_error *err)
{
	struct recfmt_events_iter it;
	enum recfmt_status st = recfmt_events_open(rec, &it, err);
	uint64_t ticks, prev;
	uint32_t code;
	int rc;

	if (st != RECFMT_OK)
		return st;
	memset(b, 0, sizeof(*b));
	b->thread = it.thread;
	b->nr_events = it.nr_events;
	b->first_ticks = prev = it.ticks;
	if (it.ticks < n->last_ticks)
		n->broken = true; /* the clock went back since the thread's last block */
	b->depth_start = b->depth_low = n->depth;
	while ((rc = recfmt_events_next(&it, &ticks, &code)) > 0) {
		n->broken |= ticks < prev;
		prev = ticks;
		if (!RECFMT_CODE_IS_EXIT(code)) {
			b->enters++;
			if (!n->broken && !sum_room(n, n->depth + 1))
				n->broken = true; /* too deep (or out of memory) */
			if (!n->broken)
				n->stack[++n->depth] = code | 1u;
		} else if (!n->broken && n->depth) {
			if (n->stack[n->depth] != code) {
				n->broken = true; /* an inner enter left (longjmp) */
			} else {
				n->depth--;
				b->depth_low = n->depth < b->depth_low ? n->depth : b->depth_low;
			}
		}
		/* An exit with nothing open closes nothing. */
	}
	if (rc < 0 || !recfmt_events_check_end(&it)) {
		snprintf(err->message, sizeof(err->message), "EVENTS block does not decode");
		return RECFMT_CORRUPT;
	}
	b->last_ticks = n->last_ticks = prev;
	b->depth_end = n->depth;
	b->flags = n->broken ? 0 : RECFMT_BLOCK_NESTED;
	return RECFMT_OK;
}

/* The first field where the claim c differs from the sum s, or NULL. */
static const char *sum_differs(const struct recfmt_block_index *c,
			       const struct recfmt_block_index *s, bool incomplete, bool gave_up)
{
	if (c->thread != s->thread)
		return "thread";
	if (c->nr_events != s->nr_events)
		return "events";
	if (c->first_ticks != s->first_ticks)
		return "first ticks";
	/* A block the writer did not sum up (§6.1, INCOMPLETE): as recfmt_index_build() puts it. */
	if (incomplete && c->flags == 0 && c->last_ticks == c->first_ticks && !c->enters &&
	    !c->depth_start && !c->depth_low && !c->depth_end)
		return NULL;
	if (c->last_ticks != s->last_ticks)
		return "last ticks";
	if (c->enters != s->enters)
		return "enters";
	if (!(c->flags & RECFMT_BLOCK_NESTED))
		return NULL; /* a writer may give up following the nesting */
	if (!(s->flags & RECFMT_BLOCK_NESTED) || gave_up)
		return "NESTED flag (the thread's nesting is not followed)";
	if (c->depth_start != s->depth_start)
		return "depth at its start";
	if (c->depth_low != s->depth_low)
		return "lowest depth";
	if (c->depth_end != s->depth_end)
		return "depth at its end";
	return NULL;
}

bool recfmt_index_compare(const struct recfmt_index_head *h, const uint8_t *data, size_t len,
			  struct recfmt_index_thread *(*thread_of)(void *ctx, uint32_t serial),
			  void *ctx, char *why, size_t why_bytes)
{
	struct recfmt_cursor c;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	size_t pos = 0;
	uint32_t nr = 0, block = 0;
	bool left_out = false;

	recfmt_cursor_init(&c, data, len);
	while (recfmt_cursor_next(&c, &rec, &err) == RECFMT_OK) {
		struct recfmt_record at; /* the index frame's record in rec's place, */
		const struct recfmt_record *r; /* &at, or NULL if it holds none */

		if (rec.type == RECFMT_ANNOTS || rec.type == RECFMT_COUNTERS ||
		    rec.type == RECFMT_SAMPLES) {
			left_out = true;
			continue;
		}
		r = h && recfmt_record_at(h->records, h->records_bytes, pos, &at) ? &at : NULL;
		if (rec.type == RECFMT_EVENTS && rec.size >= 4) {
			struct recfmt_index_thread *t = thread_of(ctx, recfmt_load_u32le(rec.payload));
			struct recfmt_block_index sum, claim;
			const char *d;

			if (recfmt_block_sum(&rec, &t->nest, &sum, &err) != RECFMT_OK)
				return true; /* damage: the frame's own problem */
			if (!h) {
				block++;
				nr++;
				continue;
			}
			if (!r || r->type != RECFMT_BLOCK_INDEX || !recfmt_block_index_read(r, &claim)) {
				snprintf(why, why_bytes,
					 "record %" PRIu32 " is an EVENTS block, its index frame "
					 "does not say so",
					 nr);
				return false;
			}
			d = sum_differs(&claim, &sum, h->flags & RECFMT_INDEX_INCOMPLETE,
					t->gave_up);
			if (d) {
				snprintf(why, why_bytes,
					 "its index frame's sums of EVENTS block %" PRIu32
					 " (thread %" PRIu32 ") differ from the block: %s",
					 block, sum.thread, d);
				return false;
			}
			t->gave_up |= !(claim.flags & RECFMT_BLOCK_NESTED);
			block++;
			nr++;
			pos += RECFMT_RECORD_HEADER_BYTES + (size_t)r->size;
			continue;
		}
		nr++;
		if (!h)
			continue;
		if (!r || r->type != rec.type || r->size != rec.size ||
		    memcmp(r->payload, rec.payload, rec.size) != 0) {
			snprintf(why, why_bytes,
				 "record %" PRIu32 " (type %u) differs from its copy in the index frame",
				 nr - 1, rec.type);
			return false;
		}
		pos += RECFMT_RECORD_HEADER_BYTES + (size_t)rec.size;
	}
	if (!h)
		return true;
	if (pos != h->records_bytes) {
		snprintf(why, why_bytes, "its index frame holds records the frame does not");
		return false;
	}
	if (left_out != !!(h->flags & RECFMT_INDEX_PARTIAL)) {
		snprintf(why, why_bytes, "its index frame's PARTIAL flag is %s",
			 left_out ? "clear, records are left out" : "set, nothing is left out");
		return false;
	}
	return true;
}
