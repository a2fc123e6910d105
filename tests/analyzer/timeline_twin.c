/* SPDX-License-Identifier: MIT */
/*
 * timeline_twin.c - a static function named as one of test_timeline.c's,
 * in another file: two function sites of one name at two places, which
 * chrome and perfetto label "twin" and "twin (timeline_twin.c)".
 */
#include <stdint.h>

uint64_t timeline_twin_addr(void);

static volatile int sink;

static __attribute__((noinline, used)) void twin(void)
{
	sink++;
}

/* twin's run-time address, inside it. */
uint64_t timeline_twin_addr(void)
{
	return (uint64_t)(uintptr_t)&twin + 1;
}
