/* SPDX-License-Identifier: MIT */
/*
 * test_reorder.c - the reorder queue of values and flows (analyzer/common/reorder.h)
 * on orders of arrival a crafted file can give: in order, every entry
 * earlier than the last (ticks going back), a sawtooth, many sources, a
 * random order. Each entry comes out exactly in (key, arrival) order, and
 * the work (entries compared or moved, the queue's own count) stays within
 * 2 log2(limit) + 8 per entry: counted, so the test does not depend on the
 * machine's speed. The insertion into a FIFO it replaces (issue 26) moved
 * up to `limit` entries per push: 65536 × 10^6 for 10^6 entries whose
 * ticks go back.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/reorder.h"

struct ent {
	uint64_t key, seq;
};

static bool ent_before(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;

	return a->key != b->key ? a->key < b->key : a->seq < b->seq;
}

#define LIMIT 65536u
#define NR_SRC_MAX 1000u

/*
 * Pushes n entries, entry i from source src(i) with key key(i), popping the
 * earliest whenever the queue is full and everything at the end, as
 * annots.c does. Returns the work; *late: entries that came out earlier
 * than the one before (forced out of order by the limit).
 */
static uint64_t run(uint64_t n, uint64_t (*key)(uint64_t), unsigned (*src)(uint64_t),
		    uint64_t *late_out)
{
	static struct tt_reorder_src srcs[NR_SRC_MAX];
	struct tt_reorder q;
	struct ent e, prev = { 0, 0 };
	uint64_t out = 0, late = 0;

	tt_reorder_init(&q, sizeof(struct ent), ent_before, LIMIT);
	for (uint64_t i = 0; i < n; i++) {
		e = (struct ent){ .key = key(i), .seq = i };
		if (!tt_reorder_push(&q, &srcs[src(i)], &e)) {
			tt_reorder_pop(&q, &e);
			if (out && ent_before(&e, &prev))
				late++;
			prev = e;
			out++;
		}
	}
	cr_assert_eq(q.total, n < LIMIT ? n : LIMIT);
	while (q.total) {
		tt_reorder_pop(&q, &e);
		if (out && ent_before(&e, &prev))
			late++;
		prev = e;
		out++;
	}
	cr_assert_eq(out, n);
	for (unsigned s = 0; s < NR_SRC_MAX; s++)
		tt_reorder_src_fini(&srcs[s]);
	cr_log_info("n %llu work %llu late %llu", (unsigned long long)n,
		    (unsigned long long)q.work, (unsigned long long)late);
	tt_reorder_fini(&q);
	if (late_out)
		*late_out = late;
	return q.work;
}

static void assert_n_log_n(uint64_t work, uint64_t n)
{
	const double per = 2 * log2((double)LIMIT) + 8;

	cr_assert_leq(work, (uint64_t)(per * (double)n), "work %llu for %llu entries: more "
		      "than %.0f each", (unsigned long long)work, (unsigned long long)n, per);
}

static uint64_t key_up(uint64_t i) { return 1000 + i; }
static uint64_t key_down(uint64_t i) { return 10000000000ull - i; }
static uint64_t key_saw(uint64_t i) { return 1000 + (i / 1000) * 1000 + (999 - i % 1000); }
static uint64_t key_rand(uint64_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull;

	x ^= x >> 31;
	return x % 1000000007ull;
}
static unsigned one_src(uint64_t i) { (void)i; return 0; }
static unsigned many_src(uint64_t i) { return (unsigned)(i % NR_SRC_MAX); }

Test(reorder, flows_quadratic_when_ticks_go_back_between_annots)
{
	const uint64_t n = 1000000;

	uint64_t late;

	assert_n_log_n(run(n, key_down, one_src, &late), n);
	/* Each forced pop gives the newest entry, earlier than the one
	 * before it (all but the first); the first LIMIT come out last, in
	 * order. */
	cr_assert_eq(late, n - LIMIT - 1);
}

Test(reorder, in_order_is_constant_work_per_entry)
{
	const uint64_t n = 1000000;

	uint64_t late;

	/* A comparison with the source's last, a FIFO append, a pop: no
	 * heap work below one source. */
	cr_assert_leq(run(n, key_up, one_src, &late), 4 * n);
	cr_assert_eq(late, 0);
}

Test(reorder, sawtooth_and_many_sources)
{
	const uint64_t n = 1000000;

	assert_n_log_n(run(n, key_saw, one_src, NULL), n);
	assert_n_log_n(run(n, key_down, many_src, NULL), n);
	assert_n_log_n(run(n, key_rand, many_src, NULL), n);
}

/* Under the limit, every entry comes out in exact order, whatever the
 * order it came in. */
Test(reorder, exact_order_within_the_limit)
{
	static struct tt_reorder_src srcs[7];
	struct tt_reorder q;
	struct ent e, prev = { 0, 0 };
	const uint64_t n = LIMIT;

	tt_reorder_init(&q, sizeof(struct ent), ent_before, LIMIT);
	for (uint64_t i = 0; i < n; i++) {
		e = (struct ent){ .key = key_rand(i) % 5000, .seq = i };
		cr_assert(tt_reorder_push(&q, &srcs[i % 7], &e));
	}
	for (uint64_t i = 0; i < n; i++) {
		tt_reorder_pop(&q, &e);
		if (i)
			cr_assert(ent_before(&prev, &e), "entry %llu out of order",
				  (unsigned long long)i);
		prev = e;
	}
	cr_assert_eq(q.total, 0);
	for (unsigned s = 0; s < 7; s++)
		tt_reorder_src_fini(&srcs[s]);
	tt_reorder_fini(&q);
}
