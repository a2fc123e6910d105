/* SPDX-License-Identifier: MIT */
/*
 * scopes.c - the per-event loop: LEB128 columns decoded inline, a flat stack
 * per thread, site -> name through an array, O(1) statistics and histogram
 * updates. Everything rare (unknown sites, mismatched exits, stack growth)
 * is out of line. See scopes.h for the matching rules.
 */
#include "scopes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

/* Deeper enters than this are counted as errors rather than stored. */
#define MAX_DEPTH (1u << 20)

struct frame {
	uint32_t name;
	uint32_t in; /* inside the time window */
	uint64_t enter_ticks;
	uint64_t child_ticks; /* timed children's durations */
};

/* Per name and thread: open enters, and open enters inside the window. */
struct depth {
	uint32_t open, in;
};

struct scope_thread {
	bool skip;
	struct frame *stack;
	uint32_t sp, cap;
	uint32_t overflow; /* enters beyond MAX_DEPTH, not stored */
	struct depth *depth;
	uint32_t nr_depth;
	struct tt_stat_table *tab;
	struct tt_stat_table own;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fputs("tracetool: out of memory\n", stderr);
		abort();
	}
	return q;
}

void tt_scopes_init(struct tt_scopes *sc, struct tt_trace *tr)
{
	memset(sc, 0, sizeof(*sc));
	sc->tr = tr;
	sc->win_lo_ticks = 0;
	sc->win_span_ticks = UINT64_MAX;
}

static struct scope_thread *thread_state(struct tt_scopes *sc, struct tt_thread *th)
{
	struct scope_thread *st = th->user;

	if (st)
		return st;
	st = xrealloc(NULL, sizeof(*st));
	memset(st, 0, sizeof(*st));
	st->skip = sc->thread_filter && !sc->thread_filter(sc->filter_ctx, th);
	st->tab = sc->by_thread ? &st->own : &sc->global;
	th->user = st;
	return st;
}

/* Makes the per-name arrays cover every name defined so far. */
static void cover_names(struct scope_thread *st, uint32_t nr_names)
{
	if (st->nr_depth < nr_names) {
		uint32_t n = st->nr_depth ? st->nr_depth : 64;

		while (n < nr_names)
			n *= 2;
		st->depth = xrealloc(st->depth, n * sizeof(*st->depth));
		memset(st->depth + st->nr_depth, 0, (n - st->nr_depth) * sizeof(*st->depth));
		st->nr_depth = n;
	}
	tt_stats_reserve(st->tab, nr_names);
}

static void grow_stack(struct scope_thread *st)
{
	uint32_t cap = st->cap ? 2 * st->cap : 256;

	if (cap > MAX_DEPTH)
		cap = MAX_DEPTH;
	st->stack = xrealloc(st->stack, cap * sizeof(*st->stack));
	st->cap = cap;
}

static void count_error(struct tt_scopes *sc, struct scope_thread *st, uint32_t name)
{
	st->tab->v[name].errors++;
	sc->nr_unmatched++;
}

/* Drops the top frame as an enter with no exit; its children's time goes to
 * its parent, which contains them. */
static void drop_top(struct tt_scopes *sc, struct scope_thread *st)
{
	struct frame *f = &st->stack[--st->sp];

	st->depth[f->name].open--;
	if (f->in) {
		st->depth[f->name].in--;
		count_error(sc, st, f->name);
	}
	if (st->sp)
		st->stack[st->sp - 1].child_ticks += f->child_ticks;
}

/*
 * The slow exit: the top of the stack is not this name. If an enter of the
 * name is open deeper, the ones above it are unmatched and are dropped;
 * otherwise the exit itself is unmatched. Return: true if the top frame is
 * now the exit's enter.
 */
static bool exit_mismatch(struct tt_scopes *sc, struct scope_thread *st, uint32_t name,
			  uint64_t ticks)
{
	if (st->overflow) {
		st->overflow--; /* the exit of an enter counted at overflow */
		return false;
	}
	if (!st->depth[name].open) {
		if (ticks - sc->win_lo_ticks < sc->win_span_ticks)
			count_error(sc, st, name);
		return false;
	}
	while (st->stack[st->sp - 1].name != name)
		drop_top(sc, st);
	return true;
}

static void enter_overflow(struct tt_scopes *sc, struct scope_thread *st, uint32_t name,
			   uint64_t ticks)
{
	if (st->cap < MAX_DEPTH) {
		grow_stack(st);
		return;
	}
	st->overflow++;
	if (ticks - sc->win_lo_ticks < sc->win_span_ticks)
		count_error(sc, st, name);
}

/*
 * Decodes one delta at p, where at least 8 bytes are readable: values of up
 * to 3 LEB128 bytes (21 bits: deltas below about a million ticks) are
 * assembled from one 64-bit load without a branch per byte. Return: bytes
 * used, or 0 if the value is longer (take the generic path).
 */
static inline unsigned delta_fast(const uint8_t *p, uint64_t *zz)
{
	uint64_t w, stop, v;
	unsigned nb;

	memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	stop = ~w & 0x808080u; /* a clear high bit ends the value */
	if (__builtin_expect(!stop, 0))
		return 0;
	nb = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
	v = (w & 0x7f) | ((w >> 1) & 0x3f80) | ((w >> 2) & 0x1fc000);
	*zz = v & ((1ull << (7 * nb)) - 1);
	return nb;
}

static inline __attribute__((always_inline)) int
block_loop(struct tt_scopes *sc, struct tt_trace *tr, struct tt_thread *th,
	   struct recfmt_events_iter *it, const bool with_close)
{
	struct scope_thread *st = thread_state(sc, th);
	const uint8_t *ids = it->ids, *ids_end = it->ids_end;
	const uint8_t *dl = it->deltas, *dl_end = it->deltas_end;
	uint64_t ticks = it->ticks;
	const uint64_t lo = sc->win_lo_ticks, span = sc->win_span_ticks;
	uint32_t n = it->nr_events;
	const uint32_t *site_name;
	uint32_t nr_site_slots;
	struct tt_stat *stats;
	struct depth *depth;
	struct frame *stack;
	uint32_t sp, cap;

	if (st->skip)
		return 0;
	cover_names(st, tr->nr_names);
#define LOAD_LOCALS()                                                                       \
	do {                                                                                \
		site_name = tr->site_name;                                                  \
		nr_site_slots = tr->nr_site_slots;                                          \
		stats = st->tab->v;                                                         \
		depth = st->depth;                                                          \
		stack = st->stack;                                                          \
		sp = st->sp;                                                                \
		cap = st->cap;                                                              \
	} while (0)
#define STORE_LOCALS() (st->sp = sp)
	LOAD_LOCALS();
	for (; n; n--) {
		uint64_t code, zz;
		uint32_t site, name;

		unsigned k;

		/* FORMAT.md §3.6: one LEB128 value per event in each column. */
		if (__builtin_expect(ids < ids_end && *ids < 0x80, 1)) {
			code = *ids++;
		} else {
			k = recfmt_leb128_decode(ids, ids_end, &code);
			if (!k || code > UINT32_MAX)
				goto malformed;
			ids += k;
		}
		if (__builtin_expect(dl_end - dl >= 8 && (k = delta_fast(dl, &zz)) != 0, 1)) {
			dl += k;
		} else {
			k = recfmt_leb128_decode(dl, dl_end, &zz);
			if (!k)
				goto malformed;
			dl += k;
		}
		ticks += (zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1);
		site = (uint32_t)(code >> 1);
		if (__builtin_expect(site < nr_site_slots && site_name[site] != TT_NO_NAME, 1)) {
			name = site_name[site];
		} else {
			STORE_LOCALS();
			name = tt_trace_site_name_slow(tr, site);
			cover_names(st, tr->nr_names);
			LOAD_LOCALS();
		}
		if (!(code & 1)) {
			struct frame *f;

			if (__builtin_expect(sp == cap, 0)) {
				STORE_LOCALS();
				enter_overflow(sc, st, name, ticks);
				LOAD_LOCALS();
				if (sp == cap)
					continue;
			}
			f = &stack[sp++];
			f->name = name;
			f->in = ticks - lo < span;
			f->enter_ticks = ticks;
			f->child_ticks = 0;
			depth[name].open++;
			depth[name].in += f->in;
		} else {
			struct frame *f;
			uint64_t dur;

			if (__builtin_expect(!sp || stack[sp - 1].name != name, 0)) {
				bool ok;

				STORE_LOCALS();
				ok = exit_mismatch(sc, st, name, ticks);
				LOAD_LOCALS();
				if (!ok)
					continue;
			}
			f = &stack[--sp];
			depth[name].open--;
			if (__builtin_expect(ticks < f->enter_ticks, 0)) {
				/* The clock went backwards: not timed (scopes.h). */
				if (f->in) {
					depth[name].in--;
					stats[name].errors++;
					sc->nr_unmatched++;
				}
				continue;
			}
			dur = ticks - f->enter_ticks;
			if (sp)
				stack[sp - 1].child_ticks += dur;
			if (f->in) {
				struct tt_stat *s = &stats[name];
				uint64_t *h = s->hist;

				s->calls++;
				s->sum_ticks += dur;
				s->self_ticks += dur > f->child_ticks ? dur - f->child_ticks : 0;
				/* Recursion: only the outermost activation adds to the total. */
				if (--depth[name].in == 0)
					s->total_ticks += dur;
				if (dur < s->min_ticks)
					s->min_ticks = dur;
				if (dur > s->max_ticks)
					s->max_ticks = dur;
				if (__builtin_expect(!h, 0))
					h = tt_stats_hist_alloc(s);
				h[tt_hist_index(dur)]++;
				if (with_close)
					sc->on_close(sc->close_ctx, th, name, f->enter_ticks, dur);
			}
		}
	}
	STORE_LOCALS();
	it->ticks = ticks;
	it->nr_left = 0;
	it->ids = ids;
	it->deltas = dl;
	/* Both columns must be used up exactly (FORMAT.md §3.6). */
	return ids == ids_end && dl == dl_end ? 0 : -1;
malformed:
	STORE_LOCALS();
	it->ticks = ticks;
	return -1;
#undef LOAD_LOCALS
#undef STORE_LOCALS
}

int tt_scopes_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		    struct recfmt_events_iter *it)
{
	struct tt_scopes *sc = ctx;

	/* Two copies of the loop: summary's has no per-event callback test. */
	if (sc->on_close)
		return block_loop(sc, tr, th, it, true);
	return block_loop(sc, tr, th, it, false);
}

void tt_scopes_finish(struct tt_scopes *sc)
{
	struct tt_trace *tr = sc->tr;

	for (uint32_t i = 0; i < tr->nr_threads; i++) {
		struct scope_thread *st = tr->threads[i].user;

		if (!st || st->skip)
			continue;
		/* Enters still open when the file ended: the thread was inside. */
		while (st->sp)
			drop_top(sc, st);
	}
}

struct tt_stat_table *tt_scopes_table(const struct tt_thread *th)
{
	struct scope_thread *st = th->user;

	if (!st || st->skip)
		return NULL;
	return st->tab;
}

void tt_scopes_fini(struct tt_scopes *sc)
{
	struct tt_trace *tr = sc->tr;

	for (uint32_t i = 0; i < tr->nr_threads; i++) {
		struct scope_thread *st = tr->threads[i].user;

		if (!st)
			continue;
		free(st->stack);
		free(st->depth);
		tt_stats_fini(&st->own);
		free(st);
		tr->threads[i].user = NULL;
	}
	tt_stats_fini(&sc->global);
}
