/* SPDX-License-Identifier: MIT */
/*
 * crash.c - crash capture (rec(3), EXIT, FORK AND CRASH; issue 17): on SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE and SIGABRT, a signal handler writes what librec holds
 * and has not written -- the writer's frame being built (events it drained
 * but has not compressed yet) and every thread's ring past what the writer
 * consumed -- as frames of raw zstd blocks (format/rawframe.c) appended
 * after the last frame the writer wrote, ending with a CRASH record
 * (FORMAT.md §3.21) and the END record -- when the signal kills: where
 * the program has a handler of its own, that runs first, and a fault it
 * handles (it returns, or leaves by siglongjmp()) is no crash ("The
 * handler and chaining" below). It owns the handlers, the crash buffers and the
 * hand-shake with the writer thread (below), and the program's action for
 * each crash signal (prog[]: what librec chains to, and what sigaction()
 * returns the program while librec's handler is installed); it does not own the file
 * (writer.c) or the rings (ring.h). docs/DESIGN.md "Crash capture"
 * explains the rules.
 *
 * Everything the handler calls is async-signal-safe: no malloc (the
 * buffers are mapped when recording starts), no lock (the crashed thread
 * may hold rec__g.lock or malloc's), no zstd; only loads, stores, memcpy,
 * and the system calls write, poll, nanosleep, clock_gettime, futex,
 * sigaction, sigprocmask, sched_yield and tgkill. Its time is bounded: at most
 * CRASH_WAIT_MS for the writer to reach a point where its buffers are
 * whole, CRASH_WRITE_MS for a stalled output to take the bytes.
 *
 * Its stack: the capture runs on a stack of librec's own (CRASH_STACK_BYTES,
 * mapped at start with a guard page below it), switched to by
 * call_on_stack(); on the stack the kernel gave the handler (the thread's
 * alternate signal stack, which a host may have sized for its own small
 * handler) run only the hand-shake and the chaining, whose need rec(3)
 * states ("Crash capture": at most 1 KiB past the kernel's signal frame).
 *
 * Annotations (TRACE_VALUE and the others) share the rings with the
 * events: a ring that holds any goes through annot.c's split, the writer's
 * own code, with a fixed scratch here (rec__annot_encode_ring()), so that
 * they become ANNOTS records and never pass for scope events.
 *
 * Hand-shake with the writer (the writer's side is writer.c's calls to
 * rec__crash_writer_enter()): crash_flag is 0 while recording normally;
 * a crash handler sets it to CRASH_BUSY, then waits until writer_busy is
 * 0. The writer sets writer_busy to 1 before each pass and between the
 * threads it drains, then reads crash_flag; it clears writer_busy before
 * it sleeps, or when it sees the flag, and then waits. Each side writes
 * its word with a seq_cst read-modify-write, then loads the other's
 * (Dekker): the handler a compare-and-swap, the writer an exchange, not a
 * seq_cst store, which qemu-user lets pass the load (ring.h, "Why an
 * exchange"). Either the handler sees the writer busy and
 * waits, or the writer sees the flag and stops before touching its
 * buffers. Once the handler sees writer_busy 0, the writer's buffers, the
 * rings' tails and the thread registry (the writer alone frees threads)
 * hold still. The writer quits when the flag says CRASH_DONE (a program
 * that survives its crash: recording stopped there), so that the exit's
 * rec_stop() never waits for it.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CRASH_WAIT_MS 1000u  /* for the writer to stop at a whole state */
#define CRASH_WRITE_MS 2000u /* for a stalled FIFO or device to take the bytes */
/*
 * The crash buffers: one for the records that come before the writer's
 * (FRAME, FILE_HEADER, SYNC, SITE, FUNC, THREAD), one for the ring's
 * events and the closing records. Each frame holds at most their sum plus
 * the writer's frame, well under RECFMT_MAX_FRAME_BYTES (the writer's
 * frame is about FRAME_TARGET_BYTES + one drained piece). More events than
 * fit go in further frames; more site and thread records than fit are
 * left out (the reader names such a site by its number).
 */
#define HEAD_BYTES (2u << 20)
#define EVENTS_BYTES (4u << 20)
/* One column of a block (encode.c keeps one of ids or deltas there): whichever, at most
 * EVENT_WORST_BYTES an event, as in the events buffer. */
#define SCRATCH_BYTES EVENTS_BYTES
#define EVENT_WORST_BYTES 15u /* 10 of delta, 5 of id (encode.c) */
#define CLOSING_BYTES 4096u	       /* room kept for DROPS, CRASH, SYNC and END */
/*
 * Rings with annotations go in slices of at most SPLIT_SLOTS slots, each
 * an EVENTS block and its ANNOTS record (annot.c's split, on the fixed
 * scratch below). A slot encodes to at most SLOT_WORST_BYTES, an event's
 * EVENT_WORST_BYTES or its share of an annotation (an INSTANT: 1 slot, at
 * most 21 bytes; encode.c), plus SLICE_FIXED_BYTES a slice (both records'
 * headers and the room recfmt_annots_append() asks for at each row).
 */
#define SPLIT_SLOTS (32u << 10)
#define SLOT_WORST_BYTES 21u
#define SLICE_FIXED_BYTES 1024u
#define SPLIT_EV_BYTES ((size_t)SPLIT_SLOTS * sizeof(struct recfmt_event))
#define SPLIT_ROW_BYTES ((size_t)SPLIT_SLOTS * sizeof(struct rec__annot_row))
#define SPLIT_TEXT_BYTES ((size_t)SPLIT_SLOTS * 8u + 64u)
/*
 * librec's crash stack: the capture's need, measured (tests/librec
 * test_crash.c, crash_stack_need_is_measured_and_fits), is under 16 KiB;
 * four times that, with a guard page below.
 */
#define CRASH_STACK_BYTES (64u << 10)
#define CRASH_BUFFER_BYTES                                                                 \
	((size_t)HEAD_BYTES + EVENTS_BYTES + SCRATCH_BYTES + SPLIT_EV_BYTES + SPLIT_ROW_BYTES +   \
	 SPLIT_TEXT_BYTES)

enum { CRASH_NONE = 0, CRASH_BUSY = 1, CRASH_DONE = 2 };

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define NR_CRASH_SIGNALS (sizeof(crash_signals) / sizeof(crash_signals[0]))

/*
 * The writer's rec__writer_crash_view(), handed in by lifecycle.c at each
 * arm (a callback, so that crash.c calls nothing in writer.c, which calls
 * crash.c). Set before any handler of ours is installed; read by them.
 */
static void (*writer_view)(struct rec__crash_view *v);

/*
 * The program's action for each crash signal: the one librec chains to and
 * the one sigaction() shows the program (rec(3), "Crash capture"). Set by
 * install_one() from the action librec replaced (at arm, and by the
 * writer's re-arm when the program went past sigaction()), by the
 * program's sigaction() and its kin while librec's handler is installed
 * (program_sigaction(), sample.c's wrappers in librectrace.so), and
 * reset by an SA_RESETHAND delivery (chain_prepare()). Each access, the
 * handler's included, holds prog[i].lock: 0, or the holder's
 * pthread_self(). Outside the handler a thread takes it with every signal
 * blocked (prog_lock()), so no handler interrupts that holder, and a
 * thread that waits for it waits for at most a copy and two sigaction()
 * system calls on another thread. The handler takes it as it is, with no
 * system call (a handled fault costs what it did): the kernel delivered
 * it with every signal blocked (librec's sa_mask); only where a handler
 * installed past sigaction() calls librec's back, or after the program's
 * handler returned, may another signal come while it holds the lock, and
 * a handler of that one that wants the lock finds this thread holding it
 * (prog_take()) and does without rather than wait for itself. kind says
 * what act is, SIG_DFL, SIG_IGN or a handler (librec's own included), for
 * the handler's looks without the lock (at entry, a few bytes of the stack
 * the kernel gave, which may be a host's small one; after the program's
 * handler returned, whether it put SIG_DFL back): stored under the lock
 * with act, loaded relaxed; a stale look is the race of a signal with a
 * sigaction() on another thread that changes its action, which the kernel
 * leaves open too (the program's own thread's change is seen).
 */
enum { PROG_DFL = 0, PROG_IGN = 1, PROG_HANDLER = 2 };
static struct {
	uintptr_t lock;
	int kind;
	struct sigaction act;
} prog[NR_CRASH_SIGNALS];
/* Set (release) once rec__crash_arm() installed the handlers; acquired by the wrappers. */
static bool armed;
/* The process armed (a vfork() child shares prog[] but not the kernel's table). */
static pid_t armed_pid;
/*
 * Mapped once: a guard page, the crash stack, then the buffers HEAD_BYTES,
 * EVENTS_BYTES, SCRATCH_BYTES and the split's arrays; crash_mem is the
 * first buffer, crash_stack_lo..crash_mem the stack.
 */
static uint8_t *crash_mem;
static uint8_t *crash_stack_lo;

/* See the hand-shake above. */
static int crash_flag;
static int writer_busy;

/* Flight mode (s17f): what the handler calls instead of the stream capture. */
static rec__crash_flight_fn flight_fn;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One "rec: ..." line on stderr, from a signal handler (no stdio). */
static void say(const char *a, const char *b)
{
	char line[256];
	size_t n = 0;

	for (const char *s = "rec: "; *s && n < sizeof(line) - 1; s++)
		line[n++] = *s;
	for (const char *s = a; s && *s && n < sizeof(line) - 1; s++)
		line[n++] = *s;
	for (const char *s = b; s && *s && n < sizeof(line) - 1; s++)
		line[n++] = *s;
	line[n++] = '\n';
	rec__log_write(line, n);
}

static const char *signal_name(int signo)
{
	switch (signo) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	default: return "a signal";
	}
}

static int signal_index(int signo)
{
	for (unsigned i = 0; i < NR_CRASH_SIGNALS; i++)
		if (crash_signals[i] == signo)
			return (int)i;
	return -1;
}

/* ---------------------------------------------------------------------
 * Writing frames from the handler.
 */

/* Where the frame bytes go: the fd, with a deadline for a stalled output. */
struct out {
	int fd;
	uint64_t deadline_ns;
	int err; /* first errno */
};

static int emit_fd(void *ctx, const uint8_t *p, size_t n)
{
	struct out *o = ctx;

	while (n) {
		ssize_t k = write(o->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = o->fd, .events = POLLOUT };
			uint64_t now = mono_ns();

			if (now >= o->deadline_ns)
				return o->err = ETIMEDOUT;
			poll(&pfd, 1, (int)((o->deadline_ns - now) / 1000000u) + 1);
			continue;
		}
		if (k <= 0)
			return o->err = k < 0 ? errno : EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * A capture in progress: the frame being built is the slices in parts
 * (the head buffer, the writer's meta and body for the first frame, then
 * the events buffer); every buffer is a recfmt_buf over crash_mem whose
 * cap is never exceeded, so that format/'s encoders never reallocate.
 */
struct capture {
	struct out out;
	struct recfmt_buf head, ev, scratch;
	struct rec__annot_split split; /* fixed: over crash_mem */
	struct recfmt_slice parts[4];
	size_t nr_parts;
	uint32_t seq; /* of the frame being built */
	uint64_t nr_events;
	bool failed;
};

static void buf_over(struct recfmt_buf *b, uint8_t *mem, size_t bytes)
{
	b->data = mem;
	b->len = 0;
	b->cap = bytes;
	b->fixed = true; /* an encoder short of room fails: it never reallocates */
}

static bool has_room(const struct recfmt_buf *b, size_t bytes)
{
	return b->cap - b->len >= bytes;
}

/* Writes the frame being built and starts the next one in the events buffer. */
static void flush_frame(struct capture *c)
{
	c->parts[c->nr_parts++] = (struct recfmt_slice){ c->ev.data, c->ev.len };
	if (!c->failed && recfmt_rawframe_emit(c->parts, c->nr_parts, emit_fd, &c->out) != 0)
		c->failed = true;
	c->nr_parts = 0;
	c->ev.len = 0;
	c->seq++;
	recfmt_encode_frame(&c->ev, c->seq);
}

/* Room for `bytes` more in the events buffer, in this frame or the next. */
static void need_room(struct capture *c, size_t bytes)
{
	if (!has_room(&c->ev, bytes + CLOSING_BYTES))
		flush_frame(c);
}

/*
 * One thread's events [from, to) of its ring, `group` slots an event (1,
 * or 1 + counters: only the events are written, not their counter
 * values), as EVENTS blocks cut to fit the buffer.
 */
static uint64_t write_ring(struct capture *c, struct rec__thread *t, uint64_t from, uint64_t to,
			   uint64_t group)
{
	struct rec__ring_view v = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */
	const struct recfmt_event *slots = v.ev;
	uint64_t mask = v.mask, n = (to - from) / group, done = 0, written = 0;

	while (done < n) {
		struct recfmt_events_encoder enc;
		uint64_t fit, k;

		/* A counted thread's samples (sample.c) take whole groups, every
		 * slot of code REC__ANNOT_CODE: left out here, as its counters are. */
		if (group > 1 && slots[(from + done * group) & mask].code == REC__ANNOT_CODE) {
			done++;
			continue;
		}
		need_room(c, 64 + 16 * EVENT_WORST_BYTES);
		fit = (c->ev.cap - c->ev.len - CLOSING_BYTES - 64) / EVENT_WORST_BYTES;
		if (fit > (SCRATCH_BYTES - 64) / EVENT_WORST_BYTES)
			fit = (SCRATCH_BYTES - 64) / EVENT_WORST_BYTES;
		k = n - done < fit ? n - done : fit;
		if (recfmt_events_begin(&enc, &c->ev, &c->scratch, t->reg.serial,
					slots[(from + done * group) & mask].ticks))
			break;
		for (uint64_t i = 0; i < k; i++) {
			/* Contiguous runs in one call when the thread has no counters. */
			uint64_t at = (from + (done + i) * group) & mask, run = 1;

			if (group == 1) {
				run = k - i < mask + 1 - at ? k - i : mask + 1 - at;
			} else if (slots[at].code == REC__ANNOT_CODE) {
				continue;
			}
			recfmt_events_append(&enc, &slots[at], run);
			written += run;
			i += run - 1;
		}
		recfmt_events_finish(&enc);
		done += k;
	}
	return written;
}

/*
 * The same for a ring that holds annotations (group 1: counted threads
 * hold none): slices through annot.c's split, each an EVENTS block and
 * its ANNOTS record next to each other in one frame, as the writer writes
 * them. A slice that cannot be encoded (cannot happen: the room is
 * reserved) is left out whole and ends the ring. Return: events written.
 */
static uint64_t write_ring_annots(struct capture *c, struct rec__thread *t, uint64_t from,
				  uint64_t to)
{
	uint64_t done = 0;

	while (from < to) {
		uint64_t n = to - from, room, written, consumed;
		size_t mark;

		need_room(c, SLICE_FIXED_BYTES + 64 * SLOT_WORST_BYTES);
		room = (c->ev.cap - c->ev.len - CLOSING_BYTES - SLICE_FIXED_BYTES) / SLOT_WORST_BYTES;
		n = n < room ? n : room;
		n = n < SPLIT_SLOTS ? n : SPLIT_SLOTS;
		mark = c->ev.len;
		if (rec__annot_encode_ring(&c->split, &c->ev, &c->scratch, t, from, n, true, 0, 0, 0,
					   &written, &consumed) != 0 ||
		    !consumed) {
			c->ev.len = mark;
			break;
		}
		done += written;
		from += consumed;
	}
	return done;
}

/* SITE and FUNC records of the sites the writer has not written. */
static void write_sites(struct capture *c, uint32_t from_id)
{
	uint32_t nr = rec__site_count(); /* acquire: pairs with site.c's release */

	for (uint32_t id = from_id + 1; id <= nr; id++) {
		const struct rec__site *s = rec__site_get(id);
		uintptr_t fn = rec__site_func_addr(s);

		if (!has_room(&c->head, fn ? 32 : 64 + 2 * RECFMT_MAX_NAME_BYTES))
			return;
		if (fn)
			recfmt_encode_func(&c->head, id, fn);
		else
			recfmt_encode_site(&c->head, id, s->line, s->name, s->file);
	}
}

/*
 * The capture proper, with the writer stopped (or never past its start),
 * so that its state and the registry hold still. Stream mode (snap NULL):
 * the frames continue the file after the writer's last one, the first
 * holding the writer's unwritten records. A snapshot (flight mode): a
 * complete file of its own from frame 0. Return: 0, or an errno.
 */
static int capture(int fd, int signo, const siginfo_t *si, struct rec__thread *self,
		   const struct rec__crash_snapshot *snap)
{
	struct capture c = { .out = { .fd = fd,
				      .deadline_ns = mono_ns() + CRASH_WRITE_MS * 1000000ull } };
	struct rec__crash_view v;
	struct recfmt_sync sync;
	struct recfmt_end end = { 0 };
	uint64_t dropped_total, filtered_total;

	__atomic_load_n(&writer_view, __ATOMIC_ACQUIRE)(&v);
	if (snap) {
		/* A file of its own: everything the writer wrote is not in it. */
		v.seq = 0;
		v.nr_sites_written = 0;
		v.nr_annot_names_written = 0;
		v.nr_events = v.nr_dropped_exited = v.nr_filtered_exited = 0;
		v.meta = v.body = NULL;
	} else if (v.failed) {
		return EIO;
	}
	buf_over(&c.head, crash_mem, HEAD_BYTES);
	buf_over(&c.ev, crash_mem + HEAD_BYTES, EVENTS_BYTES);
	buf_over(&c.scratch, crash_mem + HEAD_BYTES + EVENTS_BYTES, SCRATCH_BYTES);
	c.split.ev = (struct recfmt_event *)(void *)(crash_mem + HEAD_BYTES + EVENTS_BYTES +
						     SCRATCH_BYTES);
	c.split.ev_cap = SPLIT_SLOTS;
	c.split.row = (struct rec__annot_row *)(void *)((uint8_t *)c.split.ev + SPLIT_EV_BYTES);
	c.split.row_cap = SPLIT_SLOTS;
	c.split.text = (uint8_t *)c.split.row + SPLIT_ROW_BYTES;
	c.split.text_cap = SPLIT_TEXT_BYTES;
	c.split.fixed = true;
	c.seq = v.seq;
	rec__clock_sync(rec__g.cfg.use_tsc, &sync);

	/* The first frame: what the writer would have put before its records. */
	recfmt_encode_frame(&c.head, c.seq);
	if (c.seq == 0) {
		/* A stream file starts at the start, a snapshot at its window's. */
		const struct recfmt_sync *start = snap && snap->start ? snap->start
						  : !snap && v.snap_open  ? v.snap_start
									  : &rec__g.start_sync;
		struct recfmt_header hdr = {
			.clock = rec__g.cfg.use_tsc ? RECFMT_CLOCK_TSC : RECFMT_CLOCK_MONOTONIC,
			.pid = (uint32_t)getpid(),
			.ticks_per_second = v.ticks_per_second,
			.start_ticks = start->ticks,
			.start_mono_ns = start->mono_ns,
			.start_real_ns = start->real_ns,
			.clock_step_ticks = v.clock_step_ticks,
		};

		/* The writer had not calibrated yet: from the start to now (§3.3). */
		if (!hdr.ticks_per_second) {
			uint64_t dns = sync.mono_ns - rec__g.start_sync.mono_ns;

			hdr.ticks_per_second = 1000000000u;
			if (rec__g.cfg.use_tsc && dns)
				hdr.ticks_per_second = (uint64_t)((unsigned __int128)(sync.ticks -
										   rec__g.start_sync.ticks) *
								  1000000000u / dns);
			if (!hdr.ticks_per_second)
				hdr.ticks_per_second = 1;
		}
		recfmt_encode_header(&c.head, &hdr);
		recfmt_encode_sync(&c.head, start);
		if (rec__sample_hz()) {
			/* REC_SAMPLE: how the samples were taken (FORMAT.md §3.22), as write_lead(). */
			struct recfmt_sampling sp;

			rec__sample_describe(&sp);
			recfmt_encode_sampling(&c.head, &sp);
		}
		/* The writer's open snapshot, none of it written yet: its record, as write_lead(). */
		if (!snap && v.snap_open)
			recfmt_encode_snapshot(&c.head, v.snap_rec);
	}
	if (snap && snap->lead)
		if (has_room(&c.head, snap->lead->len))
			memcpy(c.head.data + c.head.len, snap->lead->data, snap->lead->len),
				c.head.len += snap->lead->len;
	/* Flight mode: the modules, kept ready by the writer, so that hook sites are named. */
	if (snap && v.modules && has_room(&c.head, v.modules->len + 4096))
		memcpy(c.head.data + c.head.len, v.modules->data, v.modules->len),
			c.head.len += v.modules->len;
	write_sites(&c, v.nr_sites_written);
	/* ANNOT_NAME records the writer has not written (FORMAT.md §3.17). */
	for (uint32_t id = v.nr_annot_names_written + 1, nr = rec__annot_count(); id <= nr; id++) {
		const struct rec__annot_site *a = rec__annot_get(id);

		if (!has_room(&c.head, 64 + 2 * RECFMT_MAX_NAME_BYTES) ||
		    recfmt_encode_annot_name(&c.head, id, a->kind, a->line, a->name, a->file))
			break;
	}
	/* THREAD records of threads new or renamed since the writer's last. */
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		const char *name = t->reg.named ? t->reg.name : t->wr.comm[0] ? t->wr.comm : NULL;

		if ((snap || t->reg.name_gen != t->wr.name_gen_written) &&
		    has_room(&c.head, 64 + REC__MAX_NAME_BYTES))
			recfmt_encode_thread(&c.head, t->reg.serial, t->reg.os_tid, name);
	}
	c.parts[c.nr_parts++] = (struct recfmt_slice){ c.head.data, c.head.len };
	if (v.meta)
		c.parts[c.nr_parts++] = (struct recfmt_slice){ v.meta->data, v.meta->len };
	if (v.body && v.body->len >= v.body_room) /* both set in one pass (body_room_make()) */
		c.parts[c.nr_parts++] = (struct recfmt_slice){ v.body->data + v.body_room,
							       v.body->len - v.body_room };

	/*
	 * Every ring past the writer's tail, up to its published head: a
	 * probe interrupted inside its window (this thread's, if it crashed
	 * there) has not published its slot, which is left out, so no
	 * record is torn. The producers of other threads go on meanwhile:
	 * what they publish after the head is read is not written.
	 */
	dropped_total = v.nr_dropped_exited;
	filtered_total = v.nr_filtered_exited;
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		uint64_t head = rec__ring_peek(&t->ring); /* (C) */
		uint64_t tail = t->ring.tail, group = t->reg.ctr ? 1 + (uint64_t)t->reg.ctr->nr : 1;
		uint64_t n = 0, dropped, written = snap ? 0 : t->wr.nr_events_written, na;
		bool dead = __atomic_load_n(&t->reg.dead, __ATOMIC_ACQUIRE);

		if (snap && snap->first)
			tail = snap->first(t, head, snap->arg);
		/* An open snapshot holds its window only, as the writer's drain clips it. */
		if (!snap && v.snap_open) {
			/* A thread new since the writer's last drain: hold its ring (ring.h). */
			if (tail == REC__RING_FREE)
				tail = rec__flight_hold(t, 0);
			head = tail < head ? rec__flight_window_index(t, tail, head,
								      v.snap_window_end_ticks + 1)
					   : tail;
		}
		/* After (C): the flag is stored before the first annotation is published. */
		if (rec__ring_view(&t->ring).ev && head != tail)
			n = group == 1 && __atomic_load_n(&t->ring.p.annots, __ATOMIC_RELAXED)
				    ? write_ring_annots(&c, t, tail, head)
				    : write_ring(&c, t, tail, head, group);
		c.nr_events += n;
		dropped = __atomic_load_n(&t->ring.p.nr_dropped, __ATOMIC_RELAXED) - t->wr.nr_dropped_base;
		need_room(&c, 256);
		if (v.min_ticks)
			recfmt_encode_drops_filtered(&c.ev, t->reg.serial, dropped,
						     t->wr.nr_filtered_written);
		else
			recfmt_encode_drops(&c.ev, t->reg.serial, dropped);
		/* Annotations dropped (FORMAT.md §3.19), as the writer counts them. */
		na = __atomic_load_n(&t->own.nr_annots_dropped, __ATOMIC_RELAXED) -
		     t->wr.annots_dropped_base;
		if (na != (snap ? 0 : t->wr.annots_dropped_reported))
			recfmt_encode_annot_drops(&c.ev, t->reg.serial, na);
		if (dead) {
			struct recfmt_thread_end te = {
				.thread = t->reg.serial,
				.nr_events = written + n,
				.nr_dropped = dropped,
				.has_filtered = v.min_ticks != 0,
				.nr_filtered = t->wr.nr_filtered_written,
			};

			recfmt_encode_thread_end(&c.ev, &te);
		}
		dropped_total += dropped;
		filtered_total += t->wr.nr_filtered_written;
	}

	/* FORMAT.md §3.21: CRASH, then END, the last records of the file. */
	recfmt_encode_sync(&c.ev, &sync);
	if (signo) {
		struct recfmt_crash cr = {
			.signo = (uint32_t)signo,
			.si_code = si ? si->si_code : 0,
			.thread = self ? self->reg.serial : 0,
			.ticks = sync.ticks,
		};

		if (si && signo != SIGABRT && si->si_code > 0)
			cr.addr = (uint64_t)(uintptr_t)si->si_addr;
		recfmt_encode_crash(&c.ev, &cr);
	}
	end.end_ticks = sync.ticks;
	end.nr_events = v.nr_events + c.nr_events;
	end.nr_dropped = dropped_total;
	end.has_filtered = v.min_ticks != 0;
	end.nr_filtered = filtered_total;
	recfmt_encode_end(&c.ev, &end);
	c.parts[c.nr_parts++] = (struct recfmt_slice){ c.ev.data, c.ev.len };
	if (!c.failed && recfmt_rawframe_emit(c.parts, c.nr_parts, emit_fd, &c.out) != 0)
		c.failed = true;
	if (!c.failed)
		return 0;
	return c.out.err ? c.out.err : EIO;
}

/*
 * rec__crash_write_snapshot() - flight mode's crash snapshot (see
 * rec_internal.h): only from the function set by rec__crash_set_flight(),
 * which runs with the writer stopped.
 */
int rec__crash_write_snapshot(const struct rec__crash_snapshot *snap, int signo,
			      const siginfo_t *si)
{
	if (!crash_mem)
		return -ENOMEM;
	return -capture(snap->fd, signo, si, rec__self, snap);
}

/*
 * Flight mode (REC_MODE=flight, flight.c): the crash writes the next
 * snapshot file, a complete file of its own holding the REC_WINDOW before
 * the crash (FORMAT.md §3.20, kind "crash", the signal as its reason). A
 * trigger accepted just before, whose snapshot the writer had not begun, is
 * the snapshot the crash ends instead (rec(3): "a crash while a snapshot is
 * being written ends that snapshot"): its number, kind, reason and time,
 * the REC_WINDOW before the trigger (the rings hold it: frozen since) up
 * to the crash (finding F33).
 */
static uint64_t window_first(struct rec__thread *t, uint64_t head, void *arg)
{
	return rec__flight_window_tail(t, head, *(const uint64_t *)arg);
}

static int flight_capture(int signo, const siginfo_t *si, struct rec__thread *self)
{
	struct rec__crash_view v;
	struct recfmt_sync now, start;
	struct recfmt_snapshot rec = { .kind = RECFMT_SNAPSHOT_CRASH };
	uint8_t lead_mem[256];
	struct recfmt_buf lead = { lead_mem, 0, sizeof(lead_mem), true };
	struct rec__crash_snapshot snap = { .start = &start, .lead = &lead, .first = window_first };
	uint64_t window_ns = rec__flight_window_ns(), tps, window_ticks;
	const char *path, *why;
	int err;

	__atomic_load_n(&writer_view, __ATOMIC_ACQUIRE)(&v);
	tps = v.ticks_per_second ? v.ticks_per_second : 1000000000u;
	rec__clock_sync(rec__g.cfg.use_tsc, &now);
	window_ticks = (uint64_t)((unsigned __int128)window_ns * tps / 1000000000u);
	start = rec__g.start_sync;
	if (now.ticks - start.ticks > window_ticks) {
		start.ticks = now.ticks - window_ticks;
		start.mono_ns = now.mono_ns - window_ns;
		start.real_ns = now.real_ns - window_ns;
	}
	snap.fd = rec__flight_open_pending(&rec, &path, &why);
	if (snap.fd != -ENOENT) {
		uint64_t from = rec.trigger_ticks - window_ticks;

		/* The trigger's window: from REC_WINDOW before it, not before the recording. */
		start = rec__g.start_sync;
		if (rec.trigger_ticks > window_ticks && from > start.ticks && now.ticks > from) {
			uint64_t back = (uint64_t)((unsigned __int128)(now.ticks - from) * 1000000000u / tps);

			start.ticks = from;
			start.mono_ns = now.mono_ns - back;
			start.real_ns = now.real_ns - back;
		}
	} else {
		snap.fd = rec__flight_open_next(&rec.number, &path, &why);
		rec.trigger_ticks = now.ticks;
		rec.reason = signal_name(signo);
		rec.reason_bytes = (uint32_t)strlen(rec.reason);
	}
	if (snap.fd < 0 && why) {
		/* Refused without blocking (a FIFO, a symbolic link): the one line. */
		rec__log_safe(signal_name(signo), ": cannot write snapshot ", path, ": ", why,
			      "; the crash is not recorded", NULL);
		return 0;
	}
	if (snap.fd < 0)
		return -snap.fd;
	rec.window_end_ticks = now.ticks;
	rec.window_start_ticks = start.ticks;
	lead.len = recfmt_store_snapshot(lead_mem, sizeof(lead_mem), &rec);
	snap.arg = &start.ticks;
	err = capture(snap.fd, signo, si, self, &snap);
	close(snap.fd);
	return err;
}

/*
 * Stops the writer at a whole state (the hand-shake above); bounded.
 * Return: true once it is stopped, false if it did not stop in time.
 */
static bool stop_writer(void)
{
	uint64_t deadline = mono_ns() + CRASH_WAIT_MS * 1000000ull;

	while (__atomic_load_n(&writer_busy, __ATOMIC_SEQ_CST)) {
		struct timespec nap = { 0, 200000 };

		if (mono_ns() >= deadline)
			return false;
		nanosleep(&nap, NULL);
	}
	return true;
}

/*
 * call_on_stack() - calls fn(arg) with the stack pointer at top (16-byte
 * aligned), then comes back to the caller's stack: the crash handler's
 * capture runs on librec's crash stack, not on the one the kernel gave
 * the handler. The frame it leaves on the caller's stack (the saved frame
 * pointer and return address) is all the switch costs there; its CFI lets
 * a debugger unwind from the crash stack to the handler.
 */
void rec__crash_call_on_stack(void (*fn)(void *), void *arg, void *top) REC__HIDDEN;
#if defined(__x86_64__)
__asm__(".text\n"
	".globl rec__crash_call_on_stack\n"
	".hidden rec__crash_call_on_stack\n"
	".type rec__crash_call_on_stack, @function\n"
	".p2align 4\n"
	"rec__crash_call_on_stack:\n"
	".cfi_startproc\n"
#if defined(__CET__)
	"endbr64\n"
#endif
	"pushq %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"movq %rdx, %rsp\n"
	"movq %rdi, %rax\n"
	"movq %rsi, %rdi\n"
	"callq *%rax\n"
	"movq %rbp, %rsp\n"
	"popq %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size rec__crash_call_on_stack, .-rec__crash_call_on_stack\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl rec__crash_call_on_stack\n"
	".hidden rec__crash_call_on_stack\n"
	".type rec__crash_call_on_stack, %function\n"
	".p2align 2\n"
	"rec__crash_call_on_stack:\n"
	".cfi_startproc\n"
	"hint #34\n" /* bti c: a no-op where BTI is absent or off */
	"stp x29, x30, [sp, #-16]!\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset x29, -16\n"
	".cfi_offset x30, -8\n"
	"mov x29, sp\n"
	".cfi_def_cfa_register x29\n"
	"mov sp, x2\n"
	"mov x3, x0\n"
	"mov x0, x1\n"
	"blr x3\n"
	"mov sp, x29\n"
	".cfi_def_cfa_register sp\n"
	"ldp x29, x30, [sp], #16\n"
	".cfi_def_cfa_offset 0\n"
	".cfi_restore x29\n"
	".cfi_restore x30\n"
	"ret\n"
	".cfi_endproc\n"
	".size rec__crash_call_on_stack, .-rec__crash_call_on_stack\n");
#else
/* Elsewhere the capture runs on the handler's stack (rec(3) says so). */
void rec__crash_call_on_stack(void (*fn)(void *), void *arg, void *top)
{
	(void)top;
	fn(arg);
}
#endif

/* rec__crash_stack_bounds() - librec's crash stack [*lo, *hi) (tests measure its use). */
void rec__crash_stack_bounds(uint8_t **lo, uint8_t **hi)
{
	*lo = crash_stack_lo;
	*hi = crash_mem;
}

/*
 * One signal's handling: the signal, and, once chain_prepare() found it,
 * the program's handler to call (h or hi).
 */
struct crash_work {
	int signo;
	siginfo_t *si;
	void *uc;
	struct rec__thread *self;
	void (*h)(int);
	void (*hi)(int, siginfo_t *, void *);
	bool nodefer; /* the program's handler has SA_NODEFER */
	bool die;     /* after the capture, the default action (capture_first()) */
};

static void capture_file(const struct crash_work *w)
{
	struct rec__crash_view v;
	int err;

	if (flight_fn) {
		flight_fn(w->signo, w->si);
		return;
	}
	__atomic_load_n(&writer_view, __ATOMIC_ACQUIRE)(&v);
	/*
	 * Flight mode: the crash writes the next snapshot; but a crash while
	 * a snapshot is open (REC_AFTER) ends that one instead, its events up
	 * to the crash, as a stream file ends: it holds the window before the
	 * crash already.
	 */
	if (rec__flight_window_ns() && !(v.snap_open && rec__g.fd >= 0))
		err = flight_capture(w->signo, w->si, w->self);
	else if (!rec__fd_is_ours(rec__g.fd, &rec__g.fd_id))
		err = EBADF; /* the host closed it; its number may name a file of the host's */
	else
		err = capture(rec__g.fd, w->signo, w->si, w->self, NULL);
	if (err)
		say(signal_name(w->signo), err == ETIMEDOUT
						   ? ": the trace output took nothing for 2 s; "
						     "events not written are lost"
						   : ": could not write the trace; events not written are lost");
}

/* After the capture: a writer waiting for it quits (see the hand-shake). */
static void release_writer(void)
{
	__atomic_store_n(&crash_flag, CRASH_DONE, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &crash_flag, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/*
 * What the first crashing thread does, on the crash stack: stop the
 * writer, turn recording off, capture, let the writer go.
 */
static void capture_once(const struct crash_work *w)
{
	if (__atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE) != REC__RUNNING ||
	    (rec__g.fd < 0 && !rec__flight_window_ns()) ||
	    (rec__g.writer_running && pthread_equal(pthread_self(), rec__g.writer))) {
		/* Nothing recording, or the writer itself crashed: its state may be torn. */
		release_writer();
		return;
	}
	if (!stop_writer() || rec__g.stop_requested) {
		if (rec__g.stop_requested) {
			/* Exit's rec_stop() is finishing the file: it has an END or never will. */
			release_writer();
			return;
		}
		say(signal_name(w->signo),
		    ": the writer did not stop within 1 s; events not written are lost");
		release_writer();
		return;
	}
	/* The writer is stopped: its registry walk is ours now. Recording
	 * stops on every thread: probes in the handlers that follow, and
	 * those of a program that survives its crash, record nothing. */
	__atomic_store_n(&rec__g.state, REC__STOPPED, __ATOMIC_RELEASE);
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next)
		__atomic_store_n(&t->ring.p.off, 1, __ATOMIC_RELAXED);
	capture_file(w);
	release_writer();
}

/* ---------------------------------------------------------------------
 * The handler and chaining.
 *
 * A fault is a crash only if it kills (README "After a crash"; rec(3),
 * "Crash"), as a crash reporter that chains to the program's handler
 * judges it: where the program has a handler of its own for the signal,
 * librec calls it first, as the kernel would have, and captures nothing
 * before. The capture is taken when the signal is about to kill:
 *   - the program has no handler for it (SIG_DFL, SIG_IGN for a fault,
 *     or its SA_RESETHAND handler ran already): capture, then the default
 *     action (restored, and the signal sent again);
 *   - the program's handler returns after it made the action SIG_DFL
 *     (or SIG_IGN) again, with the signal pending (it re-raised it) or
 *     for a fault, which comes back when the instruction runs again:
 *     capture, then return into the kernel's kill;
 *   - the program's handler calls librec's back (the action it replaced
 *     and chains to): capture, then the default action;
 *   - the program's handler raises another of the signals (abort()):
 *     that one is handled by the same rules.
 *   - the program's handler ends the process with _exit() or a
 *     sanitizer's report: captured first (below, "The program's handler
 *     ends the process itself"; a raw exit_group is not seen).
 * A handler that returns otherwise, or leaves by siglongjmp(), has
 * handled the fault: recording goes on untouched.
 */

static void on_crash(int signo, siginfo_t *si, void *uc);

/*
 * While the program's handler runs on this thread: the frame of
 * call_program_handler() that called it, and the siginfo and context
 * that handler was given. A handler that calls librec's back runs below
 * that frame, on the same stack, and hands on what it was given (or, as
 * a plain handler calling a SA_SIGINFO one, nothing valid: then its own
 * mask tells, not librec's, which blocks every signal). A handler that
 * left by siglongjmp() leaves them set: the next signal is delivered at
 * or above that frame (the top of the alternate stack again, or where the
 * thread had returned to), or, below it, with a siginfo of its own and
 * librec's mask: a new delivery either way.
 */
static __thread uintptr_t chain_frame __attribute__((tls_model("initial-exec")));
static __thread siginfo_t *chain_si __attribute__((tls_model("initial-exec")));
static __thread void *chain_uc __attribute__((tls_model("initial-exec")));
/* The same call's return address (saved above chain_frame), signal and SA_NODEFER. */
static __thread uintptr_t chain_ret __attribute__((tls_model("initial-exec")));
static __thread int chain_signo __attribute__((tls_model("initial-exec")));
static __thread bool chain_nodefer __attribute__((tls_model("initial-exec")));

static bool is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_crash;
}

/* The handler field in force: sa_sigaction and sa_handler share storage. */
static void (*handler_of(const struct sigaction *sa))(int)
{
	return (sa->sa_flags & SA_SIGINFO) ? (void (*)(int))(void *)sa->sa_sigaction
					   : sa->sa_handler;
}

/*
 * The kernel's struct sigaction, 32 bytes on x86-64 and AArch64. glibc's
 * sigaction() keeps two struct kernel_sigaction (with 128-byte masks) on
 * the stack: the handler's stack calls the system call itself.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#define KERNEL_SIGACTION 1
struct kernel_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};
#endif

#define CRASH_STR2(x) #x
#define CRASH_STR(x) CRASH_STR2(x)

#if defined(REC_GLIBC_HOOK_VERSION)
/* libc's sigaction(), past librectrace.so's own (sample.c's wrapper, which calls us). */
static struct rec__next libc_sigaction = { "sigaction", CRASH_STR(REC_GLIBC_HOOK_VERSION), NULL };
#endif

/*
 * The action in force in the kernel, as libc's sigaction() sets and reads
 * it: never through librectrace.so's copy (a reference to sigaction from
 * inside librec binds to it too), which would come back here.
 */
static int kernel_action(int signo, const struct sigaction *act, struct sigaction *old)
{
#if defined(REC_GLIBC_HOOK_VERSION)
	int (*f)(int, const struct sigaction *, struct sigaction *) =
		rec__next_fn(&libc_sigaction);

	return f ? f(signo, act, old) : -1;
#else
	return sigaction(signo, act, old);
#endif
}

/* The signal mask prog_lock() replaced, for prog_unlock(). */
struct held {
#ifdef KERNEL_SIGACTION
	uint64_t mask;
#else
	sigset_t mask;
#endif
};

/*
 * Takes prog[i].lock for this thread, waiting while another thread holds
 * it. Return: false, not taken, if this thread holds it already (a handler
 * that interrupted the holder: waiting would never end).
 */
static bool prog_take(unsigned i)
{
	uintptr_t self = (uintptr_t)pthread_self();

	for (;;) {
		uintptr_t holder = 0;

		/* Acquire: pairs with prog_give()'s release (the last holder's writes). */
		if (__atomic_compare_exchange_n(&prog[i].lock, &holder, self, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
		if (holder == self)
			return false;
		syscall(SYS_sched_yield);
	}
}

static void prog_give(unsigned i)
{
	__atomic_store_n(&prog[i].lock, 0, __ATOMIC_RELEASE);
}

/*
 * Takes prog[i].lock with every signal blocked on this thread (saved in
 * *was), outside librec's handler. Async-signal-safe. Return: false, not
 * taken and the mask as it was, if this thread holds it already.
 */
static bool prog_lock(unsigned i, struct held *was)
{
#ifdef KERNEL_SIGACTION
	uint64_t all = ~0ull;

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &was->mask, sizeof(all));
#else
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &was->mask);
#endif
	if (prog_take(i))
		return true;
#ifdef KERNEL_SIGACTION
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &was->mask, NULL, sizeof(was->mask));
#else
	pthread_sigmask(SIG_SETMASK, &was->mask, NULL);
#endif
	return false;
}

static void prog_unlock(unsigned i, const struct held *was)
{
	prog_give(i);
#ifdef KERNEL_SIGACTION
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &was->mask, NULL, sizeof(was->mask));
#else
	pthread_sigmask(SIG_SETMASK, &was->mask, NULL);
#endif
}

/* prog[i]'s action, with the lock held. */
static void prog_set(unsigned i, const struct sigaction *act)
{
	void (*h)(int) = handler_of(act);

	prog[i].act = *act;
	__atomic_store_n(&prog[i].kind,
			 h == SIG_DFL ? PROG_DFL : h == SIG_IGN ? PROG_IGN : PROG_HANDLER,
			 __ATOMIC_RELAXED);
}

/*
 * The program's action for a signal as the handler uses it: a copy of
 * prog[]'s, small (the handler runs on the stack the kernel gave, which a
 * host may have sized for its own handler alone).
 */
struct chained {
	void (*h)(int); /* handler_of(): SIG_DFL, SIG_IGN or the program's */
	int flags;
	uint64_t mask; /* sa_mask: bit s - 1 for signal s, 1 <= s <= 64 */
};

/*
 * The program's action for signo now, under its lock, from librec's
 * handler (no system call). SIG_DFL where this thread holds the lock
 * already (see prog[]): then the signal is taken for a crash.
 */
static void chained_get(int signo, struct chained *c)
{
	int i = signal_index(signo);

	c->h = SIG_DFL;
	c->flags = 0;
	c->mask = 0;
	if (i < 0 || !prog_take((unsigned)i))
		return;
	c->h = handler_of(&prog[i].act);
	c->flags = prog[i].act.sa_flags;
#ifdef KERNEL_SIGACTION
	/* glibc's sigset_t begins with the kernel's 64-bit mask (signal s: bit s - 1). */
	memcpy(&c->mask, &prog[i].act.sa_mask, sizeof(c->mask));
#else
	for (int s = 1; s <= 64 && s < NSIG; s++)
		if (sigismember(&prog[i].act.sa_mask, s) == 1)
			c->mask |= 1ull << (s - 1);
#endif
	prog_give((unsigned)i);
}

/*
 * SA_RESETHAND: the delivery of c's handler makes the program's action
 * SIG_DFL, as the kernel does at delivery -- unless the program set
 * another one meanwhile.
 */
static void chained_reset(int signo, const struct chained *c)
{
	int i = signal_index(signo);

	if (i < 0 || !prog_take((unsigned)i))
		return;
	if (handler_of(&prog[i].act) == c->h && prog[i].act.sa_flags == c->flags) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		prog_set((unsigned)i, &dfl);
	}
	prog_give((unsigned)i);
}

/* A signal the program ignores, sent by a process: no crash (a fault is never ignored). */
static bool ignored(const struct chained *c, const siginfo_t *si)
{
	return c->h == SIG_IGN && si && si->si_code <= 0;
}

/* The default action back for signo. */
static void set_default(int signo)
{
#ifdef KERNEL_SIGACTION
	static const struct kernel_sigaction dfl; /* SIG_DFL, no flags, empty mask */

	syscall(SYS_rt_sigaction, signo, &dfl, NULL, sizeof(dfl.mask));
#else
	static const struct sigaction dfl; /* SIG_DFL, no flags, empty mask */

	kernel_action(signo, &dfl, NULL);
#endif
}

/* Every signal blocked on this thread, for the capture (the kernel restores the mask). */
static void block_all(void)
{
#ifdef KERNEL_SIGACTION
	uint64_t all = ~0ull;

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof(all));
#else
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
#endif
}

/* Whether every ordinary signal is blocked: librec's handler's mask, as the kernel set it. */
static __attribute__((noinline)) bool all_blocked(void)
{
	sigset_t cur;

	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0)
		return true;
	for (int s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP && sigismember(&cur, s) != 1)
			return false;
	return true;
}

/* The program's action for signo as kind says it: SIG_DFL, SIG_IGN, or any other for a handler. */
static void (*program_kind(int signo))(int)
{
	int i = signal_index(signo), kind;

	if (i < 0)
		return SIG_DFL;
	kind = __atomic_load_n(&prog[i].kind, __ATOMIC_RELAXED);
	return kind == PROG_DFL ? SIG_DFL : kind == PROG_IGN ? SIG_IGN : SIG_ERR;
}

/*
 * After the program's handler returned: whether the signal kills now. It
 * does if the program's action is no longer its handler but SIG_DFL or
 * SIG_IGN (it put it back: through sigaction(), which changed prog[]'s
 * and left librec's in the kernel, or past it, which replaced librec's)
 * and the signal is pending (re-raised while blocked in the handler) or
 * is a fault (the instruction runs again and faults again; the kernel
 * does not ignore a fault). Otherwise what comes next (a fault again, a
 * re-raise) comes back to on_crash(), which decides then.
 */
static bool fatal_after(int signo, const siginfo_t *si)
{
#ifdef KERNEL_SIGACTION
	struct kernel_sigaction cur;
	uint64_t pending = 0;
	void (*h)(int);

	if (syscall(SYS_rt_sigaction, signo, NULL, &cur, sizeof(cur.mask)) != 0)
		return false;
	h = (void (*)(int))cur.handler;
	if (h == (void (*)(int))(void *)on_crash)
		h = program_kind(signo);
	if (h != SIG_DFL && h != SIG_IGN)
		return false;
	if (si && si->si_code > 0)
		return true;
	syscall(SYS_rt_sigpending, &pending, sizeof(pending));
	return h == SIG_DFL && (pending >> (signo - 1) & 1);
#else
	struct sigaction cur;
	sigset_t pending;
	void (*h)(int);

	if (kernel_action(signo, NULL, &cur) != 0)
		return false;
	h = handler_of(&cur);
	if (is_ours(&cur))
		h = program_kind(signo);
	if (h != SIG_DFL && h != SIG_IGN)
		return false;
	if (si && si->si_code > 0)
		return true;
	return h == SIG_DFL && sigpending(&pending) == 0 && sigismember(&pending, signo) == 1;
#endif
}

/* The default action back, and the signal sent again (see capture_first()). */
static void die_by(int signo)
{
	set_default(signo);
	/* tgkill, not raise(): raise() blocks every signal around it with a
	 * sigset_t on the stack, which need not be large. */
	syscall(SYS_tgkill, getpid(), gettid(), signo);
}

/*
 * The capturing thread's handling, in static storage: only one thread gets
 * past crash_flag, and a later capture begins only once a new recording
 * was armed (so never while this one is in use). Less on the handler's
 * stack.
 */
static struct crash_work capturing;

/* The capturing thread's part, on the crash stack. */
static void capture_on_stack(void *arg)
{
	struct crash_work *w = arg;
	uint8_t in_librec = rec__in_librec;

	/* librec's own probes must not record from here on (probe.c). */
	rec__in_librec = 1;
	capture_once(w);
	rec__in_librec = in_librec;
	if (w->die)
		die_by(w->signo);
}

/* A thread that comes during another's capture waits for it (bounded). */
static __attribute__((noinline)) void wait_for_capture(void)
{
	uint64_t deadline = mono_ns() + (CRASH_WAIT_MS + CRASH_WRITE_MS) * 1000000ull;

	while (__atomic_load_n(&crash_flag, __ATOMIC_SEQ_CST) == CRASH_BUSY && mono_ns() < deadline) {
		struct timespec nap = { 0, 1000000 };

		nanosleep(&nap, NULL);
	}
}

/*
 * The capture, by the first thread to get here (crash_flag), on librec's
 * crash stack; a thread that comes meanwhile waits for it, so that the
 * process does not die before the file is written. One capture a
 * recording: later ones find it done and go on at once. With die, then
 * the default action back and the signal sent again: pending until this
 * handler returns (every signal is blocked in it), then fatal, so that
 * the process dies by the signal and its exit status and core dump say so.
 */
static inline __attribute__((always_inline)) void capture_first(int signo, siginfo_t *si,
								 void *uc, bool die)
{
	/* A full barrier, as seq_cst; no local whose address is taken (a sanitizer's redzones). */
	if (__sync_bool_compare_and_swap(&crash_flag, CRASH_NONE, CRASH_BUSY)) {
		capturing = (struct crash_work){ .signo = signo, .si = si, .uc = uc,
						 .self = rec__self, .die = die };
		rec__crash_call_on_stack(capture_on_stack, &capturing, crash_mem);
		return;
	}
	wait_for_capture();
	if (die)
		die_by(signo);
}

/* Whether c, the program's action, is a handler of its own. */
static bool has_handler(const struct chained *c)
{
	return c->h != SIG_DFL && c->h != SIG_IGN && c->h != (void (*)(int))(void *)on_crash;
}

/*
 * Prepares the call of the program's handler c for w->signo, if it is
 * one: sets the mask the kernel would have set for that handler (the
 * interrupted mask, its sa_mask, the signal unless SA_NODEFER), honours
 * SA_RESETHAND, and hands the handler over in w->h or w->hi.
 * Return: false if the program has no handler (SIG_DFL, SIG_IGN).
 */
static bool chain_prepare(struct crash_work *w, const struct chained *c)
{
	int signo = w->signo;
	sigset_t mask;

	if (!has_handler(c))
		return false;
	mask = ((ucontext_t *)w->uc)->uc_sigmask;
#ifdef KERNEL_SIGACTION
	{
		uint64_t word;

		memcpy(&word, &mask, sizeof(word)); /* see chained_get() */
		word |= c->mask;
		memcpy(&mask, &word, sizeof(word));
	}
#else
	for (int s = 1; s <= 64 && s < NSIG; s++)
		if (c->mask >> (s - 1) & 1)
			sigaddset(&mask, s);
#endif
	if (c->flags & SA_NODEFER)
		sigdelset(&mask, signo);
	else
		sigaddset(&mask, signo);
	w->nodefer = c->flags & SA_NODEFER;
	if (c->flags & SA_SIGINFO)
		w->hi = (void (*)(int, siginfo_t *, void *))(void *)c->h;
	else
		w->h = c->h;
	if (c->flags & SA_RESETHAND)
		chained_reset(signo, c);
	/* The kernel restores the interrupted mask when the handler returns. */
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	return true;
}

/*
 * The return address a frame keeps next to its caller's frame pointer
 * (x86-64 and AArch64 both keep them at the frame address), as stored:
 * signed where AArch64's pointer authentication signs it, so that a
 * comparison of two reads needs no stripping. Not for ASan: it may read a
 * word of another function's frame (in_program_handler()).
 */
static __attribute__((no_sanitize("address"))) uintptr_t saved_return(uintptr_t frame)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return *(const uintptr_t *)(frame + sizeof(void *));
#else
	(void)frame;
	return 0;
#endif
}

/* Calls the program's handler that chain_prepare() handed over, marking the chain (above). */
static __attribute__((noinline)) void call_program_handler(const struct crash_work *w)
{
	uintptr_t outer_frame = chain_frame, outer_ret = chain_ret;
	siginfo_t *outer_si = chain_si;
	void *outer_uc = chain_uc;
	int outer_signo = chain_signo;
	bool outer_nodefer = chain_nodefer;

	chain_frame = (uintptr_t)__builtin_frame_address(0);
	chain_ret = saved_return(chain_frame);
	chain_si = w->si;
	chain_uc = w->uc;
	chain_signo = w->signo;
	chain_nodefer = w->nodefer;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (w->hi)
		w->hi(w->signo, w->si, w->uc);
	else
		w->h(w->signo);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	chain_frame = outer_frame;
	chain_ret = outer_ret;
	chain_si = outer_si;
	chain_uc = outer_uc;
	chain_signo = outer_signo;
	chain_nodefer = outer_nodefer;
}

/*
 * The program's handler c first, then the capture if the signal now kills
 * (fatal_after()); then the default action in the kernel, where librec's
 * stayed (the program put SIG_DFL back through sigaction()), so that the
 * kernel's kill follows the return. Return: false if c is no handler.
 */
static __attribute__((noinline)) bool chain(int signo, siginfo_t *si, void *uc,
					    const struct chained *c)
{
	struct crash_work w = { .signo = signo, .si = si, .uc = uc };

	if (!chain_prepare(&w, c))
		return false;
	call_program_handler(&w);
	if (fatal_after(signo, si)) {
		block_all();
		capture_first(signo, si, uc, false);
		set_default(signo);
	}
	return true;
}

/*
 * The program's action for signo, not SIG_DFL as it seemed: ignored, or
 * its handler called first (chain()). Return: true if that was all (no
 * capture now). Its own frame, with the action's copy, only then.
 */
static __attribute__((noinline)) bool chain_if_handled(int signo, siginfo_t *si, void *uc)
{
	struct chained c;

	chained_get(signo, &c);
	return ignored(&c, si) || (has_handler(&c) && chain(signo, si, uc, &c));
}

/*
 * The handler. Its own frame is a few saved registers: on the stack the
 * kernel gave (a host's small alternate stack, may be) run only the
 * chaining and the hand-shake; the capture runs on librec's crash stack
 * (rec(3) states the need). With no action of the program's (SIG_DFL),
 * nothing more than before: prog[]'s kind, read without the lock.
 */
static void on_crash(int signo, siginfo_t *si, void *uc)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	int saved_errno = errno, i = signal_index(signo);

	/* A fault of a sample's stack walk (F37): back to it, not a crash. */
	if (rec__sample_walk_fault(signo, si))
		return; /* not reached */
	if (chain_frame && here >= chain_frame)
		chain_frame = 0; /* the program's handler left by a jump */
	if (chain_frame && (si == chain_si || !all_blocked())) {
		/* Called back by the program's handler: the crash, with what it was given. */
		si = chain_si;
		uc = chain_uc;
	} else if (i >= 0 && __atomic_load_n(&prog[i].kind, __ATOMIC_RELAXED) != PROG_DFL &&
		   chain_if_handled(signo, si, uc)) {
		errno = saved_errno;
		return;
	}
	capture_first(signo, si, uc, true);
	errno = saved_errno;
}

/* ---------------------------------------------------------------------
 * The program's handler ends the process itself (README "After a crash"):
 * librectrace.so and librectrace.a stand before _exit() and _Exit()
 * (exit.c), and a sanitizer's report calls librec back
 * (__sanitizer_set_death_callback()); called from inside the program's
 * handler that librec called, that is the crash: captured, then the
 * process ends as the program asked. An _exit() from ordinary code ends
 * the recording as exit() does (rec(3), "Exit"; exit.c, lifecycle.c).
 */

/*
 * Whether this thread runs inside the program's handler that librec
 * called (call_program_handler()), not after a jump out of it: below that
 * frame, which still holds its return address into chain(), and with the
 * signal still blocked as the call set it (unless SA_NODEFER). A jump out
 * leaves chain_frame set; the frames the thread builds again over that
 * place overwrite the return address, and siglongjmp() restores a mask
 * without the signal.
 */
static bool in_program_handler(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	sigset_t cur;

	if (!chain_frame || here >= chain_frame || saved_return(chain_frame) != chain_ret)
		return false;
	return chain_nodefer ||
	       (pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, chain_signo) == 1);
#else
	return false;
#endif
}

/*
 * rec__crash_maybe_in_handler() - whether this thread may be running a
 * signal handler that librec did not call (rec(3), "Exit"). librec cannot
 * know for sure: nothing in the thread's state says so. But while a
 * handler runs the kernel blocks its signal (and the action's sa_mask),
 * unless SA_NODEFER, and a handler given an alternate stack runs on it.
 * So: any signal blocked, the alternate stack in use, or a handler
 * installed with SA_NODEFER and an empty mask (then nothing would show it)
 * -- all taken for a handler. A thread that blocks signals in its ordinary
 * code (signalfd(), a worker that leaves them to another thread) is taken
 * for one too: its _exit() stays as before, a kill.
 */
bool rec__crash_maybe_in_handler(void)
{
	sigset_t cur;
	stack_t ss;

	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0 || !sigisemptyset(&cur))
		return true;
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
		return true;
	for (int signo = 1; signo < NSIG; signo++) {
		struct sigaction act;

		if (signo == SIGKILL || signo == SIGSTOP || kernel_action(signo, NULL, &act) != 0)
			continue; /* glibc's own (SIGCANCEL, SIGSETXID) are refused: never a program's */
		if (handler_of(&act) != SIG_DFL && handler_of(&act) != SIG_IGN &&
		    (act.sa_flags & SA_NODEFER) && sigisemptyset(&act.sa_mask))
			return true;
	}
	return false;
}

/* The crash the program's handler ends the process in, captured (once). */
static void capture_before_the_end(void)
{
	if (!in_program_handler())
		return;
	block_all();
	capture_first(chain_signo, chain_si, chain_uc, false);
}

bool rec__crash_before_exit(void)
{
	if (!in_program_handler())
		return false;
	capture_before_the_end();
	return true;
}

/* A sanitizer's runtime (ASan's report, its SEGV handler's included): weak, so absent elsewhere. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

#if defined(REC_GLIBC_HOOK_VERSION)
static int program_sigaction(int signo, const struct sigaction *act, struct sigaction *old);

/* sigaction() looked up at load (never in a signal handler). */
__attribute__((constructor)) static void crash_load(void)
{
	rec__next_fn(&libc_sigaction);
	rec__sample_take_crash(program_sigaction, crash_signals, NR_CRASH_SIGNALS);
}
#endif

/* ---------------------------------------------------------------------
 * Arming, fork, re-arm, flight mode.
 */

/* lifecycle.c's fork_child(), in the child after fork(). */
void rec__crash_fork_child(void)
{
	/* Only the forking thread exists: no writer pass, no capture in progress. */
	crash_flag = CRASH_NONE;
	writer_busy = 0;
	chain_frame = 0;
	chain_ret = 0;
	/*
	 * A thread of the parent that held a lock (inside sigaction()) is
	 * not here to release it. Its copy may be half made: a race with the
	 * program's own sigaction() on another thread at the fork, which
	 * leaves that action as undefined as the program's own call did.
	 */
	for (unsigned i = 0; i < NR_CRASH_SIGNALS; i++)
		__atomic_store_n(&prog[i].lock, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&armed_pid, getpid(), __ATOMIC_RELAXED);
}

/*
 * The handler's first call of a libc function through a lazily bound PLT
 * entry (the host's, for librec.a; librec.so's own) would run the dynamic
 * linker's resolver on the handler's stack, which saves every register
 * with XSAVE: 2.8 KB more on a machine with AVX-512 (measured: the
 * alternate-stack test of test_crash.c). So each function the handler
 * calls on that stack, before it switches to the crash stack and while it
 * chains, is called once here, harmlessly, and its entry is bound.
 */
static void prebind(void)
{
	struct timespec nap = { 0, 0 };
	struct sigaction sa;
	sigset_t set;
	int saved_errno = errno;

	clock_gettime(CLOCK_MONOTONIC, &nap);
	nap.tv_sec = nap.tv_nsec = 0;
	nanosleep(&nap, NULL);
	(void)getpid();
	(void)gettid();
	(void)pthread_equal(pthread_self(), pthread_self());
	syscall(SYS_gettid);
	syscall(SYS_sched_yield);
	kernel_action(SIGSEGV, NULL, &sa);
	pthread_sigmask(SIG_BLOCK, NULL, &set);
	if (sigismember(&set, SIGSEGV) == 1)
		sigaddset(&set, SIGSEGV);
	else
		sigdelset(&set, SIGSEGV);
	memset(&sa, 0, sizeof(sa));
	errno = saved_errno;
}

/* librec's action for the crash signals. */
static void our_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = on_crash;
	/* On the thread's alternate stack if it has one (a stack overflow). */
	sa->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	/* Other signals wait while the file is written. */
	sigfillset(&sa->sa_mask);
}

/* librec's handler for crash_signals[i], keeping the action it replaces as the program's. */
static void install_one(unsigned i)
{
	struct sigaction cur, ours;
	struct held held;

	our_action(&ours);
	if (!prog_lock(i, &held))
		return; /* a handler that interrupted this thread's own access: the re-arm's later */
	if (kernel_action(crash_signals[i], NULL, &cur) == 0 && !is_ours(&cur) &&
	    kernel_action(crash_signals[i], &ours, NULL) == 0)
		prog_set(i, &cur);
	prog_unlock(i, &held);
}

#if defined(REC_GLIBC_HOOK_VERSION)
/*
 * program_sigaction() - sigaction() as the program calls it
 * (librectrace.so: sample.c's copies of sigaction(), signal() and their
 * kin). For a crash signal whose action in the kernel is librec's
 * handler, the program's action is prog[]'s: act replaces it there, *old
 * gets the one the program had (never librec's), and librec's handler
 * stays, chaining to act from the next signal on -- so a fault just after
 * the call is captured as any other (README "After a crash"). One whose
 * action the program installed past sigaction() (a raw system call) while
 * armed is taken back at once, as the writer's re-arm would a moment
 * later. Otherwise -- another signal, librec not armed (before the first
 * start, REC_CRASH=0), a vfork() child (its table is its own, prog[] its
 * parent's) -- libc's sigaction(). Async-signal-safe, as sigaction().
 * Return: 0, or -1 with errno set (libc's).
 */
static int program_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
	int i = signal_index(signo), err = 0, saved_errno;
	struct sigaction next, was, cur, ours;
	struct held held;

	if (i < 0 || !__atomic_load_n(&armed, __ATOMIC_ACQUIRE) ||
	    syscall(SYS_getpid) != __atomic_load_n(&armed_pid, __ATOMIC_RELAXED))
		return kernel_action(signo, act, old);
	if (act)
		next = *act; /* a bad pointer faults here, not with every signal blocked */
	our_action(&ours);
	/* Called by a handler that interrupted this thread inside librec's: libc's. */
	if (!prog_lock((unsigned)i, &held))
		return kernel_action(signo, act ? &next : NULL, old);
	if (kernel_action(signo, NULL, &cur) != 0) {
		err = -1;
	} else if (is_ours(&cur)) {
		was = prog[i].act;
		if (act)
			prog_set((unsigned)i, &next);
	} else if (act) {
		/* The program's action went in past sigaction(): librec's back, chaining to act. */
		was = cur;
		err = kernel_action(signo, &ours, NULL);
		if (!err)
			prog_set((unsigned)i, &next);
	} else {
		was = cur;
	}
	saved_errno = errno;
	prog_unlock((unsigned)i, &held);
	errno = saved_errno;
	if (!err && old)
		*old = was;
	return err;
}
#endif


int rec__crash_arm(void (*view)(struct rec__crash_view *v))
{
	__atomic_store_n(&writer_view, view, __ATOMIC_RELEASE);
	/* A new recording: a capture of an earlier one (survived) is over. */
	crash_flag = CRASH_NONE;
	if (!rec__g.cfg.crash) /* REC_CRASH (config.c) */
		return 0;
	if (!crash_mem) {
		size_t guard = (size_t)sysconf(_SC_PAGESIZE);
		size_t stack = (CRASH_STACK_BYTES + guard - 1) / guard * guard;
		uint8_t *p = mmap(NULL, guard + stack + CRASH_BUFFER_BYTES, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED) {
			rec__log("cannot map the crash buffers: %s; no crash capture", strerror(errno));
			return -ENOMEM;
		}
		/* The guard page: a capture past the crash stack faults, never writes below. */
		if (mprotect(p, guard, PROT_NONE) != 0) {
			rec__log("cannot map the crash buffers: %s; no crash capture", strerror(errno));
			munmap(p, guard + stack + CRASH_BUFFER_BYTES);
			return -ENOMEM;
		}
		crash_stack_lo = p + guard;
		crash_mem = p + guard + stack;
	}
	prebind();
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(capture_before_the_end);
	__atomic_store_n(&armed_pid, getpid(), __ATOMIC_RELAXED);
	for (unsigned i = 0; i < NR_CRASH_SIGNALS; i++)
		install_one(i);
	/* Release: pairs with program_sigaction()'s acquire. */
	__atomic_store_n(&armed, true, __ATOMIC_RELEASE);
	return 0;
}

/*
 * rec__crash_rearm() - writer, once a second: a handler the program
 * installed past sigaction() (a raw rt_sigaction system call; a static
 * link, librectrace.a, which has no copy of sigaction(); a sanitizer's
 * interceptor, which calls libc's) replaced librec's: take the signal back
 * and chain to that handler, so that the rule is the same whenever the
 * program installs it. prog[] is taken under its lock, as everywhere.
 */
void rec__crash_rearm(uint64_t now_ns)
{
	static uint64_t last_ns;

	if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE) || now_ns - last_ns < 1000000000ull)
		return;
	last_ns = now_ns;
	for (unsigned i = 0; i < NR_CRASH_SIGNALS; i++)
		install_one(i);
}

static bool writer_wait(void)
{
	for (;;) {
		int flag;

		__atomic_store_n(&writer_busy, 0, __ATOMIC_SEQ_CST);
		while ((flag = __atomic_load_n(&crash_flag, __ATOMIC_SEQ_CST)) == CRASH_BUSY)
			syscall(SYS_futex, &crash_flag, FUTEX_WAIT_PRIVATE, CRASH_BUSY, NULL, NULL, 0);
		if (flag == CRASH_DONE)
			return false;
		(void)__atomic_exchange_n(&writer_busy, 1, __ATOMIC_SEQ_CST); /* not a store: above */
		if (__atomic_load_n(&crash_flag, __ATOMIC_SEQ_CST) == CRASH_NONE)
			return true;
	}
}

bool rec__crash_writer_enter(void)
{
	(void)__atomic_exchange_n(&writer_busy, 1, __ATOMIC_SEQ_CST); /* not a store: above */
	if (likely(__atomic_load_n(&crash_flag, __ATOMIC_SEQ_CST) == CRASH_NONE))
		return true;
	return writer_wait();
}

void rec__crash_writer_leave(void)
{
	__atomic_store_n(&writer_busy, 0, __ATOMIC_SEQ_CST);
}

void rec__crash_set_flight(rec__crash_flight_fn fn)
{
	__atomic_store_n(&flight_fn, fn, __ATOMIC_RELEASE);
}
