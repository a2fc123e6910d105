/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - reads a trace file once, decompressing frames ahead of one
 * or more walker replicas (tt_trace_walk_many()) on the walkers' own
 * threads (and a helper thread when there is one walker), each of which
 * hands every frame to the record walk (events.c, tt_trace_walk_frame()).
 * Memory: NR_SLOTS decompressed frames.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "engine/events.h"
#include "common/progress.h"
#include "engine/symbols.h"
#include "engine/walk.h"
#include "engine/index.h"
#include "common/xalloc.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The frame pipeline. Reading and decompressing are 15-30 % of a walk's CPU
 * time (perf, on the traces of docs/BENCHMARKS.md, "The analyzer"), and they do
 * not depend on what the frames say: frames are claimed from the reader in
 * file order into a ring of NR_SLOTS frame buffers and decompressed in
 * parallel (struct frame_pipe) while walkers parse and pair the frames, in
 * file order. Each slot records one reader call exactly (status, error,
 * frame index and offset), and every walker applies it with the same code
 * as the single-threaded path (take_slot()), so messages, counts and
 * locations are the same either way.
 *
 * A walk may have several replicas (tt_trace_walk_many()): each is a whole
 * struct tt_trace that reads every record, and pairs the EVENTS blocks of
 * its own share of the threads. Each replica has its own walker thread
 * (the first runs on the calling thread); they read the same slots, which
 * are read-only while ready, and a slot is refilled only when every walker
 * is done with it. Memory stays bounded: NR_SLOTS decompressed frames, and
 * one compressed frame per thread.
 *
 * TRACETOOL_THREADS=1 in the environment reads on the calling thread, with
 * one slot and one walker, so that events/s on one core can be measured; so
 * does a process bound to one CPU. A thread that cannot start leaves its
 * work to the calling thread.
 */
/* Four: walkers may drift a frame or two apart, and the reader must stay a
 * frame ahead of the slowest; more would only cost memory. */
#define NR_SLOTS 4

/* One call of recfmt_reader_next_into() and what it left behind. */
struct frame_slot {
	struct recfmt_buf buf;	 /* the frame, when st is RECFMT_OK */
	enum recfmt_status st;
	struct recfmt_error err; /* when st is an error */
	uint64_t index, offset;	 /* recfmt_reader_frame_index()/_offset() */
	bool can_continue;	 /* recfmt_reader_can_continue() */
};

static void read_slot(struct recfmt_reader *r, struct frame_slot *s)
{
	s->st = recfmt_reader_next_into(r, &s->buf, &s->err);
	s->index = recfmt_reader_frame_index(r);
	s->offset = recfmt_reader_frame_offset(r);
	s->can_continue = recfmt_reader_can_continue(r);
	tt_progress_read(s->offset, recfmt_reader_file_bytes(r)); /* progress.h */
}

/* True if the reader has nothing after this slot (recfmt_reader_next()). */
static bool slot_is_last(const struct frame_slot *s)
{
	return s->st != RECFMT_OK && !(s->st == RECFMT_CORRUPT && s->can_continue);
}

/*
 * Applies one reader call's outcome to tr. Return: true to take the next
 * slot; false when the walk is over (*ts says how).
 */
static bool take_slot(struct tt_trace *tr, const struct frame_slot *s, tt_block_fn fn, void *ctx,
		      char *msg, size_t msg_bytes, enum tt_status *ts)
{
	switch (s->st) {
	case RECFMT_OK:
		*ts = tt_trace_walk_frame(tr, s->buf.data, s->buf.len, s->index, s->offset, fn,
					  ctx, msg, msg_bytes);
		return *ts == TT_OK;
	case RECFMT_END_OF_INPUT:
		return false;
	case RECFMT_TRUNCATED:
		tr->truncated = true;
		recfmt_error_describe(&s->err, tr->truncation, sizeof(tr->truncation));
		return false;
	case RECFMT_CORRUPT:
		tr->nr_bad_frames++;
		tt_trace_note_err(tr, &s->err);
		return s->can_continue;
	default:
		recfmt_error_describe(&s->err, msg, msg_bytes);
		*ts = TT_ERR_FILE;
		return false;
	}
}

/* One replica of a walk and how its walk ended. */
struct replica {
	struct tt_trace *tr;
	void *ctx;
	tt_block_fn fn;
	enum tt_status ts;
	bool more; /* take_slot() wants the next slot */
	char msg[512];
};

/* Applies a slot to each replica still walking. Return: true if any is. */
static bool take_all(struct replica **rs, unsigned nr, const struct frame_slot *s)
{
	bool any = false;

	for (unsigned i = 0; i < nr; i++) {
		struct replica *r = rs[i];

		if (r->more)
			r->more = take_slot(r->tr, s, r->fn, r->ctx, r->msg, sizeof(r->msg), &r->ts);
		any |= r->more;
	}
	return any;
}

/*
 * The queue between the threads that read frames and the walkers. Slot k
 * (counted from 0 over the whole walk) lives in slot[k % NR_SLOTS]. Frames
 * are independent zstd frames, so decompressing them is shared: a thread
 * that needs slot k and finds it not ready *claims* the next frame of the
 * file (finds it and copies its compressed bytes, under the lock: the file
 * is read in order) and decompresses it outside the lock with its own zstd
 * context, then marks it ready. With two walkers, both claim while they
 * wait, so the two cores decompress two frames at once and no third thread
 * takes turns with them. A walk with one walker has one helper thread that
 * only claims (the reader thread of before). Slots [min(done), nr_claimed)
 * belong to the walkers that have not passed them once ready; a slot is
 * claimed again only when every walker is done with it. A slot changes
 * hands only under the lock, which orders its contents.
 */
#define MAX_WALKERS 8

struct frame_pipe {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* broadcast: a slot ready, a walker done, reader_done, stop */
	/* Written before the threads start, then read-only until they are joined. */
	struct recfmt_reader *r;
	unsigned nr_walkers;
	/* Under lock. */
	uint64_t nr_claimed;	     /* frames claimed from the reader so far */
	uint64_t ready[NR_SLOTS];    /* slot k is ready when ready[k % NR_SLOTS] == k + 1 */
	uint64_t done[MAX_WALKERS]; /* walker w increments done[w] */
	bool reader_done;	     /* the last frame is claimed: no more claims */
	bool stop;		     /* a walker wants nothing more: stop reading */
	struct frame_slot slot[NR_SLOTS];
};

/* What a thread needs to claim and decompress frames. */
struct producer {
	struct recfmt_frame_bytes fb;
	struct recfmt_dctx *dctx;
};

struct walker {
	struct frame_pipe *p;
	unsigned id;
	struct replica *rs[MAX_WALKERS]; /* the replicas this thread walks */
	unsigned nr;
	struct producer prod;
};

static uint64_t min_done(const struct frame_pipe *p)
{
	uint64_t m = p->done[0];

	for (unsigned w = 1; w < p->nr_walkers; w++)
		m = p->done[w] < m ? p->done[w] : m;
	return m;
}

/* Under lock: whether the next frame may be claimed (its slot is free). */
static bool can_claim(const struct frame_pipe *p)
{
	uint64_t m = min_done(p);

	/* min_done() is UINT64_MAX once no walker reads any more. */
	return !p->reader_done && !p->stop && m != UINT64_MAX && p->nr_claimed - m < NR_SLOTS;
}

/*
 * Under lock, which it drops while decompressing: claims the next frame
 * into its slot (as read_slot() does, in the same order), decompresses it
 * and marks the slot ready.
 */
static void claim(struct frame_pipe *p, struct producer *pr)
{
	const uint64_t k = p->nr_claimed++;
	struct frame_slot *s = &p->slot[k % NR_SLOTS];
	enum recfmt_status st;

	st = recfmt_reader_next_compressed(p->r, &pr->fb, &s->err);
	s->index = recfmt_reader_frame_index(p->r);
	s->offset = recfmt_reader_frame_offset(p->r);
	s->can_continue = recfmt_reader_can_continue(p->r);
	s->st = st;
	s->buf.len = 0;
	tt_progress_read(s->offset, recfmt_reader_file_bytes(p->r)); /* progress.h */
	p->reader_done |= slot_is_last(s);
	if (st == RECFMT_OK) {
		/* The slot is this thread's until ready: nobody reads it. */
		pthread_mutex_unlock(&p->lock);
		s->st = recfmt_frame_decompress(pr->dctx, &pr->fb, &s->buf, &s->err);
		pthread_mutex_lock(&p->lock);
	}
	p->ready[k % NR_SLOTS] = k + 1;
	pthread_cond_broadcast(&p->changed);
}

/* The helper of a walk with one walker: claims frames ahead of it. */
static void *helper_main(void *arg)
{
	struct walker *w = arg;
	struct frame_pipe *p = w->p;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (can_claim(p)) {
			claim(p, &w->prod);
			continue;
		}
		if (p->reader_done || p->stop || min_done(p) == UINT64_MAX)
			break;
		pthread_cond_wait(&p->changed, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void *walker_main(void *arg)
{
	struct walker *w = arg;
	struct frame_pipe *p = w->p;
	bool more = true;

	/* Each replica's on_record_done() once before its first frame, on
	 * its walker's thread (events.h): the thread is known before the
	 * first frame is decompressed (out/lanes.h waits for a walker it
	 * knows, and works around one it does not). */
	for (unsigned i = 0; i < w->nr; i++)
		if (w->rs[i]->tr->on_record_done)
			w->rs[i]->tr->on_record_done(w->rs[i]->tr->progress_ctx, w->rs[i]->tr);
	for (uint64_t k = 0; more; k++) {
		bool have = true;

		pthread_mutex_lock(&p->lock);
		while (p->ready[k % NR_SLOTS] != k + 1) {
			/* Nothing claimed will come: the file ended, or a
			 * walker stopped (replicas end at the same slot; one
			 * left without a slot by another's stop just ends). */
			if (k >= p->nr_claimed && (p->reader_done || p->stop)) {
				have = false;
				break;
			}
			if (can_claim(p))
				claim(p, &w->prod);
			else
				pthread_cond_wait(&p->changed, &p->lock);
		}
		pthread_mutex_unlock(&p->lock);
		if (!have)
			break;
		more = take_all(w->rs, w->nr, &p->slot[k % NR_SLOTS]);
		pthread_mutex_lock(&p->lock);
		p->done[w->id] = k + 1; /* s is no longer read by this walker */
		p->stop |= !more;
		pthread_cond_broadcast(&p->changed);
		pthread_mutex_unlock(&p->lock);
	}
	/* Stop counting this walker in min_done(): it reads no more slots. */
	pthread_mutex_lock(&p->lock);
	p->done[w->id] = UINT64_MAX;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void producer_init(struct producer *pr)
{
	recfmt_buf_init(&pr->fb.buf);
	pr->dctx = recfmt_dctx_new(); /* NULL: its frames fail as out of memory */
}

static void producer_fini(struct producer *pr)
{
	recfmt_buf_fini(&pr->fb.buf);
	recfmt_dctx_free(pr->dctx);
}

/*
 * The walk with one walker thread per replica (the first on the calling
 * thread; a walker whose thread cannot start is run by the calling
 * thread's walker) and, with one walker, a helper thread that decompresses
 * ahead of it.
 */
static void walk_pipelined(struct recfmt_reader *r, struct replica *rs, unsigned n)
{
	struct frame_pipe p = { .r = r, .nr_walkers = n };
	struct walker w[MAX_WALKERS], helper = { .p = &p };
	pthread_t tid[MAX_WALKERS], helper_tid;
	bool started[MAX_WALKERS] = { false }, helper_started = false;

	/* With default attributes these cannot fail (POSIX lists no error
	 * for them that applies, and glibc returns 0). */
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	for (unsigned i = 0; i < NR_SLOTS; i++)
		recfmt_buf_init(&p.slot[i].buf);
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct walker){ .p = &p, .id = i };
		w[i].rs[w[i].nr++] = &rs[i];
		producer_init(&w[i].prod);
	}
	if (n == 1) {
		producer_init(&helper.prod);
		helper_started = pthread_create(&helper_tid, NULL, helper_main, &helper) == 0;
	}
	for (unsigned i = 1; i < n; i++) {
		started[i] = pthread_create(&tid[i], NULL, walker_main, &w[i]) == 0;
		if (!started[i]) {
			/* No thread: the calling thread walks this replica too. */
			w[0].rs[w[0].nr++] = &rs[i];
			pthread_mutex_lock(&p.lock);
			p.done[i] = UINT64_MAX;
			pthread_mutex_unlock(&p.lock);
		}
	}
	walker_main(&w[0]);
	for (unsigned i = 1; i < n; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	if (helper_started)
		pthread_join(helper_tid, NULL);
	if (n == 1)
		producer_fini(&helper.prod);
	for (unsigned i = 0; i < n; i++)
		producer_fini(&w[i].prod);
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.lock);
	for (unsigned i = 0; i < NR_SLOTS; i++)
		recfmt_buf_fini(&p.slot[i].buf);
}

/*
 * True if TRACETOOL_THREADS asks for everything on the calling thread, or if
 * this process may run on one CPU only (taskset): a reader thread would
 * then only take turns with the walker.
 */
static bool single_threaded(void)
{
	const char *v = getenv("TRACETOOL_THREADS");
	cpu_set_t cpus;

	if (v && strcmp(v, "1") == 0)
		return true;
	return sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) == 1;
}

bool tt_portable(void)
{
	const char *v = getenv("TRACETOOL_PORTABLE");

	return v && v[0] == '1';
}

unsigned tt_trace_walkers(void)
{
	const char *v = getenv("TRACETOOL_THREADS");
	cpu_set_t cpus;
	char *end;
	long n;

	/* TRACETOOL_THREADS=N (2..8) asks for N walkers whatever the CPUs: on
	 * one CPU, the calling thread walks them in turn (single_threaded()). */
	if (v && *v) {
		n = strtol(v, &end, 10);
		if (!*end && n >= 1)
			return n > MAX_WALKERS ? MAX_WALKERS : (unsigned)n;
	}
	if (single_threaded())
		return 1;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0)
		return 1;
	n = CPU_COUNT(&cpus);
	return n < 1 ? 1 : n > MAX_WALKERS ? MAX_WALKERS : (unsigned)n;
}

/* TRACETOOL_INDEX_STATS=1: what a pairing walk with an index decoded
 * (tracetool(1), ENVIRONMENT). */
static void index_stats(const struct tt_trace *tr, uint32_t decoded, uint32_t nr, tt_block_fn fn)
{
	const char *v = getenv("TRACETOOL_INDEX_STATS");

	if (fn && v && strcmp(v, "1") == 0)
		fprintf(stderr, "tracetool: %s: index: decoded %" PRIu32 " of %" PRIu32 " frames\n",
			tr->path, decoded, nr);
}

/*
 * With tr->use_index and a usable frame index (index.h): the frames of the
 * plan decoded on the calling thread, a stand-in for each other frame.
 * Return: false, having read nothing, when the file is to be read whole.
 */
static bool walk_indexed(struct tt_trace *tr, struct recfmt_reader *r, struct replica **rs,
			 unsigned n, tt_block_fn fn)
{
	struct tt_index *ix;
	struct tt_index_plan plan;
	struct frame_slot s = { .st = RECFMT_OK };
	struct recfmt_frame_bytes fb = { 0 };
	struct recfmt_dctx *d;
	bool more = true;
	int fd;

	if (!tr->use_index || !(ix = tt_index_for(tr->path)))
		return false;
	if (!tt_index_plan(ix, fn != NULL, tr->index_lo, tr->index_hi, &plan)) {
		index_stats(tr, tt_index_nr_frames(ix), tt_index_nr_frames(ix), fn);
		return false;
	}
	fd = open(tr->path, O_RDONLY | O_CLOEXEC);
	d = recfmt_dctx_new();
	if (fd < 0 || !d) {
		if (fd >= 0)
			close(fd);
		recfmt_dctx_free(d);
		tt_index_plan_fini(&plan);
		return false;
	}
	recfmt_buf_init(&s.buf);
	recfmt_buf_init(&fb.buf);
	for (uint32_t f = 0; f < tt_index_nr_frames(ix) && more; f++) {
		const bool decode = plan.decode && f >= plan.first && f <= plan.last;
		uint64_t off, cbytes, content;
		size_t len;
		const uint8_t *sb;

		tt_index_frame(ix, f, &off, &cbytes, &content);
		s.index = f;
		s.offset = off;
		s.can_continue = true;
		s.st = RECFMT_OK;
		s.buf.len = 0;
		if (decode) {
			ssize_t got;

			fb.buf.len = 0;
			if (recfmt_buf_reserve(&fb.buf, cbytes) != 0)
				tt_oom();
			got = pread(fd, fb.buf.data, cbytes, (off_t)off);
			fb.buf.len = got > 0 ? (size_t)got : 0;
			fb.content_bytes = content;
			fb.index = f;
			fb.offset = off;
			if ((uint64_t)got != cbytes) {
				s.st = RECFMT_IO;
				snprintf(s.err.message, sizeof(s.err.message), "%s: read failed",
					 tr->path);
			} else {
				s.st = recfmt_frame_decompress(d, &fb, &s.buf, &s.err);
			}
			for (unsigned i = 0; i < n; i++)
				rs[i]->tr->nr_decoded_frames++;
		} else {
			sb = tt_index_standin(ix, f, &len);
			if (recfmt_buf_reserve(&s.buf, len + plan.replay_len) != 0)
				tt_oom();
			memcpy(s.buf.data, sb, len);
			s.buf.len = len;
			if (plan.decode && f + 1 == plan.first && plan.replay_len) {
				memcpy(s.buf.data + len, plan.replay, plan.replay_len);
				s.buf.len += plan.replay_len;
			}
		}
		for (unsigned i = 0; i < n; i++)
			rs[i]->tr->standin = !decode;
		more = take_all(rs, n, &s);
		for (unsigned i = 0; i < n; i++)
			rs[i]->tr->standin = false;
	}
	if (more && tt_index_cut(ix, &s.err)) {
		/* Where the whole read stops too: a file that ends inside a frame. */
		s.st = RECFMT_TRUNCATED;
		s.buf.len = 0;
		s.can_continue = false;
		(void)take_all(rs, n, &s);
	}
	(void)r;
	index_stats(tr, plan.decode ? plan.last - plan.first + 1 : 0, tt_index_nr_frames(ix), fn);
	close(fd);
	recfmt_dctx_free(d);
	recfmt_buf_fini(&s.buf);
	recfmt_buf_fini(&fb.buf);
	tt_index_plan_fini(&plan);
	return true;
}

enum tt_status tt_trace_walk_many(struct tt_trace **trs, void **ctxs, unsigned n, tt_block_fn fn,
				  char *msg, size_t msg_bytes)
{
	struct replica rs[MAX_WALKERS], *all[MAX_WALKERS];
	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	enum recfmt_status st;
	enum tt_status ts = TT_OK;

	if (n < 1 || n > MAX_WALKERS) {
		snprintf(msg, msg_bytes, "internal error: %u walkers", n);
		return TT_ERR_FILE;
	}
	st = recfmt_reader_open(&r, trs[0]->path, &err);
	if (st != RECFMT_OK) {
		recfmt_error_describe(&err, msg, msg_bytes);
		return TT_ERR_FILE;
	}
	for (unsigned i = 0; i < n; i++) {
		trs[i]->file_bytes = recfmt_reader_file_bytes(r);
		trs[i]->walker = i;
		trs[i]->nr_walkers = n;
		rs[i] = (struct replica){ .tr = trs[i], .ctx = ctxs ? ctxs[i] : NULL, .fn = fn,
					  .ts = TT_OK, .more = true };
		all[i] = &rs[i];
	}
	if (walk_indexed(trs[0], r, all, n, fn)) {
		/* The frames that matter decoded, the others' stand-ins read. */
	} else if (single_threaded()) {
		struct frame_slot s = { .st = RECFMT_OK };

		recfmt_buf_init(&s.buf);
		do
			read_slot(r, &s);
		while (take_all(all, n, &s));
		recfmt_buf_fini(&s.buf);
	} else {
		walk_pipelined(r, rs, n);
	}
	recfmt_reader_close(r);
	tt_progress_done();
	/* Every replica ends the same way; report the first that failed. */
	for (unsigned i = 0; i < n && ts == TT_OK; i++) {
		ts = rs[i].ts;
		if (ts != TT_OK)
			snprintf(msg, msg_bytes, "%s", rs[i].msg);
	}
	for (unsigned i = 1; i < n && ts == TT_OK; i++)
		tt_trace_merge(trs[0], trs[i]);
	if (ts == TT_OK && trs[0]->nr_recordings > 1) {
		/* Never merged: each has its own clock, threads and sites. */
		snprintf(msg, msg_bytes,
			 "%" PRIu32 " recordings concatenated (the second starts at frame %" PRIu64
			 ", byte %" PRIu64 "); analyse each in a file of its own",
			 trs[0]->nr_recordings, trs[0]->second_header_frame,
			 trs[0]->second_header_offset);
		ts = TT_ERR_FILE;
	}
	if (ts == TT_OK)
		tt_symbols_warn(trs[0]->syms); /* once, whatever the replicas met */
	if (ts == TT_OK && !trs[0]->has_header) {
		struct tt_trace *tr = trs[0];

		if (tr->first_problem[0])
			snprintf(msg, msg_bytes, "%s", tr->first_problem);
		else if (tr->truncation[0])
			snprintf(msg, msg_bytes, "%s", tr->truncation);
		else if (tr->file_bytes == 0)
			snprintf(msg, msg_bytes, "empty file (not a rec trace)");
		else
			snprintf(msg, msg_bytes, "no FILE_HEADER (not a rec trace)");
		ts = TT_ERR_FILE;
	}
	return ts;
}

enum tt_status tt_trace_walk(struct tt_trace *tr, tt_block_fn fn, void *ctx, char *msg,
			     size_t msg_bytes)
{
	return tt_trace_walk_many(&tr, &ctx, 1, fn, msg, msg_bytes);
}

/* Decompresses fb and reads its records into tr (no EVENTS block is
 * decoded). Return: false on any problem. */
static bool skim_frame(struct tt_trace *tr, struct recfmt_dctx *d,
		       const struct recfmt_frame_bytes *fb, struct recfmt_buf *out)
{
	struct recfmt_error err = { 0 };
	char msg[256];

	if (recfmt_frame_decompress(d, fb, out, &err) != RECFMT_OK)
		return false;
	return tt_trace_walk_frame(tr, out->data, out->len, fb->index, fb->offset, NULL, NULL,
				   msg, sizeof(msg)) == TT_OK;
}

/* exact_clock: the clock must be the file's final one whatever the middle
 * frames hold (tt_trace_skim_exact()). */
static bool skim(struct tt_trace *tr, bool exact_clock)
{
	struct recfmt_reader *rd = NULL;
	struct recfmt_dctx *d = recfmt_dctx_new();
	struct recfmt_frame_bytes fb[2];
	struct recfmt_error err = { 0 };
	struct recfmt_buf out;
	enum recfmt_status st = RECFMT_OK;
	uint64_t nr = 0, syncs0 = 0;
	unsigned cur = 0;
	bool ok;

	memset(fb, 0, sizeof(fb));
	recfmt_buf_init(&fb[0].buf);
	recfmt_buf_init(&fb[1].buf);
	recfmt_buf_init(&out);
	ok = d && recfmt_reader_open(&rd, tr->path, &err) == RECFMT_OK;
	/* Frame 0 read at once; then the compressed bytes of each frame in
	 * turn, the last two kept (fb[cur ^ 1]: the latest). */
	while (ok && (st = recfmt_reader_next_compressed(rd, &fb[cur], &err)) == RECFMT_OK) {
		if (nr++ == 0) {
			ok = skim_frame(tr, d, &fb[cur], &out) && tr->has_header;
			syncs0 = tr->nr_syncs;
		}
		cur ^= 1;
	}
	/* The last frame's seq must count every frame found: else frames were
	 * lost or repeated, or another recording follows the first (which the
	 * full walk refuses, before any output). */
	ok = ok && st == RECFMT_END_OF_INPUT && nr >= 2 &&
	     skim_frame(tr, d, &fb[cur ^ 1], &out) && !tr->nr_bad_frames && tr->has_end &&
	     tr->next_seq == nr && tr->nr_recordings == 1;
	/* The first SYNC in frame 0 and the last in the last frame: then no
	 * middle frame can hold the first or the last (FORMAT.md §3.3). */
	if (ok && exact_clock && tr->hdr.clock != RECFMT_CLOCK_MONOTONIC)
		ok = syncs0 >= 1 && tr->nr_syncs > syncs0;
	if (rd)
		recfmt_reader_close(rd);
	recfmt_dctx_free(d);
	recfmt_buf_fini(&fb[0].buf);
	recfmt_buf_fini(&fb[1].buf);
	recfmt_buf_fini(&out);
	return ok;
}

bool tt_trace_skim(struct tt_trace *tr)
{
	return skim(tr, false);
}

bool tt_trace_skim_exact(struct tt_trace *tr)
{
	return skim(tr, true);
}
