/* SPDX-License-Identifier: MIT */
/*
 * index.c - see index.h: the frame index made, saved, loaded and turned
 * into the plan of a windowed walk.
 */
#define _GNU_SOURCE /* realpath */
#include "engine/index.h"
#include "engine/scopes.h"
#include "engine/walk.h"
#include "common/hmap.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* One frame as the index knows it. */
struct ix_frame {
	uint64_t offset, cbytes, content_bytes;
	uint64_t min_ticks, max_ticks; /* of its events, when has_events */
	uint64_t standin_at, stack_at;
	uint32_t standin_len, stack_len;
	uint32_t has_events, reserved;
};

/*
 * The stacks blob: for frame f, the threads whose open enters changed in
 * frame f - 1 (or that had their first events there, in that order), each
 * as a struct ix_delta and then `add` entries (struct ix_entry): keep the
 * thread's first `keep` open enters, push the entries.
 */
struct ix_delta {
	uint32_t serial, keep, add, reserved;
};
struct ix_entry {
	uint64_t ticks;
	uint32_t code, reserved;
};

/*
 * A file that ends inside a frame (a recording still being written, a copy
 * taken mid-write): its complete frames are indexed, and where the reader
 * stopped, as it said it (a whole read says the same: finding F9).
 */
struct ix_cut {
	uint32_t cut, reserved; /* 0 or 1 */
	uint64_t frame_index, frame_offset;
	char message[192]; /* NUL-terminated */
};

struct ix_file_head {
	char magic[8];
	uint32_t version, nr_frames;
	uint64_t file_bytes, mtime_ns, ino, dev;
	uint64_t standin_bytes, stack_bytes;
	struct ix_cut cut;
};

#define IX_MAGIC "RECTTIX1"
#define IX_VERSION 3 /* 2: a checksum at the end; 3: the cut */

/* An EVENTS block as the writer's index frame sums it up (FORMAT.md §6.2). */
struct ix_block {
	uint32_t frame, ordinal; /* its frame, and its place among the frame's EVENTS blocks */
	uint32_t thread, nr_events;
	uint64_t first, last;
	uint32_t d_start, d_low, d_end, enters;
};

struct tt_index {
	uint32_t nr_frames;
	struct ix_frame *f;
	uint8_t *standins, *stacks;
	uint64_t standin_bytes, stack_bytes;
	/*
	 * From the writer's index frames (FORMAT.md §6) instead of a pass:
	 * the blocks in file order, and their indices by thread (then file
	 * order), which the plans use instead of the stacks blob.
	 */
	bool from_writer;
	bool none; /* the writer's lied (fall_back()) and a pass found no index */
	char *path;
	struct ix_block *blocks;
	uint32_t *by_thread;
	uint32_t *frame_block; /* frame f's blocks: [frame_block[f], frame_block[f + 1]) */
	uint32_t nr_blocks;
	struct ix_cut cut; /* a pass's: the file ends inside a frame after the last */
};

/* ---------------------------------------------------------------------
 * Making it: one walk of the file, each frame's records copied into its
 * stand-in as they are read, each thread's open enters paired by name as
 * the engine pairs them (scopes.h).
 */
struct b_thread {
	uint32_t serial;
	bool listed;
	bool dirty;     /* changed in this frame */
	uint32_t low;	/* the fewest open enters in this frame */
	uint32_t sp, cap;
	uint32_t *name, *code;
	uint64_t *ticks;
	uint64_t last;
	bool has_last;
};

#define B_BATCH 1024

struct builder {
	uint64_t ticks[B_BATCH]; /* a batch of decoded events */
	uint32_t codes[B_BATCH];
	struct tt_trace tr;
	struct tt_index *ix;
	bool bad;
	const char *why; /* the first reason there is no index */
	const uint8_t *frame; /* the frame being walked */
	struct recfmt_buf standins, stacks;
	struct b_thread *th; /* by index in tr.threads */
	uint32_t cap_th;
	uint32_t *order; /* thread indices, dirty in this frame, in the order they became so */
	uint32_t nr_order, cap_order;
	struct ix_frame *cur;
};

static void no_index(struct builder *b, const char *why)
{
	if (!b->bad)
		b->why = why;
	b->bad = true;
}

static void put(struct recfmt_buf *b, const void *p, size_t n)
{
	if (recfmt_buf_reserve(b, n) != 0)
		tt_oom();
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static struct b_thread *b_thread(struct builder *b, const struct tt_trace *tr,
				 const struct tt_thread *th)
{
	uint32_t i = (uint32_t)(th - tr->threads);
	struct b_thread *t;

	if (i >= b->cap_th) {
		uint32_t cap = tr->cap_threads > i + 1 ? tr->cap_threads : i + 1;

		b->th = tt_xrealloc(b->th, cap * sizeof(*b->th));
		memset(b->th + b->cap_th, 0, (cap - b->cap_th) * sizeof(*b->th));
		b->cap_th = cap;
	}
	t = &b->th[i];
	if (!t->listed) {
		t->listed = true;
		t->serial = th->serial;
		t->low = 0;
	}
	/* Only the threads of this frame are looked at when it ends: a file of
	 * many threads and many frames costs their sum, not their product. */
	if (!t->dirty) {
		t->dirty = true;
		if (b->nr_order == b->cap_order) {
			b->cap_order = b->cap_order ? 2 * b->cap_order : 16;
			b->order = tt_xrealloc(b->order, b->cap_order * sizeof(*b->order));
		}
		b->order[b->nr_order++] = i;
	}
	return t;
}

static void b_push(struct b_thread *t, uint32_t name, uint32_t code, uint64_t ticks)
{
	if (t->sp == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->name = tt_xrealloc(t->name, t->cap * sizeof(*t->name));
		t->code = tt_xrealloc(t->code, t->cap * sizeof(*t->code));
		t->ticks = tt_xrealloc(t->ticks, t->cap * sizeof(*t->ticks));
	}
	t->name[t->sp] = name;
	t->code[t->sp] = code;
	t->ticks[t->sp++] = ticks;
}

/* The block function of the index pass. */
static int b_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		   struct recfmt_events_iter *it)
{
	struct builder *b = ctx;
	struct b_thread *t = b_thread(b, tr, th);
	struct tt_skipped sk = { .thread = it->thread, .nr_events = it->nr_events,
				 .base_ticks = it->ticks };
	struct ix_frame *f = b->cur;
	uint8_t head[8] = { TT_REC_SKIPPED, 0, 0, 0 };
	uint32_t size = sizeof(sk);
	int rc;

	while ((rc = recfmt_events_decode_batch(it, b->ticks, b->codes, B_BATCH)) > 0) {
		for (int i = 0; i < rc; i++) {
			const uint64_t ticks = b->ticks[i];
			const uint32_t code = b->codes[i], site = RECFMT_CODE_SITE(code);
			uint32_t name;

			if (t->has_last && ticks < t->last)
				no_index(b, "a thread's clock goes backwards");
			t->last = ticks;
			t->has_last = true;
			if (!f->has_events || ticks < f->min_ticks)
				f->min_ticks = ticks;
			if (!f->has_events || ticks > f->max_ticks)
				f->max_ticks = ticks;
			f->has_events = 1;
			if (site < tr->nr_site_slots && tr->site_name[site] != TT_NO_NAME) {
				name = tr->site_name[site];
			} else {
				if (!tt_trace_site_known(tr, site))
					no_index(b, "a site has no SITE or FUNC record");
				name = tt_trace_site_name(tr, site);
			}
			if (!RECFMT_CODE_IS_EXIT(code)) {
				sk.enters++;
				b_push(t, name, code, ticks);
				if (t->sp > TT_MIN_DEPTH_LIMIT)
					no_index(b, "a stack is too deep");
				continue;
			}
			if (t->sp && t->name[t->sp - 1] == name) {
				t->sp--;
				t->low = t->sp < t->low ? t->sp : t->low;
				continue;
			}
			for (uint32_t k = t->sp; k-- > 0;)
				if (t->name[k] == name) {
					no_index(b, "a scope is left without an exit (longjmp)");
					break;
				}
			/* Else an exit with no enter: an error, nothing closed. */
		}
	}
	if (rc < 0 || !recfmt_events_check_end(it))
		return -1;
	sk.last_ticks = it->ticks;
	memcpy(head + 4, &size, 4);
	put(&b->standins, head, sizeof(head));
	put(&b->standins, &sk, sizeof(sk));
	return 0;
}

/* Every record but EVENTS into the stand-in as it is. */
static void b_record(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
		     uint64_t frame_index, uint64_t frame_offset)
{
	struct builder *b = ctx;

	(void)tr;
	(void)frame_index;
	(void)frame_offset;
	switch (rec->type) {
	case RECFMT_EVENTS:
		return; /* b_block() writes its TT_REC_SKIPPED */
	case RECFMT_ANNOTS:
	case RECFMT_COUNTERS:
	case RECFMT_SAMPLES:
	case TT_REC_SKIPPED:
	case TT_REC_REPLAY:
		no_index(b, "annotations, counters or samples");
		return;
	default:
		put(&b->standins, b->frame + rec->offset, 8 + (size_t)rec->size);
	}
}

/* The changes of the threads' open enters in the frame before f. */
static void b_deltas(struct builder *b, struct ix_frame *f)
{
	f->stack_at = b->stacks.len;
	for (uint32_t k = 0; k < b->nr_order; k++) {
		struct b_thread *t = &b->th[b->order[k]];
		struct ix_delta d = { t->serial, t->low, t->sp - t->low, 0 };

		put(&b->stacks, &d, sizeof(d));
		for (uint32_t i = t->low; i < t->sp; i++) {
			struct ix_entry e = { t->ticks[i], t->code[i], 0 };

			put(&b->stacks, &e, sizeof(e));
		}
		t->dirty = false;
		t->low = t->sp;
	}
	b->nr_order = 0;
	f->stack_len = (uint32_t)(b->stacks.len - f->stack_at);
}

/* Copies the frame's FRAME record (and frame 0's FILE_HEADER), which the
 * record hook does not see. */
static bool b_head(struct builder *b, const uint8_t *data, size_t len, bool first)
{
	struct recfmt_cursor c;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };

	recfmt_cursor_init(&c, data, len);
	for (int i = 0; i < (first ? 2 : 1); i++) {
		if (recfmt_cursor_next(&c, &rec, &err) != RECFMT_OK)
			return false;
		put(&b->standins, data + rec.offset, 8 + (size_t)rec.size);
	}
	return true;
}

static struct tt_index *build(const char *path)
{
	struct builder b = { 0 };
	struct recfmt_reader *r = NULL;
	struct recfmt_dctx *d = recfmt_dctx_new();
	struct recfmt_frame_bytes fb = { 0 };
	struct recfmt_buf out;
	struct recfmt_error err = { 0 };
	enum recfmt_status st;
	struct tt_index *ix = tt_xcalloc(1, sizeof(*ix));
	uint32_t cap = 0;
	char msg[512];

	tt_trace_init(&b.tr, path);
	b.tr.on_record = b_record;
	b.tr.record_ctx = &b;
	recfmt_buf_init(&b.standins);
	recfmt_buf_init(&b.stacks);
	recfmt_buf_init(&fb.buf);
	recfmt_buf_init(&out);
	if (!d || recfmt_reader_open(&r, path, &err) != RECFMT_OK)
		no_index(&b, "the file cannot be read");
	while (!b.bad && (st = recfmt_reader_next_compressed(r, &fb, &err)) == RECFMT_OK) {
		struct ix_frame *f;

		if (ix->nr_frames == cap) {
			cap = cap ? 2 * cap : 256;
			ix->f = tt_xrealloc(ix->f, cap * sizeof(*ix->f));
		}
		f = &ix->f[ix->nr_frames++];
		memset(f, 0, sizeof(*f));
		f->offset = fb.offset;
		f->cbytes = fb.buf.len;
		f->content_bytes = fb.content_bytes;
		b_deltas(&b, f);
		if (recfmt_frame_decompress(d, &fb, &out, &err) != RECFMT_OK ||
		    fb.index != ix->nr_frames - 1) {
			no_index(&b, "a damaged frame");
			break;
		}
		b.cur = f;
		b.frame = out.data;
		f->standin_at = b.standins.len;
		if (!b_head(&b, out.data, out.len, !b.tr.has_header) ||
		    tt_trace_walk_frame(&b.tr, out.data, out.len, fb.index, fb.offset, b_block, &b,
					msg, sizeof(msg)) != TT_OK) {
			no_index(&b, "a frame does not decode");
			break;
		}
		f->standin_len = (uint32_t)(b.standins.len - f->standin_at);
	}
	if (!b.bad && st == RECFMT_TRUNCATED && ix->nr_frames) {
		/* Cut inside a frame: nothing of it is read, whole or not. */
		ix->cut.cut = 1;
		ix->cut.frame_index = err.frame_index;
		ix->cut.frame_offset = err.frame_offset;
		snprintf(ix->cut.message, sizeof(ix->cut.message), "%s", err.message);
	} else if (!b.bad && st != RECFMT_END_OF_INPUT) {
		no_index(&b, "the file is cut short or damaged");
	}
	{
		const struct tt_trace *tr = &b.tr;

		if (!tr->has_header || tr->nr_bad_frames || tr->nr_lost_frames ||
			 tr->nr_bad_blocks || tr->truncated || tr->first_problem[0] ||
			 tr->count_problem[0] || tr->nr_recordings != 1 || tr->nr_after_end ||
			 tr->has_annots || tr->nr_samples || ix->nr_frames == 0)
			no_index(&b, "damage, annotations or samples");
	}
	if (r)
		recfmt_reader_close(r);
	recfmt_dctx_free(d);
	recfmt_buf_fini(&fb.buf);
	recfmt_buf_fini(&out);
	for (uint32_t i = 0; i < b.cap_th; i++) {
		free(b.th[i].name);
		free(b.th[i].code);
		free(b.th[i].ticks);
	}
	free(b.th);
	free(b.order);
	tt_trace_fini(&b.tr);
	if (b.bad && getenv("TRACETOOL_INDEX_STATS"))
		fprintf(stderr, "tracetool: %s: index: none (%s)\n", path, b.why);
	if (b.bad) {
		recfmt_buf_fini(&b.standins);
		recfmt_buf_fini(&b.stacks);
		free(ix->f);
		free(ix);
		return NULL;
	}
	/* The buffers' memory is the index's now. */
	ix->standins = b.standins.data;
	ix->standin_bytes = b.standins.len;
	ix->stacks = b.stacks.data;
	ix->stack_bytes = b.stacks.len;
	return ix;
}

/* ---------------------------------------------------------------------
 * The cache: $TRACETOOL_INDEX_DIR, else $XDG_CACHE_HOME/rec, else
 * ~/.cache/rec; one file per trace, named by a hash of its real path, and
 * valid while the trace has the size, modification time and inode it had.
 */
static bool cache_path(const char *path, char *out, size_t out_bytes, char *dir, size_t dir_bytes)
{
	const char *d = getenv("TRACETOOL_INDEX_DIR"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char real[PATH_MAX];
	uint64_t h = 1469598103934665603ull;
	int n;

	if (!realpath(path, real))
		return false;
	for (const char *p = real; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	if (d && *d)
		n = snprintf(dir, dir_bytes, "%s", d);
	else if (x && *x == '/')
		n = snprintf(dir, dir_bytes, "%s/rec", x);
	else if (home && *home)
		n = snprintf(dir, dir_bytes, "%s/.cache/rec", home);
	else
		return false;
	if (n < 0 || (size_t)n >= dir_bytes)
		return false;
	n = snprintf(out, out_bytes, "%s/index-%016" PRIx64 ".idx", dir, h);
	return n > 0 && (size_t)n < out_bytes;
}

static void file_id(const struct stat *s, struct ix_file_head *h)
{
	h->file_bytes = (uint64_t)s->st_size;
	h->mtime_ns = (uint64_t)s->st_mtim.tv_sec * 1000000000u + (uint64_t)s->st_mtim.tv_nsec;
	h->ino = (uint64_t)s->st_ino;
	h->dev = (uint64_t)s->st_dev;
}

static bool read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t k = read(fd, p, n);

		if (k <= 0)
			return false;
		p = (char *)p + k;
		n -= (size_t)k;
	}
	return true;
}

static bool write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k <= 0)
			return false;
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return true;
}

/* The checksum that ends a cache file: xxh64 of every byte before it. */
#define IX_SEED 0x52454354544958ull

/*
 * A frame's stack deltas (the stacks blob, above): whole deltas, each with
 * the entries it says, and no byte left over.
 */
static bool stack_deltas_fit(const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		struct ix_delta d;

		if ((size_t)(end - p) < sizeof(d))
			return false;
		memcpy(&d, p, sizeof(d));
		p += sizeof(d);
		if (d.add > (size_t)(end - p) / sizeof(struct ix_entry))
			return false;
		p += (size_t)d.add * sizeof(struct ix_entry);
	}
	return true;
}

/*
 * What a cache file says of each frame, held against the trace (its size,
 * the decompressed size a frame may have) and the cache's own blobs: frames
 * in file order, inside the file, their stand-ins and stack deltas inside
 * the blobs and whole.
 */
static bool frames_fit(const struct tt_index *ix, uint64_t file_bytes)
{
	uint64_t end = 0;

	for (uint32_t i = 0; i < ix->nr_frames; i++) {
		const struct ix_frame *f = &ix->f[i];

		if (f->offset < end || f->offset > file_bytes || f->cbytes == 0 ||
		    f->cbytes > file_bytes - f->offset || f->content_bytes > RECFMT_MAX_FRAME_BYTES ||
		    f->has_events > 1 || (f->has_events && f->min_ticks > f->max_ticks) ||
		    f->standin_at > ix->standin_bytes ||
		    f->standin_len > ix->standin_bytes - f->standin_at ||
		    f->stack_at > ix->stack_bytes || f->stack_len > ix->stack_bytes - f->stack_at ||
		    !stack_deltas_fit(ix->stacks + f->stack_at,
				      ix->stacks + f->stack_at + f->stack_len))
			return false;
		end = f->offset + f->cbytes;
	}
	return true;
}

/*
 * A cache file is no trusted input (another user's $XDG_CACHE_HOME, a disk
 * error, a run killed while writing): it is used only if its size is what
 * its header's counts make, its checksum is right and every frame fits
 * (frames_fit()); else it is ignored, and the caller makes the index by a
 * pass (tracetool(1), FILES). Memory follows the cache file's size.
 */
static struct tt_index *load(const char *file, const struct ix_file_head *want)
{
	struct ix_file_head h;
	struct tt_index *ix;
	struct recfmt_xxh64 x;
	struct stat st;
	uint64_t sum, body;
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !read_all(fd, &h, sizeof(h)) ||
	    memcmp(h.magic, IX_MAGIC, 8) != 0 || h.version != IX_VERSION ||
	    h.file_bytes != want->file_bytes || h.mtime_ns != want->mtime_ns ||
	    h.ino != want->ino || h.dev != want->dev || h.nr_frames == 0 ||
	    h.nr_frames > (1u << 28) || h.standin_bytes > (1ull << 34) ||
	    h.stack_bytes > (1ull << 34) || h.cut.cut > 1 || h.cut.reserved ||
	    !memchr(h.cut.message, '\0', sizeof(h.cut.message))) {
		close(fd);
		return NULL;
	}
	body = (uint64_t)h.nr_frames * sizeof(struct ix_frame) + h.standin_bytes + h.stack_bytes;
	if ((uint64_t)st.st_size != sizeof(h) + body + sizeof(sum)) {
		close(fd);
		return NULL;
	}
	ix = tt_xcalloc(1, sizeof(*ix));
	ix->nr_frames = h.nr_frames;
	ix->standin_bytes = h.standin_bytes;
	ix->stack_bytes = h.stack_bytes;
	ix->cut = h.cut;
	ix->f = tt_xcalloc(h.nr_frames, sizeof(*ix->f));
	ix->standins = tt_xrealloc(NULL, h.standin_bytes ? h.standin_bytes : 1);
	ix->stacks = tt_xrealloc(NULL, h.stack_bytes ? h.stack_bytes : 1);
	ok = read_all(fd, ix->f, h.nr_frames * sizeof(*ix->f)) &&
	     read_all(fd, ix->standins, h.standin_bytes) &&
	     read_all(fd, ix->stacks, h.stack_bytes) && read_all(fd, &sum, sizeof(sum));
	close(fd);
	if (ok) {
		recfmt_xxh64_init(&x, IX_SEED);
		recfmt_xxh64_update(&x, &h, sizeof(h));
		recfmt_xxh64_update(&x, ix->f, h.nr_frames * sizeof(*ix->f));
		recfmt_xxh64_update(&x, ix->standins, h.standin_bytes);
		recfmt_xxh64_update(&x, ix->stacks, h.stack_bytes);
		ok = recfmt_xxh64_digest(&x) == sum && frames_fit(ix, h.file_bytes);
	}
	if (!ok) {
		free(ix->f);
		free(ix->standins);
		free(ix->stacks);
		free(ix);
		return NULL;
	}
	return ix;
}

/* Best effort: a cache that cannot be written costs the next run a pass. */
static void save(const struct tt_index *ix, const char *file, const char *dir,
		 const struct ix_file_head *id)
{
	struct ix_file_head h = *id;
	struct recfmt_xxh64 x;
	uint64_t sum;
	char tmp[PATH_MAX + 128], parent[PATH_MAX];
	char *slash;
	int fd;
	bool ok;

	memcpy(h.magic, IX_MAGIC, 8);
	h.version = IX_VERSION;
	h.nr_frames = ix->nr_frames;
	h.standin_bytes = ix->standin_bytes;
	h.stack_bytes = ix->stack_bytes;
	h.cut = ix->cut;
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		(void)mkdir(parent, 0700); /* ~/.cache */
	}
	(void)mkdir(dir, 0700);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", file, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	recfmt_xxh64_init(&x, IX_SEED);
	recfmt_xxh64_update(&x, &h, sizeof(h));
	recfmt_xxh64_update(&x, ix->f, ix->nr_frames * sizeof(*ix->f));
	recfmt_xxh64_update(&x, ix->standins, ix->standin_bytes);
	recfmt_xxh64_update(&x, ix->stacks, ix->stack_bytes);
	sum = recfmt_xxh64_digest(&x);
	ok = write_all(fd, &h, sizeof(h)) &&
	     write_all(fd, ix->f, ix->nr_frames * sizeof(*ix->f)) &&
	     write_all(fd, ix->standins, ix->standin_bytes) &&
	     write_all(fd, ix->stacks, ix->stack_bytes) && write_all(fd, &sum, sizeof(sum));
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, file) != 0)
		(void)unlink(tmp);
}

/* ---------------------------------------------------------------------
 * The writer's index frames (FORMAT.md §6): the same index without a pass.
 * Each data frame follows its index frame, which says where it ends and
 * its hash: the chain is followed from the file's start to its exact end,
 * each data frame's bytes hashed, and each index frame's records, its
 * BLOCK_INDEX records turned into TT_REC_SKIPPED, are the frame's stand-in.
 * Anything else (no index frame where one is due, a hash that differs, a
 * frame the writer marked partial, a block whose nesting it could not
 * follow, a file cut short or with frames after the last index) and the
 * file has no writer's index: the caller makes one by a pass.
 */
static int block_cmp(const void *a, const void *b, void *ctx)
{
	const struct ix_block *bl = ctx;
	const struct ix_block *x = &bl[*(const uint32_t *)a], *y = &bl[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void free_index(struct tt_index *ix)
{
	if (!ix)
		return;
	free(ix->f);
	free(ix->standins);
	free(ix->stacks);
	free(ix->path);
	free(ix->blocks);
	free(ix->by_thread);
	free(ix->frame_block);
	free(ix);
}

/* One index frame's records into frame f's stand-in and the blocks. */
static const char *w_records(struct tt_index *ix, struct recfmt_buf *standins, uint32_t *cap_blocks,
			     const struct recfmt_index_head *h, uint32_t f)
{
	struct ix_frame *fr = &ix->f[f];
	size_t pos = 0;
	uint32_t ordinal = 0;
	uint64_t least = 0; /* the fewest content bytes its blocks' claims need */

	fr->standin_at = standins->len;
	while (pos < h->records_bytes) {
		struct recfmt_record r;

		if (!recfmt_record_at(h->records, h->records_bytes, pos, &r))
			return "a damaged index frame";
		if (r.type == RECFMT_BLOCK_INDEX) {
			struct recfmt_block_index bi;
			struct tt_skipped sk;
			uint8_t head[8] = { TT_REC_SKIPPED, 0, 0, 0 };
			uint32_t size = sizeof(sk);
			struct ix_block *bl;

			if (!recfmt_block_index_read(&r, &bi))
				return "a damaged index frame";
			if (!(bi.flags & RECFMT_BLOCK_NESTED))
				return "the writer could not follow a thread's nesting";
			if (ix->nr_blocks == *cap_blocks) {
				*cap_blocks = *cap_blocks ? 2 * *cap_blocks : 1024;
				ix->blocks = tt_xrealloc(ix->blocks, *cap_blocks * sizeof(*ix->blocks));
			}
			bl = &ix->blocks[ix->nr_blocks++];
			bl->frame = f;
			bl->ordinal = ordinal++;
			bl->thread = bi.thread;
			bl->nr_events = bi.nr_events;
			bl->first = bi.first_ticks;
			bl->last = bi.last_ticks;
			bl->d_start = bi.depth_start;
			bl->d_low = bi.depth_low;
			bl->d_end = bi.depth_end;
			bl->enters = bi.enters;
			/*
			 * What no honest writer says (FORMAT.md §6.2): an event
			 * takes 2 bytes of its EVENTS record at least (§3.6), an
			 * enter opens one, an exit closes one at most. A claim
			 * that passes is trusted only as far as its frames go
			 * undecoded: every frame a plan decodes is checked
			 * against it (w_decode_needs()).
			 */
			least += 8 + 24 + 2 * (uint64_t)bl->nr_events;
			if (!bl->nr_events || bl->last < bl->first || bi.enters > bl->nr_events ||
			    bl->d_low > bl->d_start || bl->d_low > bl->d_end ||
			    bl->d_start > RECFMT_NEST_MAX_DEPTH || bl->d_end > RECFMT_NEST_MAX_DEPTH ||
			    (uint64_t)bl->d_end > (uint64_t)bl->d_start + bi.enters ||
			    (uint64_t)bl->d_start > (uint64_t)bl->d_low + (bl->nr_events - bi.enters) ||
			    least > fr->content_bytes)
				return "an index frame's sums cannot be its frame's";
			sk = (struct tt_skipped){ .thread = bl->thread, .nr_events = bl->nr_events,
						  .enters = bi.enters,
						  .base_ticks = bl->first, .last_ticks = bl->last };
			if (!fr->has_events || bl->first < fr->min_ticks)
				fr->min_ticks = bl->first;
			if (!fr->has_events || bl->last > fr->max_ticks)
				fr->max_ticks = bl->last;
			fr->has_events = 1;
			memcpy(head + 4, &size, 4);
			put(standins, head, sizeof(head));
			put(standins, &sk, sizeof(sk));
		} else if (r.type == RECFMT_EVENTS || r.type >= 240) {
			return "a damaged index frame";
		} else {
			put(standins, h->records + pos, RECFMT_RECORD_HEADER_BYTES + (size_t)r.size);
		}
		pos += RECFMT_RECORD_HEADER_BYTES + (size_t)r.size;
	}
	fr->standin_len = (uint32_t)(standins->len - fr->standin_at);
	return NULL;
}

/* What build() refuses, as the stand-ins show it. */
static const char *w_check(struct tt_index *ix, const char *path)
{
	struct tt_trace tr;
	const char *why = NULL;
	char msg[256];
	size_t len;

	tt_trace_init(&tr, path);
	tr.standin = true;
	for (uint32_t f = 0; f < ix->nr_frames && !why; f++) {
		const uint8_t *sb = tt_index_standin(ix, f, &len);

		if (tt_trace_walk_frame(&tr, sb, len, f, ix->f[f].offset, NULL, NULL, msg,
					sizeof(msg)) != TT_OK)
			why = "a frame does not decode";
	}
	if (!why && (!tr.has_header || tr.nr_bad_frames || tr.nr_lost_frames || tr.nr_bad_blocks ||
		     tr.truncated || tr.first_problem[0] || tr.count_problem[0] ||
		     tr.nr_recordings != 1 || tr.nr_after_end || tr.has_annots || tr.nr_samples))
		why = "damage, annotations or samples";
	tt_trace_fini(&tr);
	return why;
}

static struct tt_index *from_writer(const char *path, const char **why)
{
	struct tt_index *ix = NULL;
	struct recfmt_index_scratch unpacked = { 0 };
	struct recfmt_buf standins;
	struct stat s;
	uint8_t *map = MAP_FAILED;
	uint64_t off = 0, size;
	uint32_t cap = 0, cap_blocks = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*why = "the file cannot be read";
	recfmt_buf_init(&standins);
	if (fd < 0 || fstat(fd, &s) != 0 || s.st_size < 8)
		goto out;
	size = (uint64_t)s.st_size;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	*why = "no index frames (an older writer, or none wanted)";
	if (!RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(map)))
		goto out;
	(void)madvise(map, size, MADV_SEQUENTIAL);
	ix = tt_xcalloc(1, sizeof(*ix));
	ix->from_writer = true;
	*why = NULL;
	while (off < size && !*why) {
		struct recfmt_index_head h;
		struct ix_frame *f;
		uint64_t len, content;

		if (size - off < 8 || !RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(map + off))) {
			*why = "a frame without its index frame (a crash, or an edited file)";
			break;
		}
		len = 8 + (uint64_t)recfmt_load_u32le(map + off + 4);
		if (len > size - off) {
			*why = "the file is cut short or damaged";
			break;
		}
		if (!recfmt_index_parse(map + off, (size_t)len, &h)) {
			*why = "a damaged index frame, or a newer one";
			break;
		}
		off += len;
		if (h.seq != ix->nr_frames || h.frame_bytes > size - off ||
		    h.content_bytes > RECFMT_MAX_FRAME_BYTES) {
			*why = "the file is cut short or damaged";
			break;
		}
		if (h.flags & (RECFMT_INDEX_PARTIAL | RECFMT_INDEX_INCOMPLETE)) {
			*why = "annotations, counters or samples";
			break;
		}
		if (recfmt_xxh64(map + off, (size_t)h.frame_bytes) != h.frame_hash) {
			*why = "a frame differs from what its index frame says (damage)";
			break;
		}
		/* The hashes prove nothing a writer could not compute: the
		 * length must be one whole data frame of the size it says. */
		if (!recfmt_frame_measure(map + off, (size_t)h.frame_bytes, &content) ||
		    content != h.content_bytes) {
			*why = "an index frame's length or size is not its data frame's";
			break;
		}
		if (ix->nr_frames == cap) {
			cap = cap ? 2 * cap : 256;
			ix->f = tt_xrealloc(ix->f, cap * sizeof(*ix->f));
		}
		f = &ix->f[ix->nr_frames++];
		memset(f, 0, sizeof(*f));
		f->offset = off;
		f->cbytes = h.frame_bytes;
		f->content_bytes = h.content_bytes;
		/* A packed one's records (FORMAT.md §6.3), after its hash held. */
		if (!recfmt_index_unpack(&h, &unpacked)) {
			*why = "a damaged index frame";
			break;
		}
		*why = w_records(ix, &standins, &cap_blocks, &h, ix->nr_frames - 1);
		off += h.frame_bytes;
	}
	if (!*why && !ix->nr_frames)
		*why = "no frames";
	ix->standins = standins.data;
	ix->standin_bytes = standins.len;
	standins.data = NULL;
	if (!*why)
		*why = w_check(ix, path);
	if (!*why) {
		ix->path = tt_xstrndup(path, strlen(path));
		ix->frame_block = tt_xrealloc(NULL, ((size_t)ix->nr_frames + 1) *
						     sizeof(*ix->frame_block));
		for (uint32_t g = 0, i = 0; g <= ix->nr_frames; g++) {
			while (i < ix->nr_blocks && ix->blocks[i].frame < g)
				i++;
			ix->frame_block[g] = i;
		}
		ix->by_thread = tt_xrealloc(NULL, (ix->nr_blocks ? ix->nr_blocks : 1) *
						  sizeof(*ix->by_thread));
		for (uint32_t i = 0; i < ix->nr_blocks; i++)
			ix->by_thread[i] = i;
		qsort_r(ix->by_thread, ix->nr_blocks, sizeof(*ix->by_thread), block_cmp, ix->blocks);
		/* A thread's depths chain from 0, block to block. */
		for (uint32_t i = 0; i < ix->nr_blocks && !*why; i++) {
			const struct ix_block *b = &ix->blocks[ix->by_thread[i]];
			const struct ix_block *a = i ? &ix->blocks[ix->by_thread[i - 1]] : NULL;

			if (b->d_start != (a && a->thread == b->thread ? a->d_end : 0) ||
			    (a && a->thread == b->thread && b->first < a->last))
				*why = "a damaged index frame";
		}
	}
out:
	if (map != MAP_FAILED)
		munmap(map, size);
	if (fd >= 0)
		close(fd);
	recfmt_buf_fini(&standins);
	recfmt_index_scratch_fini(&unpacked);
	if (*why) {
		free_index(ix);
		return NULL;
	}
	return ix;
}

/* The traces of this command (a walk's two passes, several files), each
 * looked up, loaded or made once. */
static char *kept_paths[64];
static struct tt_index *kept[64];
static unsigned nr_kept;

void tt_index_forget(void)
{
	for (unsigned i = 0; i < nr_kept; i++) {
		free(kept_paths[i]);
		free_index(kept[i]);
	}
	nr_kept = 0;
}

/* How a window would read path; NULL: through its index frames. */
static const char *window_whole(const char *path, const struct stat *s)
{
	const char *v = getenv("TRACETOOL_INDEX");

	(void)path;
	if (v && strcmp(v, "0") == 0)
		return "TRACETOOL_INDEX=0";
	if (!(v && (strcmp(v, "1") == 0 || strcmp(v, "pass") == 0)) &&
	    (uint64_t)s->st_size < TT_INDEX_MIN_BYTES)
		return "under 4 MiB";
	return NULL;
}

struct survey_threads {
	struct recfmt_index_thread *t;
	uint32_t *serial;
	uint32_t n, cap;
	struct tt_hmap map;
	uint32_t key;
};

static bool st_eq(const void *ctx, uint32_t id)
{
	const struct survey_threads *st = ctx;

	return st->serial[id] == st->key;
}

static struct recfmt_index_thread *st_thread(void *ctx, uint32_t serial)
{
	struct survey_threads *st = ctx;
	const uint32_t h = tt_hash_u64(serial);
	uint32_t id;

	st->key = serial;
	id = tt_hmap_find(&st->map, h, st_eq, st);
	if (id != TT_HMAP_NONE)
		return &st->t[id];
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 16;
		st->t = tt_xrealloc(st->t, st->cap * sizeof(*st->t));
		st->serial = tt_xrealloc(st->serial, st->cap * sizeof(*st->serial));
	}
	memset(&st->t[st->n], 0, sizeof(st->t[st->n]));
	st->serial[st->n] = serial;
	tt_hmap_put(&st->map, h, st->n);
	return &st->t[st->n++];
}

static void survey_bad(struct tt_index_survey *s, uint64_t frame, uint64_t offset,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void survey_bad(struct tt_index_survey *s, uint64_t frame, uint64_t offset,
		       const char *fmt, ...)
{
	va_list ap;

	s->nr_bad++;
	if (s->bad[0])
		return;
	s->bad_frame = frame;
	s->bad_offset = offset;
	va_start(ap, fmt);
	vsnprintf(s->bad, sizeof(s->bad), fmt, ap);
	va_end(ap);
}

void tt_index_survey(const char *path, bool deep, struct tt_index_survey *s)
{
	struct survey_threads th = { 0 };
	struct recfmt_index_scratch unpacked = { 0 };
	struct recfmt_dctx *d = deep ? recfmt_dctx_new() : NULL;
	struct recfmt_frame_bytes fb = { 0 };
	struct recfmt_buf out;
	struct recfmt_index_head h;
	struct stat st;
	uint8_t *map = MAP_FAILED;
	uint64_t off = 0, size = 0, h_off = 0;
	bool pending = false, h_ok = false, shape;
	/* A FIFO or a device is read once, by the command: its open would wait
	 * for another writer (a FIFO), so only regular files are surveyed. */
	int fd = stat(path, &st) == 0 && S_ISREG(st.st_mode)
			 ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
			 : -1;

	memset(s, 0, sizeof(*s));
	recfmt_buf_init(&fb.buf);
	recfmt_buf_init(&out);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
		size = (uint64_t)st.st_size;
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	while (map != MAP_FAILED && off < size) {
		const uint8_t *p = map + off;
		size_t n = recfmt_frame_length(p, size - off);
		uint64_t content;
		char why[200];
		const uint64_t k = s->nr_frames;

		if (!n) {
			s->cut = true;
			break;
		}
		if ((recfmt_load_u32le(p) & 0xfffffff0u) == 0x184D2A50u) {
			if (RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(p))) {
				if (pending) {
					s->nr_stray++;
					survey_bad(s, k, h_off, "an index frame with no frame of its own");
				}
				pending = true;
				h_ok = recfmt_index_parse(p, n, &h);
				h_off = off;
			}
			off += n;
			continue;
		}
		s->nr_frames++;
		shape = pending && h_ok && h.seq == k && h.frame_bytes == n &&
			recfmt_frame_measure(p, n, &content) && content == h.content_bytes &&
			recfmt_xxh64(p, n) == h.frame_hash;
		if (!pending) {
			if (!s->nr_missing++)
				s->first_missing = k;
		} else if (!h_ok) {
			survey_bad(s, k, h_off,
				   "its index frame is damaged (its hash) or of a newer version");
		} else if (h.seq != k) {
			survey_bad(s, k, h_off, "its index frame is frame %" PRIu32 "'s", h.seq);
		} else if (!recfmt_index_unpack(&h, &unpacked)) {
			shape = false;
			survey_bad(s, k, h_off, "its index frame's packed records do not decompress");
		} else if (!shape && h.frame_bytes == n && recfmt_xxh64(p, n) != h.frame_hash) {
			survey_bad(s, k, h_off, "its bytes differ from its index frame's hash");
		} else if (!shape) {
			survey_bad(s, k, h_off,
				   "its index frame says %" PRIu64 " bytes (%" PRIu64
				   " decompressed), the frame has %zu",
				   h.frame_bytes, h.content_bytes, n);
		} else if (!deep) {
			s->nr_indexed++;
			s->nr_packed += h.packed;
		}
		if (deep) {
			/* Every frame decompressed: the threads' nestings go on
			 * through the frames without a (right) index frame too. */
			struct recfmt_error err = { 0 };

			fb.buf.len = 0;
			if (recfmt_buf_reserve(&fb.buf, n) != 0)
				tt_oom();
			memcpy(fb.buf.data, p, n);
			fb.buf.len = n;
			fb.content_bytes = recfmt_frame_measure(p, n, &content) &&
						   content <= RECFMT_MAX_FRAME_BYTES
					   ? content
					   : RECFMT_MAX_FRAME_BYTES;
			fb.index = k;
			fb.offset = off;
			if (!d || recfmt_frame_decompress(d, &fb, &out, &err) != RECFMT_OK) {
				if (shape)
					survey_bad(s, k, h_off, "its frame does not decompress");
			} else if (recfmt_index_compare(shape ? &h : NULL, out.data, out.len,
							st_thread, &th, why, sizeof(why))) {
				s->nr_indexed += shape;
				s->nr_packed += shape && h.packed;
			} else {
				survey_bad(s, k, h_off, "%s", why);
			}
		}
		pending = false;
		off += n;
	}
	if (pending) {
		s->nr_stray++;
		survey_bad(s, s->nr_frames, h_off, "an index frame with no frame of its own");
	}
	if (map != MAP_FAILED)
		munmap(map, size);
	if (fd >= 0)
		close(fd);
	recfmt_dctx_free(d);
	recfmt_index_scratch_fini(&unpacked);
	recfmt_buf_fini(&fb.buf);
	recfmt_buf_fini(&out);
	for (uint32_t i = 0; i < th.n; i++)
		recfmt_nest_fini(&th.t[i].nest);
	free(th.t);
	free(th.serial);
	tt_hmap_fini(&th.map);
	/* How a window reads it: as tt_index_for() would. */
	s->window = TT_WINDOW_WHOLE;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		s->window_why = "not a regular file";
	} else if ((s->window_why = window_whole(path, &st))) {
		/* whole */
	} else {
		const char *v = getenv("TRACETOOL_INDEX");
		struct tt_index *ix = v && strcmp(v, "pass") == 0 ? NULL
								  : from_writer(path, &s->window_why);

		if (v && strcmp(v, "pass") == 0)
			s->window_why = "TRACETOOL_INDEX=pass";
		s->window = ix ? TT_WINDOW_INDEX_FRAMES : TT_WINDOW_PASS;
		if (ix)
			s->window_why = NULL;
		free_index(ix);
	}
}

const char *tt_window_read_name(enum tt_window_read w)
{
	return w == TT_WINDOW_INDEX_FRAMES ? "index_frames" : w == TT_WINDOW_PASS ? "pass_index"
										: "whole";
}

void tt_index_survey_text(const struct tt_index_survey *s, bool crashed, char *out,
			  size_t out_bytes)
{
	size_t n = 0;

#define ADD(...)                                                                              \
	do {                                                                                  \
		int k_ = snprintf(out + n, out_bytes - n, __VA_ARGS__);                      \
		n = k_ < 0 ? n : n + (size_t)k_ < out_bytes ? n + (size_t)k_ : out_bytes - 1; \
	} while (0)
	out[0] = '\0';
	if (!s->nr_indexed && !s->nr_bad && !s->nr_stray && !(crashed && s->nr_frames))
		return;
	ADD("index frames: %" PRIu64 " of %" PRIu64 " frames", s->nr_indexed, s->nr_frames);
	/* Of the right ones, those packed (FORMAT.md §6.3), first in the parentheses. */
	if (s->nr_packed)
		ADD(" (%" PRIu64 " packed%s", s->nr_packed, s->nr_missing ? "; " : ")");
	if (s->nr_missing) {
		const char *open = s->nr_packed ? "" : " (";

		/* Frames without one at the end of a crashed recording: its
		 * crash capture's (FORMAT.md §6, DESIGN.md "Crash capture"). */
		if (crashed && s->first_missing + s->nr_missing == s->nr_frames && s->nr_missing == 1)
			ADD("%sthe last has none: the crash handler writes none)", open);
		else if (crashed && s->first_missing + s->nr_missing == s->nr_frames)
			ADD("%sthe last %" PRIu64 " have none: the crash handler writes none)", open,
			    s->nr_missing);
		else
			ADD("%s%" PRIu64 " without one, the first: frame %" PRIu64 ")", open,
			    s->nr_missing, s->first_missing);
	}
	if (s->nr_bad)
		ADD(", %" PRIu64 " wrong (the first: frame %" PRIu64 ", %s)", s->nr_bad,
		    s->bad_frame, s->bad);
	if (s->window == TT_WINDOW_INDEX_FRAMES)
		ADD("; windows read it through them");
	else if (s->window == TT_WINDOW_PASS)
		ADD("; windows read it through an index made by a pass (%s)", s->window_why);
	else
		ADD("; windows read it whole (%s)", s->window_why);
#undef ADD
}

struct tt_index *tt_index_for(const char *path)
{
	const char *v = getenv("TRACETOOL_INDEX");
	struct ix_file_head id = { 0 };
	char file[PATH_MAX + 64], dir[PATH_MAX];
	struct stat s;
	struct tt_index *ix;
	const char *why = "TRACETOOL_INDEX=pass";
	bool have_file;

	if (v && strcmp(v, "0") == 0)
		return NULL;
	if (stat(path, &s) != 0 || !S_ISREG(s.st_mode))
		return NULL;
	if (!(v && (strcmp(v, "1") == 0 || strcmp(v, "pass") == 0)) &&
	    (uint64_t)s.st_size < TT_INDEX_MIN_BYTES)
		return NULL;
	for (unsigned i = 0; i < nr_kept; i++)
		if (strcmp(kept_paths[i], path) == 0)
			return kept[i];
	file_id(&s, &id);
	/* The writer's index frames first: no pass, nothing to keep (FORMAT.md §6). */
	ix = v && strcmp(v, "pass") == 0 ? NULL : from_writer(path, &why);
	if (ix && getenv("TRACETOOL_INDEX_STATS"))
		fprintf(stderr, "tracetool: %s: index: the writer's (%" PRIu32 " frames)\n", path,
			ix->nr_frames);
	else if (getenv("TRACETOOL_INDEX_STATS") && why)
		fprintf(stderr, "tracetool: %s: index: not the writer's (%s)\n", path, why);
	have_file = !ix && cache_path(path, file, sizeof(file), dir, sizeof(dir));
	if (!ix && have_file)
		ix = load(file, &id);
	if (!ix) {
		ix = build(path);
		if (ix && have_file)
			save(ix, file, dir, &id);
	}
	if (nr_kept < sizeof(kept) / sizeof(kept[0])) {
		kept_paths[nr_kept] = tt_xstrndup(path, strlen(path));
		kept[nr_kept++] = ix;
	}
	return ix;
}

/* ---------------------------------------------------------------------
 * Plans.
 */
uint32_t tt_index_nr_frames(const struct tt_index *ix)
{
	return ix->nr_frames;
}

void tt_index_frame(const struct tt_index *ix, uint32_t f, uint64_t *offset, uint64_t *cbytes,
		    uint64_t *content_bytes)
{
	*offset = ix->f[f].offset;
	*cbytes = ix->f[f].cbytes;
	*content_bytes = ix->f[f].content_bytes;
}

bool tt_index_cut(const struct tt_index *ix, struct recfmt_error *err)
{
	if (!ix->cut.cut)
		return false;
	memset(err, 0, sizeof(*err));
	err->status = RECFMT_TRUNCATED;
	err->frame_index = ix->cut.frame_index;
	err->frame_offset = ix->cut.frame_offset;
	snprintf(err->message, sizeof(err->message), "%s", ix->cut.message);
	return true;
}

const uint8_t *tt_index_standin(const struct tt_index *ix, uint32_t f, size_t *len)
{
	*len = ix->f[f].standin_len;
	return *len ? ix->standins + ix->f[f].standin_at : (const uint8_t *)"";
}

/* The threads' open enters, as the deltas rebuild them. */
struct p_thread {
	uint32_t serial, sp, cap;
	uint32_t filled; /* w_plan(): e[0 .. filled) found */
	struct ix_entry *e;
};

struct p_stacks {
	struct p_thread *t; /* in order of first events */
	uint32_t n, cap;
	struct tt_hmap map; /* serial -> index in t (p_find()) */
};

static bool p_eq(const void *ctx, uint32_t id)
{
	const struct p_stacks *ps = ctx;

	return ps->t[id].serial == ps->t[ps->n].serial;
}

/* A thread's stack, by serial (a hash: many threads cost no search each). */
static struct p_thread *p_find(struct p_stacks *ps, uint32_t serial)
{
	const uint32_t h = tt_hash_u64(serial);
	uint32_t id;

	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 16;
		ps->t = tt_xrealloc(ps->t, ps->cap * sizeof(*ps->t));
	}
	ps->t[ps->n] = (struct p_thread){ .serial = serial }; /* the key p_eq() compares */
	id = tt_hmap_find(&ps->map, h, p_eq, ps);
	if (id != TT_HMAP_NONE)
		return &ps->t[id];
	tt_hmap_put(&ps->map, h, ps->n);
	return &ps->t[ps->n++];
}

/* Applies frame f's deltas: the stacks where frame f starts. */
static void p_apply(struct p_stacks *ps, const struct tt_index *ix, uint32_t f)
{
	const uint8_t *p, *end;

	if (!ix->f[f].stack_len)
		return; /* nothing changed (and no blob at all for a file without events) */
	p = ix->stacks + ix->f[f].stack_at;
	end = p + ix->f[f].stack_len;
	while (p + sizeof(struct ix_delta) <= end) {
		struct ix_delta d;
		struct p_thread *t;

		memcpy(&d, p, sizeof(d));
		p += sizeof(d);
		t = p_find(ps, d.serial);
		if (d.keep < t->sp)
			t->sp = d.keep;
		if (t->sp + d.add > t->cap) {
			t->cap = t->sp + d.add;
			t->e = tt_xrealloc(t->e, t->cap * sizeof(*t->e));
		}
		for (uint32_t i = 0; i < d.add && p + sizeof(struct ix_entry) <= end; i++) {
			memcpy(&t->e[t->sp++], p, sizeof(struct ix_entry));
			p += sizeof(struct ix_entry);
		}
	}
}

/* An enter inside [lo, hi) is open: a thread's entries are in time order. */
static bool p_open_inside(const struct p_stacks *ps, uint64_t lo, uint64_t hi)
{
	for (uint32_t i = 0; i < ps->n; i++)
		for (uint32_t k = ps->t[i].sp; k-- > 0;) {
			uint64_t t = ps->t[i].e[k].ticks;

			if (t < lo)
				break;
			if (t < hi)
				return true;
		}
	return false;
}

static void leb(struct recfmt_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	unsigned n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		tmp[n] |= v ? 0x80 : 0;
		n++;
	} while (v);
	put(b, tmp, n);
}

/* One TT_REC_REPLAY record per thread with events so far: its open enters,
 * as an EVENTS payload (FORMAT.md §3.6). */
static void p_replay(const struct p_stacks *ps, struct recfmt_buf *out)
{
	struct recfmt_buf ids, deltas;

	recfmt_buf_init(&ids);
	recfmt_buf_init(&deltas);
	for (uint32_t i = 0; i < ps->n; i++) {
		const struct p_thread *t = &ps->t[i];
		uint64_t base = t->sp ? t->e[0].ticks : 0, prev = base;
		uint8_t head[8] = { TT_REC_REPLAY, 0, 0, 0 };
		uint32_t w[6];
		uint32_t size;

		ids.len = deltas.len = 0;
		for (uint32_t k = 0; k < t->sp; k++) {
			int64_t dt = (int64_t)(t->e[k].ticks - prev);

			leb(&ids, t->e[k].code);
			leb(&deltas, ((uint64_t)dt << 1) ^ (uint64_t)(dt >> 63));
			prev = t->e[k].ticks;
		}
		size = (uint32_t)(24 + ids.len + deltas.len);
		memcpy(head + 4, &size, 4);
		w[0] = t->serial;
		w[1] = t->sp;
		memcpy(&w[2], &base, 8);
		w[4] = (uint32_t)ids.len;
		w[5] = 0;
		put(out, head, sizeof(head));
		put(out, w, sizeof(w));
		if (ids.len)
			put(out, ids.data, ids.len);
		if (deltas.len)
			put(out, deltas.data, deltas.len);
	}
	recfmt_buf_fini(&ids);
	recfmt_buf_fini(&deltas);
}

/* ---------------------------------------------------------------------
 * Plans from the writer's index (FORMAT.md §6.2): a thread's depth where
 * the window's first frame starts is its last earlier block's depth_end;
 * the enter open at level L is the last enter from depth L in the last
 * earlier block whose depth_low is L or less, so that only those frames are
 * decompressed, and only those blocks decoded, to replay the stacks.
 */

/* The blocks of a thread: by_thread[*at .. *at + n). */
static uint32_t w_thread_run(const struct tt_index *ix, uint32_t at, uint32_t *n)
{
	uint32_t t = ix->blocks[ix->by_thread[at]].thread, k = at;

	while (k < ix->nr_blocks && ix->blocks[ix->by_thread[k]].thread == t)
		k++;
	*n = k - at;
	return t;
}

/*
 * A thread's blocks that overlap the window, decoded in turn: lc is the
 * lowest depth of an enter made in the window that is still open (none:
 * W_NONE), so that the walk must decode on until the thread's depth falls
 * to it. A thread's ticks never go back in a NESTED block (checked as it is
 * decoded), so its open enters are those from before the window, then the
 * window's, then later ones: the window's open ones are at lc and above.
 */
#define W_NONE UINT32_MAX
struct w_win {
	uint64_t lo, hi;
	uint32_t lc;
	const uint32_t *run; /* the thread's blocks (by_thread), n of them */
	uint32_t n, k1;	     /* k1: its last block that overlaps the window */
};

/* A block to decode: for the enters it leaves open at depths [lo, hi)
 * (t), or as one of a thread's blocks in the window (win). */
struct w_need {
	uint32_t block, lo, hi;
	struct p_thread *t;
	struct w_win *win;
};

static int need_cmp(const void *a, const void *b)
{
	const struct w_need *x = a, *y = b;

	return x->block < y->block ? -1 : x->block > y->block;
}

/* What decoding a block finds, to hold against its BLOCK_INDEX. */
struct w_sums {
	uint64_t prev;		    /* the last event's ticks */
	uint32_t dep, low, enters; /* depths from its claimed depth_start */
	bool back;		    /* the ticks went back */
};

/* One decoded block's events into s, and as need n (if any) wants them. */
static void w_events(const struct w_need *n, struct w_sums *s, const uint64_t *ticks,
		     const uint32_t *codes, int got)
{
	struct w_win *w = n ? n->win : NULL;

	for (int k = 0; k < got; k++) {
		s->back |= ticks[k] < s->prev;
		s->prev = ticks[k];
		if (RECFMT_CODE_IS_EXIT(codes[k])) {
			if (s->dep) {
				s->dep--;
				if (w && w->lc != W_NONE && s->dep <= w->lc)
					w->lc = W_NONE; /* the window's lowest open enter closed */
				s->low = s->dep < s->low ? s->dep : s->low;
			}
			continue;
		}
		s->enters++;
		if (w) {
			if (w->lc == W_NONE && ticks[k] >= w->lo && ticks[k] < w->hi)
				w->lc = s->dep;
		} else if (n && s->dep >= n->lo && s->dep < n->hi) {
			n->t->e[s->dep] = (struct ix_entry){ ticks[k], codes[k], 1 };
		}
		s->dep++;
	}
}

/*
 * Before a need's block is decoded: the thread's entries below its range
 * found by the blocks before it (a thread's needs, in file order, fill its
 * depths from 0 up), and room for the range, which the block's enters must
 * fill: at most one entry for each of its events, which take 2 bytes each
 * at least, so that a claimed depth costs memory only as it is decoded.
 */
static bool w_need_room(const struct w_need *n, const struct recfmt_record *rec, uint32_t nr)
{
	struct p_thread *t = n->t;

	if (t->filled != n->lo || n->hi - n->lo > nr || 2ull * nr > rec->size)
		return false;
	if (n->hi > t->cap) {
		t->e = tt_xrealloc(t->e, (size_t)n->hi * sizeof(*t->e));
		memset(t->e + t->cap, 0, (size_t)(n->hi - t->cap) * sizeof(*t->e));
		t->cap = n->hi;
	}
	return true;
}

/*
 * Frame f, decompressed, against its index frame: its records but EVENTS
 * byte for byte as the stand-in holds them, and each EVENTS block decoded
 * and summed up as its BLOCK_INDEX says (FORMAT.md §6.2: ticks, counts,
 * depths from its depth_start, and ticks that never go back), the needs of
 * its blocks (needs[*i ..], sorted) met on the way. Return: false on any
 * difference: an index that lies about a frame it makes a window decode is
 * not used (the caller reads the file as if it had no index frames).
 */
static bool w_check_frame(const struct tt_index *ix, uint32_t f, const uint8_t *data, size_t len,
			  struct w_need *needs, uint32_t nr, uint32_t *i)
{
	size_t sb_len;
	const uint8_t *sb = tt_index_standin(ix, f, &sb_len);
	struct recfmt_cursor c;
	struct recfmt_record rec;
	struct recfmt_error err = { 0 };
	uint32_t block = ix->frame_block[f];
	size_t spos = 0;
	uint64_t ticks[B_BATCH];
	uint32_t codes[B_BATCH];
	enum recfmt_status st;

	recfmt_cursor_init(&c, data, len);
	while ((st = recfmt_cursor_next(&c, &rec, &err)) == RECFMT_OK) {
		const uint8_t *s = sb + spos;
		uint32_t ssize;

		if (sb_len - spos < 8)
			return false;
		memcpy(&ssize, s + 4, 4);
		if (ssize > sb_len - spos - 8)
			return false;
		spos += 8 + (size_t)ssize;
		if (rec.type != RECFMT_EVENTS) {
			if (s[0] != rec.type || ssize != rec.size ||
			    memcmp(s + 8, data + rec.offset + 8, rec.size) != 0)
				return false;
			continue;
		}
		if (s[0] != TT_REC_SKIPPED || block >= ix->frame_block[f + 1])
			return false;
		{
			const struct ix_block *b = &ix->blocks[block];
			const struct w_need *n = *i < nr && needs[*i].block == block ? &needs[*i] : NULL;
			struct w_sums sums = { .prev = b->first, .dep = b->d_start, .low = b->d_start };
			struct recfmt_events_iter it;
			int got = 0;

			if (recfmt_events_open(&rec, &it, &err) != RECFMT_OK ||
			    it.thread != b->thread || it.nr_events != b->nr_events ||
			    it.ticks != b->first)
				return false;
			if (n && !n->win && !w_need_room(n, &rec, it.nr_events))
				return false;
			while ((got = recfmt_events_decode_batch(&it, ticks, codes, B_BATCH)) > 0)
				w_events(n, &sums, ticks, codes, got);
			if (got < 0 || !recfmt_events_check_end(&it) || sums.back ||
			    sums.prev != b->last || sums.enters != b->enters || sums.low != b->d_low ||
			    sums.dep != b->d_end)
				return false;
			if (n && !n->win) {
				for (uint32_t k = n->lo; k < n->hi; k++)
					if (n->t->e[k].reserved != 1)
						return false;
				n->t->filled = n->hi;
			}
			*i += n != NULL;
			block++;
		}
	}
	return st == RECFMT_END_OF_INPUT && spos == sb_len && block == ix->frame_block[f + 1];
}

/*
 * Decompresses the frames of the needed blocks and those of [first, last],
 * each once, and checks each against its index frame (w_check_frame()).
 * Return: false on any surprise.
 */
static bool w_decode_needs(const struct tt_index *ix, struct w_need *needs, uint32_t nr,
			   uint32_t first, uint32_t last, uint32_t *bad)
{
	struct recfmt_dctx *d = recfmt_dctx_new();
	struct recfmt_frame_bytes fb = { 0 };
	struct recfmt_buf out;
	bool ok = d != NULL;
	int fd = open(ix->path, O_RDONLY | O_CLOEXEC);
	uint32_t i = 0, f = 0;

	recfmt_buf_init(&fb.buf);
	recfmt_buf_init(&out);
	ok = ok && fd >= 0;
	if (nr)
		qsort(needs, nr, sizeof(*needs), need_cmp);
	/* In file order: the frames of the needs, and [first, last]. */
	while (ok) {
		const uint32_t nf = i < nr ? ix->blocks[needs[i].block].frame : UINT32_MAX;
		const uint32_t wf = f <= last ? (f < first ? first : f) : UINT32_MAX;
		const struct ix_frame *fr;
		struct recfmt_error err = { 0 };

		f = nf < wf ? nf : wf;
		if (f == UINT32_MAX)
			break;
		fr = &ix->f[f];
		fb.buf.len = 0;
		if (recfmt_buf_reserve(&fb.buf, fr->cbytes) != 0)
			tt_oom();
		ok = pread(fd, fb.buf.data, fr->cbytes, (off_t)fr->offset) == (ssize_t)fr->cbytes;
		fb.buf.len = fr->cbytes;
		fb.content_bytes = fr->content_bytes;
		fb.index = f;
		fb.offset = fr->offset;
		ok = ok && recfmt_frame_decompress(d, &fb, &out, &err) == RECFMT_OK &&
		     w_check_frame(ix, f, out.data, out.len, needs, nr, &i);
		/* Every need of the frame met. */
		ok = ok && (i == nr || ix->blocks[needs[i].block].frame > f);
		if (!ok)
			*bad = f;
		f++;
	}
	if (fd >= 0)
		close(fd);
	recfmt_dctx_free(d);
	recfmt_buf_fini(&fb.buf);
	recfmt_buf_fini(&out);
	return ok;
}

static int order_cmp(const void *a, const void *b, void *ctx)
{
	const uint32_t *order = ctx, x = order[*(const uint32_t *)a], y = order[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static void add_need(struct w_need **needs, uint32_t *nr, uint32_t *cap, struct w_need n)
{
	if (*nr == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*needs = tt_xrealloc(*needs, *cap * sizeof(**needs));
	}
	(*needs)[(*nr)++] = n;
}

/*
 * The last frame with events (ix->nr_frames if none): where a window after
 * the last event starts decoding, its stacks replayed, so that the scopes
 * open at the end, which overlap that window (chrome, perfetto), are the
 * whole read's (finding F1).
 */
static uint32_t last_events_frame(const struct tt_index *ix)
{
	for (uint32_t f = ix->nr_frames; f-- > 0;)
		if (ix->f[f].has_events)
			return f;
	return ix->nr_frames;
}

/* What w_plan() found. */
enum w_result { WP_OK, WP_WIDE /* about the whole file: read it whole */, WP_LIE };

static enum w_result w_plan(const struct tt_index *ix, uint64_t lo, uint64_t hi,
			    struct tt_index_plan *p, uint32_t *bad)
{
	struct p_stacks ps = { 0 };
	struct w_need *needs = NULL;
	struct w_win *wins;
	uint32_t nr_needs = 0, cap_needs = 0, f, last1, nr_wins = 0;
	uint32_t *order; /* threads with blocks before the first frame, by first block */
	uint32_t nr_order = 0;
	bool ok;

	for (f = 0; f < ix->nr_frames; f++)
		if (ix->f[f].has_events && ix->f[f].max_ticks >= lo)
			break;
	if (f == ix->nr_frames)
		f = last_events_frame(ix);
	if (f == ix->nr_frames)
		return WP_OK; /* no event at all: nothing to decode */
	p->decode = true;
	p->first = p->last = last1 = f;
	for (uint32_t g = f; g < ix->nr_frames; g++)
		if (ix->f[g].has_events && ix->f[g].min_ticks < hi)
			last1 = g;
	p->last = last1;
	order = tt_xrealloc(NULL, (ix->nr_blocks ? ix->nr_blocks : 1) * sizeof(*order));
	wins = tt_xcalloc(ix->nr_blocks ? ix->nr_blocks : 1, sizeof(*wins));
	/* Each thread once (its blocks are one run of by_thread): no search. */
	ps.t = tt_xcalloc(ix->nr_blocks ? ix->nr_blocks : 1, sizeof(*ps.t));
	ps.cap = ix->nr_blocks;
	for (uint32_t at = 0, n; at < ix->nr_blocks; at += n) {
		const uint32_t *run = ix->by_thread + at;
		uint32_t t = w_thread_run(ix, at, &n), j = 0, k0 = UINT32_MAX, k1 = 0;

		/* Its blocks before the first frame: j of them. */
		while (j < n && ix->blocks[run[j]].frame < p->first)
			j++;
		if (j) {
			/* Its open enters there, found by the blocks that made
			 * them; their entries are made as those are decoded. */
			uint32_t depth = ix->blocks[run[j - 1]].d_end, m = depth;

			order[nr_order++] = run[0];
			ps.t[ps.n++] = (struct p_thread){ .serial = t, .sp = depth };
			for (uint32_t k = j; m && k-- > 0;) {
				const struct ix_block *b = &ix->blocks[run[k]];

				if (b->d_low >= m)
					continue;
				add_need(&needs, &nr_needs, &cap_needs,
					 (struct w_need){ run[k], b->d_low, m, NULL, NULL });
				m = b->d_low;
			}
		}
		/* Its blocks that overlap the window (consecutive: its ticks
		 * never go back), decoded to find the enters of the window that
		 * are open after them. */
		for (uint32_t k = j; k < n && ix->blocks[run[k]].frame <= last1; k++) {
			const struct ix_block *b = &ix->blocks[run[k]];

			if (b->first < hi && b->last >= lo) {
				k0 = k0 == UINT32_MAX ? k : k0;
				k1 = k;
			}
		}
		if (k0 != UINT32_MAX) {
			struct w_win *w = &wins[nr_wins++];

			*w = (struct w_win){ .lo = lo, .hi = hi, .lc = W_NONE, .run = run, .n = n,
					     .k1 = k1 };
			for (uint32_t k = k0; k <= k1; k++)
				add_need(&needs, &nr_needs, &cap_needs,
					 (struct w_need){ run[k], 0, 0, NULL, w });
		}
	}
	/* Point the needs at their threads (both in by_thread's order). */
	for (uint32_t i = 0, k = 0; i < nr_needs; i++) {
		if (needs[i].win)
			continue;
		while (ps.t[k].serial != ix->blocks[needs[i].block].thread)
			k++;
		needs[i].t = &ps.t[k];
	}
	/* Where the window's enters still open after its blocks are all
	 * closed: the first later block whose depth falls to the lowest of
	 * them. Known only once decoded: a first guess from the sums, and
	 * the frames up to the answer checked again if it lies further. */
	ok = w_decode_needs(ix, needs, nr_needs, p->first, p->last, bad);
	for (uint32_t i = 0; ok && i < nr_wins; i++) {
		const struct w_win *w = &wins[i];
		uint32_t k = w->k1 + 1;

		if (w->lc == W_NONE)
			continue; /* none open */
		while (k < w->n && ix->blocks[w->run[k]].d_low > w->lc)
			k++;
		f = k < w->n ? ix->blocks[w->run[k]].frame : ix->nr_frames - 1;
		if (f > p->last)
			p->last = f;
	}
	if (ok && p->last > last1 && (uint64_t)(p->last - p->first + 1) * 2 <= ix->nr_frames)
		ok = w_decode_needs(ix, NULL, 0, last1 + 1, p->last, bad);
	/* Every open depth's enter found (else the depths lie). */
	for (uint32_t i = 0; ok && i < ps.n; i++)
		ok = ps.t[i].filled == ps.t[i].sp;
	if (!ok && *bad == UINT32_MAX)
		*bad = p->first;
	if (ok && p->first) {
		/* Threads in the order of their first events, as the stand-ins
		 * met them (p_replay() writes ps's order). */
		struct p_stacks sorted = { .t = tt_xcalloc(ps.n ? ps.n : 1, sizeof(*ps.t)),
					   .n = ps.n, .cap = ps.n };
		struct recfmt_buf rb;
		uint32_t *rank = tt_xrealloc(NULL, (ps.n ? ps.n : 1) * sizeof(*rank));

		for (uint32_t i = 0; i < ps.n; i++)
			rank[i] = i;
		qsort_r(rank, ps.n, sizeof(*rank), order_cmp, order);
		for (uint32_t i = 0; i < ps.n; i++)
			sorted.t[i] = ps.t[rank[i]];
		free(rank);
		recfmt_buf_init(&rb);
		p_replay(&sorted, &rb);
		p->replay = rb.data;
		p->replay_len = rb.len;
		free(sorted.t);
	}
	for (uint32_t i = 0; i < ps.n; i++)
		free(ps.t[i].e);
	free(wins);
	free(ps.t);
	tt_hmap_fini(&ps.map);
	free(needs);
	free(order);
	if (!ok || (uint64_t)(p->last - p->first + 1) * 2 > ix->nr_frames) {
		tt_index_plan_fini(p);
		return ok ? WP_WIDE : WP_LIE;
	}
	return WP_OK;
}

/*
 * The writer's index frames said of frame `bad` what it does not hold: the
 * file is read with an index made by a pass from now on (or none, when it
 * cannot have one), and the user told once.
 */
static void fall_back(struct tt_index *ix, uint32_t bad)
{
	struct tt_index *pass;
	char *path = ix->path;

	fprintf(stderr,
		"tracetool: %s: warning: frame %" PRIu32 " differs from what its index frame "
		"says (FORMAT.md §6): the index frames are not used\n",
		path, bad);
	pass = build(path);
	free(ix->f);
	free(ix->standins);
	free(ix->stacks);
	free(ix->blocks);
	free(ix->by_thread);
	free(ix->frame_block);
	if (pass) {
		*ix = *pass;
		free(pass);
	} else {
		memset(ix, 0, sizeof(*ix));
		ix->none = true;
	}
	free(path);
}

bool tt_index_plan(struct tt_index *ix, bool events, uint64_t lo, uint64_t hi,
		   struct tt_index_plan *p)
{
	struct p_stacks ps = { 0 };
	uint32_t f;
	struct recfmt_buf rb;

	memset(p, 0, sizeof(*p));
	if (ix->none)
		return false;
	if (!events)
		return true;
	if (ix->from_writer) {
		uint32_t bad = UINT32_MAX;

		switch (w_plan(ix, lo, hi, p, &bad)) {
		case WP_OK:
			return true;
		case WP_WIDE:
			return false;
		case WP_LIE:
			fall_back(ix, bad);
			return tt_index_plan(ix, events, lo, hi, p);
		}
	}
	/* First: the first frame with an event at or after lo; every event
	 * before it is before the window. */
	for (f = 0; f < ix->nr_frames; f++) {
		p_apply(&ps, ix, f); /* the stacks where frame f starts */
		if (ix->f[f].has_events && ix->f[f].max_ticks >= lo)
			break;
	}
	if (f == ix->nr_frames) {
		/* No event from lo on: the last frame with events, decoded
		 * after its stacks are replayed, so that the scopes still open
		 * at the end (which overlap every later window) are the whole
		 * read's. */
		uint32_t last = last_events_frame(ix);

		if (last == ix->nr_frames)
			goto done; /* no event at all: nothing to decode */
		for (uint32_t i = 0; i < ps.n; i++)
			free(ps.t[i].e);
		free(ps.t);
		tt_hmap_fini(&ps.map);
		ps = (struct p_stacks){ 0 };
		for (f = 0; f <= last; f++)
			p_apply(&ps, ix, f);
		f = last;
	}
	p->decode = true;
	p->first = p->last = f;
	if (f) {
		recfmt_buf_init(&rb);
		p_replay(&ps, &rb);
		p->replay = rb.data;
		p->replay_len = rb.len;
	}
	/* Last: the last frame with an event before hi, or where an enter
	 * inside the window is still open when it starts. */
	for (; f < ix->nr_frames; f++) {
		if (f > p->first)
			p_apply(&ps, ix, f);
		if ((ix->f[f].has_events && ix->f[f].min_ticks < hi) || p_open_inside(&ps, lo, hi))
			p->last = f;
	}
done:
	for (uint32_t i = 0; i < ps.n; i++)
		free(ps.t[i].e);
	free(ps.t);
	tt_hmap_fini(&ps.map);
	if (p->decode && (uint64_t)(p->last - p->first + 1) * 2 > ix->nr_frames) {
		tt_index_plan_fini(p);
		return false;
	}
	return true;
}

void tt_index_plan_fini(struct tt_index_plan *p)
{
	free(p->replay);
	memset(p, 0, sizeof(*p));
}
