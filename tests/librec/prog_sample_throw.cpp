// SPDX-License-Identifier: MIT
/*
 * prog_sample_throw.cpp - a C++ program that throws and catches exceptions
 * in a loop, for REC_SAMPLE (finding F37): a sample landing while
 * _Unwind_RaiseException() moved the stack pointer to its landing pad
 * walked the unwinder's own frame, took a stack word for its caller's pc,
 * and the process died of SIGSEGV (every run at 1-20 kHz). It must run to
 * its end, exit 0. No probe of its own: the recording starts at the first
 * sample, as under tracetool record. Built -O2 without frame pointers, where
 * the stale stack words took the walk to a bad pc. ARG: how many calls,
 * about half of which throw (default 400000).
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static volatile unsigned long sink;

__attribute__((noinline)) static int deep(int d)
{
	for (int i = 0; i < 50; i++)
		sink += (unsigned long)i;
	if (d == 0) {
		if (sink & 1)
			throw std::runtime_error("thrown");
		return 1;
	}
	return deep(d - 1) + 1;
}

__attribute__((noinline)) static long top(int i)
{
	try {
		deep(i % 20);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 400000;
	long caught = 0;

	for (long i = 0; i < n; i++)
		caught += top((int)i);
	if (caught == 0) {
		fprintf(stderr, "nothing thrown in %ld calls\n", n);
		return 1;
	}
	return 0;
}
