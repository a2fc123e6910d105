/* SPDX-License-Identifier: MIT */
/*
 * compact.c - the fast frames of a finished stream file, compressed again
 * once the writer has caught up (docs/DESIGN.md, "The writer under
 * pressure"). Under pressure the writer compresses a frame fast, its
 * literals stored raw (FORMAT.md §3.1, flag RECFMT_FRAME_FAST): that kept it
 * cheap but made a whole-program recording's file 4-7 times larger. What it
 * shed then it redoes at the end of the recording, when nothing must keep
 * up any more: every fast frame is decompressed and compressed the normal
 * way (flag RECFMT_FRAME_RECOMPRESSED instead), the other frames copied as
 * they are, into a new file beside the output that then replaces it by
 * rename(2). Until that rename the output is the file the writer wrote,
 * whole: a kill -9 meanwhile leaves it (and a hidden temporary file) as
 * it was, and REC_FLUSH_MS's promise holds. Only for a regular file that
 * is still at its path, ours and with one link; with a time budget; any
 * failure leaves the file as the writer wrote it.
 *
 * The writer notes each frame it wrote (rec__compact_note()); the
 * recompression runs on the writer thread after the END frame
 * (rec__compact_run()), with the crash hand-shake around each frame, so
 * that a crash meanwhile appends to the file the writer wrote and the
 * recompression is abandoned.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

/* At most this much of the writer's CPU time, and of wall time (on a busy
 * machine the writer gets a share of a CPU: the exit waits for it), is
 * spent recompressing: past either, the frames left are copied as they are
 * (README, "What librec guarantees"). */
#define COMPACT_BUDGET_NS 2000000000ull
#define COMPACT_BUDGET_WALL_NS 5000000000ull
/* A file whose fast frames are less than this share of it is left as it is. */
#define COMPACT_MIN_SHARE 10u /* percent */
#define COPY_CHUNK_BYTES (1u << 20)

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rec__compact_note(struct rec__compact *c, uint64_t ix_len, uint64_t len, bool fast)
{
	c->off += ix_len; /* the index frame before it (FORMAT.md §6) */
	if (fast && !c->off_broken) {
		if (c->nr == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 64;
			struct rec__compact_frame *f = realloc(c->frames, cap * sizeof(*f));

			if (!f) {
				c->off_broken = true; /* not all of them known: leave the file */
				goto out;
			}
			c->frames = f;
			c->cap = cap;
		}
		c->frames[c->nr++] = (struct rec__compact_frame){ c->off, len, (uint32_t)ix_len };
		c->fast_bytes += len;
	}
out:
	c->off += len;
}

void rec__compact_fini(struct rec__compact *c)
{
	free(c->frames);
	memset(c, 0, sizeof(*c));
}

/* Bytes [off, end) of `from` appended to `to`. Return: 0 or an errno. */
static int copy_range(int from, int to, uint64_t off, uint64_t end, struct recfmt_buf *buf)
{
	while (off < end) {
		size_t n = end - off < COPY_CHUNK_BYTES ? (size_t)(end - off) : COPY_CHUNK_BYTES;
		loff_t in = (loff_t)off;
		ssize_t k = copy_file_range(from, &in, to, NULL, n, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			/* Not supported here (another file system, an old kernel): by hand. */
			if (recfmt_buf_reserve(buf, n))
				return ENOMEM;
			k = pread(from, buf->data, n, (off_t)off);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return k < 0 ? errno : EIO;
			for (ssize_t done = 0; done < k;) {
				ssize_t w = write(to, buf->data + done, (size_t)(k - done));

				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0)
					return w < 0 ? errno : EIO;
				done += w;
			}
		}
		off += (uint64_t)k;
	}
	return 0;
}

static int write_whole(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * One fast frame [off, off + len) of `from`, recompressed into `out`, or
 * read into `in` only when that is larger.
 * Return: the bytes to append (out's or in's), or NULL if the frame could
 * not be read or is not a fast frame (then nothing was changed).
 */
static const struct recfmt_buf *recompress(struct recfmt_compressor *zc, ZSTD_DCtx *dc, int from,
					   uint64_t off, size_t len, struct recfmt_buf *in,
					   struct recfmt_buf *raw, struct recfmt_buf *out)
{
	const size_t flags_at = RECFMT_RECORD_HEADER_BYTES + 8;
	unsigned long long size;
	uint32_t flags;
	size_t n;

	if (recfmt_buf_reserve(in, len) || pread(from, in->data, len, (off_t)off) != (ssize_t)len)
		return NULL;
	in->len = len;
	size = ZSTD_getFrameContentSize(in->data, len);
	if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
	    size > RECFMT_MAX_FRAME_BYTES || recfmt_buf_reserve(raw, (size_t)size))
		return NULL;
	n = ZSTD_decompressDCtx(dc, raw->data, (size_t)size, in->data, len);
	if (ZSTD_isError(n) || n != size)
		return NULL;
	raw->len = n;
	/* The frame's FRAME record (FORMAT.md §3.1) comes first, 12 bytes with its flags. */
	if (n < flags_at + 4 || raw->data[0] != RECFMT_FRAME ||
	    recfmt_load_u32le(raw->data + 4) < 12)
		return NULL;
	flags = recfmt_load_u32le(raw->data + flags_at);
	if (!(flags & RECFMT_FRAME_FAST))
		return NULL;
	recfmt_store_u32le(raw->data + flags_at,
			   (flags & ~RECFMT_FRAME_FAST) | RECFMT_FRAME_RECOMPRESSED);
	recfmt_compressor_set_fast(zc, false);
	if (recfmt_compress_frame(zc, raw, out))
		return NULL;
	return out->len <= len ? out : in;
}

/*
 * The index frame [off, off + len) of `from` (FORMAT.md §6) made to
 * describe its data frame recompressed into `b`, appended to `to`; left as
 * it is when it is not one (then a reader finds the hash wrong and reads the
 * file without it). Return: 0 or an errno.
 */
static int write_index(int from, int to, uint64_t off, size_t len, const struct recfmt_buf *b,
		       uint32_t frame_flags, struct recfmt_buf *buf)
{
	if (recfmt_buf_reserve(buf, len) || pread(from, buf->data, len, (off_t)off) != (ssize_t)len)
		return EIO;
	(void)recfmt_index_patch(buf->data, len, b->len, recfmt_xxh64(b->data, b->len),
				 frame_flags);
	return write_whole(to, buf->data, len);
}

/*
 * The temporary file beside `path`: "DIR/.BASE.rec-XXXXXX", hidden.
 * Return: its fd (mode 0600 until fchmod), or -1.
 */
static int make_temp(const char *path, char *tmp, size_t tmp_bytes)
{
	const char *base = strrchr(path, '/');
	int n, fd;

	if (base)
		n = snprintf(tmp, tmp_bytes, "%.*s/.%s.rec-XXXXXX", (int)(base - path), path, base + 1);
	else
		n = snprintf(tmp, tmp_bytes, ".%s.rec-XXXXXX", path);
	if (n < 0 || (size_t)n >= tmp_bytes)
		return -1;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Never 0, 1 or 2: the host's own writes there would land in the file. */
	fd = rec__fd_above_stdio(fd);
	if (fd < 0) {
		unlink(tmp);
		return -1;
	}
	return fd;
}

/*
 * The file [0, c->off) of rfd into tfd, its fast frames recompressed while
 * the budget lasts. Return: 0 or an errno (ECANCELED: a crash meanwhile).
 */
static int copy_compacted(struct rec__compact *c, struct recfmt_compressor *zc, int rfd, int tfd)
{
	struct recfmt_buf in = { 0 }, raw = { 0 }, out = { 0 };
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	uint64_t pos = 0, t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w0 = clock_ns(CLOCK_MONOTONIC);
	int err = 0;

	for (size_t i = 0; i < c->nr && !err; i++) {
		const struct rec__compact_frame *f = &c->frames[i];
		const struct recfmt_buf *b = NULL;

		/* Up to the frame's index frame, which follows what becomes of it. */
		err = copy_range(rfd, tfd, pos, f->off - f->ix_len, &in);
		if (err)
			break;
		/* A crash meanwhile appends to the output: then leave it whole. */
		if (!rec__crash_writer_enter()) {
			err = ECANCELED;
			break;
		}
		if (dc && clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < COMPACT_BUDGET_NS &&
		    clock_ns(CLOCK_MONOTONIC) - w0 < COMPACT_BUDGET_WALL_NS)
			b = recompress(zc, dc, rfd, f->off, (size_t)f->len, &in, &raw, &out);
		if (b == &out && f->ix_len)
			/* The FRAME record's flags as recompress() left them in raw. */
			err = write_index(rfd, tfd, f->off - f->ix_len, f->ix_len, b,
					  recfmt_load_u32le(raw.data + RECFMT_RECORD_HEADER_BYTES + 8),
					  &in);
		else /* raw is free by now, in may be b */
			err = copy_range(rfd, tfd, f->off - f->ix_len, f->off, &raw);
		if (err)
			;
		else if (b)
			err = write_whole(tfd, b->data, b->len);
		else
			err = copy_range(rfd, tfd, f->off, f->off + f->len, &in);
		c->nr_recompressed += b == &out;
		rec__crash_writer_leave();
		pos = f->off + f->len;
	}
	if (!err)
		err = copy_range(rfd, tfd, pos, c->off, &in);
	ZSTD_freeDCtx(dc);
	recfmt_buf_fini(&in);
	recfmt_buf_fini(&raw);
	recfmt_buf_fini(&out);
	return err;
}

int rec__compact_run(struct rec__compact *c, struct recfmt_compressor *zc, int fd,
		     const char *path)
{
	char tmp[sizeof(rec__g.cfg.output) + 16];
	struct stat st, at;
	int rfd, tfd, err;

	c->nr_recompressed = 0;
	if (!c->nr || c->off_broken || !zc || fd < 0 || !path[0])
		return 0;
	if (c->fast_bytes * 100 < c->off * COMPACT_MIN_SHARE)
		return 0;
	/* The file the writer wrote, still at its path (a process may chdir, a
	 * user move the file), a plain file of ours with no other name. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid() || (uint64_t)st.st_size != c->off ||
	    lstat(path, &at) < 0 || at.st_dev != st.st_dev || at.st_ino != st.st_ino)
		return 0;
	/* The writer's fd is write-only: the same file again, to read. */
	rfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0)
		return 0;
	if (fstat(rfd, &at) < 0 || at.st_dev != st.st_dev || at.st_ino != st.st_ino) {
		close(rfd);
		return 0;
	}
	tfd = make_temp(path, tmp, sizeof(tmp));
	if (tfd < 0) {
		close(rfd);
		return 0;
	}
	err = fchmod(tfd, st.st_mode & 07777) < 0 ? errno : copy_compacted(c, zc, rfd, tfd);
	if (!err && !rec__crash_writer_enter())
		err = ECANCELED;
	else if (!err) {
		if (rename(tmp, path) < 0)
			err = errno;
		rec__crash_writer_leave();
	}
	if (err) {
		unlink(tmp);
		c->nr_recompressed = 0;
	}
	close(rfd);
	close(tfd);
	return err ? -err : (int)c->nr_recompressed;
}
