/* SPDX-License-Identifier: MIT */
/*
 * probe_cost.c - what a probe adds to the activation around it, measured
 * by the writer thread at start (FORMAT.md §3.16, PROBE_COST): for
 * TRACE_SCOPE (rec__enter + rec__exit) and for the -finstrument-functions
 * hooks, the time of a loop of empty probe pairs minus the same loop empty,
 * per pair; and the part of it between the pair's own two timestamps
 * (which the child's activation already holds). The probes run on a
 * scratch thread state with its own small ring, set as the writer's
 * rec__self for the measurement only: nothing reaches the real rings, the
 * site registry or the file but the result. The site and the hook's
 * function are pre-registered in the scratch state (a site id, a full
 * function cache), so only the fast paths run. Cost: 2 x 8 x 512 pairs
 * and the empty loops, a few hundred microseconds on the writer thread,
 * which the TSC calibration waits 5 ms for anyway.
 */
#include "rec_internal.h"

#include <string.h>
#include <sys/mman.h>

#define NOINSTR __attribute__((no_instrument_function))
#define BATCH 512u	 /* pairs per timed batch: 1024 events */
#define BATCHES 8u	 /* the fastest batch wins (least disturbed) */
#define RING_EVENTS 2048u /* > 2 * BATCH + 2: the scratch ring never fills */

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

NOINSTR static uint64_t now(bool use_tsc)
{
	return use_tsc ? rec__rdtsc() : rec__clock_now(false);
}

/* The stamps' spacing (exit - enter) summed over one batch of the scratch ring. */
NOINSTR static uint64_t inner_sum(const struct rec__thread *t)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i + 1 < 2 * BATCH; i += 2)
		sum += rec__own_slots(t)[i + 1].ticks - rec__own_slots(t)[i].ticks;
	return sum;
}

NOINSTR static void reset(struct rec__thread *t)
{
	t->ring.p.head = 0;
	t->ring.tail = 0;
	t->ring.p.reserved = 0;
	t->own.fdepth = 0;
	t->ring.p.limit = RING_EVENTS;
}

/*
 * kind 0: empty loop; 1: TRACE_SCOPE's pair; 2: the hooks' pair. Return:
 * the batch's ticks; *inner: the sum of exit - enter stamps of its pairs.
 */
NOINSTR static uint64_t run_batch(struct rec__thread *t, int kind, struct rec__site *site,
				  void *fn, uint64_t *inner)
{
	uint64_t t0, t1;

	reset(t);
	t0 = now(t->ring.p.use_tsc);
	for (uint32_t i = 0; i < BATCH; i++) {
		if (kind == 1) {
			/* What TRACE_SCOPE runs: rec.h's inline probe. */
			struct rec__scope s = rec__enter_if(site);

			rec__exit_if(&s);
		} else if (kind == 2) {
			__cyg_profile_func_enter(fn, NULL);
			__cyg_profile_func_exit(fn, NULL);
		}
		__asm__ volatile("" ::: "memory");
	}
	t1 = now(t->ring.p.use_tsc);
	*inner = kind && t->ring.p.head == 2 * BATCH ? inner_sum(t) : 0;
	return t1 - t0;
}

/*
 * rec__probe_cost_measure() - on the writer thread (rec__self NULL,
 * rec__in_librec set): fills *out in thousandths of a tick per pair.
 * Return: false if the scratch state could not be mapped (*out is 0s).
 */
NOINSTR bool rec__probe_cost_measure(bool use_tsc, struct rec__probe_cost_mticks *out)
{
	struct rec__site site = { .id = 1, .line = 0, .name = "probe_cost", .file = __FILE__ };
	void *fn = (void *)(uintptr_t)&rec__probe_cost_measure;
	size_t bytes = sizeof(struct rec__thread) + RING_EVENTS * sizeof(struct recfmt_event);
	struct rec__thread *saved = rec__self, *t;
	uint8_t in_librec;
	uint64_t best[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX }, best_inner[3] = { 0 };

	memset(out, 0, sizeof(*out));
	t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return false;
	t->ring.p.events = (struct rec__event *)(t + 1);
	t->ring.p.mask = RING_EVENTS - 1;
	t->ring.p.use_tsc = use_tsc;
	t->own.hooks_ready = REC__HOOKS_READY; /* the cache is set below; the stack is written as used */
	for (uint32_t i = 0; i < REC__FCACHE_SLOTS; i++) {
		t->hk.fcache[i].fn = (uintptr_t)fn;
		t->hk.fcache[i].id = 1;
	}
	/*
	 * The writer runs with rec__in_librec set; cleared for the
	 * measurement, so that a probe that leaves the inline path (the
	 * CLOCK_MONOTONIC clock) takes probe.c's path and not the
	 * re-entry drop. The writer blocks every signal: no handler can
	 * run in between.
	 */
	in_librec = rec__in_librec;
	rec__in_librec = 0;
	rec__set_self(t);
	for (uint32_t b = 0; b < BATCHES; b++) {
		for (int kind = 0; kind < 3; kind++) {
			uint64_t inner, ticks = run_batch(t, kind, &site, fn, &inner);

			if (ticks < best[kind]) {
				best[kind] = ticks;
				best_inner[kind] = inner;
			}
		}
	}
	rec__set_self(saved);
	rec__in_librec = in_librec;
	/* The pair's cost: its loop minus the empty loop (never below 0). */
	for (int kind = 1; kind < 3; kind++) {
		uint64_t pair = best[kind] > best[0] ? best[kind] - best[0] : 0;
		uint64_t *cost = kind == 1 ? &out->scope : &out->hook;
		uint64_t *inner = kind == 1 ? &out->scope_inner : &out->hook_inner;

		*cost = pair * 1000 / BATCH;
		*inner = best_inner[kind] * 1000 / BATCH;
		if (*inner > *cost)
			*inner = *cost;
	}
	munmap(t, bytes);
	return true;
}
