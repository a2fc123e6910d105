/* SPDX-License-Identifier: MIT */
/*
 * site.c - the probe-site registry: gives each TRACE_SCOPE site a small id
 * on its first hit and lets the writer find the site of an id. Ids are never
 * reused and sites are never removed (they live in static storage of the
 * host program), so the table only grows, in chunks that never move: the
 * writer reads it without a lock.
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
uint32_t rec__site_register(struct rec__site *site)
{
	uint32_t id;

	pthread_mutex_lock(&site_lock);
	id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
	if (id)
		goto out; /* another thread registered it meanwhile */
	id = nr_sites + 1;
	if (id >= NR_CHUNKS * CHUNK_SITES) {
		id = 0;
		goto out;
	}
	if (!chunks[id >> CHUNK_SHIFT]) {
		/* mmap, not malloc: this may run in a signal handler (see probe.c). */
		void *chunk = mmap(NULL, CHUNK_SITES * sizeof(**chunks), PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (chunk == MAP_FAILED) {
			id = 0;
			goto out;
		}
		chunks[id >> CHUNK_SHIFT] = chunk;
	}
	chunks[id >> CHUNK_SHIFT][id & (CHUNK_SITES - 1)] = site;
	__atomic_store_n(&nr_sites, id, __ATOMIC_RELEASE);
	/* Pairs with the acquire load in enter_slow(); the fast path needs no order. */
	__atomic_store_n(&site->id, id, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&site_lock);
	return id;
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
