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
 *   (F1) store discard, then load tail,     (F2) store tail = X, then load
 *        both seq_cst                            discard, both seq_cst; until
 *                                                discard <= X (X = discard)
 *
 * A store then a load of the other's variable on each side (Dekker): at
 * least one sees the other. So when the writer's hold loop ends with X,
 * either the producer saw the hold X and writes no slot below X + cap, or
 * its discard was at most X when it computed its limit: either way the
 * slots [X, head) stay whole while X is held. The hold only moves forward
 * while the writer reads (a release store suffices then: the producer
 * may discard less, never more), and the limit a producer computes never
 * shrinks (min(discard, hold) + cap only grows), so the reserve-for-exit
 * rule (whole scopes) holds as in stream mode.
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
	uint64_t cap = r->p.mask + 1, d = r->discard, bound;
	uint64_t hold = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);

	if (hold != REC__RING_FREE && hold > d) {
		/* Below the hold the writer is done: discarded (a restart's hold at head). */
		__atomic_store_n(&r->discard, hold, __ATOMIC_SEQ_CST);
		d = hold;
	}
	if (may_discard && need > d + cap && need - cap - d < cap - chunk) {
		/* The fewest chunks that make room for need, never past the hold. */
		uint64_t want = d + (need - cap - d + chunk - 1) / chunk * chunk;

		if (hold != REC__RING_FREE && want > hold)
			want = hold > d ? hold : d;
		if (want > r->p.head)
			want = r->p.head; /* never past what was written (a huge reserve) */
		if (want > d) {
			/* (F1): pairs with (F2) in flight.c. */
			__atomic_store_n(&r->discard, want, __ATOMIC_SEQ_CST);
			d = want;
			hold = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);
			*discarded = true;
		}
	}
	bound = hold != REC__RING_FREE && hold < d ? hold : d;
	r->p.limit = bound + cap;
	return need <= r->p.limit ? REC__RING_ROOM : REC__RING_FULL;
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
