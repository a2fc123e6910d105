/* SPDX-License-Identifier: MIT */
/*
 * site.c - the probe-site registry: gives each TRACE_SCOPE site a small id
 * on its first hit and lets the writer find the site of an id. Ids are never
 * reused and sites are never removed, so the table only grows, in chunks
 * that never move: the writer reads it without a lock.
 *
 * A TRACE_SCOPE site lives in the static storage of the module that holds
 * the probe, which dlclose() may unmap at any time after the probe returns.
 * So registration copies what the writer needs of it (line, name, file) into
 * librec's own memory, and the table points at the copy: nothing of librec
 * reads a host module's memory after the probe that registered the site
 * returned (README, "What librec guarantees"). The only write into the module is the site's id,
 * during that probe.
 *
 * Function sites (the -finstrument-functions hooks, probe.c) are registered
 * by code address instead: each gets a struct rec__fsite in an arena that
 * never moves, in the same id space, and an address -> site hash table that
 * only the registering slow path reads, under the lock. The writer tells the
 * two kinds apart by the site's `file` pointer (func_marker).
 *
 * A function site is the code at an address in one module: the pair (fn,
 * snapshot of the module that held fn when it registered). A library
 * closed with dlclose() and another mapped at its addresses (finding F16)
 * gives the same fn a second site, with the other snapshot; the same
 * library mapped there again finds its old site (snapshots are deduplicated
 * by identity), so a plugin host cycling libraries does not grow the table.
 * Which of an address's sites is current is known per "module epoch"
 * (rec__modules_epoch()), which librectrace.so's dlclose() bumps when the
 * loader unmapped something (modules.c): a site found in the module at fn in the current epoch is
 * current for fn; at the first miss after a bump, one capture tells which
 * is. The static library has no dlclose() of its own: its epoch stays 0 and
 * a function is its address for the whole run, as samples are named there.
 */
#include "rec_internal.h"

#include <string.h>
#include <sys/mman.h>

#define CHUNK_SHIFT 12
#define CHUNK_SITES (1u << CHUNK_SHIFT)
#define NR_CHUNKS 4096u /* 16 M sites */

static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
/* Every entry points into librec's own memory (the copies, or farena). */
static const struct rec__site **chunks[NR_CHUNKS];
/*
 * Number of registered sites; ids are 1..nr_sites. Release-stored after the
 * table slot is written (pairs with the acquire in rec__site_count()).
 */
static uint32_t nr_sites;

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The copies of host sites and their strings, under site_lock: bump
 * allocation in mmap'ed chunks that are never freed (sites are never
 * removed). mmap, not malloc: registration may run in a signal handler
 * (probe.c). A string is cut at RECFMT_MAX_NAME_BYTES, as the file would.
 */
#define ARENA_CHUNK_BYTES (64u << 10)
_Static_assert(RECFMT_MAX_NAME_BYTES + 1 + sizeof(struct rec__site) < ARENA_CHUNK_BYTES,
	       "a site and a string fit in one chunk");
static char *arena, *arena_end;
static const char *last_file; /* the copy of the last file name, shared by its sites */

static void *arena_alloc(size_t bytes, size_t align)
{
	char *p = (char *)(((uintptr_t)arena + align - 1) & ~(uintptr_t)(align - 1));

	if (!arena || bytes > (size_t)(arena_end - p)) {
		arena = map_zeroed(ARENA_CHUNK_BYTES);
		if (!arena)
			return NULL;
		arena_end = arena + ARENA_CHUNK_BYTES;
		p = arena;
	}
	arena = p + bytes;
	return p;
}

static const char *copy_string(const char *s)
{
	size_t n = 0;
	char *c;

	if (!s)
		return NULL;
	while (n < RECFMT_MAX_NAME_BYTES && s[n])
		n++;
	c = arena_alloc(n + 1, 1);
	if (c)
		memcpy(c, s, n); /* the arena is zeroed: c[n] is the terminator */
	return c;
}

/*
 * Under site_lock: the C++ name being cut (copy_site()). Not on the stack:
 * registration runs in a probe, inside the enclosing activations of a
 * nested site, and a 4 KiB frame reached a page of the thread's stack that
 * nothing had touched yet -- a page fault in the enclosing activation, on
 * every thread that registered a site with its stack no deeper before
 * (tests/librec/test_honest.c). The lock is never taken in a handler on a
 * thread inside librec (probe.c: rec__in_librec), so one buffer serves all.
 */
static char cxx_buf[RECFMT_MAX_NAME_BYTES + 1];

/* Under site_lock: librec's copy of a host site, or NULL if out of memory. */
static struct rec__site *copy_site(const struct rec__site *site)
{
	struct rec__site *c = arena_alloc(sizeof(*c), _Alignof(struct rec__site));

	if (!c)
		return NULL;
	c->line = site->line & ~REC__SITE_PRETTY;
	if ((site->line & REC__SITE_PRETTY) && site->name) {
		/* C++ TRACE_SCOPE(): the name without the signature (cxxname.c). */
		rec__cxx_name(site->name, cxx_buf, sizeof(cxx_buf));
		c->name = copy_string(cxx_buf);
	} else {
		c->name = copy_string(site->name);
	}
	/* Sites of one file come in runs: share the copy of its name. */
	if (site->file && last_file &&
	    strncmp(site->file, last_file, RECFMT_MAX_NAME_BYTES + 1) == 0)
		c->file = last_file;
	else
		c->file = last_file = copy_string(site->file);
	if ((site->name && !c->name) || (site->file && !c->file))
		return NULL; /* the chunk holding c is reused by nobody: a few bytes lost */
	return c;
}

/*
 * Under site_lock: give `owned` (librec's memory) the next id, publish it
 * in the table and store the id in *id_slot (the host's site, or owned's own
 * id). Return: the id, or 0 if the table is full or out of memory.
 */
static uint32_t register_locked(struct rec__site *owned, uint32_t *id_slot)
{
	uint32_t id = nr_sites + 1;

	if (id >= NR_CHUNKS * CHUNK_SITES)
		return 0;
	if (!chunks[id >> CHUNK_SHIFT]) {
		/* mmap, not malloc: this may run in a signal handler (see probe.c). */
		void *chunk = map_zeroed(CHUNK_SITES * sizeof(**chunks));
		if (!chunk)
			return 0;
		chunks[id >> CHUNK_SHIFT] = chunk;
	}
	owned->id = id;
	chunks[id >> CHUNK_SHIFT][id & (CHUNK_SITES - 1)] = owned;
	__atomic_store_n(&nr_sites, id, __ATOMIC_RELEASE);
	/* Pairs with the acquire load in enter_slow(); the fast path needs no order. */
	__atomic_store_n(id_slot, id, __ATOMIC_RELEASE);
	return id;
}

/*
 * rec__site_register() - the id of `site`, registering it on first use.
 * Called from the probe's slow path, while the site's module is surely
 * mapped (its code is running); takes a lock, allocates with mmap only.
 * Return: the id, or 0 if the table is full or out of memory (the caller
 * counts a drop).
 */
uint32_t rec__site_register(struct rec__site *site)
{
	struct rec__site *copy;
	uint32_t id;

	pthread_mutex_lock(&site_lock);
	id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
	if (!id && (copy = copy_site(site)))
		id = register_locked(copy, &site->id);
	/* else another thread registered it meanwhile */
	pthread_mutex_unlock(&site_lock);
	return id;
}

/* A function site: `site` first, so that a struct rec__site * is one. */
struct rec__fsite {
	struct rec__site site;
	uintptr_t fn;
	uint32_t snap;	  /* index + 1 of its module's snapshot; 0: none (main program) */
	uint32_t checked; /* under site_lock: the epoch it was last found current in */
};

static const char func_marker[] = "<function>";
#define FARENA_SITES 4096u
static struct rec__fsite *farena;	/* current arena, FARENA_SITES entries */
static uint32_t farena_used;
static struct rec__fsite **fhash;	/* open addressing, NULL = empty */
static uint32_t fhash_mask, fhash_used;

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
 * Snapshots of the modules holding function sites (rec__modules_capture()),
 * in the arena, published like the sites: the slot first, then the count
 * with a release (pairs with the acquire in rec__site_nr_snaps()). A
 * module's snapshot is published before the id of its first function site,
 * so a writer that sees a site sees its module's snapshot.
 */
#define NR_SNAPS_MAX 65536u
static const struct rec__module_snap **snaps;
static uint32_t nr_snaps;
static struct rec__module_snap *spare_snap; /* a capture that matched a known snapshot */
static uint32_t last_snap;		    /* index + 1 of the last match; 0 none */

static bool same_module(const struct rec__module_snap *a, const struct rec__module_snap *b)
{
	return a->bias == b->bias && a->map_start == b->map_start && a->map_end == b->map_end &&
	       a->path_hash == b->path_hash && a->ranges[0].start == b->ranges[0].start;
}

/*
 * Under site_lock: the snapshot of the module holding fn, taken now if it
 * has none. A capture (a lookup and a walk of a few program headers) per
 * new function site and per site checked in a new epoch, compared with the
 * last module matched, then with all: a module may have been unloaded and
 * another mapped at its addresses. Return: its index + 1; 0 for the main
 * program, a module that cannot be found, or no memory.
 */
static uint32_t snap_module_of(uintptr_t fn)
{
	struct rec__module_snap *snap = spare_snap;
	const char *path;

	if (!snap && !(snap = spare_snap = arena_alloc(sizeof(*snap), _Alignof(struct rec__module_snap))))
		return 0;
	if (!rec__modules_capture(fn, snap, &path))
		return 0;
	if (last_snap && same_module(snap, snaps[last_snap - 1]))
		return last_snap;
	for (uint32_t i = nr_snaps; i-- > 0;) {
		if (same_module(snap, snaps[i])) {
			last_snap = i + 1;
			return last_snap;
		}
	}
	if (nr_snaps == NR_SNAPS_MAX || (!snaps && !(snaps = map_zeroed(NR_SNAPS_MAX * sizeof(*snaps)))))
		return 0; /* the writer's scan still records the module if it is loaded */
	snap->path = copy_string(path);
	if (!snap->path)
		return 0;
	spare_snap = NULL;
	snaps[nr_snaps] = snap;
	last_snap = nr_snaps + 1;
	__atomic_store_n(&nr_snaps, nr_snaps + 1, __ATOMIC_RELEASE);
	return last_snap;
}

uint32_t rec__site_nr_snaps(void)
{
	return __atomic_load_n(&nr_snaps, __ATOMIC_ACQUIRE);
}

const struct rec__module_snap *rec__site_snap(uint32_t i)
{
	return snaps[i];
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
	uint32_t i, id = 0, snap, epoch;
	bool known = false;

	pthread_mutex_lock(&site_lock);
	epoch = rec__modules_epoch();
	if ((fhash_used + 1) * 2 > (fhash ? fhash_mask + 1 : 0) && !fhash_grow())
		goto out;
	/* An address's sites follow each other in its probe sequence. */
	for (i = hash_fn(fn) & fhash_mask; fhash[i]; i = (i + 1) & fhash_mask) {
		if (fhash[i]->fn != fn)
			continue;
		if (fhash[i]->checked == epoch) {
			id = fhash[i]->site.id;
			goto out;
		}
		known = true;
	}
	/* Not checked since a dlclose() unmapped something: which module is there now? */
	snap = snap_module_of(fn);
	for (uint32_t k = hash_fn(fn) & fhash_mask; known && fhash[k]; k = (k + 1) & fhash_mask) {
		if (fhash[k]->fn == fn && fhash[k]->snap == snap) {
			fhash[k]->checked = epoch;
			id = fhash[k]->site.id;
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
	f->snap = snap;
	f->checked = epoch;
	/* fn and snap before the id: the writer reads them after loading the site count. */
	id = register_locked(&f->site, &f->site.id);
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

uint32_t rec__site_func_snap(const struct rec__site *site)
{
	return site->file == func_marker ? ((const struct rec__fsite *)site)->snap : 0;
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
