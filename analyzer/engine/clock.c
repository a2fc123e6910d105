/* SPDX-License-Identifier: MIT */
/*
 * clock.c - the trace's tick clock (FORMAT.md §3.3): ticks to nanoseconds
 * as an exact ratio from the file's header and SYNC points, and back (see
 * events.h, struct tt_clock). It reads the walk's state; it owns none.
 */
#include "engine/events.h"

uint64_t tt_clock_ns(const struct tt_clock *c, uint64_t ticks)
{
	unsigned __int128 x;

	if (c->num == c->den) /* ticks are ns (REC_CLOCK=monotonic) */
		return ticks;
	x = (unsigned __int128)ticks * c->num + c->den / 2;
	if (c->den && ticks < (1ull << 52) && c->num < (1ull << 52)) {
		/*
		 * The 128-bit division below is a library call, and chrome
		 * converts two times an activation: estimate the quotient in
		 * floating point (a multiplication by the ratio, kept per
		 * thread), then make it exact. v is floor(x / den) iff
		 * v * den <= x < (v + 1) * den; below 2^50 the estimate is off
		 * by less than one, so one step up or down settles it, else the
		 * division does.
		 */
		static __thread uint64_t ratio_num, ratio_den;
		static __thread double ratio; /* ratio_num / ratio_den: a walk has one clock */
		double est;

		if (c->num != ratio_num || c->den != ratio_den) {
			ratio_num = c->num;
			ratio_den = c->den;
			ratio = (double)c->num / (double)c->den;
		}
		est = (double)ticks * ratio + 0.5;

		if (est < (double)(1ull << 50)) {
			uint64_t v = (uint64_t)est;
			unsigned __int128 lo = (unsigned __int128)v * c->den;

			if (lo > x) {
				v--;
				lo -= c->den;
			} else if (x - lo >= c->den) {
				v++;
				lo += c->den;
			}
			if (lo <= x && x - lo < c->den)
				return v;
		}
	}
	x /= c->den;
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

int64_t tt_clock_rel_ns(const struct tt_clock *c, uint64_t abs_ticks)
{
	uint64_t ns;

	if (abs_ticks >= c->start_ticks) {
		ns = tt_clock_ns(c, abs_ticks - c->start_ticks);
		return ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
	}
	ns = tt_clock_ns(c, c->start_ticks - abs_ticks);
	return ns > INT64_MAX ? INT64_MIN : -(int64_t)ns;
}

void tt_clock_fx_init(struct tt_clock_fx *f, const struct tt_clock *c)
{
	const uint64_t num = c->num, den = c->den;

	f->c = *c;
	f->hi = f->lo = f->half = f->tlim = 0; /* tlim 0: the exact way */
	if (!den)
		return;
	f->hi = num / den;
	f->lo = (uint64_t)(((unsigned __int128)(num % den) << 64) / den);
	f->half = (uint64_t)(((unsigned __int128)(den / 2) << 64) / den);
	/* t * (hi + 1) < 2^63: the result and its sum neither wrap nor pass INT64_MAX */
	f->tlim = f->hi >> 62 ? 0 : ((uint64_t)1 << 63) / (f->hi + 1);
}

uint64_t tt_clock_abs_ticks(const struct tt_clock *c, uint64_t rel_ns)
{
	/* The smallest tick count whose rounded ns is >= rel_ns, by bisection
	 * (tt_clock_ns is monotonic): 64 steps whatever the ratio. Estimating
	 * rel_ns * den / num and stepping by one tick from there took ~den/num
	 * steps, billions for a damaged file's absurd clock (found by fuzzing). */
	uint64_t lo = 0, hi = UINT64_MAX - c->start_ticks;

	if (tt_clock_ns(c, hi) < rel_ns)
		return UINT64_MAX;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (tt_clock_ns(c, mid) >= rel_ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	return c->start_ticks + lo;
}

void tt_trace_clock(const struct tt_trace *tr, struct tt_clock *c)
{
	c->start_ticks = tr->hdr.start_ticks;
	if (tr->hdr.clock == RECFMT_CLOCK_MONOTONIC) {
		c->num = c->den = 1;
	} else if (tr->nr_syncs >= 2 && tr->last_sync.ticks > tr->first_sync.ticks &&
		   tr->last_sync.mono_ns > tr->first_sync.mono_ns) {
		c->num = tr->last_sync.mono_ns - tr->first_sync.mono_ns;
		c->den = tr->last_sync.ticks - tr->first_sync.ticks;
	} else {
		c->num = 1000000000ull;
		c->den = tr->hdr.ticks_per_second ? tr->hdr.ticks_per_second : 1000000000ull;
	}
}
