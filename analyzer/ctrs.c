/* SPDX-License-Identifier: MIT */
/*
 * ctrs.c - see ctrs.h. Aggregates acts.c's activations per thread and name;
 * the thread filter is applied at lookup, with the names the file ends with
 * (as report.c does).
 */
#include "ctrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "xalloc.h"

static struct tt_ctr_agg *agg_of(struct tt_ctrs *c, uint32_t thread, uint32_t name)
{
	if (thread >= c->cap_threads) {
		uint32_t cap = c->cap_threads ? c->cap_threads : 16;

		while (cap <= thread)
			cap *= 2;
		c->agg = realloc(c->agg, cap * sizeof(*c->agg));
		c->nr_agg = realloc(c->nr_agg, cap * sizeof(*c->nr_agg));
		if (!c->agg || !c->nr_agg)
			tt_oom();
		memset(c->agg + c->cap_threads, 0, (cap - c->cap_threads) * sizeof(*c->agg));
		memset(c->nr_agg + c->cap_threads, 0,
		       (cap - c->cap_threads) * sizeof(*c->nr_agg));
		c->cap_threads = cap;
	}
	if (name >= c->nr_agg[thread]) {
		uint32_t n = c->nr_agg[thread] ? c->nr_agg[thread] : 16;

		while (n <= name)
			n *= 2;
		c->agg[thread] = realloc(c->agg[thread], n * sizeof(**c->agg));
		if (!c->agg[thread])
			tt_oom();
		memset(c->agg[thread] + c->nr_agg[thread], 0,
		       (n - c->nr_agg[thread]) * sizeof(**c->agg));
		c->nr_agg[thread] = n;
	}
	return &c->agg[thread][name];
}

static void on_act(void *ctx, const struct tt_act *a)
{
	struct tt_ctrs *c = ctx;
	struct tt_ctr_agg *g;

	if (!a->ctr_mask)
		return;
	g = agg_of(c, (uint32_t)(a->th - c->tr.threads), a->name);
	for (uint32_t k = 0; k < TT_MAX_COUNTERS; k++) {
		if (!(a->ctr_mask & (1u << k)))
			continue;
		g->sum[k] += a->delta[k];
		g->n[k]++;
		if (a->outermost)
			g->total[k] += a->delta[k];
	}
}

enum tt_status tt_ctrs_run(struct tt_ctrs *c, const struct tt_options *o,
			   const struct tt_clock *clock, char *msg, size_t msg_bytes)
{
	enum tt_status st;

	memset(c, 0, sizeof(*c));
	tt_trace_init(&c->tr, o->trace);
	tt_acts_init(&c->acts, &c->tr);
	tt_report_window(o, clock, &c->acts.win_lo_ticks, &c->acts.win_span_ticks);
	c->acts.max_dur_ticks = tt_options_max_dur_ticks(o, clock);
	c->acts.on_act = on_act;
	c->acts.ctx = c;
	st = tt_trace_walk(&c->tr, tt_acts_block, &c->acts, msg, msg_bytes);
	if (st == TT_OK)
		tt_acts_finish(&c->acts);
	return st;
}

uint32_t tt_ctrs_find(const struct tt_ctrs *c, const char *name)
{
	for (uint32_t g = 0; g < c->acts.nr_ctr; g++)
		if (strcmp(c->acts.ctr_names[g], name) == 0)
			return g;
	return UINT32_MAX;
}

void tt_ctrs_lookup(const struct tt_ctrs *c, const struct tt_options *o, const char *label,
		    const char *name, struct tt_ctr_agg *out)
{
	uint32_t n;

	memset(out, 0, sizeof(*out));
	for (n = 0; n < c->tr.nr_names && strcmp(c->tr.names[n], name) != 0; n++)
		;
	if (n == c->tr.nr_names)
		return;
	for (uint32_t i = 0; i < c->tr.nr_threads && i < c->cap_threads; i++) {
		const struct tt_thread *th = &c->tr.threads[i];
		const struct tt_ctr_agg *g;

		if (n >= c->nr_agg[i] || !tt_options_thread_selected(o, th))
			continue;
		if (label) {
			char buf[4200];

			tt_thread_label(th, buf, sizeof(buf));
			if (strcmp(buf, label) != 0)
				continue;
		}
		g = &c->agg[i][n];
		for (uint32_t k = 0; k < TT_MAX_COUNTERS; k++) {
			out->total[k] += g->total[k];
			out->sum[k] += g->sum[k];
			out->n[k] += g->n[k];
		}
	}
}

void tt_ctrs_fini(struct tt_ctrs *c)
{
	for (uint32_t i = 0; i < c->cap_threads; i++)
		free(c->agg[i]);
	free(c->agg);
	free(c->nr_agg);
	tt_acts_fini(&c->acts);
	tt_trace_fini(&c->tr);
	memset(c, 0, sizeof(*c));
}
