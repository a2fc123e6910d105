/* SPDX-License-Identifier: MIT */
/*
 * xalloc.h - what every analyzer file needs and should not write again:
 * allocation that cannot fail (out of memory prints one line naming the file
 * and exits with status 1: tracetool has nothing useful to do without its
 * tables) and the integer
 * hash of its open-addressed tables.
 */
#ifndef TT_XALLOC_H
#define TT_XALLOC_H

#include <stddef.h>
#include <stdint.h>

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

/*
 * FNV-1a's offset basis for the tables keyed by strings a file chooses
 * (names, keys, labels, dictionary entries), drawn at random per process:
 * names crafted to share a 32-bit FNV-1a hash (easy from a known basis) do
 * not collide under an unknown one, so such a table stays O(1) a lookup
 * (issue 26). Only lookups use it: nothing printed depends on it.
 */
extern uint32_t tt_hash_basis;

static inline uint32_t tt_hash_bytes(const char *s, size_t n)
{
	uint32_t h = tt_hash_basis;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* Mixes the bits of x (a 32-bit integer finaliser) for table indices. */
static inline uint32_t tt_hash_u32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

#endif /* TT_XALLOC_H */
