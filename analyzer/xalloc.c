/* SPDX-License-Identifier: MIT */
/*
 * xalloc.c - see xalloc.h.
 */
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tt_oom(void)
{
	fputs("tracetool: out of memory\n", stderr);
	abort();
}

void *tt_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		tt_oom();
	return q;
}

void *tt_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		tt_oom();
	return p;
}

char *tt_xstrndup(const char *s, size_t n)
{
	char *d = tt_xrealloc(NULL, n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}
