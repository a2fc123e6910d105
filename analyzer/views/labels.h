/* SPDX-License-Identifier: MIT */
/*
 * labels.h - what a report prints for a scope (docs/ANALYZER.md, "Names").
 * Scopes are interned by a key, "name" TT_SITE_SEP "place" (events.h): the
 * place is a TRACE_SCOPE site's "file:line", a hooked function's source
 * file (a static) or module. Keys never merge; a report gathers the keys it
 * prints (tt_labels_add*), then tt_labels_finish() gives each its label:
 * - shown: the name alone where no other gathered key has that name, else
 *   "name (place)", the place's file without directories (its full path
 *   where two places would then read the same);
 * - name and site (--by-site): the name alone, and the place ("" if none).
 */
#ifndef TT_LABELS_H
#define TT_LABELS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hmap.h"
#include "engine/events.h"

struct tt_labels {
	char **keys, **shown, **split; /* split: "name\0place\0" */
	uint32_t n, cap;
	struct tt_hmap map; /* hmap.h: keys by their bytes */
};

void tt_labels_init(struct tt_labels *l);
void tt_labels_add(struct tt_labels *l, const char *key);
void tt_labels_add_names(struct tt_labels *l, char *const *names, uint32_t nr_names);
void tt_labels_finish(struct tt_labels *l);
/* For a key (added or not: a key never added shows as itself). */
const char *tt_labels_shown(const struct tt_labels *l, const char *key);
const char *tt_labels_name(const struct tt_labels *l, const char *key);
const char *tt_labels_site(const struct tt_labels *l, const char *key);
void tt_labels_fini(struct tt_labels *l);
bool tt_labels_has(const struct tt_labels *l, const char *key);

/*
 * Labels for writers that print names as they read (chrome, perfetto), before
 * every name of the file is known: in the order names were defined, the first
 * place of a name is shown by the name alone, each later place of the same
 * name as "name (place)". Names are indices of a growing table.
 */
struct tt_inc_labels {
	struct tt_labels seen; /* names (without place) labelled so far */
	char **label;
	uint32_t n, cap;
};
const char *tt_inc_label(struct tt_inc_labels *il, char *const *names, uint32_t nr_names,
			 uint32_t name);
void tt_inc_labels_fini(struct tt_inc_labels *il);

#endif /* TT_LABELS_H */
