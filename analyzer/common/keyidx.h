/* SPDX-License-Identifier: MIT */
/*
 * keyidx.h - an open-addressed index over a caller's array (index + 1 per
 * slot, 0 empty), for the few lists that a crafted file can make long: the
 * arguments of one activation (chrome, export), which were scanned for
 * each new argument, quadratic in an activation's distinct keys (issue 26).
 * The caller keeps its array and hashes; the index only finds an entry.
 * Built when a list reaches TT_KEYIDX_FROM entries (a scan is cheaper
 * below), freed with the list.
 */
#ifndef TT_KEYIDX_H
#define TT_KEYIDX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/xalloc.h"

#define TT_KEYIDX_FROM 16

struct tt_keyidx {
	uint32_t *tab; /* NULL until built */
	uint32_t mask;
};

/* The entry i with hash h for which same(ctx, i), or UINT32_MAX. */
static inline uint32_t tt_keyidx_find(const struct tt_keyidx *x, uint64_t h,
				      bool (*same)(const void *ctx, uint32_t i), const void *ctx)
{
	for (uint32_t s = (uint32_t)h & x->mask; x->tab[s]; s = (s + 1) & x->mask)
		if (same(ctx, x->tab[s] - 1))
			return x->tab[s] - 1;
	return UINT32_MAX;
}

static inline void tt_keyidx_put(struct tt_keyidx *x, uint64_t h, uint32_t i)
{
	uint32_t s = (uint32_t)h & x->mask;

	while (x->tab[s])
		s = (s + 1) & x->mask;
	x->tab[s] = i + 1;
}

/* Entry n - 1 was appended to a list of n entries: indexes it (and, when
 * the list reaches TT_KEYIDX_FROM, all of them), growing the table so it
 * stays at most half full. hash_of(ctx, i) is entry i's hash. */
static inline void tt_keyidx_added(struct tt_keyidx *x, uint32_t n,
				   uint64_t (*hash_of)(const void *ctx, uint32_t i),
				   const void *ctx)
{
	if (n < TT_KEYIDX_FROM)
		return;
	if (!x->tab || 2 * (uint64_t)n > x->mask) {
		uint32_t mask = x->tab ? 2 * x->mask + 1 : 4 * TT_KEYIDX_FROM - 1;

		while (2 * (uint64_t)n > mask)
			mask = 2 * mask + 1;
		free(x->tab);
		x->tab = tt_xcalloc((size_t)mask + 1, sizeof(*x->tab));
		x->mask = mask;
		for (uint32_t i = 0; i < n; i++)
			tt_keyidx_put(x, hash_of(ctx, i), i);
		return;
	}
	tt_keyidx_put(x, hash_of(ctx, n - 1), n - 1);
}

/* The list was emptied: the index goes (built again if it grows again). */
static inline void tt_keyidx_clear(struct tt_keyidx *x)
{
	free(x->tab);
	x->tab = NULL;
	x->mask = 0;
}

#endif /* TT_KEYIDX_H */
