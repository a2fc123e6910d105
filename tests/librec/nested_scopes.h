/* SPDX-License-Identifier: MIT */
/*
 * nested_scopes.h - the instrumented functions of known shape that several
 * librec tests run: outer() makes 1 outer, 1 middle, 1 block, 3 leaf and 5
 * recurse activations, 6 deep at most. Included, not linked: each test
 * program has its own sites.
 */
#ifndef NESTED_SCOPES_H
#define NESTED_SCOPES_H

#include <rec.h>

static void leaf(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static void middle(void)
{
	TRACE_SCOPE();
	leaf();
	leaf();
}

static unsigned recurse(unsigned depth)
{
	TRACE_SCOPE();
	return depth ? 1 + recurse(depth - 1) : 0;
}

static void outer(void)
{
	TRACE_SCOPE();
	middle();
	{
		TRACE_SCOPE_NAMED("block");
		leaf();
	}
	recurse(4);
}

#endif
