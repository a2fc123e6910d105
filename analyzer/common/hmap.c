/* SPDX-License-Identifier: MIT */
/*
 * hmap.c - see hmap.h: growing and removal (the rarer, longer steps), and
 * the per-process hash keys.
 */
#include "common/hmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>

#include "common/xalloc.h"

/* The first table: 64 slots (512 bytes), enough for most of a trace's maps. */
#define FIRST_SLOTS 64u

uint64_t tt_hash_sip[2];
uint64_t tt_hash_key;

/* Drawn once, before main() and any walker thread. */
__attribute__((constructor)) static void hash_keys_draw(void)
{
	uint32_t b[6];

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		uint64_t t = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)b;

		b[0] = (uint32_t)t;
		b[1] = (uint32_t)(t >> 32);
		b[2] = (uint32_t)(uintptr_t)&t ^ b[0];
		b[3] = b[0] * 0x85ebca6bu ^ b[2];
		b[4] = b[1] * 0xc2b2ae35u ^ (uint32_t)clock();
		b[5] = b[2] * 0x27d4eb2fu ^ b[4];
	}
	tt_hash_key = (uint64_t)b[1] << 32 | b[2];
	tt_hash_sip[0] = (uint64_t)b[0] << 32 | b[3];
	tt_hash_sip[1] = (uint64_t)b[4] << 32 | b[5];
}

#define ROTL(x, b) ((uint64_t)((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                                             \
	do {                                                                                 \
		v0 += v1;                                                                    \
		v1 = ROTL(v1, 13);                                                           \
		v1 ^= v0;                                                                    \
		v0 = ROTL(v0, 32);                                                           \
		v2 += v3;                                                                    \
		v3 = ROTL(v3, 16);                                                           \
		v3 ^= v2;                                                                    \
		v0 += v3;                                                                    \
		v3 = ROTL(v3, 21);                                                           \
		v3 ^= v0;                                                                    \
		v2 += v1;                                                                    \
		v1 = ROTL(v1, 17);                                                           \
		v1 ^= v2;                                                                    \
		v2 = ROTL(v2, 32);                                                           \
	} while (0)

/* SipHash-1-3 (one round a word, three to finish), as Rust's HashMap. */
uint32_t tt_hash_bytes(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t v0 = tt_hash_sip[0] ^ 0x736f6d6570736575ull;
	uint64_t v1 = tt_hash_sip[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = tt_hash_sip[0] ^ 0x6c7967656e657261ull;
	uint64_t v3 = tt_hash_sip[1] ^ 0x7465646279746573ull;
	uint64_t m, last = (uint64_t)n << 56;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&m, p + i, 8); /* the analyzer's hosts are little-endian; any order hashes */
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t k = 0; i + k < n; k++)
		last |= (uint64_t)p[i + k] << (8 * k);
	v3 ^= last;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	m = v0 ^ v1 ^ v2 ^ v3;
	return (uint32_t)(m ^ m >> 32);
}

void tt_hmap_fini(struct tt_hmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void tt_hmap_grow(struct tt_hmap *m)
{
	struct tt_hmap_slot *old = m->slots;
	uint64_t old_slots = old ? (uint64_t)m->mask + 1 : 0;
	uint64_t slots = old ? 2 * old_slots : FIRST_SLOTS;

	if (slots > (uint64_t)1 << 32)
		tt_oom(); /* 2^31 entries: more than the ids can number */
	m->slots = tt_xcalloc((size_t)slots, sizeof(*m->slots));
	m->mask = (uint32_t)(slots - 1);
	for (uint64_t k = 0; k < old_slots; k++) {
		uint32_t s;

		if (!old[k].id_plus1)
			continue;
		for (s = old[k].hash & m->mask; m->slots[s].id_plus1; s = (s + 1) & m->mask)
			;
		m->slots[s] = old[k];
	}
	free(old);
}

/* The slot holding (hash, id), or UINT32_MAX. */
static uint32_t slot_of(const struct tt_hmap *m, uint32_t hash, uint32_t id)
{
	if (!m->slots)
		return UINT32_MAX;
	for (uint32_t s = hash & m->mask; m->slots[s].id_plus1; s = (s + 1) & m->mask)
		if (m->slots[s].id_plus1 == id + 1)
			return s;
	return UINT32_MAX;
}

bool tt_hmap_remove(struct tt_hmap *m, uint32_t hash, uint32_t id)
{
	uint32_t hole = slot_of(m, hash, id), j;

	if (hole == UINT32_MAX)
		return false;
	/* Each later slot of the run moves into the hole unless its home
	 * slot lies cyclically in (hole, j]: then it is where a probe from
	 * its home finds it already. */
	for (j = (hole + 1) & m->mask; m->slots[j].id_plus1; j = (j + 1) & m->mask) {
		uint32_t home = m->slots[j].hash & m->mask;

		if (hole <= j ? hole < home && home <= j : hole < home || home <= j)
			continue;
		m->slots[hole] = m->slots[j];
		hole = j;
	}
	m->slots[hole].id_plus1 = 0;
	m->slots[hole].hash = 0;
	m->nr--;
	return true;
}

bool tt_hmap_renumber(struct tt_hmap *m, uint32_t hash, uint32_t from, uint32_t to)
{
	uint32_t s = slot_of(m, hash, from);

	assert(to != TT_HMAP_NONE);
	if (s == UINT32_MAX)
		return false;
	m->slots[s].id_plus1 = to + 1;
	return true;
}
