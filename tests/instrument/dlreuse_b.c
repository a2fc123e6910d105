/* SPDX-License-Identifier: MIT */
/*
 * dlreuse_b.c - the other library prog_dlreuse cycles (finding F16), with
 * the same three 256-byte blocks as dlreuse_a.c, so that its functions lie
 * where alpha_*'s were. beta_pad1 never runs.
 */
#include <rec.h>

#define BLOCK __attribute__((aligned(256), noinline))

void beta_pad1(void);
void beta_leaf(void);
void beta_run(int n);

/* Per thread: the sanitizers' run calls one library on two threads at once. */
static __thread volatile long sink;

BLOCK void beta_pad1(void)
{
	sink++;
}

BLOCK void beta_leaf(void)
{
	for (int i = 0; i < 300; i++)
		sink += i;
}

BLOCK void beta_run(int n)
{
	for (int i = 0; i < n; i++)
		beta_leaf();
	{
		TRACE_SCOPE_NAMED("beta_scope");
		sink++;
	}
}
