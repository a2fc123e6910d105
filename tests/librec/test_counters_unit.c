/* SPDX-License-Identifier: MIT */
/*
 * test_counters_unit.c - the parts of counters.c that a machine without a
 * PMU cannot exercise through a real program: the choice between rdpmc and
 * read(2) from an event's mmap'd page, and the value rdpmc's raw result
 * gives (pmc_width significant bits, sign-extended, plus the page's offset).
 * Links librec statically to reach its hidden functions.
 */
#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <string.h>

#include "rec_internal.h"

TestSuite(counters_unit, .timeout = 10);

Test(counters_unit, rdpmc_is_used_only_with_cap_user_rdpmc_and_an_index)
{
	struct perf_event_mmap_page pc;

	memset(&pc, 0, sizeof(pc));
	cr_assert_not(rec__counters_rdpmc_usable(NULL), "no page (software event): read()");
	cr_assert_not(rec__counters_rdpmc_usable(&pc), "kernel forbids rdpmc: read()");
	pc.cap_user_rdpmc = 1;
	cr_assert_not(rec__counters_rdpmc_usable(&pc), "not on a counter now (index 0): read()");
	pc.index = 3;
	cr_assert(rec__counters_rdpmc_usable(&pc));
	pc.cap_user_rdpmc = 0;
	cr_assert_not(rec__counters_rdpmc_usable(&pc));
}

Test(counters_unit, rdpmc_value_is_sign_extended_from_pmc_width_and_offset_added)
{
	/* 48-bit counter: a raw value with bit 47 set is negative. */
	cr_assert_eq(rec__counters_pmc_value(1000, 5, 48), 1005);
	cr_assert_eq(rec__counters_pmc_value(1000, 0xffffffffffffull, 48), 999);
	/* Bits above the width are garbage and ignored. */
	cr_assert_eq(rec__counters_pmc_value(0, 0xabcd000000000010ull, 48), 16);
	cr_assert_eq(rec__counters_pmc_value(7, 9, 64), 16);
	cr_assert_eq(rec__counters_pmc_value(7, 9, 0), 7, "no width: offset only");
}

Test(counters_unit, configure_keeps_known_names_once_in_order)
{
	cr_assert_eq(rec__counters_configure("page-faults,cs,context-switches,faults"), 2);
	cr_assert_eq(rec__counters_configure(""), 0);
	cr_assert_eq(rec__counters_configure(NULL), 0);
	cr_assert_eq(rec__counters_configure("cycles,instructions,branch-misses,cache-misses,"
					     "page-faults,context-switches"),
		     6);
}
