/* SPDX-License-Identifier: MIT */
/*
 * test_mem_refill.c - who refills the pool of rings with what (mem.c,
 * rec__mem_refill(); writer.c, rec__writer_refill_largest();
 * docs/DESIGN.md, "Ring memory"): a busy writer (a pass that found events,
 * or under pressure) faults in only the sizes up to 256 KiB, the rings
 * threads take when they attach and first grow, and keeps doing so while a
 * large ring it had begun to fault in waits; an idle writer refills the
 * large sizes too. Asserted on the pool's counts and the bytes mapped,
 * never on time. Criterion runs each test in its own process: each starts
 * with an empty pool.
 *
 * The pool at REC_MEMORY=32M, REC_BUFFER=1M (its quarter of REC_MEMORY,
 * 8 MiB, holds every size): 32 rings of 16 KiB, 8 of 32, 64, 128 and
 * 256 KiB (4 352 KiB in all: the small sizes), one of 512 KiB and one of
 * 1 MiB (the large ones).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>

#include "rec_internal.h"

#define KIB ((size_t)1 << 10)
#define SMALL_BYTES (4352 * KIB)
#define LARGE_BYTES (1536 * KIB)
/* What the writer faults in after a pass (writer.c, REFILL_BYTES). */
#define PASS_BYTES (512 * KIB)

static void configure(void)
{
	rec__mem_configure(32 << 20, 1 << 20);
	cr_assert_eq(rec__mem_used(), 0);
}

static void assert_small_sizes_full(void)
{
	cr_assert_eq(rec__mem_pooled(16 * KIB), 32);
	for (size_t b = 32 * KIB; b <= 256 * KIB; b *= 2)
		cr_assert_eq(rec__mem_pooled(b), 8, "%zu KiB rings: %u pooled, 8 wanted", b / KIB,
			     rec__mem_pooled(b));
}

static void assert_large_sizes(unsigned n)
{
	cr_assert_eq(rec__mem_pooled(512 * KIB), n);
	cr_assert_eq(rec__mem_pooled(1024 * KIB), n);
}

struct busy {
	bool fast;	   /* under pressure (fast frames) */
	bool found_events; /* the pass drained events */
};

ParameterizedTestParameters(mem_refill, a_busy_writer_refills_small_sizes_only)
{
	static struct busy busy[] = { { true, false }, { false, true }, { true, true } };

	return cr_make_param_array(struct busy, busy, sizeof(busy) / sizeof(busy[0]));
}

ParameterizedTest(struct busy *b, mem_refill, a_busy_writer_refills_small_sizes_only)
{
	configure();
	rec__mem_refill(SIZE_MAX, rec__writer_refill_largest(b->fast, b->found_events));
	assert_small_sizes_full();
	assert_large_sizes(0);
	cr_assert_eq(rec__mem_used(), SMALL_BYTES, "%zu bytes mapped, not just the small sizes",
		     rec__mem_used());
	/* The next idle pass brings the large sizes. */
	rec__mem_refill(SIZE_MAX, rec__writer_refill_largest(false, false));
	assert_large_sizes(1);
	cr_assert_eq(rec__mem_used(), SMALL_BYTES + LARGE_BYTES);
}

Test(mem_refill, an_idle_writer_refills_every_size)
{
	configure();
	rec__mem_refill(SIZE_MAX, rec__writer_refill_largest(false, false));
	assert_small_sizes_full();
	assert_large_sizes(1);
	cr_assert_eq(rec__mem_used(), SMALL_BYTES + LARGE_BYTES);
}

/*
 * The defect: a large ring half faulted in when the writer turned busy
 * made rec__mem_refill() return at once, and the small sizes, which
 * threads take when they attach, were not refilled either until the
 * writer was idle again.
 */
Test(mem_refill, a_busy_writer_refills_small_sizes_while_a_large_ring_waits)
{
	uintptr_t taken[4];

	configure();
	/* Idle: every small size, then half of the 512 KiB ring. */
	rec__mem_refill(SMALL_BYTES + 256 * KIB, rec__writer_refill_largest(false, false));
	assert_small_sizes_full();
	assert_large_sizes(0);
	cr_assert_eq(rec__mem_used(), SMALL_BYTES + 512 * KIB);
	/* Four threads attach: four first rings leave the pool. */
	for (unsigned i = 0; i < 4; i++)
		cr_assert_neq(taken[i] = rec__mem_first(false), 0);
	cr_assert_eq(rec__mem_pooled(16 * KIB), 28);

	/* Busy: the first rings are refilled, the 512 KiB ring waits. */
	rec__mem_refill(PASS_BYTES, rec__writer_refill_largest(false, true));
	cr_assert_eq(rec__mem_pooled(16 * KIB), 32, "first rings not refilled by a busy writer: %u",
		     rec__mem_pooled(16 * KIB));
	assert_large_sizes(0);
	/* No second large ring mapped meanwhile: the taken rings, the pool, the waiting one. */
	cr_assert_eq(rec__mem_used(), 4 * 16 * KIB + SMALL_BYTES + 512 * KIB);
	rec__mem_refill(PASS_BYTES, rec__writer_refill_largest(true, false));
	assert_large_sizes(0);
	cr_assert_eq(rec__mem_used(), 4 * 16 * KIB + SMALL_BYTES + 512 * KIB);

	/*
	 * Idle: the waiting ring's other half (256 KiB) and 256 KiB of the
	 * 1 MiB ring; the rest of the 1 MiB ring in two more passes.
	 */
	rec__mem_refill(PASS_BYTES, rec__writer_refill_largest(false, false));
	cr_assert_eq(rec__mem_pooled(512 * KIB), 1);
	cr_assert_eq(rec__mem_pooled(1024 * KIB), 0);
	rec__mem_refill(PASS_BYTES, rec__writer_refill_largest(false, false));
	cr_assert_eq(rec__mem_pooled(1024 * KIB), 0);
	rec__mem_refill(PASS_BYTES, rec__writer_refill_largest(false, false));
	assert_small_sizes_full();
	assert_large_sizes(1);
	cr_assert_eq(rec__mem_used(), 4 * 16 * KIB + SMALL_BYTES + LARGE_BYTES);
	for (unsigned i = 0; i < 4; i++)
		rec__mem_put(taken[i]);
}
