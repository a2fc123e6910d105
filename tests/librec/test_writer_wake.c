/* SPDX-License-Identifier: MIT */
/*
 * test_writer_wake.c - a producer's wake-up made while the writer's pass
 * runs (probe.c, room_or_sleep(): once per drain of its ring) ends the
 * sleep that follows the pass (writer.c, pass_sleep()): the writer waits on
 * the wake-up count read as the pass began. Read at the pass's end, that
 * wake was taken as seen, and the writer slept to its next poll while the
 * producer, its wake spent, waited for a drain. rec__writer_test_sleep()
 * runs an idle pass's end with a wake made in the pass; what is asserted
 * is how the wait ended (a wake-up, or its time), never how long it took.
 */
#include <criterion/criterion.h>

#include "rec_internal.h"

/* The poll the sleep would last without a wake-up: long, so a lost wake is not missed. */
#define POLL_NS 10000000000ull

static void producer_wakes(void)
{
	rec__writer_wake();
}

static void nothing(void)
{
}

Test(writer_wake, a_wake_made_during_the_pass_ends_the_sleep_after_it, .timeout = 60)
{
	cr_assert_not(rec__writer_test_sleep(producer_wakes, POLL_NS),
		      "the writer slept to its next poll past a wake made during its pass");
}

/* The same pass with no wake sleeps to its poll (short here): what the test above tells apart. */
Test(writer_wake, without_a_wake_the_sleep_lasts_to_the_poll, .timeout = 60)
{
	cr_assert(rec__writer_test_sleep(nothing, 20000000ull));
}
