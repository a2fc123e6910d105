/* SPDX-License-Identifier: MIT */
/*
 * tables.c - the trace's thread table (serial -> struct tt_thread, in order
 * of first appearance) and name table (names interned once; site ids mapped
 * to names, FORMAT.md §3.4, §3.11): what the record walk (events.c) fills
 * and the pairing engine reads. Tables grow with what the file defines,
 * never with a count it claims.
 */
#include "engine/events.h"
#include "common/emit.h"
#include "engine/symbols.h"
#include "engine/walk.h"
#include "common/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SITE_DIRECT_MAX (1u << 20) /* larger site ids go through big_site_map */

/* Thread serials are the file's choice: keyed hash (hmap.h). */
struct serial_key {
	const struct tt_trace *tr;
	uint32_t serial;
};

static bool serial_eq(const void *ctx, uint32_t id)
{
	const struct serial_key *k = ctx;

	return k->tr->threads[id].serial == k->serial;
}

struct tt_thread *tt_trace_find_thread(const struct tt_trace *tr, uint32_t serial)
{
	const struct serial_key k = { tr, serial };
	uint32_t id = tt_hmap_find(&tr->thread_map, tt_hash_u64(serial), serial_eq, &k);

	return id == TT_HMAP_NONE ? NULL : &tr->threads[id];
}

struct tt_thread *tt_trace_thread(struct tt_trace *tr, uint32_t serial)
{
	struct tt_thread *th = tt_trace_find_thread(tr, serial);

	if (th)
		return th;
	if (tr->nr_threads == tr->cap_threads) {
		tr->cap_threads = tr->cap_threads ? 2 * tr->cap_threads : 16;
		tr->threads = tt_xrealloc(tr->threads, tr->cap_threads * sizeof(*tr->threads));
	}
	tt_hmap_put(&tr->thread_map, tt_hash_u64(serial), tr->nr_threads);
	th = &tr->threads[tr->nr_threads++];
	memset(th, 0, sizeof(*th));
	th->serial = serial;
	return th;
}

void tt_thread_label(const struct tt_thread *th, char *out, size_t out_bytes)
{
	if (th->name)
		snprintf(out, out_bytes, "%s", th->name);
	else if (th->defined)
		snprintf(out, out_bytes, "%" PRIu32, th->os_tid);
	else
		snprintf(out, out_bytes, "serial%" PRIu32, th->serial);
}

/* A name's bytes, not NUL-terminated: the key of the name map. */
struct name_key {
	const struct tt_trace *tr;
	const char *name;
	size_t name_bytes;
};

static bool name_eq(const void *ctx, uint32_t id)
{
	const struct name_key *k = ctx;
	const char *s = k->tr->names[id];

	return strncmp(s, k->name, k->name_bytes) == 0 && s[k->name_bytes] == '\0';
}

/* Interns a key without NUL bytes; frees `own` (a copy of it) if given. */
static uint32_t intern(struct tt_trace *tr, const char *name, size_t name_bytes, char *own)
{
	const struct name_key k = { tr, name, name_bytes };
	uint32_t h = tt_hash_bytes(name, name_bytes); /* seeded: hmap.h */
	uint32_t id = tt_hmap_find(&tr->name_map, h, name_eq, &k);

	if (id != TT_HMAP_NONE) {
		free(own);
		return id;
	}
	if (tr->nr_names == tr->cap_names) {
		tr->cap_names = tr->cap_names ? 2 * tr->cap_names : 64;
		tr->names = tt_xrealloc(tr->names, tr->cap_names * sizeof(*tr->names));
		tr->name_hook = tt_xrealloc(tr->name_hook, tr->cap_names);
	}
	tr->name_hook[tr->nr_names] = 0;
	tr->names[tr->nr_names] = own ? own : tt_xstrndup(name, name_bytes);
	tt_hmap_put(&tr->name_map, h, tr->nr_names);
	return tr->nr_names++;
}

/* True if s[0, n) is empty or spaces only: nothing a reader could see. */
static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ')
			return false;
	return true;
}

char *tt_name_shown(const char *name, size_t name_bytes)
{
	if (is_blank(name, name_bytes))
		return tt_xstrndup(TT_BLANK_NAME, strlen(TT_BLANK_NAME));
	return tt_emit_clean(name, name_bytes);
}

/*
 * The key of (name, place), each part cleaned for output (ill-formed UTF-8,
 * control characters and NULs become U+FFFD, emit.c): so the key holds
 * TT_SITE_SEP only as its separator. An empty place gives the name alone.
 */
uint32_t tt_trace_intern_site(struct tt_trace *tr, const char *name, size_t name_bytes,
			      const char *place, size_t place_bytes)
{
	char *n = tt_name_shown(name, name_bytes), *key;
	size_t nb = strlen(n), pb;
	uint32_t id;

	if (!place_bytes)
		return intern(tr, n, nb, n);
	char *p = tt_emit_clean(place, place_bytes);
	pb = strlen(p);
	key = tt_xrealloc(NULL, nb + 1 + pb + 1);
	memcpy(key, n, nb);
	key[nb] = TT_SITE_SEP;
	memcpy(key + nb + 1, p, pb + 1);
	free(n);
	free(p);
	id = intern(tr, key, nb + 1 + pb, NULL);
	free(key);
	return id;
}

uint32_t tt_trace_intern(struct tt_trace *tr, const char *name, size_t name_bytes)
{
	const char *sep = memchr(name, TT_SITE_SEP, name_bytes);

	/* A key made by tt_trace_intern_site() (another replica's or file's
	 * name table): intern it as it is, each part cleaned again. */
	if (sep)
		return tt_trace_intern_site(tr, name, (size_t)(sep - name), sep + 1,
					    name_bytes - (size_t)(sep - name) - 1);
	/* Shown as TT_BLANK_NAME in every view (docs/ANALYZER.md): an empty
	 * frame is a folded stack's " 30", an empty cell a table's hole. */
	if (is_blank(name, name_bytes))
		return intern(tr, TT_BLANK_NAME, strlen(TT_BLANK_NAME), NULL);
	if (tt_emit_is_clean(name, name_bytes))
		return intern(tr, name, name_bytes, NULL);
	/* Ill-formed UTF-8, a control character or a NUL (which would cut
	 * the name short) is shown as U+FFFD (emit.c). The name is the one
	 * shown, so "a\xffb" and "a\uFFFDb" are one name. */
	char *copy = tt_emit_clean(name, name_bytes);
	return intern(tr, copy, strlen(copy), copy);
}

/* Big site ids (rare, and the file's choice: keyed hash) live in a map of
 * (id, name) pairs. */
struct site_key {
	const struct tt_trace *tr;
	uint32_t site;
};

static bool site_eq(const void *ctx, uint32_t id)
{
	const struct site_key *k = ctx;

	return k->tr->big_site_ids[id] == k->site;
}

static uint32_t *big_site_slot(struct tt_trace *tr, uint32_t site, bool insert)
{
	const struct site_key k = { tr, site };
	uint32_t h = tt_hash_u64(site);
	uint32_t id = tt_hmap_find(&tr->big_site_map, h, site_eq, &k);

	if (id != TT_HMAP_NONE)
		return &tr->big_site_names[id];
	if (!insert)
		return NULL;
	if (tr->nr_big_sites == tr->cap_big_sites) {
		tr->cap_big_sites = tr->cap_big_sites ? 2 * tr->cap_big_sites : 16;
		tr->big_site_ids = tt_xrealloc(tr->big_site_ids,
					       tr->cap_big_sites * sizeof(*tr->big_site_ids));
		tr->big_site_names = tt_xrealloc(tr->big_site_names,
						 tr->cap_big_sites * sizeof(*tr->big_site_names));
	}
	id = tr->nr_big_sites++;
	tr->big_site_ids[id] = site;
	tr->big_site_names[id] = TT_NO_NAME;
	tt_hmap_put(&tr->big_site_map, h, id);
	return &tr->big_site_names[id];
}

void tt_trace_site_define(struct tt_trace *tr, uint32_t site, uint32_t name)
{
	if (site >= SITE_DIRECT_MAX) {
		*big_site_slot(tr, site, true) = name;
		return;
	}
	if (site >= tr->nr_site_slots) {
		uint32_t n = tr->nr_site_slots ? tr->nr_site_slots : 256;

		while (n <= site)
			n *= 2;
		/* One more slot: site_name[nr_site_slots] stays TT_NO_NAME, so
		 * that a lookup can clamp its index instead of testing it. */
		tr->site_name = tt_xrealloc(tr->site_name, ((size_t)n + 1) * sizeof(uint32_t));
		for (uint32_t i = tr->nr_site_slots; i <= n; i++)
			tr->site_name[i] = TT_NO_NAME;
		tr->nr_site_slots = n;
	}
	tr->site_name[site] = name;
}

bool tt_trace_site_known(struct tt_trace *tr, uint32_t site)
{
	uint64_t addr;

	if (site < tr->nr_site_slots && tr->site_name[site] != TT_NO_NAME)
		return true;
	if (site >= SITE_DIRECT_MAX) {
		uint32_t *slot = big_site_slot(tr, site, false);

		if (slot && *slot != TT_NO_NAME)
			return true;
	}
	return tt_symbols_func_addr(tr->syms, site, &addr);
}

uint32_t tt_trace_site_name_slow(struct tt_trace *tr, uint32_t site)
{
	char buf[32];
	uint32_t name;

	if (site >= SITE_DIRECT_MAX) {
		uint32_t *slot = big_site_slot(tr, site, false);

		if (slot && *slot != TT_NO_NAME)
			return *slot;
	}
	/* FORMAT.md §3.11: a site named by a function's address (symbols.c). */
	char fn[RECFMT_MAX_NAME_BYTES + 64], loc[RECFMT_MAX_NAME_BYTES + 1];

	if (tt_symbols_func_name(tr->syms, site, fn, sizeof(fn), loc, sizeof(loc))) {
		name = tt_trace_intern_site(tr, fn, strlen(fn), loc, strlen(loc));
		tr->name_hook[name] = 1;
		tt_trace_site_define(tr, site, name);
		return name;
	}
	/* FORMAT.md §2: a site whose SITE record was lost is named by its number. */
	snprintf(buf, sizeof(buf), "site#%" PRIu32, site);
	name = tt_trace_intern(tr, buf, strlen(buf));
	if (!tr->eager_names) /* else a FUNC record may still name it (events.h) */
		tt_trace_site_define(tr, site, name);
	return name;
}

