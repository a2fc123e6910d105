/* SPDX-License-Identifier: MIT */
/*
 * site.c - the probe-site registry: gives each TRACE_SCOPE site a small id
 * on its first hit and lets the writer find the site of an id. Ids are never
 * reused and sites are never removed (they live in static storage of the
 * host program), so the table only grows, in chunks that never move: the
 * writer reads it without a lock.
 *
 * Function sites (the -finstrument-functions hooks, probe.c) are registered
 * by code address instead: each gets a struct rec__fsite in an arena that
 * never moves, in the same id space, and an address -> site hash table that
 * only the registering slow path reads, under the lock. The writer tells the
 * two kinds apart by the site's `file` pointer (func_marker).
 */
#include "rec_internal.h"

#include <sys/mman.h>

#define CHUNK_SHIFT 12
#define CHUNK_SITES (1u << CHUNK_SHIFT)
#define NR_CHUNKS 4096u /* 16 M sites */

static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct rec__site **chunks[NR_CHUNKS];
/*
 * Number of registered sites; ids are 1..nr_sites. Release-stored after the
 * table slot is written (pairs with the acquire in rec__site_count()).
 */
static uint32_t nr_sites;

/*
 * rec__site_register() - the id of `site`, registering it on first use.
 * Called from the probe's slow path; takes a lock, allocates once per chunk.
 * Return: the id, or 0 if the table is full or out of memory (the caller
 * counts a drop).
 */
/* Under site_lock: see rec__site_register(). */
static uint32_t register_locked(struct rec__site *site)
{
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);

	if (id)
		return id; /* another thread registered it meanwhile */
	id = nr_sites + 1;
	if (id >= NR_CHUNKS * CHUNK_SITES)
		return 0;
	if (!chunks[id >> CHUNK_SHIFT]) {
		/* mmap, not malloc: this may run in a signal handler (see probe.c). */
		void *chunk = mmap(NULL, CHUNK_SITES * sizeof(**chunks), PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (chunk == MAP_FAILED)
			return 0;
		chunks[id >> CHUNK_SHIFT] = chunk;
	}
	chunks[id >> CHUNK_SHIFT][id & (CHUNK_SITES - 1)] = site;
	__atomic_store_n(&nr_sites, id, __ATOMIC_RELEASE);
	/* Pairs with the acquire load in enter_slow(); the fast path needs no order. */
	__atomic_store_n(&site->id, id, __ATOMIC_RELEASE);
	return id;
}

uint32_t rec__site_register(struct rec__site *site)
{
	uint32_t id;

	pthread_mutex_lock(&site_lock);
	id = register_locked(site);
	pthread_mutex_unlock(&site_lock);
	return id;
}

/* A function site: `site` first, so that a struct rec__site * is one. */
struct rec__fsite {
	struct rec__site site;
	uintptr_t fn;
};

static const char func_marker[] = "<function>";
#define FARENA_SITES 4096u
static struct rec__fsite *farena;	/* current arena, FARENA_SITES entries */
static uint32_t farena_used;
static struct rec__fsite **fhash;	/* open addressing, NULL = empty */
static uint32_t fhash_mask, fhash_used;

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint32_t hash_fn(uintptr_t fn)
{
	uint64_t x = (uint64_t)fn * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(x >> 32);
}

/* Under site_lock: double the hash table. Return: false if out of memory. */
static bool fhash_grow(void)
{
	uint32_t slots = fhash ? 2 * (fhash_mask + 1) : 1024;
	struct rec__fsite **h = map_zeroed(slots * sizeof(*h));

	if (!h)
		return false;
	for (uint32_t i = 0; fhash && i <= fhash_mask; i++) {
		uint32_t j;

		if (!fhash[i])
			continue;
		for (j = hash_fn(fhash[i]->fn) & (slots - 1); h[j]; j = (j + 1) & (slots - 1))
			;
		h[j] = fhash[i];
	}
	if (fhash)
		munmap(fhash, (fhash_mask + 1) * sizeof(*fhash));
	fhash = h;
	fhash_mask = slots - 1;
	return true;
}

/*
 * rec__site_register_func() - the site id of the function at `fn`,
 * registering it on first use. Called from the hooks' slow path (probe.c),
 * possibly in a signal handler (rec__in_librec guards re-entry): takes a
 * lock and allocates with mmap only.
 * Return: the id, or 0 if the table is full or out of memory.
 */
uint32_t rec__site_register_func(uintptr_t fn)
{
	struct rec__fsite *f = NULL;
	uint32_t i, id = 0;

	pthread_mutex_lock(&site_lock);
	if ((fhash_used + 1) * 2 > (fhash ? fhash_mask + 1 : 0) && !fhash_grow())
		goto out;
	for (i = hash_fn(fn) & fhash_mask; fhash[i]; i = (i + 1) & fhash_mask) {
		if (fhash[i]->fn == fn) {
			id = fhash[i]->site.id;
			goto out;
		}
	}
	if (!farena || farena_used == FARENA_SITES) {
		farena = map_zeroed(FARENA_SITES * sizeof(*farena));
		farena_used = 0;
		if (!farena)
			goto out;
	}
	f = &farena[farena_used];
	f->site.name = "";
	f->site.file = func_marker;
	f->fn = fn;
	/* fn before the id: the writer reads fn after loading the site count. */
	id = register_locked(&f->site);
	if (id) {
		farena_used++;
		fhash[i] = f;
		fhash_used++;
	}
out:
	pthread_mutex_unlock(&site_lock);
	return id;
}

uintptr_t rec__site_func_addr(const struct rec__site *site)
{
	return site->file == func_marker ? ((const struct rec__fsite *)site)->fn : 0;
}

uint32_t rec__site_count(void)
{
	/* Pairs with the release store in rec__site_register(). */
	return __atomic_load_n(&nr_sites, __ATOMIC_ACQUIRE);
}

const struct rec__site *rec__site_get(uint32_t id)
{
	return chunks[id >> CHUNK_SHIFT][id & (CHUNK_SITES - 1)];
}

/* fork(): keep the table consistent in the child (lifecycle.c). */
void rec__site_lock(void)
{
	pthread_mutex_lock(&site_lock);
}

void rec__site_unlock(void)
{
	pthread_mutex_unlock(&site_lock);
}

void rec__site_reinit_lock(void)
{
	pthread_mutex_init(&site_lock, NULL);
}
