/* SPDX-License-Identifier: MIT */
/*
 * hotspot.c - the classic whole-program profiling demo (README, "Whole-program
 * mode"): func_b's loop runs 400 000 times, func_a's 100 000 times, and
 * wrapper_a/wrapper_b only call them, so a profiler should show func_b at
 * about 4 times func_a and the wrappers with about no self time. No
 * TRACE_SCOPE anywhere: built with -finstrument-functions and linked with
 * librec, every function is traced. Usage: hotspot [ROUNDS] (default 200).
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink; /* keeps the loops from being optimised away */

NOINLINE void func_a(void);
NOINLINE void func_b(void);
NOINLINE void wrapper_a(void);
NOINLINE void wrapper_b(void);

void func_a(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}

void func_b(void)
{
	for (unsigned long i = 0; i < 400000; i++)
		sink += i;
}

void wrapper_a(void)
{
	func_a();
}

void wrapper_b(void)
{
	func_b();
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 200;

	for (long i = 0; i < rounds; i++) {
		wrapper_a();
		wrapper_b();
	}
	return 0;
}
