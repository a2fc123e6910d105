/* SPDX-License-Identifier: MIT */
/*
 * parquet.h - a streaming Apache Parquet writer over libzstd (Debian 12 has
 * no Arrow or Parquet C library). One flat table per file: columns BOOLEAN,
 * INT32, INT64 and UTF-8 strings (BYTE_ARRAY, logical type STRING), each
 * REQUIRED or OPTIONAL (nulls as definition levels). Integers are
 * DELTA_BINARY_PACKED, booleans PLAIN, strings dictionary encoded
 * (RLE_DICTIONARY); data pages
 * are version 1 pages compressed with ZSTD (a column chunk whose first page
 * zstd shrinks by less than 1/16 has its pages as zstd frames of raw
 * blocks, codec ZSTD all the same); every column chunk carries its
 * statistics (min, max, null_count). The footer is the thrift compact
 * encoding of FileMetaData, written by hand (parquet.c).
 *
 * Memory is bounded by one row group: values are buffered column by column
 * for one page (tt_pq_opts.page_rows rows), whose pages are then encoded and
 * compressed into per-column buffers (while the values are in cache) —
 * or, for rows given by tt_pq_int_row*(), a few slices of rows that are
 * delta-packed into the pages as they come; when
 * the row group is full (row_group_rows rows, or row_group_bytes of values
 * and dictionaries as given) its chunks are written and the buffers
 * reused. Only the footer's
 * per-chunk metadata (about 100 bytes per column per row group) outlives
 * a row group.
 *
 * Use: tt_pq_create(), then per row one value per column in column order
 * (tt_pq_i64/i32/bool/str/null), tt_pq_row_end(), and tt_pq_close(), which
 * writes the footer and tells whether everything reached the file.
 * Not thread-safe: one writer belongs to one thread (which may have the
 * writer's own encoding thread: tt_pq_opts.encode_thread); more threads
 * write one file through siblings (tt_pq_sibling()).
 */
#ifndef TT_PARQUET_H
#define TT_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tt_pq_type { TT_PQ_BOOL, TT_PQ_INT32, TT_PQ_INT64, TT_PQ_STRING };

struct tt_pq_col {
	const char *name;
	enum tt_pq_type type;
	bool nullable; /* OPTIONAL (may hold nulls), else REQUIRED */
};

/* Zero fields take the defaults in brackets. */
struct tt_pq_opts {
	uint64_t row_group_rows;  /* [1 Mi rows] */
	size_t row_group_bytes;   /* [64 MiB] of buffered values */
	uint32_t page_rows;       /* [64 Ki rows] per data page */
	int zstd_level;           /* [1] */
	/* Encode and write pages on a thread of the writer's own while the
	 * caller fills the next rows; the same bytes. Only for rows given by
	 * tt_pq_int_row*() (a table of integers and booleans); ignored when
	 * the thread cannot be created. */
	bool encode_thread;       /* [false] */
};

struct tt_pq;

/*
 * Opens path for writing (truncating it) with the given columns (their
 * names are copied). NULL with errno set when the file cannot be created or
 * the columns are invalid (none, or more than 1000).
 */
struct tt_pq *tt_pq_create(const char *path, const struct tt_pq_col *cols, size_t nr_cols,
			   const struct tt_pq_opts *opts);

/* Adds a key/value pair to the footer's key_value_metadata (copied). */
void tt_pq_meta(struct tt_pq *w, const char *key, const char *value);

/*
 * The next column's value in the current row. A value of the wrong type for
 * its column, or a null in a REQUIRED column, makes the writer fail (the
 * error is returned by tt_pq_row_end and tt_pq_close).
 */
void tt_pq_i64(struct tt_pq *w, int64_t v);
void tt_pq_i32(struct tt_pq *w, int32_t v);
void tt_pq_bool(struct tt_pq *w, bool v);
void tt_pq_str(struct tt_pq *w, const char *s, size_t len);
void tt_pq_null(struct tt_pq *w);

/*
 * Ends the row: every column must have had its value. May write a row
 * group. 0, or a negative errno value once the writer has failed (-EINVAL
 * for a misuse, else the write error); after a failure the writer only
 * waits for tt_pq_close.
 */
int tt_pq_row_end(struct tt_pq *w);

/*
 * A whole row of a table with no string column, in one call: column i
 * takes v[i] (converted to its type; a BOOLEAN is v[i] != 0), or null when
 * bit i of nulls is set (nullable columns only; at most 64 columns). Then
 * ends the row as tt_pq_row_end. The row may wait in a small stage (up to
 * 128 rows; 512 with the encoding thread) before it is encoded, so a
 * write error may be returned a few rows later (at the latest by
 * tt_pq_close); a misuse is refused at once (-EINVAL). Equal to the
 * per-value calls, byte for byte, at a fraction of their cost; the two are
 * not mixed in one table: its first row decides (-EINVAL for the other).
 */
int tt_pq_int_row(struct tt_pq *w, const int64_t *v, uint64_t nulls);

/*
 * tt_pq_int_row() in place: _begin returns where the row's nr_cols values
 * go (NULL once the writer has failed, or on a misuse: a string column, a
 * row of per-value calls begun), the caller stores all of them there, and
 * _done(w, nulls) takes the row as tt_pq_int_row(w, values, nulls) would.
 * No other call on w in between. Saves the copy of the row.
 */
int64_t *tt_pq_int_row_begin(struct tt_pq *w);
int tt_pq_int_row_done(struct tt_pq *w, uint64_t nulls);

/* Rows ended so far by this writer (not its siblings). */
uint64_t tt_pq_rows(const struct tt_pq *w);

/*
 * A second writer of first's file, with its columns and options but no
 * encoding thread, for another thread of the caller: each writer takes its
 * own rows and encodes its own row groups, and writes each row group whole
 * under the file's lock, so the file holds the row groups of all of them
 * in the order they were finished (rows are not interleaved within a row
 * group). Key/value metadata is the file's, whichever writer adds it. A
 * sibling is closed (tt_pq_close) before first.
 */
struct tt_pq *tt_pq_sibling(struct tt_pq *first);

/*
 * Writes the last row group and, for the writer made by tt_pq_create()
 * (closed after its siblings), the footer; closes the file and frees w.
 * 0, or a negative errno value (the file is then incomplete; an error of
 * any sibling is every writer's). If bytes_out is not NULL it receives the
 * file's size (0 for a sibling).
 */
int tt_pq_close(struct tt_pq *w, uint64_t *bytes_out);

#endif /* TT_PARQUET_H */
