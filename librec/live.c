/* SPDX-License-Identifier: MIT */
/*
 * live.c - REC_LIVE=DUR: every DUR, one report on stderr of where each
 * thread spent the last interval: its top scopes by time inside the
 * interval, their share of it and their calls. Everything runs on the
 * writer thread, from the events it drains (writer.c calls
 * rec__live_feed() before it releases the slots): the probe path is not
 * touched. It owns a small pairing state per thread (a bounded stack and a
 * bounded table of sites); it does not own the rings or the file.
 *
 * Rules (README, "Live report"): an interval is [previous cut, this cut),
 * cut by a clock read after the writer's pass in which the report falls
 * due, so every event drained in that pass is before it. A scope's time
 * is the part of its activations inside the interval, counted once for a
 * recursive scope (its outermost activation); an activation still open at
 * the cut counts up to the cut, and the rest goes to the next interval.
 * Calls are activations that started in the interval. An event drained
 * late (stamped before the previous cut) counts from that cut. Memory is
 * bounded: deeper than MAX_DEPTH, and sites beyond MAX_SITES per thread,
 * go to "(other)". The final, partial interval at rec_stop() or exit is
 * not reported.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 256u
#define MAX_SITES 256u /* power of two */
#define TOP_N 5u
#define OTHER_SLOT MAX_SITES /* the "(other)" entry */

struct live_site {
	uint32_t site;	/* 0: free slot */
	uint32_t open;	/* activations on the stack */
	uint32_t mark;	/* report number, to count an open site once at a cut */
	uint64_t ticks; /* inside the current interval */
	uint64_t calls;
};

struct live_frame {
	uint32_t slot; /* into sites[] */
	uint32_t site;
	uint64_t enter;
};

struct rec__live_thread {
	struct rec__thread *t; /* NULL once the thread is gone */
	uint32_t serial;
	char label[REC__MAX_NAME_BYTES + 16];
	struct live_frame stack[MAX_DEPTH];
	uint32_t depth;
	uint64_t overflow; /* enters not on the stack (too deep) */
	struct live_site sites[MAX_SITES + 1];
	struct rec__live_thread *next;
};

struct rec__live {
	uint64_t period_ns;
	bool use_tsc;
	uint64_t next_report_ns; /* CLOCK_MONOTONIC */
	struct recfmt_sync cut;	 /* the start of the current interval */
	uint32_t nr_reports;
	struct rec__live_thread *threads;
};

struct rec__live *rec__live_create(uint64_t period_ns, bool use_tsc)
{
	struct rec__live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->period_ns = period_ns;
	l->use_tsc = use_tsc;
	rec__clock_sync(use_tsc, &l->cut);
	l->next_report_ns = l->cut.mono_ns + period_ns;
	return l;
}

void rec__live_destroy(struct rec__live *l)
{
	if (!l)
		return;
	while (l->threads) {
		struct rec__live_thread *lt = l->threads;

		l->threads = lt->next;
		if (lt->t)
			lt->t->wr.live = NULL;
		free(lt);
	}
	free(l);
}

/* Under rec__g.lock (reap): the thread is about to be freed. */
void rec__live_forget_thread(struct rec__thread *t)
{
	struct rec__live_thread *lt = t->wr.live;

	if (!lt)
		return;
	if (t->reg.named)
		snprintf(lt->label, sizeof(lt->label), "%s", t->reg.name);
	lt->t = NULL;
	t->wr.live = NULL;
}

static uint32_t hash_site(uint32_t site)
{
	return (site * 2654435761u) >> 24;
}

static uint32_t slot_of(struct rec__live_thread *lt, uint32_t site)
{
	for (uint32_t n = 0, i = hash_site(site) & (MAX_SITES - 1); n < MAX_SITES;
	     n++, i = (i + 1) & (MAX_SITES - 1)) {
		struct live_site *s = &lt->sites[i];

		if (s->site == site)
			return i;
		if (s->site == 0) {
			s->site = site;
			return i;
		}
	}
	return OTHER_SLOT;
}

static struct rec__live_thread *thread_of(struct rec__live *l, struct rec__thread *t)
{
	struct rec__live_thread *lt = t->wr.live;

	if (lt)
		return lt;
	lt = calloc(1, sizeof(*lt));
	if (!lt)
		return NULL;
	lt->t = t;
	lt->serial = t->reg.serial;
	snprintf(lt->label, sizeof(lt->label), "%" PRIu32, t->reg.os_tid);
	lt->next = l->threads;
	l->threads = lt;
	t->wr.live = lt;
	return lt;
}

static void enter(struct rec__live_thread *lt, uint32_t site, uint64_t ticks)
{
	uint32_t slot;

	if (lt->depth == MAX_DEPTH || lt->overflow) {
		lt->overflow++;
		lt->sites[OTHER_SLOT].calls++;
		return;
	}
	slot = slot_of(lt, site);
	lt->sites[slot].open++;
	lt->sites[slot].calls++;
	lt->stack[lt->depth++] = (struct live_frame){ slot, site, ticks };
}

static void leave(struct rec__live_thread *lt, uint32_t site, uint64_t ticks, uint64_t from)
{
	uint32_t d = lt->depth;

	if (lt->overflow) {
		lt->overflow--;
		return;
	}
	while (d && lt->stack[d - 1].site != site)
		d--;
	if (!d)
		return; /* no open enter (recording restarted in between): ignore */
	while (lt->depth >= d) {
		struct live_frame *f = &lt->stack[--lt->depth];
		struct live_site *s = &lt->sites[f->slot];

		/* Frames above the match lost their exit: no time for them. */
		if (--s->open == 0 && lt->depth == d - 1) {
			uint64_t start = f->enter > from ? f->enter : from;

			s->ticks += ticks > start ? ticks - start : 0;
		}
		if (lt->depth == d - 1)
			break;
	}
}

void rec__live_feed(struct rec__live *l, struct rec__thread *t, uint64_t from, uint64_t n,
		    uint32_t stride)
{
	struct rec__live_thread *lt = thread_of(l, t);
	struct rec__ring_view v = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */

	if (!lt)
		return;
	for (uint64_t i = 0; i < n; i += stride) {
		const struct recfmt_event *ev = &v.ev[(from + i) & v.mask];
		uint64_t ticks = ev->ticks > l->cut.ticks ? ev->ticks : l->cut.ticks;

		if (ev->code == REC__ANNOT_CODE)
			continue; /* an annotation's slot (rec_internal.h): no scope */
		if (RECFMT_CODE_IS_EXIT(ev->code))
			leave(lt, RECFMT_CODE_SITE(ev->code), ticks, l->cut.ticks);
		else
			enter(lt, RECFMT_CODE_SITE(ev->code), ticks);
	}
}

static size_t fmt_ns(char *out, size_t n, uint64_t ns)
{
	if (ns < 1000)
		return (size_t)snprintf(out, n, "%" PRIu64 "ns", ns);
	if (ns < 1000000)
		return (size_t)snprintf(out, n, "%.1fus", (double)ns / 1e3);
	if (ns < 1000000000)
		return (size_t)snprintf(out, n, "%.1fms", (double)ns / 1e6);
	return (size_t)snprintf(out, n, "%.2fs", (double)ns / 1e9);
}

/* Appends to buf[*len], never past cap (the line is cut, not overrun). */
static void append(char *buf, size_t *len, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t *len, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*len >= cap)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (k > 0)
		*len += (size_t)k < cap - *len ? (size_t)k : cap - *len - 1;
}

/* One thread's line; false if it did nothing in the interval. */
static bool report_thread(struct rec__live *l, struct rec__live_thread *lt, uint64_t span_ticks,
			  uint64_t span_ns, uint64_t t0_ms, char *buf, size_t *len, size_t cap)
{
	uint32_t top[TOP_N], nr = 0;
	bool any = false;

	/* Open activations count up to the cut, once per site. */
	for (uint32_t d = 0; d < lt->depth; d++) {
		struct live_site *s = &lt->sites[lt->stack[d].slot];
		uint64_t start = lt->stack[d].enter > l->cut.ticks ? lt->stack[d].enter
								  : l->cut.ticks;

		if (s->mark == l->nr_reports + 1)
			continue;
		s->mark = l->nr_reports + 1;
		s->ticks += span_ticks + l->cut.ticks > start ? span_ticks + l->cut.ticks - start : 0;
	}
	for (uint32_t i = 0; i <= MAX_SITES; i++) {
		const struct live_site *s = &lt->sites[i];

		if (!s->ticks && !s->calls)
			continue;
		any = true;
		/* Insertion into the top N by time, then calls. */
		uint32_t k = nr < TOP_N ? nr++ : TOP_N;

		while (k > 0 && (lt->sites[top[k - 1]].ticks < s->ticks ||
				 (lt->sites[top[k - 1]].ticks == s->ticks &&
				  lt->sites[top[k - 1]].calls < s->calls))) {
			if (k < TOP_N)
				top[k] = top[k - 1];
			k--;
		}
		if (k < TOP_N)
			top[k] = i;
	}
	if (!any)
		return false;
	append(buf, len, cap, "rec: live %" PRIu64 ".%03" PRIu64 "s +%" PRIu64 "ms %s:", t0_ms / 1000,
	       t0_ms % 1000, span_ns / 1000000, lt->label);
	for (uint32_t k = 0; k < nr; k++) {
		const struct live_site *s = &lt->sites[top[k]];
		const struct rec__site *site = top[k] == OTHER_SLOT ? NULL : rec__site_get(s->site);
		uint64_t ns = span_ticks ? (uint64_t)((unsigned __int128)s->ticks * span_ns /
						      span_ticks)
					 : 0;
		char t[32];

		fmt_ns(t, sizeof(t), ns);
		append(buf, len, cap, "%s %s %s %.1f%% %" PRIu64 " calls", k ? "," : "",
		       site && site->name ? site->name : "(other)", t,
		       span_ticks ? 100.0 * (double)s->ticks / (double)span_ticks : 0.0, s->calls);
	}
	append(buf, len, cap, "\n");
	return true;
}

static void reset_thread(struct rec__live_thread *lt)
{
	for (uint32_t i = 0; i <= MAX_SITES; i++) {
		struct live_site *s = &lt->sites[i];

		s->ticks = s->calls = 0;
		if (!s->open && i != OTHER_SLOT)
			s->site = 0;
	}
	/* Free slots may break probe chains of open sites: rebuild them. */
	struct live_site keep[MAX_SITES];
	uint32_t nr = 0, map[MAX_SITES];

	for (uint32_t i = 0; i < MAX_SITES; i++)
		if (lt->sites[i].site)
			keep[nr++] = lt->sites[i];
	memset(lt->sites, 0, MAX_SITES * sizeof(lt->sites[0]));
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t s = slot_of(lt, keep[i].site);

		lt->sites[s] = keep[i];
		map[i] = s;
	}
	for (uint32_t d = 0; d < lt->depth; d++) {
		if (lt->stack[d].slot == OTHER_SLOT)
			continue;
		for (uint32_t i = 0; i < nr; i++)
			if (keep[i].site == lt->stack[d].site)
				lt->stack[d].slot = map[i];
	}
}

uint64_t rec__live_tick(struct rec__live *l, uint64_t now_ns)
{
	struct recfmt_sync cut;
	char buf[8192];
	size_t len = 0;
	uint64_t span_ticks, span_ns, t0_ms;

	if (now_ns < l->next_report_ns)
		return l->next_report_ns - now_ns;
	rec__clock_sync(l->use_tsc, &cut);
	span_ticks = cut.ticks > l->cut.ticks ? cut.ticks - l->cut.ticks : 0;
	span_ns = cut.mono_ns - l->cut.mono_ns;
	t0_ms = (l->cut.mono_ns - rec__g.start_sync.mono_ns) / 1000000;
	/* Thread names are under the lock. */
	pthread_mutex_lock(&rec__g.lock);
	for (struct rec__live_thread *lt = l->threads; lt; lt = lt->next)
		if (lt->t && lt->t->reg.named)
			snprintf(lt->label, sizeof(lt->label), "%s", lt->t->reg.name);
	pthread_mutex_unlock(&rec__g.lock);
	for (struct rec__live_thread **pp = &l->threads; *pp;) {
		struct rec__live_thread *lt = *pp;

		report_thread(l, lt, span_ticks, span_ns, t0_ms, buf, &len, sizeof(buf));
		reset_thread(lt);
		if (!lt->t) {
			*pp = lt->next; /* reported its last interval */
			free(lt);
			continue;
		}
		pp = &lt->next;
	}
	l->nr_reports++;
	l->cut = cut;
	while (l->next_report_ns <= now_ns)
		l->next_report_ns += l->period_ns;
	rec__log_write(buf, len);
	return l->next_report_ns - now_ns;
}
