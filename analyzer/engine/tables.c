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

#define SITE_DIRECT_MAX (1u << 20) /* larger site ids go through big_sites */

static uint32_t hash_str(const char *s, size_t n)
{
	return tt_hash_bytes(s, n); /* seeded: xalloc.h */
}

struct tt_thread *tt_trace_find_thread(const struct tt_trace *tr, uint32_t serial)
{
	if (!tr->thread_hash)
		return NULL;
	for (uint32_t i = tt_hash_u32(serial) & tr->hash_mask;; i = (i + 1) & tr->hash_mask) {
		uint32_t v = tr->thread_hash[i];

		if (!v)
			return NULL;
		if (tr->threads[v - 1].serial == serial)
			return &tr->threads[v - 1];
	}
}

static void thread_rehash(struct tt_trace *tr, uint32_t slots)
{
	free(tr->thread_hash);
	tr->thread_hash = calloc(slots, sizeof(uint32_t));
	if (!tr->thread_hash)
		tt_oom();
	tr->hash_mask = slots - 1;
	for (uint32_t t = 0; t < tr->nr_threads; t++) {
		uint32_t i = tt_hash_u32(tr->threads[t].serial) & tr->hash_mask;

		while (tr->thread_hash[i])
			i = (i + 1) & tr->hash_mask;
		tr->thread_hash[i] = t + 1;
	}
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
	th = &tr->threads[tr->nr_threads++];
	memset(th, 0, sizeof(*th));
	th->serial = serial;
	if (!tr->thread_hash || tr->nr_threads * 2 > tr->hash_mask + 1)
		thread_rehash(tr, tr->thread_hash ? 2 * (tr->hash_mask + 1) : 64);
	else {
		uint32_t i = tt_hash_u32(serial) & tr->hash_mask;

		while (tr->thread_hash[i])
			i = (i + 1) & tr->hash_mask;
		tr->thread_hash[i] = tr->nr_threads;
	}
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

static void name_rehash(struct tt_trace *tr, uint32_t slots)
{
	free(tr->name_hash);
	tr->name_hash = calloc(slots, sizeof(uint32_t));
	if (!tr->name_hash)
		tt_oom();
	tr->name_hash_mask = slots - 1;
	for (uint32_t n = 0; n < tr->nr_names; n++) {
		uint32_t i = hash_str(tr->names[n], strlen(tr->names[n])) & tr->name_hash_mask;

		while (tr->name_hash[i])
			i = (i + 1) & tr->name_hash_mask;
		tr->name_hash[i] = n + 1;
	}
}


/* Interns a key without NUL bytes; frees `own` (a copy of it) if given. */
static uint32_t intern(struct tt_trace *tr, const char *name, size_t name_bytes, char *own)
{
	uint32_t h = hash_str(name, name_bytes), i;
	char *copy;

	if (tr->name_hash) {
		for (i = h & tr->name_hash_mask; tr->name_hash[i]; i = (i + 1) & tr->name_hash_mask) {
			const char *s = tr->names[tr->name_hash[i] - 1];

			if (strncmp(s, name, name_bytes) == 0 && s[name_bytes] == '\0') {
				free(own);
				return tr->name_hash[i] - 1;
			}
		}
	}
	if (tr->nr_names == tr->cap_names) {
		tr->cap_names = tr->cap_names ? 2 * tr->cap_names : 64;
		tr->names = tt_xrealloc(tr->names, tr->cap_names * sizeof(*tr->names));
		tr->name_hook = tt_xrealloc(tr->name_hook, tr->cap_names);
	}
	tr->name_hook[tr->nr_names] = 0;
	copy = own ? own : tt_xstrndup(name, name_bytes);
	tr->names[tr->nr_names++] = copy;
	if (!tr->name_hash || tr->nr_names * 2 > tr->name_hash_mask + 1)
		name_rehash(tr, tr->name_hash ? 2 * (tr->name_hash_mask + 1) : 256);
	else {
		for (i = h & tr->name_hash_mask; tr->name_hash[i]; i = (i + 1) & tr->name_hash_mask)
			;
		tr->name_hash[i] = tr->nr_names;
	}
	return tr->nr_names - 1;
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

/* Big site ids (rare) live in an open-addressed table of (id, name) pairs. */
static uint32_t *big_site_slot(struct tt_trace *tr, uint32_t site, bool insert)
{
	uint32_t i;

	if (insert && (tr->nr_big_sites + 1) * 2 > tr->big_mask + 1) {
		uint32_t old_slots = tr->big_sites ? tr->big_mask + 1 : 0;
		uint32_t *old = tr->big_sites;

		tr->big_mask = old_slots ? 2 * old_slots - 1 : 63;
		tr->big_sites = calloc(2 * (size_t)(tr->big_mask + 1), sizeof(uint32_t));
		if (!tr->big_sites)
			tt_oom();
		for (uint32_t k = 0; k < old_slots; k++) {
			if (!old[2 * k])
				continue;
			for (i = tt_hash_u32(old[2 * k]) & tr->big_mask; tr->big_sites[2 * i];
			     i = (i + 1) & tr->big_mask)
				;
			tr->big_sites[2 * i] = old[2 * k];
			tr->big_sites[2 * i + 1] = old[2 * k + 1];
		}
		free(old);
	}
	if (!tr->big_sites)
		return NULL;
	for (i = tt_hash_u32(site) & tr->big_mask; tr->big_sites[2 * i]; i = (i + 1) & tr->big_mask)
		if (tr->big_sites[2 * i] == site)
			return &tr->big_sites[2 * i + 1];
	if (!insert)
		return NULL;
	tr->nr_big_sites++;
	tr->big_sites[2 * i] = site;
	tr->big_sites[2 * i + 1] = TT_NO_NAME;
	return &tr->big_sites[2 * i + 1];
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
	uint64_t addr;
	if (tt_symbols_func_addr(tr->syms, site, &addr)) {
		char fn[RECFMT_MAX_NAME_BYTES + 64], loc[RECFMT_MAX_NAME_BYTES + 1];

		tt_symbols_name(tr->syms, addr, fn, sizeof(fn), loc, sizeof(loc));
		name = tt_trace_intern_site(tr, fn, strlen(fn), loc, strlen(loc));
		tr->name_hook[name] = 1;
		tt_trace_site_define(tr, site, name);
		return name;
	}
	/* FORMAT.md §2: a site whose SITE record was lost is named by its number. */
	snprintf(buf, sizeof(buf), "site#%" PRIu32, site);
	name = tt_trace_intern(tr, buf, strlen(buf));
	tt_trace_site_define(tr, site, name);
	return name;
}

