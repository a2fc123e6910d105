/* SPDX-License-Identifier: MIT */
/*
 * samples.c - the stack samples of samples.h: one walk per file with the
 * engine's sample hook (events.h on_sample), naming each distinct address
 * once through the file's symbols; then the filters, and self and total
 * per function.
 */
#include "views/samples.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "engine/filter.h"
#include "engine/front.h"
#include "engine/symbols.h"

/* A file's walk: its addresses' location ids (tt_samples.locs), in a map
 * (hmap.h; the addresses are the file's: keyed). */
struct walk_ctx {
	struct tt_samples *s;
	const struct tt_samples_opts *so;
	uint32_t file;
	uint32_t first_map; /* the file's first entry in s->maps */
	struct tt_hmap addr_map;
	uint32_t *ids;	   /* the current sample's function ids */
	uint32_t *loc_ids; /* and its location ids */
	size_t cap_ids;
};

static uint32_t key_hash(const char *key, const char *module)
{
	return tt_hash_bytes(key, strlen(key)) ^ tt_hash_u32(tt_hash_bytes(module, strlen(module)));
}

struct func_key {
	const struct tt_samples *s;
	const char *key, *module;
};

static bool func_eq(const void *ctx, uint32_t id)
{
	const struct func_key *k = ctx;
	const struct tt_sfunc *f = &k->s->funcs[id];

	return !strcmp(f->key, k->key) && !strcmp(f->module, k->module);
}

/* The id of function (key, module), added when new. */
static uint32_t func_id(struct tt_samples *s, const char *key, const char *module)
{
	const struct func_key k = { s, key, module };
	uint32_t h = key_hash(key, module), id = tt_hmap_find(&s->func_map, h, func_eq, &k);

	if (id != TT_HMAP_NONE)
		return id;
	if (s->nr_funcs == s->cap_funcs) {
		s->cap_funcs = s->cap_funcs ? 2 * s->cap_funcs : 256;
		s->funcs = tt_xrealloc(s->funcs, s->cap_funcs * sizeof(*s->funcs));
	}
	tt_hmap_put(&s->func_map, h, s->nr_funcs);
	struct tt_sfunc *f = &s->funcs[s->nr_funcs++];

	memset(f, 0, sizeof(*f));
	f->key = tt_xstrndup(key, strlen(key));
	f->module = tt_xstrndup(module, strlen(module));
	f->hash = h;
	return s->nr_funcs - 1;
}

/* The entry of s->maps for module mod of the walk's file (symbols.h's
 * index), added when new; TT_SAMPLES_NO_MAP for none. */
static uint32_t map_id(struct walk_ctx *w, struct tt_trace *tr, uint32_t mod)
{
	struct tt_samples *s = w->s;
	struct tt_symbols_mapping m;
	char hexid[2 * RECFMT_MAX_BUILD_ID_BYTES + 1];

	if (!tr->syms || !tt_symbols_mapping_of(tr->syms, mod, &m))
		return TT_SAMPLES_NO_MAP;
	for (uint32_t i = w->first_map; i < s->nr_maps; i++)
		if (s->maps[i].module_id == m.id && s->maps[i].start == m.start)
			return i;
	if (s->nr_maps == s->cap_maps) {
		s->cap_maps = s->cap_maps ? 2 * s->cap_maps : 16;
		s->maps = tt_xrealloc(s->maps, s->cap_maps * sizeof(*s->maps));
	}
	struct tt_smap *mp = &s->maps[s->nr_maps];
	const char *path = m.vdso ? "[vdso]" : m.path;

	hexid[0] = '\0';
	for (uint32_t i = 0; i < m.build_id_bytes && i < RECFMT_MAX_BUILD_ID_BYTES; i++)
		snprintf(hexid + 2 * i, 3, "%02x", m.build_id[i]);
	*mp = (struct tt_smap){ .file = w->file, .module_id = m.id, .start = m.start,
				.limit = m.limit, .offset = m.offset,
				.path = tt_xstrndup(path, strlen(path)),
				.build_id = tt_xstrndup(hexid, strlen(hexid)),
				.has_functions = m.has_functions, .main = m.main };
	return s->nr_maps++;
}

/*
 * An address is named by the module that held it when the sample was taken
 * (FORMAT.md §3.23: a library unloaded and another loaded at its place):
 * a location is (address, module), and a known one serves a sample while
 * its module was mapped then. One with no module is looked up again: its
 * module's record may come later in the file than a sample before it.
 */
struct addr_key {
	const struct tt_samples *s;
	struct tt_symbols *syms;
	uint64_t addr, ticks;
	uint32_t mod;
	bool by_mod; /* match mod exactly, not by time */
};

static bool addr_eq(const void *ctx, uint32_t id)
{
	const struct addr_key *k = ctx;
	const struct tt_sloc *l = &k->s->locs[id];

	if (l->addr != k->addr)
		return false;
	if (k->by_mod)
		return l->mod == k->mod;
	return l->mod && tt_symbols_mapped_at(k->syms, l->mod, k->ticks);
}

/* The location of addr at ticks in the walk's file, named when new. */
static uint32_t addr_loc(struct walk_ctx *w, struct tt_trace *tr, uint64_t addr, uint64_t ticks)
{
	struct tt_samples *s = w->s;
	struct addr_key k = { s, tr->syms, addr, ticks, 0, false };
	uint32_t h = tt_hash_u64(addr), id = TT_HMAP_NONE;

	if (tr->syms)
		id = tt_hmap_find(&w->addr_map, h, addr_eq, &k);
	if (id != TT_HMAP_NONE)
		return id;
	k.mod = tr->syms ? tt_symbols_find(tr->syms, addr, ticks) : 0;
	k.by_mod = true;
	id = tt_hmap_find(&w->addr_map, h, addr_eq, &k);
	if (id != TT_HMAP_NONE)
		return id;
	char name[512], loc[512], key[1100];
	const char *module = "";

	if (tr->syms) {
		tt_symbols_name_in(tr->syms, k.mod, addr, name, sizeof(name), loc, sizeof(loc));
		module = tt_symbols_module_of(tr->syms, k.mod);
	} else {
		snprintf(name, sizeof(name), "0x%" PRIx64 " [no module]", addr);
		loc[0] = '\0';
	}
	/* "0xADDR [module: reason]": one function per module and reason. */
	if (!loc[0] && name[0] == '0' && name[1] == 'x') {
		const char *br = strstr(name, " [");

		if (br)
			memmove(name, br + 1, strlen(br + 1) + 1);
	}
	if (loc[0])
		snprintf(key, sizeof(key), "%s%c%s", name, TT_SITE_SEP, loc);
	else
		snprintf(key, sizeof(key), "%s", name);
	uint32_t f = func_id(s, key, module);

	if (s->nr_locs == s->cap_locs) {
		s->cap_locs = s->cap_locs ? 2 * s->cap_locs : 1024;
		s->locs = tt_xrealloc(s->locs, s->cap_locs * sizeof(*s->locs));
	}
	tt_hmap_put(&w->addr_map, h, s->nr_locs);
	s->locs[s->nr_locs] = (struct tt_sloc){ addr, f, map_id(w, tr, k.mod), k.mod };
	return s->nr_locs++;
}

/* A set of interned stacks: s's function stacks or its location stacks. */
struct stack_set {
	uint32_t **frames;
	size_t *nr_frames, *cap_frames;
	struct tt_sstack **stacks;
	uint32_t *nr_stacks, *cap_stacks;
	struct tt_hmap *map;
};

/* Ids are the analyzer's: a fixed mix serves (hmap.h). */
struct stack_key {
	const struct stack_set *set;
	const uint32_t *ids;
	uint32_t n;
};

static bool stack_eq(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const struct tt_sstack *st = &(*k->set->stacks)[id];

	return st->n == k->n && !memcmp(*k->set->frames + st->at, k->ids, k->n * sizeof(*k->ids));
}

/* The id of the stack of n ids in set, added when new. */
static uint32_t stack_id(const struct stack_set *set, const uint32_t *ids, uint32_t n)
{
	const struct stack_key k = { set, ids, n };
	uint32_t h = n, id;

	for (uint32_t i = 0; i < n; i++)
		h = tt_hash_u32(h ^ ids[i]);
	id = tt_hmap_find(set->map, h, stack_eq, &k);
	if (id != TT_HMAP_NONE)
		return id;
	if (*set->nr_frames + n > *set->cap_frames) {
		while (*set->nr_frames + n > *set->cap_frames)
			*set->cap_frames = *set->cap_frames ? 2 * *set->cap_frames : 4096;
		*set->frames = tt_xrealloc(*set->frames, *set->cap_frames * sizeof(**set->frames));
	}
	if (*set->nr_stacks == *set->cap_stacks) {
		*set->cap_stacks = *set->cap_stacks ? 2 * *set->cap_stacks : 256;
		*set->stacks = tt_xrealloc(*set->stacks, *set->cap_stacks * sizeof(**set->stacks));
	}
	struct tt_sstack *st = &(*set->stacks)[(*set->nr_stacks)++];

	st->at = (uint32_t)*set->nr_frames;
	st->n = n;
	st->hash = h;
	if (n) /* an empty stack: the frames may still be NULL */
		memcpy(*set->frames + *set->nr_frames, ids, n * sizeof(*ids));
	*set->nr_frames += n;
	tt_hmap_put(set->map, h, *set->nr_stacks - 1);
	return *set->nr_stacks - 1;
}

static void on_sample(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		      const struct recfmt_sample *smp)
{
	struct walk_ctx *w = ctx;
	struct tt_samples *s = w->s;
	const struct stack_set funcs = { &s->frames, &s->nr_frames, &s->cap_frames,
					 &s->stacks, &s->nr_stacks, &s->cap_stacks,
					 &s->stack_map };
	const struct stack_set locs = { &s->loc_frames, &s->nr_loc_frames, &s->cap_loc_frames,
					&s->loc_stacks, &s->nr_loc_stacks, &s->cap_loc_stacks,
					&s->loc_stack_map };

	if (w->cap_ids < smp->nr_frames) {
		w->cap_ids = smp->nr_frames;
		w->ids = tt_xrealloc(w->ids, w->cap_ids * sizeof(*w->ids));
		w->loc_ids = tt_xrealloc(w->loc_ids, w->cap_ids * sizeof(*w->loc_ids));
	}
	for (uint32_t i = 0; i < smp->nr_frames; i++) {
		uint32_t l = addr_loc(w, tr, i && smp->frames[i] ? smp->frames[i] - 1 : smp->frames[i],
				      smp->ticks);

		w->loc_ids[i] = l;
		w->ids[i] = s->locs[l].func;
	}
	if (s->nr_rows == s->cap_rows) {
		s->cap_rows = s->cap_rows ? 2 * s->cap_rows : 4096;
		s->rows = tt_xrealloc(s->rows, s->cap_rows * sizeof(*s->rows));
	}
	struct tt_srow *r = &s->rows[s->nr_rows++];

	r->ticks = smp->ticks;
	r->file = w->file;
	r->thread = (uint32_t)(th - tr->threads);
	r->stack = stack_id(&funcs, w->ids, smp->nr_frames);
	r->loc_stack = w->so->locations ? stack_id(&locs, w->loc_ids, smp->nr_frames) : 0;
	r->truncated = smp->flags & RECFMT_SAMPLE_TRUNCATED;
}

/* --within: per thread (by serial), the union of the matching scopes'
 * intervals [lo, hi), sorted. */
struct span {
	uint64_t lo, hi;
};

struct within_ctx;

struct within_thread {
	uint32_t serial;
	struct within_ctx *ctx; /* its replica's */
	struct span *spans;
	size_t n, cap;
	struct within_thread *next; /* in its replica's list */
};

struct within_ctx {
	const regex_t *re;
	struct tt_trace *tr;		/* the walk's trace (its names) */
	int8_t *match;			/* per name: -1 unknown, 0 no, 1 yes */
	uint32_t nr_match;
	struct within_thread *threads; /* this replica's */
};

static void *within_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct within_ctx *c = ctx;
	struct within_thread *t = tt_xcalloc(1, sizeof(*t));

	(void)th;

	t->serial = th->serial;
	t->ctx = c;
	t->next = c->threads;
	c->threads = t;
	return t;
}

static bool within_match(struct within_ctx *c, uint32_t name)
{
	if (name >= c->nr_match) {
		uint32_t n = c->tr->nr_names + 1 > name + 1 ? c->tr->nr_names + 1 : name + 1;

		c->match = tt_xrealloc(c->match, n);
		memset(c->match + c->nr_match, -1, n - c->nr_match);
		c->nr_match = n;
	}
	if (c->match[name] < 0)
		c->match[name] = name < c->tr->nr_names && tt_regex_name(c->re, c->tr->names[name]);
	return c->match[name];
}

static void add_span(struct within_thread *t, uint64_t lo, uint64_t hi)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->spans = tt_xrealloc(t->spans, t->cap * sizeof(*t->spans));
	}
	t->spans[t->n].lo = lo;
	t->spans[t->n].hi = hi;
	t->n++;
}

static void within_act(void *tctx, const struct tt_activation *a)
{
	struct within_thread *t = tctx;
	if (within_match(t->ctx, a->name))
		add_span(t, a->enter_ticks, a->exit_ticks);
}

static void within_error(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
			 uint64_t ticks, enum tt_frame_error why)
{
	struct within_thread *t = tctx;

	(void)slot;
	if (why != TT_FRAME_OPEN_AT_END && why != TT_FRAME_TOO_LONG)
		return;
	if (within_match(t->ctx, name))
		add_span(t, enter_ticks, ticks + 1); /* open until the file's last tick */
}

static uint32_t within_enter(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			     bool in_window)
{
	(void)tctx, (void)parent_slot, (void)name, (void)ticks, (void)in_window;
	return 0;
}

static const struct tt_consumer within_consumer = {
	.thread_begin = within_thread_begin,
	.enter = within_enter,
	.act = within_act,
	.error = within_error,
	.no_times = true,
	/* One replica, so that its trace is the report's own (rep.tr), whose
	 * names the regex is matched against as the walk goes: name indices
	 * are a replica's own. */
	.one_walker = true,
};

static int by_lo(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorted and merged into disjoint spans. */
static void merge_spans(struct within_thread *t)
{
	size_t k = 0;

	if (!t->n)
		return;
	qsort(t->spans, t->n, sizeof(*t->spans), by_lo);
	for (size_t i = 0; i < t->n; i++) {
		if (k && t->spans[i].lo <= t->spans[k - 1].hi) {
			if (t->spans[i].hi > t->spans[k - 1].hi)
				t->spans[k - 1].hi = t->spans[i].hi;
		} else
			t->spans[k++] = t->spans[i];
	}
	t->n = k;
}

static bool in_spans(const struct within_thread *t, uint64_t ticks)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) { /* first span with lo > ticks */
		size_t mid = lo + (hi - lo) / 2;

		if (t->spans[mid].lo <= ticks)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ticks < t->spans[lo - 1].hi;
}

/*
 * The scopes of file fo that match so->within, per thread: a pass through
 * the pairing engine, over the whole file (the window applies to the
 * samples, not to the scopes that hold them).
 */
static enum tt_status within_pass(const struct tt_options *fo, const struct tt_samples_opts *so,
				  struct within_thread ***out, uint32_t *nr_out, char *msg,
				  size_t msg_bytes)
{
	struct tt_options wo = *fo;
	struct tt_report rep;
	struct within_ctx ctxs[TT_WALK_MAX_REPLICAS];
	struct tt_walk_spec spec = { .cons = &within_consumer };
	enum tt_status st;
	uint32_t n = 0;

	wo.has_from = wo.has_to = false;
	wo.nr_threads = 0;
	wo.has_function = false;
	wo.by_thread = false;
	memset(&rep, 0, sizeof(rep));
	memset(ctxs, 0, sizeof(ctxs));
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
		ctxs[r].re = &so->within;
		ctxs[r].tr = &rep.tr;
		spec.ctxs[r] = &ctxs[r];
	}
	st = tt_walk(&rep, &wo, &spec, msg, msg_bytes);
	*out = NULL;
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
		for (struct within_thread *t = ctxs[r].threads, *next; t; t = next) {
			next = t->next;
			if (st == TT_OK) {
				merge_spans(t);
				*out = tt_xrealloc(*out, (n + 1) * sizeof(**out));
				(*out)[n++] = t;
			} else {
				free(t->spans);
				free(t);
			}
		}
		free(ctxs[r].match);
	}
	tt_report_fini(&rep);
	*nr_out = n;
	return st;
}

/* Reads file i into s (its rows appended), keeping the selected ones. */
static enum tt_status read_file(struct tt_samples *s, const struct tt_options *o, unsigned i,
				const struct tt_samples_opts *so, char *msg, size_t msg_bytes)
{
	struct tt_samples_file *f = &s->files[i];
	struct tt_options fo;
	struct walk_ctx w = { .s = s, .so = so, .file = i, .first_map = s->nr_maps };
	size_t first = s->nr_rows, k;
	struct within_thread **within = NULL;
	uint32_t nr_within = 0;
	enum tt_status st;
	uint64_t lo = 0, span = UINT64_MAX;

	tt_walk_file_options(o, i, &fo);
	tt_trace_init(&f->tr, fo.trace);
	f->tr.on_sample = on_sample;
	f->tr.sample_ctx = &w;
	st = tt_trace_walk(&f->tr, NULL, NULL, msg, msg_bytes);
	tt_hmap_fini(&w.addr_map);
	free(w.ids);
	free(w.loc_ids);
	f->tr.on_sample = NULL;
	if (st != TT_OK)
		return st;
	tt_trace_clock(&f->tr, &f->clock);
	if (f->tr.has_sampling && !s->has_sampling) {
		s->has_sampling = true;
		s->hz = f->tr.sampling.hz;
		s->period_ns = f->tr.sampling.period_ns;
	}
	s->nr_read += f->tr.nr_samples;
	f->process = tt_process_label(&f->tr); /* as summary --by-process writes it */
	if (fo.nr_threads && tt_options_threads_missing(&fo, &f->tr, msg, msg_bytes) &&
	    (!fo.one_of_several || fo.last_of_several))
		return TT_ERR_FILE; /* exit 1 with the threads listed, as every command */
	if (so->has_within && s->nr_rows > first) {
		st = within_pass(&fo, so, &within, &nr_within, msg, msg_bytes);
		if (st != TT_OK)
			return st;
	}
	if (fo.has_from || fo.has_to)
		tt_options_window(&fo, &f->clock, &lo, &span);
	for (uint32_t t = 0; t < f->tr.nr_threads; t++)
		if (tt_options_thread_selected(&fo, &f->tr.threads[t]))
			s->nr_dropped += f->tr.threads[t].nr_samples_dropped;
	k = first;
	for (size_t r = first; r < s->nr_rows; r++) {
		const struct tt_srow *row = &s->rows[r];
		const struct tt_thread *th = &f->tr.threads[row->thread];

		if (!tt_options_thread_selected(&fo, th))
			continue;
		if ((fo.has_from || fo.has_to) && row->ticks - lo >= span)
			continue;
		if (so->has_within) {
			const struct within_thread *wt = NULL;

			for (uint32_t x = 0; x < nr_within && !wt; x++)
				if (within[x]->serial == th->serial)
					wt = within[x];
			if (!wt || !in_spans(wt, row->ticks))
				continue;
		}
		s->rows[k++] = *row;
	}
	s->nr_rows = k;
	for (uint32_t x = 0; x < nr_within; x++) {
		free(within[x]->spans);
		free(within[x]);
	}
	free(within);
	return TT_OK;
}

enum tt_status tt_samples_read(struct tt_samples *s, const struct tt_options *o,
			       const struct tt_samples_opts *so, char *msg, size_t msg_bytes)
{
	uint32_t *seen;
	enum tt_status st = TT_OK;

	memset(s, 0, sizeof(*s));
	tt_labels_init(&s->labels);
	s->nr_files = o->nr_traces ? o->nr_traces : 1;
	s->files = tt_xcalloc(s->nr_files, sizeof(*s->files));
	for (unsigned i = 0; i < s->nr_files; i++) {
		st = read_file(s, o, i, so, msg, msg_bytes);
		if (st != TT_OK) {
			s->failed = o->nr_traces ? o->traces[i] : o->trace;
			s->nr_files = i + 1;
			return st;
		}
	}
	for (size_t r = 0; r < s->nr_rows; r++)
		s->nr_truncated += s->rows[r].truncated;
	/* self: the leaf's; total: once per sample per function on its stack
	 * (seen[f] is the last row that counted f). */
	seen = tt_xcalloc(s->nr_funcs + 1, sizeof(*seen));
	for (size_t r = 0; r < s->nr_rows; r++) {
		const struct tt_sstack *stk = &s->stacks[s->rows[r].stack];
		const uint32_t *ids = s->frames + stk->at;

		s->funcs[ids[0]].self++;
		for (uint32_t i = 0; i < stk->n; i++)
			if (seen[ids[i]] != r + 1) {
				seen[ids[i]] = (uint32_t)(r + 1);
				s->funcs[ids[i]].total++;
			}
	}
	free(seen);
	for (uint32_t f = 0; f < s->nr_funcs; f++)
		if (s->funcs[f].total)
			tt_labels_add(&s->labels, s->funcs[f].key);
	tt_labels_finish(&s->labels);
	return TT_OK;
}

const char *tt_samples_label(const struct tt_samples *s, uint32_t f)
{
	return tt_labels_shown(&s->labels, s->funcs[f].key);
}

const char *tt_samples_name(const struct tt_samples *s, uint32_t f)
{
	return tt_labels_name(&s->labels, s->funcs[f].key);
}

const char *tt_samples_thread(const struct tt_samples *s, const struct tt_srow *r, char *buf,
			      size_t buf_bytes)
{
	tt_thread_label(&s->files[r->file].tr.threads[r->thread], buf, buf_bytes);
	return buf;
}

void tt_samples_warn(const struct tt_samples *s)
{
	for (unsigned i = 0; i < s->nr_files; i++) {
		tt_trace_warn(&s->files[i].tr);
		if (s->files[i].tr.syms)
			tt_symbols_warn(s->files[i].tr.syms);
	}
}

const char *tt_samples_missing(const struct tt_samples *s, char *buf, size_t bytes)
{
	for (unsigned i = 0; i < s->nr_files; i++) {
		const struct tt_trace *tr = &s->files[i].tr;

		if (tr->truncated) {
			snprintf(buf, bytes,
				 "no stack samples in its %" PRIu64 " complete frame%s: the file is cut "
				 "(%s)",
				 tr->nr_frames, tr->nr_frames == 1 ? "" : "s", tr->truncation);
			return buf;
		}
		if (!tr->has_end && !tr->has_crash && !tr->has_snapshot) {
			/* Cut exactly where a frame ends: what kill -9 leaves. */
			snprintf(buf, bytes,
				 "no stack samples in its %" PRIu64 " complete frame%s: the "
				 "recording has no end (the file is cut after a frame, or its "
				 "program was killed)",
				 tr->nr_frames, tr->nr_frames == 1 ? "" : "s");
			return buf;
		}
	}
	snprintf(buf, bytes, "no stack samples: record with tracetool record or REC_SAMPLE=HZ "
			     "(rec(3))");
	return buf;
}

void tt_samples_fini(struct tt_samples *s)
{
	for (unsigned i = 0; i < s->nr_files; i++) {
		tt_trace_fini(&s->files[i].tr);
		free(s->files[i].process);
	}
	free(s->files);
	for (uint32_t f = 0; f < s->nr_funcs; f++) {
		free(s->funcs[f].key);
		free(s->funcs[f].module);
	}
	free(s->funcs);
	tt_hmap_fini(&s->func_map);
	free(s->frames);
	free(s->stacks);
	tt_hmap_fini(&s->stack_map);
	free(s->locs);
	for (uint32_t m = 0; m < s->nr_maps; m++) {
		free(s->maps[m].path);
		free(s->maps[m].build_id);
	}
	free(s->maps);
	free(s->loc_frames);
	free(s->loc_stacks);
	tt_hmap_fini(&s->loc_stack_map);
	free(s->rows);
	tt_labels_fini(&s->labels);
	memset(s, 0, sizeof(*s));
}

/* s with ';' and line breaks made '_' appended to buf at *n. */
static void put_frame(char **buf, size_t *n, size_t *cap, const char *s, bool sep)
{
	size_t len = strlen(s) + 1;

	if (*n + len + 1 > *cap) {
		while (*n + len + 1 > *cap)
			*cap = *cap ? 2 * *cap : 256;
		*buf = tt_xrealloc(*buf, *cap);
	}
	if (sep)
		(*buf)[(*n)++] = ';';
	for (; *s; s++)
		(*buf)[(*n)++] = *s == ';' || *s == '\n' || *s == '\r' ? '_' : *s;
	(*buf)[*n] = '\0';
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct tt_sfolded *)a)->path, ((const struct tt_sfolded *)b)->path);
}

struct tt_sfolded *tt_samples_folded(const struct tt_samples *s, const struct tt_options *o,
				     size_t *nr)
{
	struct tt_sfolded *f = tt_xcalloc(s->nr_rows + 1, sizeof(*f));
	size_t n = 0, k = 0;
	char buf[256];

	for (size_t r = 0; r < s->nr_rows; r++) {
		const struct tt_srow *row = &s->rows[r];
		const struct tt_sstack *stk = &s->stacks[row->stack];
		char *path = NULL;
		size_t len = 0, cap = 0;

		if (o->by_process)
			put_frame(&path, &len, &cap, s->files[row->file].process, len > 0);
		if (o->by_thread)
			put_frame(&path, &len, &cap, tt_samples_thread(s, row, buf, sizeof(buf)), len > 0);
		for (uint32_t i = stk->n; i-- > 0;)
			put_frame(&path, &len, &cap, tt_samples_label(s, s->frames[stk->at + i]), len > 0);
		f[n].path = path;
		f[n].samples = 1;
		n++;
	}
	if (n)
		qsort(f, n, sizeof(*f), by_path);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(f[k - 1].path, f[i].path)) {
			f[k - 1].samples++;
			free(f[i].path);
		} else
			f[k++] = f[i];
	}
	*nr = k;
	return f;
}
