/* SPDX-License-Identifier: MIT */
/*
 * xalloc.c - see xalloc.h.
 */
#include "common/xalloc.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file being read, for tt_oom()'s line; set before any walk, read on
 * any thread (a pointer written once per walk, before its threads start). */
static const char *oom_path;

void tt_xalloc_set_path(const char *path)
{
	oom_path = path;
}

void tt_oom(void)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	/* Walker threads may run out together: one line, from the first;
	 * the others wait for its _exit(). */
	if (atomic_flag_test_and_set(&said))
		for (;;)
			pause();
	/* Contract §7: a limit reached is exit 1 with one line, never an abort.
	 * _exit: another walker thread may be writing stdout; what was printed
	 * is incomplete anyway, and the exit status says so. */
	if (oom_path)
		fprintf(stderr, "tracetool: %s: out of memory\n", oom_path);
	else
		fputs("tracetool: out of memory\n", stderr);
	_exit(1);
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
