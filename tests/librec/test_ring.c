/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c - the per-thread ring on its own (librec/ring.h and rec.h's
 * producer side): wraparound, the room check's soft and hard limits, the
 * whole-scope drop and reserve-for-exit accounting of the probe paths on a
 * ring that nobody drains, and the publication protocol (A)-(D) with a
 * consumer thread. No recording is started: the rings here are the tests'
 * own, and librec's writer never sees them. Links librec statically to
 * reach its hidden functions.
 */
#define _GNU_SOURCE /* sched_getaffinity(), pthread_setaffinity_np() */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rec_internal.h"

TestSuite(ring, .timeout = 30);

#define SMALL_SLOTS 16u

static struct rec__event small_slots[SMALL_SLOTS];

static void ring_init(struct rec__ring *r, struct rec__event *slots, uint64_t nr_slots)
{
	memset(r, 0, sizeof(*r));
	memset(slots, 0, nr_slots * sizeof(*slots));
	r->p.events = slots;
	r->p.mask = nr_slots - 1;
	r->p.use_tsc = 1;
	r->p.woke_tail = UINT64_MAX;
}

/* One record pushed as every probe path does: window, push, close. */
static void push_one(struct rec__ring *r, uint64_t ticks, uint32_t code)
{
	uint64_t head = rec__window_open(&r->p);

	cr_assert_eq(r->p.nesting, 1);
	rec__ring_push(&r->p, head, ticks, code);
	rec__window_close(&r->p);
	cr_assert_eq(r->p.nesting, 0);
}

Test(ring, push_wraps_around_and_the_consumer_reads_every_record_in_order)
{
	struct rec__ring r;
	uint64_t next_read = 0;

	ring_init(&r, small_slots, SMALL_SLOTS);
	/* 5 laps of 16 slots, drained 7 records at a time: every wrap offset. */
	for (uint64_t i = 0; i < 5 * SMALL_SLOTS; i++) {
		uint64_t tail;

		cr_assert_neq(rec__ring_refresh(&r, i + 1, &tail), REC__RING_FULL, "record %llu",
			      (unsigned long long)i);
		push_one(&r, 1000 + i, (uint32_t)(2 * i + 2));
		if (rec__ring_peek(&r) - next_read == 7 || i + 1 == 5 * SMALL_SLOTS) {
			uint64_t head = rec__ring_peek(&r);

			for (; next_read < head; next_read++) {
				const struct recfmt_event *ev =
					&rec__ring_slots(&r)[next_read & r.p.mask];

				cr_assert_eq(ev->ticks, 1000 + next_read);
				cr_assert_eq(ev->code, (uint32_t)(2 * next_read + 2));
			}
			rec__ring_release(&r, next_read);
		}
	}
	cr_assert_eq(rec__ring_peek(&r), 5 * SMALL_SLOTS);
	cr_assert_eq(r.tail, 5 * SMALL_SLOTS);
}

Test(ring, refresh_sets_the_soft_limit_then_the_hard_one_then_reports_full)
{
	struct rec__ring r;
	uint64_t tail = 99;

	ring_init(&r, small_slots, SMALL_SLOTS);
	cr_assert_eq(rec__ring_refresh(&r, 4, &tail), REC__RING_ROOM);
	cr_assert_eq(tail, 0);
	cr_assert_eq(r.p.limit, 4, "a quarter ring past tail");
	cr_assert_eq(rec__ring_refresh(&r, 5, &tail), REC__RING_ROOM_WAKE);
	cr_assert_eq(r.p.limit, 16, "the whole ring past tail");
	cr_assert_eq(rec__ring_refresh(&r, 16, &tail), REC__RING_ROOM_WAKE);
	cr_assert_eq(rec__ring_refresh(&r, 17, &tail), REC__RING_FULL);
	cr_assert_eq(r.p.limit, 16);
	rec__ring_release(&r, 8);
	cr_assert_eq(rec__ring_refresh(&r, 12, &tail), REC__RING_ROOM);
	cr_assert_eq(tail, 8);
	cr_assert_eq(rec__ring_refresh(&r, 24, &tail), REC__RING_ROOM_WAKE);
	cr_assert_eq(r.p.limit, 24);
	cr_assert_eq(rec__ring_refresh(&r, 25, &tail), REC__RING_FULL);
}

/*
 * A thread state of our own with a 16-slot ring that nobody drains, set
 * as the calling thread's (rec__set_self()), and a site with its id: the
 * probes run their real paths -- rec.h's inline one and probe.c's -- with
 * no attach, no registration and no recording started.
 */
static struct rec__thread *fake_thread(void)
{
	void *mem = NULL;
	struct rec__thread *t;

	/* posix_memalign(): ASan's aligned_alloc() gave a 2 KiB-aligned block
	 * for this page-aligned struct. */
	cr_assert_eq(posix_memalign(&mem, _Alignof(struct rec__thread), sizeof(*t)), 0);
	t = mem;
	memset(t, 0, sizeof(*t));
	ring_init(&t->ring, small_slots, SMALL_SLOTS);
	t->ring.p.use_tsc = rec__clock_tsc_is_invariant();
	rec__set_self(t);
	return t;
}

static struct rec__site site = { .id = 7, .line = 1, .name = "ring_test", .file = __FILE__ };

static void flat_scope(void)
{
	struct rec__scope s = rec__enter_if(&site);

	rec__exit_if(&s);
}

Test(ring, a_full_ring_drops_whole_scopes_counts_each_and_keeps_room_for_exits)
{
	struct rec__thread *t = fake_thread();
	const struct recfmt_event *ev = rec__own_slots(t);

	/* An outer scope stays open while inner scopes fill the ring: each inner
	 * enter needs room for itself, its exit and the outer's exit. */
	{
		struct rec__scope outer = rec__enter_if(&site);

		cr_assert_eq(outer.code, RECFMT_CODE(7, RECFMT_KIND_EXIT));
		cr_assert_eq(t->ring.p.reserved, 1);
		for (int i = 0; i < 10; i++)
			flat_scope();
		/*
		 * Inner scope k + 1 needs head 1 + 2k, its own two slots and the
		 * outer's exit: 1 + 2k + 3 <= 16, so 7 recorded, 3 dropped.
		 */
		cr_assert_eq(t->ring.p.head, 15);
		cr_assert_eq(t->ring.p.nr_dropped, 3);
		cr_assert_eq(t->ring.p.reserved, 1);
		rec__exit_if(&outer);
	}
	cr_assert_eq(t->ring.p.head, 16, "the outer exit found its reserved slot");
	cr_assert_eq(t->ring.p.reserved, 0);
	flat_scope(); /* full */
	flat_scope();
	cr_assert_eq(t->ring.p.head, 16);
	cr_assert_eq(t->ring.p.nr_dropped, 5);
	/* Well nested: enter, 7 x (enter, exit), exit. */
	cr_assert_eq(ev[0].code, RECFMT_CODE(7, RECFMT_KIND_ENTER));
	for (int i = 1; i < 15; i++)
		cr_assert_eq(ev[i].code, RECFMT_CODE(7, i % 2 ? RECFMT_KIND_ENTER : RECFMT_KIND_EXIT),
			     "slot %d", i);
	cr_assert_eq(ev[15].code, RECFMT_CODE(7, RECFMT_KIND_EXIT));
	for (int i = 1; i < 16; i++)
		cr_assert_geq(ev[i].ticks, ev[i - 1].ticks, "time order at slot %d", i);
	/* The consumer frees half the ring: probes record again. */
	rec__ring_release(&t->ring, 8);
	for (int i = 0; i < 4; i++)
		flat_scope();
	flat_scope();
	cr_assert_eq(t->ring.p.head, 24);
	cr_assert_eq(t->ring.p.nr_dropped, 6);
	rec__set_self(NULL);
	free(t);
}

Test(ring, a_probe_inside_another_probes_window_drops_and_counts)
{
	struct rec__thread *t = fake_thread();

	(void)rec__window_open(&t->ring.p); /* as if a handler interrupted a probe here */
	flat_scope();
	cr_assert_eq(t->ring.p.head, 0, "nothing written in the interrupted window");
	cr_assert_eq(t->ring.p.nr_dropped, 1);
	rec__window_close(&t->ring.p);
	flat_scope();
	cr_assert_eq(t->ring.p.head, 2);
	cr_assert_eq(t->ring.p.nr_dropped, 1);
	rec__set_self(NULL);
	free(t);
}

/*
 * Drops are cheap: a probe that finds the ring full wakes the writer (a
 * futex system call, counted by rec__g.wake_seq) only when the writer has
 * moved tail since the last wake -- once per drain, not once per drop.
 */
Test(ring, dropping_probes_wake_the_writer_once_per_drain_not_once_per_drop)
{
	struct rec__thread *t = fake_thread();
	uint32_t wakes0;

	for (int i = 0; i < 8; i++)
		flat_scope(); /* 16 slots: full, one wake at the quarter mark */
	wakes0 = __atomic_load_n(&rec__g.wake_seq, __ATOMIC_RELAXED);
	for (int i = 0; i < 100000; i++)
		flat_scope();
	cr_assert_eq(t->ring.p.nr_dropped, 100000);
	cr_assert_eq(__atomic_load_n(&rec__g.wake_seq, __ATOMIC_RELAXED), wakes0,
		     "no wake while tail has not moved since the last one");
	rec__ring_release(&t->ring, 2); /* the writer drained a little */
	for (int i = 0; i < 1000; i++)
		flat_scope();
	cr_assert_eq(t->ring.p.head, 18);
	cr_assert_eq(t->ring.p.nr_dropped, 100999);
	cr_assert_eq(__atomic_load_n(&rec__g.wake_seq, __ATOMIC_RELAXED), wakes0 + 1,
		     "one wake for the new tail");
	rec__set_self(NULL);
	free(t);
}

/*
 * The publication protocol across threads: (B)->(C) and (D)->(A).
 * RING_STREAM_RECORDS (default 2 000 000) sets the records pushed:
 * scripts/cross-arm64.sh asks for fewer under emulation.
 */
#define STREAM_SLOTS 1024u
static uint64_t nr_stream; /* set before the consumer starts */
#define STREAM_RECORDS nr_stream

struct stream {
	struct rec__ring r;
	uint64_t bad; /* consumer: records read with the wrong contents */
	uint64_t read;
};

static void *consume(void *arg)
{
	struct stream *s = arg;
	uint64_t tail = 0;

	while (tail < STREAM_RECORDS) {
		uint64_t head = rec__ring_peek(&s->r);

		for (; tail < head; tail++) {
			const struct recfmt_event *ev = &rec__ring_slots(&s->r)[tail & s->r.p.mask];

			if (ev->ticks != tail || ev->code != (uint32_t)(tail * 2 + 1))
				s->bad++;
			s->read++;
		}
		rec__ring_release(&s->r, tail);
	}
	return NULL;
}

Test(ring, a_consumer_thread_reads_every_record_once_with_its_contents)
{
	static struct rec__event slots[STREAM_SLOTS];
	static struct stream s __attribute__((aligned(64)));
	pthread_t consumer;
	uint64_t full = 0;
	const char *v = getenv("RING_STREAM_RECORDS");

	nr_stream = v && *v ? strtoull(v, NULL, 10) : 2000000ull;
	ring_init(&s.r, slots, STREAM_SLOTS);
	cr_assert_eq(pthread_create(&consumer, NULL, consume, &s), 0);
	for (uint64_t i = 0; i < STREAM_RECORDS; i++) {
		uint64_t tail;

		if (i + 1 > s.r.p.limit) {
			while (rec__ring_refresh(&s.r, i + 1, &tail) == REC__RING_FULL) {
				full++;
				sched_yield();
			}
		}
		push_one(&s.r, i, (uint32_t)(i * 2 + 1));
	}
	pthread_join(consumer, NULL);
	cr_assert_eq(s.read, STREAM_RECORDS);
	cr_assert_eq(s.bad, 0, "%llu records read before their slot was written",
		     (unsigned long long)s.bad);
	cr_assert_eq(s.r.tail, STREAM_RECORDS);
	cr_log_info("producer found the ring full %llu times", (unsigned long long)full);
}

/*
 * Growth (ring.h, issue 31): the producer moves to a larger ring, copying
 * the slots the consumer may still read; indices do not change. Rings
 * here are page-aligned, as mem.c maps them (a seg keeps log2 of the size
 * in the low bits).
 */
static struct rec__event *page_slots(uint64_t n)
{
	struct rec__event *p = aligned_alloc(4096, n * sizeof(*p) < 4096 ? 4096 : n * sizeof(*p));

	cr_assert_not_null(p);
	memset(p, 0, n * sizeof(*p));
	return p;
}

Test(ring, growth_copies_the_unread_slots_to_the_same_indices_and_retires_the_old_ring)
{
	static struct rec__ring r;
	struct rec__event *small = page_slots(16), *big = page_slots(64);
	struct rec__ring_view v;
	uint64_t tail;

	ring_init(&r, small, 16);
	rec__ring_install(&r, rec__seg_make(small, 16));
	for (uint64_t i = 0; i < 40; i++) {
		if (i + 1 > r.p.limit && rec__ring_refresh(&r, i + 1, &tail) == REC__RING_FULL) {
			/* Full: the consumer has read up to 8 (below); grow from its tail. */
			cr_assert_eq(i, 24);
			cr_assert_eq(tail, 8);
			cr_assert(rec__ring_grow(&r, rec__seg_make(big, 64), tail));
			cr_assert_neq(rec__ring_refresh(&r, i + 1, &tail), REC__RING_FULL);
		}
		push_one(&r, 100 + i, (uint32_t)(2 * i + 1));
		if (i == 12)
			rec__ring_release(&r, 8); /* the consumer read [0, 8) */
	}
	cr_assert_eq(r.p.events, big);
	cr_assert_eq(r.p.mask, 63);
	/* The consumer's view after its head: the new ring, [8, 40) whole in it. */
	cr_assert_eq(rec__ring_peek(&r), 40);
	v = rec__ring_view(&r);
	cr_assert_eq((const void *)v.ev, (const void *)big);
	cr_assert_eq(v.mask, 63);
	for (uint64_t i = 8; i < 40; i++) {
		cr_assert_eq(v.ev[i & v.mask].ticks, 100 + i, "slot %llu", (unsigned long long)i);
		cr_assert_eq(v.ev[i & v.mask].code, 2 * i + 1);
	}
	cr_assert_eq(rec__ring_take_retired(&r), rec__seg_make(small, 16));
	cr_assert_eq(rec__ring_take_retired(&r), 0);
	/* Never to a ring no larger than the one in use. */
	cr_assert_not(rec__ring_grow(&r, rec__seg_make(small, 16), 8));
	free(small);
	free(big);
}

/*
 * Flight mode: the writer's hold loop can end below the producer's discard
 * (it read the discard before the producer raised it, and the producer
 * then saw the hold: its limit is that hold + cap). A growth then must
 * copy from the hold, not from the discard, or the writer reads slots the
 * new ring does not have (probe.c and sample.c copied from the discard).
 */
Test(ring, flight_growth_copies_from_a_hold_below_the_discard)
{
	static struct rec__ring r;
	struct rec__event *small = page_slots(16), *big = page_slots(64);
	struct rec__ring_view v;
	bool discarded = false;

	ring_init(&r, small, 16);
	rec__ring_install(&r, rec__seg_make(small, 16));
	for (uint64_t i = 0; i < 16; i++)
		push_one(&r, 100 + i, (uint32_t)(2 * i + 1));
	/* The writer holds at 0; the producer had raised its discard to 4. */
	r.tail = 0;
	r.discard = 4;
	cr_assert_eq(rec__ring_refresh_flight(&r, 17, 4, false, &discarded), REC__RING_FULL);
	cr_assert_eq(r.p.limit, 16);
	cr_assert_eq(rec__ring_flight_from(&r), 0);
	cr_assert(rec__ring_grow(&r, rec__seg_make(big, 64), rec__ring_flight_from(&r)));
	/* What the writer holds, [0, 16), is whole in the ring it now sees. */
	v = rec__ring_view(&r);
	cr_assert_eq((const void *)v.ev, (const void *)big);
	for (uint64_t i = 0; i < 16; i++)
		cr_assert_eq(v.ev[i & v.mask].ticks, 100 + i, "slot %llu", (unsigned long long)i);
	/* No hold: from the discard. */
	r.tail = REC__RING_FREE;
	cr_assert_eq(rec__ring_refresh_flight(&r, 17, 4, false, &discarded), REC__RING_ROOM);
	cr_assert_eq(rec__ring_flight_from(&r), 4);
	cr_assert(!discarded);
	free(small);
	free(big);
}

Test(ring, growth_waits_for_the_writer_once_every_retired_slot_is_taken)
{
	static struct rec__ring r;
	struct rec__event *first = page_slots(16);
	/* Nothing was written (head 0): no slot is copied, so the larger rings
	 * need no memory here, only page-aligned addresses. */
	uintptr_t fake = (uintptr_t)1 << 40;

	ring_init(&r, first, 16);
	rec__ring_install(&r, rec__seg_make(first, 16));
	for (unsigned k = 1; k <= REC__RING_RETIRED; k++)
		cr_assert(rec__ring_grow(&r, rec__seg_make((void *)(fake * k), (uint64_t)16 << k), 0));
	cr_assert_not(rec__ring_grow(
		&r, rec__seg_make((void *)(fake * 30), (uint64_t)16 << (REC__RING_RETIRED + 1)), 0));
	cr_assert_eq((uintptr_t)r.p.events, fake * REC__RING_RETIRED);
	cr_assert_eq(rec__ring_take_retired(&r), rec__seg_make(first, 16));
	cr_assert(rec__ring_grow(
		&r, rec__seg_make((void *)(fake * 30), (uint64_t)16 << (REC__RING_RETIRED + 1)), 0));
	free(first);
}

/*
 * The protocol (G1)-(G3) with a consumer thread: the producer grows from
 * 16 slots to 16 Ki slots while the consumer reads through its view after
 * each head, and poisons every ring it takes back (as the writer frees
 * it): a read through a stale view, or of a slot not copied, shows as a
 * wrong record.
 */
#define GROW_SIZES 11u /* 16 << 0 ... 16 << 10 slots */

struct grow_race {
	struct rec__ring r;
	uint64_t bad, read, taken;
};

static void *grow_consume(void *arg)
{
	struct grow_race *g = arg;
	uint64_t tail = 0;

	while (tail < STREAM_RECORDS) {
		uintptr_t seg;
		uint64_t head;
		struct rec__ring_view v;

		/* (G3): no view of ours is in use here. */
		while ((seg = rec__ring_take_retired(&g->r))) {
			memset(rec__seg_events(seg), 0xff, rec__seg_bytes(seg));
			g->taken++;
		}
		head = rec__ring_peek(&g->r); /* (C) */
		v = rec__ring_view(&g->r);    /* (G2) */
		for (; tail < head; tail++) {
			const struct recfmt_event *ev = &v.ev[tail & v.mask];

			if (ev->ticks != tail || ev->code != (uint32_t)(tail * 2 + 1))
				g->bad++;
			g->read++;
		}
		rec__ring_release(&g->r, tail); /* (D) */
	}
	return NULL;
}

Test(ring, a_ring_growing_under_a_reading_consumer_loses_and_garbles_nothing)
{
	static struct grow_race g __attribute__((aligned(64)));
	struct rec__event *rings[GROW_SIZES];
	unsigned next = 1;
	pthread_t consumer;
	const char *v = getenv("RING_STREAM_RECORDS");

	nr_stream = v && *v ? strtoull(v, NULL, 10) : 2000000ull;
	for (unsigned k = 0; k < GROW_SIZES; k++)
		rings[k] = page_slots((uint64_t)16 << k);
	ring_init(&g.r, rings[0], 16);
	rec__ring_install(&g.r, rec__seg_make(rings[0], 16));
	cr_assert_eq(pthread_create(&consumer, NULL, grow_consume, &g), 0);
	for (uint64_t i = 0; i < STREAM_RECORDS; i++) {
		uint64_t tail;
		enum rec__ring_room room;

		if (i + 1 > g.r.p.limit) {
			while ((room = rec__ring_refresh(&g.r, i + 1, &tail)) != REC__RING_ROOM) {
				/* As probe.c: a quarter full or more grows, while sizes are left. */
				if (next < GROW_SIZES &&
				    rec__ring_grow(&g.r, rec__seg_make(rings[next], (uint64_t)16 << next),
						   tail)) {
					next++;
					continue;
				}
				if (room != REC__RING_FULL)
					break;
				sched_yield();
			}
		}
		push_one(&g.r, i, (uint32_t)(i * 2 + 1));
	}
	pthread_join(consumer, NULL);
	cr_assert_eq(g.read, STREAM_RECORDS);
	cr_assert_eq(g.bad, 0, "%llu records read wrong", (unsigned long long)g.bad);
	cr_assert_eq(next, GROW_SIZES, "grew %u times", next - 1);
	cr_assert_eq(g.taken + (rec__ring_take_retired(&g.r) != 0), GROW_SIZES - 1);
	for (unsigned k = 0; k < GROW_SIZES; k++)
		free(rings[k]);
}

/*
 * Flight mode (issue 26, item 4): a full ring discards its own oldest
 * chunk, as few chunks as make room, never past the writer's hold, and not
 * at all while the rings are frozen. (push_one() is not used: only the
 * limits are under test.)
 */
Test(ring, flight_refresh_discards_whole_chunks_up_to_the_hold_and_never_past_it)
{
	struct rec__ring r;
	bool discarded = false;

	ring_init(&r, small_slots, SMALL_SLOTS);
	r.tail = REC__RING_FREE;
	/* Room up to 16 without discarding. */
	r.p.head = 15;
	cr_assert_eq(rec__ring_refresh_flight(&r, 16, 4, true, &discarded), REC__RING_ROOM);
	cr_assert(!discarded);
	cr_assert_eq(r.discard, 0);
	cr_assert_eq(r.p.limit, 16);
	/* 17 needs one chunk of 4; 27 needs three. */
	r.p.head = 16;
	cr_assert_eq(rec__ring_refresh_flight(&r, 17, 4, true, &discarded), REC__RING_ROOM);
	cr_assert(discarded);
	cr_assert_eq(r.discard, 4);
	cr_assert_eq(r.p.limit, 20);
	r.p.head = 26;
	cr_assert_eq(rec__ring_refresh_flight(&r, 27, 4, true, &discarded), REC__RING_ROOM);
	cr_assert_eq(r.discard, 12);
	cr_assert_eq(r.p.limit, 28);
	/* Held at 14: the discard stops there, and 31 does not fit. */
	r.tail = 14;
	r.p.head = 28;
	cr_assert_eq(rec__ring_refresh_flight(&r, 31, 4, true, &discarded), REC__RING_FULL);
	cr_assert_eq(r.discard, 14);
	cr_assert_eq(r.p.limit, 30);
	/* Frozen: nothing discarded, full at the limit it had. */
	r.tail = REC__RING_FREE;
	discarded = false;
	cr_assert_eq(rec__ring_refresh_flight(&r, 31, 4, false, &discarded), REC__RING_FULL);
	cr_assert(!discarded);
	cr_assert_eq(r.discard, 14);
	cr_assert_eq(r.p.limit, 30);
	/* A hold past the discard (a restart's, at head): everything below it goes. */
	r.tail = 20;
	r.p.head = 30;
	cr_assert_eq(rec__ring_refresh_flight(&r, 36, 4, false, &discarded), REC__RING_ROOM);
	cr_assert_eq(r.discard, 20);
	cr_assert_eq(r.p.limit, 36);
	/* Never past head, whatever the need (a reserve of pending exits near the ring's size). */
	r.tail = REC__RING_FREE;
	r.p.head = 30;
	cr_assert_eq(rec__ring_refresh_flight(&r, 47, 4, true, &discarded), REC__RING_FULL);
	cr_assert_eq(r.discard, 30);
	cr_assert_eq(r.p.limit, 46);
}

#define FLIGHT_SLOTS 1024u
#define FLIGHT_READS 1000u

struct flight_race {
	struct rec__thread *t;
	uint64_t stop, nr_reads, nr_read, bad;
};

/*
 * The writer's side: holds the ring (rec__flight_hold()), checks that every
 * slot of [hold, head) holds its own index (a slot the producer overwrote
 * would hold index + FLIGHT_SLOTS), gives the hold up, again and again.
 */
static void *flight_reader(void *arg)
{
	struct flight_race *fr = arg;
	struct rec__thread *t = fr->t;
	struct timespec t0, now;
	uint64_t lo, head, last_head = UINT64_MAX;

	/* At least 300 ms and until the producer went round the ring 8 times,
	 * however the threads are scheduled. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (fr->nr_reads >= FLIGHT_READS && rec__ring_peek(&t->ring) >= 8 * FLIGHT_SLOTS &&
		    (now.tv_sec - t0.tv_sec) * 1000000000ll + (now.tv_nsec - t0.tv_nsec) >= 300000000ll)
			break;
		lo = rec__flight_hold(t, 0);
		head = rec__ring_peek(&t->ring);
		if (head == last_head) {
			/* Nothing new: let the producer (and the suite's other tests) run. */
			rec__flight_free(t);
			sched_yield();
			continue;
		}
		last_head = head;
		for (uint64_t i = lo; i < head; i++)
			if (rec__own_slots(t)[i & t->ring.p.mask].ticks != i)
				fr->bad++;
		fr->nr_read += head > lo ? head - lo : 0;
		if (head < lo)
			fr->bad++; /* a hold past head: never (the loop holds at discard <= head) */
		rec__flight_free(t);
		fr->nr_reads++;
	}
	__atomic_store_n(&fr->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The (F1)/(F2) handshake of ring.h with both sides racing: a producer
 * that fills the ring flat out and discards chunks never overwrites a slot
 * the writer holds.
 */
Test(ring, flight_producer_discards_never_overwrite_what_the_writer_holds)
{
	static struct rec__event slots[FLIGHT_SLOTS];
	struct flight_race fr = { 0 };
	void *mem = NULL;
	struct rec__thread *t;
	pthread_t reader;
	uint64_t i = 0, full = 0;

	cr_assert_eq(posix_memalign(&mem, _Alignof(struct rec__thread), sizeof(*t)), 0);
	t = mem;
	memset(t, 0, sizeof(*t));
	ring_init(&t->ring, slots, FLIGHT_SLOTS);
	t->ring.tail = REC__RING_FREE;
	fr.t = t;
	cr_assert_eq(pthread_create(&reader, NULL, flight_reader, &fr), 0);
	while (!__atomic_load_n(&fr.stop, __ATOMIC_ACQUIRE)) {
		if (i + 1 > t->ring.p.limit) {
			bool discarded = false;

			if (rec__ring_refresh_flight(&t->ring, i + 1, FLIGHT_SLOTS / 8, true,
						     &discarded) == REC__RING_FULL) {
				full++; /* held where the discard would go: wait for the reader */
				sched_yield();
				continue;
			}
		}
		push_one(&t->ring, i, 2);
		i++;
	}
	pthread_join(reader, NULL);
	cr_assert_eq(fr.bad, 0, "%llu slots read overwritten", (unsigned long long)fr.bad);
	cr_assert_geq(fr.nr_reads, FLIGHT_READS);
	cr_assert_geq(i, 8 * FLIGHT_SLOTS);
	cr_log_info("%llu records, %llu read, full %llu times", (unsigned long long)i,
		    (unsigned long long)fr.nr_read, (unsigned long long)full);
	free(t);
}

/*
 * The (F1)/(F2) pair alone, in lock-step rounds so that both sides run it
 * at the same moment, round after round (a store-buffering litmus test on
 * the real functions). Each round starts from a ring the producer has
 * filled (head = discard + cap) and ends with the writer holding X and
 * the producer's limit set; the slots [X, head) are whole only if the
 * limit is at most X + cap. Two kinds of round:
 *   - discard: no hold, the producer discards a chunk while the writer
 *     takes its hold. Under qemu-user (x86-64 host), a seq_cst store then
 *     load (STLR, LDAR) passed each other on both sides, both missing the
 *     other's store (ring.h, "Why an exchange"): 494 to 3 516 of the
 *     20 000 rounds failed, 3 runs of the old code.
 *   - stale hold: the writer held at discard + chunk (a scan's hold), the
 *     producer raises its discard to that hold while the writer gives the
 *     hold up and holds again, lower, at the discard it reads: the
 *     producer's limit must come from the hold read after its store (the
 *     old code kept the hold read before: 1 979 to 3 695 of 20 000 rounds
 *     failed on x86-64, 3 runs).
 * The writer must be on another CPU to race: each side is pinned to a CPU
 * of its own where two are allowed, and the producer starts after the
 * writer by a delay that follows the point where either comes first.
 */
#define DEKKER_ROUNDS 40000u
#define DEKKER_SLOTS 64u
#define DEKKER_CHUNK 8u

struct dekker_race {
	struct rec__thread *t;
	uint64_t go, done, held;
	bool stale;
};

static void dekker_wait(const uint64_t *word, uint64_t round)
{
	/* Spin (both sides must run at once to race), yield if the other is off the CPU. */
	for (unsigned spins = 0; __atomic_load_n(word, __ATOMIC_ACQUIRE) != round; spins++)
		if (spins >= 1000) {
			sched_yield();
			spins = 0;
		}
}

static void *dekker_writer(void *arg)
{
	struct dekker_race *dr = arg;

	for (uint64_t round = 1; round <= DEKKER_ROUNDS; round++) {
		dekker_wait(&dr->go, round);
		if (dr->stale)
			rec__flight_free(dr->t);
		dr->held = rec__flight_hold(dr->t, 0);
		__atomic_store_n(&dr->done, round, __ATOMIC_RELEASE);
	}
	return NULL;
}

Test(ring, flight_hold_and_discard_always_see_each_other)
{
	static struct rec__event slots[DEKKER_SLOTS];
	struct dekker_race dr = { 0 };
	struct rec__ring *r;
	void *mem = NULL;
	pthread_t writer;
	uint64_t bad[2] = { 0, 0 }, held_below[2] = { 0, 0 };
	uint32_t delay = 0;
	cpu_set_t all, one[2];
	bool pinned = false;

	cr_assert_eq(posix_memalign(&mem, _Alignof(struct rec__thread), sizeof(*dr.t)), 0);
	dr.t = mem;
	memset(dr.t, 0, sizeof(*dr.t));
	r = &dr.t->ring;
	ring_init(r, slots, DEKKER_SLOTS);
	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	for (int cpu = 0, n = 0; cpu < CPU_SETSIZE && n < 2; cpu++)
		if (CPU_ISSET(cpu, &all)) {
			CPU_ZERO(&one[n]);
			CPU_SET(cpu, &one[n++]);
			pinned = n == 2;
		}
	if (pinned)
		cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(one[0]), &one[0]), 0);
	cr_assert_eq(pthread_create(&writer, NULL, dekker_writer, &dr), 0);
	if (pinned)
		cr_assert_eq(pthread_setaffinity_np(writer, sizeof(one[1]), &one[1]), 0);
	for (uint64_t round = 1; round <= DEKKER_ROUNDS; round++) {
		uint64_t d = round * DEKKER_SLOTS, head = d + DEKKER_SLOTS;
		bool discarded = false, stale = round & 1;

		/* A full ring; the writer's last hold, given up (discard) or not (stale). */
		__atomic_store_n(&r->discard, d, __ATOMIC_RELAXED);
		__atomic_store_n(&r->tail, stale ? d + DEKKER_CHUNK : REC__RING_FREE,
				 __ATOMIC_RELAXED);
		r->p.head = head;
		r->p.limit = head;
		dr.stale = stale;
		__atomic_store_n(&dr.go, round, __ATOMIC_RELEASE);
		/* The writer sees go late: start after it by the delay (above). */
		for (volatile uint32_t k = 0; k < delay; k++)
			;
		/* discard: needs one slot more than the ring (a chunk goes); stale: none. */
		rec__ring_refresh_flight(r, stale ? head : head + 1, DEKKER_CHUNK, true,
					 &discarded);
		dekker_wait(&dr.done, round);
		if (r->p.limit > dr.held + DEKKER_SLOTS)
			bad[stale]++;
		if (dr.held < d + DEKKER_CHUNK) {
			held_below[stale]++; /* the writer came first: start sooner */
			delay = delay > 4 ? delay - 4 : 0;
		} else {
			delay = delay < 4096 ? delay + 4 : 0; /* never: on one CPU, say */
		}
	}
	pthread_join(writer, NULL);
	if (pinned)
		cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(all), &all), 0);
	cr_log_info("the writer came first in %llu discard rounds, %llu stale-hold rounds; "
		    "delay %u at the end",
		    (unsigned long long)held_below[0], (unsigned long long)held_below[1], delay);
	cr_assert_eq(bad[0], 0, "discard rounds: %llu limits past the writer's hold",
		     (unsigned long long)bad[0]);
	cr_assert_eq(bad[1], 0, "stale-hold rounds: %llu limits past the writer's hold",
		     (unsigned long long)bad[1]);
	free(dr.t);
}
