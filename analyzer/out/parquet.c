/* SPDX-License-Identifier: MIT */
/*
 * parquet.c - the Parquet writer of parquet.h, written from the Apache
 * Parquet specification (parquet-format: README.md, Encodings.md and
 * parquet.thrift). Layout of a file:
 *
 *   "PAR1" | row group 0 | row group 1 | ... | FileMetaData | u32 len | "PAR1"
 *
 * A row group holds one column chunk per column, in schema order; a chunk is
 * an optional dictionary page (strings) followed by data pages, each a
 * thrift PageHeader then its body, a zstd frame (every chunk's codec is
 * ZSTD, docs/EXPORT.md): compressed, or, in a chunk whose first page zstd
 * does not shrink by 1/16, made of raw (stored) blocks (format/rawframe.c),
 * which costs a copy and a hash instead of compression. A v1 data page body is
 *   [u32 length + RLE/bit-packed definition levels]   (OPTIONAL columns)
 *   values: integers DELTA_BINARY_PACKED, booleans PLAIN (bit-packed),
 *   strings: u8 bit width + RLE/bit-packed dictionary indices.
 * All thrift structures use the compact protocol (field deltas in the
 * high nibble, zigzag varints), encoded by the small tp_* helpers below.
 */
#include "out/parquet.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define PQ_AVX2 1 /* ints_avx2() when the CPU has AVX2 */
#endif

#include "engine/events.h" /* tt_portable() */
#include "recfmt.h"
#include "common/hmap.h"
#include "common/xalloc.h"

#define PQ_MAX_COLS 1000

/* parquet.thrift enums */
enum { PT_BOOLEAN = 0, PT_INT32 = 1, PT_INT64 = 2, PT_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_DELTA_BINARY_PACKED = 5, ENC_RLE_DICTIONARY = 8 };
enum { CODEC_ZSTD = 6 };
/* A chunk's pages as zstd frames of raw blocks; its codec is CODEC_ZSTD. */
enum { CHUNK_ZSTD_STORED = -2 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CT_UTF8 = 0 };

/* thrift compact protocol type codes */
enum {
	TC_TRUE = 1, TC_FALSE = 2, TC_BYTE = 3, TC_I16 = 4, TC_I32 = 5, TC_I64 = 6,
	TC_BINARY = 8, TC_LIST = 9, TC_STRUCT = 12
};

/* ---- growable byte buffer ---- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void buf_reserve(struct buf *b, size_t more)
{
	if (b->n + more <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->n + more)
		cap *= 2;
	b->p = tt_xrealloc(b->p, cap);
	b->cap = cap;
}

static void buf_put(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void buf_u8(struct buf *b, uint8_t v)
{
	buf_reserve(b, 1);
	b->p[b->n++] = v;
}

static void buf_le32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	buf_put(b, x, 4);
}

static void buf_varint(struct buf *b, uint64_t v)
{
	buf_reserve(b, 10);
	while (v >= 0x80) {
		b->p[b->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->n++] = (uint8_t)v;
}

/* ---- thrift compact protocol ---- */

struct tp {
	struct buf *b;
	int16_t last[16]; /* last field id per open struct */
	int depth;
};

static uint64_t zigzag64(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void tp_field(struct tp *t, int16_t fid, uint8_t type)
{
	int16_t delta = (int16_t)(fid - t->last[t->depth]);
	if (delta > 0 && delta <= 15) {
		buf_u8(t->b, (uint8_t)(delta << 4 | type));
	} else {
		buf_u8(t->b, type);
		buf_varint(t->b, zigzag64(fid));
	}
	t->last[t->depth] = fid;
}

static void tp_i32(struct tp *t, int16_t fid, int32_t v)
{
	tp_field(t, fid, TC_I32);
	buf_varint(t->b, zigzag64(v));
}

static void tp_i64(struct tp *t, int16_t fid, int64_t v)
{
	tp_field(t, fid, TC_I64);
	buf_varint(t->b, zigzag64(v));
}

static void tp_bin(struct tp *t, int16_t fid, const void *p, size_t n)
{
	tp_field(t, fid, TC_BINARY);
	buf_varint(t->b, n);
	buf_put(t->b, p, n);
}

static void tp_str(struct tp *t, int16_t fid, const char *s)
{
	tp_bin(t, fid, s, strlen(s));
}

static void tp_push(struct tp *t)
{
	t->last[++t->depth] = 0;
}

/* A struct-valued field: its fields follow, then tp_end. */
static void tp_struct(struct tp *t, int16_t fid)
{
	tp_field(t, fid, TC_STRUCT);
	tp_push(t);
}

/* A struct as a list element (no field header). */
static void tp_elem_struct(struct tp *t)
{
	tp_push(t);
}

static void tp_end(struct tp *t)
{
	buf_u8(t->b, 0); /* STOP */
	t->depth--;
}

static void tp_list(struct tp *t, int16_t fid, uint8_t elem, size_t n)
{
	tp_field(t, fid, TC_LIST);
	if (n < 15) {
		buf_u8(t->b, (uint8_t)(n << 4 | elem));
	} else {
		buf_u8(t->b, (uint8_t)(0xf0 | elem));
		buf_varint(t->b, n);
	}
}

/* An empty struct as a field (logical type STRING, TYPE_ORDER). */
static void tp_empty(struct tp *t, int16_t fid)
{
	tp_struct(t, fid);
	tp_end(t);
}

/* ---- RLE / bit-packed hybrid (Encodings.md) ---- */

static size_t run_at(const uint32_t *v, size_t i, size_t n, size_t cap)
{
	size_t j = i + 1;
	while (j < n && j - i < cap && v[j] == v[i])
		j++;
	return j - i;
}

/* Appends the hybrid encoding of v[0, n) at bit width bw (1..32). */
static void rle_hybrid(struct buf *b, const uint32_t *v, size_t n, unsigned bw)
{
	size_t vbytes = (bw + 7) / 8;
	size_t i = 0;
	while (i < n) {
		size_t r = run_at(v, i, n, SIZE_MAX);
		if (r >= 8) {
			buf_varint(b, (uint64_t)r << 1);
			for (size_t k = 0; k < vbytes; k++)
				buf_u8(b, (uint8_t)(v[i] >> (8 * k)));
			i += r;
			continue;
		}
		/* Bit-packed groups of 8 until a run of 8 begins at a group edge. */
		size_t start = i, groups = 0;
		do {
			groups++;
			i += 8;
		} while (i < n && run_at(v, i, n, 8) < 8);
		if (i > n)
			i = n;
		buf_varint(b, (uint64_t)groups << 1 | 1);
		size_t nbytes = groups * bw; /* 8 values * bw bits = bw bytes */
		buf_reserve(b, nbytes);
		uint8_t *out = b->p + b->n;
		memset(out, 0, nbytes);
		for (size_t k = 0; k < groups * 8; k++) {
			uint64_t x = start + k < n ? v[start + k] : 0; /* padding */
			size_t bit = k * bw;
			for (unsigned s = 0; s < bw; s++, bit++)
				if (x >> s & 1)
					out[bit >> 3] |= (uint8_t)(1u << (bit & 7));
		}
		b->n += nbytes;
	}
}

/* The length of the run of bytes equal to v[i] from i (at most cap), a
 * word at a time. */
static size_t run_at8(const uint8_t *v, size_t i, size_t n, size_t cap)
{
	size_t j = i + 1, end = n - i > cap ? i + cap : n;
	uint64_t pat = v[i] * 0x0101010101010101ull, x;
	while (j + 8 <= end && (memcpy(&x, v + j, 8), x == pat))
		j += 8;
	while (j < end && v[j] == v[i])
		j++;
	return j - i;
}

/* rle_hybrid(b, v, n, 1) for definition levels (0 or 1) stored as bytes:
 * the same runs and groups, found a word at a time (most pages of an
 * export have no null, or few). */
static void rle_hybrid_defs(struct buf *b, const uint8_t *v, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t r = run_at8(v, i, n, SIZE_MAX);
		if (r >= 8) {
			buf_varint(b, (uint64_t)r << 1);
			buf_u8(b, v[i]);
			i += r;
			continue;
		}
		size_t start = i, groups = 0;
		do {
			groups++;
			i += 8;
		} while (i < n && run_at8(v, i, n, 8) < 8);
		if (i > n)
			i = n;
		buf_varint(b, (uint64_t)groups << 1 | 1);
		buf_reserve(b, groups);
		uint8_t *out = b->p + b->n;
		for (size_t g = 0; g < groups; g++) {
			uint8_t x = 0;
			for (size_t k = 0; k < 8; k++)
				if (start + 8 * g + k < n) /* else padding */
					x |= (uint8_t)((v[start + 8 * g + k] & 1) << k);
			out[g] = x;
		}
		b->n += groups;
	}
}

static unsigned bit_width(uint32_t max)
{
	unsigned w = 1;
	while (w < 32 && (max >> w) != 0)
		w++;
	return w;
}

/* ---- DELTA_BINARY_PACKED (Encodings.md) ----
 *
 * Integers as differences: a header (block size 128, 4 miniblocks of 32,
 * the count, the first value), then per block the smallest delta and, per
 * miniblock, its bit width and the deltas minus that smallest one packed
 * LSB first. Times and ids that grow by small steps shrink to a few bits
 * each before zstd sees them: the activations table compresses to about a
 * third, in a third of the time, of PLAIN 8-byte values. Arithmetic wraps
 * (two's complement), as the spec says, so any int64 sequence round-trips.
 */
#define DBP_BLOCK 128
#define DBP_MINI 32

/* Packs the 32 values of d less sub, each then < 2^w, LSB first: 4 * w
 * bytes. With w a constant (pack32's cases) the loop unrolls and every
 * shift, test and store is known at compile time. */
static inline __attribute__((always_inline)) void pack32_w(uint8_t *o, const uint64_t *d,
							   unsigned w, uint64_t sub)
{
	uint64_t acc = 0;
	unsigned bits = 0; /* in acc, < 64 */
#if defined(__clang__)
#pragma clang loop unroll(full)
#else
#pragma GCC unroll 32
#endif
	for (size_t j = 0; j < DBP_MINI; j++) {
		uint64_t x = d[j] - sub;
		acc |= x << bits;
		if (bits + w >= 64) {
			memcpy(o, &acc, 8); /* little-endian host */
			o += 8;
			acc = bits ? x >> (64 - bits) : 0;
			bits = bits + w - 64;
		} else {
			bits += w;
		}
	}
	memcpy(o, &acc, bits / 8); /* 32 * w bits: whole bytes */
}

static void pack32(uint8_t *o, const uint64_t *d, unsigned w, uint64_t sub)
{
#define PK(n) case n: pack32_w(o, d, n, sub); break;
#define PK8(n) PK(n + 1) PK(n + 2) PK(n + 3) PK(n + 4) PK(n + 5) PK(n + 6) PK(n + 7) PK(n + 8)
	switch (w) {
	PK8(0) PK8(8) PK8(16) PK8(24) PK8(32) PK8(40) PK8(48) PK8(56)
	default: break;
	}
#undef PK8
#undef PK
}

static void zigzag_varint(struct buf *b, int64_t v)
{
	buf_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* Appends one block of k (1..DBP_BLOCK) wrapping differences d: the
 * smallest, the four miniblocks' bit widths (of their largest less the
 * smallest), and the miniblocks packed (the last one padded, as the spec
 * says, with values that are 0 once reduced). d is padded in place. */
static void dbp_block_lohi(struct buf *b, uint64_t *d, size_t k, const int64_t *lo,
			   const int64_t *hi)
{
	size_t nmini = (k + DBP_MINI - 1) / DBP_MINI;
	int64_t min = lo[0];
	for (size_t m = 1; m < nmini; m++)
		min = lo[m] < min ? lo[m] : min;
	for (size_t j = k; j < nmini * DBP_MINI; j++)
		d[j] = (uint64_t)min; /* padding of the last miniblock: 0 once reduced */
	/* min, 4 widths, at most 4 miniblocks of 64-bit values */
	buf_reserve(b, 10 + DBP_BLOCK / DBP_MINI + DBP_BLOCK * 8 + 16);
	zigzag_varint(b, min);
	unsigned widths[DBP_BLOCK / DBP_MINI];
	for (size_t m = 0; m < DBP_BLOCK / DBP_MINI; m++) {
		uint64_t top = m < nmini ? (uint64_t)hi[m] - (uint64_t)min : 0;
		widths[m] = top ? 64 - (unsigned)__builtin_clzll(top) : 0;
		b->p[b->n++] = (uint8_t)widths[m];
	}
	for (size_t m = 0; m < nmini; m++) {
		unsigned w = widths[m];
		if (!w)
			continue;
		pack32(b->p + b->n, d + m * DBP_MINI, w, (uint64_t)min);
		b->n += (size_t)w * DBP_MINI / 8; /* 32 * w bits: whole bytes */
	}
}

/* dbp_block_lohi() given each miniblock's smallest and largest difference. */
static void dbp_block(struct buf *b, uint64_t *d, size_t k)
{
	size_t nmini = (k + DBP_MINI - 1) / DBP_MINI;
	int64_t lo[DBP_BLOCK / DBP_MINI], hi[DBP_BLOCK / DBP_MINI];
	for (size_t m = 0; m < nmini; m++) {
		size_t j0 = m * DBP_MINI, j1 = j0 + DBP_MINI < k ? j0 + DBP_MINI : k;
		int64_t l = INT64_MAX, h = INT64_MIN;
		for (size_t j = j0; j < j1; j++) {
			int64_t x = (int64_t)d[j];
			l = x < l ? x : l;
			h = x > h ? x : h;
		}
		lo[m] = l;
		hi[m] = h;
	}
	dbp_block_lohi(b, d, k, lo, hi);
}

/* The page header of DELTA_BINARY_PACKED: block size, miniblocks per
 * block, the count, the first value (0 for none). */
static void dbp_header(struct buf *b, size_t n, int64_t first)
{
	buf_varint(b, DBP_BLOCK);
	buf_varint(b, DBP_BLOCK / DBP_MINI);
	buf_varint(b, n);
	zigzag_varint(b, n ? first : 0);
}

static void delta_binary_packed(struct buf *b, const void *vals, bool is64, size_t n)
{
	const int64_t *v64 = vals;
	const int32_t *v32 = vals;
	dbp_header(b, n, !n ? 0 : is64 ? v64[0] : v32[0]);
	uint64_t d[DBP_BLOCK];
	for (size_t i = 1; i < n; i += DBP_BLOCK) {
		size_t k = n - i < DBP_BLOCK ? n - i : DBP_BLOCK;
		/* wrapping differences, as int32 for INT32 columns */
		if (is64) {
			for (size_t j = 0; j < k; j++)
				d[j] = (uint64_t)v64[i + j] - (uint64_t)v64[i + j - 1];
		} else {
			for (size_t j = 0; j < k; j++)
				d[j] = (uint64_t)(int64_t)(int32_t)((uint32_t)v32[i + j] -
								    (uint32_t)v32[i + j - 1]);
		}
		dbp_block(b, d, k);
	}
}

/* ---- columns ---- */

struct dict_slot {
	uint32_t off, len; /* in dict bytes; len UINT32_MAX = empty slot */
	uint32_t hash;
	uint32_t idx;      /* dictionary index */
};

struct col {
	char *name;
	enum tt_pq_type type;
	bool nullable;
	uint8_t size;       /* bytes of a buffered value */
	/* Rows by values (PQ_VALUES): the page being filled, encoded when it
	 * fills, while its values are in cache. */
	uint8_t *defs;      /* 1 present, 0 null (nullable only); one per row */
	void *vals;         /* non-null values: int64_t, int32_t, uint8_t or uint32_t indices */
	size_t nr_vals;
	/* Rows by rows (PQ_ROWS), the encoder's: the page being encoded, a
	 * slice at a time (encode_slice): its definition levels, its values
	 * so far as DELTA_BINARY_PACKED blocks (integers) or PLAIN bits
	 * (booleans), the differences of the block not yet packed. */
	uint8_t *pdefs;
	struct buf pbody;
	uint32_t pnv;       /* values (not nulls) in the page */
	unsigned nd;        /* differences in d */
	int64_t pfirst, pprev, pmin, pmax;
	uint64_t d[DBP_BLOCK];
	int64_t dlo[DBP_BLOCK / DBP_MINI], dhi[DBP_BLOCK / DBP_MINI]; /* per miniblock of d */
	/* Below: the encoder's (the encoding thread's with tt_pq_opts.encode_thread,
	 * else the caller's). The current row group's data pages so far
	 * (headers and zstd bodies), its statistics so far. */
	struct buf pages;
	int64_t pages_unc, pages_comp;
	int codec;          /* its pages' framing: -1 until its first page, then CODEC_ZSTD or
			     * CHUNK_ZSTD_STORED (write_page) */
	uint64_t nulls;
	bool have_minmax;
	int64_t min, max;
	/* strings: the dictionary of this row group */
	struct buf dict;    /* PLAIN: u32 length + bytes per entry */
	struct dict_slot *slots;
	uint32_t *entry_off; /* per index: offset of its length prefix in dict */
	size_t nr_slots, nr_entries;
};

struct chunk_meta {
	int64_t num_values, unc_size, comp_size, data_off, dict_off;
	int codec;
	int64_t nulls;
	bool have_minmax;
	uint8_t *min, *max; /* PLAIN bytes (no length prefix for strings) */
	uint32_t min_len, max_len;
};

struct rg_meta {
	int64_t rows, unc_size, comp_size, file_off;
	struct chunk_meta *chunks; /* one per column */
};

/*
 * The file and what its footer needs, shared by a writer and its siblings
 * (tt_pq_sibling()): each writer encodes its own row groups and writes each
 * whole, chunks and metadata, under mu, so the row groups of several
 * threads interleave in the file and the footer lists them in file order.
 * err: the first error of any of them (an atomic compare-exchange; read
 * with an atomic load). open: writers not closed yet; the first writer,
 * closed last, writes the footer and frees this.
 */
struct pq_file {
	pthread_mutex_t mu;
	FILE *f;
	uint64_t off;
	int err;
	uint64_t total_rows; /* rows of the row groups written */
	struct rg_meta *rgs;
	size_t nr_rgs;
	unsigned open;
	char **kv;
	size_t nr_kv;
};

/*
 * A table of integers and booleans written by tt_pq_int_row*() (PQ_ROWS)
 * goes to the encoder in slices of rows as the caller stored them (row
 * major, 8 bytes a value): the encoder takes each slice a column at a
 * time, straight into that column's delta-packed page (encode_slice), so
 * the values are stored once and read once, with no column staging and no
 * page of raw values. A slice ends early where a page or a row group ends.
 * With an encoding thread the caller fills one slice of a ring while the
 * thread encodes the ones before (slices of PQ_SLICE_ROWS rows: the ring
 * stays in the second-level caches); without, one slice of PQ_STAGE_ROWS
 * rows (in the first-level cache) is encoded each time it fills.
 */
struct slice {
	int64_t *vals;   /* rows x nr_cols values */
	uint64_t *nulls; /* per row: bit i, column i is null */
	uint64_t any;    /* the OR of nulls */
	uint32_t rows;
	bool end_pg, end_rg; /* a page, a row group ends with this slice */
};

#define PQ_SLICES 16
#define PQ_SLICE_ROWS 512
#define PQ_STAGE_ROWS 128

enum pq_mode { PQ_UNDECIDED, PQ_VALUES, PQ_ROWS };

/*
 * Threads (tt_pq_opts.encode_thread, PQ_ROWS tables only): the caller's
 * thread fills the slice slices[fill] (and cur, rg_rows, pg_rows,
 * rg_bytes, total_rows) and hands it over under mu; the encoding thread
 * takes the slices in order (slices[head]) and alone touches what follows
 * "the encoder's" below and in struct col, until tt_pq_close() joins it.
 * err is shared: set once by either thread (an atomic compare-exchange),
 * read with an atomic load. Without the thread, the caller does it all.
 */
struct tt_pq {
	/* the caller's */
	struct col *cols;
	size_t nr_cols, cur;
	uint64_t rg_rows, total_rows;
	uint32_t pg_rows; /* rows in the current page */
	size_t rg_bytes;
	size_t row_bytes;    /* buffered bytes of a row without nulls */
	uint64_t null_ok;    /* bit i: column i is nullable (i < 64) */
	bool has_str;
	struct tt_pq_opts o;
	struct pq_file *file; /* shared with the siblings */
	bool sibling;         /* made by tt_pq_sibling() */
	enum pq_mode mode;   /* decided by the first row: values or rows */
	bool int_table;      /* no string column, at most 64 columns: PQ_ROWS allowed */
	size_t page_cap;     /* rows of a page at most */
	struct slice *slices;
	unsigned nr_slices, slice_rows, fill;
	/* PQ_ROWS: the row tt_pq_int_row_begin() returns next, in slices[fill];
	 * rows that can end before a slice, page or row group ends by rows
	 * (room, of room0 at the last edge: rows ended since then are not yet
	 * in pg_rows, rg_rows, total_rows). */
	int64_t *next_row;
	struct slice *sl;    /* slices[fill] */
	uint32_t room, room0;
	uint32_t open_mark;  /* cur while a row is open: nr_cols + 1 */
	uint64_t col_mask;   /* bits of the columns */
	/* the encoder's */
	uint64_t enc_rg_rows; /* rows encoded into the current row group */
	uint32_t enc_pg_rows; /* rows of the page being encoded (PQ_ROWS) */
	bool avx2;            /* the CPU has AVX2: ints_avx2() */
	int64_t *tcol;        /* a column of a slice, contiguous (with avx2) */
	ZSTD_CCtx *zc;
	struct buf page, comp, hdr;
	/* the hand-over (encode_thread) */
	bool threaded, stop;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, done; /* a slice queued; a slice encoded */
	unsigned head, queued;	   /* slices[head] is the oldest of queued */
	/* A thread asleep on work (the encoder) or on done (the caller) is
	 * woken when half the ring is ready for it, not at every slice: fewer
	 * sleeps and wake-ups. */
	bool enc_asleep, caller_asleep;
};

static inline int get_err(const struct tt_pq *w)
{
	return __atomic_load_n(&w->file->err, __ATOMIC_RELAXED);
}

static void set_err(struct tt_pq *w, int e)
{
	int zero = 0;

	__atomic_compare_exchange_n(&w->file->err, &zero, e, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

/* Appends to the file: the first writer's alone (tt_pq_create(), the
 * footer), or under file->mu (write_row_group()). */
static void put_file(struct tt_pq *w, const void *p, size_t n)
{
	if (get_err(w))
		return;
	if (n && fwrite(p, 1, n, w->file->f) != n) {
		set_err(w, errno ? -errno : -EIO);
		return;
	}
	w->file->off += n;
}

static void *encoder_main(void *arg);

/* A writer of these columns into file (not yet counted in file->open). */
static struct tt_pq *new_writer(struct pq_file *file, const struct tt_pq_col *cols,
				size_t nr_cols, const struct tt_pq_opts *opts)
{
	struct tt_pq *w = tt_xcalloc(1, sizeof(*w));
	w->file = file;
	if (opts)
		w->o = *opts;
	if (!w->o.row_group_rows)
		w->o.row_group_rows = 1u << 20;
	if (!w->o.row_group_bytes)
		w->o.row_group_bytes = (size_t)64 << 20;
	if (!w->o.page_rows)
		w->o.page_rows = 1u << 16;
	if (!w->o.zstd_level)
		w->o.zstd_level = 1;
	size_t page_cap = w->o.page_rows < w->o.row_group_rows ? w->o.page_rows
							       : (size_t)w->o.row_group_rows;
	w->cols = tt_xcalloc(nr_cols, sizeof(*w->cols));
	w->nr_cols = nr_cols;
	for (size_t i = 0; i < nr_cols; i++) {
		struct col *c = &w->cols[i];
		c->name = tt_xstrndup(cols[i].name, strlen(cols[i].name));
		c->type = cols[i].type;
		c->nullable = cols[i].nullable;
		c->codec = -1;
		c->size = cols[i].type == TT_PQ_INT64 ? 8 : cols[i].type == TT_PQ_BOOL ? 1 : 4;
		w->row_bytes += c->size;
		w->has_str |= c->type == TT_PQ_STRING;
		if (c->nullable && i < 64)
			w->null_ok |= (uint64_t)1 << i;
	}
	w->int_table = !w->has_str && nr_cols <= 64;
	w->col_mask = nr_cols < 64 ? ((uint64_t)1 << nr_cols) - 1 : ~(uint64_t)0;
	w->page_cap = page_cap;
	w->zc = ZSTD_createCCtx();
	if (!w->zc)
		tt_oom();
	ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, w->o.zstd_level);
	return w;
}

struct tt_pq *tt_pq_create(const char *path, const struct tt_pq_col *cols, size_t nr_cols,
			   const struct tt_pq_opts *opts)
{
	if (nr_cols == 0 || nr_cols > PQ_MAX_COLS) {
		errno = EINVAL;
		return NULL;
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return NULL;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	struct pq_file *file = tt_xcalloc(1, sizeof(*file));
	pthread_mutex_init(&file->mu, NULL);
	file->f = f;
	file->open = 1;
	struct tt_pq *w = new_writer(file, cols, nr_cols, opts);
	put_file(w, "PAR1", 4);
	return w;
}

struct tt_pq *tt_pq_sibling(struct tt_pq *first)
{
	struct tt_pq_col *cols = tt_xcalloc(first->nr_cols, sizeof(*cols));
	struct tt_pq_opts o = first->o;

	for (size_t i = 0; i < first->nr_cols; i++) {
		cols[i].name = first->cols[i].name;
		cols[i].type = first->cols[i].type;
		cols[i].nullable = first->cols[i].nullable;
	}
	o.encode_thread = false; /* each sibling's rows are encoded on its own thread */
	struct tt_pq *w = new_writer(first->file, cols, first->nr_cols, &o);
	free(cols);
	w->sibling = true;
	pthread_mutex_lock(&first->file->mu);
	first->file->open++;
	pthread_mutex_unlock(&first->file->mu);
	return w;
}

/* The first row decides how the table is filled: its buffers. */
static void set_mode(struct tt_pq *w, enum pq_mode mode)
{
	w->mode = mode;
	if (mode == PQ_VALUES) {
		/* a page's values: never more than page_rows (encoded when full) */
		for (size_t i = 0; i < w->nr_cols; i++) {
			struct col *c = &w->cols[i];
			c->vals = tt_xrealloc(NULL, w->page_cap * c->size);
			if (c->nullable)
				c->defs = tt_xrealloc(NULL, w->page_cap);
		}
		return;
	}
	for (size_t i = 0; i < w->nr_cols; i++)
		if (w->cols[i].nullable)
			w->cols[i].pdefs = tt_xrealloc(NULL, w->page_cap);
	w->threaded = w->o.encode_thread;
	w->nr_slices = w->threaded ? PQ_SLICES : 1;
	w->slice_rows = w->threaded ? PQ_SLICE_ROWS : PQ_STAGE_ROWS;
	w->slices = tt_xcalloc(w->nr_slices, sizeof(*w->slices));
	for (unsigned k = 0; k < w->nr_slices; k++) {
		struct slice *sl = &w->slices[k];
		sl->vals = tt_xrealloc(NULL, (size_t)w->slice_rows * w->nr_cols * sizeof(int64_t));
		sl->nulls = tt_xrealloc(NULL, w->slice_rows * sizeof(uint64_t));
	}
#ifdef PQ_AVX2
	w->avx2 = recfmt_cpu_avx2() && !tt_portable(); /* the same bytes either way */
	if (w->avx2)
		w->tcol = tt_xrealloc(NULL, w->slice_rows * sizeof(*w->tcol));
#endif
	/* Last: the thread reads all of the above (and then the slices under mu). */
	if (w->threaded) {
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->work, NULL);
		pthread_cond_init(&w->done, NULL);
		if (pthread_create(&w->thread, NULL, encoder_main, w) != 0) {
			pthread_cond_destroy(&w->work);
			pthread_cond_destroy(&w->done);
			pthread_mutex_destroy(&w->mu);
			w->threaded = false; /* encoded on the caller's thread, slices[0] */
		}
	}
}

void tt_pq_meta(struct tt_pq *w, const char *key, const char *value)
{
	struct pq_file *pf = w->file;

	pthread_mutex_lock(&pf->mu);
	pf->kv = tt_xrealloc(pf->kv, (pf->nr_kv + 1) * 2 * sizeof(char *));
	pf->kv[2 * pf->nr_kv] = tt_xstrndup(key, strlen(key));
	pf->kv[2 * pf->nr_kv + 1] = tt_xstrndup(value, strlen(value));
	pf->nr_kv++;
	pthread_mutex_unlock(&pf->mu);
}

/* The column the next value goes to, or NULL after a misuse. */
static inline __attribute__((always_inline)) struct col *next_col(struct tt_pq *w,
								   enum tt_pq_type type)
{
	if (get_err(w))
		return NULL;
	if (w->mode != PQ_VALUES) {
		if (w->mode == PQ_ROWS) { /* not mixed: tt_pq_int_row*() fill this one */
			set_err(w, -EINVAL);
			return NULL;
		}
		set_mode(w, PQ_VALUES);
	}
	if (w->cur >= w->nr_cols || w->cols[w->cur].type != type) {
		set_err(w, -EINVAL);
		return NULL;
	}
	struct col *c = &w->cols[w->cur++];
	if (c->nullable)
		c->defs[w->pg_rows] = 1;
	w->rg_bytes += type == TT_PQ_INT64 ? 8 : type == TT_PQ_BOOL ? 1 : 4;
	return c;
}

static void minmax(struct col *c, int64_t v)
{
	if (!c->have_minmax) {
		c->min = c->max = v;
		c->have_minmax = true;
	} else if (v < c->min) {
		c->min = v;
	} else if (v > c->max) {
		c->max = v;
	}
}

void tt_pq_i64(struct tt_pq *w, int64_t v)
{
	struct col *c = next_col(w, TT_PQ_INT64);
	if (!c)
		return;
	((int64_t *)c->vals)[c->nr_vals++] = v;
}

void tt_pq_i32(struct tt_pq *w, int32_t v)
{
	struct col *c = next_col(w, TT_PQ_INT32);
	if (!c)
		return;
	((int32_t *)c->vals)[c->nr_vals++] = v;
}

void tt_pq_bool(struct tt_pq *w, bool v)
{
	struct col *c = next_col(w, TT_PQ_BOOL);
	if (!c)
		return;
	((uint8_t *)c->vals)[c->nr_vals++] = v;
}

static uint32_t hash_bytes(const char *s, size_t n)
{
	return tt_hash_bytes(s, n); /* seeded: hmap.h */
}

static void dict_grow(struct col *c)
{
	size_t nr = c->nr_slots ? c->nr_slots * 2 : 256;
	struct dict_slot *s = tt_xcalloc(nr, sizeof(*s));
	for (size_t i = 0; i < nr; i++)
		s[i].len = UINT32_MAX;
	for (size_t i = 0; i < c->nr_slots; i++) {
		if (c->slots[i].len == UINT32_MAX)
			continue;
		size_t j = c->slots[i].hash & (nr - 1);
		while (s[j].len != UINT32_MAX)
			j = (j + 1) & (nr - 1);
		s[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = s;
	c->nr_slots = nr;
}

void tt_pq_str(struct tt_pq *w, const char *s, size_t len)
{
	struct col *c = next_col(w, TT_PQ_STRING);
	if (!c)
		return;
	if (len > INT32_MAX / 2) {
		set_err(w, -EINVAL);
		return;
	}
	if ((c->nr_entries + 1) * 2 > c->nr_slots)
		dict_grow(c);
	uint32_t h = hash_bytes(s, len);
	size_t j = h & (c->nr_slots - 1);
	for (;; j = (j + 1) & (c->nr_slots - 1)) {
		struct dict_slot *d = &c->slots[j];
		if (d->len == UINT32_MAX) {
			d->hash = h;
			d->len = (uint32_t)len;
			d->off = (uint32_t)c->dict.n + 4;
			d->idx = (uint32_t)c->nr_entries;
			c->entry_off = tt_xrealloc(c->entry_off, (c->nr_entries + 1) * sizeof(uint32_t));
			c->entry_off[c->nr_entries++] = (uint32_t)c->dict.n;
			buf_le32(&c->dict, (uint32_t)len);
			buf_put(&c->dict, s, len);
			w->rg_bytes += len + 4 + 2 * sizeof(*d);
			((uint32_t *)c->vals)[c->nr_vals++] = d->idx;
			return;
		}
		if (d->hash == h && d->len == len && memcmp(c->dict.p + d->off, s, len) == 0) {
			((uint32_t *)c->vals)[c->nr_vals++] = d->idx;
			return;
		}
	}
}

void tt_pq_null(struct tt_pq *w)
{
	if (get_err(w))
		return;
	if (w->mode != PQ_VALUES) {
		if (w->mode == PQ_ROWS) {
			set_err(w, -EINVAL);
			return;
		}
		set_mode(w, PQ_VALUES);
	}
	if (w->cur >= w->nr_cols || !w->cols[w->cur].nullable) {
		set_err(w, -EINVAL);
		return;
	}
	struct col *c = &w->cols[w->cur++];
	c->defs[w->pg_rows] = 0; /* counted in c->nulls by encode_page */
	w->rg_bytes++;
}

/* ---- writing a row group ---- */

/* Where a page's raw-block frame goes: the chunk's buffer, or the file. */
struct page_out {
	struct tt_pq *w;
	struct buf *dst;
};

static int page_out_put(void *ctx, const uint8_t *p, size_t n)
{
	struct page_out *o = ctx;

	if (o->dst)
		buf_put(o->dst, p, n);
	else
		put_file(o->w, p, n);
	return 0;
}

/* Compresses w->page and writes header + body; updates the chunk's sizes. */
static void write_page(struct tt_pq *w, int64_t *unc, int64_t *comp, struct buf *dst, int type,
		       uint32_t num_values, int encoding, int *codec)
{
	const uint8_t *body = NULL; /* NULL: a frame of raw blocks over w->page */
	bool stored = *codec == CHUNK_ZSTD_STORED && w->page.n <= RECFMT_MAX_FRAME_BYTES;
	size_t cn = 0;

	if (!stored) {
		size_t bound = ZSTD_compressBound(w->page.n);
		w->comp.n = 0;
		buf_reserve(&w->comp, bound);
		cn = ZSTD_compress2(w->zc, w->comp.p, bound, w->page.p, w->page.n);
		if (ZSTD_isError(cn)) {
			set_err(w, -EIO);
			return;
		}
		body = w->comp.p;
		/* The chunk's first page decides how its pages are framed: when
		 * zstd saves less than 1/16 of it (time columns, whose
		 * bit-packed deltas are noise to zstd), it and the chunk's other
		 * pages are stored in raw blocks, without compressing them (a
		 * page too large for one such frame is compressed). */
		if (*codec == -1) {
			stored = cn + w->page.n / 16 >= w->page.n &&
				 w->page.n <= RECFMT_MAX_FRAME_BYTES;
			*codec = stored ? CHUNK_ZSTD_STORED : CODEC_ZSTD;
		}
	}
	if (stored) {
		body = NULL;
		cn = recfmt_rawframe_bytes(w->page.n, false);
	}
	if (w->page.n > INT32_MAX || cn > INT32_MAX) {
		set_err(w, -EFBIG);
		return;
	}
	w->hdr.n = 0;
	struct tp t = { .b = &w->hdr };
	tp_i32(&t, 1, type);
	tp_i32(&t, 2, (int32_t)w->page.n);
	tp_i32(&t, 3, (int32_t)cn);
	if (type == PAGE_DATA) {
		tp_struct(&t, 5); /* DataPageHeader */
		tp_i32(&t, 1, (int32_t)num_values);
		tp_i32(&t, 2, encoding);
		tp_i32(&t, 3, ENC_RLE); /* definition levels */
		tp_i32(&t, 4, ENC_RLE); /* repetition levels (none) */
		tp_end(&t);
	} else {
		tp_struct(&t, 7); /* DictionaryPageHeader */
		tp_i32(&t, 1, (int32_t)num_values);
		tp_i32(&t, 2, ENC_PLAIN);
		tp_end(&t);
	}
	buf_u8(&w->hdr, 0); /* end of PageHeader */
	if (dst)
		buf_put(dst, w->hdr.p, w->hdr.n);
	else
		put_file(w, w->hdr.p, w->hdr.n);
	if (!body) {
		/* No content checksum: Parquet readers check pages by their sizes. */
		struct recfmt_slice part = { .data = w->page.p, .bytes = w->page.n };
		struct page_out o = { .w = w, .dst = dst };

		recfmt_rawframe_emit_sum(&part, 1, false, page_out_put, &o);
	} else if (dst) {
		buf_put(dst, body, cn);
	} else {
		put_file(w, body, cn);
	}
	*unc += (int64_t)(w->hdr.n + w->page.n);
	*comp += (int64_t)(w->hdr.n + cn);
}

static uint8_t *dup_bytes(const void *p, size_t n)
{
	uint8_t *d = tt_xrealloc(NULL, n);
	if (n)
		memcpy(d, p, n);
	return d;
}

static void le_bytes(uint8_t *out, int64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	int r = memcmp(a, b, an < bn ? an : bn);
	return r ? r : (an > bn) - (an < bn);
}

static void chunk_stats(struct col *c, struct chunk_meta *m)
{
	m->nulls = (int64_t)c->nulls;
	if (c->type == TT_PQ_STRING) {
		if (!c->nr_entries)
			return;
		const uint8_t *mn = NULL, *mx = NULL;
		uint32_t mnl = 0, mxl = 0;
		for (size_t i = 0; i < c->nr_entries; i++) {
			const uint8_t *p = c->dict.p + c->entry_off[i];
			uint32_t len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				       (uint32_t)p[3] << 24;
			p += 4;
			if (!mn || bytes_cmp(p, len, mn, mnl) < 0)
				mn = p, mnl = len;
			if (!mx || bytes_cmp(p, len, mx, mxl) > 0)
				mx = p, mxl = len;
		}
		m->have_minmax = true;
		m->min = dup_bytes(mn, mnl);
		m->min_len = mnl;
		m->max = dup_bytes(mx, mxl);
		m->max_len = mxl;
		return;
	}
	if (!c->have_minmax)
		return;
	size_t n = c->type == TT_PQ_INT64 ? 8 : c->type == TT_PQ_INT32 ? 4 : 1;
	m->have_minmax = true;
	m->min = tt_xrealloc(NULL, n);
	m->max = tt_xrealloc(NULL, n);
	le_bytes(m->min, c->min, n);
	le_bytes(m->max, c->max, n);
	m->min_len = m->max_len = (uint32_t)n;
}

/* Folds the page's nv values into the row group's min and max (in one
 * tight loop per page rather than a test per value). */
static void page_minmax(struct col *c, const void *vals, size_t nv)
{
	if (!nv || c->type == TT_PQ_STRING)
		return;
	int64_t mn, mx;
	if (c->type == TT_PQ_INT64) {
		/* four lanes: four times fewer compare-and-move chains */
		const int64_t *v = vals;
		int64_t l0 = v[0], l1 = v[0], l2 = v[0], l3 = v[0]; /* in registers */
		int64_t h0 = v[0], h1 = v[0], h2 = v[0], h3 = v[0];
		size_t i = 0;
#define MM(l, h, x) (l = (x) < l ? (x) : l, h = (x) > h ? (x) : h)
		for (; i + 4 <= nv; i += 4) {
			MM(l0, h0, v[i]);
			MM(l1, h1, v[i + 1]);
			MM(l2, h2, v[i + 2]);
			MM(l3, h3, v[i + 3]);
		}
		for (; i < nv; i++)
			MM(l0, h0, v[i]);
		MM(l0, h0, l1);
		MM(l0, h0, h1);
		MM(l2, h2, l3);
		MM(l2, h2, h3);
		MM(l0, h0, l2);
		MM(l0, h0, h2);
#undef MM
		mn = l0, mx = h0;
	} else if (c->type == TT_PQ_INT32) {
		const int32_t *v = vals;
		int32_t a = v[0], b = v[0];
		for (size_t i = 1; i < nv; i++) {
			a = v[i] < a ? v[i] : a;
			b = v[i] > b ? v[i] : b;
		}
		mn = a, mx = b;
	} else {
		const uint8_t *v = vals;
		uint8_t a = v[0], b = v[0];
		for (size_t i = 1; i < nv; i++) {
			a = v[i] < a ? v[i] : a;
			b = v[i] > b ? v[i] : b;
		}
		mn = a, mx = b;
	}
	minmax(c, mn);
	minmax(c, mx);
}

/* Encodes a page of c (nr rows: definition levels defs, non-null values
 * vals) into c->pages. A string page's bit width is that of the dictionary
 * so far: every index of the page fits, and each data page states its own
 * width. */
static void encode_page(struct tt_pq *w, struct col *c, const void *vals, const uint8_t *defs,
			uint32_t nr)
{
	size_t nv = nr;
	w->page.n = 0;
	if (c->nullable) {
		nv = 0;
		for (uint32_t i = 0; i < nr; i++)
			nv += defs[i];
		c->nulls += nr - nv;
		size_t at = w->page.n;
		buf_le32(&w->page, 0);
		rle_hybrid_defs(&w->page, defs, nr);
		uint32_t len = (uint32_t)(w->page.n - at - 4);
		le_bytes(w->page.p + at, len, 4);
	}
	page_minmax(c, vals, nv);
	int enc = ENC_PLAIN;
	switch (c->type) {
	case TT_PQ_INT64:
		enc = ENC_DELTA_BINARY_PACKED;
		delta_binary_packed(&w->page, vals, true, nv);
		break;
	case TT_PQ_INT32:
		enc = ENC_DELTA_BINARY_PACKED;
		delta_binary_packed(&w->page, vals, false, nv);
		break;
	case TT_PQ_BOOL: {
		size_t nb = (nv + 7) / 8;
		buf_reserve(&w->page, nb);
		uint8_t *o = w->page.p + w->page.n;
		memset(o, 0, nb);
		const uint8_t *v = vals;
		for (size_t i = 0; i < nv; i++)
			o[i >> 3] |= (uint8_t)(v[i] << (i & 7));
		w->page.n += nb;
		break;
	}
	case TT_PQ_STRING: {
		unsigned bw = bit_width(c->nr_entries ? (uint32_t)(c->nr_entries - 1) : 0);
		enc = ENC_RLE_DICTIONARY;
		buf_u8(&w->page, (uint8_t)bw);
		rle_hybrid(&w->page, vals, nv, bw);
		break;
	}
	}
	write_page(w, &c->pages_unc, &c->pages_comp, &c->pages, PAGE_DATA, nr, enc, &c->codec);
}


/* Writes c's chunk: its dictionary page (strings), then its data pages. */
static void write_chunk(struct tt_pq *w, struct col *c, uint64_t rows, struct chunk_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->num_values = (int64_t)rows;
	m->dict_off = -1;
	chunk_stats(c, m);
	if (c->type == TT_PQ_STRING) {
		m->dict_off = (int64_t)w->file->off;
		w->page.n = 0;
		buf_put(&w->page, c->dict.p, c->dict.n);
		write_page(w, &m->unc_size, &m->comp_size, NULL, PAGE_DICTIONARY,
			   (uint32_t)c->nr_entries, ENC_PLAIN, &c->codec);
	}
	m->codec = CODEC_ZSTD; /* raw blocks or compressed: zstd frames either way */
	c->codec = -1; /* the next chunk decides again */
	m->data_off = (int64_t)w->file->off;
	put_file(w, c->pages.p, c->pages.n);
	m->unc_size += c->pages_unc;
	m->comp_size += c->pages_comp;
	c->pages.n = 0;
	c->pages_unc = c->pages_comp = 0;
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "PLAIN integers are written from memory: little-endian hosts only");

/* Writes the row group encoded so far (enc_rg_rows rows): every column's
 * chunk, whole, under the file's lock (siblings), then resets the chunks'
 * statistics and (strings, no thread) the dictionaries. */
static void write_row_group(struct tt_pq *w)
{
	struct pq_file *pf = w->file;
	struct chunk_meta *ms = tt_xcalloc(w->nr_cols, sizeof(*ms));

	pthread_mutex_lock(&pf->mu);
	struct rg_meta rg = { .rows = (int64_t)w->enc_rg_rows, .file_off = (int64_t)pf->off,
			      .chunks = ms };
	for (size_t i = 0; i < w->nr_cols; i++) {
		struct col *c = &w->cols[i];
		write_chunk(w, c, w->enc_rg_rows, &ms[i]);
		struct chunk_meta *m = &ms[i];
		rg.unc_size += m->unc_size;
		rg.comp_size += m->comp_size;
		c->nulls = 0;
		c->have_minmax = false;
		if (c->type != TT_PQ_STRING)
			continue;
		c->dict.n = 0;
		c->nr_entries = 0;
		for (size_t k = 0; k < c->nr_slots; k++)
			c->slots[k].len = UINT32_MAX;
	}
	pf->rgs = tt_xrealloc(pf->rgs, (pf->nr_rgs + 1) * sizeof(*pf->rgs));
	pf->rgs[pf->nr_rgs++] = rg;
	pf->total_rows += w->enc_rg_rows;
	pthread_mutex_unlock(&pf->mu);
	w->enc_rg_rows = 0;
}

/* ---- rows by rows (PQ_ROWS): slices ---- */

/* Rows [0, n) of column c of a slice (src: its first value, stride nc)
 * into the page being encoded: each non-null value's difference to the
 * one before, packed a block at a time, and the page's minimum and
 * maximum. nulls NULL: no null in this column of the slice. Inlined per
 * type, so the loop has no test of the type. */
#ifdef PQ_AVX2
/*
 * m (2..DBP_MINI) contiguous INT64 values p[0, m) with no null, after
 * prev: their differences into d, the values' minimum and maximum into
 * *mn and *mx, the differences' into *l and *h — slice_ints()'s loop, four
 * values at a time (AVX2 has 64-bit compares; SSE2, the baseline, has
 * not). Called only when the CPU has AVX2 (tt_pq.avx2).
 */
__attribute__((target("avx2"))) static void ints_avx2(const int64_t *p, uint32_t m, int64_t prev,
						     uint64_t *d, int64_t *mn, int64_t *mx,
						     int64_t *l, int64_t *h)
{
	int64_t d0 = (int64_t)((uint64_t)p[0] - (uint64_t)prev);
	__m256i vmn = _mm256_set1_epi64x(*mn < p[0] ? *mn : p[0]);
	__m256i vmx = _mm256_set1_epi64x(*mx > p[0] ? *mx : p[0]);
	__m256i vl = _mm256_set1_epi64x(*l < d0 ? *l : d0);
	__m256i vh = _mm256_set1_epi64x(*h > d0 ? *h : d0);
	uint32_t r = 1;

	d[0] = (uint64_t)d0;
	for (; r + 4 <= m; r += 4) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + r));
		__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(p + r - 1));
		__m256i dx = _mm256_sub_epi64(x, y);
		_mm256_storeu_si256((__m256i *)(void *)(d + r), dx);
		vmn = _mm256_blendv_epi8(vmn, x, _mm256_cmpgt_epi64(vmn, x));
		vmx = _mm256_blendv_epi8(vmx, x, _mm256_cmpgt_epi64(x, vmx));
		vl = _mm256_blendv_epi8(vl, dx, _mm256_cmpgt_epi64(vl, dx));
		vh = _mm256_blendv_epi8(vh, dx, _mm256_cmpgt_epi64(dx, vh));
	}
	int64_t a[4], b[4], e[4], f[4];
	_mm256_storeu_si256((__m256i *)(void *)a, vmn);
	_mm256_storeu_si256((__m256i *)(void *)b, vmx);
	_mm256_storeu_si256((__m256i *)(void *)e, vl);
	_mm256_storeu_si256((__m256i *)(void *)f, vh);
	int64_t n0 = a[0], x0 = b[0], l0 = e[0], h0 = f[0];
	for (int k = 1; k < 4; k++) {
		n0 = a[k] < n0 ? a[k] : n0;
		x0 = b[k] > x0 ? b[k] : x0;
		l0 = e[k] < l0 ? e[k] : l0;
		h0 = f[k] > h0 ? f[k] : h0;
	}
	for (; r < m; r++) {
		int64_t x = p[r], dx = (int64_t)((uint64_t)x - (uint64_t)p[r - 1]);
		d[r] = (uint64_t)dx;
		n0 = x < n0 ? x : n0;
		x0 = x > x0 ? x : x0;
		l0 = dx < l0 ? dx : l0;
		h0 = dx > h0 ? dx : h0;
	}
	*mn = n0;
	*mx = x0;
	*l = l0;
	*h = h0;
}
#endif

static inline __attribute__((always_inline)) void slice_ints(struct col *c, const int64_t *src,
							      size_t nc, uint32_t n,
							      const uint64_t *nulls, uint64_t bit,
							      bool is64, bool avx2)
{
	uint32_t j = 0, nv = c->pnv;
	int64_t prev = c->pprev, mn = c->pmin, mx = c->pmax;
	unsigned nd = c->nd;

#ifndef PQ_AVX2
	(void)avx2; /* no AVX2 path off x86-64 (an ARM64 build) */
#endif
	if (!nv) { /* the page's first value goes to its header */
		while (j < n && nulls && (nulls[j] & bit))
			j++;
		if (j == n)
			return;
		int64_t x = is64 ? src[j * nc] : (int32_t)src[j * nc];
		c->pfirst = prev = mn = mx = x;
		nv = 1;
		j++;
	}
	/* Up to the end of the miniblock being filled at a time: no test of
	 * its end per value, and its smallest and largest difference kept
	 * as they come. */
	while (j < n) {
		unsigned mi = nd / DBP_MINI, in = nd % DBP_MINI;
		uint32_t m = n - j < DBP_MINI - in ? n - j : DBP_MINI - in;
		const int64_t *p = src + (size_t)j * nc;
		uint64_t *d = c->d + nd;
		uint32_t k = 0;
		int64_t l = in ? c->dlo[mi] : INT64_MAX, h = in ? c->dhi[mi] : INT64_MIN;
		bool done = false;

#ifdef PQ_AVX2
		int64_t mn0 = mn, mx0 = mx, l0 = l, h0 = h;
		/* INT32 values come sign-extended (encode_slice): their 64-bit
		 * differences are the int32 ones unless one leaves the int32
		 * range, and then the chunk is taken again by the loop below. */
		if (avx2 && !nulls && nc == 1 && m >= 2 &&
		    (ints_avx2(p, m, prev, d, &mn, &mx, &l, &h),
		     is64 || (l >= INT32_MIN && h <= INT32_MAX))) {
			prev = p[m - 1];
			k = m;
			done = true;
		} else {
			mn = mn0, mx = mx0, l = l0, h = h0;
		}
#endif
		for (uint32_t r = 0; !done && r < m; r++, p += nc) {
			if (nulls && (nulls[j + r] & bit))
				continue;
			int64_t x = is64 ? *p : (int32_t)*p;
			/* wrapping differences, as int32 for INT32 columns */
			int64_t dx = is64 ? (int64_t)((uint64_t)x - (uint64_t)prev)
					  : (int64_t)(int32_t)((uint32_t)x - (uint32_t)prev);
			d[k++] = (uint64_t)dx;
			prev = x;
			mn = x < mn ? x : mn;
			mx = x > mx ? x : mx;
			l = dx < l ? dx : l;
			h = dx > h ? dx : h;
		}
		j += m;
		nd += k;
		nv += k;
		c->dlo[mi] = l;
		c->dhi[mi] = h;
		if (nd == DBP_BLOCK) {
			dbp_block_lohi(&c->pbody, c->d, DBP_BLOCK, c->dlo, c->dhi);
			nd = 0;
		}
	}
	c->pnv = nv;
	c->pprev = prev;
	c->pmin = mn;
	c->pmax = mx;
	c->nd = nd;
}

/* Booleans: PLAIN, one bit each from bit 0 of byte 0. */
static void slice_bools(struct col *c, const int64_t *src, size_t nc, uint32_t n,
			const uint64_t *nulls, uint64_t bit)
{
	uint32_t nv = c->pnv;
	int64_t mn = nv ? c->pmin : 1, mx = nv ? c->pmax : 0;

	buf_reserve(&c->pbody, n / 8 + 2);
	uint8_t *o = c->pbody.p;
	uint32_t j = 0;
	if (!nulls && !(nv & 7) && n >= 8) { /* whole bytes: 8 values at a time */
		unsigned any = 0, all = 0xff;
		for (; j + 8 <= n; j += 8, nv += 8) {
			const int64_t *q = src + (size_t)j * nc;
			unsigned b = 0;
			for (unsigned k = 0; k < 8; k++)
				b |= (unsigned)(q[k * nc] != 0) << k;
			o[nv >> 3] = (uint8_t)b;
			any |= b;
			all &= b;
		}
		mn = all == 0xff && mn ? 1 : 0;
		mx = any || mx ? 1 : 0;
	}
	for (; j < n; j++) {
		if (nulls && (nulls[j] & bit))
			continue;
		uint8_t x = src[j * nc] != 0;
		if (!(nv & 7))
			o[nv >> 3] = 0;
		o[nv >> 3] |= (uint8_t)(x << (nv & 7));
		nv++;
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
	}
	c->pbody.n = (nv + 7) / 8;
	c->pnv = nv;
	c->pmin = mn;
	c->pmax = mx;
}

/* Ends the page of c being encoded (rows rows): the last block, then the
 * page as encode_page() writes it, byte for byte. */
static void finish_page(struct tt_pq *w, struct col *c, uint32_t rows)
{
	int enc = ENC_PLAIN;

	w->page.n = 0;
	if (c->nullable) {
		c->nulls += rows - c->pnv;
		buf_le32(&w->page, 0);
		rle_hybrid_defs(&w->page, c->pdefs, rows);
		le_bytes(w->page.p, (int64_t)(w->page.n - 4), 4);
	}
	if (c->pnv) {
		minmax(c, c->pmin);
		minmax(c, c->pmax);
	}
	if (c->type != TT_PQ_BOOL) {
		if (c->nd)
			dbp_block_lohi(&c->pbody, c->d, c->nd, c->dlo, c->dhi);
		enc = ENC_DELTA_BINARY_PACKED;
		dbp_header(&w->page, c->pnv, c->pfirst);
	}
	buf_put(&w->page, c->pbody.p, c->pbody.n);
	write_page(w, &c->pages_unc, &c->pages_comp, &c->pages, PAGE_DATA, rows, enc, &c->codec);
	c->pbody.n = 0;
	c->pnv = 0;
	c->nd = 0;
}

/* The encoder's part of a slice: each column's rows into its page, then
 * the pages and the row group that end with it. */
static void encode_slice(struct tt_pq *w, const struct slice *sl)
{
	size_t nc = w->nr_cols;
	uint32_t n = sl->rows;

	if (get_err(w))
		return;
	for (size_t i = 0; i < nc && n; i++) {
		struct col *c = &w->cols[i];
		const int64_t *src = sl->vals + i;
		uint64_t bit = (uint64_t)1 << i;
		const uint64_t *nulls = sl->any & bit ? sl->nulls : NULL;

		if (c->nullable) {
			uint8_t *d = c->pdefs + w->enc_pg_rows;
			if (!nulls)
				memset(d, 1, n);
			else
				for (uint32_t j = 0; j < n; j++)
					d[j] = !(nulls[j] & bit);
		}
		switch (c->type) {
		case TT_PQ_INT64:
			if (nulls)
				slice_ints(c, src, nc, n, nulls, bit, true, false);
			else if (w->avx2) {
				/* the column contiguous (in L1) for the vector loop */
				int64_t *t = w->tcol;
				for (uint32_t j = 0; j < n; j++)
					t[j] = src[j * nc];
				slice_ints(c, t, 1, n, NULL, 0, true, true);
			}
			else
				slice_ints(c, src, nc, n, NULL, 0, true, false);
			break;
		case TT_PQ_INT32:
			if (nulls) {
				slice_ints(c, src, nc, n, nulls, bit, false, false);
			} else if (w->avx2) {
				int64_t *t = w->tcol;
				for (uint32_t j = 0; j < n; j++)
					t[j] = (int32_t)src[j * nc];
				slice_ints(c, t, 1, n, NULL, 0, false, true);
			} else {
				slice_ints(c, src, nc, n, NULL, 0, false, false);
			}
			break;
		default:
			slice_bools(c, src, nc, n, nulls, bit);
			break;
		}
	}
	w->enc_pg_rows += n;
	if (sl->end_pg && w->enc_pg_rows) {
		for (size_t i = 0; i < nc && !get_err(w); i++)
			finish_page(w, &w->cols[i], w->enc_pg_rows);
		w->enc_rg_rows += w->enc_pg_rows;
		w->enc_pg_rows = 0;
	}
	if (sl->end_rg && w->enc_rg_rows && !get_err(w))
		write_row_group(w);
}

/* The encoding thread: the queued slices, oldest first, until told to
 * stop with none left. */
static void *encoder_main(void *arg)
{
	struct tt_pq *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->queued && !w->stop) {
			w->enc_asleep = true;
			pthread_cond_wait(&w->work, &w->mu);
			w->enc_asleep = false;
		}
		if (!w->queued)
			break;
		const struct slice *sl = &w->slices[w->head];
		pthread_mutex_unlock(&w->mu);
		encode_slice(w, sl);
		pthread_mutex_lock(&w->mu);
		w->head = (w->head + 1) % w->nr_slices;
		w->queued--;
		if (w->caller_asleep && w->queued <= w->nr_slices / 2)
			pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Hands the slice being filled to the encoder, ending a page and a row
 * group with it as told: encoded here, or queued for the encoding thread,
 * and then the next free slice is the one filled. */
static void submit_slice(struct tt_pq *w, bool end_pg, bool end_rg)
{
	struct slice *sl = &w->slices[w->fill];

	sl->end_pg = end_pg;
	sl->end_rg = end_rg;
	if (!w->threaded) {
		encode_slice(w, sl);
	} else if (!get_err(w)) {
		pthread_mutex_lock(&w->mu);
		w->queued++;
		if (w->enc_asleep && w->queued >= w->nr_slices / 2)
			pthread_cond_signal(&w->work);
		w->fill = (w->fill + 1) % w->nr_slices;
		while (w->queued == w->nr_slices) {
			w->caller_asleep = true;
			pthread_cond_wait(&w->done, &w->mu);
			w->caller_asleep = false;
		}
		pthread_mutex_unlock(&w->mu);
		sl = &w->slices[w->fill];
	}
	sl->rows = 0;
	sl->any = 0;
	if (end_pg)
		w->pg_rows = 0;
	if (end_rg) {
		w->rg_rows = 0;
		w->rg_bytes = 0;
	}
}

/* ---- rows by values (PQ_VALUES) ---- */

/* Encodes the page filled so far (and, with end_rg, ends the row group). */
static void submit(struct tt_pq *w, bool end_rg)
{
	if (!get_err(w) && w->pg_rows) {
		for (size_t i = 0; i < w->nr_cols; i++)
			encode_page(w, &w->cols[i], w->cols[i].vals, w->cols[i].defs, w->pg_rows);
		w->enc_rg_rows += w->pg_rows;
	}
	if (end_rg && w->enc_rg_rows && !get_err(w))
		write_row_group(w);
	for (size_t i = 0; i < w->nr_cols; i++)
		w->cols[i].nr_vals = 0;
	w->pg_rows = 0;
	if (end_rg) {
		w->rg_rows = 0;
		w->rg_bytes = 0;
	}
}

int tt_pq_row_end(struct tt_pq *w)
{
	int err = get_err(w);
	if (err)
		return err;
	if (w->cur != w->nr_cols || w->mode != PQ_VALUES) {
		set_err(w, -EINVAL);
		return get_err(w);
	}
	w->cur = 0;
	w->rg_rows++;
	w->total_rows++;
	w->pg_rows++;
	bool end_rg = w->rg_rows >= w->o.row_group_rows || w->rg_bytes >= w->o.row_group_bytes;
	if (w->pg_rows >= w->o.page_rows || end_rg)
		submit(w, end_rg);
	return get_err(w);
}

/* Buffered bytes of a row with these nulls (a null is one byte), as the
 * per-value calls count them. */
static size_t row_bytes_of(const struct tt_pq *w, uint64_t nulls)
{
	size_t b = w->row_bytes;
	while (nulls) {
		b -= w->cols[__builtin_ctzll(nulls)].size - 1u;
		nulls &= nulls - 1;
	}
	return b;
}

/* Rows ended since the last edge into the counters. */
static void sync_rows(struct tt_pq *w)
{
	uint32_t taken = w->room0 - w->room;

	w->pg_rows += taken;
	w->rg_rows += taken;
	w->total_rows += taken;
	w->room0 = w->room;
}

/* After an edge: the next row's place, and the rows until the next edge. */
static void set_room(struct tt_pq *w)
{
	struct slice *sl = &w->slices[w->fill];
	uint64_t room = w->slice_rows - sl->rows;

	if (room > w->o.page_rows - w->pg_rows)
		room = w->o.page_rows - w->pg_rows;
	if (room > w->o.row_group_rows - w->rg_rows)
		room = w->o.row_group_rows - w->rg_rows;
	w->next_row = sl->vals + (size_t)sl->rows * w->nr_cols;
	w->sl = sl;
	w->room = w->room0 = (uint32_t)room;
}

/* A row ended at an edge by rows (room 0) or at a row group's bytes: the
 * slice goes to the encoder if it is full or ends a page. */
static int row_edge(struct tt_pq *w)
{
	sync_rows(w);
	bool end_rg = w->rg_rows >= w->o.row_group_rows || w->rg_bytes >= w->o.row_group_bytes;
	bool end_pg = end_rg || w->pg_rows >= w->o.page_rows;
	if (end_pg || w->slices[w->fill].rows == w->slice_rows)
		submit_slice(w, end_pg, end_rg);
	set_room(w);
	return get_err(w);
}

static int64_t *int_row_begin_slow(struct tt_pq *w)
{
	if (get_err(w))
		return NULL;
	if (w->mode != PQ_ROWS) {
		if (w->mode == PQ_VALUES || !w->int_table) {
			set_err(w, -EINVAL);
			return NULL;
		}
		set_mode(w, PQ_ROWS);
		set_room(w);
		w->open_mark = (uint32_t)w->nr_cols + 1;
	}
	if (w->cur != 0) {
		set_err(w, -EINVAL);
		return NULL;
	}
	w->cur = w->nr_cols + 1; /* open: any other call but _done is a misuse */
	return w->next_row;
}

int64_t *tt_pq_int_row_begin(struct tt_pq *w)
{
	/* cur is 0 between rows; open_mark 0 until PQ_ROWS */
	if (__builtin_expect(w->cur != 0 || !w->open_mark || get_err(w), 0))
		return int_row_begin_slow(w);
	w->cur = w->open_mark;
	return w->next_row;
}

int tt_pq_int_row_done(struct tt_pq *w, uint64_t nulls)
{
	nulls &= w->col_mask;
	if (__builtin_expect(w->cur != w->open_mark || !w->open_mark || (nulls & ~w->null_ok) ||
				     get_err(w),
			     0)) {
		int err = get_err(w);
		if (err)
			return err;
		set_err(w, -EINVAL);
		return get_err(w);
	}
	w->cur = 0;
	struct slice *sl = w->sl;
	sl->nulls[sl->rows++] = nulls;
	sl->any |= nulls;
	w->next_row += w->nr_cols;
	w->rg_bytes += nulls ? row_bytes_of(w, nulls) : w->row_bytes;
	if (__builtin_expect(--w->room == 0 || w->rg_bytes >= w->o.row_group_bytes, 0))
		return row_edge(w);
	return 0;
}

int tt_pq_int_row(struct tt_pq *w, const int64_t *v, uint64_t nulls)
{
	int64_t *row = tt_pq_int_row_begin(w);
	if (!row)
		return get_err(w);
	memcpy(row, v, w->nr_cols * sizeof(*v));
	return tt_pq_int_row_done(w, nulls);
}

uint64_t tt_pq_rows(const struct tt_pq *w)
{
	return w->total_rows + (w->room0 - w->room);
}

/* ---- footer ---- */

static int phys_type(enum tt_pq_type t)
{
	switch (t) {
	case TT_PQ_BOOL: return PT_BOOLEAN;
	case TT_PQ_INT32: return PT_INT32;
	case TT_PQ_INT64: return PT_INT64;
	case TT_PQ_STRING: return PT_BYTE_ARRAY;
	}
	return PT_INT64;
}

static void footer_chunk(struct tp *t, const struct col *c, const struct chunk_meta *m)
{
	tp_elem_struct(t); /* ColumnChunk */
	tp_i64(t, 2, 0);   /* file_offset: no metadata outside the footer */
	tp_struct(t, 3);   /* ColumnMetaData */
	tp_i32(t, 1, phys_type(c->type));
	if (c->type == TT_PQ_STRING) {
		tp_list(t, 2, TC_I32, 3);
		buf_varint(t->b, zigzag64(ENC_PLAIN));
		buf_varint(t->b, zigzag64(ENC_RLE));
		buf_varint(t->b, zigzag64(ENC_RLE_DICTIONARY));
	} else if (c->type == TT_PQ_BOOL) {
		tp_list(t, 2, TC_I32, 2);
		buf_varint(t->b, zigzag64(ENC_PLAIN));
		buf_varint(t->b, zigzag64(ENC_RLE));
	} else {
		tp_list(t, 2, TC_I32, 2);
		buf_varint(t->b, zigzag64(ENC_RLE));
		buf_varint(t->b, zigzag64(ENC_DELTA_BINARY_PACKED));
	}
	tp_list(t, 3, TC_BINARY, 1);
	buf_varint(t->b, strlen(c->name));
	buf_put(t->b, c->name, strlen(c->name));
	tp_i32(t, 4, m->codec);
	tp_i64(t, 5, m->num_values);
	tp_i64(t, 6, m->unc_size);
	tp_i64(t, 7, m->comp_size);
	tp_i64(t, 9, m->data_off);
	if (m->dict_off >= 0)
		tp_i64(t, 11, m->dict_off);
	tp_struct(t, 12); /* Statistics */
	if (m->have_minmax && c->type != TT_PQ_STRING) {
		/* deprecated max/min (signed order) for old readers: same values */
		tp_bin(t, 1, m->max, m->max_len);
		tp_bin(t, 2, m->min, m->min_len);
	}
	tp_i64(t, 3, m->nulls);
	if (m->have_minmax) {
		tp_bin(t, 5, m->max, m->max_len);
		tp_bin(t, 6, m->min, m->min_len);
	}
	tp_end(t); /* Statistics */
	tp_end(t); /* ColumnMetaData */
	tp_end(t); /* ColumnChunk */
}

static void write_footer(struct tt_pq *w)
{
	const struct pq_file *pf = w->file;
	struct buf b = { 0 };
	struct tp t = { .b = &b };
	tp_i32(&t, 1, 2); /* version */
	tp_list(&t, 2, TC_STRUCT, w->nr_cols + 1);
	tp_elem_struct(&t); /* root */
	tp_str(&t, 4, "schema");
	tp_i32(&t, 5, (int32_t)w->nr_cols);
	tp_end(&t);
	for (size_t i = 0; i < w->nr_cols; i++) {
		const struct col *c = &w->cols[i];
		tp_elem_struct(&t);
		tp_i32(&t, 1, phys_type(c->type));
		tp_i32(&t, 3, c->nullable ? 1 : 0); /* OPTIONAL : REQUIRED */
		tp_str(&t, 4, c->name);
		if (c->type == TT_PQ_STRING) {
			tp_i32(&t, 6, CT_UTF8);
			tp_struct(&t, 10); /* LogicalType */
			tp_empty(&t, 1);   /* STRING */
			tp_end(&t);
		}
		tp_end(&t);
	}
	tp_i64(&t, 3, (int64_t)pf->total_rows);
	tp_list(&t, 4, TC_STRUCT, pf->nr_rgs);
	for (size_t r = 0; r < pf->nr_rgs; r++) {
		tp_elem_struct(&t); /* RowGroup */
		tp_list(&t, 1, TC_STRUCT, w->nr_cols);
		for (size_t i = 0; i < w->nr_cols; i++)
			footer_chunk(&t, &w->cols[i], &pf->rgs[r].chunks[i]);
		tp_i64(&t, 2, pf->rgs[r].unc_size);
		tp_i64(&t, 3, pf->rgs[r].rows);
		tp_i64(&t, 5, pf->rgs[r].file_off);
		tp_i64(&t, 6, pf->rgs[r].comp_size);
		if (r <= INT16_MAX) {
			tp_field(&t, 7, TC_I16);
			buf_varint(&b, zigzag64((int64_t)r));
		}
		tp_end(&t);
	}
	if (pf->nr_kv) {
		tp_list(&t, 5, TC_STRUCT, pf->nr_kv);
		for (size_t i = 0; i < pf->nr_kv; i++) {
			tp_elem_struct(&t);
			tp_str(&t, 1, pf->kv[2 * i]);
			tp_str(&t, 2, pf->kv[2 * i + 1]);
			tp_end(&t);
		}
	}
	tp_str(&t, 6, "rec tracetool " TT_VERSION);
	tp_list(&t, 7, TC_STRUCT, w->nr_cols); /* column_orders */
	for (size_t i = 0; i < w->nr_cols; i++) {
		tp_elem_struct(&t);
		tp_empty(&t, 1); /* TYPE_ORDER */
		tp_end(&t);
	}
	buf_u8(&b, 0); /* end of FileMetaData */
	put_file(w, b.p, b.n);
	uint8_t tail[8];
	le_bytes(tail, (int64_t)b.n, 4);
	memcpy(tail + 4, "PAR1", 4);
	put_file(w, tail, 8);
	free(b.p);
}

int tt_pq_close(struct tt_pq *w, uint64_t *bytes_out)
{
	const size_t nr_cols = w->nr_cols;

	if (w->cur != 0)
		set_err(w, -EINVAL);
	if (w->mode == PQ_ROWS)
		sync_rows(w);
	if (w->rg_rows && w->mode == PQ_ROWS)
		submit_slice(w, true, true);
	else if (w->rg_rows)
		submit(w, true);
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->work);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->done);
		pthread_mutex_destroy(&w->mu);
	}
	struct pq_file *pf = w->file;

	pthread_mutex_lock(&pf->mu);
	const bool last = --pf->open == 0;
	pthread_mutex_unlock(&pf->mu);
	if (!w->sibling) {
		/* The footer needs every row group: siblings are closed first. */
		if (!last)
			set_err(w, -EINVAL);
		if (!get_err(w))
			write_footer(w);
		if (fclose(pf->f) != 0)
			set_err(w, errno ? -errno : -EIO);
		pf->f = NULL;
	}
	int err = get_err(w);
	if (bytes_out)
		*bytes_out = w->sibling ? 0 : pf->off;
	for (size_t i = 0; i < w->nr_cols; i++) {
		struct col *c = &w->cols[i];
		free(c->name);
		free(c->pages.p);
		free(c->dict.p);
		free(c->slots);
		free(c->entry_off);
		free(c->vals);
		free(c->defs);
		free(c->pdefs);
		free(c->pbody.p);
	}
	for (unsigned k = 0; k < w->nr_slices; k++) {
		free(w->slices[k].vals);
		free(w->slices[k].nulls);
	}
	free(w->slices);
	free(w->tcol);
	free(w->cols);
	free(w->page.p);
	free(w->comp.p);
	free(w->hdr.p);
	ZSTD_freeCCtx(w->zc);
	free(w);
	if (last) {
		for (size_t r = 0; r < pf->nr_rgs; r++) {
			for (size_t i = 0; i < nr_cols; i++) {
				free(pf->rgs[r].chunks[i].min);
				free(pf->rgs[r].chunks[i].max);
			}
			free(pf->rgs[r].chunks);
		}
		free(pf->rgs);
		for (size_t i = 0; i < 2 * pf->nr_kv; i++)
			free(pf->kv[i]);
		free(pf->kv);
		pthread_mutex_destroy(&pf->mu);
		free(pf);
	}
	return err;
}
