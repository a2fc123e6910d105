/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.c - see fuzz_common.h.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "recfmt.h"
#include "engine/symbols.h"

#define MAX_ARGS 16

static int input_fd = -1;
static char input_path[64];

/*
 * Once per process: the memfd that holds each input, and the output sinks.
 * stdout (fd 1, which chrome writes with write(2)) goes to /dev/null. The
 * FILE *stderr is pointed at /dev/null as well, so the one-line warnings of
 * millions of damaged inputs do not drown the fuzzer's log, while fd 2 stays
 * open for the sanitizers' reports (they write(2) to it directly).
 * FUZZ_VERBOSE=1 keeps the analyzer's stderr.
 */
static void setup_once(void)
{
	const char *verbose = getenv("FUZZ_VERBOSE");
	int null_fd;

	input_fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
	if (input_fd < 0) {
		perror("fuzz: memfd_create");
		abort();
	}
	snprintf(input_path, sizeof(input_path), "/proc/self/fd/%d", input_fd);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0) {
		perror("fuzz: /dev/null");
		abort();
	}
	close(null_fd);
	if (!verbose || strcmp(verbose, "1") != 0) {
		FILE *null_file = fopen("/dev/null", "w");

		if (!null_file)
			abort();
		stderr = null_file;
	}
}

static void write_all(const uint8_t *data, size_t size, off_t at)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pwrite(input_fd, data + done, size - done, at + (off_t)done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
}

/* Compresses data[0, size) as one frame the way format/compress.c does
 * (content size and XXH64 checksum). Return: its bytes (*n of them), valid
 * until the next call. */
static const uint8_t *compress_frame(const uint8_t *data, size_t size, size_t *len)
{
	static ZSTD_CCtx *cctx;
	static uint8_t *out;
	static size_t out_cap;
	size_t bound = ZSTD_compressBound(size), n;

	if (!cctx) {
		cctx = ZSTD_createCCtx();
		if (!cctx)
			abort();
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	}
	if (out_cap < bound) {
		out = realloc(out, bound);
		if (!out)
			abort();
		out_cap = bound;
	}
	n = ZSTD_compress2(cctx, out, out_cap, data, size);
	if (ZSTD_isError(n))
		abort();
	*len = n;
	return out;
}

/* compress_frame(), appended at *at. */
static void write_frame(const uint8_t *data, size_t size, off_t *at)
{
	size_t n;
	const uint8_t *out = compress_frame(data, size, &n);

	write_all(out, n, *at);
	*at += (off_t)n;
}

/* Where the next frame of a raw input starts: its FRAME record (FORMAT.md
 * §3.1: type 1, size 8, magic "RECF"), searched from `from`. */
static size_t next_frame_start(const uint8_t *data, size_t size, size_t from)
{
	static const uint8_t frame_record[12] = { 1, 0, 0, 0, 8, 0, 0, 0, 'R', 'E', 'C', 'F' };
	const uint8_t *hit;

	if (from >= size)
		return size;
	hit = memmem(data + from, size - from, frame_record, sizeof(frame_record));
	return hit ? (size_t)(hit - data) : size;
}

/*
 * An input that starts like a zstd frame (or is empty) is a trace file as
 * is: that fuzzes frames.c and, through it, everything else, but a mutation
 * of compressed bytes almost never gets past the frame checksum. Any other
 * input is the *decompressed* content of a trace (what `zstd -d` prints):
 * it is cut before each FRAME record and each piece compressed into a frame
 * of its own, so that mutations reach the record decoder and the analysis.
 * The corpus holds both kinds.
 */
static void write_input(const uint8_t *data, size_t size)
{
	off_t at = 0;

	if (ftruncate(input_fd, 0) < 0)
		abort();
	if (size < 4 || memcmp(data, "\x28\xb5\x2f\xfd", 4) == 0 ||
	    (recfmt_load_u32le(data) & 0xfffffff0u) == 0x184d2a50u /* skippable */) {
		write_all(data, size, 0);
		return;
	}
	for (size_t start = 0; start < size;) {
		size_t end = next_frame_start(data, size, start + 1);

		write_frame(data + start, end - start, &at);
		start = end;
	}
}

/* Runs cmd with args and the input's path; aborts unless it returns 0 or 1. */
static int run_one(tt_cmd_fn cmd, const char *const *args)
{
	/* argp may permute argv, so each run gets a fresh copy. */
	char *argv[MAX_ARGS + 2];
	int argc = 0, rc;

	while (args[argc] && argc < MAX_ARGS) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	argv[argc++] = input_path;
	argv[argc] = NULL;
	tt_symbols_warn_reset(); /* each run warns as a process of its own would */
	rc = cmd(argc, argv);
	if (rc != 0 && rc != 1) {
		/* fd 2: the FILE *stderr may be /dev/null. */
		dprintf(STDERR_FILENO, "fuzz: %s returned %d (tracetool(1): 0 or 1)\n", argv[0], rc);
		abort();
	}
	/* Commands print through stdio: flush, so output is written (and its
	 * code run) per input rather than buffered across inputs. */
	fflush(stdout);
	return rc;
}

void fuzz_run_command(tt_cmd_fn cmd, const char *const *const *args, size_t nr_args,
		      const uint8_t *data, size_t size)
{
	if (input_fd < 0)
		setup_once();
	write_input(data, size);
	for (size_t i = 0; i < nr_args; i++)
		run_one(cmd, args[i]);
}

int fuzz_run_on_input(tt_cmd_fn cmd, const char *const *args)
{
	return run_one(cmd, args);
}

void fuzz_write_input(const uint8_t *data, size_t size)
{
	if (input_fd < 0)
		setup_once();
	write_input(data, size);
}

const char *fuzz_input_path(void)
{
	return input_path;
}

/* Reads all of a memfd back into a NUL-terminated buffer, and empties it. */
static char *drain(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)(end > 0 ? end : 0) + 1);
	ssize_t n;

	if (end < 0 || !buf)
		abort();
	n = pread(fd, buf, (size_t)end, 0);
	if (n != end || ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	buf[end] = '\0';
	*len = (size_t)end;
	return buf;
}

int fuzz_run_captured(tt_cmd_fn cmd, const char *const *args, struct fuzz_output *o)
{
	static int out_fd = -1, err_fd = -1, null_fd = -1;
	FILE *saved_err = stderr, *err;
	int rc;

	if (out_fd < 0) {
		out_fd = memfd_create("fuzz-stdout", MFD_CLOEXEC);
		err_fd = memfd_create("fuzz-stderr", MFD_CLOEXEC);
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (out_fd < 0 || err_fd < 0 || null_fd < 0)
			abort();
	}
	fflush(stdout);
	if (dup2(out_fd, STDOUT_FILENO) < 0)
		abort();
	err = fdopen(dup(err_fd), "w");
	if (!err)
		abort();
	stderr = err;
	rc = run_one(cmd, args);
	fclose(err);
	stderr = saved_err;
	if (dup2(null_fd, STDOUT_FILENO) < 0)
		abort();
	o->out = drain(out_fd, &o->out_len);
	o->err = drain(err_fd, &o->err_len);
	o->rc = rc;
	return rc;
}

void fuzz_output_free(struct fuzz_output *o)
{
	free(o->out);
	free(o->err);
	o->out = o->err = NULL;
}

/* ---------------------------------------------------------------------
 * Inputs for the index frames' path (fuzz_index.c, FORMAT.md §6).
 */

/* The threads' nestings as an honest writer follows them, by serial. */
struct ix_threads {
	uint32_t serial[256];
	struct recfmt_index_thread t[256];
	unsigned n;
	bool shared; /* more threads than that: their sums are no longer honest */
};

static struct recfmt_index_thread *ix_thread(void *ctx, uint32_t serial)
{
	struct ix_threads *th = ctx;

	for (unsigned i = 0; i < th->n; i++)
		if (th->serial[i] == serial)
			return &th->t[i];
	if (th->n == 256) {
		th->shared = true;
		return &th->t[255];
	}
	th->serial[th->n] = serial;
	memset(&th->t[th->n], 0, sizeof(th->t[0]));
	return &th->t[th->n++];
}

/*
 * One piece of raw content as a data frame after its index frame, the
 * sums of its EVENTS blocks those an honest writer gives (recfmt_block_sum()
 * with each thread's nesting followed across the pieces), so that the
 * mutations of the content reach the planner with index frames that tell
 * the truth about it.
 */
static void write_indexed_frame(const uint8_t *data, size_t size, struct ix_threads *th,
				off_t *at)
{
	static struct recfmt_buf index;
	static struct recfmt_index_entry *sums;
	static size_t cap_sums;
	struct recfmt_buf part = { .data = (uint8_t *)data, .len = size, .cap = size };
	struct recfmt_cursor c;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	size_t nr = 0, len;
	const uint8_t *out;

	recfmt_cursor_init(&c, data, size);
	while (recfmt_cursor_next(&c, &rec, &err) == RECFMT_OK) {
		struct recfmt_block_index b;

		if (rec.type != RECFMT_EVENTS || rec.size < 4)
			continue;
		if (recfmt_block_sum(&rec, &ix_thread(th, recfmt_load_u32le(rec.payload))->nest,
				     &b, &err) != RECFMT_OK)
			continue; /* damaged: left without sums (INCOMPLETE) */
		if (nr == cap_sums) {
			cap_sums = cap_sums ? 2 * cap_sums : 64;
			sums = realloc(sums, cap_sums * sizeof(*sums));
			if (!sums)
				abort();
		}
		sums[nr].at = rec.offset;
		sums[nr++].b = b;
	}
	out = compress_frame(data, size, &len);
	if (recfmt_index_build(&index, &part, 1, 0, sums, nr, out, len) != 0)
		abort();
	write_all(index.data, index.len, *at);
	*at += (off_t)index.len;
	write_all(out, len, *at);
	*at += (off_t)len;
}

/*
 * A file with index frames as is, but each index frame's two hashes made
 * right, as whoever crafts a file can: the mutations of what index frames
 * say reach the reader's checks past the hashes.
 */
static void fix_hashes(uint8_t *p, size_t n)
{
	size_t off = 0;

	while (n - off >= 8) {
		size_t len;

		if (!RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(p + off))) {
			len = recfmt_frame_length(p + off, n - off);
			if (!len)
				return;
			off += len;
			continue;
		}
		len = 8 + (size_t)recfmt_load_u32le(p + off + 4);
		if (len > n - off)
			return;
		if (len >= 8 + RECFMT_INDEX_HEAD_BYTES + 8) {
			uint64_t fb = recfmt_load_u64le(p + off + 8 + 16);

			if (fb <= n - off - len)
				recfmt_store_u64le(p + off + 8 + 32,
						   recfmt_xxh64(p + off + len, (size_t)fb));
			recfmt_store_u64le(p + off + len - 8,
					   recfmt_xxh64(p + off + 8, len - 16));
		}
		off += len;
	}
}

bool fuzz_write_input_indexed(const uint8_t *data, size_t size)
{
	static struct ix_threads th;
	off_t at = 0;

	if (input_fd < 0)
		setup_once();
	if (size >= 4 && RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(data))) {
		uint8_t *copy = malloc(size);

		if (!copy)
			abort();
		memcpy(copy, data, size);
		fix_hashes(copy, size);
		if (ftruncate(input_fd, 0) < 0)
			abort();
		write_all(copy, size, 0);
		free(copy);
		return false;
	}
	if (size < 4 || memcmp(data, "\x28\xb5\x2f\xfd", 4) == 0 ||
	    (recfmt_load_u32le(data) & 0xfffffff0u) == 0x184d2a50u) {
		write_input(data, size);
		return false;
	}
	if (ftruncate(input_fd, 0) < 0)
		abort();
	for (unsigned i = 0; i < th.n; i++)
		recfmt_nest_fini(&th.t[i].nest);
	th.n = 0;
	th.shared = false;
	for (size_t start = 0; start < size;) {
		size_t end = next_frame_start(data, size, start + 1);

		write_indexed_frame(data + start, end - start, &th, &at);
		start = end;
	}
	return !th.shared;
}
