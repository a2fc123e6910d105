/* SPDX-License-Identifier: MIT */
/*
 * scopes.c - the per-event loop: each EVENTS block is decoded in batches
 * into flat arrays (recfmt_events_decode_batch), sites become names once per
 * batch, and a branch-free pairing loop keeps a flat stack per thread and
 * O(1) statistics and histogram updates. Everything rare (unknown sites,
 * mismatched exits, clocks going backwards, stack growth and overflow) is
 * out of line in event_slow(). See scopes.h for the matching rules.
 */
#include "engine/scopes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/emit.h"
#include "common/hist.h"
#include "common/hmap.h"
#include "common/xalloc.h"

/* Deeper enters than this are never stored; see also tt_depth_limit(). */
#define MAX_DEPTH TT_MAX_DEPTH
/* Stacks shrink back to this after each block: a thread costs a fixed
 * MIN_STACK frames plus what it holds open (docs/ANALYZER.md, Limits). */
#define MIN_STACK 16
/* Events decoded per batch: the arrays stay in L1 (12 bytes an event). */
#define BATCH 1024
/* The name of the sentinel frames below the stack; no real name has it,
 * nor TT_NO_NAME (an unknown site), so that an exit matches no sentinel. */
#define NO_FRAME (UINT32_MAX - 1)

struct frame {
	uint32_t name;
	uint32_t in; /* inside the time window */
	uint64_t enter_ticks;
	uint64_t child_ticks; /* timed children's durations */
	uint64_t same_ticks;  /* durations of activations of its name closed inside
			       * it, not nested in a third one: what its own
			       * total covers, or what they add to the name's
			       * total if it turns out left without an exit */
	uint32_t slot;	      /* the consumer's (tt_consumer.enter()), else 0 */
	uint32_t prev;	      /* the innermost open frame of its name below it, 0: none */
	uint64_t desc_fx;     /* --compensate: the probes' cost of the activations
			       * recorded inside it, 1/65536 tick (event_slow()) */
};

/* Per name and thread: the innermost open frame of the name (0: none),
 * and the open enters inside the window. */
struct depth {
	uint32_t top, in;
};

/*
 * The stack: real frames are stack[1..sp], so that the top is stack[sp]
 * and its parent stack[sp - 1] even when the stack is empty: stack[0] and
 * stack[-1] are sentinel frames (name NO_FRAME, never matched). The fast
 * loop reads the top and adds to its parent on every event and writes the
 * slot above the top, whether the event enters or exits; the sentinels and
 * the one spare slot make that safe without a test.
 */
struct scope_thread {
	bool skip;
	struct frame *base; /* the allocation: base[0], base[1] are sentinels */
	struct frame *stack; /* base + 1 */
	uint32_t sp, cap;   /* cap: real frames that fit, plus the spare slot */
	uint32_t overflow;  /* enters beyond MAX_DEPTH, not stored */
	struct depth *depth;
	uint32_t nr_depth;
	struct tt_stat_table *tab;
	struct tt_stat_table own;
	void *cons_state; /* the consumer's, from its thread_begin() */
	/* tt_scopes_block(): full batches seen, the batch of the next probe
	 * and the gap after it, the last probe's times (pair_fused, decode +
	 * pair_fast), the loop chosen, and whether that choice still waits for
	 * a probe to confirm it (the first one, or after one against it). */
	uint32_t nr_batches, next_probe, probe_gap;
	bool fused, unsure;
	uint64_t probe_ns[2];
	/* Counters (tt_scopes.on_counters): from the thread's first COUNTER_SET
	 * with a recorded column on, its blocks wait in tt_scopes' pending
	 * block and every enter stores the values it carries. */
	bool has_ctr;
	uint64_t *ctr;	     /* TT_MAX_COUNTERS values per stack slot */
	uint32_t *ctr_mask;  /* per stack slot: the counters valid at its enter */
	uint32_t nr_cols;    /* recorded columns of its COUNTER_SET */
	uint32_t col_ctr[TT_MAX_COUNTERS]; /* column -> counter index */
	uint32_t cur_mask;   /* the event event_slow() pairs: its counters */
	const uint64_t *cur_vals;
	/* summary --arg: the arguments of the open frames, by stack slot
	 * (ascending: a new one binds to the top), one per frame and key.
	 * While any is held the blocks go by the book (event_slow()), which
	 * hands them over or drops them as their frames close. */
	struct pend_arg {
		uint32_t sp, key;
		int64_t v;
	} *args;
	uint32_t nr_args, cap_args;
};

void tt_scopes_init(struct tt_scopes *sc, struct tt_trace *tr)
{
	memset(sc, 0, sizeof(*sc));
	sc->tr = tr;
	sc->win_lo_ticks = 0;
	sc->win_span_ticks = UINT64_MAX;
	sc->max_dur_ticks = UINT64_MAX;
}

static void resize_stack(struct scope_thread *st, uint32_t cap)
{
	st->base = tt_xrealloc(st->base, ((size_t)cap + 2) * sizeof(*st->base));
	st->stack = st->base + 1;
	if (st->has_ctr) {
		st->ctr = tt_xrealloc(st->ctr, ((size_t)cap + 2) * TT_MAX_COUNTERS *
						       sizeof(*st->ctr));
		st->ctr_mask = tt_xrealloc(st->ctr_mask, ((size_t)cap + 2) * sizeof(*st->ctr_mask));
		if (cap > st->cap) /* shrink_stack() makes it smaller too */
			memset(st->ctr_mask + st->cap + 2, 0,
			       ((size_t)cap - st->cap) * sizeof(*st->ctr_mask));
	}
	st->cap = cap;
}

/*
 * Makes room for `need` real frames plus the spare slot.
 * Return: false if need is deeper than tt_depth_limit() allows now.
 */
static bool reserve_stack(struct tt_scopes *sc, struct scope_thread *st, uint32_t need)
{
	uint32_t cap = st->cap ? st->cap : MIN_STACK, limit;

	if (need + 1 <= st->cap)
		return true;
	limit = tt_depth_limit(sc->tr->nr_threads);
	if (need > limit)
		return false;
	while (cap < need + 1)
		cap *= 2;
	if (cap > limit + 1)
		cap = limit + 1;
	resize_stack(st, cap);
	return true;
}

/*
 * After a block: keep twice what is open (at least MIN_STACK), no more; and
 * with nothing open, every open count is 0: drop the per-name counts of a
 * thread that has more than a few, so that many threads times many names
 * cost nothing between blocks (cover_names() makes them again).
 */
static void shrink_stack(struct scope_thread *st)
{
	uint32_t cap = MIN_STACK;

	if (st->sp == 0 && st->nr_depth > 64) {
		free(st->depth);
		st->depth = NULL;
		st->nr_depth = 0;
	}

	while (cap < 2 * (st->sp + 1) && cap <= MAX_DEPTH)
		cap *= 2;
	if (cap > MAX_DEPTH + 1)
		cap = MAX_DEPTH + 1;
	if (cap < st->cap)
		resize_stack(st, cap);
}

/* The thread is paired with counters from now on; the frames open so far
 * were entered without any. */
static void counters_on(struct scope_thread *st)
{
	if (st->has_ctr)
		return;
	st->has_ctr = true;
	st->ctr = tt_xrealloc(NULL, ((size_t)st->cap + 2) * TT_MAX_COUNTERS * sizeof(*st->ctr));
	st->ctr_mask = tt_xcalloc((size_t)st->cap + 2, sizeof(*st->ctr_mask));
}

/* A timed activation closed by the current event, which was entered in
 * stack slot `slot`: its counter deltas to on_counters. */
static void counters_act(struct tt_scopes *sc, struct scope_thread *st, const struct tt_thread *th,
			 uint32_t name, uint32_t slot, bool outermost)
{
	uint32_t mask = st->ctr_mask[slot] & st->cur_mask;
	const uint64_t *at = &st->ctr[(size_t)slot * TT_MAX_COUNTERS], *now = st->cur_vals;
	uint64_t delta[TT_MAX_COUNTERS];

	if (!mask || !sc->on_counters)
		return;
	for (uint32_t g = 0; g < TT_MAX_COUNTERS; g++) {
		delta[g] = now[g] - at[g];
		/* A counter going down is no count: leave it out. */
		if (now[g] < at[g])
			mask &= ~(1u << g);
	}
	if (mask)
		sc->on_counters(sc->counters_ctx, (uint32_t)(th - sc->tr->threads), name, outermost,
				mask, delta);
}

static struct scope_thread *thread_state(struct tt_scopes *sc, struct tt_thread *th)
{
	struct scope_thread *st = th->user;

	if (st)
		return st;
	st = tt_xrealloc(NULL, sizeof(*st));
	memset(st, 0, sizeof(*st));
	st->skip = sc->thread_filter && !sc->thread_filter(sc->filter_ctx, th);
	st->unsure = true; /* no probe yet: the first one decides */
	st->tab = sc->by_thread ? &st->own : &sc->global;
	reserve_stack(sc, st, MIN_STACK - 1); /* never refused: below any limit */
	memset(st->base, 0, 2 * sizeof(*st->base));
	st->base[0].name = st->base[1].name = NO_FRAME;
	tt_stats_hist_alloc(&sc->sink);
	if (sc->cons && !st->skip)
		st->cons_state = sc->cons->thread_begin(sc->cons_ctx, th);
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
		st->depth = tt_xrealloc(st->depth, n * sizeof(*st->depth));
		memset(st->depth + st->nr_depth, 0, (n - st->nr_depth) * sizeof(*st->depth));
		st->nr_depth = n;
	}
	tt_stats_reserve(st->tab, nr_names);
}

static void count_error(struct tt_scopes *sc, struct scope_thread *st, uint32_t name)
{
	st->tab->v[name].errors++;
	sc->nr_unmatched++;
}

/* The frame in stack slot idx closes (timed in the window: its
 * arguments go to on_arg); the arguments of it and above are let go. */
static void close_args(struct tt_scopes *sc, struct scope_thread *st, const struct tt_thread *th,
		       uint32_t name, uint32_t idx, bool timed)
{
	while (st->nr_args && st->args[st->nr_args - 1].sp >= idx) {
		const struct pend_arg *p = &st->args[--st->nr_args];

		if (timed && p->sp == idx)
			sc->on_arg(sc->arg_ctx, (uint32_t)(th - sc->tr->threads), name, p->key, p->v);
	}
}

/*
 * Summary's and histogram's default: no window, no callback. Then every
 * frame is inside the window and pair_fast() keeps only the open count of
 * each name; the in-window count (depth.in) is left alone everywhere.
 */
static inline bool fast_mode(const struct tt_scopes *sc)
{
	return !sc->cons && !sc->comp_applied && sc->win_lo_ticks == 0 &&
	       sc->win_span_ticks == UINT64_MAX;
}

/*
 * --compensate (scopes.h): what frame f and the activations recorded inside
 * it cost its parent, 1/65536 tick: its own probes' whole cost plus theirs.
 * A frame closed as an error counts as a recorded activation too.
 */
static inline uint64_t comp_outer(const struct tt_scopes *sc, const struct frame *f)
{
	return sc->comp_fx[sc->tr->name_hook[f->name]] + f->desc_fx;
}

/* Its duration less its own probes' inner cost and comp_outer() of every
 * activation recorded inside it, rounded to the tick, never below 0. */
static inline uint64_t comp_dur(const struct tt_scopes *sc, const struct frame *f, uint64_t dur)
{
	uint64_t less = (sc->comp_inner_fx[sc->tr->name_hook[f->name]] + f->desc_fx + 32768) >> 16;

	return dur > less ? dur - less : 0;
}

/* Drops the top frame as an enter with no exit; its children's time goes to
 * its parent, which contains them. */
static void drop_top(struct tt_scopes *sc, struct scope_thread *st, uint64_t ticks,
		     enum tt_frame_error why)
{
	struct frame *f = &st->stack[st->sp--];

	if (st->nr_args)
		close_args(sc, st, NULL, f->name, st->sp + 1, false);
	st->depth[f->name].top = f->prev;
	if (f->in) {
		if (!fast_mode(sc))
			st->depth[f->name].in--;
		/* A snapshot's window ends inside scopes: open, not an error (FORMAT.md
		 * §3.20); but a crash snapshot ends at the crash, whose open scopes
		 * are errors as in a stream file (§3.21). */
		if (why == TT_FRAME_OPEN_AT_END && sc->tr->has_snapshot && !sc->tr->has_crash &&
		    sc->tr->snapshot.kind != RECFMT_SNAPSHOT_CRASH)
			sc->nr_open_at_end++;
		else
			count_error(sc, st, f->name);
		sc->nr_abandoned += why == TT_FRAME_LEFT;
		st->tab->v[f->name].left += why == TT_FRAME_LEFT;
	}
	/* The activations of its name it held were not nested in it after
	 * all: they belong to the enclosing one of the name, or are outermost. */
	if (f->prev)
		st->stack[f->prev].same_ticks += f->same_ticks;
	else
		st->tab->v[f->name].total_ticks += f->same_ticks;
	st->stack[st->sp].child_ticks += f->child_ticks;
	if (sc->comp_applied)
		st->stack[st->sp].desc_fx += comp_outer(sc, f);
	if (sc->cons && sc->cons->error)
		sc->cons->error(st->cons_state, f->name, f->slot, f->enter_ticks, ticks, why);
}

/* A stored frame closed as an error by its own exit. */
static void frame_error(struct tt_scopes *sc, struct scope_thread *st, const struct frame *f,
			uint64_t ticks, enum tt_frame_error why)
{
	if (sc->cons && sc->cons->error)
		sc->cons->error(st->cons_state, f->name, f->slot, f->enter_ticks, ticks, why);
}

/* The histogram's add when the row's counter is not one load away: the
 * first values (hist.h's small list), a new chunk. Out of line. */
static __attribute__((noinline)) void record_hist_slow(struct tt_stat *s, uint32_t idx)
{
	struct tt_hist *h = s->hist ? s->hist : tt_stats_hist_alloc(s);

	tt_hist_add(h, idx, 1);
	s->hist_chunks = h->chunk;
}

/*
 * The per-exit statistics. Min and max are branches, not selects: past the
 * first few activations a new extreme is rare, so they predict well and the
 * row is not written back. The histogram counter is reached through the
 * row's copy of the chunk table (stats.h, hist_chunks). Records one timed
 * activation of `name` in the window.
 */
static inline void record(struct tt_stat *s, uint64_t dur, uint64_t self, bool outermost)
{
	const uint32_t idx = tt_hist_index(dur);
	uint64_t *c;

	s->calls++;
	s->sum_ticks += dur;
	s->self_ticks += self;
	s->total_ticks += outermost ? dur : 0;
	if (__builtin_expect(dur < s->min_ticks, 0))
		s->min_ticks = dur;
	if (__builtin_expect(dur > s->max_ticks, 0))
		s->max_ticks = dur;
	if (__builtin_expect(!s->hist_chunks || !(c = s->hist_chunks[idx >> TT_HIST_SUB_BITS]), 0))
		record_hist_slow(s, idx);
	else
		c[idx & (TT_HIST_CHUNK - 1)]++;
}

/* event_slow()'s enter: a frame pushed, or counted beyond the depth. */
static void enter_slow(struct tt_scopes *sc, struct scope_thread *st, uint32_t name,
		       uint64_t ticks, bool in_window)
{
	struct frame *f;

	if (st->sp == MAX_DEPTH || st->overflow || !reserve_stack(sc, st, st->sp + 1)) {
		/* Not stored; its exit is the next exit while any is pending. */
		st->overflow++;
		if (in_window)
			count_error(sc, st, name);
		return;
	}
	f = &st->stack[++st->sp];
	f->name = name;
	f->in = in_window;
	f->enter_ticks = ticks;
	f->child_ticks = 0;
	f->prev = st->depth[name].top;
	f->same_ticks = 0;
	f->desc_fx = 0;
	st->depth[name].top = st->sp;
	f->slot = sc->cons && sc->cons->enter
			  ? sc->cons->enter(st->cons_state, f[-1].slot, name, ticks, in_window)
			  : 0;
	if (!fast_mode(sc))
		st->depth[name].in += f->in;
	if (st->has_ctr) {
		st->ctr_mask[st->sp] = st->cur_mask;
		if (st->cur_mask)
			memcpy(&st->ctr[(size_t)st->sp * TT_MAX_COUNTERS], st->cur_vals,
			       TT_MAX_COUNTERS * sizeof(*st->cur_vals));
	}
}

/* event_slow()'s exit: the frame of its name closed, with the frames
 * above it left without an exit; timed, or an error. */
static void exit_slow(struct tt_scopes *sc, struct scope_thread *st, const struct tt_thread *th,
		      uint32_t name, uint64_t ticks, bool in_window)
{
	struct frame *f;
	uint64_t dur;

	if (st->overflow) {
		st->overflow--; /* the exit of an enter counted at overflow */
		return;
	}
	if (st->stack[st->sp].name != name) {
		if (!st->depth[name].top) {
			/* An exit with no enter: its start is unknown, so it belongs
			 * to the window by its own time (docs/ANALYZER.md). In a
			 * snapshot it was open when the window started (FORMAT.md
			 * §3.20): not an error, not timed. */
			if (sc->tr->has_snapshot) {
				sc->nr_open_at_start += in_window;
				if (sc->cons && sc->cons->open_at_start && in_window)
					sc->cons->open_at_start(st->cons_state, name, ticks);
			} else if (in_window) {
				count_error(sc, st, name);
			}
			return;
		}
		while (st->stack[st->sp].name != name)
			drop_top(sc, st, ticks, TT_FRAME_LEFT);
	}
	f = &st->stack[st->sp--];
	st->depth[name].top = f->prev;
	if (st->nr_args)
		close_args(sc, st, th, name, st->sp + 1,
			   f->in && ticks >= f->enter_ticks &&
				   ticks - f->enter_ticks <= sc->max_dur_ticks);
	if (ticks >= f->enter_ticks && ticks - f->enter_ticks > sc->max_dur_ticks) {
		/* Longer than --max-duration: an error, not a time (docs/ANALYZER.md);
		 * the time was spent inside the parent, which keeps it as child time. */
		dur = ticks - f->enter_ticks;
		if (sc->comp_applied) {
			dur = comp_dur(sc, f, dur);
			st->stack[st->sp].desc_fx += comp_outer(sc, f);
		}
		st->stack[st->sp].child_ticks += dur;
		if (f->in) {
			if (!fast_mode(sc))
				st->depth[name].in--;
			count_error(sc, st, name);
		}
		frame_error(sc, st, f, ticks, TT_FRAME_TOO_LONG);
		return;
	}
	if (ticks < f->enter_ticks) {
		/* The clock went backwards: not timed (scopes.h). */
		if (sc->comp_applied)
			st->stack[st->sp].desc_fx += comp_outer(sc, f);
		if (f->in) {
			if (!fast_mode(sc))
				st->depth[name].in--;
			count_error(sc, st, name);
		}
		frame_error(sc, st, f, ticks, TT_FRAME_BACKWARDS);
		return;
	}
	dur = ticks - f->enter_ticks;
	if (sc->comp_applied) {
		dur = comp_dur(sc, f, dur);
		st->stack[st->sp].desc_fx += comp_outer(sc, f);
	}
	st->stack[st->sp].child_ticks += dur;
	if (f->in) {
		uint64_t self = dur > f->child_ticks ? dur - f->child_ticks : 0;

		bool outermost = fast_mode(sc) ? f->prev == 0 : --st->depth[name].in == 0;

		if (!sc->cons || !sc->cons->no_times)
			record(&st->tab->v[name], dur, self, outermost);
		if (!outermost)
			st->stack[f->prev].same_ticks += dur;
		if (st->has_ctr)
			counters_act(sc, st, th, name, st->sp + 1, outermost);
		if (sc->cons) {
			const struct tt_activation a = {
				.th = th, .name = name, .depth = st->sp,
				.enter_ticks = f->enter_ticks, .exit_ticks = ticks,
				.dur_ticks = dur, .self_ticks = self, .outermost = outermost, .slot = f->slot,
			};

			sc->cons->act(st->cons_state, &a);
		}
	}
}

/*
 * event_slow() - one event by the book: every rule of scopes.h, with no
 * assumption about the stack. The fast loop hands it the rare exits (not
 * the top's name, clock backwards), and whole batches it cannot take
 * (stack near MAX_DEPTH, enters beyond it pending). Out of line, so that
 * the fast loops that call it on their rare branch stay as small as they
 * are (inlined, its dispatch cost summary 3 % of its CPU time on
 * bench_analyzer's trace).
 */
static __attribute__((noinline)) void event_slow(struct tt_scopes *sc, struct scope_thread *st,
						 const struct tt_thread *th, uint32_t name,
						 uint64_t ticks, bool is_exit)
{
	/* A span of UINT64_MAX is no window at all, as in pair_fast(). */
	const bool in_window = sc->win_span_ticks == UINT64_MAX ||
			       ticks - sc->win_lo_ticks < sc->win_span_ticks;

	if (is_exit)
		exit_slow(sc, st, th, name, ticks, in_window);
	else
		enter_slow(sc, st, name, ticks, in_window);
}

/*
 * What the decoding pairing loops (pair_fast(), pair_fused(), pair_cons())
 * keep in registers of the tables that a new name moves: the sites' names
 * (nr_slots of them, a sentinel slot after), the statistics, the names'
 * depths, and the stack, which event_slow() may move.
 */
struct pair_tabs {
	const uint32_t *site_name;
	uint32_t nr_slots;
	struct tt_stat *stats;
	struct depth *depth;
	struct frame *stack;
};

static inline void pair_tabs_load(struct pair_tabs *c, const struct tt_trace *tr,
				  const struct scope_thread *st)
{
	c->site_name = tr->site_name;
	c->nr_slots = tr->nr_site_slots;
	c->stats = st->tab->v;
	c->depth = st->depth;
	c->stack = st->stack;
}

/*
 * pair_slow() - the one rare branch of those loops: an event of a site not
 * named yet (name TT_NO_NAME: named now, which may move the tables), or one
 * the loop cannot take (an exit that does not close the top, a clock going
 * backwards), handed to event_slow() with the stack at sp.
 * Inlined into each loop, so that c stays in its registers.
 * Return: the stack pointer after the event; c reloaded where it moved.
 */
static inline __attribute__((always_inline)) uint32_t
pair_slow(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
	  const struct tt_thread *th, struct pair_tabs *c, uint32_t sp, uint32_t site,
	  uint32_t name, uint64_t t, uint32_t is_exit)
{
	if (name == TT_NO_NAME) {
		name = tt_trace_site_name_slow(tr, site);
		cover_names(st, tr->nr_names);
		c->site_name = tr->site_name;
		c->nr_slots = tr->nr_site_slots;
		c->stats = st->tab->v;
		c->depth = st->depth;
	}
	st->sp = sp;
	event_slow(sc, st, th, name, t, is_exit);
	c->stack = st->stack;
	return st->sp;
}

/*
 * The per-event loop over one decoded batch, where codes[] already hold
 * name << 1 | kind. An enter and an exit do the same work without a branch
 * on which it is (the random walk of bench_analyzer makes that branch a coin
 * toss): both read the top frame, add to its parent's child time and write
 * the slot above the top, both update the name's counters, and both record
 * an activation, into the name's statistics when it is a timed exit in the
 * window, else into the thread's sink; the masks and selects make the parts
 * that do not apply add zero or land in the sink. Only an exit that does not
 * match the top's name or whose clock went backwards branches out, to
 * event_slow(). The caller guarantees sp + n + 1 <= cap and no overflow.
 */
static inline __attribute__((always_inline)) void
pair_batch(struct tt_scopes *sc, struct scope_thread *st, const struct tt_thread *th,
	   const uint64_t *ticks, const uint32_t *codes, uint32_t n)
{
	const uint64_t lo = sc->win_lo_ticks, span = sc->win_span_ticks;
	struct tt_stat *stats = st->tab->v, *sink = &sc->sink;
	struct depth *depth = st->depth;
	struct frame *stack = st->stack;
	uint32_t sp = st->sp;

	for (uint32_t i = 0; i < n; i++) {
		const uint32_t name = codes[i] >> 1, is_exit = codes[i] & 1;
		const uint64_t t = ticks[i];
		struct frame *top = &stack[sp];
		struct depth *d = &depth[name];
		uint64_t dur, child, self;
		uint32_t in_new, counted;
		uintptr_t mask;
		struct tt_stat *s;

		if (__builtin_expect(is_exit & ((top->name != name) | (t < top->enter_ticks)), 0)) {
			st->sp = sp;
			event_slow(sc, st, th, name, t, true);
			sp = st->sp;
			continue;
		}
		dur = t - top->enter_ticks;
		child = top->child_ticks;
		self = dur > child ? dur - child : 0;
		in_new = (span == UINT64_MAX) | (t - lo < span);
		counted = is_exit & top->in;
		top[-1].child_ticks += dur & -(uint64_t)is_exit;
		top[1] = (struct frame){ name, in_new, t, 0, 0, 0, d->top, 0 };
		/* Masks, not ?:, which compilers turn back into branches here. */
		d->top = (top->prev & -is_exit) | ((sp + 1) & (is_exit - 1));
		sp = sp + 1 - 2 * is_exit;
		d->in += (in_new & (is_exit - 1)) - (top->in & -is_exit);
		mask = -(uintptr_t)counted;
		s = (struct tt_stat *)(((uintptr_t)&stats[name] & mask) | ((uintptr_t)sink & ~mask));
		record(s, dur, self, d->in == 0);
		stack[top->prev].same_ticks += dur & -(uint64_t)(counted & (d->in != 0));
	}
	st->sp = sp;
}

/*
 * Timed activations waiting to be recorded (pair_fast), one column per
 * field: entry k is name[k] >> 1 with bit 0 set if it is the outermost
 * activation of its name, dur[k] and self[k].
 */
struct closed_log {
	uint32_t name[BATCH];
	uint64_t dur[BATCH], self[BATCH];
};

static void record_log(struct tt_stat *stats, const struct closed_log *log, uint32_t k)
{
	for (uint32_t j = 0; j < k; j++)
		record(&stats[log->name[j] >> 1], log->dur[j], log->self[j], log->name[j] & 1);
}

/*
 * pair_fast() - pair_batch() for the common case: no time window (every
 * frame is inside) and no per-activation callback, which is summary's and
 * histogram's default. codes[] still hold site << 1 | kind: the site's name
 * is looked up here, with the index clamped onto the sentinel slot of
 * site_name, so that an unknown site costs no test of its own but joins the
 * one rare branch. The stack update is the same branch-free one as
 * pair_batch()'s; the activations it closes are appended to a log (written
 * every event, kept only for exits) and recorded in a second loop, so that
 * no enter pays for the statistics and neither loop branches on the kind of
 * event. Only the innermost open frame of each name is kept (with no
 * window, whether it exists is also whether one is open inside it; see
 * event_slow()).
 */
static void pair_fast(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
		      const struct tt_thread *th, const uint64_t *ticks, const uint32_t *codes,
		      uint32_t n)
{
	struct closed_log log;
	struct pair_tabs c;
	uint32_t sp = st->sp, k = 0;

	pair_tabs_load(&c, tr, st);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t site = codes[i] >> 1, is_exit = codes[i] & 1;
		const uint32_t name = c.site_name[site < c.nr_slots ? site : c.nr_slots];
		const uint64_t t = ticks[i];
		struct frame *top = &c.stack[sp];
		uint64_t dur, child;
		uint32_t prev;

		if (__builtin_expect((name == TT_NO_NAME) |
					     (is_exit & ((top->name != name) | (t < top->enter_ticks))),
				     0)) {
			/* Record what is logged first: event_slow() records directly,
			 * and a new name may move the tables. */
			record_log(c.stats, &log, k);
			k = 0;
			sp = pair_slow(sc, tr, st, th, &c, sp, site, name, t, is_exit);
			continue;
		}
		dur = t - top->enter_ticks;
		child = top->child_ticks;
		top[-1].child_ticks += dur & -(uint64_t)is_exit;
		top[1].name = name;
		top[1].in = 1;
		top[1].enter_ticks = t;
		top[1].child_ticks = 0;
		top[1].prev = c.depth[name].top;
		top[1].same_ticks = 0;
		/* An exit pops its name's innermost frame, an enter pushes one. */
		prev = top->prev;
		c.depth[name].top = (prev & -is_exit) | ((sp + 1) & (is_exit - 1));
		c.stack[prev].same_ticks += dur & -(uint64_t)(is_exit & (prev != 0));
		sp = sp + 1 - 2 * is_exit;
		log.name[k] = name << 1 | (prev == 0);
		log.dur[k] = dur;
		log.self[k] = dur > child ? dur - child : 0;
		k += is_exit;
	}
	st->sp = sp;
	record_log(c.stats, &log, k);
}

/* format/'s fast step, with PEXT in pair_fused_pext() (x86-64 only). */
#if defined(__x86_64__)
#define STEP_FAST(pext, ...) \
	((pext) ? recfmt_events_step_fast_pext(__VA_ARGS__) : recfmt_events_step_fast(__VA_ARGS__))
#else
#define STEP_FAST(pext, ...) ((void)(pext), recfmt_events_step_fast(__VA_ARGS__))
#endif

/*
 * pair_decode() - event i of m of a block, for the loops that decode as
 * they pair (pair_fused(), pair_cons()): format/'s fused decoder (FORMAT.md
 * §3.6, one LEB128 value per event in each column) on the loop's cursor
 * (*ids, *dl, *t), with no bounds check per event inside a run
 * (recfmt_events_fast_run(), which ends at *lim), recounted after any other
 * step. A fast step's site is within site_name (max_code): only the others
 * are clamped onto its sentinel slot, nr_slots. No test of i against m per
 * event: a run never passes m, so the end is found where a run ends.
 * pext: decode with recfmt_events_step_fast_pext() (pair_fused_pext()).
 * Return: 1 and the event's site, name and kind; 0 at the end (i == m); -1
 * if a column is malformed.
 */
static inline __attribute__((always_inline)) int
pair_decode(const uint8_t **ids, const uint8_t *ids_end, const uint8_t **dl,
	    const uint8_t *dl_end, uint64_t *t, uint32_t i, uint32_t m, uint32_t *lim,
	    const uint32_t *site_name, uint32_t nr_slots, const bool pext, uint32_t *site,
	    uint32_t *name, uint32_t *is_exit)
{
	uint64_t code;

	if (__builtin_expect(i == *lim, 0)) {
		if (i == m)
			return 0;
		*lim = i + recfmt_events_fast_run(*ids, ids_end, *dl, dl_end, m - i);
		if (*lim == i)
			goto checked;
	}
	if (__builtin_expect(STEP_FAST(pext, ids, dl, t, &code, 2 * nr_slots), 1)) {
		*site = (uint32_t)(code >> 1);
		*name = site_name[*site];
	} else {
checked:
		if (!recfmt_events_step(ids, ids_end, dl, dl_end, t, &code))
			return -1;
		*lim = i + 1;
		*site = (uint32_t)(code >> 1);
		*name = site_name[*site < nr_slots ? *site : nr_slots];
	}
	*is_exit = (uint32_t)code & 1;
	return 1;
}

/*
 * pair_fused() - pair_fast() the other way: m events decoded
 * from the block one at a time, inline, and paired with a branch on the
 * kind, with no arrays in between. When that branch predicts well (regular
 * call trees), this is the cheapest loop of all; when it does not, the
 * batch decoder and the branch-free loop win (see tt_scopes_block()).
 * pext: decode with recfmt_events_step_fast_pext() (pair_fused_pext()).
 * Return: 0, or -1 if a column is malformed (the iterator stops there).
 */
static inline __attribute__((always_inline)) int
pair_fused_body(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
		const struct tt_thread *th, struct recfmt_events_iter *it, uint32_t m,
		const bool pext)
{
	const uint8_t *ids = it->ids, *ids_end = it->ids_end;
	const uint8_t *dl = it->deltas, *dl_end = it->deltas_end;
	struct pair_tabs c;
	struct frame *top = &st->stack[st->sp];
	uint32_t sp = st->sp, i, lim = 0;
	uint64_t t = it->ticks;
	int rc = 0;

	pair_tabs_load(&c, tr, st);

	for (i = 0;; i++) {
		uint64_t dur, child;
		uint32_t site, is_exit, name, prev;
		int got = pair_decode(&ids, ids_end, &dl, dl_end, &t, i, m, &lim, c.site_name,
				      c.nr_slots, pext, &site, &name, &is_exit);

		if (__builtin_expect(got <= 0, 0)) {
			rc = got;
			break;
		}
		/* An unknown site's TT_NO_NAME is no frame's name: such an exit
		 * fails the match below, such an enter its own test. */
		if (!is_exit) {
			if (__builtin_expect(name == TT_NO_NAME, 0))
				goto slow;
			top[1].name = name;
			top[1].in = 1;
			top[1].enter_ticks = t;
			top[1].child_ticks = 0;
			top[1].same_ticks = 0;
			top[1].prev = c.depth[name].top;
			c.depth[name].top = ++sp;
			top++;
			continue;
		}
		if (__builtin_expect((top->name != name) | (t < top->enter_ticks), 0))
			goto slow;
		dur = t - top->enter_ticks;
		child = top->child_ticks;
		top[-1].child_ticks += dur;
		sp--;
		prev = top->prev;
		top--;
		c.depth[name].top = prev;
		/* The outermost activation of its name adds to the name's total,
		 * an inner one to the enclosing one's same_ticks: one select. */
		*(prev ? &c.stack[prev].same_ticks : &c.stats[name].total_ticks) += dur;
		record(&c.stats[name], dur, dur > child ? dur - child : 0, false);
		continue;
slow:
		sp = pair_slow(sc, tr, st, th, &c, sp, site, name, t, is_exit);
		top = &c.stack[sp];
	}
	st->sp = sp;
	it->ids = ids;
	it->deltas = dl;
	it->ticks = t;
	it->nr_left -= i;
	return rc;
}

/*
 * The loop in two builds: for x86-64 CPUs with a fast PEXT (format/,
 * recfmt_cpu_fast_pext()), compiled with BMI1/BMI2/LZCNT (one PEXT per
 * delta, LZCNT for the histogram's bucket, shifts by register that do not
 * go through CL), and the portable one. The same results either way.
 */
#if defined(__x86_64__)
static __attribute__((target("bmi,bmi2,lzcnt"))) int
pair_fused_pext(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
		const struct tt_thread *th, struct recfmt_events_iter *it, uint32_t m)
{
	return pair_fused_body(sc, tr, st, th, it, m, true);
}
#endif

#if defined(__x86_64__)
/*
 * The PEXT build when the CPU runs it fast, unless TRACETOOL_PORTABLE=1 asks
 * for the portable one (tests/golden runs both on every machine). Decided
 * once; walkers ask concurrently, all compute the same: relaxed atomics.
 */
static bool use_pext(void)
{
	static int cached = -1;
	int ok = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (ok < 0) {
		ok = recfmt_cpu_fast_pext() && !tt_portable();
		__atomic_store_n(&cached, ok, __ATOMIC_RELAXED);
	}
	return ok;
}
#endif

static int pair_fused(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
		      const struct tt_thread *th, struct recfmt_events_iter *it, uint32_t m)
{
#if defined(__x86_64__)
	if (use_pext())
		return pair_fused_pext(sc, tr, st, th, it, m);
#endif
	return pair_fused_body(sc, tr, st, th, it, m, false);
}

/*
 * pair_cons() - pair_fused() for a consumer of activations (tree, flame,
 * chrome...; scopes.h): m events decoded inline and paired with a branch on
 * the kind, the consumer's enter() and act() called directly, with the
 * window and the in-window counts kept exactly as event_slow() keeps them.
 * Everything else (a new site, an exit that does not close the top, a clock
 * going backwards) goes to event_slow(). The caller guarantees room for m
 * more frames, no overflow, no --max-duration, no compensation
 * and no counters on the thread.
 * pext: decode with recfmt_events_step_fast_pext() (pair_cons_pext(), as
 * pair_fused() does: on bench_analyzer's trace tree's CPU time 6 % less,
 * chrome's 3 %).
 * Return: 0, or -1 if a column is malformed (the iterator stops there).
 */
static inline __attribute__((always_inline)) int
pair_cons_body(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
	       const struct tt_thread *th, struct recfmt_events_iter *it, uint32_t m,
	       const bool pext)
{
	const struct tt_consumer *cons = sc->cons;
	void *const cs = st->cons_state;
	uint32_t (*const enter)(void *, uint32_t, uint32_t, uint64_t, bool) = cons->enter;
	const bool times = !cons->no_times;
	const uint64_t lo = sc->win_lo_ticks, span = sc->win_span_ticks;
	const uint8_t *ids = it->ids, *ids_end = it->ids_end;
	const uint8_t *dl = it->deltas, *dl_end = it->deltas_end;
	struct pair_tabs c;
	uint32_t sp = st->sp, i, lim = 0;
	uint64_t t = it->ticks;
	int rc = 0;

	pair_tabs_load(&c, tr, st);

	for (i = 0;; i++) {
		uint64_t dur, self;
		uint32_t site, is_exit, name, in;
		struct frame *top;
		bool outermost;
		int got = pair_decode(&ids, ids_end, &dl, dl_end, &t, i, m, &lim, c.site_name,
				      c.nr_slots, pext, &site, &name, &is_exit);

		if (__builtin_expect(got <= 0, 0)) {
			rc = got;
			break;
		}
		top = &c.stack[sp];
		if (__builtin_expect((name == TT_NO_NAME) |
					     (is_exit & ((top->name != name) | (t < top->enter_ticks))),
				     0)) {
			sp = pair_slow(sc, tr, st, th, &c, sp, site, name, t, is_exit);
			continue;
		}
		if (!is_exit) {
			in = span == UINT64_MAX || t - lo < span;
			top[1].name = name;
			top[1].in = in;
			top[1].enter_ticks = t;
			top[1].child_ticks = 0;
			top[1].prev = c.depth[name].top;
			top[1].same_ticks = 0;
			top[1].desc_fx = 0;
			c.depth[name].top = ++sp;
			c.depth[name].in += in;
			top[1].slot = enter ? enter(cs, top->slot, name, t, in) : 0;
			continue;
		}
		dur = t - top->enter_ticks;
		sp--;
		c.depth[name].top = top->prev;
		c.stack[sp].child_ticks += dur;
		if (!top->in)
			continue;
		self = dur > top->child_ticks ? dur - top->child_ticks : 0;
		outermost = --c.depth[name].in == 0;
		if (times)
			record(&c.stats[name], dur, self, outermost);
		if (!outermost)
			c.stack[top->prev].same_ticks += dur;
		const struct tt_activation a = {
			.th = th, .name = name, .depth = sp,
			.enter_ticks = top->enter_ticks, .exit_ticks = t,
			.dur_ticks = dur, .self_ticks = self, .outermost = outermost, .slot = top->slot,
		};

		cons->act(cs, &a);
	}
	st->sp = sp;
	it->ids = ids;
	it->deltas = dl;
	it->ticks = t;
	it->nr_left -= i;
	return rc;
}

/* pair_cons() in the two builds of pair_fused(). */
#if defined(__x86_64__)
static __attribute__((target("bmi,bmi2,lzcnt"))) int
pair_cons_pext(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
	       const struct tt_thread *th, struct recfmt_events_iter *it, uint32_t m)
{
	return pair_cons_body(sc, tr, st, th, it, m, true);
}
#endif

static int pair_cons(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
		     const struct tt_thread *th, struct recfmt_events_iter *it, uint32_t m)
{
#if defined(__x86_64__)
	if (use_pext())
		return pair_cons_pext(sc, tr, st, th, it, m);
#endif
	return pair_cons_body(sc, tr, st, th, it, m, false);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Which loop runs summary's batches: the batch decoder with the branch-free
 * pair_fast() wins when enters and exits follow no pattern (a random walk),
 * pair_fused() when the branch on the kind predicts well (a regular call
 * tree), and which is the case is a property of the traced program, not
 * knowable up front. So a thread times one full batch each way now and
 * then (a probe, decoding included) and runs the faster until the next.
 * A probe costs the slower loop's batch (on the program shape of
 * bench_analyzer, 2-3 times the fused one's), so probes grow rarer while
 * they confirm the choice: PROBE_EVERY full batches after a change, twice
 * the gap after each confirmation, up to PROBE_MAX (a change of the
 * program's shape is still seen within 1 M events). One probe against the
 * choice may be the machine's noise (a preemption inside the timed batch):
 * the next batch probes again, and only a second verdict against it
 * switches. Both loops compute exactly the same statistics; only the speed
 * depends on the choice.
 */
#define PROBE_EVERY 64
#define PROBE_MAX 1024

/* After a probe's two batches: the loop to run until the next one. */
static void probe_verdict(struct scope_thread *st)
{
	const bool fused = st->probe_ns[0] < st->probe_ns[1];

	if (fused == st->fused && !st->unsure) {
		st->probe_gap = st->probe_gap < PROBE_EVERY ? PROBE_EVERY
			      : st->probe_gap < PROBE_MAX   ? 2 * st->probe_gap
							      : PROBE_MAX;
	} else if (fused == st->fused || st->unsure) {
		st->fused = fused;
		st->unsure = false;
		st->probe_gap = PROBE_EVERY;
	} else {
		st->unsure = true; /* ask again at once */
		st->probe_gap = 0;
	}
	st->next_probe = st->nr_batches + st->probe_gap;
}

static void an_apply(struct tt_scopes *sc, struct tt_thread *th, const struct recfmt_annot *r);

/*
 * Counters (scopes.h, on_counters). flush() pairs the pending block, with
 * the values of a COUNTERS block (cols: column c of event i at
 * cols[c * n + i]) or without (NULL).
 */
static void flush(struct tt_scopes *sc, const uint64_t *cols)
{
	struct tt_trace *tr = sc->tr;
	uint64_t vals[TT_MAX_COUNTERS] = { 0 };
	struct scope_thread *st;
	struct tt_thread *th;
	uint32_t mask = 0;

	if (!sc->pend_thread)
		return;
	th = &tr->threads[sc->pend_thread - 1];
	st = th->user;
	sc->pend_thread = 0;
	sc->pend_next = false;
	if (cols)
		for (uint32_t c = 0; c < st->nr_cols; c++)
			if (st->col_ctr[c] != UINT32_MAX)
				mask |= 1u << st->col_ctr[c];
	cover_names(st, tr->nr_names);
	if (sc->cons && sc->cons->block)
		sc->cons->block(st->cons_state, sc->pend_first_enter);
	st->cur_vals = vals;
	st->cur_mask = mask;
	/* Its annotations, each before the event at its position. */
	struct recfmt_annots_iter ai;
	struct recfmt_error err = { 0 };
	struct recfmt_annot an;
	bool have = sc->pend_has_annots &&
		    recfmt_annots_open(&sc->pend_annots, &ai, &err) == RECFMT_OK &&
		    recfmt_annots_next(&ai, &an, &err) == RECFMT_OK;

	sc->pend_has_annots = false;
	for (uint32_t i = 0; i < sc->pend_n; i++) {
		if (mask)
			for (uint32_t c = 0; c < st->nr_cols; c++)
				if (st->col_ctr[c] != UINT32_MAX)
					vals[st->col_ctr[c]] = cols[(size_t)c * sc->pend_n + i];
		for (; have && an.pos <= i; have = recfmt_annots_next(&ai, &an, &err) == RECFMT_OK)
			an_apply(sc, th, &an);
		event_slow(sc, st, th, sc->pend_codes[i] >> 1, sc->pend_ticks[i],
			   sc->pend_codes[i] & 1);
	}
	for (; have; have = recfmt_annots_next(&ai, &an, &err) == RECFMT_OK)
		an_apply(sc, th, &an);
	st->cur_vals = NULL;
	st->cur_mask = 0;
}

/* A block of a thread with counters: decoded now, paired by flush(). */
static int defer_block(struct tt_scopes *sc, struct tt_trace *tr, struct tt_thread *th,
		       struct recfmt_events_iter *it)
{
	int n, rc = 0;

	flush(sc, NULL); /* none is pending: the record hook flushed it */
	if (it->nr_events > sc->pend_cap || !sc->pend_ticks) {
		/* Never NULL, even for a block of 0 events (NULL + 0 is undefined). */
		sc->pend_cap = it->nr_events > 64 ? it->nr_events : 64;
		sc->pend_ticks = tt_xrealloc(sc->pend_ticks, sc->pend_cap * sizeof(*sc->pend_ticks));
		sc->pend_codes = tt_xrealloc(sc->pend_codes, sc->pend_cap * sizeof(*sc->pend_codes));
	}
	sc->pend_n = 0;
	while ((n = recfmt_events_decode_batch(it, sc->pend_ticks + sc->pend_n,
					       sc->pend_codes + sc->pend_n,
					       it->nr_events - sc->pend_n)) > 0)
		sc->pend_n += (uint32_t)n;
	if (n < 0 || !recfmt_events_check_end(it))
		rc = -1; /* the events before the damage still count */
	for (uint32_t i = 0; i < sc->pend_n; i++)
		sc->pend_codes[i] = tt_trace_site_name(tr, sc->pend_codes[i] >> 1) << 1 |
				    (sc->pend_codes[i] & 1);
	sc->pend_thread = (uint32_t)(th - tr->threads) + 1;
	sc->pend_first_enter = tr->enters_before;
	/* A damaged block's counters cannot be matched to its events. */
	sc->pend_next = rc == 0;
	/* Annotations positioned in it (events.h, next_annots): applied by
	 * flush(), in the same frame (before the walk leaves it). */
	if (tr->has_next_annots && !tr->annots_taken) {
		struct recfmt_annots_iter ai;
		struct recfmt_error err = { 0 };

		if (recfmt_annots_open(&tr->next_annots, &ai, &err) == RECFMT_OK &&
		    ai.thread == th->serial && ai.nr_events == it->nr_events && ai.nr_events) {
			sc->pend_annots = tr->next_annots;
			sc->pend_has_annots = true;
			tr->annots_taken = true;
		}
	}
	return rc;
}

static uint32_t counter_index(struct tt_scopes *sc, const char *name, uint32_t bytes)
{
	/* The name as reports show it (emit.c: a NUL, a control character or
	 * ill-formed UTF-8 becomes U+FFFD), so that names shown alike are one. */
	char *shown = tt_emit_clean(name, bytes);

	for (uint32_t g = 0; g < sc->nr_ctr; g++)
		if (strcmp(sc->ctr_names[g], shown) == 0) {
			free(shown);
			return g;
		}
	if (sc->nr_ctr == TT_MAX_COUNTERS) {
		free(shown);
		return UINT32_MAX;
	}
	sc->ctr_names[sc->nr_ctr] = shown;
	return sc->nr_ctr++;
}

/* A COUNTER_SET: the union of counter names on every replica (so that the
 * indices agree), the thread's columns on the replica that pairs it. */
static void counter_set(struct tt_scopes *sc, struct tt_trace *tr, const struct recfmt_record *rec)
{
	struct recfmt_error err = { 0 };
	struct recfmt_counter_set cs;
	uint32_t cols[TT_MAX_COUNTERS], nr = 0;
	struct scope_thread *st;
	struct tt_thread *th;

	if (recfmt_decode_counter_set(rec, &cs, &err) != RECFMT_OK)
		return;
	for (uint32_t i = 0; i < cs.nr; i++)
		if (cs.c[i].flags & RECFMT_COUNTER_RECORDED)
			cols[nr++] = counter_index(sc, cs.c[i].name, cs.c[i].name_bytes);
	th = tt_trace_thread(tr, cs.thread);
	tt_trace_see_thread(tr, th); /* before thread_state(), on every replica */
	if (tr->nr_walkers > 1 && (uint32_t)(th - tr->threads) % tr->nr_walkers != tr->walker)
		return; /* another replica pairs it (events.h) */
	st = thread_state(sc, th);
	if (st->skip)
		return;
	memcpy(st->col_ctr, cols, nr * sizeof(*cols));
	st->nr_cols = nr;
	if (nr)
		counters_on(st);
}

/* ---------------------------------------------------------------------
 * Annotations (FORMAT.md §3.17-§3.18, docs/ANALYZER.md "Annotations").
 */

struct an_key {
	const struct tt_scopes *sc;
	uint32_t key;
};

static bool an_eq(const void *ctx, uint32_t k)
{
	const struct an_key *a = ctx;

	return a->sc->an_keys[k] == a->key;
}

/* The index of annotation name key in an_keys/an_names, or TT_HMAP_NONE. */
static uint32_t an_find(const struct tt_scopes *sc, uint32_t key)
{
	const struct an_key a = { sc, key };

	return tt_hmap_find(&sc->an_map, tt_hash_u64(key), an_eq, &a);
}

/* Defines (or renames: the latest record wins) annotation name key. */
static void an_define(struct tt_scopes *sc, uint32_t key, char *name)
{
	uint32_t k = an_find(sc, key);

	if (k == TT_HMAP_NONE) {
		if (sc->nr_an == sc->cap_an) {
			sc->cap_an = sc->cap_an ? 2 * sc->cap_an : 32;
			sc->an_keys = tt_xrealloc(sc->an_keys, sc->cap_an * sizeof(*sc->an_keys));
			sc->an_names = tt_xrealloc(sc->an_names, sc->cap_an * sizeof(*sc->an_names));
		}
		k = sc->nr_an++;
		tt_hmap_put(&sc->an_map, tt_hash_u64(key), k);
		sc->an_keys[k] = key;
		sc->an_names[k] = NULL;
	}
	free(sc->an_names[k]);
	sc->an_names[k] = name;
}

/* The name of an annotation's name id; a never defined one (its frame was
 * lost) is named by its number, "track#5" (FORMAT.md §3.17). */
static const char *an_name(struct tt_scopes *sc, uint32_t name_kind, uint32_t id)
{
	static const char *const what[] = { "annotation", "track", "instant", "key", "flow" };
	const uint32_t key = name_kind << 28 | (id & RECFMT_MAX_ANNOT_NAME_ID);
	const uint32_t k = an_find(sc, key);
	char buf[48];

	if (k != TT_HMAP_NONE)
		return sc->an_names[k];
	snprintf(buf, sizeof(buf), "%s#%u", what[name_kind < 5 ? name_kind : 0], id);
	an_define(sc, key, tt_xstrndup(buf, strlen(buf)));
	return an_name(sc, name_kind, id);
}

/* A decoded annotation to the engine's form. */
static void an_apply(struct tt_scopes *sc, struct tt_thread *th, const struct recfmt_annot *r)
{
	static const enum tt_annot_kind kinds[] = {
		[RECFMT_ANNOT_VALUE_I64] = TT_ANNOT_VALUE,
		[RECFMT_ANNOT_VALUE_F64] = TT_ANNOT_VALUE,
		[RECFMT_ANNOT_INSTANT] = TT_ANNOT_INSTANT,
		[RECFMT_ANNOT_MESSAGE] = TT_ANNOT_MESSAGE,
		[RECFMT_ANNOT_ARG] = TT_ANNOT_ARG,
		[RECFMT_ANNOT_FLOW_BEGIN] = TT_ANNOT_FLOW_BEGIN,
		[RECFMT_ANNOT_FLOW_STEP] = TT_ANNOT_FLOW_STEP,
		[RECFMT_ANNOT_FLOW_END] = TT_ANNOT_FLOW_END,
	};
	struct tt_annot a = { 0 };

	if (r->kind < 1 || r->kind > RECFMT_ANNOT_KIND_MAX)
		return; /* the decoder refuses them */
	a.kind = kinds[r->kind];
	a.ticks = r->ticks;
	if (r->kind == RECFMT_ANNOT_MESSAGE) {
		a.name = r->text ? r->text : "";
		a.name_bytes = r->text ? r->text_bytes : 0;
	} else {
		a.name = an_name(sc, recfmt_annot_name_kind(r->kind), r->name_id);
		a.name_id = r->name_id;
		a.name_bytes = (uint32_t)strlen(a.name);
	}
	a.is_double = r->kind == RECFMT_ANNOT_VALUE_F64;
	a.i = r->i64;
	a.d = r->f64;
	a.id = r->id;
	tt_scopes_annot(sc, th, &a);
}

/* A damaged annotation record: the walk (events.c) counts and reports it;
 * the engine applies the rows before the damage. */
static void an_damaged(struct tt_scopes *sc)
{
	sc->nr_bad_annots++;
}

/*
 * The block function's side: when an ANNOTS record of this thread and
 * block follows it (events.h, next_annots), the block is paired by the
 * book with each annotation applied between the events at its position.
 * Return: 1 if it did (*rc: the block's result), 0 if there is none.
 */
static int pair_annotated(struct tt_scopes *sc, struct tt_trace *tr, struct scope_thread *st,
			  struct tt_thread *th, struct recfmt_events_iter *it, int *rc)
{
	struct recfmt_annots_iter ai;
	struct recfmt_error err = { 0 };
	struct recfmt_annot an;
	uint64_t ticks[BATCH];
	uint32_t codes[BATCH], i = 0;
	bool have;
	int n;

	if (!tr->has_next_annots || tr->annots_taken)
		return 0;
	if (recfmt_annots_open(&tr->next_annots, &ai, &err) != RECFMT_OK ||
	    ai.thread != th->serial || ai.nr_events != it->nr_events || !ai.nr_events)
		return 0; /* the record hook judges it */
	tr->annots_taken = true;
	have = recfmt_annots_next(&ai, &an, &err) == RECFMT_OK;
	while ((n = recfmt_events_decode_batch(it, ticks, codes, BATCH)) > 0) {
		for (int k = 0; k < n; k++)
			codes[k] = tt_trace_site_name(tr, codes[k] >> 1) << 1 | (codes[k] & 1);
		cover_names(st, tr->nr_names);
		for (int k = 0; k < n; k++, i++) {
			for (; have && an.pos <= i; have = recfmt_annots_next(&ai, &an, &err) == RECFMT_OK)
				an_apply(sc, th, &an);
			event_slow(sc, st, th, codes[k] >> 1, ticks[k], codes[k] & 1);
		}
	}
	*rc = n == 0 && recfmt_events_check_end(it) ? 0 : -1;
	/* After the last event (pos == nr_events); a damaged block's events
	 * stop early, and the annotations after them still come in order. */
	for (; have; have = recfmt_annots_next(&ai, &an, &err) == RECFMT_OK)
		an_apply(sc, th, &an);
	if (err.status != RECFMT_OK)
		an_damaged(sc);
	shrink_stack(st);
	return 1;
}

/* The annotation records through the record hook: names on every replica;
 * a stand-alone ANNOTS record (FORMAT.md §3.18) on the replica that pairs
 * its thread (events.h); one that follows its block was applied by the
 * block function (or annotates nothing: FORMAT.md says to ignore it). */
static void annot_record(struct tt_scopes *sc, struct tt_trace *tr, const struct recfmt_record *rec)
{
	struct recfmt_error err = { 0 };

	if (rec->type == RECFMT_ANNOT_NAME) {
		struct recfmt_annot_name nm;

		if (recfmt_decode_annot_name(rec, &nm, &err) != RECFMT_OK ||
		    nm.kind < RECFMT_NAME_TRACK || nm.kind > RECFMT_NAME_FLOW)
			return;
		an_define(sc, nm.kind << 28 | nm.id, tt_name_shown(nm.name, nm.name_bytes));
		return;
	}
	if (rec->type == RECFMT_ANNOTS) {
		struct recfmt_annots_iter ai;
		struct recfmt_annot an;
		struct tt_thread *th;
		enum recfmt_status st;

		if (recfmt_annots_open(rec, &ai, &err) != RECFMT_OK)
			return;
		if (ai.nr_events)
			return;
		th = tt_trace_thread(tr, ai.thread);
		tt_trace_see_thread(tr, th);
		if (tr->nr_walkers > 1 && (uint32_t)(th - tr->threads) % tr->nr_walkers != tr->walker)
			return; /* another replica pairs it (events.h) */
		while ((st = recfmt_annots_next(&ai, &an, &err)) == RECFMT_OK)
			an_apply(sc, th, &an);
		if (st != RECFMT_END_OF_INPUT)
			an_damaged(sc);
	}
}

void tt_scopes_record(void *ctx, struct tt_trace *tr, const struct recfmt_record *rec,
		      uint64_t frame_index, uint64_t frame_offset)
{
	struct tt_scopes *sc = ctx;
	struct recfmt_error err = { 0 };
	struct recfmt_counters cb;
	struct scope_thread *st;

	(void)frame_offset;
	if (rec->type == RECFMT_EVENTS) {
		/* Flush now, before the walker looks the block's thread up: that
		 * may grow tr->threads. defer_block() keeps the new one pending. */
		flush(sc, NULL);
		sc->pend_frame = frame_index;
		return;
	}
	if (rec->type != RECFMT_COUNTERS) {
		flush(sc, NULL);
		tr->pos++; /* past the pending block (TT_POS_STEP, events.h) */
		if (rec->type == RECFMT_COUNTER_SET && sc->on_counters)
			counter_set(sc, tr, rec);
		else
			annot_record(sc, tr, rec);
		return;
	}
	/* A COUNTERS block attaches to the pending block only as the very next
	 * record of its frame, for its thread, with its number of events and
	 * the columns of the thread's COUNTER_SET; else it is ignored. On the
	 * replicas that do not pair the thread, nothing is pending. */
	if (!sc->pend_thread || !sc->pend_next || sc->pend_frame != frame_index ||
	    recfmt_counters_open(rec, &cb, &err) != RECFMT_OK) {
		flush(sc, NULL);
		return;
	}
	st = tr->threads[sc->pend_thread - 1].user;
	if (cb.thread != tr->threads[sc->pend_thread - 1].serial || cb.nr_events != sc->pend_n ||
	    cb.nr_columns != st->nr_cols) {
		flush(sc, NULL);
		return;
	}
	if ((size_t)cb.nr_events * cb.nr_columns > sc->pend_vals_cap) {
		sc->pend_vals_cap = (size_t)cb.nr_events * cb.nr_columns;
		sc->pend_vals = tt_xrealloc(sc->pend_vals, sc->pend_vals_cap * sizeof(*sc->pend_vals));
	}
	if (recfmt_counters_decode(&cb, sc->pend_vals, rec, &err) != RECFMT_OK) {
		flush(sc, NULL);
		return;
	}
	flush(sc, sc->pend_vals);
}

/* A probe cost of the file (ps) in 1/65536 tick of its clock. */
static uint64_t ps_to_fx(const struct tt_trace *tr, uint64_t ps)
{
	uint64_t tps = tr->hdr.clock == RECFMT_CLOCK_MONOTONIC || !tr->hdr.ticks_per_second
		? 1000000000ull : tr->hdr.ticks_per_second;
	unsigned __int128 fx = (unsigned __int128)ps * tps * 65536u / 1000000000000ull;

	return fx > UINT32_MAX ? UINT32_MAX : (uint64_t)fx; /* over 65536 ticks: absurd */
}

/*
 * --compensate: decided once, before the first event is paired, from the
 * PROBE_COST record read so far (librec writes it in frame 0, before any
 * EVENTS block); a file without one is not compensated (the report says so).
 */
static void compensate_begin(struct tt_scopes *sc, const struct tt_trace *tr)
{
	const struct recfmt_probe_cost *pc = &tr->probe_cost;

	sc->comp_checked = true;
	if (!tr->has_probe_cost)
		return;
	sc->comp_fx[0] = ps_to_fx(tr, pc->scope_ps);
	sc->comp_fx[1] = ps_to_fx(tr, pc->hook_ps);
	sc->comp_inner_fx[0] = ps_to_fx(tr, pc->scope_inner_ps);
	sc->comp_inner_fx[1] = ps_to_fx(tr, pc->hook_inner_ps);
	sc->comp_applied = true;
}

int tt_scopes_block(void *ctx, struct tt_trace *tr, struct tt_thread *th,
		    struct recfmt_events_iter *it)
{
	struct tt_scopes *sc = ctx;
	struct scope_thread *st;
	uint64_t ticks[BATCH];
	uint32_t codes[BATCH];
	int n;

	if (sc->compensate && !sc->comp_checked)
		compensate_begin(sc, tr);
	st = thread_state(sc, th);

	if (st->skip)
		return 0;
	if (st->has_ctr && sc->on_counters)
		return defer_block(sc, tr, th, it);
	if (sc->cons && sc->cons->block)
		sc->cons->block(st->cons_state, tr->enters_before);
	if (pair_annotated(sc, tr, st, th, it, &n))
		return n;
	for (;;) {
		const uint32_t m = it->nr_left < BATCH ? it->nr_left : BATCH;
		const bool fast = m && fast_mode(sc) && tr->nr_site_slots && !st->overflow &&
				  !st->nr_args &&
				  st->sp + m <= MAX_DEPTH && sc->max_dur_ticks == UINT64_MAX &&
				  reserve_stack(sc, st, st->sp + m);
		/* 0, 1: the probe's batches (probe_verdict()); 2: the chosen loop. */
		const uint32_t b = fast && m == BATCH ? st->nr_batches++ : UINT32_MAX;
		const uint32_t phase = b == st->next_probe ? 0 : b == st->next_probe + 1 ? 1 : 2;
		const uint64_t t0 = phase < 2 ? now_ns() : 0;

		if (m && sc->cons && !sc->comp_applied && !st->has_ctr &&
		    !st->overflow && !st->nr_args && sc->max_dur_ticks == UINT64_MAX && tr->nr_site_slots &&
		    st->sp + m <= MAX_DEPTH && reserve_stack(sc, st, st->sp + m)) {
			cover_names(st, tr->nr_names);
			if (pair_cons(sc, tr, st, th, it, m) < 0)
				return -1;
			continue;
		}
		if (fast && (phase == 0 || (phase >= 2 && st->fused))) {
			cover_names(st, tr->nr_names);
			if (pair_fused(sc, tr, st, th, it, m) < 0)
				return -1;
			if (phase == 0)
				st->probe_ns[0] = now_ns() - t0;
			continue;
		}
		n = recfmt_events_decode_batch(it, ticks, codes, BATCH);
		if (n <= 0)
			break;
		const uint32_t *site_name = tr->site_name;
		uint32_t nr_slots = tr->nr_site_slots;

		if (fast) {
			cover_names(st, tr->nr_names);
			pair_fast(sc, tr, st, th, ticks, codes, (uint32_t)n);
			if (phase == 1) {
				st->probe_ns[1] = now_ns() - t0;
				probe_verdict(st);
			}
			continue;
		}
		/* Sites to names for the whole batch, so that the pairing loop
		 * meets no new name (and no table growth). */
		for (int i = 0; i < n; i++) {
			uint32_t site = codes[i] >> 1, name;

			if (__builtin_expect(site < nr_slots && site_name[site] != TT_NO_NAME, 1))
				name = site_name[site];
			else {
				name = tt_trace_site_name_slow(tr, site);
				/* It may have grown (moved) the table. */
				site_name = tr->site_name;
				nr_slots = tr->nr_site_slots;
			}
			codes[i] = name << 1 | (codes[i] & 1);
		}
		cover_names(st, tr->nr_names);
		/* --max-duration is checked by event_slow() only. */
		if (fast_mode(sc) || sc->cons || sc->comp_applied || st->overflow || st->nr_args ||
		    st->sp + (uint32_t)n > MAX_DEPTH ||
		    sc->max_dur_ticks != UINT64_MAX || !reserve_stack(sc, st, st->sp + (uint32_t)n)) {
			for (int i = 0; i < n; i++)
				event_slow(sc, st, th, codes[i] >> 1, ticks[i], codes[i] & 1);
			continue;
		}
		pair_batch(sc, st, th, ticks, codes, (uint32_t)n);
	}
	shrink_stack(st);
	return n == 0 && recfmt_events_check_end(it) ? 0 : -1;
}

void tt_scopes_annot(struct tt_scopes *sc, struct tt_thread *th, struct tt_annot *a)
{
	struct scope_thread *st = thread_state(sc, th);
	/* The innermost open frame, if it is stored (an enter beyond the
	 * depth limit is open but not stored: nothing to bind to). */
	const uint32_t depth = st->overflow ? 0 : st->sp;

	if (st->skip)
		return;
	sc->nr_annots++;
	a->in_window = sc->win_span_ticks == UINT64_MAX ||
		       a->ticks - sc->win_lo_ticks < sc->win_span_ticks;
	if (a->kind == TT_ANNOT_ARG || a->kind >= TT_ANNOT_FLOW_BEGIN)
		sc->nr_unbound += !depth;
	if (a->kind == TT_ANNOT_ARG && depth && sc->on_arg) {
		uint32_t key = 0, k;

		while (key < sc->nr_arg_keys && (strlen(sc->arg_keys[key]) != a->name_bytes ||
						 memcmp(sc->arg_keys[key], a->name, a->name_bytes)))
			key++;
		if (key < sc->nr_arg_keys) {
			/* Set twice in one frame: the later value wins. */
			for (k = st->nr_args; k && st->args[k - 1].sp == depth; k--)
				if (st->args[k - 1].key == key)
					break;
			if (!k || st->args[k - 1].sp != depth) {
				if (st->nr_args == st->cap_args) {
					st->cap_args = st->cap_args ? 2 * st->cap_args : 8;
					st->args = tt_xrealloc(st->args,
							       st->cap_args * sizeof(*st->args));
				}
				k = ++st->nr_args;
				st->args[k - 1].sp = depth;
				st->args[k - 1].key = key;
			}
			st->args[k - 1].v = a->i;
		}
	}
	if (sc->cons && sc->cons->annot)
		sc->cons->annot(st->cons_state, st->stack[depth].slot, depth, a);
}

void tt_scopes_finish(struct tt_scopes *sc)
{
	struct tt_trace *tr = sc->tr;

	tr->pos = TT_POS_END;
	flush(sc, NULL);
	for (uint32_t i = 0; i < tr->nr_threads; i++) {
		struct scope_thread *st = tr->threads[i].user;

		if (!st || st->skip)
			continue;
		tr->pos = TT_POS_END + 1 + i;
		/* Enters still open when the file ended: the thread was inside. */
		while (st->sp)
			drop_top(sc, st, tr->max_ticks, TT_FRAME_OPEN_AT_END);
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
		free(st->base);
		free(st->depth);
		free(st->ctr);
		free(st->ctr_mask);
		free(st->args);
		tt_stats_fini(&st->own);
		free(st);
		tr->threads[i].user = NULL;
	}
	tt_stats_fini(&sc->global);
	tt_stats_hist_free(&sc->sink);
	for (uint32_t g = 0; g < sc->nr_ctr; g++)
		free(sc->ctr_names[g]);
	free(sc->pend_ticks);
	free(sc->pend_codes);
	free(sc->pend_vals);
	for (uint32_t k = 0; k < sc->nr_an; k++)
		free(sc->an_names[k]);
	free(sc->an_keys);
	free(sc->an_names);
	tt_hmap_fini(&sc->an_map);
	sc->an_keys = NULL;
	sc->an_names = NULL;
	sc->nr_an = sc->cap_an = 0;
	sc->nr_ctr = 0;
	sc->pend_ticks = sc->pend_vals = NULL;
	sc->pend_codes = NULL;
}
