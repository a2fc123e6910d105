/* SPDX-License-Identifier: MIT */
/*
 * honest_hook.c - built with -finstrument-functions for test_honest.c:
 * the same hot loop and wrapper pattern as examples/hotspot.c, traced by
 * librec's compiler hooks instead of TRACE_SCOPE.
 */
#include "honest_hook.h"

static volatile unsigned long sink;

__attribute__((noinline)) void hook_empty(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void hook_func_a(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}

__attribute__((noinline)) void hook_wrapper_a(void)
{
	hook_func_a();
}

__attribute__((noinline)) void hook_across(void (*between)(void))
{
	hook_empty();
	between();
	hook_empty();
}
