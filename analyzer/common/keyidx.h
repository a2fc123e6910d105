/* SPDX-License-Identifier: MIT */
/*
 * keyidx.h - a map (hmap.h) over a caller's short list, built only once the
 * list is long enough to need it: for the few lists that a crafted file can
 * make long, the arguments of one activation (chrome, export), which were
 * scanned for each new argument, quadratic in an activation's distinct keys
 * (issue 26). The caller keeps its array and hashes; the index only finds an
 * entry. Built when a list reaches TT_KEYIDX_FROM entries (a scan is cheaper
 * below), freed with the list.
 */
#ifndef TT_KEYIDX_H
#define TT_KEYIDX_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hmap.h"

#define TT_KEYIDX_FROM 16

struct tt_keyidx {
	struct tt_hmap map; /* empty until built */
};

/* True once the list is indexed: find with tt_keyidx_find(), else scan. */
static inline bool tt_keyidx_is_built(const struct tt_keyidx *x)
{
	return x->map.nr != 0;
}

/* The entry i with hash h for which same(ctx, i), or UINT32_MAX. */
static inline uint32_t tt_keyidx_find(const struct tt_keyidx *x, uint32_t h,
				      bool (*same)(const void *ctx, uint32_t i), const void *ctx)
{
	return tt_hmap_find(&x->map, h, same, ctx);
}

/* Entry n - 1 was appended to a list of n entries: indexes it (and, when
 * the list reaches TT_KEYIDX_FROM, all of them). hash_of(ctx, i) is entry
 * i's hash. */
static inline void tt_keyidx_added(struct tt_keyidx *x, uint32_t n,
				   uint32_t (*hash_of)(const void *ctx, uint32_t i),
				   const void *ctx)
{
	if (n < TT_KEYIDX_FROM)
		return;
	for (uint32_t i = tt_keyidx_is_built(x) ? n - 1 : 0; i < n; i++)
		tt_hmap_put(&x->map, hash_of(ctx, i), i);
}

/* The list was emptied: the index goes (built again if it grows again).
 * Inline and a test: chrome and export clear each activation's list. */
static inline void tt_keyidx_clear(struct tt_keyidx *x)
{
	if (x->map.slots)
		tt_hmap_fini(&x->map);
}

#endif /* TT_KEYIDX_H */
