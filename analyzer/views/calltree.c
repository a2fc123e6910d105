/* SPDX-License-Identifier: MIT */
/*
 * calltree.c - see calltree.h. The consumer: each thread's nodes live in a
 * flat array with an open-addressing hash of (parent, name); a frame's slot
 * is its node id, so an enter costs one look at the parent's last child
 * (call trees repeat) and, when that misses, one hash probe, and an
 * activation costs three additions to the node of its slot.
 */
#define _GNU_SOURCE
#include "views/calltree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* ---------------------------------------------------------------------
 * Node stores: per thread while walking, and the merged trees.
 */
static void store_init(struct tt_ctree *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 64;
	t->p = tt_xcalloc(t->cap, sizeof(*t->p));
	t->n = 1; /* node 0: the root above the roots */
	t->p[0].name = TT_NO_NAME;
	t->p[0].key = TT_NO_NAME;
}

static void store_fini(struct tt_ctree *t)
{
	free(t->p);
	tt_hmap_fini(&t->map);
	free(t->order);
	free(t->depth);
	free(t->total_ns);
	free(t->self_ns);
}

static inline uint32_t hash_of(uint32_t parent, uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9E3779B97F4A7C15ull;

	return (uint32_t)(h >> 32);
}

struct child_key {
	const struct tt_ctree *t;
	uint32_t parent, name;
};

static inline bool child_eq(const void *ctx, uint32_t id)
{
	const struct child_key *k = ctx;

	return k->t->p[id].parent == k->parent && k->t->p[id].name == k->name;
}

/* The child of `parent` called `name`, created if new. */
static uint32_t child_slow(struct tt_ctree *t, uint32_t parent, uint32_t name, uint32_t key)
{
	const struct child_key k = { t, parent, name };
	uint32_t h = hash_of(parent, name);
	uint32_t id = tt_hmap_find(&t->map, h, child_eq, &k);

	if (id != TT_HMAP_NONE)
		goto found;
	if (t->n >= (1u << 31))
		tt_oom(); /* 80 GiB of paths: never reached before malloc fails */
	if (t->n == t->cap) {
		t->cap *= 2;
		t->p = tt_xrealloc(t->p, (size_t)t->cap * sizeof(*t->p));
	}
	id = t->n++;
	memset(&t->p[id], 0, sizeof(t->p[id]));
	t->p[id].parent = parent;
	t->p[id].name = name;
	t->p[id].key = key;
	t->p[id].depth = t->p[parent].depth + 1;
	t->p[id].next = t->p[parent].first;
	t->p[parent].first = id;
	tt_hmap_put(&t->map, h, id);
found:
	t->p[parent].hot = id;
	return id;
}

/*
 * child_slow() with two caches: the parent's child found last, and the
 * sibling found after that one last time, so that a parent calling its
 * children in turn (a; b; c; a; b; c...) finds each without hashing.
 */
static inline uint32_t child(struct tt_ctree *t, uint32_t parent, uint32_t name)
{
	uint32_t hot = t->p[parent].hot, after, id;

	if (hot && t->p[hot].name == name)
		return hot;
	after = hot ? t->p[hot].after : 0;
	if (after && t->p[after].name == name) {
		t->p[parent].hot = after;
		return after;
	}
	id = child_slow(t, parent, name, name);
	if (hot)
		t->p[hot].after = id;
	return id;
}

/* ---------------------------------------------------------------------
 * The consumer.
 */
struct ct_thread {
	uint32_t serial;
	uint64_t nr_folded; /* activations deeper than TT_CALLTREE_MAX_NAMES */
	struct tt_ctree t;
	struct ct_thread *next;
};

struct ct_walker {
	struct ct_thread *head;
};

static void *ct_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct ct_walker *w = ctx;
	struct ct_thread *t = tt_xcalloc(1, sizeof(*t));

	t->serial = th->serial;
	store_init(&t->t);
	t->next = w->head;
	w->head = t;
	return t;
}

static uint32_t ct_enter(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
		 bool in_window)
{
	struct ct_thread *t = tctx;

	(void)ticks;
	(void)in_window;
	if (t->t.p[parent_slot].depth >= TT_CALLTREE_MAX_NAMES)
		return parent_slot; /* folded: see TT_CALLTREE_MAX_NAMES */
	return child(&t->t, parent_slot, name);
}

static void ct_act(void *tctx, const struct tt_activation *a)
{
	struct ct_thread *t = tctx;
	struct tt_path *p = &t->t.p[a->slot];

	if (a->depth >= TT_CALLTREE_MAX_NAMES) {
		p->self_ticks += a->self_ticks;
		t->nr_folded++;
		return;
	}
	p->calls++;
	p->total_ticks += a->dur_ticks;
	p->self_ticks += a->self_ticks;
}

/*
 * A frame left without an exit (longjmp): what ran while it was open ran
 * in its parent. Its path is marked; if it never has an activation that
 * exits, merge_thread() splices it out (its children's paths move up one
 * level). When the path also had activations that did exit, which
 * children were whose is not kept, and the paths stay as they are
 * (docs/ANALYZER.md).
 */
static void ct_error(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
		     uint64_t ticks, enum tt_frame_error why)
{
	struct ct_thread *t = tctx;

	(void)name;
	(void)enter_ticks;
	(void)ticks;
	if (why == TT_FRAME_LEFT && slot)
		t->t.p[slot].left = 1;
}

const struct tt_consumer tt_calltree_consumer = {
	.thread_begin = ct_thread_begin,
	.enter = ct_enter,
	.act = ct_act,
	.error = ct_error,
	.no_times = true,
};

/* ---------------------------------------------------------------------
 * Merging, inverting, ordering.
 */
static struct tt_ctree *tree_for(struct tt_calltree *ct, const char *process, const char *label)
{
	for (uint32_t i = 0; i < ct->nr_trees; i++)
		if (((!label && !ct->trees[i].label) ||
		     (label && ct->trees[i].label && strcmp(label, ct->trees[i].label) == 0)) &&
		    ct->trees[i].process == process) /* interned by the report */
			return &ct->trees[i];
	ct->trees = tt_xrealloc(ct->trees, (ct->nr_trees + 1) * sizeof(*ct->trees));
	store_init(&ct->trees[ct->nr_trees]);
	ct->trees[ct->nr_trees].process = process;
	ct->trees[ct->nr_trees].label = label ? tt_xstrndup(label, strlen(label)) : NULL;
	return &ct->trees[ct->nr_trees++];
}

static void add_stats(struct tt_path *dst, const struct tt_path *src)
{
	dst->calls += src->calls;
	dst->total_ticks += src->total_ticks;
	dst->self_ticks += src->self_ticks;
}

static void merge_thread(struct tt_ctree *dst, const struct tt_ctree *src, const uint32_t *map)
{
	uint32_t *to = tt_xcalloc(src->n, sizeof(*to));

	/* Parents come before their children (ids grow as paths appear). */
	for (uint32_t i = 1; i < src->n; i++) {
		const struct tt_path *s = &src->p[i];
		uint32_t name = map ? map[s->name] : s->name;
		uint32_t id;

		if (s->left && !s->calls) {
			to[i] = to[s->parent]; /* a ghost: its children are its parent's */
			continue;
		}
		id = child_slow(dst, to[s->parent], name, name);
		to[i] = id;
		add_stats(&dst->p[id], s);
	}
	free(to);
}

static void merge_file_ns(struct tt_calltree *ct, struct tt_ctree *dst, const struct tt_ctree *src,
			  const struct tt_clock *c);

static void free_walker(struct ct_walker *w)
{
	while (w && w->head) {
		struct ct_thread *t = w->head;

		w->head = t->next;
		store_fini(&t->t);
		free(t);
	}
	free(w);
}

/* Several files (front.h): file f's walk on fresh walkers... */
static void file_begin(void *ctx, struct tt_walk_file *f)
{
	struct tt_calltree *ct = ctx;

	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
		free_walker(ct->walkers[r]);
		ct->walkers[r] = f->ctxs[r] = tt_xcalloc(1, sizeof(struct ct_walker));
	}
}

/*
 * ...whose trees merge into ct's (ns), by the merged report's names: first
 * the file's threads that go to one tree (all of them, or those of one
 * label with --by-thread) into one tree in ticks, whose sums do not depend
 * on the order the walkers met the threads, then that tree in ns
 * (merge_file_ns()), so that a file's figures do not depend on how it was
 * read (TRACETOOL_INDEX, the number of walkers) and are the ones it has
 * alone (finding F6).
 */
struct file_group {
	char *label;
	struct tt_ctree t;
};

static enum tt_status file_end(void *ctx, struct tt_walk_file *f, char *msg, size_t msg_bytes)
{
	struct tt_calltree *ct = ctx;
	struct tt_report *rep = &ct->rep, *sub = f->rep;
	const struct tt_options *o = ct->o;
	struct file_group *groups = NULL;
	uint32_t nr_groups = 0;
	uint32_t **maps;

	(void)msg, (void)msg_bytes;
	/* Every replica's names as name indices of the merged report. */
	maps = tt_xcalloc(sub->nr_replicas, sizeof(*maps));
	for (unsigned r = 0; r < sub->nr_replicas; r++)
		maps[r] = tt_walk_name_map(&rep->tr, tt_report_replica(sub, r));
	for (unsigned r = 0; r < sub->nr_replicas; r++) {
		struct ct_walker *w = ct->walkers[r];

		for (struct ct_thread *t = w->head; t; t = t->next) {
			const char *label = NULL;
			char buf[4200];
			uint32_t g = 0;

			if (o->by_thread) {
				const struct tt_thread *th = tt_trace_find_thread(&sub->tr, t->serial);

				if (th)
					tt_thread_label(th, buf, sizeof(buf));
				else
					snprintf(buf, sizeof(buf), "serial %u", t->serial);
				label = buf;
			}
			while (g < nr_groups &&
			       !(label ? groups[g].label && strcmp(groups[g].label, label) == 0
				       : !groups[g].label))
				g++;
			if (g == nr_groups) {
				groups = tt_xrealloc(groups, (nr_groups + 1) * sizeof(*groups));
				groups[g].label = label ? tt_xstrndup(label, strlen(label)) : NULL;
				store_init(&groups[g].t);
				nr_groups++;
			}
			merge_thread(&groups[g].t, &t->t, maps[r]);
			ct->nr_folded += t->nr_folded;
		}
	}
	for (uint32_t g = 0; g < nr_groups; g++) {
		merge_file_ns(ct, tree_for(ct, o->by_process ? f->process : NULL, groups[g].label),
			      &groups[g].t, &sub->clock);
		store_fini(&groups[g].t);
		free(groups[g].label);
	}
	free(groups);
	for (unsigned r = 0; r < sub->nr_replicas; r++)
		free(maps[r]);
	free(maps);
	return TT_OK;
}

/* The --callers tree of t: for each path ending in a matching function F,
 * F's figures on F, F;caller, F;caller;caller's caller, ... */
static void invert(struct tt_ctree *inv, const struct tt_ctree *t, const bool *match)
{
	for (uint32_t i = 1; i < t->n; i++) {
		const struct tt_path *s = &t->p[i];
		uint32_t id;

		if (!s->calls || !match[s->name])
			continue;
		id = child_slow(inv, 0, s->name, s->name);
		add_stats(&inv->p[id], s);
		for (uint32_t k = s->parent; k; k = t->p[k].parent) {
			id = child_slow(inv, id, t->p[k].name, s->name);
			add_stats(&inv->p[id], s);
		}
	}
}

static const struct tt_calltree *sort_ct;
static const struct tt_ctree *sort_tree;
static const uint64_t *sort_span;

/* Children grouped by parent, then by span (time) descending, then name. */
static int cmp_nodes(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct tt_path *x = &sort_tree->p[a], *y = &sort_tree->p[b];
	int c;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (sort_span[a] != sort_span[b])
		return sort_span[a] > sort_span[b] ? -1 : 1;
	c = strcmp(sort_ct->rep.tr.names[x->name], sort_ct->rep.tr.names[y->name]);
	return c ? c : (a < b ? -1 : a > b);
}

/*
 * The span of a path: its total when it has timed activations, else (an
 * enter never closed: the file ended inside it, or it was left by longjmp)
 * the sum of its children's spans, the time known to be inside it. Shares
 * are of the sum of the roots' spans, the grand total.
 */
static void spans(const struct tt_ctree *t, uint64_t *span, bool *present)
{
	for (uint32_t i = t->n; i-- > 1;) {
		const struct tt_path *p = &t->p[i];

		present[i] = present[i] || p->calls;
		if (p->calls)
			span[i] = p->total_ticks;
		span[p->parent] += span[i];
		present[p->parent] = present[p->parent] || present[i];
	}
}

/*
 * The trees (one per thread label with --by-thread, per process with
 * --by-process) in an order that does not depend on how many walkers
 * paired the file: processes in the order their files were given, then
 * by span descending, then by label. Trees are made in replica order, and
 * a replica meets its threads in an order of its own.
 */
struct tree_key {
	uint32_t proc_rank;
	uint64_t span;
	const char *label;
	uint32_t i;
};

static int cmp_trees(const void *pa, const void *pb)
{
	const struct tree_key *x = pa, *y = pb;

	if (x->proc_rank != y->proc_rank)
		return x->proc_rank < y->proc_rank ? -1 : 1;
	if (x->span != y->span)
		return x->span > y->span ? -1 : 1;
	if (x->label && y->label && strcmp(x->label, y->label))
		return strcmp(x->label, y->label);
	return x->i < y->i ? -1 : x->i > y->i;
}

static void sort_trees(struct tt_calltree *ct)
{
	if (!ct->nr_trees)
		return;
	struct tree_key *k = tt_xcalloc(ct->nr_trees, sizeof(*k));
	struct tt_ctree *sorted = tt_xcalloc(ct->nr_trees, sizeof(*sorted));

	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		const struct tt_ctree *t = &ct->trees[i];
		uint64_t *span = tt_xcalloc(t->n, sizeof(*span));
		bool *present = tt_xcalloc(t->n, sizeof(*present));
		uint32_t r = 0;

		while (ct->trees[r].process != t->process)
			r++;
		spans(t, span, present);
		k[i] = (struct tree_key){ .proc_rank = r, .span = span[0], .label = t->label,
					  .i = i };
		free(span);
		free(present);
	}
	qsort(k, ct->nr_trees, sizeof(*k), cmp_trees);
	for (uint32_t i = 0; i < ct->nr_trees; i++)
		sorted[i] = ct->trees[k[i].i];
	memcpy(ct->trees, sorted, ct->nr_trees * sizeof(*sorted));
	free(sorted);
	free(k);
}

static void order_tree(struct tt_calltree *ct, struct tt_ctree *t, const struct tt_options *o,
		       const struct tt_calltree_opts *co, const bool *fn_selected,
		       uint64_t grand_ticks)
{
	const struct tt_clock *clk = &ct->rep.clock;
	uint64_t *span = tt_xcalloc(t->n, sizeof(*span)), *span_ns = tt_xcalloc(t->n, sizeof(*span));
	bool *present = tt_xcalloc(t->n, sizeof(*present));
	uint32_t *sorted = tt_xcalloc(t->n, sizeof(*sorted)), *first, *stack, sp = 0;
	uint64_t *cum_ticks, *cum_ns;
	uint32_t nr_names = ct->rep.tr.nr_names;

	(void)o;
	spans(t, span, present);
	for (uint32_t i = 1; i < t->n; i++)
		sorted[i - 1] = i;
	for (uint32_t i = 0; i < t->n; i++)
		span_ns[i] = tt_clock_ns(clk, span[i]); /* ties as shown: by name */
	sort_ct = ct;
	sort_tree = t;
	sort_span = span_ns;
	if (t->n > 1)
		qsort(sorted, t->n - 1, sizeof(*sorted), cmp_nodes);
	/* first[p]: index in sorted of p's first child; children are contiguous. */
	first = tt_xcalloc((size_t)t->n + 1, sizeof(*first));
	for (uint32_t i = t->n - 1; i-- > 0;)
		first[t->p[sorted[i]].parent] = i + 1; /* +1: 0 means none */
	t->order = tt_xcalloc(t->n, sizeof(*t->order));
	t->depth = tt_xcalloc(t->n, sizeof(*t->depth));
	t->total_ns = tt_xcalloc(t->n, sizeof(*t->total_ns));
	t->self_ns = tt_xcalloc(t->n, sizeof(*t->self_ns));
	cum_ticks = tt_xcalloc((size_t)nr_names + 1, sizeof(*cum_ticks));
	cum_ns = tt_xcalloc((size_t)nr_names + 1, sizeof(*cum_ns));
	stack = tt_xcalloc(t->n, sizeof(*stack));
	/* Depth first, pushing children in reverse so the first pops first. */
	{
		uint32_t k = first[0], cnt = 0;

		while (k && k - 1 + cnt < t->n - 1 && t->p[sorted[k - 1 + cnt]].parent == 0)
			cnt++;
		while (cnt)
			stack[sp++] = sorted[k - 1 + --cnt];
	}
	while (sp) {
		uint32_t id = stack[--sp], k = first[id], cnt = 0;
		const struct tt_path *p = &t->p[id];
		uint32_t key = p->key;
		bool shown;

		if (!present[id])
			continue;
		t->depth[id] = p->parent ? t->depth[p->parent] + 1 : 0;
		t->total_ns[id] = tt_clock_ns(clk, p->total_ticks);
		/* Self in ns by the running sum of its function's self ticks, so that
		 * the paths of a function add up to summary's self_ns exactly. */
		if (key < nr_names) {
			uint64_t ns = tt_clock_ns(clk, cum_ticks[key] + p->self_ticks);

			cum_ticks[key] += p->self_ticks;
			t->self_ns[id] = ns - cum_ns[key];
			cum_ns[key] = ns;
		}
		shown = (!co->has_depth || t->depth[id] <= co->max_depth) &&
			(key >= nr_names || fn_selected[key]) &&
			(co->min_percent <= 0 ||
			 (grand_ticks && 100.0 * (double)span[id] / (double)grand_ticks >=
						 co->min_percent));
		if (shown)
			t->order[t->nr_order++] = id;
		if (co->has_depth && t->depth[id] >= co->max_depth)
			continue; /* nothing deeper is shown, and self is per path */
		while (k && k - 1 + cnt < t->n - 1 && t->p[sorted[k - 1 + cnt]].parent == id)
			cnt++;
		while (cnt)
			stack[sp++] = sorted[k - 1 + --cnt];
	}
	ct->nr_paths += t->nr_order;
	free(stack);
	free(cum_ticks);
	free(cum_ns);
	free(first);
	free(sorted);
	free(present);
	free(span);
	free(span_ns);
}

/*
 * One file's tree src (ticks, its clock c) added to dst (ns): self time
 * converted by the running sum of each name's self ticks, as order_tree()
 * does and in its order (depth first, children by span descending then
 * name: an order of the paths themselves, not of how src was built), so
 * that the paths of a function add up to summary's self_ns exactly and a
 * file's paths have the ns they have when the file is read alone.
 */
static void merge_file_ns(struct tt_calltree *ct, struct tt_ctree *dst, const struct tt_ctree *src,
			  const struct tt_clock *c)
{
	uint64_t *span = tt_xcalloc(src->n, sizeof(*span));
	bool *present = tt_xcalloc(src->n, sizeof(*present));
	uint32_t *sorted = tt_xcalloc(src->n, sizeof(*sorted)), *to, *first, *stack, sp = 0;
	uint64_t *cum_ticks, *cum_ns;
	uint32_t nr_names = ct->rep.tr.nr_names;

	spans(src, span, present);
	for (uint32_t i = 1; i < src->n; i++)
		sorted[i - 1] = i;
	for (uint32_t i = 0; i < src->n; i++)
		span[i] = tt_clock_ns(c, span[i]); /* as order_tree() sorts */
	sort_ct = ct;
	sort_tree = src;
	sort_span = span;
	if (src->n > 1)
		qsort(sorted, src->n - 1, sizeof(*sorted), cmp_nodes);
	first = tt_xcalloc((size_t)src->n + 1, sizeof(*first));
	for (uint32_t i = src->n - 1; i-- > 0;)
		first[src->p[sorted[i]].parent] = i + 1; /* +1: 0 means none */
	to = tt_xcalloc(src->n, sizeof(*to));
	stack = tt_xcalloc(src->n, sizeof(*stack));
	cum_ticks = tt_xcalloc((size_t)nr_names + 1, sizeof(*cum_ticks));
	cum_ns = tt_xcalloc((size_t)nr_names + 1, sizeof(*cum_ns));
	stack[sp++] = 0;
	while (sp) {
		uint32_t id = stack[--sp], k = first[id], cnt = 0;

		if (id) {
			const struct tt_path *s = &src->p[id];
			struct tt_path *d;
			uint32_t name = s->name;

			to[id] = child_slow(dst, to[s->parent], name, name);
			d = &dst->p[to[id]];
			d->calls += s->calls;
			d->total_ticks += tt_clock_ns(c, s->total_ticks);
			if (name < nr_names) {
				uint64_t ns = tt_clock_ns(c, cum_ticks[name] + s->self_ticks);

				cum_ticks[name] += s->self_ticks;
				d->self_ticks += ns - cum_ns[name];
				cum_ns[name] = ns;
			}
		}
		while (k && k - 1 + cnt < src->n - 1 && src->p[sorted[k - 1 + cnt]].parent == id)
			cnt++;
		while (cnt)
			stack[sp++] = sorted[k - 1 + --cnt];
	}
	free(cum_ticks);
	free(cum_ns);
	free(stack);
	free(to);
	free(first);
	free(sorted);
	free(present);
	free(span);
}

enum tt_status tt_calltree_run(struct tt_calltree *ct, const struct tt_options *o,
			       const struct tt_calltree_opts *co, char *msg, size_t msg_bytes)
{
	struct tt_report *rep = &ct->rep;
	struct tt_walk_spec spec = { .cons = &tt_calltree_consumer, .file_begin = file_begin,
				     .file_end = file_end, .ctx = ct, .window_index = true };
	struct tt_ctree *trees;
	uint32_t nr_trees;
	uint64_t grand_ticks = 0;
	enum tt_status st;
	bool *fn_selected, *match = NULL;

	memset(ct, 0, sizeof(*ct));
	ct->o = o;
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++)
		spec.ctxs[r] = ct->walkers[r] = tt_xcalloc(1, sizeof(struct ct_walker));
	st = tt_walk(rep, o, &spec, msg, msg_bytes);
	if (st != TT_OK)
		return st;
	for (unsigned r = 0; r < rep->nr_replicas && !rep->nr_files; r++) {
		struct tt_trace *tr = tt_report_replica(rep, r);
		struct ct_walker *w = ct->walkers[r];
		uint32_t *map = r ? tt_walk_name_map(&rep->tr, tr) : NULL;

		for (struct ct_thread *t = w->head; t; t = t->next) {
			const char *label = NULL;
			char buf[4200];

			if (o->by_thread) {
				const struct tt_thread *th = tt_trace_find_thread(&rep->tr, t->serial);

				if (th)
					tt_thread_label(th, buf, sizeof(buf));
				else
					snprintf(buf, sizeof(buf), "serial %u", t->serial);
				label = buf;
			}
			merge_thread(tree_for(ct, NULL, label), &t->t, map);
			ct->nr_folded += t->nr_folded;
		}
		free(map);
	}
	if (ct->nr_folded)
		fprintf(stderr,
			"tracetool: %s: warning: %" PRIu64 " activations deeper than %u names "
			"are folded into their path at that depth (self time kept)\n",
			rep->tr.path, ct->nr_folded, TT_CALLTREE_MAX_NAMES);
	fn_selected = tt_xcalloc((size_t)rep->tr.nr_names + 1, sizeof(*fn_selected));
	for (uint32_t n = 0; n < rep->tr.nr_names; n++)
		fn_selected[n] = tt_options_function_selected(o, rep->tr.names[n]);
	sort_trees(ct);
	/* The grand total: of the call tree itself, also under --callers. */
	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		struct tt_ctree *t = &ct->trees[i];
		uint64_t *span = tt_xcalloc(t->n, sizeof(*span));
		bool *present = tt_xcalloc(t->n, sizeof(*present));

		spans(t, span, present);
		grand_ticks += span[0];
		free(span);
		free(present);
	}
	ct->grand_total_ns = tt_clock_ns(&rep->clock, grand_ticks);
	if (co->has_callers) {
		match = tt_xcalloc((size_t)rep->tr.nr_names + 1, sizeof(*match));
		for (uint32_t n = 0; n < rep->tr.nr_names; n++)
			match[n] = tt_regex_name(&co->callers, rep->tr.names[n]);
		trees = ct->trees;
		nr_trees = ct->nr_trees;
		ct->trees = tt_xcalloc(nr_trees ? nr_trees : 1, sizeof(*ct->trees));
		for (uint32_t i = 0; i < nr_trees; i++) {
			store_init(&ct->trees[i]);
			ct->trees[i].label = trees[i].label;
			ct->trees[i].process = trees[i].process;
			invert(&ct->trees[i], &trees[i], match);
			store_fini(&trees[i]);
		}
		free(trees);
		free(match);
	}
	for (uint32_t i = 0; i < ct->nr_trees; i++)
		order_tree(ct, &ct->trees[i], o, co, fn_selected, grand_ticks);
	free(fn_selected);
	return TT_OK;
}

static void make_labels(struct tt_calltree *ct)
{
	const struct tt_trace *tr = &ct->rep.tr;

	if (ct->safe_names)
		return;
	ct->safe_names = tt_xcalloc((size_t)tr->nr_names + 1, sizeof(*ct->safe_names));
	tt_labels_init(&ct->labels);
	tt_labels_add_names(&ct->labels, tr->names, tr->nr_names);
	tt_labels_finish(&ct->labels);
}

const char *tt_calltree_label(struct tt_calltree *ct, uint32_t name)
{
	make_labels(ct);
	return tt_labels_shown(&ct->labels, ct->rep.tr.names[name]);
}

const char *tt_calltree_site(struct tt_calltree *ct, uint32_t name)
{
	make_labels(ct);
	return tt_labels_site(&ct->labels, ct->rep.tr.names[name]);
}

const char *tt_calltree_name(struct tt_calltree *ct, uint32_t name)
{
	const struct tt_trace *tr = &ct->rep.tr;

	make_labels(ct);
	if (!ct->safe_names[name]) {
		const char *shown = tt_labels_shown(&ct->labels, tr->names[name]);
		char *s = tt_xstrndup(shown, strlen(shown));

		for (char *c = s; *c; c++)
			if (*c == ';' || *c == '\n' || *c == '\r')
				*c = '_';
		ct->safe_names[name] = s;
	}
	return ct->safe_names[name];
}

char *tt_calltree_path(struct tt_calltree *ct, const struct tt_ctree *t, uint32_t id,
		       const char *root)
{
	uint32_t n = t->depth[id] + 1, *ids = tt_xcalloc(n, sizeof(*ids)), k = id;
	size_t len = 0, cap = 64;
	char *buf = tt_xrealloc(NULL, cap);

	for (uint32_t i = n; i-- > 0 && k; k = t->p[k].parent)
		ids[i] = k;
	for (uint32_t i = root ? 0 : 1; i <= n; i++) {
		const char *s = i ? tt_calltree_name(ct, t->p[ids[i - 1]].name) : root;
		size_t sl = strlen(s);

		if (len + sl + 2 > cap) {
			cap = 2 * (len + sl + 2);
			buf = tt_xrealloc(buf, cap);
		}
		memcpy(buf + len, s, sl);
		len += sl;
		if (i < n)
			buf[len++] = ';';
	}
	buf[len] = '\0';
	free(ids);
	return buf;
}

void tt_calltree_fini(struct tt_calltree *ct)
{
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++)
		free_walker(ct->walkers[r]);
	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		free((char *)ct->trees[i].label);
		store_fini(&ct->trees[i]);
	}
	free(ct->trees);
	if (ct->safe_names) {
		for (uint32_t n = 0; n <= ct->rep.tr.nr_names; n++)
			free(ct->safe_names[n]);
		tt_labels_fini(&ct->labels);
	}
	free(ct->safe_names);
	tt_report_fini(&ct->rep);
}
