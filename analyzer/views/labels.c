/* SPDX-License-Identifier: MIT */
/*
 * labels.c - the labels printed for scope names (docs/ANALYZER.md, "Names"):
 * a scope is interned by its name and its place (events.h, TT_SITE_SEP), so
 * that scopes of different sites never merge; a report prints the name
 * alone where no other scope of the report shares it, and "name (place)"
 * where several do.
 */
#include "views/labels.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Keys are copied with this many spare bytes: a label is at most 2 longer. */
#define TT_NAME_SPARE 3

enum tt_label_mode { TT_LABEL_SHOW, TT_LABEL_SPLIT };

/* The length of a key's name part. */
static size_t base_len(const char *key)
{
	const char *sep = strchr(key, TT_SITE_SEP);

	return sep ? (size_t)(sep - key) : strlen(key);
}

static int cmp_base(const char *a, const char *b)
{
	size_t na = base_len(a), nb = base_len(b);
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : (na > nb) - (na < nb);
}

/* The short form of a place: the file's name without its directories. */
static const char *short_place(const char *key)
{
	const char *place = strchr(key, TT_SITE_SEP) + 1, *slash = strrchr(place, '/');

	return slash ? slash + 1 : place;
}

static char **sort_keys; /* qsort has no context argument */

static int by_base(const void *a, const void *b)
{
	int c = cmp_base(sort_keys[*(const uint32_t *)a], sort_keys[*(const uint32_t *)b]);

	return c ? c : (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static int by_short_place(const void *a, const void *b)
{
	const char *x = sort_keys[*(const uint32_t *)a], *y = sort_keys[*(const uint32_t *)b];

	return strcmp(strchr(x, TT_SITE_SEP) ? short_place(x) : "",
		      strchr(y, TT_SITE_SEP) ? short_place(y) : "");
}

/* Rewrites key k in place into its label; full: the whole place, not its short form. */
static void label_one(char *key, enum tt_label_mode mode, bool alone, bool full)
{
	char *sep = strchr(key, TT_SITE_SEP);
	size_t nb, pb;
	const char *place;

	if (!sep)
		return;
	if (alone || mode == TT_LABEL_SPLIT) {
		*sep = '\0'; /* SPLIT: the place follows, tt_name_site() */
		return;
	}
	nb = (size_t)(sep - key);
	place = full ? sep + 1 : short_place(key);
	pb = strlen(place);
	/* "name (place)" is at most TT_NAME_SPARE bytes longer than the key:
	 * written back to front over it (place is a suffix of the key). */
	_Static_assert(TT_NAME_SPARE >= 2, "room for \" (\" and \")\" in place of the separator");
	memmove(key + nb + 2, place, pb);
	key[nb] = ' ';
	key[nb + 1] = '(';
	key[nb + 2 + pb] = ')';
	key[nb + 2 + pb + 1] = '\0';
}

static void names_label(char **names, uint32_t nr_names, enum tt_label_mode mode)
{
	uint32_t *ix = tt_xcalloc(nr_names + 1, sizeof(*ix));

	for (uint32_t i = 0; i < nr_names; i++)
		ix[i] = i;
	sort_keys = names;
	qsort(ix, nr_names, sizeof(*ix), by_base);
	for (uint32_t g = 0, e; g < nr_names; g = e) {
		for (e = g + 1; e < nr_names && cmp_base(names[ix[g]], names[ix[e]]) == 0; e++)
			;
		if (e - g == 1) {
			label_one(names[ix[g]], mode, true, false);
			continue;
		}
		/* Several places share the name: each shown with its place, the
		 * file's full path where two short forms are the same. */
		qsort(ix + g, e - g, sizeof(*ix), by_short_place);
		bool *full = tt_xcalloc(e - g, sizeof(bool));
		for (uint32_t k = g; k + 1 < e; k++)
			if (by_short_place(&ix[k], &ix[k + 1]) == 0)
				full[k - g] = full[k + 1 - g] = true;
		for (uint32_t k = g; k < e; k++)
			label_one(names[ix[k]], mode, false, full[k - g]);
		free(full);
	}
	sort_keys = NULL;
	free(ix);
}


static uint32_t hash_key(const char *s)
{
	return tt_hash_bytes(s, strlen(s)); /* seeded: hmap.h */
}

static char *spare_dup(const char *s)
{
	size_t n = strlen(s);
	char *c = tt_xcalloc(n + 1 + TT_NAME_SPARE, 1);

	memcpy(c, s, n);
	return c;
}

void tt_labels_init(struct tt_labels *l)
{
	memset(l, 0, sizeof(*l));
}

struct key_probe {
	const struct tt_labels *l;
	const char *key;
};

static bool key_eq(const void *ctx, uint32_t id)
{
	const struct key_probe *k = ctx;

	return strcmp(k->l->keys[id], k->key) == 0;
}

static uint32_t labels_find(const struct tt_labels *l, const char *key)
{
	const struct key_probe k = { l, key };

	return tt_hmap_find(&l->map, hash_key(key), key_eq, &k);
}

void tt_labels_add(struct tt_labels *l, const char *key)
{
	if (labels_find(l, key) != TT_HMAP_NONE)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->keys = tt_xrealloc(l->keys, l->cap * sizeof(*l->keys));
	}
	tt_hmap_put(&l->map, hash_key(key), l->n);
	l->keys[l->n++] = tt_xstrndup(key, strlen(key));
}

void tt_labels_add_names(struct tt_labels *l, char *const *names, uint32_t nr_names)
{
	for (uint32_t i = 0; i < nr_names; i++)
		tt_labels_add(l, names[i]);
}

void tt_labels_finish(struct tt_labels *l)
{
	l->shown = tt_xcalloc(l->n + 1, sizeof(*l->shown));
	l->split = tt_xcalloc(l->n + 1, sizeof(*l->split));
	for (uint32_t k = 0; k < l->n; k++) {
		l->shown[k] = spare_dup(l->keys[k]);
		l->split[k] = spare_dup(l->keys[k]);
	}
	names_label(l->shown, l->n, TT_LABEL_SHOW);
	names_label(l->split, l->n, TT_LABEL_SPLIT);
}

const char *tt_labels_shown(const struct tt_labels *l, const char *key)
{
	uint32_t k = l->shown ? labels_find(l, key) : TT_HMAP_NONE;

	return k == TT_HMAP_NONE ? key : l->shown[k]; /* a key never added: itself */
}

const char *tt_labels_name(const struct tt_labels *l, const char *key)
{
	uint32_t k = l->split ? labels_find(l, key) : TT_HMAP_NONE;

	return k == TT_HMAP_NONE ? key : l->split[k];
}

const char *tt_labels_site(const struct tt_labels *l, const char *key)
{
	uint32_t k = l->split ? labels_find(l, key) : TT_HMAP_NONE;

	return k == TT_HMAP_NONE ? "" : l->split[k] + strlen(l->split[k]) + 1;
}

void tt_labels_fini(struct tt_labels *l)
{
	for (uint32_t k = 0; k < l->n; k++) {
		free(l->keys[k]);
		if (l->shown)
			free(l->shown[k]);
		if (l->split)
			free(l->split[k]);
	}
	free(l->keys);
	free(l->shown);
	free(l->split);
	tt_hmap_fini(&l->map);
	memset(l, 0, sizeof(*l));
}

void tt_inc_labels_fini(struct tt_inc_labels *il)
{
	for (uint32_t i = 0; i < il->n; i++)
		free(il->label[i]);
	free(il->label);
	tt_labels_fini(&il->seen);
	memset(il, 0, sizeof(*il));
}

const char *tt_inc_label(struct tt_inc_labels *il, char *const *names, uint32_t nr_names,
			 uint32_t name)
{
	for (; il->n < nr_names; il->n++) {
		const char *key = names[il->n];
		const char *sep = strchr(key, TT_SITE_SEP);
		size_t nb = sep ? (size_t)(sep - key) : strlen(key);
		char *base = tt_xstrndup(key, nb), *label;

		if (sep && tt_labels_has(&il->seen, base)) {
			const char *place = sep + 1, *slash = strrchr(place, '/');
			size_t pb;

			place = slash ? slash + 1 : place;
			pb = strlen(place);
			label = tt_xrealloc(NULL, nb + pb + 4);
			memcpy(label, key, nb);
			memcpy(label + nb, " (", 2);
			memcpy(label + nb + 2, place, pb);
			memcpy(label + nb + 2 + pb, ")", 2);
		} else {
			label = tt_xstrndup(base, nb);
		}
		tt_labels_add(&il->seen, base);
		free(base);
		if (il->n == il->cap) {
			il->cap = il->cap ? 2 * il->cap : 64;
			il->label = tt_xrealloc(il->label, il->cap * sizeof(*il->label));
		}
		il->label[il->n] = label;
	}
	return name < il->n ? il->label[name] : "";
}

bool tt_labels_has(const struct tt_labels *l, const char *key)
{
	return labels_find(l, key) != TT_HMAP_NONE;
}
