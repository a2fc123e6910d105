/* SPDX-License-Identifier: MIT */
/*
 * hmap.h - the analyzer's one hash map, and the hashes its tables use.
 *
 * A map is an index over an array the caller keeps (names, threads, rows,
 * tree nodes...): it maps a 32-bit hash to entry ids (the caller's array
 * indices), and the caller says which of the candidates is its key. So the
 * entries stay dense, in the order they were added (what is printed never
 * depends on the map), and one map serves every key type without copying
 * keys. Open addressing with linear probing, at most half full; each slot
 * holds the entry's full hash, so a probe compares keys only on a 32-bit
 * match, and growing never calls back into the caller. Removal shifts the
 * following run back (no tombstones): a map that sees many removals stays
 * as fast as one that sees none.
 *
 * Work stays linear only if hashes spread what a file chooses: keys a file
 * picks (names, thread serials, flow and site ids) are hashed with the
 * per-process random seeds below (tt_hash_bytes(), tt_hash_u64()), never
 * with a fixed function that a crafted file could collide (docs/ANALYZER.md,
 * "Hostile files"). Keys the analyzer numbers itself (name indices, node
 * ids, pointers) may use a cheap fixed mix.
 *
 * Not thread-safe: a map belongs to one walker, or is read-only while
 * shared.
 */
#ifndef TT_HMAP_H
#define TT_HMAP_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* No entry: what tt_hmap_find() returns on a miss. */
#define TT_HMAP_NONE UINT32_MAX

struct tt_hmap_slot {
	uint32_t hash;
	uint32_t id_plus1; /* 0: empty */
};

/* Zeroed (TT_HMAP_INIT, calloc, memset) is an empty map. */
struct tt_hmap {
	struct tt_hmap_slot *slots; /* mask + 1 of them, or NULL before the first put */
	uint32_t mask;
	uint32_t nr; /* entries held */
};

#define TT_HMAP_INIT { NULL, 0, 0 }

/* Frees the slots; the map is empty again (and may be used again). */
void tt_hmap_fini(struct tt_hmap *m);

/* Doubles the slots (or makes the first ones); tt_hmap_put() calls it. */
void tt_hmap_grow(struct tt_hmap *m);

/*
 * tt_hmap_find() - the entry with this hash for which eq(ctx, id) holds.
 * Inline, so that the compiler sees eq() and inlines it too.
 *
 * Return: its id, or TT_HMAP_NONE.
 */
static inline uint32_t tt_hmap_find(const struct tt_hmap *m, uint32_t hash,
				    bool (*eq)(const void *ctx, uint32_t id), const void *ctx)
{
	if (!m->slots)
		return TT_HMAP_NONE;
	for (uint32_t s = hash & m->mask;; s = (s + 1) & m->mask) {
		const struct tt_hmap_slot *e = &m->slots[s];

		if (!e->id_plus1)
			return TT_HMAP_NONE;
		if (e->hash == hash && eq(ctx, e->id_plus1 - 1))
			return e->id_plus1 - 1;
	}
}

/*
 * tt_hmap_put() - adds entry id under hash. The caller has checked that its
 * key is not in the map (tt_hmap_find()): the map holds whatever it is given.
 * id < TT_HMAP_NONE.
 */
static inline void tt_hmap_put(struct tt_hmap *m, uint32_t hash, uint32_t id)
{
	uint32_t s;

	assert(id != TT_HMAP_NONE);
	if (!m->slots || 2 * ((uint64_t)m->nr + 1) > (uint64_t)m->mask + 1)
		tt_hmap_grow(m);
	for (s = hash & m->mask; m->slots[s].id_plus1; s = (s + 1) & m->mask)
		;
	m->slots[s].hash = hash;
	m->slots[s].id_plus1 = id + 1;
	m->nr++;
}

/*
 * tt_hmap_remove() - removes entry id, added under hash. The caller's array
 * is its own business: to keep it dense, move its last entry into the hole
 * and tell the map with tt_hmap_renumber().
 *
 * Return: false if the map had no such entry.
 */
bool tt_hmap_remove(struct tt_hmap *m, uint32_t hash, uint32_t id);

/*
 * tt_hmap_renumber() - entry from, added under hash, is now entry to.
 *
 * Return: false if the map had no such entry.
 */
bool tt_hmap_renumber(struct tt_hmap *m, uint32_t hash, uint32_t from, uint32_t to);

/*
 * The per-process random keys, drawn before main(): tt_hash_sip (128 bits)
 * for the keys a file chooses as bytes (names, keys, labels, dictionary
 * entries), tt_hash_key for those it chooses as numbers (ids, serials).
 * Only lookups use them: nothing printed depends on them.
 *
 * Bytes are hashed with SipHash-1-3, not with FNV-1a from a random basis:
 * FNV-1a's bytes touch only the low 8 bits of its state, so for names of
 * one length a basis B gives the hashes of the basis B mod 256 plus one
 * constant: names crafted to share a hash (easy from a known basis) shared
 * it under 1 basis in 256 (F30: tracetool values ran for minutes on such a
 * file, 1 run in ~200). SipHash's output cannot be predicted without its
 * key, so such a table stays O(1) a lookup (issue 26).
 */
extern uint64_t tt_hash_sip[2];
extern uint64_t tt_hash_key;

/* SipHash-1-3 of the n bytes at s under tt_hash_sip, folded to 32 bits. */
uint32_t tt_hash_bytes(const char *s, size_t n);

/* Mixes the bits of x (a 32-bit integer finaliser, a bijection, no key):
 * for numbers the analyzer chose. */
static inline uint32_t tt_hash_u32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* A number the file chose, keyed by tt_hash_key (splitmix64's finaliser of
 * x ^ key): which x share a slot cannot be known without the key. */
static inline uint32_t tt_hash_u64(uint64_t x)
{
	x ^= tt_hash_key;
	x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ x >> 27) * 0x94d049bb133111ebull;
	return (uint32_t)(x ^ x >> 31);
}

#endif /* TT_HMAP_H */
