/* SPDX-License-Identifier: MIT */
/*
 * compress.c - one frame's records into one independent zstd frame, with the
 * content size and an XXH64 checksum in it (FORMAT.md §2). The caller owns
 * the buffers and decides when a frame ends.
 *
 * The matches of a frame come from our own sequence producer (zstd's
 * block-level sequence producer API) rather than zstd's level-1 match
 * finder, because we know what the bytes are (docs/DESIGN.md, "The
 * writer's cost"). An EVENTS block's deltas column (FORMAT.md §3.6) is time
 * noise: a match finder spends most of its time there finding short
 * matches that save little and cost a sequence each to encode, and to
 * decode. There the producer keeps only repeats of a call sequence's
 * timings (DELTAS_MATCH_MIN_BYTES or more, tried every DELTAS_FIRST_STEP
 * bytes or more; longer ones, fewer tries, in fast mode): the rest goes to
 * zstd's Huffman coder as literals. Elsewhere -- the ids column, which repeats at the
 * period of the program's calls, and the other records -- a greedy matcher
 * tries the last offset first, then an 8-byte hash, and skips ahead faster
 * the longer it finds nothing. The frame is an ordinary zstd frame with the
 * same content: only how zstd chose to encode it differs.
 */
#define ZSTD_STATIC_LINKING_ONLY /* the sequence producer API (zstd >= 1.5.4) */
#include "recfmt.h"

#include <errno.h>
#include <stdlib.h>
#include <zstd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Deltas columns shorter than this are matched like the rest. The DELTAS_
 * settings trade size for speed: 16 and 4 made recorded programs' files a
 * third smaller than 32 and 8 at the same speed or faster (fewer literals
 * to code; docs/BENCHMARKS.md, "Files under pressure"); fast mode keeps 32
 * and 8, half the time of 16 and 4 there (its frames are compressed again
 * at the end: librec/compact.c). */
#define LITERAL_RANGE_MIN_BYTES 256u
#define MATCH_MIN_BYTES 8u
#define DELTAS_MATCH_MIN_BYTES 16u
#define DELTAS_FIRST_STEP 4u
#define DELTAS_FAST_MATCH_MIN_BYTES 32u
#define DELTAS_FAST_FIRST_STEP 8u
#define HASH_LOG 12u

/* A deltas column of the frame being compressed: long matches only. */
struct literal_range {
	const uint8_t *begin, *end;
};

struct recfmt_compressor {
	ZSTD_CCtx *cctx;
	/* The parts gathered end to end, for one-shot compression (see below). */
	struct recfmt_buf flat;
	/* Literals left raw (recfmt_compressor_set_fast()). */
	bool fast;
	bool avx2; /* match_length_avx2() */
	/* Sequence producer: the input of the current frame and its deltas columns. */
	bool producer;
	const uint8_t *in_begin, *in_end;
	struct literal_range *ranges;
	size_t nr_ranges, ranges_cap, next_range;
	uint32_t table[1u << HASH_LOG]; /* block offset + 1 of a position; 0: none */
};

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t hash8(uint64_t v)
{
	return (uint32_t)((v * 0x9E3779B185EBCA87ull) >> (64 - HASH_LOG));
}

/* Bytes equal at p and q, from p up to end (q < p: may overlap, as LZ77 copies). */
static inline size_t match_length(const uint8_t *p, const uint8_t *q, const uint8_t *end)
{
	const uint8_t *start = p;

	while (p + 8 <= end) {
		uint64_t x = load64(p) ^ load64(q);

		if (x)
			return (size_t)(p - start) + (size_t)(__builtin_ctzll(x) >> 3);
		p += 8;
		q += 8;
	}
	while (p < end && *p == *q) {
		p++;
		q++;
	}
	return (size_t)(p - start);
}

#if defined(__x86_64__)
/*
 * match_length() 32 bytes a compare. Most of what the sequence producer
 * reads is inside matches (a loop's ids column is one long repeat, its
 * timings many), and this loop was half of match_run()'s time 8 bytes at a
 * time, reading a body the encoder had just written.
 */
__attribute__((target("avx2"))) static size_t match_length_avx2(const uint8_t *p, const uint8_t *q,
								 const uint8_t *end)
{
	const uint8_t *start = p;

	while (p + 32 <= end) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
		__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)q);
		unsigned diff = ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b));

		if (diff)
			return (size_t)(p - start) + (size_t)__builtin_ctz(diff);
		p += 32;
		q += 32;
	}
	return (size_t)(p - start) + match_length(p, q, end);
}
#endif

static inline size_t match_length_best(const struct recfmt_compressor *c, const uint8_t *p,
				       const uint8_t *q, const uint8_t *end)
{
#if defined(__x86_64__)
	if (c->avx2)
		return match_length_avx2(p, q, end);
#else
	(void)c;
#endif
	return match_length(p, q, end);
}

/* How hard to look for matches in one kind of bytes. */
struct match_effort {
	size_t min_bytes;   /* shortest match kept (>= 8) */
	size_t first_step;  /* bytes skipped after the first miss */
	unsigned accel_log; /* the step grows by 1 every 2^accel_log bytes without a match */
};

/* Records and ids columns: every position, as zstd's fast matcher. */
static const struct match_effort effort_ids = { MATCH_MIN_BYTES, 1, 6 };
/* Deltas columns: only long repeats (a loop's timings), few positions tried. */
static const struct match_effort effort_deltas = { DELTAS_MATCH_MIN_BYTES, DELTAS_FIRST_STEP, 3 };
static const struct match_effort effort_deltas_fast = { DELTAS_FAST_MATCH_MIN_BYTES,
							DELTAS_FAST_FIRST_STEP, 3 };

struct parse {
	const uint8_t *b, *e; /* the block */
	const uint8_t *anchor; /* first byte not yet in a sequence */
	ZSTD_Sequence *out;
	size_t nr, cap;
	uint32_t rep; /* the last match's offset */
};

/*
 * Greedy matching from *pp to lim (a match may run on to the block's end).
 * Return: 0, or -1 if the sequences would not fit.
 */
static int match_run(struct recfmt_compressor *c, struct parse *ps, const uint8_t **pp,
		     const uint8_t *lim, const struct match_effort *eff)
{
	const uint8_t *p = *pp, *b = ps->b;
	size_t step = eff->first_step;

	while (p + MATCH_MIN_BYTES <= lim) {
		uint64_t v = load64(p);
		uint32_t h = hash8(v);
		const uint8_t *cand = NULL;
		size_t len;

		if (ps->rep && (size_t)(p - b) >= ps->rep && load64(p - ps->rep) == v)
			cand = p - ps->rep;
		else if (c->table[h] && load64(b + c->table[h] - 1) == v)
			cand = b + c->table[h] - 1;
		c->table[h] = (uint32_t)(p - b) + 1;
		if (cand) {
			len = MATCH_MIN_BYTES + match_length_best(c, p + MATCH_MIN_BYTES,
								  cand + MATCH_MIN_BYTES, ps->e);
			if (len < eff->min_bytes)
				cand = NULL;
		}
		if (!cand) {
			/* Faster and faster over bytes that match nothing. */
			p = step < (size_t)(lim - p) ? p + step : lim;
			step = eff->first_step + ((size_t)(p - ps->anchor) >> eff->accel_log);
			continue;
		}
		if (ps->nr + 2 > ps->cap)
			return -1;
		ps->out[ps->nr++] = (ZSTD_Sequence){ .offset = (unsigned)(p - cand),
						     .litLength = (unsigned)(p - ps->anchor),
						     .matchLength = (unsigned)len,
						     .rep = 0 };
		ps->rep = (uint32_t)(p - cand);
		p += len;
		ps->anchor = p;
		step = eff->first_step;
	}
	*pp = p > lim ? p : lim; /* the rest, too short to match: literals */
	return 0;
}

/*
 * ZSTD_sequenceProducer_F: the parse of one block (at most 128 KiB, no
 * history before it). Return: the number of sequences, the last one the
 * trailing literals; ZSTD_SEQUENCE_PRODUCER_ERROR (zstd's own matcher then
 * does this block) if the block is not in the frame we were given.
 */
static size_t produce_sequences(void *state, ZSTD_Sequence *out, size_t out_cap,
				const void *src, size_t src_size, const void *dict,
				size_t dict_size, int level, size_t window)
{
	struct recfmt_compressor *c = state;
	struct parse ps = { .b = src, .e = (const uint8_t *)src + src_size, .anchor = src,
			    .out = out, .cap = out_cap };
	const uint8_t *p = ps.b;
	size_t r = c->next_range;

	(void)dict;
	(void)dict_size;
	(void)level;
	if (ps.b < c->in_begin || ps.e > c->in_end || src_size > window || out_cap < 2)
		return ZSTD_SEQUENCE_PRODUCER_ERROR;
	/* Blocks come in order, but do not rely on it. */
	while (r > 0 && c->ranges[r - 1].end > ps.b)
		r--;
	while (r < c->nr_ranges && c->ranges[r].end <= ps.b)
		r++;
	memset(c->table, 0, sizeof(c->table));
	while (p < ps.e) {
		int err;

		if (r < c->nr_ranges && c->ranges[r].begin <= p) {
			/* A deltas column, up to its end or the block's. */
			const uint8_t *lim = c->ranges[r].end < ps.e ? c->ranges[r].end : ps.e;

			err = match_run(c, &ps, &p, lim, c->fast ? &effort_deltas_fast : &effort_deltas);
			if (c->ranges[r].end <= p)
				r++;
		} else {
			const uint8_t *lim = r < c->nr_ranges && c->ranges[r].begin < ps.e
						     ? c->ranges[r].begin
						     : ps.e;

			err = match_run(c, &ps, &p, lim, &effort_ids);
		}
		if (err)
			return ZSTD_SEQUENCE_PRODUCER_ERROR;
	}
	c->next_range = r;
	ps.out[ps.nr++] = (ZSTD_Sequence){ .offset = 0, .litLength = (unsigned)(ps.e - ps.anchor),
					   .matchLength = 0, .rep = 0 };
	return ps.nr;
}

/* The deltas columns of the EVENTS records in [p, end), for produce_sequences(). */
static int find_literal_ranges(struct recfmt_compressor *c, const uint8_t *p, const uint8_t *end)
{
	c->nr_ranges = c->next_range = 0;
	c->in_begin = p;
	c->in_end = end;
	while ((size_t)(end - p) >= RECFMT_RECORD_HEADER_BYTES) {
		uint32_t size = recfmt_load_u32le(p + 4);
		const uint8_t *payload = p + RECFMT_RECORD_HEADER_BYTES;

		if (size > (size_t)(end - payload))
			break;
		if (p[0] == RECFMT_EVENTS && size >= 24 &&
		    recfmt_load_u32le(payload + 16) <= size - 24 &&
		    size - 24 - recfmt_load_u32le(payload + 16) >= LITERAL_RANGE_MIN_BYTES) {
			if (c->nr_ranges == c->ranges_cap) {
				size_t cap = c->ranges_cap ? 2 * c->ranges_cap : 64;
				struct literal_range *q = realloc(c->ranges, cap * sizeof(*q));

				if (!q)
					return -ENOMEM;
				c->ranges = q;
				c->ranges_cap = cap;
			}
			c->ranges[c->nr_ranges++] = (struct literal_range){
				payload + 24 + recfmt_load_u32le(payload + 16), payload + size
			};
		}
		p = payload + size;
	}
	return 0;
}

struct recfmt_compressor *recfmt_compressor_create(int level)
{
	struct recfmt_compressor *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cctx = ZSTD_createCCtx();
	if (!c->cctx) {
		free(c);
		return NULL;
	}
	c->avx2 = recfmt_cpu_avx2();
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 1);
	/*
	 * Our sequences at the fast levels librec uses, when the zstd we run
	 * is the one we were compiled against (the experimental API's
	 * parameter numbers may differ in another). A block outside the
	 * frame we were given falls back to zstd's matcher.
	 */
	if (level <= 1 && ZSTD_versionNumber() == ZSTD_VERSION_NUMBER &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_enableSeqProducerFallback, 1))) {
		ZSTD_registerSequenceProducer(c->cctx, c, produce_sequences);
		c->producer = true;
	}
	return c;
}

void recfmt_compressor_destroy(struct recfmt_compressor *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->cctx);
	recfmt_buf_fini(&c->flat);
	free(c->ranges);
	free(c);
}

/*
 * One-shot compression of one contiguous input. Streaming several parts
 * (ZSTD_compressStream2 with ZSTD_e_continue) made zstd copy every byte into
 * its own window buffer and match with its slower extDict block compressor
 * once that buffer wrapped; gathering the parts (lead and meta are small,
 * body is most of it) costs one memcpy and compresses faster. The frame
 * holds the same bytes once decompressed.
 */
int recfmt_compress_frame_parts(struct recfmt_compressor *c, const struct recfmt_buf *parts,
				size_t nr_parts, struct recfmt_buf *out)
{
	size_t total = 0, n, nonempty = 0;
	const uint8_t *src = NULL;

	for (size_t i = 0; i < nr_parts; i++) {
		total += parts[i].len;
		if (parts[i].len) {
			nonempty++;
			src = parts[i].data;
		}
	}
	if (total > RECFMT_MAX_FRAME_BYTES)
		return -E2BIG;
	out->len = 0;
	if (recfmt_buf_reserve(out, ZSTD_compressBound(total)))
		return -ENOMEM;
	if (nonempty > 1) {
		c->flat.len = 0;
		if (recfmt_buf_reserve(&c->flat, total))
			return -ENOMEM;
		for (size_t i = 0; i < nr_parts; i++) {
			if (parts[i].len)
				memcpy(c->flat.data + c->flat.len, parts[i].data, parts[i].len);
			c->flat.len += parts[i].len;
		}
		src = c->flat.data;
	}
	if (c->producer && total && find_literal_ranges(c, src, src + total))
		return -ENOMEM;
	ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
	n = ZSTD_compress2(c->cctx, out->data, out->cap, src, total);
	if (ZSTD_isError(n))
		return -ENOMEM;
	out->len = n;
	return 0;
}

void recfmt_compressor_set_fast(struct recfmt_compressor *c, bool fast)
{
	if (fast == c->fast)
		return;
	/* Sticky parameter: applies to every frame until changed again. */
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_literalCompressionMode,
			       fast ? ZSTD_ps_disable : ZSTD_ps_auto);
	c->fast = fast;
}

int recfmt_compress_frame(struct recfmt_compressor *c, const struct recfmt_buf *in,
			  struct recfmt_buf *out)
{
	return recfmt_compress_frame_parts(c, in, 1, out);
}
