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
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
	struct rec__thread *t = aligned_alloc(64, sizeof(*t));

	cr_assert_not_null(t);
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
	const struct recfmt_event *ev = rec__events(t);

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

/* The publication protocol across threads: (B)->(C) and (D)->(A). */
#define STREAM_RECORDS 2000000ull
#define STREAM_SLOTS 1024u

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
