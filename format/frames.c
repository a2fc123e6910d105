/* SPDX-License-Identifier: MIT */
/*
 * frames.c - a trace file as a sequence of independent zstd frames
 * (FORMAT.md §2). Finds each frame's boundaries, decompresses it into a
 * bounded buffer and reports truncation and damage with the frame's index and
 * file offset. Memory is bounded by one compressed plus one decompressed
 * frame, whatever the file's length. What the records mean is decode.c's.
 */
#define _GNU_SOURCE
#include "recfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#define READ_CHUNK_BYTES (1u << 20)
#define ZSTD_MAGIC_BYTES "\x28\xb5\x2f\xfd"

struct recfmt_reader {
	int fd;
	uint64_t file_bytes;	/* size at open */
	uint64_t read_bytes;	/* consumed from the fd so far */
	uint8_t *in;		/* compressed bytes [in_pos, in_len) not yet used */
	size_t in_pos, in_len, in_cap;
	uint64_t in_file_offset; /* file offset of in[0] */
	uint8_t *out;
	size_t out_cap;
	ZSTD_DCtx *dctx;
	uint64_t frame_index;	 /* of the next frame to return */
	uint64_t last_index;	 /* of the frame last returned or failed */
	uint64_t last_offset;
	bool eof;
	bool can_continue;
};

static enum recfmt_status fail(struct recfmt_reader *r, struct recfmt_error *err,
			       enum recfmt_status status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum recfmt_status fail(struct recfmt_reader *r, struct recfmt_error *err,
			       enum recfmt_status status, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->status = status;
		err->frame_index = r ? r->last_index : 0;
		err->frame_offset = r ? r->last_offset : 0;
		err->record_offset = 0;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return status;
}

enum recfmt_status recfmt_reader_open(struct recfmt_reader **out, const char *path,
				      struct recfmt_error *err)
{
	struct recfmt_reader *r;
	struct stat st;
	int fd;

	*out = NULL;
	/* O_NONBLOCK: opening a FIFO with no writer must not wait for one. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fail(NULL, err, RECFMT_IO, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
		close(fd);
		return fail(NULL, err, RECFMT_IO, "cannot read: %s", strerror(e));
	}
	/* Only regular files: a FIFO, socket or device (/dev/zero,
	 * /dev/urandom) may never end, and readers walk a file more than once
	 * (a metadata pass, then the main pass), which a pipe cannot give. */
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(NULL, err, RECFMT_IO,
			    "not a regular file (a pipe or device cannot be read twice; "
			    "save the trace to a file first)");
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->dctx = ZSTD_createDCtx())) {
		free(r);
		close(fd);
		return fail(NULL, err, RECFMT_NOMEM, "out of memory");
	}
	r->fd = fd;
	r->file_bytes = (uint64_t)st.st_size;
	r->can_continue = true;
	*out = r;
	return RECFMT_OK;
}

void recfmt_reader_close(struct recfmt_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->in);
	free(r->out);
	free(r);
}

bool recfmt_reader_can_continue(const struct recfmt_reader *r)
{
	return r->can_continue;
}

uint64_t recfmt_reader_frame_index(const struct recfmt_reader *r)
{
	return r->last_index;
}

uint64_t recfmt_reader_frame_offset(const struct recfmt_reader *r)
{
	return r->last_offset;
}

uint64_t recfmt_reader_file_bytes(const struct recfmt_reader *r)
{
	return r->file_bytes;
}

/* Largest compressed frame we accept: its content is bounded too. */
static size_t max_in_bytes(void)
{
	return ZSTD_compressBound(RECFMT_MAX_FRAME_BYTES) + 4096;
}

static int reserve_out(uint8_t **out_data, size_t *out_cap, unsigned long long content);
#define HUGE_BYTES (2u << 20)

/*
 * Reads more of the file behind the unused input, moving that input to the
 * front first. Return: bytes added (0 at end of file), or -1 on error.
 */
static ssize_t fill(struct recfmt_reader *r)
{
	size_t avail = r->in_len - r->in_pos, want;
	ssize_t n;

	if (r->eof)
		return 0;
	if (r->in_pos > 0) {
		memmove(r->in, r->in + r->in_pos, avail);
		r->in_file_offset += r->in_pos;
		r->in_pos = 0;
		r->in_len = avail;
	}
	/* Room for a chunk, or for the rest of a smaller file (+1 to see its
	 * end): small files get small buffers, which matters to callers that
	 * open many (the fuzzers, the corruption sweep). */
	want = READ_CHUNK_BYTES;
	if (r->file_bytes > r->read_bytes && r->file_bytes - r->read_bytes < want)
		want = (size_t)(r->file_bytes - r->read_bytes) + 1;
	else if (r->file_bytes == r->read_bytes)
		want = 4096; /* at the size seen at open: most likely the end */
	if (r->in_cap - r->in_len < want) {
		size_t cap = r->in_cap ? r->in_cap * 2 : 4096, got = 0;
		uint8_t *in = NULL;

		while (cap - r->in_len < want)
			cap *= 2;
		/* Huge pages too (reserve_out()), and all of what it rounded up
		 * to is used: a 1 MiB read buffer is 2 MiB and needs no move to
		 * a larger one at the second read. The unused input moves. */
		if (cap >= HUGE_BYTES / 2 && reserve_out(&in, &got, cap) == 0) {
			cap = got;
			if (r->in_len)
				memcpy(in, r->in, r->in_len);
			free(r->in);
		} else if (cap < HUGE_BYTES / 2) {
			in = realloc(r->in, cap);
		}
		if (!in) {
			errno = ENOMEM;
			return -1;
		}
		r->in = in;
		r->in_cap = cap;
	}
	do
		n = read(r->fd, r->in + r->in_len, r->in_cap - r->in_len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		r->eof = true;
	r->in_len += (size_t)n;
	r->read_bytes += (uint64_t)n;
	return n;
}

/* Skips to the next place that starts with zstd's frame magic, if any. */
static void resync(struct recfmt_reader *r)
{
	r->in_pos++;
	for (;;) {
		size_t avail = r->in_len - r->in_pos;
		uint8_t *hit = memmem(r->in + r->in_pos, avail, ZSTD_MAGIC_BYTES, 4);

		if (hit) {
			r->in_pos = (size_t)(hit - r->in);
			return;
		}
		/* Keep the last 3 bytes: the magic may straddle the read. */
		r->in_pos = avail > 3 ? r->in_len - 3 : r->in_pos;
		if (fill(r) <= 0) {
			r->in_pos = r->in_len;
			r->can_continue = false;
			return;
		}
	}
}

size_t recfmt_frame_length(const uint8_t *p, size_t avail)
{
	size_t n = ZSTD_findFrameCompressedSize(p, avail);

	return ZSTD_isError(n) || n > avail ? 0 : n;
}

bool recfmt_frame_measure(const uint8_t *p, size_t len, uint64_t *content_bytes)
{
	size_t n;
	unsigned long long content;

	if (len < 4 || recfmt_load_u32le(p) != ZSTD_MAGICNUMBER)
		return false;
	n = ZSTD_findFrameCompressedSize(p, len);
	if (ZSTD_isError(n) || n != len)
		return false;
	content = ZSTD_getFrameContentSize(p, len);
	if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN)
		return false;
	*content_bytes = content;
	return true;
}

/*
 * Finds and checks the next frame: on RECFMT_OK it is r->in[r->in_pos,
 * + *frame_bytes), of at most *content decompressed bytes, and the reader
 * counts it as read (frame index and offset) though in_pos stays at it.
 * On any other status both are 0: written on every path, as fail()'s
 * status (never RECFMT_OK) is out of the compiler's sight.
 */
static enum recfmt_status locate_frame(struct recfmt_reader *r, size_t *frame_bytes_out,
				       unsigned long long *content_out, struct recfmt_error *err)
{
	size_t frame_bytes, avail;
	unsigned long long content;

	*frame_bytes_out = 0;
	*content_out = 0;
	if (!r->can_continue)
		return RECFMT_END_OF_INPUT;
	for (;;) {
		avail = r->in_len - r->in_pos;
		if (avail == 0 && fill(r) < 0)
			return fail(r, err, RECFMT_IO, "read error: %s", strerror(errno));
		avail = r->in_len - r->in_pos;
		if (avail == 0) {
			r->can_continue = false;
			return RECFMT_END_OF_INPUT;
		}
		r->last_index = r->frame_index;
		r->last_offset = r->in_file_offset + r->in_pos;
		frame_bytes = ZSTD_findFrameCompressedSize(r->in + r->in_pos, avail);
		if (ZSTD_isError(frame_bytes)) {
			bool need_more = ZSTD_getErrorCode(frame_bytes) == ZSTD_error_srcSize_wrong;

			/* A prefix of the magic at the very end is a cut-short frame. */
			if (!need_more && avail < 4 && r->eof &&
			    memcmp(r->in + r->in_pos, ZSTD_MAGIC_BYTES, avail) == 0)
				need_more = true;
			if (need_more && !r->eof && avail < max_in_bytes()) {
				if (fill(r) < 0)
					return fail(r, err, RECFMT_IO, "read error: %s",
						    strerror(errno));
				continue;
			}
			if (need_more && r->eof) {
				r->can_continue = false;
				r->in_pos = r->in_len;
				return fail(r, err, RECFMT_TRUNCATED,
					    "file ends inside a frame (%zu bytes of it present)",
					    avail);
			}
			r->frame_index++;
			resync(r);
			if (need_more)
				return fail(r, err, RECFMT_CORRUPT,
					    "bad frame: larger than the %u-byte limit",
					    RECFMT_MAX_FRAME_BYTES);
			return fail(r, err, RECFMT_CORRUPT, "bad frame: %s",
				    ZSTD_getErrorName(frame_bytes));
		}
		/* A zstd skippable frame carries nothing for us. */
		if ((recfmt_load_u32le(r->in + r->in_pos) & 0xfffffff0u) == ZSTD_MAGIC_SKIPPABLE_START) {
			r->in_pos += frame_bytes;
			continue;
		}
		break;
	}
	r->frame_index++;
	content = ZSTD_getFrameContentSize(r->in + r->in_pos, frame_bytes);
	if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN)
		content = RECFMT_MAX_FRAME_BYTES; /* decompress with the limit as bound */
	else if (content > RECFMT_MAX_FRAME_BYTES) {
		r->in_pos += frame_bytes;
		return fail(r, err, RECFMT_CORRUPT,
			    "bad frame: claims %llu bytes, more than the %u-byte limit", content,
			    RECFMT_MAX_FRAME_BYTES);
	}
	*frame_bytes_out = frame_bytes;
	*content_out = content;
	return RECFMT_OK;
}

/*
 * Grows *out_data (capacity *out_cap) to hold content bytes; what it held is
 * lost. Buffers of 1 MiB and more are 2 MiB-aligned and asked to be backed
 * by huge pages: a decompressed frame is written once and read once, and on
 * a VM the first touch of each fresh 4 KiB page is what costs (a 4 MiB
 * frame: 1024 page faults, or 2). A tail of less than half a huge page past
 * the last whole one stays on small pages: the kernel zeroes every huge
 * page it faults in, and a frame of 4 MiB and a few records (bench_analyzer's
 * 4.06 MiB) would otherwise zero a third 2 MiB page for 68 KiB.
 */
static int reserve_out(uint8_t **out_data, size_t *out_cap, unsigned long long content)
{
	if (*out_cap < content && content >= HUGE_BYTES / 2) {
		size_t cap = ((size_t)content + HUGE_BYTES - 1) & ~(size_t)(HUGE_BYTES - 1);
		size_t huge = (size_t)content & ~(size_t)(HUGE_BYTES - 1);
		void *out;

		if (posix_memalign(&out, HUGE_BYTES, cap) != 0)
			return -1;
		if (content - huge >= HUGE_BYTES / 2)
			huge += HUGE_BYTES;
#ifdef MADV_HUGEPAGE
		(void)madvise(out, huge, MADV_HUGEPAGE); /* a hint: fine if refused */
#endif
		free(*out_data);
		*out_data = out;
		*out_cap = cap;
	}
	if (*out_cap < content) {
		size_t cap = *out_cap ? *out_cap : 1u << 16;
		uint8_t *out;

		while (cap < content)
			cap *= 2;
		out = realloc(*out_data, cap);
		if (!out)
			return -1;
		*out_data = out;
		*out_cap = cap;
	}
	return 0;
}

/* ZSTD_decompressDCtx()'s outcome as the reader reports it. */
static enum recfmt_status decompressed(struct recfmt_reader *r, struct recfmt_error *err,
				       size_t got, size_t *len)
{
	if (ZSTD_isError(got)) {
		if (ZSTD_getErrorCode(got) == ZSTD_error_checksum_wrong)
			return fail(r, err, RECFMT_CORRUPT, "bad checksum");
		return fail(r, err, RECFMT_CORRUPT, "bad frame: %s", ZSTD_getErrorName(got));
	}
	*len = got;
	return RECFMT_OK;
}

/*
 * Finds, checks and decompresses the next frame into *out_data (growing it
 * and *out_cap as needed), setting *len. The body of both recfmt_reader_next()
 * (the reader's own buffer) and recfmt_reader_next_into() (the caller's).
 */
static enum recfmt_status next_frame(struct recfmt_reader *r, uint8_t **out_data, size_t *out_cap,
				     size_t *len, struct recfmt_error *err)
{
	unsigned long long content;
	size_t frame_bytes, got;
	enum recfmt_status st = locate_frame(r, &frame_bytes, &content, err);

	if (st != RECFMT_OK)
		return st;
	if (reserve_out(out_data, out_cap, content) < 0)
		return fail(r, err, RECFMT_NOMEM, "out of memory");
	got = ZSTD_decompressDCtx(r->dctx, *out_data, *out_cap, r->in + r->in_pos, frame_bytes);
	r->in_pos += frame_bytes;
	return decompressed(r, err, got, len);
}

enum recfmt_status recfmt_reader_next_compressed(struct recfmt_reader *r,
						 struct recfmt_frame_bytes *fb,
						 struct recfmt_error *err)
{
	unsigned long long content;
	size_t frame_bytes;
	enum recfmt_status st = locate_frame(r, &frame_bytes, &content, err);

	fb->buf.len = 0;
	if (st != RECFMT_OK)
		return st;
	if (fb->buf.cap < frame_bytes && reserve_out(&fb->buf.data, &fb->buf.cap, frame_bytes) < 0)
		return fail(r, err, RECFMT_NOMEM, "out of memory");
	memcpy(fb->buf.data, r->in + r->in_pos, frame_bytes);
	r->in_pos += frame_bytes;
	fb->buf.len = frame_bytes;
	fb->content_bytes = (size_t)content;
	fb->index = r->last_index;
	fb->offset = r->last_offset;
	return RECFMT_OK;
}

struct recfmt_dctx *recfmt_dctx_new(void)
{
	return (struct recfmt_dctx *)ZSTD_createDCtx();
}

void recfmt_dctx_free(struct recfmt_dctx *d)
{
	ZSTD_freeDCtx((ZSTD_DCtx *)d);
}

enum recfmt_status recfmt_frame_decompress(struct recfmt_dctx *d,
					   const struct recfmt_frame_bytes *fb,
					   struct recfmt_buf *out, struct recfmt_error *err)
{
	/* fail() takes the frame's place from a reader: one that says it. */
	struct recfmt_reader at = { .last_index = fb->index, .last_offset = fb->offset };
	size_t got;

	out->len = 0;
	if (!d || reserve_out(&out->data, &out->cap, fb->content_bytes) < 0)
		return fail(&at, err, RECFMT_NOMEM, "out of memory");
	got = ZSTD_decompressDCtx((ZSTD_DCtx *)d, out->data, out->cap, fb->buf.data, fb->buf.len);
	return decompressed(&at, err, got, &out->len);
}

enum recfmt_status recfmt_reader_next(struct recfmt_reader *r, const uint8_t **data, size_t *len,
				      struct recfmt_error *err)
{
	enum recfmt_status st = next_frame(r, &r->out, &r->out_cap, len, err);

	if (st == RECFMT_OK)
		*data = r->out;
	return st;
}

enum recfmt_status recfmt_reader_next_into(struct recfmt_reader *r, struct recfmt_buf *buf,
					   struct recfmt_error *err)
{
	enum recfmt_status st = next_frame(r, &buf->data, &buf->cap, &buf->len, err);

	if (st != RECFMT_OK)
		buf->len = 0;
	return st;
}
