/* SPDX-License-Identifier: MIT */
/*
 * test_churn.c - finding F4: a program whose threads are short (a thread
 * per request, one scope each) got a file made of per-exit frames and of
 * index frames: a frame for every thread or two that ended while the
 * writer was behind (44 402 events in 7 710 frames), and index frames
 * (FORMAT.md §6) three times the size of their data frames, each short
 * thread's THREAD, BLOCK_INDEX and THREAD_END records raw in it (86 bytes
 * an event). Now the exits drain into the pending frame, written when it is
 * due, and such index frames are packed (FORMAT.md §6.3).
 *
 * Counts only, no timing: the writer is held up by its output (a FIFO kept
 * full until the threads have ended and slept past REC_FLUSH_MS / 4, so
 * that everything the writer drains is already due), and the file's size
 * is compared with its events.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rec.h"
#include "testutil.h"
#include "trace_read.h"

#define AT_ONCE 8

static char dir[TU_TMPDIR_MAX];

static void setup(void)
{
	tu_tmpdir(dir, "rec_churn");
}

static void teardown(void)
{
	tu_tmpdir_remove(dir);
}

TestSuite(churn, .init = setup, .fini = teardown, .timeout = 120);

static volatile unsigned sink;

/* A request: one scope on a thread of its own. */
static void *request(void *arg)
{
	TRACE_SCOPE_NAMED("request");
	sink += (unsigned)(uintptr_t)arg;
	return NULL;
}

/* n short threads, AT_ONCE at a time, each joined. */
static void churn(unsigned n)
{
	for (unsigned i = 0; i < n; i += AT_ONCE) {
		pthread_t t[AT_ONCE];

		for (unsigned k = 0; k < AT_ONCE; k++)
			cr_assert_eq(pthread_create(&t[k], NULL, request, (void *)(uintptr_t)(i + k)), 0);
		for (unsigned k = 0; k < AT_ONCE; k++)
			cr_assert_eq(pthread_join(t[k], NULL), 0);
	}
}

/* The trace holds every request, each on its own thread, ended. */
static void assert_every_request(const char *path, unsigned n, struct tr_trace *tr)
{
	unsigned ended = 0;

	cr_assert_eq(tr_load(path, tr), 0, "%s", path);
	cr_assert(tr->clean, "no END record");
	cr_assert_eq(tr->nr_corrupt, 0);
	cr_assert_eq(tr_calls(tr, "request"), n);
	cr_assert_eq(tr_dropped(tr), 0);
	cr_assert(tr_well_nested(tr));
	for (uint32_t i = 0; i < tr->nr_threads; i++)
		ended += tr->threads[i].ended;
	cr_assert_geq(ended, n, "%u of %u threads ended in the file", ended, n);
}

/* Reads a FIFO to its end: the first `skip` bytes dropped, the rest into `to`. */
struct drain {
	int fd;
	size_t skip;
	const char *to;
	int err;
};

static void *drain_fifo(void *arg)
{
	struct drain *d = arg;
	FILE *out = fopen(d->to, "wb");
	uint8_t buf[65536];
	ssize_t k;
	int fl = fcntl(d->fd, F_GETFL);

	if (!out || fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		d->err = errno ? errno : EIO;
		if (out)
			fclose(out);
		return NULL;
	}
	while ((k = read(d->fd, buf, sizeof(buf))) != 0) {
		size_t from = 0;

		if (k < 0) {
			if (errno == EINTR)
				continue;
			d->err = errno;
			break;
		}
		if (d->skip) {
			from = (size_t)k < d->skip ? (size_t)k : d->skip;
			d->skip -= from;
		}
		if (fwrite(buf + from, 1, (size_t)k - from, out) != (size_t)k - from)
			d->err = EIO;
	}
	if (fclose(out) != 0)
		d->err = EIO;
	return NULL;
}

/*
 * The writer's first frame waits for room in a full FIFO while NR_BEHIND
 * threads record a scope and end, then for longer than REC_FLUSH_MS / 4:
 * every record it then drains is due. Each thread's drain used to write a
 * frame (its events, then its THREAD_END: two frames a thread); they go
 * into the frame being built now, a frame written for each REC_FLUSH_MS / 32
 * of the pass at most (NR_BEHIND / 16 allows some 2 ms a thread). Before:
 * 936-962 frames for 480 threads; now 3 (the one that waited, the flush's,
 * the END's).
 */
#define NR_BEHIND 480u
#define BEHIND_FLUSH_MS 400u

Test(churn, F4_short_threads_ended_behind_a_busy_writer_share_their_frames)
{
	struct rec_config c = REC_CONFIG_INIT;
	char fifo[TU_PATH_MAX], path[TU_PATH_MAX];
	struct drain d = { 0 };
	struct tr_trace tr;
	pthread_t reader;
	struct timespec nap = { 0, 3 * BEHIND_FLUSH_MS / 4 * 1000000L };
	uint8_t junk[4096];
	int wfd;

	tu_join(fifo, dir, "out.fifo");
	tu_join(path, dir, "trace.zst");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	d.fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_geq(d.fd, 0);
	/* Full before librec opens it: its first write waits for room. */
	wfd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_geq(wfd, 0);
	memset(junk, 'j', sizeof(junk));
	for (ssize_t k; (k = write(wfd, junk, sizeof(junk))) != 0;) {
		if (k < 0) {
			cr_assert_eq(errno, EAGAIN, "%s", strerror(errno));
			if (write(wfd, junk, 1) != 1)
				break; /* not even a byte: full */
			k = 1;
		}
		d.skip += (size_t)k;
	}
	close(wfd);
	c.output = fifo;
	c.flush_ms = BEHIND_FLUSH_MS;
	cr_assert_eq(rec_start(&c), 0);
	churn(NR_BEHIND);
	nanosleep(&nap, NULL); /* all of it older than REC_FLUSH_MS / 4 */
	d.to = path;
	cr_assert_eq(pthread_create(&reader, NULL, drain_fifo, &d), 0);
	cr_assert_eq(rec_flush(), 0); /* a pass of its own, not the last */
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(pthread_join(reader, NULL), 0);
	close(d.fd);
	cr_assert_eq(d.err, 0, "%s", strerror(d.err));
	assert_every_request(path, NR_BEHIND, &tr);
	cr_assert_leq(tr.nr_frames, NR_BEHIND / 16, "%u threads ended in %llu frames", NR_BEHIND,
		      (unsigned long long)tr.nr_frames);
	tr_free(&tr);
}

/*
 * With a long REC_FLUSH_MS, NR_SHORT short threads' records fill one frame
 * (then the END's): its index frame, a THREAD, BLOCK_INDEX and THREAD_END
 * record a thread (about 116 bytes raw), was most of the file: 66 bytes an
 * event (2 a thread) before, 17-18 with it packed. The bound leaves room
 * for another zstd's ratio.
 */
#define NR_SHORT 2000u
#define MAX_BYTES_PER_EVENT 32u

Test(churn, F4_an_index_frame_of_short_threads_costs_less_than_their_events)
{
	struct rec_config c = REC_CONFIG_INIT;
	char path[TU_PATH_MAX];
	struct tr_trace tr;
	struct stat st;

	tu_join(path, dir, "trace.zst");
	c.output = path;
	c.flush_ms = 60000;
	cr_assert_eq(rec_start(&c), 0);
	churn(NR_SHORT);
	cr_assert_eq(rec_stop(), 0);
	assert_every_request(path, NR_SHORT, &tr);
	cr_assert_eq(stat(path, &st), 0);
	/* Exits drained into the frame being built: its first, one, the END's. */
	cr_assert_leq(tr.nr_frames, 3, "%llu frames", (unsigned long long)tr.nr_frames);
	cr_assert_leq((uint64_t)st.st_size, MAX_BYTES_PER_EVENT * tr.nr_events,
		      "%lld bytes for %llu events: %.1f an event", (long long)st.st_size,
		      (unsigned long long)tr.nr_events, (double)st.st_size / (double)tr.nr_events);
	tr_free(&tr);
}
