/* SPDX-License-Identifier: MIT */
/*
 * dlreuse_a.c - one of the two libraries prog_dlreuse cycles (finding F16),
 * built with -finstrument-functions: closed with dlclose(), its addresses
 * are taken by the other one (dlreuse_b.c), whose functions must not be
 * named or counted as these. Three functions, each starting a 256-byte
 * block, as in dlreuse_b.c: mapped at one place, the two libraries have
 * functions at the same addresses, and functions that run in each share
 * some (gcc and clang: alpha_run with beta_run or beta_leaf). prog_dlreuse
 * counts the rounds where they do, and the test requires some. alpha_pad
 * never runs.
 */
#include <rec.h>

#define BLOCK __attribute__((aligned(256), noinline))

void alpha_leaf(void);
void alpha_run(int n);
void alpha_pad(void);

/* Per thread: the sanitizers' run calls one library on two threads at once. */
static __thread volatile long sink;

BLOCK void alpha_leaf(void)
{
	for (int i = 0; i < 200; i++)
		sink += i;
}

BLOCK void alpha_run(int n)
{
	for (int i = 0; i < n; i++)
		alpha_leaf();
	{
		TRACE_SCOPE_NAMED("alpha_scope");
		sink++;
	}
}

BLOCK void alpha_pad(void)
{
	sink--;
}
