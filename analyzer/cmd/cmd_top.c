/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c - `tracetool top TRACE`: a live view of a recording while it is
 * being written, like perf top. librec appends independent zstd frames to
 * the file every REC_FLUSH_MS (FORMAT.md §2); top follows the file, hands
 * each complete frame to the analyzer's record walk (events.c,
 * tt_trace_walk_frame()) and its pairing engine (scopes.c, with a consumer
 * of activations), and every period (-d, 1 s) draws a table of the
 * activations that ended since the last one: per scope, calls, calls/s,
 * share of self time, p50 and p99, and the threads that spent most of it.
 * A frame still being written (the file ends inside it) is waited for; a
 * scope open across a period's end is counted in the period it ends in,
 * whole. The recording's END record (a clean end) ends top, after a last
 * table. What this file owns: following the file, the periods, the
 * terminal (cbreak mode, restored on every way out) and the drawing; it
 * decodes nothing itself. docs/ANALYZER.md, "top".
 */
#define _GNU_SOURCE /* open_memstream */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "cmd/commands.h"
#include "common/emit.h"
#include "engine/events.h"
#include "engine/front.h"
#include "common/hist.h"
#include "views/labels.h"
#include "cmd/options.h"
#include "engine/scopes.h"
#include "engine/walk.h" /* tt_trace_walk_frame(): top is a frame source, as pipeline.c is */
#include "common/xalloc.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* How often the file is looked at for new frames while waiting. */
#define POLL_MS 50
/* Threads named per scope in the table. */
#define TOP_THREADS 2

struct top_args {
	const char *path;
	uint64_t period_ns;
};

/* ------------------------------------------------------------------ */
/* Per-period figures, filled by the engine's consumer.                */

/* One scope (a name index of the trace) in the current period. */
struct top_row {
	uint64_t calls;
	uint64_t self_ticks;
	uint64_t min_ticks, max_ticks;
	struct tt_hist hist; /* durations, ticks */
};

struct top;

/* A thread's self ticks per scope in the current period: the engine's
 * per-thread consumer state (tt_consumer.thread_begin()). */
struct top_thread {
	struct top *t;
	const struct tt_thread *th;
	uint64_t *self_ticks; /* by name index */
	uint32_t nr;
};

struct top {
	struct top_args args;
	struct tt_trace tr;
	struct tt_scopes sc;
	bool started; /* tr and sc are initialised */

	struct top_row *rows; /* by name index */
	uint32_t nr_rows;
	uint32_t *active; /* name indices with calls this period */
	uint32_t nr_active;
	struct top_thread **threads;
	uint32_t nr_threads;
	uint64_t period_calls, period_errors;
	uint64_t mark_ticks; /* tr.max_ticks when the last table was drawn */

	/* Following the file. */
	int fd;
	ino_t ino;
	dev_t dev;
	uint8_t *in;	   /* bytes read; in[0] is at file offset in_offset */
	size_t in_pos;	   /* in[in_pos, in_len): not walked yet */
	size_t in_len, in_cap;
	uint64_t in_offset;
	uint64_t frame_index;
	struct recfmt_frame_bytes fb;
	struct recfmt_buf out;
	struct recfmt_dctx *dctx;
	struct timespec last_growth;
	bool waiting_for_file;
	bool restarted; /* the file was replaced or cut: started over */

	struct tt_labels labels;
	uint32_t labelled_names; /* tr.nr_names when labels were made */
};

static void *xrealloc_array(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		tt_oom();
	return tt_xrealloc(p, n * size);
}

static void *top_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct top *t = ctx;
	struct top_thread *tt = tt_xcalloc(1, sizeof(*tt));

	tt->t = t;
	tt->th = th;
	t->threads = xrealloc_array(t->threads, t->nr_threads + 1, sizeof(*t->threads));
	t->threads[t->nr_threads++] = tt;
	return tt;
}

/* One timed activation: counted in the period in which the engine pairs
 * its exit, whatever period its enter was read in. */
static void top_act(void *tctx, const struct tt_activation *a)
{
	struct top_thread *tt = tctx;
	struct top *t = tt->t;
	struct top_row *r;

	if (a->name >= t->nr_rows) {
		uint32_t n = t->nr_rows ? t->nr_rows : 64;

		while (n <= a->name)
			n *= 2;
		t->rows = xrealloc_array(t->rows, n, sizeof(*t->rows));
		memset(t->rows + t->nr_rows, 0, (n - t->nr_rows) * sizeof(*t->rows));
		t->active = xrealloc_array(t->active, n, sizeof(*t->active));
		t->nr_rows = n;
	}
	if (a->name >= tt->nr) {
		uint32_t n = tt->nr ? tt->nr : 64;

		while (n <= a->name)
			n *= 2;
		tt->self_ticks = xrealloc_array(tt->self_ticks, n, sizeof(*tt->self_ticks));
		memset(tt->self_ticks + tt->nr, 0, (n - tt->nr) * sizeof(*tt->self_ticks));
		tt->nr = n;
	}
	r = &t->rows[a->name];
	if (r->calls == 0) {
		t->active[t->nr_active++] = a->name;
		r->min_ticks = a->dur_ticks;
		r->max_ticks = a->dur_ticks;
	}
	r->calls++;
	r->self_ticks += a->self_ticks;
	r->min_ticks = a->dur_ticks < r->min_ticks ? a->dur_ticks : r->min_ticks;
	r->max_ticks = a->dur_ticks > r->max_ticks ? a->dur_ticks : r->max_ticks;
	tt_hist_add(&r->hist, tt_hist_index(a->dur_ticks), 1);
	tt->self_ticks[a->name] += a->self_ticks;
	t->period_calls++;
}

static void top_error(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
		      uint64_t ticks, enum tt_frame_error why)
{
	struct top_thread *tt = tctx;

	(void)name, (void)slot, (void)enter_ticks, (void)ticks, (void)why;
	tt->t->period_errors++;
}

static const struct tt_consumer top_consumer = {
	.thread_begin = top_thread_begin,
	.act = top_act,
	.error = top_error,
	.one_walker = true,
	.no_times = true,
};

/* Empties the period's figures (after a table). */
static void period_reset(struct top *t)
{
	for (uint32_t i = 0; i < t->nr_active; i++) {
		struct top_row *r = &t->rows[t->active[i]];

		tt_hist_free_chunks(&r->hist);
		memset(r, 0, sizeof(*r));
	}
	t->nr_active = 0;
	for (uint32_t i = 0; i < t->nr_threads; i++)
		if (t->threads[i]->nr)
			memset(t->threads[i]->self_ticks, 0,
			       t->threads[i]->nr * sizeof(*t->threads[i]->self_ticks));
	t->period_calls = 0;
	t->period_errors = 0;
	t->mark_ticks = t->tr.max_ticks;
}

/* ------------------------------------------------------------------ */
/* Following the file.                                                 */

static void walk_start(struct top *t)
{
	tt_trace_init(&t->tr, t->args.path);
	tt_scopes_init(&t->sc, &t->tr);
	tt_walk_attach(&t->sc, &top_consumer, t);
	t->mark_ticks = 0; /* the first table starts at the recording's start */
	t->started = true;
}

static void walk_stop(struct top *t)
{
	if (!t->started)
		return;
	period_reset(t);
	for (uint32_t i = 0; i < t->nr_threads; i++) {
		free(t->threads[i]->self_ticks);
		free(t->threads[i]);
	}
	t->nr_threads = 0;
	tt_scopes_fini(&t->sc);
	tt_trace_fini(&t->tr);
	tt_labels_fini(&t->labels);
	tt_labels_init(&t->labels);
	t->labelled_names = 0;
	t->started = false;
}

static void file_close(struct top *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->in_pos = 0;
	t->in_len = 0;
	t->in_offset = 0;
	t->frame_index = 0;
}

/*
 * Opens the file if it is not open. Return: 0 (open, or not there yet:
 * t->waiting_for_file), or -1 with msg (it cannot be read).
 */
static int file_open(struct top *t, char *msg, size_t msg_bytes)
{
	struct stat st;
	int fd;

	if (t->fd >= 0)
		return 0;
	fd = open(t->args.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		t->waiting_for_file = true;
		return 0;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(msg, msg_bytes, "cannot open: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(msg, msg_bytes, "not a regular file: top follows a file being written");
		return -1;
	}
	t->fd = fd;
	t->ino = st.st_ino;
	t->dev = st.st_dev;
	t->waiting_for_file = false;
	clock_gettime(CLOCK_MONOTONIC, &t->last_growth);
	walk_start(t);
	return 0;
}

/* The file at the path is another one, or ours got shorter than what was
 * read: a new recording, to start over with. */
static bool file_replaced(struct top *t)
{
	struct stat st, now;

	if (t->fd < 0 || fstat(t->fd, &st) < 0)
		return false;
	if ((uint64_t)st.st_size < t->in_offset + t->in_len) /* bytes read from the fd */
		return true;
	return stat(t->args.path, &now) == 0 && (now.st_ino != t->ino || now.st_dev != t->dev);
}

/* The largest compressed frame accepted (frames.c's bound), and what is
 * read ahead at most: memory stays bounded on a long backlog. */
static size_t max_frame_in(void)
{
	return ZSTD_compressBound(RECFMT_MAX_FRAME_BYTES) + 4096;
}

/*
 * Reads more of the file behind the bytes not walked yet (moved to the
 * front first), up to max_frame_in() of them. Return: bytes read (0: none
 * now, at the end of what is written, or the buffer is full), or -1.
 */
static ssize_t file_read(struct top *t)
{
	const size_t limit = max_frame_in() + (1u << 20);
	ssize_t n, total = 0;

	if (t->in_pos > 0) {
		memmove(t->in, t->in + t->in_pos, t->in_len - t->in_pos);
		t->in_offset += t->in_pos;
		t->in_len -= t->in_pos;
		t->in_pos = 0;
	}
	while (t->in_len < limit) {
		if (t->in_cap - t->in_len < 65536) {
			t->in_cap = t->in_cap ? t->in_cap * 2 : 1 << 20;
			t->in = xrealloc_array(t->in, t->in_cap, 1);
		}
		do
			n = read(t->fd, t->in + t->in_len, t->in_cap - t->in_len);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		t->in_len += (size_t)n;
		total += n;
	}
	return total;
}

enum step { STEP_NONE, STEP_FRAME, STEP_END, STEP_FAIL };

/*
 * Walks the next complete frame of the bytes read, if there is one: a
 * frame the file ends inside is left for later (the writer is writing it).
 * Return: STEP_FRAME (one walked), STEP_NONE (none complete yet), STEP_END
 * (the END record was read: the recording ended cleanly) or STEP_FAIL
 * (msg: the file is not a trace, or is damaged).
 */
static enum step walk_next(struct top *t, char *msg, size_t msg_bytes)
{
	struct recfmt_error err = { 0 };
	unsigned long long content;
	size_t frame_bytes, avail;
	uint8_t *p;

	if (t->tr.has_end)
		return STEP_END;
	for (;;) {
		avail = t->in_len - t->in_pos;
		if (avail == 0)
			return STEP_NONE;
		p = t->in + t->in_pos;
		frame_bytes = ZSTD_findFrameCompressedSize(p, avail);
		if (ZSTD_isError(frame_bytes)) {
			/* Cut short: the writer is still writing it (or only the
			 * magic's first bytes are there). */
			if ((ZSTD_getErrorCode(frame_bytes) == ZSTD_error_srcSize_wrong ||
			     (avail < 4 && memcmp(p, "\x28\xb5\x2f\xfd", avail) == 0)) &&
			    avail < max_frame_in())
				return STEP_NONE;
			snprintf(msg, msg_bytes, "frame %" PRIu64 " at byte %" PRIu64 ": bad frame: %s",
				 t->frame_index, t->in_offset + t->in_pos,
				 ZSTD_getErrorName(frame_bytes));
			return STEP_FAIL;
		}
		if (avail < 4 || (recfmt_load_u32le(p) & 0xfffffff0u) != ZSTD_MAGIC_SKIPPABLE_START)
			break;
		t->in_pos += frame_bytes; /* a skippable frame carries nothing for us */
	}
	content = ZSTD_getFrameContentSize(p, frame_bytes);
	if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ||
	    content > RECFMT_MAX_FRAME_BYTES)
		content = RECFMT_MAX_FRAME_BYTES;
	t->fb.buf.len = 0;
	if (recfmt_buf_reserve(&t->fb.buf, frame_bytes) < 0) {
		snprintf(msg, msg_bytes, "out of memory");
		return STEP_FAIL;
	}
	memcpy(t->fb.buf.data, p, frame_bytes);
	t->fb.buf.len = frame_bytes;
	t->fb.content_bytes = (size_t)content;
	t->fb.index = t->frame_index++;
	t->fb.offset = t->in_offset + t->in_pos;
	t->in_pos += frame_bytes;
	if (recfmt_frame_decompress(t->dctx, &t->fb, &t->out, &err) != RECFMT_OK) {
		/* As a whole walk does (pipeline.c): counted, and on to the next. */
		t->tr.nr_bad_frames++;
		tt_trace_note_err(&t->tr, &err);
		return STEP_FRAME;
	}
	if (tt_trace_walk_frame(&t->tr, t->out.data, t->out.len, t->fb.index, t->fb.offset,
				tt_scopes_block, &t->sc, msg, msg_bytes) != TT_OK)
		return STEP_FAIL;
	if (t->tr.has_end) {
		tt_scopes_finish(&t->sc);
		return STEP_END;
	}
	return STEP_FRAME;
}

/* ------------------------------------------------------------------ */
/* The table.                                                          */

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct top *t = ctx;
	const struct top_row *x = &t->rows[*(const uint32_t *)a];
	const struct top_row *y = &t->rows[*(const uint32_t *)b];

	if (x->self_ticks != y->self_ticks)
		return x->self_ticks > y->self_ticks ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(t->tr.names[*(const uint32_t *)a], t->tr.names[*(const uint32_t *)b]);
}

/* s cut to at most width display columns (tt_emit_width()), cleaned. */
static void cut(char *out, size_t out_bytes, const char *s, size_t width)
{
	char *clean = tt_emit_is_clean(s, strlen(s)) ? NULL : tt_emit_clean(s, strlen(s));
	const char *src = clean ? clean : s;
	size_t cols = 0, i = 0, o = 0;

	while (src[i] && o + 4 < out_bytes) {
		size_t len = 1;

		while ((src[i + len] & 0xc0) == 0x80)
			len++;
		if (cols + 1 > width)
			break;
		memcpy(out + o, src + i, len);
		o += len;
		i += len;
		cols++;
	}
	out[o] = '\0';
	free(clean);
}

static void fmt_rate(char *buf, size_t n, double per_s)
{
	if (per_s >= 999.95e3)
		snprintf(buf, n, "%.1fM", per_s / 1e6);
	else if (per_s >= 9999.5)
		snprintf(buf, n, "%.1fK", per_s / 1e3);
	else
		snprintf(buf, n, "%.0f", per_s);
}

/* "worker 61%, main 39%": the threads with most of the row's self time. */
static void fmt_threads(const struct top *t, uint32_t name, char *buf, size_t n)
{
	const struct top_row *r = &t->rows[name];
	uint32_t best[TOP_THREADS];
	uint32_t nr_best = 0, nr_with = 0;
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < t->nr_threads; i++) {
		const struct top_thread *tt = t->threads[i];
		uint64_t v;
		uint32_t k;

		if (name >= tt->nr || tt->self_ticks[name] == 0)
			continue;
		nr_with++;
		v = tt->self_ticks[name];
		for (k = nr_best; k > 0 && t->threads[best[k - 1]]->self_ticks[name] < v; k--)
			if (k < TOP_THREADS)
				best[k] = best[k - 1];
		if (k < TOP_THREADS) {
			best[k] = i;
			nr_best += nr_best < TOP_THREADS;
		}
	}
	for (uint32_t k = 0; k < nr_best && o + 1 < n; k++) {
		const struct top_thread *tt = t->threads[best[k]];
		char label[128];
		double share = r->self_ticks ? 100.0 * (double)tt->self_ticks[name] /
						       (double)r->self_ticks
					     : 0;

		tt_thread_label(tt->th, label, sizeof(label));
		o += (size_t)snprintf(buf + o, n - o, "%s%s %.0f%%", k ? ", " : "", label, share);
	}
	if (nr_with > nr_best && o + 1 < n)
		snprintf(buf + o, n - o, ", +%" PRIu32, nr_with - nr_best);
}

static void make_labels(struct top *t)
{
	if (t->labelled_names == t->tr.nr_names)
		return;
	tt_labels_fini(&t->labels);
	tt_labels_init(&t->labels);
	tt_labels_add_names(&t->labels, t->tr.names, t->tr.nr_names);
	tt_labels_finish(&t->labels);
	t->labelled_names = t->tr.nr_names;
}

/*
 * Writes one table into f: a status line, the header and a row per scope
 * that ended an activation in the period (at most max_rows of them, 0: all),
 * each line at most cols columns (0: no limit) and ended by eol.
 */
static void draw(struct top *t, FILE *f, unsigned cols, unsigned max_rows, const char *eol,
		 const char *state)
{
	struct tt_clock clock;
	char dur[32], span[32], p50[32], p99[32], rate[32], who[512], shown[512], line[1024];
	char dropped[64] = "", errors[64] = "";
	uint64_t span_ns, total_self = 0, at_ns, lo_ticks, nr_dropped = 0;
	size_t name_w = 5;
	unsigned rows;

	tt_trace_clock(&t->tr, &clock);
	/* The recording's time this period covered: from the latest tick
	 * read by the last table (the recording's start for the first) to
	 * the latest read now. */
	lo_ticks = t->mark_ticks > clock.start_ticks ? t->mark_ticks : clock.start_ticks;
	span_ns = t->tr.max_ticks > lo_ticks ? tt_clock_ns(&clock, t->tr.max_ticks - lo_ticks) : 0;
	for (uint32_t i = 0; i < t->tr.nr_threads; i++)
		nr_dropped += t->tr.threads[i].nr_dropped;
	if (nr_dropped)
		snprintf(dropped, sizeof(dropped), ", %" PRIu64 " scopes dropped so far", nr_dropped);
	/* Activations the engine could not time (docs/ANALYZER.md: errors). */
	if (t->period_errors)
		snprintf(errors, sizeof(errors), ", %" PRIu64 " errors", t->period_errors);
	at_ns = t->tr.max_ticks > clock.start_ticks ? tt_clock_ns(&clock, t->tr.max_ticks -
									   clock.start_ticks)
						    : 0;
	make_labels(t);
	if (t->nr_active > 1) /* active is NULL before the first activation */
		qsort_r(t->active, t->nr_active, sizeof(*t->active), cmp_rows, t);
	rows = max_rows && t->nr_active > max_rows ? max_rows : t->nr_active;
	for (uint32_t i = 0; i < t->nr_active; i++)
		total_self += t->rows[t->active[i]].self_ticks;
	for (uint32_t i = 0; i < rows; i++) {
		size_t w = tt_emit_width(tt_labels_shown(&t->labels, t->tr.names[t->active[i]]));

		name_w = w > name_w ? w : name_w;
	}
	if (cols && name_w > 40)
		name_w = 40;

	tt_emit_fmt_duration(dur, sizeof(dur), at_ns);
	tt_emit_fmt_duration(span, sizeof(span), span_ns);
	/* The state first: a narrow terminal cuts the line's end. */
	snprintf(line, sizeof(line),
		 "%s%s%s at %s: %" PRIu64 " calls in the last %s of the recording, %" PRIu32
		 " threads%s%s",
		 state, state[0] ? ": " : "", t->args.path, dur, t->period_calls, span,
		 t->tr.nr_threads, errors, dropped);
	cut(shown, sizeof(shown), line, cols ? cols : sizeof(shown));
	fprintf(f, "%s%s", shown, eol);
	snprintf(line, sizeof(line), "%-*s %10s %9s %6s %8s %8s  %s", (int)name_w, "scope",
		 "calls", "calls/s", "time%", "p50", "p99", "threads");
	cut(shown, sizeof(shown), line, cols ? cols : sizeof(shown));
	fprintf(f, "%s%s", shown, eol);
	for (uint32_t i = 0; i < rows; i++) {
		uint32_t name = t->active[i];
		const struct top_row *r = &t->rows[name];
		const char *label = tt_labels_shown(&t->labels, t->tr.names[name]);
		char cell[256];
		size_t w;

		cut(cell, sizeof(cell), label, name_w);
		w = tt_emit_width(cell);
		tt_emit_fmt_duration(p50, sizeof(p50),
				     tt_clock_ns(&clock, tt_hist_percentile(&r->hist, r->calls, 0.50,
									    r->min_ticks,
									    r->max_ticks)));
		tt_emit_fmt_duration(p99, sizeof(p99),
				     tt_clock_ns(&clock, tt_hist_percentile(&r->hist, r->calls, 0.99,
									    r->min_ticks,
									    r->max_ticks)));
		if (span_ns)
			fmt_rate(rate, sizeof(rate), (double)r->calls * 1e9 / (double)span_ns);
		else
			snprintf(rate, sizeof(rate), "-");
		fmt_threads(t, name, who, sizeof(who));
		snprintf(line, sizeof(line), "%s%*s %10" PRIu64 " %9s %5.1f%% %8s %8s  %s", cell,
			 (int)(name_w - w), "", r->calls, rate,
			 total_self ? 100.0 * (double)r->self_ticks / (double)total_self : 0.0, p50,
			 p99, who);
		cut(shown, sizeof(shown), line, cols ? cols : sizeof(shown));
		fprintf(f, "%s%s", shown, eol);
	}
	if (rows < t->nr_active)
		fprintf(f, "(%" PRIu32 " more)%s", t->nr_active - rows, eol);
}

/* ------------------------------------------------------------------ */
/* The terminal.                                                       */

static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t got_winch;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
}

struct term {
	bool on;	    /* stdout is a terminal: redraw in place */
	bool keys;	    /* stdin is a terminal, in cbreak mode */
	struct termios saved;
	struct sigaction old[5];
};

static const int term_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP };

static void write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* cbreak: keys one at a time, not echoed; signals from keys stay (^C, ^Z). */
static void term_raw(struct term *tm)
{
	struct termios raw = tm->saved;

	if (!tm->keys)
		return;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

static void term_restore(struct term *tm)
{
	if (tm->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &tm->saved);
	if (tm->on)
		write_all(STDOUT_FILENO, "\033[?25h", 6); /* the cursor back */
}

static void term_start(struct term *tm)
{
	struct sigaction sa;

	memset(tm, 0, sizeof(*tm));
	tm->on = isatty(STDOUT_FILENO);
	tm->keys = tm->on && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tm->saved) == 0;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns at once */
	for (size_t i = 0; i < sizeof(term_signals) / sizeof(term_signals[0]); i++)
		sigaction(term_signals[i], &sa, &tm->old[i]);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	term_raw(tm);
	if (tm->on)
		write_all(STDOUT_FILENO, "\033[?25l", 6); /* no cursor blinking in the table */
}

static void term_stop(struct term *tm)
{
	term_restore(tm);
	for (size_t i = 0; i < sizeof(term_signals) / sizeof(term_signals[0]); i++)
		sigaction(term_signals[i], &tm->old[i], NULL);
	signal(SIGWINCH, SIG_DFL);
}

/*
 * A signal came: ^Z stops top with the terminal as it was, and takes it
 * back on SIGCONT; any other restores the terminal and dies of the signal,
 * as the shell expects. Return: only after ^Z.
 */
static void term_signal(struct term *tm, int sig)
{
	struct sigaction sa, old;

	term_restore(tm);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, &old);
	if (tm->on && sig != SIGTSTP)
		write_all(STDOUT_FILENO, "\n", 1);
	raise(sig);
	/* Only SIGTSTP comes back here, after SIGCONT. */
	sigaction(sig, &old, NULL);
	term_raw(tm);
	if (tm->on)
		write_all(STDOUT_FILENO, "\033[?25l", 6);
}

static unsigned term_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 24;
}

static unsigned term_cols(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/*
 * Draws the period's table: on a terminal in place of the last one (from
 * the top left, each line erased to its end, the rest of the screen
 * erased; below, how to quit, except on the final table), in a pipe as a
 * plain table and a blank line. Return: 0, or -1 if stdout cannot be
 * written.
 */
static int show(struct top *t, const struct term *tm, const char *state, bool final)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = 0;

	if (!f)
		return -1;
	if (tm->on) {
		unsigned rows = term_rows();

		fputs("\033[H", f);
		draw(t, f, term_cols(), rows > 4 ? rows - 4 : 1, "\033[K\r\n", state);
		fprintf(f, "%s\033[K\r\n\033[J", final ? "" : tm->keys ? "q: quit" : "^C: quit");
	} else {
		draw(t, f, 0, 0, "\n", state);
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		rc = -1;
	else if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0)
		rc = -1;
	free(buf);
	return rc;
}

/* ------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static error_t parse_top(int key, char *arg, struct argp_state *state)
{
	struct top_args *a = state->input;

	switch (key) {
	case 'd':
		if (tt_options_parse_time(arg, &a->period_ns) || a->period_ns < 10 * NS_PER_MS ||
		    a->period_ns > 3600 * NS_PER_S)
			argp_error(state, "-d: '%s' is not a period from 10ms to 3600s (1s, 500ms)",
				   arg);
		break;
	case ARGP_KEY_ARG:
		if (a->path)
			argp_error(state, "one TRACE only");
		a->path = arg;
		break;
	case ARGP_KEY_END:
		if (!a->path)
			argp_error(state, "a TRACE to follow is needed");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option top_options[] = {
	{ "period", 'd', "DUR", 0,
	  "Redraw every DUR (default 1s; 10ms to 3600s; units ns us ms s)", 0 },
	{ 0 },
};

static const struct argp top_argp = {
	top_options, parse_top, "TRACE",
	"Follow a recording while it is being written and show, every period, per scope: "
	"calls, calls/s, share of self time, p50, p99 and the threads with most of its "
	"time, like perf top.\v"
	"Each table counts the activations that ended since the last one (a scope open "
	"across a period is counted, whole, in the period it ends in); calls/s divides by "
	"the recording's time the period covered; time% is the scope's share of the self "
	"time of all of them. The file grows by a frame every REC_FLUSH_MS (100 ms); a "
	"frame still being written is waited for, and a TRACE that does not exist yet is "
	"waited for too. top ends by itself, after a last table, when the recording ends "
	"cleanly; q (or ^C) quits. On a terminal it redraws in place; in a pipe or a file it "
	"writes one plain table per period, each ended by a blank line. If the file is "
	"replaced or cut (a new recording), top starts over. Exit 0, or 1 if TRACE is not a "
	"trace or is damaged.",
	NULL, NULL, NULL,
};

int tt_cmd_top(int argc, char **argv)
{
	struct top t;
	struct term tm;
	char msg[512] = "";
	const char *failed_state = NULL;
	uint64_t next_draw;
	bool quit = false, ended = false;
	int rc = 0;

	memset(&t, 0, sizeof(t));
	t.args.period_ns = NS_PER_S;
	argp_parse(&top_argp, argc, argv, 0, NULL, &t.args);
	tt_refuse_stdout_input((const char *const[]){ t.args.path }, 1);
	t.fd = -1;
	tt_labels_init(&t.labels);
	recfmt_buf_init(&t.fb.buf);
	recfmt_buf_init(&t.out);
	t.dctx = recfmt_dctx_new();
	if (!t.dctx) {
		rc = tt_fail_file(t.args.path, "out of memory");
		goto out_free;
	}
	if (file_open(&t, msg, sizeof(msg)) < 0) {
		rc = tt_fail_file(t.args.path, msg);
		goto out_free;
	}
	if (t.waiting_for_file && !isatty(STDOUT_FILENO))
		fprintf(stderr, "tracetool: %s: waiting for the recording to start\n", t.args.path);
	term_start(&tm);
	next_draw = now_ns() + t.args.period_ns;
	while (!quit && !ended) {
		bool behind = false; /* frames left to walk: do not wait */
		uint64_t now;
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int timeout_ms;

		if (got_signal) {
			int sig = got_signal;

			got_signal = 0;
			term_signal(&tm, sig);
			next_draw = now_ns(); /* back from ^Z: redraw now */
		}
		if (got_winch) {
			got_winch = 0;
			next_draw = now_ns();
		}
		if (t.fd < 0 && file_open(&t, msg, sizeof(msg)) < 0) {
			failed_state = msg;
			break;
		}
		if (t.fd >= 0 && file_replaced(&t)) {
			walk_stop(&t);
			file_close(&t);
			t.restarted = true;
			continue;
		}
		if (t.fd >= 0) {
			/* Walk what is complete, reading more as it is used up,
			 * and draw on time meanwhile (a long backlog: a file
			 * written before top started). */
			for (;;) {
				enum step s = walk_next(&t, msg, sizeof(msg));

				if (s == STEP_FAIL) {
					failed_state = msg;
					break;
				}
				if (s == STEP_END) {
					ended = true;
					break;
				}
				if (s == STEP_NONE) {
					ssize_t n = file_read(&t);

					if (n < 0) {
						snprintf(msg, sizeof(msg), "cannot read: %s",
							 strerror(errno));
						failed_state = msg;
						break;
					}
					if (n == 0)
						break;
					clock_gettime(CLOCK_MONOTONIC, &t.last_growth);
					continue;
				}
				if (now_ns() >= next_draw) {
					behind = true;
					break;
				}
			}
			if (failed_state)
				break;
		}
		now = now_ns();
		if (ended)
			break;
		if (now >= next_draw) {
			char state[128] = "";
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (t.waiting_for_file)
				snprintf(state, sizeof(state), "waiting for the file");
			else if (ts.tv_sec - t.last_growth.tv_sec >= 3)
				snprintf(state, sizeof(state), "no new data for %lds",
					 (long)(ts.tv_sec - t.last_growth.tv_sec));
			else if (t.restarted)
				snprintf(state, sizeof(state), "a new recording");
			if (show(&t, &tm, state, false) < 0) {
				rc = 1;
				quit = true;
				break;
			}
			t.restarted = false;
			period_reset(&t);
			next_draw += t.args.period_ns;
			if (next_draw <= now)
				next_draw = now + t.args.period_ns;
		}
		/* Keys are looked at between periods even while catching up
		 * with a backlog (then without waiting). */
		timeout_ms = (int)((next_draw - now + NS_PER_MS - 1) / NS_PER_MS);
		timeout_ms = timeout_ms > POLL_MS ? POLL_MS : timeout_ms;
		if (behind || now >= next_draw)
			timeout_ms = 0;
		if (poll(&pfd, tm.keys ? 1 : 0, timeout_ms) > 0 && (pfd.revents & POLLIN)) {
			char c;

			if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
				quit = true;
		}
	}
	if (ended) {
		char state[160];

		snprintf(state, sizeof(state), "the recording ended%s",
			 t.tr.has_crash ? " by a crash" : " cleanly");
		if (show(&t, &tm, state, true) < 0)
			rc = 1;
	}
	term_stop(&tm);
	if (tm.on && !failed_state)
		write_all(STDOUT_FILENO, "\n", 1);
	/* What was lost on the way (damaged frames, counts that disagree),
	 * as every report says it (events.h). */
	if (t.started && !failed_state) {
		tt_trace_warn(&t.tr);
		tt_trace_note_samples_only(&t.tr);
	}
	if (failed_state)
		rc = tt_fail_file(t.args.path, failed_state);
	else if (rc)
		fprintf(stderr, "tracetool: cannot write the table\n");
out_free:
	walk_stop(&t);
	file_close(&t);
	free(t.in);
	free(t.rows);
	free(t.active);
	free(t.threads);
	tt_labels_fini(&t.labels);
	recfmt_buf_fini(&t.fb.buf);
	recfmt_buf_fini(&t.out);
	recfmt_dctx_free(t.dctx);
	return rc;
}
