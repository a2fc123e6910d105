/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the per-thread SPSC ring: its layout, its protocol and the
 * consumer's side. The producer's side -- open the window, push, close it
 * -- is in rec.h (rec__window_open(), rec__ring_push(),
 * rec__window_close()), because TRACE_SCOPE's inline probe runs it; the
 * producer's room check (A) is here. Nothing in this file knows threads,
 * the writer or the file: tests/librec/test_ring.c drives a ring alone.
 * docs/DESIGN.md draws the protocol.
 *
 * Protocol (single producer = the owning thread, single consumer = the
 * writer thread); indices count records and only grow:
 *
 *   producer (rec.h, probe.c, hooks.c)      consumer (writer.c)
 *   writes slots [head, limit)              reads slots [tail, head)
 *   (A) acquire-load tail when the cached   (C) acquire-load head, then read
 *       limit says the ring is full:            the slots below it:
 *       rec__ring_refresh(); pairs with (D)     rec__ring_peek(); pairs with (B)
 *   (B) release-store head after writing    (D) release-store tail after the
 *       the slot: rec__ring_push()              slots are encoded:
 *                                               rec__ring_release(); pairs with (A)
 *
 * (B)->(C) makes a slot's contents visible before the writer reads it;
 * (D)->(A) makes the writer's reads of a slot complete before the producer
 * overwrites it. On x86-64 both are plain moves; on ARM64 the acquires
 * are LDAR and the releases STLR, which order the slot's plain stores
 * before head and the writer's reads of a slot before tail (docs/DESIGN.md,
 * "ARM64", checks each pair): nothing here leans on x86's ordering. The
 * cost of the protocol is the cache line of head, which the writer reads
 * once per drain pass.
 * head (struct rec__producer, written by the owner) and tail (written by
 * the writer) sit on separate cache lines so that the producer's stores do
 * not bounce the writer's line and vice versa.
 *
 * The ring's memory changes as it grows (below: (G1)-(G3)): the consumer
 * reads slots through its view, rec__ring_view(), loaded after head, never
 * through the producer's events and mask.
 *
 * Whole-scope drops (probe.c): `reserved` counts recorded enters whose exit
 * is still to come; an enter is recorded only if the ring has room for
 * itself, its own exit and every pending exit, so an exit always finds room
 * and never checks.
 *
 * Signals: `nesting` is set while a probe is between reading head and
 * publishing it (the window). A probe in a signal handler that interrupted
 * that window sees it set and drops its scope (counted) instead of writing
 * the same slot; one that ran before the window completed, balanced.
 */
#ifndef REC_RING_H
#define REC_RING_H

#include <stdint.h>

#include "rec.h"
#include "recfmt.h"

/*
 * Rings a producer may have left that the writer has not freed yet (growth):
 * one per size from the first ring to REC_BUFFER, so that a thread grows
 * all the way without waiting for the writer.
 */
#define REC__RING_RETIRED 24

struct rec__ring {
	/* Producer's line(s): rec.h's struct rec__producer. */
	struct rec__producer p;
	/* Consumer's line: written only by the writer. (D); read at (A). */
	uint64_t tail __attribute__((aligned(64)));
	/*
	 * REC_MODE=flight only (below): the producer's own discard index,
	 * written only by the producer (F1), read by the writer (F2). Its own
	 * line: the writer loads it once per hold, the producer stores it once
	 * per discarded chunk.
	 */
	uint64_t discard __attribute__((aligned(64)));
	/*
	 * Growth (below): the consumer's view of the ring, `seg`, stored by
	 * the producer at each growth (G1), loaded by the writer after its
	 * head (G2); and the rings the producer left, which the writer frees.
	 * Their own line: written at most once per growth.
	 */
	uintptr_t seg __attribute__((aligned(64)));
	uintptr_t retired[REC__RING_RETIRED];
};

/*
 * Flight mode (REC_MODE=flight): the producer discards its oldest slots
 * itself, a chunk at a time, so that a ring always holds its newest
 * events however late the writer runs, and a full ring never drops nor
 * waits. `tail` is then the writer's *hold*: the producer may discard up
 * to it and never past it, and REC__RING_FREE means no hold (discard at
 * will). `discard` is the producer's: the slots [max(discard, hold),
 * head) are whole; below discard they may be overwritten.
 *
 *   producer (probe.c, refresh below)       writer (flight.c)
 *   (F1) store discard (an exchange),       (F2) store tail = X (an exchange),
 *        then load tail, both seq_cst;           then load discard, both
 *        limit from that tail, never             seq_cst; until discard <= X
 *        from one read before                    (X = discard)
 *
 * A store then a load of the other's variable on each side (Dekker): at
 * least one sees the other. So when the writer's hold loop ends with X,
 * either the producer saw the hold X and writes no slot below X + cap, or
 * its discard was at most X when it computed its limit: either way the
 * slots [X, head) stay whole while X is held. Every raise of discard is an
 * (F1), also the one to a hold the producer read (below the hold the
 * writer is done): that hold may be gone by the store, the writer holding
 * again lower, from a discard it read before the store.
 *
 * Why an exchange and not a seq_cst store: C11 orders either with the
 * load after it, and so does ARM64 hardware (STLR then LDAR: RCsc), but
 * qemu-user (7.2, x86-64 host; scripts/cross-arm64.sh) translates STLR as
 * barrier + store and LDAR as load + barrier, so the host's store buffer
 * lets the load pass the store and both sides miss each other (the ring
 * test flight_hold_and_discard_always_see_each_other: 2.5-18 % of its
 * rounds on the old code; docs/DESIGN.md, "ARM64"). A read-modify-write
 * is a full barrier there (a locked host instruction) as on any CPU, and
 * TSan understands it, where gcc rejects __atomic_thread_fence() under
 * TSan. The cost is once per raised discard and per hold, never in the
 * inline probe: SWPAL or LDAXR/STLXR on ARM64, XCHG on x86-64 (what a
 * seq_cst store is there anyway).
 *
 * The hold only moves forward while the writer reads (a release store
 * suffices then: the producer may discard less, never more), and the
 * limit a producer computes never shrinks (min(discard, hold) + cap only
 * grows), so the reserve-for-exit rule (whole scopes) holds as in stream
 * mode.
 */
#define REC__RING_FREE UINT64_MAX

/* The ring's slots as the format sees them (same layout: probe.c asserts it). */
static inline __attribute__((no_instrument_function)) struct recfmt_event *
rec__ring_slots(const struct rec__ring *r)
{
	return (struct recfmt_event *)(void *)r->p.events;
}

/* What rec__ring_refresh() found. */
enum rec__ring_room {
	REC__RING_ROOM,	     /* room, the ring less than a quarter full */
	REC__RING_ROOM_WAKE, /* room, but a quarter full: wake the consumer */
	REC__RING_FULL,	     /* no room for `need`: drop or wait */
};

/*
 * rec__ring_refresh() - producer: sets the limit from the consumer's tail
 * (A). The limit is first set a quarter ring past the tail (soft): reaching
 * it means the ring is a quarter full, which the caller answers by waking
 * the consumer, then the limit goes up to the full ring (hard). So a
 * consumer that found nothing to do may sleep long, yet is woken as soon
 * as a producer records fast, and the fast path is unchanged. @need: the
 * index the producer must be able to write up to (exclusive). *tail: the
 * tail read. Return: what the producer may do.
 */
static inline __attribute__((no_instrument_function)) enum rec__ring_room
rec__ring_refresh(struct rec__ring *r, uint64_t need, uint64_t *tail)
{
	uint64_t cap = r->p.mask + 1;

	/* (A) pairs with (D) in rec__ring_release(). */
	*tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	r->p.limit = *tail + cap / 4;
	if (need <= r->p.limit)
		return REC__RING_ROOM;
	r->p.limit = *tail + cap;
	return need <= r->p.limit ? REC__RING_ROOM_WAKE : REC__RING_FULL;
}

/*
 * rec__ring_refresh_flight() - producer, flight mode: like
 * rec__ring_refresh(), but a ring full up to its limit discards its
 * oldest slots, whole chunks of @chunk slots (a multiple of the thread's
 * event group), up to the writer's hold, unless @may_discard is false (a
 * snapshot's trigger froze every ring: flight.c). *discarded: set when it
 * discarded. Return: REC__RING_ROOM or REC__RING_FULL (held or frozen).
 */
static inline __attribute__((no_instrument_function)) enum rec__ring_room
rec__ring_refresh_flight(struct rec__ring *r, uint64_t need, uint64_t chunk, bool may_discard,
			 bool *discarded)
{
	uint64_t cap = r->p.mask + 1, d = r->discard, to, bound;
	/* An acquire too: pairs with the writer's release of its hold (its reads are done). */
	uint64_t hold = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);

	/* Below the hold the writer is done: discarded (a restart's hold at head). */
	to = hold != REC__RING_FREE && hold > d ? hold : d;
	if (may_discard && hold == REC__RING_FREE && need > to + cap &&
	    need - cap - to < cap - chunk) {
		/* The fewest chunks that make room for need (held: none past the hold, to). */
		uint64_t want = to + (need - cap - to + chunk - 1) / chunk * chunk;

		if (want > r->p.head)
			want = r->p.head; /* never past what was written (a huge reserve) */
		if (want > to) {
			to = want;
			*discarded = true;
		}
	}
	if (to > d) {
		/*
		 * (F1): pairs with (F2) in flight.c. The hold read above may be
		 * stale by now (the writer gave it up and holds again lower): the
		 * bound is set from the hold read after the discard is published.
		 * An exchange, not a store: "Why an exchange" above.
		 */
		(void)__atomic_exchange_n(&r->discard, to, __ATOMIC_SEQ_CST);
		hold = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);
		d = to;
	}
	bound = hold != REC__RING_FREE && hold < d ? hold : d;
	r->p.limit = bound + cap;
	return need <= r->p.limit ? REC__RING_ROOM : REC__RING_FULL;
}

/*
 * rec__ring_flight_from() - producer, flight mode, after
 * rec__ring_refresh_flight(): the oldest slot the writer may still read,
 * min(discard, hold), from which a growth copies. Not the discard: a hold
 * loop that ended before it saw the producer's last raise holds below it
 * (the producer then saw the hold: its limit is that hold + cap).
 */
static inline __attribute__((no_instrument_function)) uint64_t
rec__ring_flight_from(const struct rec__ring *r)
{
	return r->p.limit - (r->p.mask + 1);
}

/*
 * Growth (docs/DESIGN.md, "Ring memory"). A thread's ring starts small
 * (REC__RING_FIRST_BYTES) and the producer moves it to a larger one, taken
 * pre-faulted from the shared pool (mem.c), in a probe's slow path, before
 * that probe's stamp. Indices do not change: the producer copies the
 * slots the consumer may still read, [from, head), to the same indices of
 * the new ring, then switches. The consumer reads slots through its own
 * view of the ring, `seg`, never through the producer's events and mask:
 *
 *   producer (probe.c, inside the window)     consumer (writer.c, crash.c)
 *   copy [from, head) into the new ring;      (C) acquire-load head, then
 *   events, mask = the new ring's;            (G2) acquire-load seg, read
 *   (G1) release-store seg = new,                  slots below head through it:
 *        then release-store retired[i] = old       rec__ring_view()
 *                                             (G3) acquire-exchange retired[i]
 *                                                  with 0 at the start of a
 *                                                  drain, then free it
 *
 * (G1)->(G2): a view that is the new ring has the copied slots. A slot at
 * or above the switch index S is written to the new ring only, after (G1),
 * and published by a release of head after it: a consumer whose (C) saw
 * head > S sees the new seg at (G2). One whose (C) saw head <= S reads
 * slots below S, which both rings hold. `from` is the tail read at (A)
 * (stream mode) or rec__ring_flight_from(), min(discard, hold) (flight
 * mode): the consumer reads no slot below it any more. The old ring is freed by the consumer only:
 * (G3) acquires retired[i], released after seg, so every view the writer
 * loads after (G3) is the new ring, and the views it loaded before were
 * used in earlier drains, which have ended. At most REC__RING_RETIRED
 * rings wait to be freed; with every slot taken the producer does not
 * grow (it drops or waits as a full ring does).
 */

/* A ring's memory as one word: its page-aligned slots | log2(their number). */
static inline __attribute__((no_instrument_function)) uintptr_t
rec__seg_make(void *events, uint64_t slots)
{
	return (uintptr_t)events | (uintptr_t)__builtin_ctzll(slots);
}

static inline __attribute__((no_instrument_function)) struct rec__event *
rec__seg_events(uintptr_t seg)
{
	return (struct rec__event *)(seg & ~(uintptr_t)4095);
}

static inline __attribute__((no_instrument_function)) uint64_t rec__seg_slots(uintptr_t seg)
{
	return seg ? (uint64_t)1 << (seg & 63) : 0;
}

static inline __attribute__((no_instrument_function)) size_t rec__seg_bytes(uintptr_t seg)
{
	return (size_t)rec__seg_slots(seg) * sizeof(struct rec__event);
}

/* The consumer's view: slots and mask (NULL and 0 while the thread has no ring). */
struct rec__ring_view {
	const struct recfmt_event *ev;
	uint64_t mask;
};

/*
 * rec__ring_view() - consumer, after loading head (C): the ring that holds
 * every slot below that head. (G2) pairs with (G1) in rec__ring_grow().
 */
static inline __attribute__((no_instrument_function)) struct rec__ring_view
rec__ring_view(const struct rec__ring *r)
{
	uintptr_t seg = __atomic_load_n(&r->seg, __ATOMIC_ACQUIRE);
	struct rec__ring_view v = { (const struct recfmt_event *)(void *)rec__seg_events(seg),
				    rec__seg_slots(seg) - (seg != 0) };

	return v;
}

/*
 * rec__ring_install() - the producer's first ring (attach, or later when
 * REC_MEMORY let none be had at attach): before any slot is published, so
 * the release of head at (B) orders it for the consumer as well.
 */
static inline __attribute__((no_instrument_function)) void rec__ring_install(struct rec__ring *r,
									   uintptr_t seg)
{
	r->p.events = rec__seg_events(seg);
	r->p.mask = rec__seg_slots(seg) - 1;
	__atomic_store_n(&r->seg, seg, __ATOMIC_RELEASE);
}

/*
 * rec__ring_grow() - producer, inside its window: continue in the larger
 * ring `seg` (more slots than now), copying the slots [from, head). The
 * caller sets the limit again (rec__ring_refresh*()). Return: false if no
 * retired slot is free (nothing changed: the caller gives seg back).
 */
static inline __attribute__((no_instrument_function)) bool
rec__ring_grow(struct rec__ring *r, uintptr_t seg, uint64_t from)
{
	struct rec__event *old = r->p.events, *ev = rec__seg_events(seg);
	uint64_t omask = r->p.mask, nmask = rec__seg_slots(seg) - 1, head = r->p.head;
	unsigned i = 0;

	while (i < REC__RING_RETIRED && __atomic_load_n(&r->retired[i], __ATOMIC_RELAXED))
		i++;
	if (i == REC__RING_RETIRED || nmask <= omask)
		return false;
	for (uint64_t k = from; k != head; k++)
		ev[k & nmask] = old[k & omask];
	r->p.events = ev;
	r->p.mask = nmask;
	/* (G1) pairs with (G2) in rec__ring_view(); retired after it: see (G3). */
	__atomic_store_n(&r->seg, seg, __ATOMIC_RELEASE);
	__atomic_store_n(&r->retired[i], rec__seg_make(old, omask + 1), __ATOMIC_RELEASE);
	return true;
}

/*
 * rec__ring_take_retired() - consumer, at the start of a drain, with no
 * view of this ring in use: a ring the producer left (0: none left). (G3).
 */
static inline __attribute__((no_instrument_function)) uintptr_t
rec__ring_take_retired(struct rec__ring *r)
{
	for (unsigned i = 0; i < REC__RING_RETIRED; i++) {
		if (__atomic_load_n(&r->retired[i], __ATOMIC_RELAXED))
			return __atomic_exchange_n(&r->retired[i], 0, __ATOMIC_ACQUIRE);
	}
	return 0;
}

/* rec__ring_peek() - consumer: the head; the slots [tail, head) are readable. */
static inline __attribute__((no_instrument_function)) uint64_t
rec__ring_peek(const struct rec__ring *r)
{
	/* (C) pairs with (B) in rec__ring_push(). */
	return __atomic_load_n(&r->p.head, __ATOMIC_ACQUIRE);
}

/* rec__ring_release() - consumer: the slots below @tail are done with. */
static inline __attribute__((no_instrument_function)) void
rec__ring_release(struct rec__ring *r, uint64_t tail)
{
	/* (D) pairs with (A) in rec__ring_refresh(). */
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
}

#endif /* REC_RING_H */
