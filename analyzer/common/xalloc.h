/* SPDX-License-Identifier: MIT */
/*
 * xalloc.h - what every analyzer file needs and should not write again:
 * allocation that cannot fail (out of memory prints one line naming the file
 * and exits with status 1: tracetool has nothing useful to do without its
 * tables). The hashes of its tables are in hmap.h.
 */
#ifndef TT_XALLOC_H
#define TT_XALLOC_H

#include <stddef.h>

/* "tracetool: FILE: out of memory" on stderr, then _exit(1). */
__attribute__((noreturn)) void tt_oom(void);
/* The file tt_oom() names (tt_trace_init() sets it). */
void tt_xalloc_set_path(const char *path);
/* realloc() that never returns NULL; n == 0 allocates 1 byte. */
void *tt_xrealloc(void *p, size_t n);
/* calloc() that never returns NULL; n == 0 allocates one element. */
void *tt_xcalloc(size_t n, size_t size);
/* A NUL-terminated copy of s[0, n). */
char *tt_xstrndup(const char *s, size_t n);

#endif /* TT_XALLOC_H */
