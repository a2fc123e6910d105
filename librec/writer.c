/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the writer thread: drains every thread's ring, encodes the
 * events through format/ into frames of records, compresses each frame into
 * one independent zstd frame and appends it to the output file. It owns the
 * file's contents (FORMAT.md): header, sync points, sites, threads, drops,
 * thread ends and the end marker. Consumer side of the ring protocol,
 * labels (C) and (D) in rec_internal.h.
 *
 * A frame is written when its oldest record may be REC_FLUSH_MS / 4 old
 * (the rest is slack for a writer kept off the CPU: see writer_main), when
 * rec_flush() or rec_stop() asks, or when it grows past
 * FRAME_TARGET_BYTES. After the first
 * write error the writer stops writing for good (sticky error), says so once
 * on stderr, and turns recording off; the host program carries on.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define FRAME_TARGET_BYTES (1u << 20)
/*
 * Room kept free before the body's records (body_reset()): write_frame()
 * puts the frame's lead and meta there when they fit (every frame but the
 * first ones of a program with many modules or sites), so that the frame
 * is one contiguous piece and compressing it costs no copy of the body.
 * That copy, a megabyte a frame that no longer fits the cache, was an
 * eighth of the writer's CPU on a tight loop's events (docs/DESIGN.md, "The
 * writer's cost").
 */
#define BODY_ROOM_BYTES 4096u
/* An index frame shorter than this is never packed (write_frame()). */
#define IX_PACK_MIN_BYTES 256u
#define SYNC_PERIOD_NS 1000000000ull
/*
 * Sleep between passes: short while events flow, long when a pass found
 * nothing (producers wake the writer when a ring is a quarter full), and
 * never more than a quarter of REC_FLUSH_MS (writer_main).
 */
#define POLL_ACTIVE_NS 1000000ull
#define POLL_IDLE_NS 50000000ull
#define CALIBRATE_MIN_NS 5000000ull
#define OUTPUT_STALL_S 10
#define REC__STR2(x) #x
#define REC__STR(x) REC__STR2(x)
#define WRITER_SLICE_NS 500000ull /* what a pass usually takes, and more */
/* Ring memory a pass may fault in for the pool (mem.c): 0.1-1 ms here. */
#define REFILL_BYTES (512u << 10)
/*
 * The largest ring size a busy writer (a pass that found events, or under
 * pressure) refills the pool with: the sizes threads take when they attach
 * and first grow. The larger ones wait for an idle pass
 * (rec__writer_refill_largest(), mem.c).
 */
#define REFILL_BUSY_MAX_RING_BYTES (256u << 10)
/*
 * How often the writer looks whether the host's threads have all ended
 * (host_gone()): recording, on its passes; parked, waking for it alone
 * (about 75 us of CPU a wake on a loaded machine), less often.
 */
#define HOST_CHECK_NS 100000000ull
#define HOST_CHECK_PARKED_S 1
/* The writer's CPU share is judged over windows this long (rec__writer_want_fast()). */
#define DUTY_WINDOW_NS 20000000ull

/*
 * The writer's state machine: what a pass writes (mode) and whether it is
 * the last one (stop). Both change only at the steps of a pass named here;
 * the loop that runs the passes is writer_main(), one pass writer_pass().
 *
 * mode            a pass ...                        next mode: when (step)
 * WM_STREAM       drains every ring into the file;  -- (REC_MODE=stream: the only mode)
 *                 at stop, writes the END record
 * WM_KEEPING      (flight) writes nothing: the      WM_SNAPSHOT: a trigger or
 *                 rings keep their last window,     rec_snapshot() was accepted
 *                 discarding the oldest (flight.c)  (pass start, flight_begin())
 * WM_SNAPSHOT     (flight) a snapshot file is open: WM_SNAPSHOT_LAST: stop was read,
 *                 drains the window's events as     or the clock passed the window's
 *                 they come, writing due frames     end (pass start, flight_advance())
 * WM_SNAPSHOT_LAST (flight) the snapshot's last    WM_KEEPING: the pass ends the
 *                 pass: every event of the window   file (pass end, flight_end())
 *                 is in the rings; its counts stop
 *                 at the window's end (entering it,
 *                 snap_cap_locked()); drains final
 *
 * stop            meaning                           next: when (step)
 * WS_RUNNING      no stop read                      WS_STOPPING: rec__g.stop_requested
 *                                                   read (pass start, read_requests())
 * WS_STOPPING     this pass is the last             WS_DEFERRED: WM_KEEPING and a
 *                                                   trigger this pass found is pending
 *                                                   (after the drain, once)
 * WS_DEFERRED     (flight) one more pass writes     WS_STOPPING_FINAL: stop read again
 *                 the pending trigger's snapshot    (pass start)
 * WS_STOPPING_FINAL this pass is the last; no
 *                 second deferral
 *
 * A stop read while a snapshot is open makes it WM_SNAPSHOT_LAST in the
 * same pass: the writer never ends with a snapshot half written. The
 * writer ends after a pass in WS_STOPPING or WS_STOPPING_FINAL.
 * rec__g.stop_requested is cleared only by a start or in a child after
 * fork, never while a writer runs: stop only moves forward.
 */
enum writer_mode { WM_STREAM = 0, WM_KEEPING, WM_SNAPSHOT, WM_SNAPSHOT_LAST };
enum writer_stop { WS_RUNNING = 0, WS_STOPPING, WS_DEFERRED, WS_STOPPING_FINAL };

struct writer {
	struct recfmt_compressor *zc;
	struct recfmt_buf lead;	   /* FRAME (+ FILE_HEADER) of the frame being built */
	struct recfmt_buf meta;	   /* SYNC, SITE, THREAD records */
	struct recfmt_buf body;	   /* body_room bytes free, then EVENTS, DROPS, THREAD_END, END records */
	size_t body_room;	   /* BODY_ROOM_BYTES, or 0 if the room could not be had */
	bool body_room_tried;	   /* body_room_make() ran (first pass) */
	struct recfmt_buf scratch; /* ids column of the block being encoded */
	struct recfmt_buf out;	   /* compressed frame */
	struct recfmt_buf ix;	   /* its index frame (FORMAT.md §6) */
	struct recfmt_buf ix_sums; /* the body's EVENTS blocks summed up (recfmt_index_entry) */
	struct recfmt_index_packer ix_packer; /* its records compressed (recfmt_index_pack()) */
	struct recfmt_sync calibration; /* second sync point of the first frame */
	uint32_t seq;
	uint32_t nr_sites_written;
	/*
	 * A time no later than when the oldest record of the frame being
	 * built was made (for events, when their ring's head was read at the
	 * drain before; else the start of the pass before); 0 while the frame
	 * is empty. CLOCK_MONOTONIC ns.
	 */
	uint64_t pending_since_ns;
	uint64_t filling_ns;   /* when that frame got its first record: frame_due_in_pass() */
	uint64_t pass_ns;      /* start of the current pass */
	uint64_t prev_pass_ns; /* start of the pass before it */
	uint64_t due_ns;       /* REC_FLUSH_MS / 4: see frame_due() */
	uint64_t last_sync_ns;
	uint64_t nr_events;
	uint64_t nr_dropped_exited; /* drops of threads already ended */
	/* What threads REC_MEMORY refused a ring did not record (ended ones): end_capped(). */
	struct capped {
		uint64_t scopes, samples, annots;
		uint32_t threads;
	} capped;
	uint64_t nr_filtered_exited; /* REC_MIN_NS: filtered by threads already ended */
	struct rec__thread **snap;
	size_t snap_cap;
	/*
	 * The registry as the last snapshot_locked() read it, less the threads
	 * reaped since (capacity snap_cap): a pass's list when rec__g.lock is
	 * busy (writer_main).
	 */
	struct rec__thread **last;
	size_t nr_last;
	bool failed;
	/* Counted threads (REC_COUNTERS): a chunk's events and values, split
	 * out of the ring's groups for the EVENTS and COUNTERS records. */
	struct recfmt_event *cev;
	uint64_t *cval;
	size_t cev_cap, cval_cap;
	struct rec__live *live; /* REC_LIVE; NULL without it */
	struct rec__modules modules;   /* MODULE records written to this file */
	/*
	 * REC_MODE=flight: the MODULE records a crash snapshot needs, kept
	 * ready (a signal handler cannot scan: dl_iterate_phdr takes the
	 * loader's lock); grown by each pass, read by crash.c with the writer
	 * stopped (rec__writer_crash_view()).
	 */
	struct rec__modules crash_modules;
	struct recfmt_buf crash_modrec;
	uint32_t nr_sites_scanned;     /* site count at the last module scan */
	uint64_t ticks_per_second;     /* calibrated at start (write_lead) */
	uint64_t clock_step_ticks;     /* measured at start (clock.c, write_lead) */
	struct recfmt_probe_cost probe_cost; /* measured at start (probe_cost.c) */
	bool has_probe_cost;
	char default_comm[2][16];      /* a thread's inherited name: the program's (read_comms) */
	uint64_t min_ticks;	       /* REC_MIN_NS in ticks; 0 = no filtering */
	struct recfmt_event *kept;     /* REC_MIN_NS: the events of a block that stay */
	size_t kept_cap;
	/*
	 * Where the writer is in its recording (the state table above
	 * writer_pass()). REC_MODE=flight (flight.c): while a snapshot file is
	 * open (rec__g.fd is its fd, -1 between snapshots), its SNAPSHOT
	 * record and the sync point that starts it (the window's start,
	 * extrapolated).
	 */
	enum writer_mode mode;
	enum writer_stop stop;
	struct recfmt_snapshot snap_rec;
	char snap_reason[256];
	struct recfmt_sync file_start;
	uint32_t nr_annot_names_written; /* ANNOT_NAME records in this file (annot.c) */
	struct rec__annot_split annot;	 /* rings with annotations (annot.c) */
	/*
	 * Under pressure the frames are compressed fast (raw literals, FRAME
	 * flag RECFMT_FRAME_FAST): see rec__writer_want_fast(). The current
	 * window of its CPU share: start (CLOCK_MONOTONIC and thread CPU ns).
	 */
	bool fast;
	uint64_t duty_wall_ns, duty_cpu_ns;
	bool more; /* a turn left events in a ring (drain_thread()): pass again at once */
	uint64_t poll_active_ns, poll_idle_ns; /* POLL_*_NS, at most REC_FLUSH_MS / 4 */
	struct rec__compact compact; /* the frames written, for compact.c at the end */
	uint64_t file_bytes;	     /* written to this file (lost_fd()'s line) */
	uint64_t host_check_ns;	     /* the last host_gone() (CLOCK_MONOTONIC) */
	bool orphaned;		     /* the host's threads have all ended: finish and exit */
};

/* REC_MODE=flight: a snapshot file is open (WM_SNAPSHOT or its last pass). */
static bool snap_open(const struct writer *w)
{
	return w->mode == WM_SNAPSHOT || w->mode == WM_SNAPSHOT_LAST;
}

/*
 * rec__writer_want_fast() - whether the writer's next frames are compressed
 * fast. The normal compression costs the writer about 2 ns an event more
 * than raw literals, for a file about 4 times smaller (0.23 against 1
 * byte an event on a tight loop; docs/DESIGN.md, "The writer under
 * pressure"). When the writer has no core of its own (a thread per core),
 * every ns it spends is taken from the program, and a writer that falls
 * behind makes a dropping program lose events. So: fast at once when a
 * drain found a ring more than a quarter full (behind), or when the writer
 * used more than an eighth of a CPU over the last window (busy); normal
 * again once it uses less than a sixteenth (the gap keeps it from
 * flapping at the edge). cpu_ns, wall_ns: its CPU time over a window of
 * wall_ns (0: no window ended).
 */
int rec__writer_test_pressure;

bool rec__writer_want_fast(bool fast, bool behind, uint64_t cpu_ns, uint64_t wall_ns)
{
	if (behind || rec__writer_test_pressure)
		return true;
	if (!wall_ns)
		return fast;
	if (cpu_ns > wall_ns / 8)
		return true;
	if (cpu_ns < wall_ns / 16)
		return false;
	return fast;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under rec__g.lock: a write failed; stop recording, once, loudly. */
static void fail_locked(struct writer *w, int err)
{
	char pb[REC__LOG_PATH_BYTES];

	if (w->failed)
		return;
	w->failed = true;
	rec__g.write_error = -err;
	__atomic_store_n(&rec__g.state, REC__FAILED, __ATOMIC_RELEASE);
	rec__thread_set_all_off();
	rec__log("cannot write %s: %s; tracing stopped",
		 rec__log_path(rec__g.cfg.output, pb, sizeof(pb)),
		 err == ETIMEDOUT ? "nothing was read from it for " REC__STR(OUTPUT_STALL_S) " s"
				  : strerror(err));
}

/*
 * The host closed the output's descriptor (closefrom(), close_range()) and
 * its number may name a file of the host's now: write nothing more to it,
 * close nothing (rec__fd_close() checks), stop recording with one line.
 * The trace ends with its last complete frame, without its END record.
 */
static void lost_fd(struct writer *w)
{
	char pb[REC__LOG_PATH_BYTES];
	int fd;

	pthread_mutex_lock(&rec__g.lock);
	fd = rec__g.fd;
	if (!w->failed) {
		w->failed = true;
		rec__g.write_error = -EBADF;
		__atomic_store_n(&rec__g.state, REC__FAILED, __ATOMIC_RELEASE);
		rec__thread_set_all_off();
		rec__log("the program closed descriptor %d, the trace's; tracing stopped: %s ends "
			 "after its first %llu bytes, without its end record",
			 fd, rec__log_path(rec__g.cfg.output, pb, sizeof(pb)),
			 (unsigned long long)w->file_bytes);
	}
	rec__g.fd = -1; /* forgotten, never closed: the number may be the host's now */
	pthread_mutex_unlock(&rec__g.lock);
}

/*
 * The parts iov[0 .. cnt) written in order, by writev(2) (the index frame
 * and its frame: no copy to gather them); iov is consumed. A FIFO or device
 * output is non-blocking (lifecycle.c): when it is full, wait for room, but
 * give up after OUTPUT_STALL_S seconds in which nothing could be written (a
 * reader that stopped reading), so that rec_stop() at exit never waits
 * forever.
 */
static int write_all(int fd, struct iovec *iov, int cnt)
{
	uint64_t stalled_ns = 0;
	ssize_t k = 0; /* written by the last writev(), not yet taken off iov */

	for (;;) {
		/* Parts written whole, and empty ones, off the front; then into the next. */
		while (cnt && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (!cnt)
			return 0;
		iov->iov_base = (uint8_t *)iov->iov_base + k;
		iov->iov_len -= (size_t)k;
		k = writev(fd, iov, cnt);
		if (k < 0) {
			int e = errno;

			k = 0;
			if (e == EINTR)
				continue;
			if (e == EAGAIN) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };
				uint64_t t0 = mono_ns();

				if (stalled_ns >= OUTPUT_STALL_S * 1000000000ull)
					return ETIMEDOUT;
				poll(&pfd, 1, 100);
				stalled_ns += mono_ns() - t0;
				continue;
			}
			return e;
		}
		stalled_ns = 0;
		if (k == 0)
			return EIO;
	}
}

/*
 * The first frame starts with the file header. Its ticks_per_second is an
 * estimate from the start sync point to one taken now, at least
 * CALIBRATE_MIN_NS later; readers refine it with the last SYNC (FORMAT.md
 * §3.3).
 */
static int write_lead(struct writer *w)
{
	int err = recfmt_encode_frame_flags(&w->lead, w->seq, w->fast ? RECFMT_FRAME_FAST : 0);
	/* A snapshot starts at its window (flight.c), a stream file at the start. */
	const struct recfmt_sync *start = snap_open(w) ? &w->file_start : &rec__g.start_sync;

	if (err || w->seq != 0)
		return err;
	struct recfmt_header hdr = {
		.clock = rec__g.cfg.use_tsc ? RECFMT_CLOCK_TSC : RECFMT_CLOCK_MONOTONIC,
		.pid = (uint32_t)getpid(),
		.ticks_per_second = 1000000000u,
		.start_ticks = start->ticks,
		.start_mono_ns = start->mono_ns,
		.start_real_ns = start->real_ns,
		.clock_step_ticks = w->clock_step_ticks,
	};
	hdr.ticks_per_second = w->ticks_per_second;
	err = recfmt_encode_header(&w->lead, &hdr);
	if (!err)
		err = recfmt_encode_sync(&w->lead, start);
	if (!err && snap_open(w))
		err = recfmt_encode_snapshot(&w->lead, &w->snap_rec);
	if (!err && rec__g.cfg.use_tsc)
		err = recfmt_encode_sync(&w->lead, &w->calibration);
	if (!err && w->has_probe_cost)
		err = recfmt_encode_probe_cost(&w->lead, &w->probe_cost);
	if (!err && rec__sample_hz()) {
		/* REC_SAMPLE: how the samples were taken (FORMAT.md §3.22). */
		struct recfmt_sampling sp;

		rec__sample_describe(&sp);
		err = recfmt_encode_sampling(&w->lead, &sp);
	}
	return err;
}

/*
 * Before the first pass: the TSC's rate, from the start sync point to one
 * taken at least CALIBRATE_MIN_NS later (the first frame's header carries
 * it; REC_MIN_NS needs it to filter from the first pass on).
 */
static uint64_t mticks_to_ps(uint64_t mticks, uint64_t ticks_per_second)
{
	return (uint64_t)((unsigned __int128)mticks * 1000000000u / ticks_per_second);
}

static void calibrate(struct writer *w)
{
	struct rec__probe_cost_mticks pc;

	/* While the calibration waits anyway: the probe's own cost (FORMAT.md §3.16). */
	w->has_probe_cost = rec__probe_cost_measure(rec__g.cfg.use_tsc, &pc);
	w->clock_step_ticks = rec__clock_step(rec__g.cfg.use_tsc);
	w->ticks_per_second = 1000000000u;
	if (rec__g.cfg.use_tsc) {
		uint64_t since = mono_ns() - rec__g.start_sync.mono_ns;

		if (since < CALIBRATE_MIN_NS) {
			struct timespec nap = { 0, (long)(CALIBRATE_MIN_NS - since) };
			nanosleep(&nap, NULL);
		}
		rec__clock_sync(true, &w->calibration);
		w->ticks_per_second = rec__clock_rate(&rec__g.start_sync, &w->calibration);
	}
	w->probe_cost.scope_ps = mticks_to_ps(pc.scope, w->ticks_per_second);
	w->probe_cost.scope_inner_ps = mticks_to_ps(pc.scope_inner, w->ticks_per_second);
	w->probe_cost.hook_ps = mticks_to_ps(pc.hook, w->ticks_per_second);
	w->probe_cost.hook_inner_ps = mticks_to_ps(pc.hook_inner, w->ticks_per_second);
	w->min_ticks = (uint64_t)((unsigned __int128)rec__g.cfg.min_ns * w->ticks_per_second /
				  1000000000u);
	if (rec__g.cfg.min_ns && !w->min_ticks)
		w->min_ticks = 1;
}

/* The frame being built holds nothing: lead, meta and body empty, the body's room kept. */
static void frame_reset(struct writer *w)
{
	w->lead.len = w->meta.len = 0;
	w->body.len = w->body_room;
	w->ix_sums.len = 0; /* the body's sums go with it */
}

/*
 * The room before the body's records, made once per recording by its first
 * pass: inside the crash hand-shake (crash.c), so that a crash handler never
 * sees body_room and body.len half set (writer_begin() runs outside it, and
 * a handler reads the two apart). Without it (no memory then), frames are
 * gathered (compress_frame()).
 */
static void body_room_make(struct writer *w)
{
	w->body_room_tried = true;
	if (w->body.len == 0 && !recfmt_buf_reserve(&w->body, BODY_ROOM_BYTES)) {
		w->body_room = BODY_ROOM_BYTES;
		w->body.len = BODY_ROOM_BYTES;
	}
}

/* The body's records (the room before them left out). */
static struct recfmt_buf body_records(const struct writer *w)
{
	return (struct recfmt_buf){ .data = w->body.data + w->body_room,
				    .len = w->body.len - w->body_room,
				    .cap = w->body.len - w->body_room,
				    .fixed = true };
}

/*
 * Compresses lead+meta+body into w->out as one zstd frame: in one piece when
 * lead and meta fit the room before the body (BODY_ROOM_BYTES), else
 * gathered by the compressor.
 */
static int compress_frame(struct writer *w)
{
	size_t lm = w->lead.len + w->meta.len;
	struct recfmt_buf records = body_records(w);

	recfmt_compressor_set_fast(w->zc, w->fast);
	if (lm <= w->body_room) {
		uint8_t *at = w->body.data + w->body_room - lm;
		struct recfmt_buf whole = { .data = at, .len = lm + records.len,
					    .cap = lm + records.len, .fixed = true };

		if (w->lead.len)
			memcpy(at, w->lead.data, w->lead.len);
		if (w->meta.len)
			memcpy(at + w->lead.len, w->meta.data, w->meta.len);
		return recfmt_compress_frame_parts(w->zc, &whole, 1, &w->out);
	}
	return recfmt_compress_frame_parts(w->zc, (struct recfmt_buf[3]){ w->lead, w->meta, records },
					   3, &w->out);
}

/* Compresses lead+meta+body into one zstd frame and appends it to the file. */
static void write_frame(struct writer *w)
{
	uint32_t nr_sites = rec__site_count(); /* after every drained event: see site.c */
	size_t ix_len;
	int err = 0;

	if (w->failed)
		goto out;
	/*
	 * Modules, then sites used by the events in body, before them in the
	 * frame. A function site's code was loaded before the site was
	 * registered, so this scan, after loading nr_sites, sees its module;
	 * a sample's module was mapped when the sample was taken, before this
	 * check: it is still mapped, or the dlclose() that unmapped it left
	 * its records pending (modules.c).
	 */
	if (nr_sites != w->nr_sites_written || !w->modules.scanned || rec__sample_hz()) {
		/* Snapshots first: their modules may be gone from the scan. */
		err = rec__modules_add_snaps(&w->modules, &w->meta, rec__site_nr_snaps(),
					     rec__site_snap);
		if (!err)
			err = rec__modules_scan(&w->modules, &w->meta);
	}
	for (uint32_t id = w->nr_sites_written + 1; id <= nr_sites && !err; id++) {
		const struct rec__site *s = rec__site_get(id);
		uintptr_t fn = rec__site_func_addr(s);

		/* Its module by its MODULE id (FORMAT.md §3.11, 1.5): the address
		 * alone may be another library's later (finding F16). */
		if (fn)
			err = recfmt_encode_func_in(&w->meta, id, fn,
						    rec__modules_snap_id(&w->modules,
									 rec__site_func_snap(s)));
		else
			err = recfmt_encode_site(&w->meta, id, s->line, s->name, s->file);
	}
	w->nr_sites_written = nr_sites;
	/* Annotation names, before the ANNOTS records that use them (FORMAT.md §3.17). */
	if (!err)
		err = rec__annot_encode_names(&w->meta, &w->nr_annot_names_written);
	if (!err)
		err = write_lead(w);
	/* Fast or not, as the FRAME record written above says (write_lead()). */
	if (!err)
		err = compress_frame(w);
	/* Its index frame first (FORMAT.md §6): a reader finds a window's frames without decompressing. */
	if (!err) {
		struct recfmt_index_entry *sums = (void *)w->ix_sums.data;
		size_t nr_sums = w->ix_sums.len / sizeof(*sums);

		/* The blocks' offsets in the body's records, past the room. */
		for (size_t i = 0; i < nr_sums; i++)
			sums[i].at -= w->body_room;
		err = recfmt_index_build(&w->ix, (struct recfmt_buf[3]){ w->lead, w->meta,
									   body_records(w) },
					 3, 2, sums, nr_sums, w->out.data, w->out.len);
	}
	/*
	 * Packed (FORMAT.md §6.3) when it would cost more than half its data
	 * frame: a frame of short threads is mostly THREAD and THREAD_END
	 * records and a block of a few events each, which its data frame holds
	 * compressed and a plain index frame raw, 3-5 times larger (finding
	 * F4). Not the first frame's, nor where the index is small beside its
	 * frame (the usual case): a reader that predates packed index frames
	 * reads a file of plain ones through them. The FRAME and FILE_HEADER
	 * records stay raw even when packed: compact.c patches FRAME in place.
	 */
	if (!err && w->seq && w->ix.len >= IX_PACK_MIN_BYTES && w->ix.len > w->out.len / 2)
		(void)recfmt_index_pack(&w->ix, w->lead.len, &w->ix_packer); /* else plain */
	/* Both in one writev(): a failed write leaves no index frame without its frame. */
	ix_len = w->ix.len;
	if (!err) {
		struct iovec both[2] = { { w->ix.data, w->ix.len }, { w->out.data, w->out.len } };

		/*
		 * Only while the descriptor is still ours, at the offset where our
		 * last frame ended (a host's own open of the same file under our
		 * old number has its own): fstat(), fcntl() and lseek() a frame.
		 */
		if (!rec__fd_is_ours_at(rec__g.fd, &rec__g.fd_id, w->file_bytes)) {
			lost_fd(w);
			goto out;
		}
		err = -write_all(rec__g.fd, both, 2);
		if (!err)
			w->file_bytes += ix_len + w->out.len;
	}
	/* A stream file's fast frames are compressed again at its end (compact.c). */
	if (!err && !snap_open(w))
		rec__compact_note(&w->compact, ix_len, w->out.len, w->fast);
	if (err) {
		pthread_mutex_lock(&rec__g.lock);
		fail_locked(w, -err);
		pthread_mutex_unlock(&rec__g.lock);
	}
	w->seq++;
out:
	frame_reset(w);
	w->pending_since_ns = 0;
}

/*
 * Something was added to the frame being built. It was recorded after the
 * previous pass started: that pass had read every head it drained up to
 * (and a thread registered since did not exist then).
 */
static void note_pending(struct writer *w)
{
	if (!w->pending_since_ns) {
		w->pending_since_ns = w->prev_pass_ns ? w->prev_pass_ns : 1;
		w->filling_ns = mono_ns();
	}
}

/* Records added to the frame being built were made after since_ns. */
static void note_pending_since(struct writer *w, uint64_t since_ns)
{
	if (!w->pending_since_ns)
		w->filling_ns = mono_ns();
	if (!w->pending_since_ns || since_ns < w->pending_since_ns)
		w->pending_since_ns = since_ns ? since_ns : 1;
}

/* The frame being built must be written now to keep REC_FLUSH_MS. */
static bool frame_due(const struct writer *w, uint64_t now_ns)
{
	return w->pending_since_ns && now_ns - w->pending_since_ns >= w->due_ns;
}

/*
 * In the middle of a pass (after a thread's drain, or a piece of one): the
 * frame is due and has been filling for an eighth of REC_FLUSH_MS / 4 at
 * least. Records already due when drained (a writer that slept or was kept
 * off the CPU while short threads recorded and ended) made a frame each,
 * one per thread drained, when any due frame was written at once (finding
 * F4): they wait for more of the pass now, REC_FLUSH_MS / 32 at most, or
 * for its end (pass_write() writes a due frame as it is).
 */
static bool frame_due_in_pass(const struct writer *w, uint64_t now_ns)
{
	return frame_due(w, now_ns) && now_ns - w->filling_ns >= w->due_ns / 8;
}

static int encode_ring_all(struct writer *w, struct rec__thread *t, uint64_t tail,
			   uint64_t head);
/* REC_MIN_NS hold-back limit: an eighth of the ring, at most 64 Ki events. */
#define HOLD_MAX_EVENTS(mask) ((mask) + 1 < 8u * 65536u ? ((mask) + 1) / 8 : 65536u)
#define PIECE_MAX_EVENTS (256u * 1024u) /* one EVENTS block; > HOLD_MAX_EVENTS */

/*
 * REC_MIN_NS: copies the events [tail, head) to w->kept without the
 * activations shorter than min_ticks. An exit whose enter is the last event
 * kept so far closes an activation with nothing kept inside it; if it is
 * short, both go. So a short activation goes with everything inside it that
 * went, and stays if anything inside it stayed. Each kept event's aux holds
 * its offset from tail, for the hold-back in encode_ring().
 * Return: the number of events kept, or -1 if out of memory.
 */
static int64_t filter_short(struct writer *w, struct rec__thread *t, uint64_t tail, uint64_t head)
{
	size_t n = (size_t)(head - tail), k = 0;
	struct rec__ring_view v = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */

	if (n > w->kept_cap) {
		struct recfmt_event *kept = realloc(w->kept, n * sizeof(*kept));

		if (!kept)
			return -1;
		w->kept = kept;
		w->kept_cap = n;
	}
	for (uint64_t i = tail; i != head; i++) {
		const struct recfmt_event *ev = &v.ev[i & v.mask];

		if (RECFMT_CODE_IS_EXIT(ev->code) && k && !RECFMT_CODE_IS_EXIT(w->kept[k - 1].code) &&
		    RECFMT_CODE_SITE(w->kept[k - 1].code) == RECFMT_CODE_SITE(ev->code) &&
		    ev->ticks - w->kept[k - 1].ticks < w->min_ticks &&
		    ev->ticks >= w->kept[k - 1].ticks) {
			k--;
			continue;
		}
		w->kept[k] = *ev;
		w->kept[k].aux = (uint32_t)(i - tail);
		k++;
	}
	return (int64_t)k;
}

/* Encodes events as one EVENTS block (nothing if there are none). */
static int encode_events(struct writer *w, struct rec__thread *t, const struct recfmt_event *ev,
			 size_t n)
{
	struct recfmt_events_encoder enc;
	int err;

	if (!n)
		return 0;
	err = recfmt_events_begin(&enc, &w->body, &w->scratch, t->reg.serial, ev[0].ticks);
	if (!err)
		recfmt_events_track(&enc, &t->wr.nest, &w->ix_sums);
	if (!err)
		recfmt_events_expect(&enc, n); /* no copy of the deltas at finish */
	if (!err)
		err = recfmt_events_append(&enc, ev, n);
	if (!err)
		err = recfmt_events_finish(&enc);
	return err;
}

/*
 * Encodes a thread's events [tail, head) as one EVENTS block, without the
 * short activations when REC_MIN_NS is set.
 *
 * Hold-back: enters at the end of what is kept that are younger than
 * REC_MIN_NS (against now_ticks) may still turn out to be short. Unless
 * `final`, they and everything after them (all nested inside them) stay in
 * the ring, to be read again at the next pass, so that whether an
 * activation is filtered does not depend on where a pass cut the stream.
 * At most HOLD_MAX_EVENTS are held, so a busy thread's ring never fills
 * with them: an enter with more than that after it is written (its
 * activation is then kept, as one with a child kept would be).
 * Return: 0 or -ENOMEM; *nr_written: events written; *nr_consumed: events
 * of [tail, head) done with (the slots may be released).
 */
static int encode_ring(struct writer *w, struct rec__thread *t, uint64_t tail, uint64_t head,
		       bool final, uint64_t now_ticks, uint64_t *nr_written,
		       uint64_t *nr_consumed)
{
	uint64_t hold_max = HOLD_MAX_EVENTS(rec__ring_view(&t->ring).mask);

	/* A ring with annotations: events and annotations apart (annot.c), its
	 * blocks without index sums (FORMAT.md §6: readers decode such files). */
	if (__atomic_load_n(&t->ring.p.annots, __ATOMIC_RELAXED)) {
		t->wr.nest.broken = true;
		return rec__annot_encode_ring(&w->annot, &w->body, &w->scratch, t, tail, head - tail,
					      final, now_ticks, w->min_ticks, hold_max,
					      nr_written, nr_consumed);
	}
	if (w->min_ticks) {
		int64_t k = filter_short(w, t, tail, head);
		size_t cut = (size_t)k;
		uint64_t consumed = head - tail;

		if (k < 0)
			return -ENOMEM;
		/* Outward from the innermost trailing enter, while young and it fits. */
		while (!final && cut > 0 && !RECFMT_CODE_IS_EXIT(w->kept[cut - 1].code) &&
		       (now_ticks < w->kept[cut - 1].ticks ||
			now_ticks - w->kept[cut - 1].ticks < w->min_ticks) &&
		       head - tail - w->kept[cut - 1].aux <= hold_max)
			cut--;
		if (cut < (size_t)k)
			consumed = w->kept[cut].aux;
		/* Every event consumed but not kept is half of a filtered activation. */
		t->wr.nr_filtered_written += (consumed - cut) / 2;
		*nr_written = cut;
		*nr_consumed = consumed;
		return encode_events(w, t, w->kept, cut);
	}
	*nr_written = *nr_consumed = head - tail;
	return encode_ring_all(w, t, tail, head);
}

/* Encodes a thread's events [tail, head) as one EVENTS block. */
static int encode_ring_all(struct writer *w, struct rec__thread *t, uint64_t tail, uint64_t head)
{
	struct recfmt_events_encoder enc;
	struct rec__ring_view v = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */
	uint64_t cap = v.mask + 1;
	uint64_t first = tail & v.mask;
	uint64_t n = head - tail;
	uint64_t n1 = n < cap - first ? n : cap - first;
	int err;

	err = recfmt_events_begin(&enc, &w->body, &w->scratch, t->reg.serial, v.ev[first].ticks);
	if (!err)
		recfmt_events_track(&enc, &t->wr.nest, &w->ix_sums);
	if (!err)
		recfmt_events_expect(&enc, n); /* no copy of the deltas at finish */
	if (!err)
		err = recfmt_events_append(&enc, &v.ev[first], n1);
	if (!err && n > n1)
		err = recfmt_events_append(&enc, &v.ev[0], n - n1);
	if (!err)
		err = recfmt_events_finish(&enc);
	return err;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *q;

	if (need <= *cap)
		return 0;
	q = realloc(*p, need * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = need;
	return 0;
}

/*
 * Encodes a counted thread's slots [tail, head), groups of 1 + nr slots
 * (probe.c: push_counted), as an EVENTS block followed by the COUNTERS
 * block of its values (FORMAT.md §3.14), and its stack samples, which
 * take whole groups (sample.c: push()), as a SAMPLES record (§3.23).
 * A sample that runs past head is left for the next piece.
 * Return: 0 or -errno; *nr_events: events written; *consumed: slots done with.
 */
static int encode_ring_counted(struct writer *w, struct rec__thread *t, uint64_t tail,
			       uint64_t head, uint64_t *nr_events, uint64_t *consumed)
{
	static struct recfmt_samples_encoder senc; /* 4 KiB: the writer's alone, as annot.c's */
	const struct rec__counters *c = t->reg.ctr;
	uint64_t group = 1 + (uint64_t)c->nr, n = 0, at = tail, f[REC__SAMPLE_MAX_FRAMES];
	struct rec__ring_view v = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */
	struct recfmt_events_encoder enc;
	bool samples = false, begun = false;
	int err = 0;

	if (grow((void **)&w->cev, &w->cev_cap, (head - tail) / group, sizeof(*w->cev)) ||
	    grow((void **)&w->cval, &w->cval_cap, (head - tail) / group * c->nr, sizeof(*w->cval)))
		return -ENOMEM;
	while (at + group <= head) {
		const struct recfmt_event *ev = &v.ev[at & v.mask];

		if (ev->code == REC__ANNOT_CODE) {
			uint64_t slots = (rec__annot_slots(ev->aux) + group - 1) / group * group;

			if (REC__ANNOT_KIND(ev->aux) == 0) {
				/* A sample's later group, its first discarded (flight mode). */
				at += group;
				continue;
			}
			if (REC__ANNOT_KIND(ev->aux) != REC__SAMPLE_KIND || at + slots > head)
				break; /* the rest of the sample is past the slice: next piece */
			samples = true;
			at += slots;
			continue;
		}
		w->cev[n] = *ev;
		for (uint32_t k = 0; k < c->nr; k++)
			w->cval[n * c->nr + k] = v.ev[(at + 1 + k) & v.mask].ticks;
		n++;
		at += group;
	}
	*nr_events = n;
	*consumed = at - tail;
	if (n) {
		err = recfmt_events_begin(&enc, &w->body, &w->scratch, t->reg.serial,
					  w->cev[0].ticks);
		if (!err)
			recfmt_events_track(&enc, &t->wr.nest, &w->ix_sums);
		if (!err)
			err = recfmt_events_append(&enc, w->cev, n);
		if (!err)
			err = recfmt_events_finish(&enc);
		if (!err)
			err = recfmt_encode_counters(&w->body, t->reg.serial, (uint32_t)n, c->nr,
						     w->cval);
	}
	for (uint64_t i = tail; samples && !err && i < at;) {
		const struct recfmt_event *ev = &v.ev[i & v.mask];
		struct recfmt_sample smp = { .ticks = ev->ticks, .frames = f };
		uint32_t slots;

		if (ev->code != REC__ANNOT_CODE || REC__ANNOT_KIND(ev->aux) != REC__SAMPLE_KIND) {
			i += group; /* an event, or what is left of a discarded sample */
			continue;
		}
		slots = rec__annot_slots(ev->aux);
		smp.flags = (ev->aux >> 16) & 0xfffu;
		smp.nr_frames = slots - 1;
		for (uint32_t k = 0; k < smp.nr_frames && k < REC__SAMPLE_MAX_FRAMES; k++)
			f[k] = v.ev[(i + 1 + k) & v.mask].ticks;
		if (!begun)
			err = recfmt_samples_begin(&senc, &w->body, t->reg.serial, smp.ticks);
		begun = true;
		if (!err)
			err = recfmt_samples_append(&senc, &smp);
		i += (slots + group - 1) / group * group;
	}
	if (begun && !err)
		err = recfmt_samples_finish(&senc);
	return err == -EINVAL ? -EIO : err;
}

/*
 * rec__writer_thread_restart() - under rec__g.lock, before the writer of a
 * new recording starts (rec__start_locked()): a thread left from an
 * earlier recording starts afresh in the new file. The writer is not
 * running, so its fields are the caller's to reset here; but the producer
 * is: it may be waiting for room (block mode) and load tail at (A) while
 * we store it. Hence a release store, standing in for the writer's (D):
 * the discarded slots are free to overwrite.
 */
void rec__writer_thread_restart(struct rec__thread *t)
{
	rec__ring_release(&t->ring, rec__ring_peek(&t->ring));
	t->wr.flight_floor = t->ring.tail; /* flight mode: nothing older is held again */
	t->wr.nr_dropped_base = __atomic_load_n(&t->ring.p.nr_dropped, __ATOMIC_RELAXED);
	t->wr.frozen_base = __atomic_load_n(&t->own.nr_dropped_frozen, __ATOMIC_RELAXED);
	t->wr.nr_blocked_base = __atomic_load_n(&t->own.nr_blocked, __ATOMIC_RELAXED);
	t->wr.blocked_ns_base = __atomic_load_n(&t->own.blocked_ns, __ATOMIC_RELAXED);
	t->wr.nr_blocked_reported = t->wr.blocked_ns_reported = 0;
	t->wr.nr_dropped_written = 0;
	t->wr.nr_events_written = 0;
	t->wr.nr_filtered_written = t->wr.nr_filtered_reported = 0;
	t->wr.annots_dropped_base = __atomic_load_n(&t->own.nr_annots_dropped, __ATOMIC_RELAXED);
	t->wr.samples_dropped_base = __atomic_load_n(&t->own.nr_samples_dropped, __ATOMIC_RELAXED);
	t->wr.annots_dropped_reported = 0;
	t->wr.name_gen_written = 0;
	t->wr.ctr_set_frame = 0;
	recfmt_nest_reset(&t->wr.nest); /* a new file: nothing open in it */
}

/*
 * REC_MODE=flight: a producer's count (drops, waits) as the open snapshot
 * reports it: only up to its window's end (snap_cap_locked()); those made
 * while it is being written are the next snapshot's (flight_end() sets
 * the bases there). Outside a snapshot: the count itself.
 */
static uint64_t snap_counted(const struct writer *w, uint64_t now, uint64_t cap)
{
	return w->mode == WM_SNAPSHOT_LAST && now > cap ? cap : now;
}

/* Under rec__g.lock: the counts as of now, the window's end having passed. */
static void snap_cap_locked(void)
{
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		t->wr.snap_cap_dropped = __atomic_load_n(&t->ring.p.nr_dropped, __ATOMIC_RELAXED);
		t->wr.snap_cap_blocked = __atomic_load_n(&t->own.nr_blocked, __ATOMIC_RELAXED);
		t->wr.snap_cap_blocked_ns = __atomic_load_n(&t->own.blocked_ns, __ATOMIC_RELAXED);
		t->wr.snap_cap_frozen = __atomic_load_n(&t->own.nr_dropped_frozen, __ATOMIC_RELAXED);
	}
}

/*
 * The scopes this thread dropped in this file, as of now (a snapshot: as of
 * its window's end), less those dropped while a trigger froze the rings
 * after it (flight.c).
 */
static uint64_t thread_dropped(const struct writer *w, const struct rec__thread *t)
{
	uint64_t dropped = snap_counted(w, __atomic_load_n(&t->ring.p.nr_dropped, __ATOMIC_RELAXED),
					t->wr.snap_cap_dropped) - t->wr.nr_dropped_base;
	/* A snapshot without REC_AFTER ends at its trigger. */
	uint64_t frozen = snap_open(w) && w->snap_rec.window_end_ticks == w->snap_rec.trigger_ticks
				  ? snap_counted(w, __atomic_load_n(&t->own.nr_dropped_frozen,
								    __ATOMIC_RELAXED),
						 t->wr.snap_cap_frozen) - t->wr.frozen_base
				  : 0;

	dropped -= frozen < dropped ? frozen : dropped;
	return dropped;
}

/*
 * Encodes the slots [tail, stop) of a thread's ring piece by piece (a piece
 * capped so that a frame stays under its size limit), releasing each to the
 * producer and writing a frame when one is full or due. last: the thread
 * ended or the recording stops, so the piece ending at head is final.
 * Return: 0 or a negative errno.
 */
static int drain_pieces(struct writer *w, struct rec__thread *t, uint64_t tail, uint64_t stop,
			uint64_t head, bool last, uint64_t now_ticks, uint64_t group,
			uint64_t since_ns)
{
	int err = 0;

	while (stop != tail && !err) {
		uint64_t n = stop - tail;

		uint64_t written = 0, consumed = 0;
		bool held;

		if (t->reg.ctr) {
			/*
			 * A counted thread (REC_COUNTERS): whole groups of 1 + nr
			 * slots, an EVENTS block then its COUNTERS block, and no
			 * REC_MIN_NS filtering (README).
			 */
			if (t->wr.ctr_set_frame != w->seq + 1) {
				/* FORMAT.md §3.13: in every frame with the thread's
				 * COUNTERS blocks, so that a lost frame loses no
				 * counter names. */
				err = recfmt_encode_counter_set(&w->meta, t->reg.serial, t->reg.ctr->nr_req,
								t->reg.ctr->name, t->reg.ctr->flags);
				if (err)
					break;
				t->wr.ctr_set_frame = w->seq + 1;
			}
			if (n > PIECE_MAX_EVENTS)
				n = PIECE_MAX_EVENTS / group * group;
			err = encode_ring_counted(w, t, tail, tail + n, &written, &consumed);
		} else {
			if (n > PIECE_MAX_EVENTS)
				n = PIECE_MAX_EVENTS;
			/*
			 * A piece that holds events back ends at them: the next
			 * piece starts there (a piece longer than HOLD_MAX_EVENTS
			 * always consumes some), or, for the last piece, the next
			 * pass does. Only the last piece can be final (stop, flush,
			 * thread ended): an earlier one may end inside an activation.
			 */
			err = encode_ring(w, t, tail, tail + n, last && tail + n == head,
					  now_ticks, &written, &consumed);
		}
		/* REC_LIVE sees every event consumed, filtered or not. */
		if (w->live)
			rec__live_feed(w->live, t, tail, consumed, (uint32_t)group);
		held = tail + n == stop && consumed < n;
		tail += consumed;
		t->wr.nr_events_written += written;
		w->nr_events += written;
		rec__ring_release(&t->ring, tail); /* (D): the slots may be reused now */
		note_pending_since(w, since_ns);
		if (w->lead.len + w->meta.len + w->body.len - w->body_room >= FRAME_TARGET_BYTES ||
		    frame_due_in_pass(w, mono_ns()))
			write_frame(w);
		if (held)
			break;
	}
	return err;
}

/* What t did not record in this file, as last written, counted in c. */
static void add_capped(struct capped *c, const struct rec__thread *t)
{
	c->scopes += t->wr.nr_dropped_written;
	c->samples += t->wr.samples_dropped_reported;
	c->annots += t->wr.annots_dropped_reported;
	c->threads++;
}

/*
 * The thread's counts in this file, each when it changed: drops, REC_OVERFLOW
 * waits, annotations and samples not recorded, and its THREAD_END once it
 * ended. Each change, and the end, came after since_ns (drain_thread()): the
 * counts were read after it last time, and a thread seen alive then ended
 * after it. Return: 0 or a negative errno.
 */
static int write_thread_counts(struct writer *w, struct rec__thread *t, uint64_t dropped,
			       bool dead, uint64_t since_ns)
{
	int err = 0;

	if (dropped != t->wr.nr_dropped_written ||
	    t->wr.nr_filtered_written != t->wr.nr_filtered_reported) {
		/* The 1.1 nr_filtered field only when REC_MIN_NS is in force. */
		if (w->min_ticks)
			err = recfmt_encode_drops_filtered(&w->body, t->reg.serial, dropped,
							   t->wr.nr_filtered_written);
		else
			err = recfmt_encode_drops(&w->body, t->reg.serial, dropped);
		t->wr.nr_dropped_written = dropped;
		t->wr.nr_filtered_reported = t->wr.nr_filtered_written;
		note_pending_since(w, since_ns);
	}
	if (!err) {
		/* REC_OVERFLOW=block: this file's waits, when they changed (FORMAT.md §3.15). */
		struct recfmt_blocked b = {
			.thread = t->reg.serial,
			.nr_blocked = snap_counted(w, __atomic_load_n(&t->own.nr_blocked, __ATOMIC_RELAXED),
						   t->wr.snap_cap_blocked) - t->wr.nr_blocked_base,
			.blocked_ns = snap_counted(w, __atomic_load_n(&t->own.blocked_ns, __ATOMIC_RELAXED),
						   t->wr.snap_cap_blocked_ns) - t->wr.blocked_ns_base,
		};

		if (b.nr_blocked != t->wr.nr_blocked_reported || b.blocked_ns != t->wr.blocked_ns_reported) {
			err = recfmt_encode_blocked(&w->body, &b);
			t->wr.nr_blocked_reported = b.nr_blocked;
			t->wr.blocked_ns_reported = b.blocked_ns;
			note_pending_since(w, since_ns);
		}
	}
	if (!err) {
		/* Annotations dropped in this file, when changed (FORMAT.md §3.19). */
		uint64_t na = __atomic_load_n(&t->own.nr_annots_dropped, __ATOMIC_RELAXED) -
			      t->wr.annots_dropped_base;

		if (na != t->wr.annots_dropped_reported) {
			err = recfmt_encode_annot_drops(&w->body, t->reg.serial, na);
			t->wr.annots_dropped_reported = na;
			note_pending_since(w, since_ns);
		}
	}
	if (!err) {
		/* Samples not recorded in this file, when changed (FORMAT.md §3.24). */
		uint64_t ns = __atomic_load_n(&t->own.nr_samples_dropped, __ATOMIC_RELAXED) -
			      t->wr.samples_dropped_base;

		if (ns != t->wr.samples_dropped_reported) {
			err = recfmt_encode_sample_drops(&w->body, t->reg.serial, ns);
			t->wr.samples_dropped_reported = ns;
			note_pending_since(w, since_ns);
		}
	}
	if (!err && dead) {
		struct recfmt_thread_end te = {
			.thread = t->reg.serial,
			.nr_events = t->wr.nr_events_written,
			.nr_dropped = dropped,
			.has_filtered = w->min_ticks != 0,
			.nr_filtered = t->wr.nr_filtered_written,
		};

		err = recfmt_encode_thread_end(&w->body, &te);
		w->nr_dropped_exited += dropped;
		if (__atomic_load_n(&t->own.capped, __ATOMIC_RELAXED))
			add_capped(&w->capped, t);
		w->nr_filtered_exited += t->wr.nr_filtered_written;
		note_pending_since(w, since_ns);
	}
	return err;
}

/*
 * Drains one thread's ring, or a turn of it (below: then w->more is set).
 * Return: true if the ring was more than a quarter full (the writer is
 * behind: it should come back without sleeping, and compress fast).
 */
static bool drain_thread(struct writer *w, struct rec__thread *t, bool final, uint64_t now_ticks,
			 bool *ended)
{
	/*
	 * Every event below this head was recorded before now; those above
	 * it, drained next time, after: their age is measured from here
	 * (frame_due()), not from the start of a pass that may be long. Read
	 * before `dead`: a thread seen alive here ends after it, so its
	 * THREAD_END and last counts are younger too (write_thread_counts()).
	 */
	uint64_t head_ns = mono_ns();
	/* Pairs with the release store in thread_exit(): then head is final. */
	bool dead = __atomic_load_n(&t->reg.dead, __ATOMIC_ACQUIRE);
	/* REC_MODE=flight: a thread new since the snapshot began: hold its ring first. */
	uint64_t new_hold = snap_open(w) && t->ring.tail == REC__RING_FREE ? rec__flight_hold(t, 0) : 0;
	(void)new_hold;
	uint64_t head = rec__ring_peek(&t->ring); /* (C) */
	uint64_t since_ns = t->wr.drained_ns ? t->wr.drained_ns : w->prev_pass_ns;
	uint64_t tail = t->ring.tail;
	uint64_t dropped = thread_dropped(w, t);

	/* A snapshot holds its window only (flight.c); the ring is held from tail on. */
	if (snap_open(w))
		head = rec__flight_window_index(t, tail, head, w->snap_rec.window_end_ticks + 1);
	/* The ring that holds the slots below head (ring.h: growth): (G2) after (C). */
	uint64_t mask = rec__ring_view(&t->ring).mask;
	bool busy = head != tail && head - tail > (mask + 1) / 4;
	/* Slots an event takes: set before the thread was registered. */
	uint64_t group = t->reg.ctr ? 1 + (uint64_t)t->reg.ctr->nr : 1;
	/*
	 * A turn: at most an eighth of the ring at a time from a live thread
	 * (whole groups), so that after the writer was kept off the CPU every
	 * ring gets drained a little at once instead of the last one waiting
	 * for the others to be emptied (and filling up meanwhile): the pass
	 * comes back without sleeping for the rest (w->more). A stop or flush
	 * drains everything. Longer than HOLD_MAX_EVENTS, so that a turn
	 * always consumes some events (encode_ring()'s REC_MIN_NS hold-back):
	 * else a turn of young enters would be read again and again, the
	 * writer spinning and a blocked producer waiting, until they aged.
	 */
	uint64_t turn = (mask + 1) / 8;
	uint64_t stop = head;
	int err;

	if (turn < HOLD_MAX_EVENTS(mask))
		turn = HOLD_MAX_EVENTS(mask);
	turn = (turn + group) / group * group; /* whole groups, more than both */
	if (!final && !dead && head - tail > turn) {
		stop = tail + turn;
		w->more = true;
	} else {
		t->wr.drained_ns = head_ns; /* every event below head is drained */
	}
	err = drain_pieces(w, t, tail, stop, head, final || dead, now_ticks, group, since_ns);
	if (!err)
		err = write_thread_counts(w, t, dropped, dead, since_ns);
	if (err) {
		pthread_mutex_lock(&rec__g.lock);
		fail_locked(w, -err);
		pthread_mutex_unlock(&rec__g.lock);
	}
	*ended = dead;
	return busy;
}

/*
 * Under rec__g.lock: a THREAD record if the thread is new or was renamed,
 * by rec_thread_name() or, when that was not called, by the kernel's name
 * (comm) the writer read last.
 */
static void write_thread_locked(struct writer *w, struct rec__thread *t)
{
	const char *name = t->reg.named ? t->reg.name : t->wr.comm[0] ? t->wr.comm : NULL;
	bool comm_renamed = !t->reg.named && strcmp(t->wr.comm, t->wr.comm_written) != 0;

	if ((t->reg.name_gen != t->wr.name_gen_written || comm_renamed) &&
	    recfmt_encode_thread(&w->meta, t->reg.serial, t->reg.os_tid, name) == 0) {
		t->wr.name_gen_written = t->reg.name_gen;
		memcpy(t->wr.comm_written, t->wr.comm, sizeof(t->wr.comm));
	}
}

/*
 * Threads named with pthread_setname_np()/prctl(PR_SET_NAME) and not with
 * rec_thread_name(): their kernel name (comm) is what the program calls
 * them. A thread that never set one has the program's name, inherited:
 * that is no name (""), so that unnamed threads stay unnamed.
 */
#define COMM_PERIOD_NS 1000000000ull
static void set_comm(struct writer *w, struct rec__thread *t, const char *comm)
{
	char c[16];

	snprintf(c, sizeof(c), "%.15s", comm);
	c[strcspn(c, "\n")] = '\0';
	if (!strcmp(c, w->default_comm[0]) || !strcmp(c, w->default_comm[1]))
		c[0] = '\0';
	memcpy(t->wr.comm, c, sizeof(c));
}

/*
 * Outside the lock: reads /proc/self/task/TID/comm of the snapshot's live
 * threads when first seen and then once every COMM_PERIOD_NS, so that later
 * renames are picked up; one open/read/close each (a few microseconds).
 * Return: true if a thread's comm changed (a THREAD record is due).
 */
static bool read_comms(struct writer *w, size_t nr, uint64_t now_ns)
{
	bool changed = false;

	for (size_t i = 0; i < nr; i++) {
		struct rec__thread *t = w->snap[i];
		char path[64], buf[32], old[16];
		ssize_t k;
		int fd;

		if (!t || (t->wr.comm_read_ns && now_ns - t->wr.comm_read_ns < COMM_PERIOD_NS) ||
		    __atomic_load_n(&t->reg.dead, __ATOMIC_ACQUIRE))
			continue;
		t->wr.comm_read_ns = now_ns;
		snprintf(path, sizeof(path), "/proc/self/task/%u/comm", (unsigned)t->reg.os_tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		memcpy(old, t->wr.comm, sizeof(old));
		set_comm(w, t, buf);
		changed |= strcmp(old, t->wr.comm) != 0;
	}
	return changed;
}

/*
 * Under rec__g.lock: snapshot the registry and write THREAD records for new
 * or renamed threads. Threads are freed only by this thread, so the
 * snapshot stays valid after the lock is dropped.
 */
static size_t snapshot_locked(struct writer *w)
{
	size_t n = 0;

	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		if (n == w->snap_cap) {
			size_t cap = w->snap_cap ? w->snap_cap * 2 : 64;
			struct rec__thread **snap = realloc(w->snap, cap * sizeof(*snap));
			struct rec__thread **last = snap ? realloc(w->last, cap * sizeof(*last)) : NULL;

			if (snap)
				w->snap = snap;
			if (!last)
				break; /* the rest waits for the next pass */
			w->last = last;
			w->snap_cap = cap;
		}
		w->snap[n++] = t;
		write_thread_locked(w, t);
	}
	if (n)
		memcpy(w->last, w->snap, n * sizeof(*w->snap));
	w->nr_last = n;
	return n;
}

/*
 * Under rec__g.lock: unlink and free a thread whose ring is drained. It may
 * have been renamed since the snapshot: its last name goes in first.
 */
static void reap_locked(struct writer *w, struct rec__thread *dead)
{
	if (dead->own.exit_comm[0])
		set_comm(w, dead, dead->own.exit_comm); /* its name at exit (thread.c) */
	write_thread_locked(w, dead);
	rec__live_forget_thread(dead);
	rec__flight_forget_thread(dead);
	for (struct rec__thread **pp = &rec__g.threads; *pp; pp = &(*pp)->reg.next) {
		if (*pp == dead) {
			*pp = dead->reg.next;
			/* The writer's own memory: freed here, never in a child after
			 * fork (rec__writer_forget()). */
			recfmt_nest_fini(&dead->wr.nest);
			rec__thread_free(dead);
			return;
		}
	}
}

/*
 * At the end of the file, one line if REC_MEMORY cost records: what the
 * threads it refused a ring, or a larger one, did not record (rec(3),
 * REC_MEMORY). Their other drops (a ring at REC_BUFFER, full) are counted
 * too: the line says whose drops they are.
 */
static void end_capped(const struct capped *c)
{
	char pb[64];

	if (!c->scopes && !c->samples && !c->annots)
		return;
	snprintf(pb, sizeof(pb), "%zu", rec__g.cfg.memory_bytes);
	rec__log("REC_MEMORY (%s bytes) was reached: the %u thread%s it refused a ring or a larger "
		 "one dropped %llu scope%s, %llu sample%s and %llu annotation%s; raise REC_MEMORY "
		 "to keep them",
		 pb, c->threads, c->threads == 1 ? "" : "s", (unsigned long long)c->scopes,
		 c->scopes == 1 ? "" : "s", (unsigned long long)c->samples,
		 c->samples == 1 ? "" : "s", (unsigned long long)c->annots,
		 c->annots == 1 ? "" : "s");
}

static void write_end(struct writer *w)
{
	struct recfmt_sync sync;
	struct recfmt_end end = { 0 };
	uint64_t dropped = w->nr_dropped_exited, filtered = w->nr_filtered_exited;
	struct capped capped = w->capped;

	pthread_mutex_lock(&rec__g.lock);
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		dropped += t->wr.nr_dropped_written;
		filtered += t->wr.nr_filtered_written;
		if (__atomic_load_n(&t->own.capped, __ATOMIC_RELAXED))
			add_capped(&capped, t);
	}
	pthread_mutex_unlock(&rec__g.lock);
	end_capped(&capped);
	rec__clock_sync(rec__g.cfg.use_tsc, &sync);
	end.end_ticks = sync.ticks;
	end.nr_events = w->nr_events;
	end.nr_dropped = dropped;
	end.has_filtered = w->min_ticks != 0;
	end.nr_filtered = filtered;
	if (recfmt_encode_sync(&w->meta, &sync) || recfmt_encode_end(&w->body, &end)) {
		pthread_mutex_lock(&rec__g.lock);
		fail_locked(w, ENOMEM);
		pthread_mutex_unlock(&rec__g.lock);
	}
	write_frame(w);
}

/*
 * REC_MODE=flight: begins the snapshot of an accepted trigger (flight.c).
 * The writer starts a new file as at a start: numbering frames, sites,
 * modules, threads and counts afresh, the header's start at the window's
 * start; each ring's tail moves to its first event in the window, and the
 * drain of this pass and the next ones writes [window start, window end]
 * as stream mode writes (drain_thread() clips at the end).
 */
static void flight_begin(struct writer *w)
{
	uint64_t window_ticks, after_ticks, now_ticks, ws;
	struct recfmt_sync now;
	int fd;

	if (!rec__flight_take(&w->snap_rec, w->snap_reason, sizeof(w->snap_reason), &window_ticks,
			      &after_ticks))
		return;
	fd = rec__flight_open(w->snap_rec.number);
	if (fd < 0) {
		rec__flight_done(); /* logged; the recorder goes on */
		rec__flight_thaw(); /* and its rings discard again */
		return;
	}
	rec__clock_sync(rec__g.cfg.use_tsc, &now);
	now_ticks = now.ticks;
	ws = w->snap_rec.trigger_ticks > window_ticks ? w->snap_rec.trigger_ticks - window_ticks : 0;
	w->snap_rec.window_start_ticks = ws;
	w->snap_rec.window_end_ticks = w->snap_rec.trigger_ticks + after_ticks;
	/* The window's start as a sync point, from now back at the calibrated rate. */
	{
		uint64_t back_ns = now_ticks > ws ? (uint64_t)((unsigned __int128)(now_ticks - ws) *
							       1000000000u / w->ticks_per_second)
						  : 0;

		w->file_start.ticks = ws;
		w->file_start.mono_ns = now.mono_ns - (back_ns < now.mono_ns ? back_ns : now.mono_ns);
		w->file_start.real_ns = now.real_ns - (back_ns < now.real_ns ? back_ns : now.real_ns);
	}
	w->calibration = now;
	w->seq = 0;
	w->nr_sites_written = 0;
	rec__modules_fini(&w->modules);
	memset(&w->modules, 0, sizeof(w->modules));
	w->nr_sites_scanned = 0;
	w->nr_events = 0;
	w->nr_dropped_exited = w->nr_filtered_exited = 0;
	frame_reset(w);
	w->pending_since_ns = 0;
	w->last_sync_ns = now.mono_ns;
	w->mode = WM_SNAPSHOT;
	rec__g.fd = fd;
	if (rec__fd_remember(fd, &rec__g.fd_id) < 0)
		rec__g.fd_id = (struct rec__fd_id){ 0 }; /* never matches: nothing written */
	w->file_bytes = 0;
	pthread_mutex_lock(&rec__g.lock);
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		/* Hold the ring (its producer stops discarding there), then read head. */
		uint64_t lo = rec__flight_hold(t, 0), head = rec__ring_peek(&t->ring); /* (C) */

		rec__ring_release(&t->ring, rec__flight_window_index(t, lo, head, ws)); /* (D) */
		t->wr.nr_dropped_written = 0;
		t->wr.nr_events_written = 0;
		t->wr.nr_filtered_written = t->wr.nr_filtered_reported = 0;
		t->wr.nr_blocked_reported = t->wr.blocked_ns_reported = 0;
		t->wr.name_gen_written = 0;
		t->wr.comm_written[0] = '\0';
		t->wr.ctr_set_frame = 0;
		t->wr.drained_ns = 0;
		recfmt_nest_reset(&t->wr.nest); /* the snapshot's file starts with nothing open */
		write_thread_locked(w, t);
	}
	pthread_mutex_unlock(&rec__g.lock);
	rec__flight_thaw(); /* every ring holds its window now */
	note_pending(w);
}

/*
 * REC_MODE=flight: ends the snapshot being written (its last pass has
 * drained every ring up to the window's end) and goes back to keeping the
 * rings. Drops and waits of the next snapshot count from here.
 */
static void flight_end(struct writer *w)
{
	write_end(w);
	rec__fd_close(&rec__g.fd, &rec__g.fd_id);
	w->mode = WM_KEEPING;
	pthread_mutex_lock(&rec__g.lock);
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		/* Written: no later snapshot holds them again. Then its producer
		 * discards its oldest events again. */
		if (t->ring.tail != REC__RING_FREE)
			t->wr.flight_floor = t->ring.tail;
		rec__flight_free(t);
		t->wr.nr_dropped_base = __atomic_load_n(&t->ring.p.nr_dropped, __ATOMIC_RELAXED);
		t->wr.frozen_base = __atomic_load_n(&t->own.nr_dropped_frozen, __ATOMIC_RELAXED);
		t->wr.nr_blocked_base = __atomic_load_n(&t->own.nr_blocked, __ATOMIC_RELAXED);
		t->wr.blocked_ns_base = __atomic_load_n(&t->own.blocked_ns, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&rec__g.lock);
	rec__flight_done();
}

/*
 * Asks the scheduler for a short time slice (Linux >= 6.12, EEVDF: the
 * sched_runtime of a SCHED_OTHER thread). An earlier virtual deadline lets
 * the writer preempt a CPU-bound thread soon after it wakes, instead of
 * waiting for that thread's slice to end, without a larger share of the
 * CPU and without privileges. Only when the writer runs under SCHED_OTHER
 * (it inherits the policy of the thread that created it: the one that
 * loaded librec, or called rec_start() after rec_stop(); a host's
 * choice of batch, idle or real-time stays), keeping its nice value; on
 * older kernels the call changes nothing or fails, and either is fine.
 */
static void ask_short_slice(void)
{
	struct {
		uint32_t size, sched_policy;
		uint64_t sched_flags;
		int32_t sched_nice;
		uint32_t sched_priority;
		uint64_t sched_runtime, sched_deadline, sched_period;
		uint32_t sched_util_min, sched_util_max;
	} attr = { 0 };

	if (syscall(SYS_sched_getattr, 0, &attr, (unsigned)sizeof(attr), 0) != 0 ||
	    attr.sched_policy != SCHED_OTHER)
		return;
	attr.size = (uint32_t)sizeof(attr);
	attr.sched_flags = 0;
	attr.sched_runtime = WRITER_SLICE_NS;
	syscall(SYS_sched_setattr, 0, &attr, 0);
}

/*
 * A task's state letter from its stat file ('R', 'S', 'Z', ...): 'X' when
 * the task is gone, '?' when it could not be read (then it counts as alive).
 */
static char task_state(const char *path)
{
	char buf[512];
	const char *p;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 'X' : '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno == ESRCH ? 'X' : '?';
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* after the name, which may hold anything */
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/*
 * Whether every thread of the host has ended and only librec's (this
 * writer) is left: main() ended with pthread_exit() and the threads it left
 * have all returned since. glibc would call exit(0) when its last thread
 * ends, but it counts the writer as one of them: the process would never end
 * (and, every signal blocked here, not even at a SIGTERM). Cheap in the
 * common case: while the main thread lives (it is not a zombie, 'Z' in
 * /proc/self/stat), one read says no. After it ended, /proc/self/task is
 * listed until a live thread other than this one is found. A task that
 * cannot be read counts as alive: never an exit while the host runs.
 */
static bool host_gone(void)
{
	pid_t me = (pid_t)syscall(SYS_gettid);
	char path[64], st;
	struct dirent *e;
	bool gone = true;
	DIR *d;

	/* The main thread's own stat: not the process's, which sums every thread. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
	st = task_state(path);
	if (st != 'Z' && st != 'X')
		return false;
	d = opendir("/proc/self/task");
	if (!d)
		return false;
	while (gone && (e = readdir(d))) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0 || tid == me || tid == (long)getpid() ||
		    rec__thread_is_runtime((pid_t)tid))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
		st = task_state(path);
		gone = st == 'Z' || st == 'X';
	}
	closedir(d);
	return gone;
}

/*
 * The signal mask of the thread that created the writer: restored before
 * the writer calls exit() for a host whose threads have all ended, as if
 * its last thread did (a SIGTERM pending then ends the process).
 */
static sigset_t creator_mask;

/*
 * The host's threads have all ended (host_gone()): the process ends as
 * POSIX says, exit(0) from its last thread, here. The trace is finished
 * first, as rec_stop() at exit would (the caller's passes wrote its END):
 * exit()'s handlers then run on this thread, the host's first, then
 * librec's, which find recording stopped and join nothing.
 */
static __attribute__((noreturn)) void exit_for_host(void)
{
	pthread_sigmask(SIG_SETMASK, &creator_mask, NULL);
	exit(0);
}

/* Under no lock, on the writer: the stop that rec_stop() makes, from here. */
static void stop_orphaned(struct writer *w)
{
	pthread_mutex_lock(&rec__g.lock);
	if (rec__g.state == REC__RUNNING)
		__atomic_store_n(&rec__g.state, REC__STOPPED, __ATOMIC_RELEASE);
	rec__thread_set_all_off();
	rec__g.stop_requested = true;
	rec__g.writer_running = false; /* exit's rec_stop() joins nothing */
	pthread_mutex_unlock(&rec__g.lock);
	w->orphaned = true;
}

/*
 * The writer thread's life. It is created parked (at load, in a child after
 * fork that will record, or by rec__writer_start() when none is parked),
 * so that a recording started by a probe in a signal handler creates no
 * thread and allocates nothing there: the probe only says go. It then runs
 * one recording and ends; rec__writer_stop() joins it. At exit a thread
 * still parked is told to quit and joined (rec__writer_retire()).
 */
enum writer_cmd { CMD_PARK = 0, CMD_GO, CMD_QUIT };
static int writer_cmd;	   /* enum writer_cmd; under rec__g.lock */
static bool writer_parked; /* a parked thread exists; under rec__g.lock */

/* The writer thread, parked: wait under rec__g.lock for go or quit. */
static int wait_for_cmd(void)
{
	int cmd;

	pthread_mutex_lock(&rec__g.lock);
	while ((cmd = writer_cmd) == CMD_PARK) {
		uint32_t seen = __atomic_load_n(&rec__g.wake_seq, __ATOMIC_ACQUIRE);
		struct timespec check = { HOST_CHECK_PARKED_S, 0 };

		pthread_mutex_unlock(&rec__g.lock);
		/* A wake after the load above changes wake_seq: the wait returns. */
		if (syscall(SYS_futex, &rec__g.wake_seq, FUTEX_WAIT_PRIVATE, seen, &check, NULL, 0) <
			    0 &&
		    errno == ETIMEDOUT && host_gone()) {
			pthread_mutex_lock(&rec__g.lock);
			if (writer_cmd == CMD_PARK) {
				/* Nothing recorded, nothing to finish: at exit, nothing starts. */
				writer_parked = false;
				writer_cmd = CMD_QUIT;
				if (rec__g.state == REC__NEVER_STARTED)
					__atomic_store_n(&rec__g.state, REC__STOPPED, __ATOMIC_RELEASE);
				pthread_mutex_unlock(&rec__g.lock);
				exit_for_host();
			}
			pthread_mutex_unlock(&rec__g.lock);
		}
		pthread_mutex_lock(&rec__g.lock);
	}
	pthread_mutex_unlock(&rec__g.lock);
	return cmd;
}

/*
 * Once told to go: what a recording needs before its first pass, set up on
 * this thread (the starter may be a signal handler). The configuration and
 * the file were set under rec__g.lock before the go.
 */
static void writer_begin(struct writer *w)
{
	/*
	 * REC_FLUSH_MS as a bound on a busy machine: a record made at t is
	 * drained by the next pass (at most a quarter of REC_FLUSH_MS later),
	 * and its frame is written once pending_since_ns (<= t) is a quarter
	 * of REC_FLUSH_MS old, at an absolute deadline. So it is in the file
	 * by t + REC_FLUSH_MS / 4 + the time the writer waits for a CPU and
	 * writes: three quarters of REC_FLUSH_MS are the slack for that
	 * (README and DESIGN.md give the figures measured under load).
	 * Raising the writer's priority needs privileges, and with them would
	 * take CPU from the host's threads at moments it did not choose; a
	 * short slice (ask_short_slice()) needs neither.
	 */
	uint64_t flush_ns = (uint64_t)rec__g.cfg.flush_ms * 1000000u;

	w->poll_active_ns = flush_ns / 4 < POLL_ACTIVE_NS ? flush_ns / 4 : POLL_ACTIVE_NS;
	w->poll_idle_ns = flush_ns / 4 < POLL_IDLE_NS ? flush_ns / 4 : POLL_IDLE_NS;
	w->mode = rec__g.cfg.flight ? WM_KEEPING : WM_STREAM;
	if (w->mode == WM_STREAM) {
		/* A stream that follows an earlier program's recording in the same
		 * file (lifecycle.c, open_one()) starts where that one ended. */
		off_t at;

		pthread_mutex_lock(&rec__g.lock);
		at = rec__g.fd >= 0 ? lseek(rec__g.fd, 0, SEEK_CUR) : -1;
		pthread_mutex_unlock(&rec__g.lock);
		if (at > 0)
			w->file_bytes = (uint64_t)at;
	}
	w->zc = recfmt_compressor_create(1);
	if (!w->zc) {
		pthread_mutex_lock(&rec__g.lock);
		fail_locked(w, ENOMEM);
		pthread_mutex_unlock(&rec__g.lock);
	}
	if (rec__g.cfg.live_ns)
		w->live = rec__live_create(rec__g.cfg.live_ns, rec__g.cfg.use_tsc);
	calibrate(w);
	if (rec__g.cfg.flight)
		rec__flight_calibrated(w->ticks_per_second);
	/*
	 * A thread that names itself differs from the name exec gave the
	 * program: the executed file's base name (argv[0]'s, or the file's
	 * when argv[0] was changed, as Criterion's workers do).
	 */
	snprintf(w->default_comm[0], sizeof(w->default_comm[0]), "%.15s",
		 program_invocation_short_name);
	{
		char exe[4096];
		ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[k > 0 ? k : 0] = '\0';
		snprintf(w->default_comm[1], sizeof(w->default_comm[1]), "%.15s",
			 strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
	}
	w->last_sync_ns = rec__g.start_sync.mono_ns;
	w->due_ns = flush_ns / 4;
	w->pass_ns = rec__g.start_sync.mono_ns; /* no record is older */
	w->duty_wall_ns = mono_ns();
	w->duty_cpu_ns = thread_cpu_ns();
	w->fast = rec__writer_want_fast(false, false, 0, 0); /* normal (tests: fast) */
}

/* What one pass saw at its start and found on its way. */
struct pass {
	uint64_t flush_req;	   /* the rec_flush() generation this pass acknowledges */
	uint64_t nr_events_before; /* w->nr_events at the start */
	uint64_t now_ticks;	   /* the clock when the drain began */
	size_t nr;		   /* threads in w->snap */
	bool final;		   /* drain everything: a stop, flush or a snapshot's last pass */
	bool busy;		   /* a ring was behind, or flight mode has work waiting */
	uint32_t seen;		   /* rec__g.wake_seq when the pass began (pass_sleep()) */
};

/* This pass is the writer's last (the table above writer_pass()). */
static bool is_stopping(const struct writer *w)
{
	return w->stop == WS_STOPPING || w->stop == WS_STOPPING_FINAL;
}

/*
 * Pass start: the requests (stop, flush) made since the last pass.
 * rec__g.lock is tried, never waited for, in a pass: a producer holding it
 * (attaching, naming itself) may be off the CPU with it for hundreds of ms
 * when every core is busy, and a pass that waited for it wrote nothing
 * meanwhile (bench_flush_lag, issue 26 item 9). Busy: a stop or flush
 * asked for meanwhile is seen by the next pass, and the threads drained
 * are the last snapshot's (pass_threads()).
 */
static void read_requests(struct writer *w, struct pass *p)
{
	p->flush_req = rec__g.flush_done; /* written by this thread only */
	if (pthread_mutex_trylock(&rec__g.lock) == 0) {
		if (rec__g.stop_requested)
			w->stop = w->stop == WS_DEFERRED || w->stop == WS_STOPPING_FINAL
					  ? WS_STOPPING_FINAL
					  : WS_STOPPING;
		p->flush_req = rec__g.flush_requested;
		pthread_mutex_unlock(&rec__g.lock);
	}
}

/*
 * Pass start, REC_MODE=flight: an accepted trigger begins its snapshot;
 * one open has its last pass when this pass starts after its window's end
 * (every event up to it is in the rings then), or at stop.
 */
static void flight_advance(struct writer *w)
{
	if (w->mode == WM_KEEPING)
		flight_begin(w);
	if (w->mode == WM_SNAPSHOT &&
	    (is_stopping(w) || rec__clock_now(rec__g.cfg.use_tsc) > w->snap_rec.window_end_ticks)) {
		pthread_mutex_lock(&rec__g.lock);
		snap_cap_locked();
		pthread_mutex_unlock(&rec__g.lock);
		w->mode = WM_SNAPSHOT_LAST;
	}
}

/*
 * The threads this pass drains, into w->snap, with THREAD records for the
 * new and the renamed. Return: how many.
 */
static size_t pass_threads(struct writer *w)
{
	size_t nr;

	if (pthread_mutex_trylock(&rec__g.lock) == 0) {
		nr = snapshot_locked(w);
		pthread_mutex_unlock(&rec__g.lock);
	} else {
		nr = w->nr_last; /* threads registered meanwhile wait for the next pass */
		if (nr)
			memcpy(w->snap, w->last, nr * sizeof(*w->snap));
	}
	if (read_comms(w, nr, w->pass_ns)) {
		pthread_mutex_lock(&rec__g.lock);
		for (size_t i = 0; i < nr; i++)
			if (w->snap[i])
				write_thread_locked(w, w->snap[i]);
		pthread_mutex_unlock(&rec__g.lock);
		note_pending(w);
	}
	return nr;
}

/*
 * REC_COUNTERS: a live thread's group leader still librec's descriptor
 * (counters.c), checked before its drain, so that rec_flush() returning
 * means the check ran. One line for the first group lost, per process.
 */
static void check_counters(struct rec__thread *t)
{
	static bool said;
	int why;

	if (!t->reg.ctr || __atomic_load_n(&t->reg.dead, __ATOMIC_ACQUIRE))
		return;
	why = rec__counters_check(t->reg.ctr);
	if (!why || said)
		return;
	said = true;
	if (why == REC__CTR_NOT_OURS)
		rec__log("REC_COUNTERS: the program closed or replaced librec's counter descriptor "
			 "%d (thread %u): librec no longer reads it; that thread's counters are 0 "
			 "from then on",
			 t->reg.ctr->fd[0], t->reg.os_tid);
	else
		rec__log("REC_COUNTERS: thread %u's counters could not be read: 0 from then on",
			 t->reg.os_tid);
}

/*
 * Drains (or, in WM_KEEPING, keeps) every thread of the pass. Exited
 * threads first: their rings are freed as soon as they are drained, and a
 * starved writer must not let them pile up behind the live ones (REC_MEMORY,
 * mem.c). Threads seen alive in the first round are drained in
 * the second. Return: false if a crash handler took the writer's state
 * (crash.c): the thread must end at once.
 */
static bool drain_threads(struct writer *w, struct pass *p)
{
	bool flight = w->mode != WM_STREAM, keeping = w->mode == WM_KEEPING;

	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < p->nr; i++) {
			bool ended = false;

			if (!w->snap[i] ||
			    (round == 0 && !__atomic_load_n(&w->snap[i]->reg.dead, __ATOMIC_ACQUIRE)))
				continue;
			if (!rec__crash_writer_enter())
				return false;
			/* Rings its producer left (ring.h: growth, (G3)); no view of them is in use. */
			for (uintptr_t seg; (seg = rec__ring_take_retired(&w->snap[i]->ring));)
				rec__mem_put(seg);
			if (flight) {
				struct rec__thread *t = w->snap[i];
				bool dead = __atomic_load_n(&t->reg.dead, __ATOMIC_ACQUIRE);

				if (keeping)
					ended = rec__flight_keep(t, dead, p->now_ticks);
				else
					rec__flight_scan_held(t);
			}
			if (round == 1)
				check_counters(w->snap[i]);
			if (!keeping)
				p->busy |= drain_thread(w, w->snap[i], p->final, p->now_ticks, &ended);
			if (ended) {
				pthread_mutex_lock(&rec__g.lock);
				reap_locked(w, w->snap[i]);
				pthread_mutex_unlock(&rec__g.lock);
				w->last[i] = NULL; /* freed: w->last is w->snap's copy */
			}
			w->snap[i] = NULL;
			/* A long pass does not hold back what is due; with no
			 * snapshot open (keeping) there is no file to write. */
			if (!keeping && frame_due_in_pass(w, mono_ns()))
				write_frame(w);
		}
	}
	return true;
}

/*
 * New function sites may need a module loaded since the last scan: record
 * it now, so that a library closed soon after its functions ran is still
 * named (the scan costs one callback when nothing was loaded or unloaded).
 * Flight mode also keeps a crash snapshot's modules ready before any crash
 * (one loader callback a pass when nothing was loaded).
 */
static void scan_modules(struct writer *w)
{
	if (rec__site_count() != w->nr_sites_scanned) {
		w->nr_sites_scanned = rec__site_count();
		if (rec__modules_add_snaps(&w->modules, &w->meta, rec__site_nr_snaps(),
					   rec__site_snap) == 0 &&
		    rec__modules_scan(&w->modules, &w->meta) == 0)
			note_pending(w);
	}
	if (w->mode != WM_STREAM && rec__modules_add_snaps(&w->crash_modules, &w->crash_modrec,
							   rec__site_nr_snaps(), rec__site_snap) == 0)
		rec__modules_scan(&w->crash_modules, &w->crash_modrec);
}

/* Pressure (rec__writer_want_fast()): behind now, or busy over the window that just ended. */
static void judge_pressure(struct writer *w, bool behind, uint64_t now)
{
	if (now - w->duty_wall_ns >= DUTY_WINDOW_NS) {
		uint64_t cpu = thread_cpu_ns();

		w->fast = rec__writer_want_fast(w->fast, behind, cpu - w->duty_cpu_ns,
						now - w->duty_wall_ns);
		w->duty_wall_ns = now;
		w->duty_cpu_ns = cpu;
	} else {
		w->fast = rec__writer_want_fast(w->fast, behind, 0, 0);
	}
}

/* A SYNC record every SYNC_PERIOD_NS while a file is written. */
static void sync_if_due(struct writer *w, uint64_t now)
{
	struct recfmt_sync sync;

	if (now - w->last_sync_ns < SYNC_PERIOD_NS || w->mode == WM_KEEPING)
		return;
	rec__clock_sync(rec__g.cfg.use_tsc, &sync);
	if (recfmt_encode_sync(&w->meta, &sync) == 0)
		note_pending(w);
	w->last_sync_ns = now;
}

/*
 * Pass end, the file's side: a frame when one is due or asked for; at stop
 * the END record; in flight mode, the snapshot's end after its last pass.
 */
static void pass_write(struct writer *w, struct pass *p, uint64_t now)
{
	if (w->mode == WM_STREAM) {
		if (is_stopping(w))
			write_end(w);
		else if (w->seq == 0 || p->flush_req != rec__g.flush_done || frame_due(w, now))
			/* flush_done is only written by this thread: reading it unlocked is safe. */
			write_frame(w);
		return;
	}
	if (w->mode == WM_SNAPSHOT_LAST)
		flight_end(w);
	else if (w->mode == WM_SNAPSHOT && (p->flush_req != rec__g.flush_done || frame_due(w, now)))
		write_frame(w);
	if (w->mode == WM_KEEPING) {
		/* Between snapshots nothing is written: records made for the
		 * file (THREAD, MODULE) are made again at the next begin. */
		frame_reset(w);
		w->pending_since_ns = 0;
	}
	/* A trigger to begin, or a rec_flush() waiting for a snapshot. */
	p->busy |= rec__flight_pending();
	if (is_stopping(w))
		rec__flight_stopped();
}

/*
 * Pass end: acknowledge the flush this pass served (busy: a later pass
 * will), then sleep until the next poll, the deadline of what is pending,
 * or a wake-up -- unless there is work left. Return: true if it slept
 * until its time (no wake-up ended the wait).
 */
static bool pass_sleep(struct writer *w, const struct pass *p, uint64_t poll_ns)
{
	bool locked = pthread_mutex_trylock(&rec__g.lock) == 0, sleep;
	uint64_t flush_req = p->flush_req;
	/*
	 * The wake-up count as the pass began, not as it ends: a producer
	 * wakes the writer once per drain of its ring (probe.c,
	 * room_or_sleep()), and a wake made during this pass, after the drain
	 * had passed that ring, was lost when read here at the end: the ring
	 * filled while the writer slept to its next poll (25 ms at the first
	 * pass). A wake since the pass began makes the wait return at once.
	 */
	uint32_t seen;

	if (locked) {
		/* REC_MODE=flight: rec_flush() returns once the snapshots accepted before it are written. */
		bool held = w->mode != WM_STREAM && !is_stopping(w) && (snap_open(w) || p->busy);

		if (held)
			flush_req = rec__g.flush_done; /* acknowledged by a later pass */
		if (flush_req != rec__g.flush_done) {
			rec__g.flush_done = flush_req;
			pthread_cond_broadcast(&rec__g.flushed);
		}
		seen = p->seen;
		sleep = !is_stopping(w) && !p->busy && !w->more && !rec__g.stop_requested &&
			(rec__g.flush_requested == rec__g.flush_done || held);
		pthread_mutex_unlock(&rec__g.lock);
	} else {
		seen = p->seen;
		sleep = !is_stopping(w) && !p->busy && !w->more;
	}
	rec__crash_writer_leave();
	if (sleep) {
		/*
		 * Until an absolute CLOCK_MONOTONIC time, so that being
		 * descheduled before the call does not push the wake-up
		 * later: the next poll, or the deadline of what is pending.
		 */
		uint64_t wake_ns = locked ? w->pass_ns + poll_ns : mono_ns() + w->poll_active_ns;

		if (w->pending_since_ns && w->pending_since_ns + w->due_ns < wake_ns)
			wake_ns = w->pending_since_ns + w->due_ns;
		struct timespec at = { (time_t)(wake_ns / 1000000000u), (long)(wake_ns % 1000000000u) };
		return syscall(SYS_futex, &rec__g.wake_seq, FUTEX_WAIT_BITSET_PRIVATE, seen, &at,
			       NULL, FUTEX_BITSET_MATCH_ANY) < 0 &&
		       errno == ETIMEDOUT;
	}
	return false;
}

/*
 * rec__writer_test_sleep() - tests only (test_writer_wake.c): the end of
 * an idle pass of a stream writer, as writer_pass() runs it: the wake-up
 * count read as the pass begins, during() called (the pass's work, where
 * a producer may wake the writer), then pass_sleep() with poll_ns.
 * Return: pass_sleep()'s (true: it slept until the poll).
 */
bool rec__writer_test_sleep(void (*during)(void), uint64_t poll_ns)
{
	struct writer *w = calloc(1, sizeof(*w));
	struct pass p = { .flush_req = rec__g.flush_done };
	bool slept;

	if (!w)
		abort();
	p.seen = __atomic_load_n(&rec__g.wake_seq, __ATOMIC_ACQUIRE);
	w->pass_ns = mono_ns();
	w->poll_active_ns = poll_ns;
	during();
	slept = pass_sleep(w, &p, poll_ns);
	free(w);
	return slept;
}

/*
 * rec__writer_refill_largest() - the largest ring rec__mem_refill() may
 * fault in for the pool after a pass: any size when the writer is idle
 * (the pass found no event, and it is out of pressure: !fast), else only
 * the sizes up to REFILL_BUSY_MAX_RING_BYTES. Faulting the large ones in
 * is work that can wait for an idle writer (a thread that fills its ring
 * meanwhile maps its own), and on a busy machine 512 KiB of it took a
 * writer kept off the CPU 10 ms.
 */
size_t rec__writer_refill_largest(bool fast, bool found_events)
{
	return !fast && !found_events ? SIZE_MAX : REFILL_BUSY_MAX_RING_BYTES;
}

/*
 * One pass: read the requests, move the flight state, drain every ring,
 * write what is due, sleep. The steps in order are the state table's
 * (above struct writer). Return: false if the thread must end at once (a
 * crash handler took its state).
 */
static bool writer_pass(struct writer *w)
{
	struct pass p = { .nr_events_before = w->nr_events };
	uint64_t now, poll_ns;

	w->more = false;
	p.seen = __atomic_load_n(&rec__g.wake_seq, __ATOMIC_ACQUIRE); /* pass_sleep() */
	/* A crash handler may be writing our state (crash.c): wait, or quit. */
	if (!rec__crash_writer_enter())
		return false;
	if (!w->body_room_tried)
		body_room_make(w);
	w->prev_pass_ns = w->pass_ns;
	w->pass_ns = mono_ns();
	read_requests(w, &p);
	if (w->mode != WM_STREAM)
		flight_advance(w);
	p.nr = pass_threads(w);
	/* REC_MIN_NS hold-back: never past a stop or a flush (rec_flush()'s promise). */
	p.final = is_stopping(w) || p.flush_req != rec__g.flush_done || w->mode == WM_SNAPSHOT_LAST;
	p.now_ticks = rec__clock_now(rec__g.cfg.use_tsc);
	if (rec__sample_hz()) {
		/*
		 * REC_SAMPLE: the modules loaded now, before the samples that
		 * may lie in them (FORMAT.md §3.23); nothing when none changed.
		 */
		size_t meta_len = w->meta.len;

		if (rec__modules_scan(&w->modules, &w->meta) == 0 && w->meta.len != meta_len)
			note_pending(w);
		rec__sample_reap();
	}
	if (!drain_threads(w, &p))
		return false;
	/* A trigger this last pass found (REC_TRIGGER) is written by one more (once). */
	if (w->stop == WS_STOPPING && w->mode == WM_KEEPING && rec__flight_pending())
		w->stop = WS_DEFERRED;
	scan_modules(w);
	now = mono_ns();
	judge_pressure(w, p.busy, now);
	poll_ns = w->nr_events != p.nr_events_before ? w->poll_active_ns : w->poll_idle_ns;
	rec__crash_rearm(now);
	sync_if_due(w, now);
	if (w->live) {
		uint64_t next = rec__live_tick(w->live, now);

		if (next < poll_ns)
			poll_ns = next;
	}
	pass_write(w, &p, now);
	/*
	 * The pool of rings, ahead of the threads that attach or grow (mem.c),
	 * a little at a time and only after a pass that left no ring behind:
	 * faulting rings in must not keep the writer from a thread that
	 * records flat out. The large sizes only after a pass that found no
	 * event, out of pressure (rec__writer_refill_largest()); the small
	 * ones (threads that attach) at every pass that left no ring behind.
	 */
	if (!p.busy && !w->more)
		rec__mem_refill(REFILL_BYTES,
				rec__writer_refill_largest(w->fast,
							   w->nr_events != p.nr_events_before));
	pass_sleep(w, &p, poll_ns);
	return true;
}

static void writer_free(struct writer *w);

/*
 * How far the running recording's writer got in its end, for
 * rec__writer_wait_end() (a futex word, reset at each go and in a child
 * after fork): END_WRITTEN once its last pass wrote the end marker (or it
 * failed and wrote what it could), END_DONE once the file is final (its
 * recompression, compact.c, done).
 */
enum { END_RUNNING = 0, END_WRITTEN, END_DONE };
static uint32_t writer_end;

static void end_reached(uint32_t phase)
{
	__atomic_store_n(&writer_end, phase, __ATOMIC_RELEASE);
	syscall(SYS_futex, &writer_end, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits until writer_end reaches phase or CLOCK_MONOTONIC by_ns. Return: whether it did. */
static bool wait_end(uint32_t phase, uint64_t by_ns)
{
	uint32_t v;

	while ((v = __atomic_load_n(&writer_end, __ATOMIC_ACQUIRE)) < phase) {
		uint64_t now = mono_ns();
		struct timespec left;

		if (now >= by_ns)
			return false;
		left.tv_sec = (time_t)((by_ns - now) / 1000000000u);
		left.tv_nsec = (long)((by_ns - now) % 1000000000u);
		syscall(SYS_futex, &writer_end, FUTEX_WAIT_PRIVATE, v, &left, NULL, 0);
	}
	return true;
}

/*
 * rec__writer_wait_end() - after stop_requested was set, without rec__g.lock:
 * _exit()'s wait (lifecycle.c, rec__exit_end()), bounded where
 * rec__writer_stop() joins: for the end marker until end_by_ns, then for
 * the file to be final until final_by_ns (CLOCK_MONOTONIC). Joins nothing
 * and frees nothing: the process ends next. Return: whether the end marker
 * was written in time.
 */
bool rec__writer_wait_end(uint64_t end_by_ns, uint64_t final_by_ns)
{
	if (!wait_end(END_WRITTEN, end_by_ns))
		return false;
	wait_end(END_DONE, final_by_ns);
	return true;
}

/* The writer thread: parked until go, then passes until the stop's last. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;

	/* So that top, perf and debuggers show which thread is ours. */
	pthread_setname_np(pthread_self(), "rec-writer");
	ask_short_slice();
	/* Never a traced thread: probes and hooks on it record nothing. */
	rec__in_librec = 1;
	rec__sample_never_me(); /* nor sampled */
	if (wait_for_cmd() == CMD_QUIT)
		return NULL;
	writer_begin(w);
	w->host_check_ns = mono_ns();
	while (!is_stopping(w)) {
		if (!writer_pass(w))
			return NULL;
		if (!w->orphaned && w->pass_ns - w->host_check_ns >= HOST_CHECK_NS) {
			w->host_check_ns = w->pass_ns;
			if (host_gone())
				stop_orphaned(w); /* the next passes write the end */
		}
	}
	end_reached(END_WRITTEN);
	/* What the writer shed under pressure it redoes now (compact.c). */
	if (!rec__g.cfg.flight && !w->failed)
		rec__compact_run(&w->compact, w->zc, rec__g.fd, rec__g.cfg.output);
	end_reached(END_DONE);
	if (w->orphaned) {
		/* What rec_stop() does once it joined us, then the host's exit. */
		writer_free(w);
		pthread_mutex_lock(&rec__g.lock);
		rec__fd_close(&rec__g.fd, &rec__g.fd_id);
		rec__g.flush_done = rec__g.flush_requested;
		pthread_cond_broadcast(&rec__g.flushed);
		pthread_mutex_unlock(&rec__g.lock);
		exit_for_host();
	}
	return NULL;
}

static struct writer writer_state;

/* crash.c, with this thread stopped by the hand-shake: see rec__crash_view. */
void rec__writer_crash_view(struct rec__crash_view *v)
{
	const struct writer *w = &writer_state;

	v->meta = &w->meta;
	v->body = &w->body;
	v->body_room = w->body_room;
	v->seq = w->seq;
	v->nr_sites_written = w->nr_sites_written;
	v->nr_events = w->nr_events;
	v->nr_dropped_exited = w->nr_dropped_exited;
	v->nr_filtered_exited = w->nr_filtered_exited;
	v->ticks_per_second = w->ticks_per_second;
	v->min_ticks = w->min_ticks;
	v->nr_annot_names_written = w->nr_annot_names_written;
	v->clock_step_ticks = w->clock_step_ticks;
	v->snap_open = snap_open(w);
	v->snap_window_end_ticks = w->snap_rec.window_end_ticks;
	v->snap_start = &w->file_start;
	v->snap_rec = &w->snap_rec;
	v->failed = w->failed;
	v->modules = w->crash_modules.scanned ? &w->crash_modrec : NULL;
}

/*
 * rec__writer_forget() - in a child after fork(): the writer thread does
 * not exist here (running or parked), but its buffers were copied. They
 * cannot be freed safely (the parent's writer may have been between a
 * realloc and storing its result), so they are set aside, still reachable,
 * and never touched again.
 */
static struct writer inherited __attribute__((used));

void rec__writer_forget(void)
{
	if (rec__g.writer_running)
		inherited = writer_state;
	memset(&writer_state, 0, sizeof(writer_state));
	writer_parked = false;
	writer_cmd = CMD_PARK;
	writer_end = END_RUNNING;
}

/*
 * Under rec__g.lock: create a parked writer thread with every signal
 * blocked (so the host's handlers never run on it and SIGXFSZ becomes
 * EFBIG). Allocates (pthread_create): never called from a probe that a
 * signal handler may run, except when no thread could be parked before.
 * Return: 0 or a negative errno.
 */
static int spawn_locked(void)
{
	sigset_t all, old;
	int err;

	writer_cmd = CMD_PARK;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	creator_mask = old;
	err = rec__pthread_create_internal(&rec__g.writer, NULL, writer_main, &writer_state);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	writer_parked = true;
	return 0;
}

/*
 * rec__writer_park() - have a parked writer ready for the next start, if
 * recording has not started (at load; in a child after fork that will
 * record). Takes rec__g.lock. A failure is not reported: the start then
 * creates the thread itself.
 */
void rec__writer_park(void)
{
	pthread_mutex_lock(&rec__g.lock);
	if (!writer_parked && !rec__g.writer_running &&
	    __atomic_load_n(&rec__g.state, __ATOMIC_RELAXED) == REC__NEVER_STARTED)
		spawn_locked();
	pthread_mutex_unlock(&rec__g.lock);
}

/* rec__writer_retire() - at exit: a parked writer that never ran quits. */
void rec__writer_retire(void)
{
	bool join;

	pthread_mutex_lock(&rec__g.lock);
	join = writer_parked;
	if (join) {
		writer_parked = false;
		writer_cmd = CMD_QUIT;
		rec__writer_wake();
	}
	pthread_mutex_unlock(&rec__g.lock);
	if (join)
		pthread_join(rec__g.writer, NULL);
}

/*
 * rec__writer_start() - under rec__g.lock, with the file open: tell the
 * parked writer to go (creating it first if none is parked). With a parked
 * writer this allocates nothing and creates no thread: async-signal-safe
 * (the first probe of the process may be in a signal handler).
 * Return: 0 or a negative errno.
 */
int rec__writer_start(void)
{
	int err;

	if (!writer_parked) {
		err = spawn_locked();
		if (err)
			return err;
	}
	memset(&writer_state, 0, sizeof(writer_state)); /* the parked thread reads it after go */
	/* Its modules checked by a dlclose() from the first sample on (modules.c). */
	rec__modules_watch(&writer_state.modules);
	/* Flight mode: full rings discard their oldest chunk (probe.c, ring.h). */
	__atomic_store_n(&rec__flight_overwrite, rec__g.cfg.flight, __ATOMIC_RELAXED);
	__atomic_store_n(&rec__flight_wake_on_discard, rec__g.cfg.flight && rec__g.cfg.triggers[0],
			 __ATOMIC_RELAXED);
	__atomic_store_n(&rec__flight_frozen, 0, __ATOMIC_SEQ_CST);
	writer_parked = false;
	writer_cmd = CMD_GO;
	__atomic_store_n(&writer_end, END_RUNNING, __ATOMIC_RELAXED); /* released by the go */
	rec__g.writer_running = true;
	rec__writer_wake();
	return 0;
}

/* Called without rec__g.lock after stop_requested was set: wait for the end. */
void rec__writer_stop(void)
{
	pthread_join(rec__g.writer, NULL);
	writer_free(&writer_state);
}

/* The writer's buffers, once it ended (or from itself, at its end). */
static void writer_free(struct writer *w)
{
	recfmt_compressor_destroy(w->zc);
	recfmt_buf_fini(&w->lead);
	recfmt_buf_fini(&w->meta);
	recfmt_buf_fini(&w->body);
	recfmt_buf_fini(&w->scratch);
	recfmt_buf_fini(&w->out);
	recfmt_buf_fini(&w->ix);
	recfmt_buf_fini(&w->ix_sums);
	recfmt_index_packer_fini(&w->ix_packer);
	free(w->snap);
	free(w->last);
	free(w->cev);
	free(w->cval);
	rec__live_destroy(w->live);
	pthread_mutex_lock(&rec__g.lock);
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		rec__flight_forget_thread(t); /* REC_TRIGGER pairing: a new recording starts afresh */
		/* The index's nesting is this file's: a new one starts empty
		 * (rec__writer_thread_restart()), and the thread's struct is not
		 * heap that a leak checker scans. */
		recfmt_nest_fini(&t->wr.nest);
	}
	pthread_mutex_unlock(&rec__g.lock);
	free(w->kept);
	rec__annot_split_fini(&w->annot);
	rec__modules_fini(&w->modules);
	rec__modules_fini(&w->crash_modules);
	recfmt_buf_fini(&w->crash_modrec);
	rec__compact_fini(&w->compact);
	memset(w, 0, sizeof(*w));
}
