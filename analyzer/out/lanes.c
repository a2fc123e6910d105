/* SPDX-License-Identifier: MIT */
/*
 * lanes.c - see lanes.h. A lane is a list of pages; the walker fills the
 * last one through its tt_out, the merge empties the first ones. A page's
 * marks say where a run of bytes at a new position starts; bytes before a
 * page's first mark continue the previous page's last run.
 *
 * Who touches what: the walker writes its page's bytes at and after
 * page->len, and its marks at and after page->nr_marks, with no lock;
 * it publishes them (len, nr_marks, done) under ls->lock. The merge reads
 * only what was published, under the lock, and writes it out with the lock
 * dropped (merging set): a published byte is never written again, and a
 * page goes back to the free list only once the merge is past it, so
 * nobody writes what the merge reads.
 */
#define _GNU_SOURCE /* O_TMPFILE */
#include "out/lanes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/xalloc.h"

/* Pages of 256 KiB, a quarter of a smaller hold (TRACETOOL_LANE_BYTES), and
 * never below what one tt_out_reserve() asks (4 KiB and a name). */
#define PAGE_BYTES (256u << 10)
#define MIN_PAGE_BYTES (16u << 10)
#define PAGE_MARKS 1024u
/* What a lane holds at most before its walker waits or spills; for tests,
 * TRACETOOL_LANE_BYTES (tracetool(1), ENVIRONMENT). */
#define LANES_HOLD_BYTES (8u << 20)
/* A merge starts once the lanes hold this much, and writes at most
 * MERGE_IOVS runs at a time. */
#define MERGE_BYTES (1u << 20)
#define MERGE_IOVS 64
#define MAX_FREE_PAGES 64

struct lane_mark {
	uint64_t pos;
	uint32_t at; /* offset in the page */
};

struct tt_lane_page {
	struct tt_lane_page *next;
	char *data;	     /* NULL while spilled */
	uint64_t spill_at;   /* where its bytes are in the lane's spill file */
	uint32_t len;	     /* bytes published */
	uint32_t nr_marks;   /* marks published */
	bool closed;	     /* the walker writes into a later page */
	struct lane_mark marks[PAGE_MARKS];
};

/* Under lock, or before the walk. */
static struct tt_lane_page *page_new(struct tt_lanes *ls)
{
	struct tt_lane_page *p = ls->free_pages;

	if (p) {
		ls->free_pages = p->next;
		ls->nr_free--;
	} else {
		p = tt_xrealloc(NULL, sizeof(*p));
		p->data = tt_xrealloc(NULL, ls->page_bytes);
	}
	p->next = NULL;
	p->len = p->nr_marks = 0;
	p->closed = false;
	return p;
}

static void page_free(struct tt_lanes *ls, struct tt_lane_page *p)
{
	if (p->data && ls->nr_free < MAX_FREE_PAGES) {
		p->next = ls->free_pages;
		ls->free_pages = p;
		ls->nr_free++;
		return;
	}
	free(p->data);
	free(p);
}

/* Under lock: what the walker wrote into its page so far is published. */
static void publish(struct tt_lane *l)
{
	struct tt_lane_page *t = l->tail;

	l->held += l->out.len - t->len;
	t->len = (uint32_t)l->out.len;
	t->nr_marks = l->nr_marks;
}

/* The walker's page is full (tt_out's flush hook), or its marks are: a new one. */
static void next_page(struct tt_out *o)
{
	struct tt_lane *l = o->hook_ctx;
	struct tt_lanes *ls = l->ls;
	struct tt_lane_page *p;

	pthread_mutex_lock(&ls->lock);
	publish(l);
	l->tail->closed = true;
	p = page_new(ls);
	l->tail->next = p;
	l->tail = p;
	pthread_mutex_unlock(&ls->lock);
	o->buf = p->data;
	o->len = 0;
	o->cap = ls->page_bytes;
	l->nr_marks = 0;
}

void tt_lanes_init(struct tt_lanes *ls, unsigned nr, struct tt_out *dst, uint64_t skip)
{
	const char *v = getenv("TRACETOOL_LANE_BYTES");

	memset(ls, 0, sizeof(*ls));
	pthread_mutex_init(&ls->lock, NULL);
	pthread_cond_init(&ls->moved, NULL);

	ls->nr = nr;
	ls->hold = v && *v ? strtoull(v, NULL, 10) : LANES_HOLD_BYTES;
	ls->page_bytes = ls->hold / 4 > PAGE_BYTES ? PAGE_BYTES
			 : ls->hold / 4 < MIN_PAGE_BYTES ? MIN_PAGE_BYTES
							  : (uint32_t)(ls->hold / 4);
	ls->dst = dst;
	ls->skip = skip;
	ls->lanes = tt_xcalloc(nr, sizeof(*ls->lanes));
	tt_out_flush(dst); /* what it has goes first */
	for (unsigned i = 0; i < nr; i++) {
		struct tt_lane *l = &ls->lanes[i];

		tt_out_init(&l->out, -1);
		l->ls = ls;
		l->pos = UINT64_MAX; /* the first tt_lane_at() marks */
		l->head = l->tail = page_new(ls);
		l->out.buf = l->tail->data;
		l->out.cap = ls->page_bytes;
		l->out.flush_hook = next_page;
		l->out.hook_ctx = l;
		l->spill_fd = -1;
	}
}

void tt_lane_mark(struct tt_lane *l, uint64_t pos)
{
	if (l->nr_marks == PAGE_MARKS)
		next_page(&l->out);
	l->tail->marks[l->nr_marks].pos = pos;
	l->tail->marks[l->nr_marks].at = (uint32_t)l->out.len;
	l->nr_marks++;
	l->pos = pos;
}

/* A temporary file for a lane's pages: unnamed, in $TMPDIR or /tmp. */
static int spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/tracetool-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* Under lock, no merge running: the lane's closed pages into its file. */
static void spill(struct tt_lanes *ls, struct tt_lane *l)
{
	for (struct tt_lane_page *p = l->head; p && p->closed; p = p->next) {
		size_t off = 0;

		if (!p->data)
			continue;
		if (l->spill_fd < 0 && (l->spill_fd = spill_open()) < 0)
			tt_oom(); /* no room for what memory cannot hold either */
		while (off < p->len) {
			ssize_t n = pwrite(l->spill_fd, p->data + off, p->len - off,
					   (off_t)(l->spill_bytes + off));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				tt_oom();
			off += (size_t)n;
		}
		p->spill_at = l->spill_bytes;
		l->spill_bytes += p->len;
		l->held -= p->len - (p == l->head ? l->rd : 0); /* the merge took rd */
		ls->spilled += p->len;
		free(p->data);
		p->data = NULL;
	}
}

/* Under lock: a spilled page back in memory, for the merge. */
static void unspill(struct tt_lane *l, struct tt_lane_page *p)
{
	size_t off = 0;

	p->data = tt_xrealloc(NULL, l->ls->page_bytes);
	while (off < p->len) {
		ssize_t n = pread(l->spill_fd, p->data + off, p->len - off,
				  (off_t)(p->spill_at + off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			tt_oom();
		off += (size_t)n;
	}
	l->held += p->len - l->rd; /* p is the head */
}

/*
 * Under lock: the lane's read point moved past marks and finished pages
 * (to *done, freed after the write); true if a byte is published at it.
 */
static bool lane_ready(struct tt_lane *l, struct tt_lane_page **done)
{
	for (;;) {
		struct tt_lane_page *p = l->head;

		if (!p->data)
			unspill(l, p);
		while (l->rd_mark < p->nr_marks && p->marks[l->rd_mark].at == l->rd)
			l->rd_pos = p->marks[l->rd_mark++].pos;
		if (l->rd < p->len)
			return true;
		if (!p->closed || !p->next)
			return false;
		l->head = p->next;
		l->rd = l->rd_mark = 0;
		p->next = *done;
		*done = p;
	}
}

static void write_all(struct tt_lanes *ls, struct iovec *iov, int n)
{
	struct tt_out *o = ls->dst;

	while (n > 0 && !o->failed) {
		ssize_t w = writev(o->fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			o->failed = true;
			o->err = errno;
			return;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
}

/*
 * Under lock, no merge running: writes the runs every lane is done with,
 * in order of position, at most MERGE_IOVS of them (the lock dropped while
 * writing). Return: whether it took any (false: none is ready).
 */
static bool merge(struct tt_lanes *ls)
{
	struct iovec iov[MERGE_IOVS];
	struct tt_lane_page *done = NULL;
	uint64_t upto = UINT64_MAX, bytes = 0;
	int n = 0;
	bool took = false;

	for (unsigned i = 0; i < ls->nr; i++)
		upto = ls->lanes[i].done < upto ? ls->lanes[i].done : upto;
	while (n < MERGE_IOVS) {
		struct tt_lane *best = NULL;
		uint32_t end;

		for (unsigned i = 0; i < ls->nr; i++) {
			struct tt_lane *l = &ls->lanes[i];

			if (lane_ready(l, &done) && l->rd_pos < upto &&
			    (!best || l->rd_pos < best->rd_pos))
				best = l;
		}
		if (!best)
			break;
		took = true;
		end = best->rd_mark < best->head->nr_marks ? best->head->marks[best->rd_mark].at
							   : best->head->len;
		iov[n].iov_base = best->head->data + best->rd;
		iov[n].iov_len = end - best->rd;
		best->held -= end - best->rd;
		best->rd = end;
		if (ls->skip) {
			uint64_t k = ls->skip < iov[n].iov_len ? ls->skip : iov[n].iov_len;

			iov[n].iov_base = (char *)iov[n].iov_base + k;
			iov[n].iov_len -= k;
			ls->skip -= k;
		}
		bytes += iov[n].iov_len;
		n += iov[n].iov_len > 0;
	}
	if (n) {
		ls->merging = true;
		pthread_mutex_unlock(&ls->lock);
		write_all(ls, iov, n);
		pthread_mutex_lock(&ls->lock);
		ls->merging = false;
		ls->bytes += bytes;
	}
	while (done) {
		struct tt_lane_page *p = done;

		done = p->next;
		page_free(ls, p);
	}
	if (n && ls->nr_waiting)
		pthread_cond_broadcast(&ls->moved);
	return took;
}

/*
 * Under lock: the lanes that hold l's output back (behind its oldest byte)
 * and, in *here, whether one of them runs on the caller's thread, or on
 * none yet (then waiting for it could never end).
 */
static unsigned blockers(const struct tt_lanes *ls, const struct tt_lane *l, bool *here)
{
	unsigned nr = 0;

	*here = false;
	for (unsigned i = 0; i < ls->nr; i++) {
		const struct tt_lane *b = &ls->lanes[i];

		if (b == l || b->done > l->rd_pos)
			continue;
		nr++;
		*here |= !b->has_thread || pthread_equal(b->thread, pthread_self());
	}
	return nr;
}

/* The calling thread's CPU time in ns (tt_lanes.timed). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tt_lane_done(struct tt_lane *l, uint64_t pos)
{
	struct tt_lanes *ls = l->ls;
	uint64_t total = 0;

	if (ls->timed) { /* read after the walk, its threads joined */
		uint64_t now = thread_cpu_ns();

		l->cpu_ns += l->cpu_at ? now - l->cpu_at : 0;
		l->cpu_at = now;
	}

	pthread_mutex_lock(&ls->lock);
	publish(l);
	l->done = pos;
	if (!l->has_thread) {
		l->has_thread = true;
		l->thread = pthread_self();
	}
	if (ls->nr_waiting)
		pthread_cond_broadcast(&ls->moved);
	for (unsigned i = 0; i < ls->nr; i++)
		total += ls->lanes[i].held;
	while (!ls->merging && total >= MERGE_BYTES && merge(ls))
		;
	while (l->held >= ls->hold) {
		bool here;

		if (!ls->merging && merge(ls))
			continue;
		if (ls->merging || (blockers(ls, l, &here) && !here)) {
			ls->nr_waiting++;
			pthread_cond_wait(&ls->moved, &ls->lock);
			ls->nr_waiting--;
			continue;
		}
		spill(ls, l);
		break;
	}
	pthread_mutex_unlock(&ls->lock);
}

void tt_lanes_finish(struct tt_lanes *ls)
{
	pthread_mutex_lock(&ls->lock);
	for (unsigned i = 0; i < ls->nr; i++) {
		publish(&ls->lanes[i]);
		ls->lanes[i].done = UINT64_MAX;
	}
	while (merge(ls))
		;
	pthread_mutex_unlock(&ls->lock);
}

void tt_lanes_fini(struct tt_lanes *ls)
{
	for (unsigned i = 0; ls->lanes && i < ls->nr; i++) {
		struct tt_lane *l = &ls->lanes[i];

		while (l->head) {
			struct tt_lane_page *p = l->head;

			l->head = p->next;
			free(p->data);
			free(p);
		}
		if (l->spill_fd >= 0)
			close(l->spill_fd);
	}
	while (ls->free_pages) {
		struct tt_lane_page *p = ls->free_pages;

		ls->free_pages = p->next;
		free(p->data);
		free(p);
	}
	free(ls->lanes);
	pthread_mutex_destroy(&ls->lock);
	pthread_cond_destroy(&ls->moved);
	memset(ls, 0, sizeof(*ls));
}
