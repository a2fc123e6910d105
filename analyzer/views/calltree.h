/* SPDX-License-Identifier: MIT */
/*
 * calltree.h - call paths (tracetool(1), tree): a consumer of the pairing engine's
 * activations (scopes.h, struct tt_consumer) that keeps, per thread, one
 * node per call path (the chain of scope names from a root scope of the
 * thread down to an activation) with calls, inclusive and self time; then
 * the threads' trees merged (by thread label with --by-thread), turned
 * upside down for --callers, converted to nanoseconds and put in the order
 * `tree` and `flame` print them. It prints nothing itself.
 */
#ifndef TT_CALLTREE_H
#define TT_CALLTREE_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/hmap.h"
#include "engine/events.h"
#include "engine/filter.h"
#include "views/labels.h"
#include "engine/front.h"
#include "engine/report.h"

/* One call path. Node 0 of a tree is the virtual root above the roots. */
struct tt_path {
	uint32_t parent, name; /* name: index into the report's rep->tr names */
	uint32_t hot;	       /* the child found last (a cache for enter) */
	uint32_t after;	       /* the sibling found after this one, last time
				* (a second cache: siblings called in turn) */
	uint32_t key;	       /* the function whose time it is: name, or the
				* callee at the top of a --callers tree */
	uint32_t first, next;  /* first child, next sibling (0: none) */
	uint32_t left;	       /* an activation of it was left without an exit */
	uint32_t depth;	       /* names in the path (node 0: 0) */
	uint64_t calls, total_ticks, self_ticks;
};

/* A merged tree: all threads, or the threads of one label. */
struct tt_ctree {
	const char *process; /* NAME[PID] with --by-process (owned by the report), else NULL */
	const char *label; /* thread label with --by-thread, else NULL */
	struct tt_path *p;
	uint32_t n, cap;
	struct tt_hmap map; /* hmap.h: node ids keyed by (parent, name) */
	/* Output: the nodes shown, depth first, children by total (desc.) then
	 * name; per node its depth, ns figures and whether it is shown. */
	uint32_t *order;
	uint32_t nr_order;
	uint32_t *depth;
	uint64_t *total_ns, *self_ns;
};

/*
 * Paths hold at most this many names: an activation deeper than that is
 * folded into the path of its ancestor at this depth, with its self time
 * (so sums of self still equal summary's) but not its calls or total. It
 * keeps the output linear in the trace: a recursion 2^20 deep would
 * otherwise print 2^20 paths of up to 2^20 names each.
 */
#define TT_CALLTREE_MAX_NAMES 1024u

struct tt_calltree {
	struct tt_report rep;
	uint64_t nr_folded; /* activations folded (TT_CALLTREE_MAX_NAMES) */
	struct tt_ctree *trees;
	uint32_t nr_trees;
	uint64_t grand_total_ns; /* sum of the roots' totals over all trees */
	uint64_t nr_paths;	 /* rows shown */
	/* The consumers' state, one per walker replica (of the file being
	 * read, with several). */
	void *walkers[TT_WALK_MAX_REPLICAS];
	const struct tt_options *o; /* during tt_calltree_run() */
	char **safe_names; /* per name: its label (labels.h), ';' and line breaks made '_' (lazily) */
	struct tt_labels labels; /* of rep.tr's names, made with safe_names */
};

struct tt_calltree_opts {
	bool has_callers;
	regex_t callers; /* --callers=REGEX */
	bool has_depth;
	uint32_t max_depth;   /* --depth=N: paths of at most N + 1 names */
	double min_percent;   /* --min-percent=P; 0: all */
};

/*
 * tt_calltree_run() - read the trace once (all walkers) and build the
 * trees and their output order under the shared filters of o and the
 * tree options of co. Several files (o->traces, tracetool(1)): each is
 * read in turn and its paths merge into the trees (one per process with
 * --by-process) in nanoseconds, with its own clock.
 * Return: TT_OK, or TT_ERR_FILE with the problem in msg.
 */
enum tt_status tt_calltree_run(struct tt_calltree *ct, const struct tt_options *o,
			       const struct tt_calltree_opts *co, char *msg, size_t msg_bytes);
/* A name's label (labels.h), and its place ("" if none), over the tree's names. */
const char *tt_calltree_label(struct tt_calltree *ct, uint32_t name);
const char *tt_calltree_site(struct tt_calltree *ct, uint32_t name);
/* A name with ';' and line breaks replaced by '_' (tracetool(1), tree). */
const char *tt_calltree_name(struct tt_calltree *ct, uint32_t name);
/* Node id's path, names joined by ';' from the root after `root` and ';'
 * when root is not NULL; malloc'd. */
char *tt_calltree_path(struct tt_calltree *ct, const struct tt_ctree *t, uint32_t id,
		       const char *root);
void tt_calltree_fini(struct tt_calltree *ct);

/* The consumer itself, for tests and benchmarks. */
extern const struct tt_consumer tt_calltree_consumer;

#endif /* TT_CALLTREE_H */
