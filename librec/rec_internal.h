/* SPDX-License-Identifier: MIT */
/*
 * rec_internal.h - librec's private cross-file declarations: the per-thread
 * state with its ring, the global recorder state, and the functions the
 * modules call in each other. Never installed. The ring protocol is
 * described here once; probe.c (producer) and writer.c (consumer) cite the
 * labels (A)-(D). docs/DESIGN.md draws it.
 */
#ifndef REC_INTERNAL_H
#define REC_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "rec.h"
#include "recfmt.h"
#include "ring.h"

#define REC__HIDDEN __attribute__((visibility("hidden")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define REC__CACHELINE 64

/*
 * Defaults (rec.h documents them). REC_BUFFER: 64 MiB in stream mode, where
 * a ring grows only while its thread outruns the writer and the ring is
 * what covers the writer's time off the CPU (docs/DESIGN.md, "The writer
 * under pressure"): up to 16 MiB from the pool (mem.c), past it only when
 * full, i.e. while the writer is late (16 MiB covered 13 ms of a thread
 * recording flat out; the writer was seen off the CPU up to 138 ms on a
 * loaded machine); 8 MiB in flight mode, where every ring that records
 * enough grows to it (history per thread against REC_MEMORY).
 */
#define REC__DEFAULT_BUFFER_BYTES (64u << 20)
#define REC__DEFAULT_FLIGHT_BUFFER_BYTES (8u << 20)
#define REC__MIN_BUFFER_BYTES (4u << 10)
#define REC__MAX_BUFFER_BYTES (1ull << 32)
#define REC__DEFAULT_FLUSH_MS 100u
#define REC__FLIGHT_DEFAULT_OUTPUT "trace-%p-%n.zst" /* REC_MODE=flight */
#define REC__MAX_NAME_BYTES 255u
/*
 * Ring memory (mem.c; docs/DESIGN.md "Ring memory"; README "Memory"): a
 * thread's first ring (REC_BUFFER if smaller), the first rings the pool
 * keeps ready, and REC_MEMORY's default.
 */
#define REC__RING_FIRST_BYTES (16u << 10)
#define REC__POOL_FIRST 32u
/*
 * The largest ring the pool keeps ready (mem.c): past it a ring grows only
 * when full, mapping its own (at the defaults, to 32 and 64 MiB), so that a
 * larger REC_BUFFER or REC_MEMORY costs no memory nor start-up time until a
 * writer is late.
 */
#define REC__POOL_TOP_BYTES ((size_t)16 << 20)
#define REC__DEFAULT_MEMORY_BYTES (256u << 20)
#define REC__MIN_MEMORY_BYTES (64u << 10)

/*
 * REC_SAMPLE (sample.c): rates allowed, frames a sample keeps, the value
 * its POSIX timers carry, and the kind of its ring records (annotation
 * slots, rec__annot_slots(): REC__SAMPLE_KIND << 28 | flags << 16 | frames,
 * then one slot per frame address in `ticks`).
 */
#define REC__SAMPLE_MAX_HZ 20000u
#define REC__SAMPLE_MAX_FRAMES 128u
/* The words a thread keeps for the samples that wait for a probe's window
 * to close (struct rec__thread_own's pend): 8 KiB, 7 samples of the most
 * frames, 46 of 20 (each takes 2 words more than its frames). */
#define REC__SAMPLE_PEND_WORDS 1024u
#define REC__SAMPLE_COOKIE 0x52454353u /* "RECS" */
#define REC__SAMPLE_KIND 15u

/*
 * -finstrument-functions hooks (probe.c): a per-thread direct-mapped cache
 * of function address -> site id in front of the global registry (site.c),
 * and a per-thread shadow stack that tells each exit hook what its enter
 * recorded (the hooks have no scope variable to carry it, as TRACE_SCOPE
 * has). Both live in the thread's state, touched only by its owner.
 */
#define REC__FCACHE_SLOTS 1024u	  /* power of two */
#define REC__HOOKS_READY 1u	  /* own.hooks_ready: 0, not faulted in yet */
#define REC__HOOKS_STALE 2u	  /* faulted in; the cache to clear (a dlclose()) */
#define REC__FSTACK_DEPTH 4096u	  /* deeper activations are dropped (counted) */

struct rec__fcache_slot {
	uintptr_t fn; /* 0: empty */
	uint32_t id;
	uint32_t unused;
};

struct rec__fframe {
	uintptr_t fn;
	uint32_t code; /* the exit record to push, 0 if the enter was not recorded */
	uint32_t gen;  /* the thread's recording generation at the enter */
};

/*
 * Per-thread state, by who writes it: the ring (ring.h: the producer's
 * part written by the owning thread, tail by the writer), the registry's
 * fields (under g.lock), the writer's bookkeeping (writer-private), the
 * hooks' cache and shadow stack (owner).
 */
/*
 * Per-thread state, split by who writes it (issue 14 item 5). Each
 * sub-struct has one writer (or one lock); the comment on each says who
 * reads it and with which ordering. The ring comes first: rec.h's inline
 * probe reaches its struct rec__producer through rec__prod, at offset 0.
 */

/*
 * Written by the owner thread only (a signal handler on the owner may
 * use them too: see probe.c and hooks.c for why that is safe).
 */
struct rec__thread_own {
	/*
	 * -finstrument-functions state (hooks.c), read by the owner only.
	 * fdepth counts open hook activations, also those deeper than
	 * REC__FSTACK_DEPTH, whose frames are not stored. hooks_ready:
	 * REC__HOOKS_READY once the thread's struct rec__thread_hooks is
	 * faulted in (hooks.c, at its first hook, before any stamp); until then
	 * every hook takes the slow path. The one field of this struct another
	 * thread writes: librectrace.so's dlclose() turns READY into STALE
	 * (atomically, under rec__g.lock) when a module was unmapped, and the
	 * owner's next hook takes the slow path, which clears the cache, whose
	 * addresses may now be another library's code (finding F16).
	 */
	uint32_t fdepth;
	uint8_t hooks_ready;
	/*
	 * Annotations (probe.c, annot.c; FORMAT.md §3.17-§3.19).
	 * nr_annots_dropped: one-instruction adds, as rec__count_one() (a
	 * handler on the owner may count too), read relaxed by the writer
	 * (thread.c adds the orphan count into it at attach, also relaxed).
	 * annot_floor: owner only; while ring.p.open_dropped is not 0, an
	 * upper bound of the recorded depth at which the innermost dropped
	 * scope was entered (rec__scope_dropped()).
	 */
	uint64_t nr_annots_dropped;
	uint32_t annot_floor;
	/*
	 * REC_OVERFLOW=block (probe.c): probes that waited for room, and the
	 * CLOCK_MONOTONIC ns they waited. Relaxed stores inside the probe's
	 * window; read relaxed by the writer.
	 */
	uint64_t nr_blocked, blocked_ns;
	/*
	 * REC_MODE=flight (probe.c): the last refresh found the rings frozen
	 * by a trigger (owner only, inside the probe's window), and the scopes
	 * dropped so (one-instruction adds, read relaxed by the writer): they
	 * all follow a trigger, so a snapshot without REC_AFTER leaves them out.
	 */
	uint8_t frozen_full;
	uint64_t nr_dropped_frozen;
	/*
	 * REC_MEMORY refused this thread a ring or a larger one (thread.c,
	 * owner only, from rec__mem_hit_cap); read relaxed by the writer,
	 * which reports the drops of such threads at the end (writer.c).
	 */
	uint8_t capped;
	/*
	 * Owner only (thread.c): rec__mem_gen() at the last try to get a
	 * ring. A thread that attached while REC_MEMORY was reached has
	 * events == NULL (and mask 0) until rec__thread_ring_retry() gives it
	 * one.
	 */
	uint32_t ring_gen_seen;
	/*
	 * The kernel's name of the thread (comm), read by the owner at exit
	 * before the release of reg.dead; the writer reads it after the
	 * acquire of reg.dead.
	 */
	char exit_comm[16];
	/*
	 * REC_SAMPLE (sample.c): the samples not recorded (one-instruction
	 * adds, read relaxed by the writer), and the samples taken inside a
	 * probe's window or librec, which wait here until the thread is
	 * outside both (rec__sample_flush()): pend_words words of pend hold
	 * them, each its time, flags << 32 | frames, then its frames. Appended
	 * by the thread's signal handler only; emptied by the handler or by
	 * rec__sample_flush() with rec__in_librec set (a handler meanwhile
	 * appends, the flush writes that one too). detour: the handler set
	 * rec__prod to NULL so that the thread's next inline probe goes out of
	 * line, where the samples are written and rec__prod restored.
	 */
	uint64_t nr_samples_dropped;
	uint32_t pend_words;
	uint8_t detour;
	uint64_t pend[REC__SAMPLE_PEND_WORDS];
};

/*
 * The registry's part (thread.c, lifecycle.c): set at attach before the
 * thread is published in rec__g.threads, or changed under g.lock; read by
 * the writer under g.lock or after the acquire of `dead`.
 */
struct rec__thread_reg {
	uint8_t dead;	      /* release-set by the owner at thread exit (thread.c) */
	uint32_t serial;      /* file-unique thread number, from 1 */
	uint32_t os_tid;
	char name[REC__MAX_NAME_BYTES + 1]; /* under g.lock */
	uint32_t name_gen;    /* bumped at each rename, under g.lock */
	uint8_t named;	      /* rec_thread_name() was called; under g.lock */
	struct rec__thread *next; /* registry list, under g.lock */
	/*
	 * REC_COUNTERS (counters.c): set at attach, before the thread is in
	 * the registry, and never changed; NULL when the thread records no
	 * counters. A thread with counters keeps `limit` and `reserved` at 0,
	 * so that every probe takes the out-of-line counted path (probe.c)
	 * and the fast paths stay what they are without REC_COUNTERS.
	 */
	struct rec__counters *ctr;
};

/*
 * Writer-private: written and read by the writer thread only (writer.c
 * and what it calls: annot.c, live.c, flight.c), by
 * rec__writer_thread_restart() under rec__g.lock while no writer runs,
 * and read by crash.c's handler while the writer is stopped by its
 * hand-shake. No ordering needed beyond those. On its own cache line(s),
 * away from the producer's.
 */
struct rec__thread_wr {
	uint32_t name_gen_written; /* 0 = THREAD record not yet written */
	uint64_t nr_dropped_base;    /* nr_dropped when this file started */
	uint64_t nr_dropped_written; /* in this file */
	uint64_t nr_events_written;
	uint64_t nr_filtered_written; /* REC_MIN_NS: activations not written, in this file */
	uint64_t nr_filtered_reported; /* last nr_filtered in a DROPS record */
	/* REC_COUNTERS and REC_LIVE bookkeeping. */
	uint32_t ctr_set_frame;	  /* 1 + seq of the frame with our last COUNTER_SET; 0: none */
	struct rec__live_thread *live; /* REC_LIVE pairing state (live.c) */
	/* CLOCK_MONOTONIC ns of the head load of the last drain (before the
	 * first: of its attach, thread.c); its records since are younger. */
	uint64_t drained_ns;
	/* own.nr_blocked/blocked_ns when this file started, and in the last
	 * BLOCKED record of it. */
	uint64_t nr_blocked_base, blocked_ns_base, nr_blocked_reported, blocked_ns_reported;
	/* comm as last read from /proc ("" = the program's default name),
	 * what the last THREAD record said, and when it was read (0: never). */
	char comm[16], comm_written[16];
	uint64_t comm_read_ns;
	/* REC_TRIGGER pairing state (flight.c), NULL if none. */
	struct rec__flight_thread *flight;
	/* REC_MODE=flight: no hold goes below it (a restart's head, a snapshot's end). */
	uint64_t flight_floor;
	/* REC_MODE=flight: nr_dropped, nr_blocked and blocked_ns as of the open
	 * snapshot's window end (writer.c: later ones go to the next snapshot). */
	uint64_t snap_cap_dropped, snap_cap_blocked, snap_cap_blocked_ns, snap_cap_frozen;
	uint64_t frozen_base; /* own.nr_dropped_frozen when this file started */
	/* own.nr_annots_dropped when this file started, and as last reported. */
	uint64_t annots_dropped_base, annots_dropped_reported;
	/* own.nr_samples_dropped when this file started, and as last reported. */
	uint64_t samples_dropped_base, samples_dropped_reported;
	/* Its events' nesting in this file, for the index frames (FORMAT.md §6.2). */
	struct recfmt_nest nest;
};

/*
 * The hooks' per-thread cache and shadow stack (hooks.c; owner only): 80
 * KiB a thread needs only if it runs -finstrument-functions code. Last in
 * struct rec__thread, on pages of their own, faulted in by the thread's
 * first hook (own.hooks_ready), so that a thread with TRACE_SCOPE only
 * holds the pages before them.
 */
#define REC__PAGE_BYTES 4096u
struct rec__thread_hooks {
	struct rec__fcache_slot fcache[REC__FCACHE_SLOTS];
	struct rec__fframe fstack[REC__FSTACK_DEPTH];
};

struct rec__thread {
	/* The ring: its producer part first (rec.h's inline probe reads it);
	 * its tail on the writer's line (ring.h). */
	struct rec__ring ring;
	struct rec__thread_own own __attribute__((aligned(REC__CACHELINE)));
	struct rec__thread_reg reg __attribute__((aligned(REC__CACHELINE)));
	struct rec__thread_wr wr __attribute__((aligned(REC__CACHELINE)));
	struct rec__thread_hooks hk __attribute__((aligned(REC__PAGE_BYTES)));
};
_Static_assert(offsetof(struct rec__thread, ring.p) == 0,
	       "rec.h reaches the producer through rec__prod at offset 0");
_Static_assert(offsetof(struct rec__thread, wr) % REC__CACHELINE == 0,
	       "the writer's fields start on their own cache line");

/*
 * The ring's slots as the format sees them (same layout: probe.c asserts
 * it), for the producer only: the owner thread (or a signal handler on it)
 * inside its window, which alone changes them (growth). Every other reader
 * -- the writer, crash capture -- loads head first, then the slots through
 * rec__ring_view() (ring.h: (C) then (G2)).
 */
static inline struct recfmt_event *rec__own_slots(const struct rec__thread *t)
{
	return rec__ring_slots(&t->ring);
}

/*
 * A thread's perf-event group (counters.c). Each event the thread records
 * takes 1 + nr ring slots: the event, then one slot per counter whose
 * `ticks` holds the value (probe.c, writer.c).
 */
/* A file librec opened, as fstat() named it then, and its open's status flags (output.c). */
struct rec__fd_id {
	dev_t dev;
	ino_t ino;
	int flags; /* fcntl(F_GETFL): another open of the same file differs (O_RDWR, ...) */
};

struct rec__counters {
	uint32_t nr;	   /* recorded counters: columns */
	uint32_t nr_req;   /* requested counters: entries of the COUNTER_SET */
	int fd[RECFMT_MAX_COUNTERS];			 /* fd[0]: group leader */
	struct rec__fd_id fd_id[RECFMT_MAX_COUNTERS];	 /* closed only while still ours */
	struct perf_event_mmap_page *page[RECFMT_MAX_COUNTERS]; /* hardware events */
	bool rdpmc;	   /* every event's page allowed rdpmc at open */
	bool closed;	   /* by its thread (atomic: the writer checks the leader) */
	/* The leader is not read any more: the host closed or replaced its
	 * descriptor, or a read failed (atomic; set by its thread or the writer). */
	uint8_t gone;
	uint8_t checking; /* the writer's check runs: its thread waits to close (atomic) */
	bool reported; /* the writer said so (writer only) */
	const char *name[RECFMT_MAX_COUNTERS]; /* requested, in order */
	uint32_t flags[RECFMT_MAX_COUNTERS];	/* RECFMT_COUNTER_RECORDED */
	/* Producer-private (the owning thread): pending exits, in scopes,
	 * and the ring limit of the counted path, in slots. */
	uint64_t pending;
	uint64_t limit;
};

enum rec__state {
	REC__NEVER_STARTED = 0, /* the first probe starts recording */
	REC__RUNNING,
	REC__STOPPED,  /* rec_stop() or exit: probes record nothing until rec_start() */
	REC__FAILED,   /* could not open or write: untraced from now on */
	REC__DISABLED, /* REC_DISABLE=1, or a child after fork without %p */
};

/* The configuration in force, resolved from struct rec_config and env. */
struct rec__config {
	char output[4096];
	char counters[1024]; /* REC_COUNTERS, "" for none */
	uint64_t live_ns;    /* REC_LIVE period, 0 for none */
	size_t buffer_bytes;  /* REC_BUFFER: the most one thread's ring holds */
	size_t memory_bytes;  /* REC_MEMORY: every ring, the pool's included */
	uint32_t flush_ms;
	bool block;
	bool use_tsc;
	uint64_t min_ns; /* REC_MIN_NS; 0 = keep every activation */
	/* REC_MODE=flight and its variables (flight.c). */
	bool flight;
	uint64_t window_ns, after_ns;
	int snapshot_signal; /* 0: none */
	uint32_t snapshot_max;
	char triggers[1024]; /* REC_TRIGGER, "" for none */
	unsigned file_mode;  /* REC_FILE_MODE: permissions of a file librec creates */
	uint32_t sample_hz;  /* REC_SAMPLE: 0, or stack samples per CPU second (sample.c) */
	bool crash;	     /* REC_CRASH: crash capture armed (crash.c) */
	/* The output's name before %p and %n are expanded: config, REC_OUTPUT or the default. */
	char output_pattern[4096];
};

struct rec__global {
	pthread_mutex_t lock;	  /* registry, names, lifecycle, flush handshake */
	uint32_t wake_seq;	  /* futex the writer sleeps on: see rec__writer_wake() */
	pthread_cond_t flushed;	  /* rec_flush() waits on it */
	int state;		  /* enum rec__state; written under lock, read atomically */
	struct rec__config cfg;
	struct rec__thread *threads; /* registry list */
	uint32_t next_serial;
	int fd;
	struct rec__fd_id fd_id;  /* what fd named when librec opened it (output.c) */
	bool writer_running;
	bool stop_requested;	  /* under lock */
	int write_error;	  /* sticky negative errno, under lock */
	uint64_t flush_requested; /* under lock */
	uint64_t flush_done;	  /* under lock */
	pthread_t writer;
	pthread_key_t key;	  /* its destructor detaches exiting threads */
	struct recfmt_sync start_sync;
	uint64_t start_ticks_per_second;
};

extern struct rec__global rec__g REC__HIDDEN;

/* thread.c */
struct rec__thread *rec__thread_self(void) REC__HIDDEN;
struct rec__thread *rec__thread_attach(void) REC__HIDDEN;
void rec__thread_free(struct rec__thread *t) REC__HIDDEN;
void rec__thread_set_all_off(void) REC__HIDDEN;
/* Every thread's hooks' cache may name unmapped code: each clears its own (hooks.c). */
void rec__thread_hooks_stale_all(void) REC__HIDDEN;
void rec__thread_forget_all(void) REC__HIDDEN;
void rec__thread_init_key(void) REC__HIDDEN;
bool rec__thread_ring_retry(struct rec__thread *t, bool may_map) REC__HIDDEN;
void rec__thread_set_name(struct rec__thread *t, const char *name) REC__HIDDEN;
/* Called first by an exiting thread's destructor when set (sample.c sets it:
 * a pointer, so that thread.c, which sample.c calls, calls nothing there). */
extern void (*rec__thread_exit_hook)(void) REC__HIDDEN;

/* probe.c: the calling thread's state (initial-exec TLS). */
extern __thread struct rec__thread *rec__self
	__attribute__((tls_model("initial-exec"))) REC__HIDDEN;

/*
 * Sets the calling thread's state for librec (rec__self) and for the
 * inline probe in rec.h (rec__prod, its producer part). A signal handler
 * between the two stores finds rec__prod NULL and takes the out-of-line
 * path, which reads rec__self: either order of the two is safe, this one
 * keeps rec__prod never ahead of rec__self.
 */
static inline void rec__set_self(struct rec__thread *t)
{
	if (!t)
		rec__prod = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec__self = t;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t)
		rec__prod = &t->ring.p;
}

/*
 * Set while this thread is inside librec's own slow paths or API calls
 * (which take locks and may allocate). A probe in a signal handler that
 * interrupted them drops its scope instead of re-entering (probe.c).
 */
extern __thread uint8_t rec__in_librec __attribute__((tls_model("initial-exec"))) REC__HIDDEN;

extern __thread uint64_t rec__orphan_drops __attribute__((tls_model("initial-exec"))) REC__HIDDEN;
/* The same for annotations (probe.c); moved into nr_annots_dropped at attach. */
extern __thread uint64_t rec__orphan_annot_drops __attribute__((tls_model("initial-exec"))) REC__HIDDEN;

/*
 * mem.c: the memory librec holds for events (rings), REC_MEMORY, and the
 * pool of rings faulted in ahead of need. A ring is a seg (ring.h).
 * rec__mem_configure(): at start, under rec__g.lock. rec__mem_first(): a
 * thread's first ring, from the pool or (may_map) mapped and faulted in
 * now; 0 when REC_MEMORY is reached. rec__mem_grow(): a pooled ring larger
 * than cur, else (may_map) one of twice its size mapped and faulted in
 * now, or 0 (never waits: a producer's slow path). rec__mem_put():
 * a ring no one uses any more. rec__mem_gen(): changes (acquire) after
 * every put. rec__mem_refill(): the writer's, at a pass that was not busy,
 * and the start's (budget: bytes it may fault in; largest: the largest
 * ring it may fault in now). rec__mem_used():
 * bytes mapped for rings, the pool's included. rec__mem_pooled(): how many
 * rings of ring_bytes the pool holds ready (tests). rec__mem_hit_cap: set on
 * the calling thread when REC_MEMORY refused it a ring (cleared by whoever
 * reads it: rec__thread_note_cap()).
 */
extern __thread uint8_t rec__mem_hit_cap __attribute__((tls_model("initial-exec"))) REC__HIDDEN;
void rec__mem_configure(size_t memory_bytes, size_t buffer_bytes) REC__HIDDEN;
uintptr_t rec__mem_first(bool may_map) REC__HIDDEN;
uintptr_t rec__mem_grow(uintptr_t cur, bool may_map) REC__HIDDEN;
void rec__mem_put(uintptr_t seg) REC__HIDDEN;
uint32_t rec__mem_gen(void) REC__HIDDEN;
void rec__mem_refill(size_t budget, size_t largest) REC__HIDDEN;
size_t rec__mem_used(void) REC__HIDDEN;
unsigned rec__mem_pooled(size_t ring_bytes) REC__HIDDEN;
void rec__mem_fork_prepare(void) REC__HIDDEN;
void rec__mem_fork_parent(void) REC__HIDDEN;
void rec__mem_fork_child(void) REC__HIDDEN;

/* site.c */
uint32_t rec__site_register(struct rec__site *site) REC__HIDDEN;
/*
 * rec__cxx_name() - a C++ site's name from its __PRETTY_FUNCTION__, without
 * return type, parameters and qualifiers (cxxname.c); writes at most cap
 * bytes with the NUL. Return: the name's length.
 */
size_t rec__cxx_name(const char *pretty, char *out, size_t cap) REC__HIDDEN;
uint32_t rec__site_count(void) REC__HIDDEN;
const struct rec__site *rec__site_get(uint32_t id) REC__HIDDEN;
void rec__site_lock(void) REC__HIDDEN;
void rec__site_unlock(void) REC__HIDDEN;
void rec__site_reinit_lock(void) REC__HIDDEN;
uint32_t rec__site_register_func(uintptr_t fn) REC__HIDDEN;
/* The function address of a site registered by rec__site_register_func(), else 0. */
uintptr_t rec__site_func_addr(const struct rec__site *site) REC__HIDDEN;
/* Its module's snapshot, index + 1 (rec__site_snap()); 0: none. */
uint32_t rec__site_func_snap(const struct rec__site *site) REC__HIDDEN;
/* Module snapshots of function sites: their number (acquire), and one. */
uint32_t rec__site_nr_snaps(void) REC__HIDDEN;
const struct rec__module_snap *rec__site_snap(uint32_t i) REC__HIDDEN;

/*
 * modules.c: the loaded ELF modules as one file records them (FORMAT.md
 * §3.10, §3.25): each one's id, and whether the last check saw it mapped.
 * Under modules.c's lock: the writer's scans and a dlclose() (hooked in
 * librectrace.so) both check, so that a module closed between two writer
 * passes is in the file with the times it was mapped.
 */
struct rec__module_known;
struct rec__modules {
	unsigned long long adds, subs; /* dl_iterate_phdr's counters at the last check */
	bool scanned;
	uint32_t gen; /* checks that listed every module */
	uint32_t nr_known, cap_known;
	struct rec__module_known *known;
	uint32_t nr_snaps_done; /* module snapshots (site.c) looked at in this file */
	uint32_t *snap_ids, cap_snap_ids; /* each one's MODULE id in this file */
	uint64_t checked_ticks; /* when the last check ran (the events' clock) */
	struct recfmt_buf pending; /* records a dlclose() check made, for the writer to move */
};
/*
 * Writer: the records pending from dlclose() checks, then one for every
 * module mapped or unmapped since the last check (all at a file's first).
 * Return: 0, or -ENOMEM.
 */
int rec__modules_scan(struct rec__modules *m, struct recfmt_buf *out) REC__HIDDEN;
void rec__modules_watch(struct rec__modules *m) REC__HIDDEN;
int rec__modules_find_funcs(const char *const *names, uint32_t nr_names,
			    void (*found)(uint32_t i, uintptr_t addr, void *arg), void *arg,
			    bool *main_stripped) REC__HIDDEN;

/*
 * What the writer needs of the module holding a function site, copied when
 * the module's first function site is registered (site.c), so that a
 * library unloaded before the writer's next scan is still named.
 */
struct rec__module_snap {
	uint64_t bias;
	uintptr_t map_start, map_end; /* the whole mapping, for site.c's lookup */
	uint32_t path_hash;
	uint32_t nr_ranges;
	uint32_t build_id_bytes;
	struct recfmt_range ranges[RECFMT_MAX_MODULE_RANGES];
	uint8_t build_id[RECFMT_MAX_BUILD_ID_BYTES];
	const char *path; /* librec's copy (site.c) */
};
/* Fills snap but its path for the module holding fn; *path: the module's own name. */
bool rec__modules_capture(uintptr_t fn, struct rec__module_snap *snap, const char **path) REC__HIDDEN;
/* Writer: MODULE records for snapshots not yet in this file. Return: 0, or -ENOMEM. */
int rec__modules_add_snaps(struct rec__modules *m, struct recfmt_buf *out, uint32_t nr,
			   const struct rec__module_snap *(*snap_at)(uint32_t i)) REC__HIDDEN;
/* How many times librectrace.so's dlclose() saw the loader unmap a module (acquire). */
uint32_t rec__modules_epoch(void) REC__HIDDEN;
/* The MODULE id of snapshot snap (index + 1) in m's file; 0: none. */
uint32_t rec__modules_snap_id(const struct rec__modules *m, uint32_t snap) REC__HIDDEN;
void rec__modules_fini(struct rec__modules *m) REC__HIDDEN;
/* fork: no module scan runs across it (modules.c; lifecycle.c's handlers). */
void rec__modules_fork_prepare(void) REC__HIDDEN;
void rec__modules_fork_parent(void) REC__HIDDEN;
void rec__modules_fork_child(void) REC__HIDDEN;

/* clock.c */
bool rec__clock_tsc_is_invariant(void) REC__HIDDEN;
bool rec__clock_fast_usable(uint64_t (*read)(void), const char **why) REC__HIDDEN;
uint64_t rec__clock_fast_read(void) REC__HIDDEN;
bool rec__clock_choose(int clock, uint64_t (*read)(void)) REC__HIDDEN;
uint64_t rec__clock_rate(const struct recfmt_sync *from, const struct recfmt_sync *to) REC__HIDDEN;
uint64_t rec__clock_fast_frequency(void) REC__HIDDEN;
uint64_t rec__clock_now(bool use_tsc) REC__HIDDEN;
void rec__clock_sync(bool use_tsc, struct recfmt_sync *out) REC__HIDDEN;
uint64_t rec__clock_step(bool use_tsc) REC__HIDDEN;

/*
 * The CPU's counter, as rec.h's inline probe reads it (rec__ticks(): the
 * TSC on x86, CNTVCT_EL0 on ARM64). Read only where use_tsc is set, which
 * rec__clock_fast_usable() allows only on those two, once it saw the
 * counter run; elsewhere it is never read, and 0.
 */
static inline __attribute__((no_instrument_function)) uint64_t rec__rdtsc(void)
{
#if defined(REC__INLINE_PROBE)
	return rec__ticks();
#else
	return 0;
#endif
}

/* The calling thread's clock, as its probes stamp (fixed at attach). */
__attribute__((no_instrument_function)) static inline uint64_t
rec__now_ticks(const struct rec__thread *t)
{
	if (likely(t->ring.p.use_tsc))
		return rec__rdtsc();
	return rec__clock_now(false);
}

/*
 * Only the owner writes a drop counter, but a signal handler on the owner
 * may count too: the increment is one instruction, which a signal cannot
 * split (not locked: no other thread writes). The writer reads it with a
 * relaxed load.
 */
__attribute__((no_instrument_function)) static inline void rec__count_one(uint64_t *counter)
{
#if defined(__x86_64__)
	__asm__ volatile("addq $1, %0" : "+m"(*counter));
#else
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
#endif
}

/* probe.c: the out-of-line probe paths, shared by rec__enter/rec__exit and hooks.c. */
uint32_t rec__probe_enter(struct rec__thread *t, uint32_t id, uint32_t *gen) REC__HIDDEN;
void rec__probe_exit(struct rec__thread *t, uint32_t code, uint32_t gen) REC__HIDDEN;
/*
 * A scope's enter was dropped (counted) / that scope is left: keep
 * ring.p.open_dropped and annot_floor, so that an argument or a flow step
 * whose innermost scope was dropped is dropped too (probe.c). A probe that
 * drops an enter returns gen REC__GEN_DROPPED with code 0; its exit calls
 * rec__scope_dropped_exit().
 */
#define REC__GEN_DROPPED 1u
void rec__scope_dropped(struct rec__thread *t) REC__HIDDEN;
void rec__scope_dropped_exit(struct rec__thread *t) REC__HIDDEN;

/*
 * annot.c: annotation names (their own id space, FORMAT.md §3.17) and the
 * writer's split of a ring slice into events and annotations.
 *
 * Ring slots of an annotation (ring.h): every slot has code REC__ANNOT_CODE.
 * The first: ticks = timestamp, aux = kind << 28 | name id (MESSAGE: kind
 * << 28 | text bytes). Then, aux 0: one slot whose ticks holds the value
 * (VALUE_*, ARG, FLOW_*), none (INSTANT), or ceil(bytes / 8) slots of 8
 * text bytes each (MESSAGE). One release of head publishes them all.
 */
#define REC__ANNOT_KIND(aux) ((aux) >> 28)
#define REC__ANNOT_ARGBITS(aux) ((aux) & 0x0fffffffu)
static inline uint32_t rec__annot_slots(uint32_t aux)
{
	uint32_t kind = REC__ANNOT_KIND(aux);

	if (kind == RECFMT_ANNOT_MESSAGE)
		return 1 + (REC__ANNOT_ARGBITS(aux) + 7) / 8;
	if (kind == REC__SAMPLE_KIND)
		return 1 + (aux & 0xffffu);
	return kind == RECFMT_ANNOT_INSTANT ? 1 : 2;
}
uint32_t rec__annot_register(struct rec__annot_site *site) REC__HIDDEN;
uint32_t rec__annot_count(void) REC__HIDDEN;
/* librec's copy of the name with this id (1 ... rec__annot_count()). */
const struct rec__annot_site *rec__annot_get(uint32_t id) REC__HIDDEN;

struct rec__annot_row {
	struct recfmt_annot a;
	uint64_t at;	  /* slot offset from the slice's tail */
	uint32_t nr_slots;
	uint32_t text_at; /* MESSAGE: offset of its text in the split's text buffer */
};

/*
 * The scratch of rec__annot_encode_ring(): the writer's grows (zero it to
 * initialise); a fixed one (crash.c: memory mapped at start, no malloc in
 * a signal handler) has its arrays and caps set by its owner and never
 * grows: a slice needs at most n of ev and row, 8 * n + 8 bytes of text.
 */
struct rec__annot_split {
	struct recfmt_event *ev;
	size_t ev_cap;
	struct rec__annot_row *row;
	size_t row_cap;
	uint8_t *text;
	size_t text_cap;
	bool fixed;
};
void rec__annot_split_fini(struct rec__annot_split *s) REC__HIDDEN;
/*
 * rec__annot_encode_ring() - the writer's encode_ring() for a thread whose
 * ring holds annotations: its EVENTS block for [tail, tail + n), then its
 * ANNOTS block, with REC_MIN_NS (min_ticks, hold-back) as writer.c does it
 * plus FORMAT.md §3.19. Return: 0 or -ENOMEM; *nr_written: events written;
 * *nr_consumed: slots done with (whole annotations only). Crash capture
 * calls it too, from a signal handler, with a fixed split and fixed
 * buffers (min_ticks 0, final): then it allocates nothing.
 */
int rec__annot_encode_ring(struct rec__annot_split *s, struct recfmt_buf *body,
			   struct recfmt_buf *scratch, struct rec__thread *t, uint64_t tail,
			   uint64_t n, bool final, uint64_t now_ticks, uint64_t min_ticks,
			   uint64_t hold_max, uint64_t *nr_written, uint64_t *nr_consumed) REC__HIDDEN;
/* ANNOT_NAME records for the names registered since *nr_written. Return: 0 or -ENOMEM. */
int rec__annot_encode_names(struct recfmt_buf *meta, uint32_t *nr_written) REC__HIDDEN;

/*
 * config.c. Every REC_* environment variable librec reads is a row of
 * config.c's table env_vars[], indexed by this enum; nothing else in
 * librec reads the environment. To add one: a value here, a row there,
 * its parsing in rec__config_resolve() (or the file that owns it, given
 * the value), and its entry in rec(3), ENVIRONMENT.
 */
enum rec__env_var {
	REC__ENV_DISABLE,
	REC__ENV_CRASH,
	REC__ENV_OUTPUT,
	REC__ENV_BUFFER,
	REC__ENV_MEMORY,
	REC__ENV_FLUSH_MS,
	REC__ENV_OVERFLOW,
	REC__ENV_CLOCK,
	REC__ENV_COUNTERS,
	REC__ENV_LIVE,
	REC__ENV_MIN_NS,
	REC__ENV_FILE_MODE,
	REC__ENV_MODE,
	REC__ENV_WINDOW,
	REC__ENV_AFTER,
	REC__ENV_SNAPSHOT_MAX,
	REC__ENV_SNAPSHOT_SIGNAL,
	REC__ENV_TRIGGER,
	REC__ENV_SAMPLE,
	REC__ENV_RECORD_LOG,
	REC__NR_ENV_VARS
};
/* The environment as one rec__config_resolve() read it: each value raw, NULL if unset or unread. */
struct rec__env {
	const char *value[REC__NR_ENV_VARS];
};
int rec__config_resolve(const struct rec_config *in, struct rec__config *out) REC__HIDDEN;
bool rec__env_disabled(void) REC__HIDDEN;
/* REC_OUTPUT as the environment holds it now (NULL if unset or unread): lifecycle.c's fork child. */
const char *rec__env_output(void) REC__HIDDEN;
/* REC_RECORD_LOG (set by `tracetool record`), read with secure_getenv(); NULL if unset. */
const char *rec__env_record_log(void) REC__HIDDEN;
/* config.c: PATH as execvp() reads it, for exec.c (getenv: the program's own search). */
const char *rec__env_exec_path(void) REC__HIDDEN;
/*
 * rec__secure() - true in a program run with privileges its caller lacks
 * (setuid, setgid, file capabilities: the kernel's AT_SECURE). The
 * environment is its caller's then: it names no file and no setting.
 */
bool rec__secure(void) REC__HIDDEN;
/*
 * rec__getenv() - config.c's table reads every REC_* setting through it:
 * secure_getenv(), so NULL under AT_SECURE. Only the variables that turn
 * something off (REC_DISABLE, REC_CRASH=0) are read with getenv().
 */
const char *rec__getenv(const char *name) REC__HIDDEN;
/* Permissions of a file librec creates, less the umask, unless REC_FILE_MODE widens them. */
#define REC__DEFAULT_FILE_MODE 0600u

/*
 * output.c: rec__output_open() - opens `path` to write a trace into, for
 * every file librec writes (stream file, snapshot, crash snapshot): created
 * with `mode` if missing, never blocking (O_NONBLOCK: a FIFO with no reader
 * fails at once), never following a symbolic link at the path itself
 * (O_NOFOLLOW) except /dev/stdout, /dev/stderr, /dev/fd/N and
 * /proc/self/fd/N, which name a descriptor the process holds; a terminal is
 * refused. flags: REC__OUT_STREAM accepts a FIFO or a device (stream mode;
 * writes to it stay non-blocking), else anything but a regular file is
 * refused without being opened; REC__OUT_TRUNC truncates a regular file.
 * Async-signal-safe (open, lstat, fstat, close: no allocation, no lock).
 * Return: the fd, or a negative errno; *why: NULL, or (a refusal) what the
 * path is, as a log line says it ("a FIFO", "a symbolic link ...").
 */
#define REC__OUT_STREAM 1u
#define REC__OUT_TRUNC 2u
int rec__output_open(const char *path, unsigned flags, unsigned mode, const char **why) REC__HIDDEN;
/* rec__output_names_own_fd() - whether path names a descriptor the process
 * holds (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N). */
bool rec__output_names_own_fd(const char *path) REC__HIDDEN;

/*
 * output.c: a descriptor librec opened is known by its file's (st_dev,
 * st_ino). A host may close it (closefrom(), close_range()) and open a file
 * of its own under the same number: librec writes to, and closes, a
 * descriptor only while it still names the file it opened (README, "What
 * librec guarantees"). rec__fd_remember() - fstat() fd into *id, or -errno.
 * rec__fd_is_ours() - whether fd still names *id (fstat: async-signal-safe).
 * rec__fd_close() - closes fd only if it is still ours; sets *fd to -1.
 * rec__fd_is_ours_at() - rec__fd_is_ours(), and for a regular file, its
 * offset is `offset`, the bytes librec wrote through it: a host that
 * closed librec's descriptor and opened the same file itself, under the
 * same number, gets a descriptor of its own, whose offset librec must not
 * write at (finding F3). Async-signal-safe (fstat, fcntl, lseek).
 */
int rec__fd_remember(int fd, struct rec__fd_id *id) REC__HIDDEN;
bool rec__fd_is_ours(int fd, const struct rec__fd_id *id) REC__HIDDEN;
bool rec__fd_is_ours_at(int fd, const struct rec__fd_id *id, uint64_t offset) REC__HIDDEN;
void rec__fd_close(int *fd, const struct rec__fd_id *id) REC__HIDDEN;
/* rec__fd_above_stdio() - fd moved to 3 or above if it is 0, 1 or 2 (output.c). */
int rec__fd_above_stdio(int fd) REC__HIDDEN;
/* rec__fd_high() - fd moved above the numbers a host's next open() takes
 * (half the descriptor limit, at most 2048; close-on-exec), or fd itself. */
int rec__fd_high(int fd) REC__HIDDEN;

/*
 * output.c: rec__output_origin() - the pid and start (CLOCK_MONOTONIC) in
 * the FILE_HEADER of the trace that the regular file fd names starts with,
 * read from its first index frame (FORMAT.md §6.1, §3.2) without
 * decompressing anything. Async-signal-safe (pread). Return: false if the
 * file does not start that way (empty, not a trace, or a writer without
 * index frames).
 */
bool rec__output_origin(int fd, uint32_t *pid, uint64_t *start_mono_ns) REC__HIDDEN;
/*
 * After exec (rec(3), EXIT, FORK AND CRASH, "Exec"): a trace whose header
 * has this pid and a start before this program image began (its load:
 * rec__output_image_began(), from lifecycle.c) is an earlier program's of
 * this process, which exec()ed this one, and is kept.
 * rec__output_begun_earlier() - whether the trace rfd reads is one.
 * rec__file_is_earlier() - whether the regular file at path holds one
 * (anything else is not opened). Both async-signal-safe.
 */
void rec__output_image_began(void) REC__HIDDEN;
bool rec__output_begun_earlier(int rfd) REC__HIDDEN;
/* rec__output_begun_before() - whether the trace rfd reads has this pid and a
 * start before mono_ns (CLOCK_MONOTONIC; 0: false). Async-signal-safe. */
bool rec__output_begun_before(int rfd, uint64_t mono_ns) REC__HIDDEN;
bool rec__file_is_earlier(const char *path) REC__HIDDEN;

/* lifecycle.c */
int rec__start_locked(const struct rec_config *config) REC__HIDDEN;
bool rec__start_lazy(void) REC__HIDDEN;
/*
 * rec__exec_wanted() - whether an exec now would end a recording of this
 * process's (none in a vfork() child, nor in a handler that interrupted
 * librec). Async-signal-safe.
 * rec__exec_begin() - exec.c, just before the program's exec(): ends this
 * image's recording as rec_stop() does (every event written, the end
 * marker). Return: whether it ended one (then call rec__exec_failed() if the
 * exec returns).
 * rec__exec_failed() - the exec returned with err: recording goes on, in a
 * new file (never the one just ended), and one stderr line says so.
 * rec__exit_end() - the program's _exit() or _Exit() from ordinary code
 * (exit.c judged that, with rec__exec_wanted()):
 * ends the recording as exit() does, waiting a bounded time for the writer
 * with every signal blocked on this thread, which the process's end undoes.
 * rec__exit_wait_stop() - the same _exit() where the recording is not
 * running because another thread is ending it (exit()'s handler, rec_stop()
 * or another _exit()): waits for that end, bounded alike, with every signal
 * blocked, so that the process does not end in the middle of it (F31).
 * rec__exit_starting() - whether another thread is starting the recording
 * (its file created, the writer not yet running): _exit() then ends it
 * with rec__exit_end(), which waits for that start (F34).
 */
bool rec__exec_wanted(void) REC__HIDDEN;
bool rec__exec_begin(void) REC__HIDDEN;
void rec__exit_end(void) REC__HIDDEN;
void rec__exit_wait_stop(void) REC__HIDDEN;
bool rec__exit_starting(void) REC__HIDDEN;
void rec__exec_failed(const char *what, int err) REC__HIDDEN;

/*
 * rec__writer_wake() - make the writer run a pass now, not at its next poll:
 * rec_flush(), rec_stop(), a trigger, and a producer blocked on a full ring.
 * Only a futex syscall and an atomic add, so a probe in a signal handler may
 * call it. The release pairs with the acquire before the writer's checks.
 * Inline here (it touches only rec__g.wake_seq) so that the files that wake
 * the writer (probe.c, thread.c, flight.c, lifecycle.c) need not call into
 * writer.c, which calls them: no call cycle among librec's files.
 */
static inline __attribute__((no_instrument_function)) void rec__writer_wake(void)
{
	__atomic_fetch_add(&rec__g.wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &rec__g.wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * rec__thread_note_cap() - on t's owner, after it was refused a ring: if
 * REC_MEMORY refused it (mem.c's rec__mem_hit_cap), t is marked, so that
 * the writer can say at the end what the cap cost (writer.c).
 */
static inline __attribute__((no_instrument_function)) void
rec__thread_note_cap(struct rec__thread *t)
{
	if (rec__mem_hit_cap) {
		rec__mem_hit_cap = 0;
		__atomic_store_n(&t->own.capped, 1, __ATOMIC_RELAXED);
	}
}

/*
 * rec__thread_grow() - growth (ring.h; docs/DESIGN.md "Ring memory"), for
 * t's producer inside its window (a probe, probe.c; a sample, sample.c): a
 * ring larger than t's, taken from mem.c's pool (faulted in already), with
 * the slots from `from` on copied, before the window's stamp. full: the
 * ring has no room now; then, rather than drop or wait, a ring of twice
 * the size is mapped and faulted in here if the pool has none (in a probe
 * the time lands in the enclosing activations, as a wait does, never in
 * the one being entered). The writer is woken to free the old ring and
 * fill the pool again. Inline here so that neither file calls the other.
 * Return: true if the ring grew.
 */
static inline __attribute__((no_instrument_function)) bool
rec__thread_grow(struct rec__thread *t, uint64_t from, bool full)
{
	uintptr_t seg = rec__mem_grow(rec__seg_make(t->ring.p.events, t->ring.p.mask + 1), full);

	if (!seg) {
		rec__thread_note_cap(t);
		return false;
	}
	if (!rec__ring_grow(&t->ring, seg, from)) {
		rec__mem_put(seg); /* every retired slot taken: the writer is behind */
		return false;
	}
	rec__writer_wake();
	return true;
}

/* writer.c */
int rec__writer_start(void) REC__HIDDEN;
void rec__writer_stop(void) REC__HIDDEN;
void rec__writer_forget(void) REC__HIDDEN;
void rec__writer_park(void) REC__HIDDEN;
void rec__writer_retire(void) REC__HIDDEN;
bool rec__writer_wait_end(uint64_t end_by_ns, uint64_t final_by_ns) REC__HIDDEN;
void rec__writer_thread_restart(struct rec__thread *t) REC__HIDDEN;
bool rec__writer_want_fast(bool fast, bool behind, uint64_t cpu_ns, uint64_t wall_ns) REC__HIDDEN;
size_t rec__writer_refill_largest(bool fast, bool found_events) REC__HIDDEN;
/* Tests only (test_writer_wake.c): an idle pass's end, during() run in the pass. */
bool rec__writer_test_sleep(void (*during)(void), uint64_t poll_ns) REC__HIDDEN;
/* Tests only (test_compact.c): not 0, every frame is compressed fast, as under pressure. */
extern int rec__writer_test_pressure REC__HIDDEN;

/*
 * The writer's state a crash handler needs (crash.c), read only while the
 * writer is stopped by the hand-shake (crash.c's top comment): the frame
 * being built (meta, body: records not written yet) and its counts.
 */
struct rec__crash_view {
	const struct recfmt_buf *meta, *body;
	size_t body_room;	   /* body's records start past this many bytes */
	uint32_t seq;		   /* of the next frame */
	uint32_t nr_sites_written; /* sites 1..this have a record in the file */
	uint64_t nr_events;	   /* events in the file and in body */
	uint64_t nr_dropped_exited, nr_filtered_exited;
	uint64_t ticks_per_second; /* 0 before the writer calibrated */
	uint64_t min_ticks;	   /* REC_MIN_NS in ticks */
	uint32_t nr_annot_names_written; /* annotation names 1..this have a record */
	uint64_t clock_step_ticks; /* the FILE_HEADER's (0 before the writer measured it) */
	/* REC_MODE=flight: a snapshot is open (rec__g.fd), its window ending here. */
	bool snap_open;
	uint64_t snap_window_end_ticks;
	const struct recfmt_sync *snap_start;	  /* its FILE_HEADER's start */
	const struct recfmt_snapshot *snap_rec;	  /* its SNAPSHOT record */
	bool failed;		   /* the writer's sticky error */
	/* REC_MODE=flight: MODULE records of every module loaded (or snapshotted
	 * by site.c) so far, for a crash snapshot's file; NULL before the first pass. */
	const struct recfmt_buf *modules;
};
void rec__writer_crash_view(struct rec__crash_view *v) REC__HIDDEN;

/*
 * compact.c: a stream file's fast frames compressed again at the end of the
 * recording (docs/DESIGN.md, "The writer under pressure"). The writer
 * notes every frame it wrote, in order (rec__compact_note(): the length of
 * its index frame, its length and whether it was fast); after the END frame rec__compact_run() writes the
 * file again beside it, fast frames recompressed, and renames it over the
 * output. Return: the frames recompressed, 0 when the file was left as it
 * was (nothing to do, not a plain file of ours at its path, too little to
 * gain), or a negative errno (the file left as the writer wrote it).
 */
struct rec__compact_frame {
	uint64_t off, len;
	uint32_t ix_len; /* its index frame's, just before it (FORMAT.md §6); 0: none */
};
struct rec__compact {
	uint64_t off;		 /* bytes written so far: where the next frame goes */
	uint64_t fast_bytes;	 /* of them, in fast frames */
	struct rec__compact_frame *frames; /* the fast frames, in file order */
	size_t nr, cap;
	size_t nr_recompressed;	 /* by the last rec__compact_run() */
	bool off_broken;	 /* a frame could not be noted: leave the file */
};
void rec__compact_note(struct rec__compact *c, uint64_t ix_len, uint64_t len,
		       bool fast) REC__HIDDEN;
int rec__compact_run(struct rec__compact *c, struct recfmt_compressor *zc, int fd,
		     const char *path) REC__HIDDEN;
void rec__compact_fini(struct rec__compact *c) REC__HIDDEN;

/*
 * crash.c: crash capture (docs/DESIGN.md "Crash capture").
 * rec__crash_arm(): at each start, under rec__g.lock (maybe in a signal
 * handler: the first probe's): maps the crash buffers once, installs the
 * handlers unless REC_CRASH=0; no malloc. Return: 0 or -ENOMEM (logged;
 * recording goes on without crash capture). rec__crash_fork_child(): the
 * child's reset of the hand-shake (lifecycle.c's fork handler).
 * rec__crash_before_exit(): the program's _exit()/_Exit() (exit.c), before
 * the C library's: inside the program's handler that librec called, the
 * crash is captured (return: true). rec__crash_maybe_in_handler(): whether
 * this thread may be running any signal handler (what librec can tell: a
 * blocked signal, the alternate stack, an SA_NODEFER handler installed).
 * rec__crash_rearm(): the writer, each pass: takes back, once a second, a
 * signal whose handler the program replaced, and chains to that handler.
 * The writer's side of the hand-shake: rec__crash_writer_enter() before a
 * pass and between the threads it drains (false: quit, a crash ended the
 * recording), rec__crash_writer_leave() before it sleeps.
 */
int rec__crash_arm(void (*view)(struct rec__crash_view *v)) REC__HIDDEN;

void rec__crash_fork_child(void) REC__HIDDEN;
bool rec__crash_before_exit(void) REC__HIDDEN;
bool rec__crash_maybe_in_handler(void) REC__HIDDEN;
void rec__crash_rearm(uint64_t now_ns) REC__HIDDEN;
bool rec__crash_writer_enter(void) REC__HIDDEN;
void rec__crash_writer_leave(void) REC__HIDDEN;

/*
 * Flight mode's hook (issue 17; librec/flight's owner sets it): when set,
 * the crash handler calls fn(signo, si) instead of the stream capture,
 * with the writer stopped, recording turned off on every thread, from the
 * signal handler of the crashed thread; fn must be async-signal-safe (it
 * may open(2) its snapshot file and call rec__crash_write_snapshot()).
 * NULL restores the stream capture.
 */
typedef void (*rec__crash_flight_fn)(int signo, const siginfo_t *si);
void rec__crash_set_flight(rec__crash_flight_fn fn) REC__HIDDEN;
/*
 * A complete trace file written to fd from a crash handler, without zstd or
 * malloc (raw zstd blocks): frame 0 with the FILE_HEADER, `lead`'s records
 * (may be NULL: e.g. flight mode's snapshot record), every site and
 * thread, each thread's ring events [first(t, head, arg), head) (first
 * NULL: [tail, head)), its DROPS, a CRASH record when signo is non-zero,
 * END. Return: 0, or a negative errno (-ETIMEDOUT: the fd took nothing
 * for 2 s).
 */
struct rec__crash_snapshot {
	int fd;
	const struct recfmt_sync *start; /* the FILE_HEADER's start; NULL: the recording's */
	const struct recfmt_buf *lead;
	uint64_t (*first)(struct rec__thread *t, uint64_t head, void *arg);
	void *arg;
};
int rec__crash_write_snapshot(const struct rec__crash_snapshot *snap, int signo,
			      const siginfo_t *si) REC__HIDDEN;
/* librec's crash stack, [*lo, *hi): the capture runs there (tests measure its use). */
void rec__crash_stack_bounds(uint8_t **lo, uint8_t **hi) REC__HIDDEN;
/* flight.c: REC_MODE=flight (the writer's side runs on the writer thread only). */
int rec__flight_parse_duration(const char *s, bool allow_zero, uint64_t *ns) REC__HIDDEN;
int rec__flight_config(const struct rec__env *env, struct rec__config *out) REC__HIDDEN;
int rec__flight_init(const struct rec__config *cfg) REC__HIDDEN;
int rec__flight_snapshot(const char *reason, bool started) REC__HIDDEN;
void rec__flight_calibrated(uint64_t ticks_per_second) REC__HIDDEN;
int rec__flight_path(uint32_t number, char *out, size_t out_bytes) REC__HIDDEN;
int rec__flight_open(uint32_t number) REC__HIDDEN;
/* For crash capture (crash.c), async-signal-safe: flight.c documents them. */
int rec__flight_open_next(uint32_t *number, const char **path, const char **why) REC__HIDDEN;
int rec__flight_open_pending(struct recfmt_snapshot *s, const char **path,
			     const char **why) REC__HIDDEN;
uint64_t rec__flight_window_ns(void) REC__HIDDEN;
bool rec__flight_take(struct recfmt_snapshot *s, char *reason, size_t reason_bytes,
		      uint64_t *window_ticks, uint64_t *after_ticks) REC__HIDDEN;
bool rec__flight_pending(void) REC__HIDDEN;
void rec__flight_done(void) REC__HIDDEN;
void rec__flight_stopped(void) REC__HIDDEN;
void rec__flight_thaw(void) REC__HIDDEN;
void rec__flight_scan_held(struct rec__thread *t) REC__HIDDEN;
bool rec__flight_keep(struct rec__thread *t, bool dead, uint64_t now_ticks) REC__HIDDEN;
uint64_t rec__flight_hold(struct rec__thread *t, uint64_t from) REC__HIDDEN;
void rec__flight_free(struct rec__thread *t) REC__HIDDEN;
uint64_t rec__flight_window_index(const struct rec__thread *t, uint64_t lo, uint64_t head,
				  uint64_t start) REC__HIDDEN;
uint64_t rec__flight_window_tail(struct rec__thread *t, uint64_t head, uint64_t start) REC__HIDDEN;
/*
 * Producers' view of flight mode (flight.c; probe.c reads them in its slow
 * path): the rings discard their oldest chunk when full (ring.h), the
 * writer wants a wake per chunk (REC_TRIGGER), the rings are frozen.
 */
extern uint8_t rec__flight_overwrite REC__HIDDEN;
extern uint8_t rec__flight_wake_on_discard REC__HIDDEN;
extern int rec__flight_frozen REC__HIDDEN;
static inline __attribute__((no_instrument_function)) bool rec__flight_frozen_now(void)
{
	/* seq_cst: after a trigger's freeze, at most one more chunk goes (flight.c). */
	return __atomic_load_n(&rec__flight_frozen, __ATOMIC_SEQ_CST) != 0;
}
void rec__flight_forget_thread(struct rec__thread *t) REC__HIDDEN;
void rec__flight_forget(void) REC__HIDDEN;

/* counters.c */
struct perf_event_mmap_page;
uint32_t rec__counters_configure(const char *list) REC__HIDDEN;
const char *rec__counters_known_names(void) REC__HIDDEN;
struct rec__counters *rec__counters_open(void) REC__HIDDEN;
void rec__counters_read(struct rec__counters *c, uint64_t *vals) REC__HIDDEN;
void rec__counters_close(struct rec__counters *c) REC__HIDDEN;
/* rec__counters_check(): the writer, a live thread's group each pass: 0 while
 * its probes may read it; once, when they may not: REC__CTR_NOT_OURS (the
 * host closed or replaced the leader's descriptor) or REC__CTR_UNREADABLE. */
enum { REC__CTR_NOT_OURS = 1, REC__CTR_UNREADABLE = 2 };
int rec__counters_check(struct rec__counters *c) REC__HIDDEN;
void rec__counters_free(struct rec__counters *c) REC__HIDDEN;
bool rec__counters_rdpmc_usable(const struct perf_event_mmap_page *pc) REC__HIDDEN;
uint64_t rec__counters_pmc_value(uint64_t offset, uint64_t raw, uint16_t width) REC__HIDDEN;

/* live.c: REC_LIVE, run by the writer thread only. */
struct rec__live;
struct rec__live *rec__live_create(uint64_t period_ns, bool use_tsc) REC__HIDDEN;
void rec__live_destroy(struct rec__live *l) REC__HIDDEN;
/* The events [from, from + n) slots of t's ring, `stride` slots an event. */
void rec__live_feed(struct rec__live *l, struct rec__thread *t, uint64_t from, uint64_t n,
		    uint32_t stride) REC__HIDDEN;
/* After a pass: prints the report if one is due. Return: ns until the next. */
uint64_t rec__live_tick(struct rec__live *l, uint64_t now_mono_ns) REC__HIDDEN;
void rec__live_forget_thread(struct rec__thread *t) REC__HIDDEN;

/*
 * probe_cost.c: what a probe pair adds to its parent (FORMAT.md §3.16), in
 * thousandths of a tick; *_inner: the part between the pair's own stamps.
 */
struct rec__probe_cost_mticks {
	uint64_t scope, scope_inner, hook, hook_inner;
};
bool rec__probe_cost_measure(bool use_tsc, struct rec__probe_cost_mticks *out) REC__HIDDEN;

/*
 * sample.c: REC_SAMPLE (docs/DESIGN.md "Sampling"). rec__sample_init():
 * at load (lifecycle.c), in normal context: the unwinder, the signal, the
 * threads present. rec__sample_hz(): 0 if not sampling.
 * start: rec__start_lazy(), handed in by lifecycle.c (which calls sample.c);
 * note: a note for `tracetool record` (REC_RECORD_LOG), handed in likewise.
 * rec__sample_describe(): the SAMPLING record's fields (writer.c).
 * rec__sample_never_me(): the calling thread (librec's writer) is never
 * sampled. rec__sample_thread_exit(): the exiting thread's destructor
 * (thread.c). rec__sample_reap(): the writer, each pass (acts every
 * 100 ms): threads gone, threads started without pthread_create (armed).
 * rec__sample_fork_child(): lifecycle.c's fork handler.
 * rec__sample_exit_check(): at exit, one line if every thread blocked the
 * sampling signal and so no sample was taken (true, *signo the signal).
 * rec__sample_exit_closed(): at exit, one line if no sample was taken
 * because the program closed every descriptor librec samples with (true).
 */
int rec__sample_init(uint32_t hz, bool (*start)(void), void (*note)(const char *why)) REC__HIDDEN;
uint32_t rec__sample_hz(void) REC__HIDDEN;
void rec__sample_describe(struct recfmt_sampling *out) REC__HIDDEN;
void rec__sample_never_me(void) REC__HIDDEN;
/* rec__sample_flush(): a counted probe's window closed: a sample that waited in it, written. */
void rec__sample_flush(struct rec__thread *t) REC__HIDDEN;
void rec__sample_thread_exit(void) REC__HIDDEN;
/* The crash handler's first call (crash.c): a fault of a sample's stack walk
 * on this thread goes back to the walk (no return then); else false. */
bool rec__sample_walk_fault(int signo, const siginfo_t *si) REC__HIDDEN;
void rec__sample_reap(void) REC__HIDDEN;
void rec__sample_fork_child(bool records) REC__HIDDEN;
bool rec__sample_exit_check(int *signo) REC__HIDDEN;
bool rec__sample_exit_closed(void) REC__HIDDEN;
/*
 * rec__sample_take_crash(): crash.c, at load (librectrace.so): its
 * sigaction() for the nr signals it captures, which sample.c's copies of
 * sigaction(), signal() and their kin call for those (a callback: crash.c
 * calls sample.c). Async-signal-safe, as sigaction().
 */
typedef int (*rec__sigaction_fn)(int signo, const struct sigaction *act, struct sigaction *old);
void rec__sample_take_crash(rec__sigaction_fn fn, const int *signals, unsigned nr) REC__HIDDEN;
/* pthread_create() for librec's own threads: they are never sampled. */
int rec__pthread_create_internal(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
				 void *arg) REC__HIDDEN;
/* Whether tid is a sanitizer runtime's thread, or librec's first (never the host's). */
bool rec__thread_is_runtime(pid_t tid) REC__HIDDEN;
/* config.c: REC_SAMPLE as set now (*hz 0: unset). Return: 0, or -EINVAL if bad. */
int rec__env_sample_hz(uint32_t *hz) REC__HIDDEN;

/*
 * interpose.c: the definition a copy of librectrace.so stands before (libc's,
 * or a sanitizer's interceptor): dlvsym(RTLD_NEXT) at version (NULL: the
 * default), else dlsym(RTLD_NEXT); looked up once, then read from fn. Call
 * it first in normal context: then it is async-signal-safe.
 * Return: the function, or NULL (errno ENOSYS).
 */
struct rec__next {
	const char *name;
	const char *version;
	void *fn; /* written once by rec__next_fn() (release), read with acquire */
};
void *rec__next_fn(struct rec__next *n) REC__HIDDEN;

/* log.c: one "rec: ..." line on stderr. */
/* rec__log_init() - at load: notes what descriptor 2 names, so that no line
 * goes to a regular file the host opened there later (log.c). */
void rec__log_init(void) REC__HIDDEN;
void rec__log(const char *fmt, ...) __attribute__((format(printf, 1, 2))) REC__HIDDEN;
/* Paths in log lines are cut to fewer than this many bytes (log.c). */
#define REC__LOG_PATH_BYTES 200u
const char *rec__log_path(const char *path, char *buf, size_t buf_bytes) REC__HIDDEN;
/* The same from a signal handler: the strings given, up to a NULL, without stdio. */
void rec__log_safe(const char *first, ...) __attribute__((sentinel)) REC__HIDDEN;
/* rec__log_write() - text (lines librec made: the crash handler's, REC_LIVE's
 * report) on stderr as rec__log() writes its lines: only where they belong,
 * a broken pipe never raising SIGPIPE. Async-signal-safe. */
void rec__log_write(const char *text, size_t n) REC__HIDDEN;

#endif /* REC_INTERNAL_H */
