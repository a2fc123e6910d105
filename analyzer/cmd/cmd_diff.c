/* SPDX-License-Identifier: MIT */
/*
 * cmd_diff.c - `tracetool diff BASE NEW` and `tracetool diff BASE... --
 * NEW...` (tracetool(1), diff): per scope name (and thread, with --by-thread)
 * the calls, total, p50, p90 and p99 of two sides of one or more recordings
 * (runs) each, their changes in %, and a verdict (slower, faster, same, new,
 * gone, too few calls); `--fail-on=METRIC:+PCT` turns a significant
 * regression into exit 3. Every file goes through report.c's pipeline (the
 * same rows as summary, under the same filters); this file owns only the
 * comparison and its output.
 *
 * The method (docs/ANALYZER.md, "diff"): each run gives one value of each
 * statistic per scope (quantiles interpolated across the clock's step, the
 * mean, the total, the call count); a change is the difference of the mean
 * log of the runs' values, judged by a Welch t-interval whose variance is
 * the runs' spread (never less than the sampling error of the statistic
 * inside one run); with one run per side only that sampling error is there,
 * and the output says the verdict cannot account for run-to-run noise.
 * A change counts when it lies beyond the threshold (5 %, or a --fail-on
 * rule's percentage) at 95 %, after Benjamini-Hochberg over every scope
 * judged.
 */
#include <argp.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/commands.h"
#include "common/emit.h"
#include "common/hist.h"
#include "views/labels.h"
#include "cmd/options.h"
#include "engine/front.h"
#include "engine/report.h"
#include "common/xalloc.h"

enum { OPT_FORMAT = 0x300, OPT_FAIL_ON, OPT_THRESHOLD, OPT_BY_THREAD };

enum metric { M_TOTAL, M_MEAN, M_P50, M_P90, M_P99, M_CALLS, NR_METRICS };
static const char *const metric_names[NR_METRICS] = { "total", "mean", "p50",
						      "p90",   "p99",  "calls" };
static const double metric_q[NR_METRICS] = { 0, 0, 0.50, 0.90, 0.99, 0 };
/*
 * The metrics a verdict slower / faster is judged on: the quantiles of the
 * durations, and with several runs a side the mean. One run's mean is ruled
 * by its rare long calls (three preempted calls of 300 move it 7x), and
 * with one run its sampling error cannot be told from a few calls that
 * were unlucky; across runs, an unlucky run widens the interval instead.
 */
static const enum metric verdict_metrics[] = { M_P50, M_P90, M_P99, M_MEAN };
#define NR_VERDICT_METRICS (sizeof(verdict_metrics) / sizeof(verdict_metrics[0]))
static size_t nr_verdict_metrics(const unsigned nr[2])
{
	return nr[0] > 1 && nr[1] > 1 ? NR_VERDICT_METRICS : NR_VERDICT_METRICS - 1;
}

struct fail_rule {
	enum metric m;
	double pct;
	const char *text; /* as given */
};

struct diff_args {
	struct tt_options o; /* the shared filters; o.trace is set per file */
	const char **path[2]; /* BASE..., NEW... */
	unsigned nr[2];
	bool split;	      /* a "--" separated the sides */
	enum tt_format format;
	double threshold_pct; /* the smallest change a verdict reports */
	struct fail_rule *rules;
	size_t nr_rules;
};

/* The false-discovery rate of the verdicts and of each --fail-on rule. */
#define DIFF_FDR 0.05
/* The two-sided level of the intervals shown. */
#define DIFF_CI 0.95
#define DIFF_DEFAULT_THRESHOLD_PCT 5.0
/* Calls a quantile q needs in every run: 10 beyond it on the rarer side. */
#define DIFF_MIN_BEYOND 10.0
/* Calls the mean and total need in one run when there is one run a side. */
#define DIFF_MIN_CALLS_SINGLE 20

enum verdict { V_SAME, V_SLOWER, V_FASTER, V_NEW, V_GONE, V_FEW };
static const char *const verdict_names[] = { "same", "slower", "faster",
					     "new",  "gone",   "too few calls" };

/* One scope's statistics in one run. */
struct runstat {
	uint64_t calls;
	double v[NR_METRICS]; /* ns (calls for M_CALLS); quantiles interpolated */
	double w[NR_METRICS]; /* the sampling variance of log v inside the run */
};

/* One comparison of one metric. */
struct test {
	bool judged;	 /* enough calls on every run of both sides */
	double d;	 /* mean log(new) - mean log(base) */
	double se, df;	 /* its standard error and degrees of freedom */
	double p_up, p_down; /* one-sided, against the threshold */
	double adj_up, adj_down; /* after Benjamini-Hochberg */
};

struct pair {
	const char *thread; /* with --by-thread, else NULL */
	const char *name;
	const char *site;   /* with --by-site: the scope's place (labels.h), else NULL */
	struct runstat *rs[2]; /* nr[side] each */
	uint64_t calls_all[2]; /* over every run of the side */
	bool present[2];       /* timed calls in some run of the side */
	double shown[2][NR_METRICS];  /* geometric mean over runs (calls: mean) */
	double spread[2][NR_METRICS]; /* sd of log over runs */
	struct test t[NR_METRICS];
	enum verdict verdict;
	bool regression;
};

static const struct argp_option diff_options[] = {
	{ "format", OPT_FORMAT, "FMT", 0, "Output as table (default), csv or json", 20 },
	{ "fail-on", OPT_FAIL_ON, "METRIC:+PCT", 0,
	  "Exit 3 when some scope's METRIC (total, mean, p50, p90, p99, calls) is "
	  "significantly worse by more than PCT % (repeatable; PCT may end in %)", 20 },
	{ "threshold", OPT_THRESHOLD, "PCT", 0,
	  "Smallest change (in %) that a verdict slower/faster reports (default 5)", 20 },
	{ "by-thread", OPT_BY_THREAD, 0, 0,
	  "One row per thread and scope name (threads matched by name, else tid)", 20 },
	{ 0 },
};

/* A percentage: a number, optionally followed by '%'. */
static int parse_pct(const char *s, double *pct)
{
	char *end;

	if (!*s)
		return -1;
	*pct = strtod(s, &end);
	if (end == s)
		return -1;
	if (*end == '%')
		end++;
	return *end || !(*pct >= 0) || *pct > 1e9 ? -1 : 0;
}

static void add_path(struct diff_args *a, int side, const char *p)
{
	a->path[side] = tt_xrealloc(a->path[side], (a->nr[side] + 1) * sizeof(*a->path[side]));
	a->path[side][a->nr[side]++] = p;
}

static const struct argp_child diff_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_cost_argp, 0, 0, 0 },
	{ &tt_site_argp, 0, 0, 0 },
	{ 0 },
};

static error_t parse_diff(int key, char *arg, struct argp_state *state)
{
	struct diff_args *a = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		tt_options_inputs(state, diff_children, &a->o);
		break;
	case OPT_FORMAT:
		a->format = (enum tt_format)tt_options_choose(state, "--format", TT_FORMAT_CHOICES,
							      arg);
		break;
	case OPT_THRESHOLD:
		if (parse_pct(arg, &a->threshold_pct))
			argp_error(state, "--threshold: '%s' is not a percentage like 5 or 2.5", arg);
		break;
	case OPT_BY_THREAD:
		a->o.by_thread = true;
		break;
	case OPT_FAIL_ON: {
		const char *colon = strchr(arg, ':');
		struct fail_rule r = { NR_METRICS, 0, arg };

		for (int m = 0; colon && m < NR_METRICS; m++)
			if (strlen(metric_names[m]) == (size_t)(colon - arg) &&
			    strncmp(arg, metric_names[m], (size_t)(colon - arg)) == 0)
				r.m = (enum metric)m;
		if (r.m == NR_METRICS || colon[1] != '+' || parse_pct(colon + 2, &r.pct))
			argp_error(state,
				   "--fail-on: '%s' is not METRIC:+PCT with METRIC one of total, "
				   "mean, p50, p90, p99, calls (e.g. p90:+10 or p90:+10%%)",
				   arg);
		a->rules = tt_xrealloc(a->rules, (a->nr_rules + 1) * sizeof(*a->rules));
		a->rules[a->nr_rules++] = r;
		break;
	}
	case ARGP_KEY_ARG:
		if (!a->split && a->nr[0] == 2)
			argp_error(state, "two trace files only, BASE and NEW, or several runs "
					  "a side: BASE... -- NEW...");
		add_path(a, 0, arg);
		break;
	case ARGP_KEY_END:
		if (a->split && (!a->nr[0] || !a->nr[1]))
			argp_error(state, "missing %s: BASE... -- NEW...",
				   a->nr[0] ? "NEW after --" : "BASE before --");
		if (!a->split && a->nr[0] != 2)
			argp_error(state, "missing %s", a->nr[0] ? "NEW" : "BASE and NEW");
		if (!a->split) { /* BASE NEW: one run a side */
			add_path(a, 1, a->path[0][1]);
			a->nr[0] = 1;
		}
		/* A run given twice would count twice and the spread between
		 * runs look smaller than it is; BASE and NEW may share a file:
		 * a recording compared with itself. */
		tt_refuse_same_file(state, a->path[0], a->nr[0], "run");
		tt_refuse_same_file(state, a->path[1], a->nr[1], "run");
		tt_refuse_stdout_input(a->path[0], a->nr[0]);
		tt_refuse_stdout_input(a->path[1], a->nr[1]);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp diff_argp = {
	diff_options, parse_diff, "BASE NEW\nBASE... -- NEW...",
	"What changed between two recordings, or two sets of runs, per scope name: "
	"calls, total, p50, p90 and p99 on both sides, the change in %, and a verdict "
	"slower, faster, same, new, gone or too few calls.\v"
	"Give several runs a side (BASE... -- NEW..., 5 each is good): each run gives "
	"one value of each statistic, and a change must stand out against the spread "
	"between the runs of one side. A verdict slower or faster needs some duration "
	"statistic (p50, p90, p99 or the mean) whose 95 % interval of the change lies "
	"beyond --threshold % (Welch's t on the logs of the runs' values, "
	"Benjamini-Hochberg over all scopes). With one run a side only the sampling "
	"error inside each run is known: the verdicts cannot account for run-to-run "
	"noise. A quantile needs enough calls in every run (p50 20, p90 100, p99 1000); "
	"with fewer it is not judged. The filters apply to every file. Rows are sorted "
	"by the size of the total's change.\n\n"
	"Examples:\n"
	"  tracetool diff base.zst new.zst\n"
	"  tracetool diff --fail-on=p99:+10% base1.zst base2.zst base3.zst -- new1.zst "
	"new2.zst new3.zst\n"
	"  tracetool diff --by-thread --format=csv --function='^parse' base.zst new.zst\n\n"
	"Exit status: 0 success, 1 a trace is unreadable or damaged, 2 wrong usage, "
	"3 a --fail-on rule found a regression.",
	diff_children, 0, 0,
};

/* ---------------------------------------------------------------------
 * Distributions: the Student t tail and its quantile.
 */

/* The continued fraction of the incomplete beta function (Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		double aa = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)), del;

		d = 1 + aa * d;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
		d = 1 + aa * d;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-13)
			break;
	}
	return h;
}

/* The regularised incomplete beta function I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
	double bt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return bt * beta_cf(a, b, x) / a;
	return 1 - bt * beta_cf(b, a, 1 - x) / b;
}

/* P(T > t) for Student's T with df degrees of freedom (INFINITY: normal). */
static double t_upper(double t, double df)
{
	double tail;

	if (isnan(t))
		return 1;
	if (!isfinite(df))
		return 0.5 * erfc(t / sqrt(2.0));
	tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? tail : 1 - tail;
}

/* The t with P(T > t) = p (p < 0.5). */
static double t_quantile(double p, double df)
{
	double lo = 0, hi = 1e4;

	for (int it = 0; it < 100; it++) {
		double mid = (lo + hi) / 2;

		if (t_upper(mid, df) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* ---------------------------------------------------------------------
 * One run's statistics of one row.
 */

/* Where the slope of the cumulative count changes: a bin starts or ends. */
struct edge {
	double x;     /* ns */
	double slope; /* calls per ns added from x on */
};

static int cmp_edge(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	return a->x < b->x ? -1 : a->x > b->x ? 1 : 0;
}

/*
 * A row's histogram as edges in ns, each bucket's calls spread evenly over
 * the bucket, and over at least the clock's step: a bucket's calls lie
 * anywhere in it, and a clock that advances in steps of s ticks reads a
 * duration as a multiple of s, so a value v stands for the durations in
 * [v - s/2, v + s/2). The cumulative distribution is then piecewise linear,
 * and its quantiles move smoothly with the share of calls on each step
 * instead of jumping by a whole step (the ties of a quantised clock).
 * step is in ticks (0: unknown, taken as 1). Also sets the variance of a
 * call's duration (each bin at its middle, plus its own spread).
 * Return: the number of edges, sorted.
 */
static size_t edges_of(const struct tt_row *r, const struct tt_clock *c, uint64_t step,
		       double mean, struct edge **out, double *var)
{
	const struct tt_stat *s = &r->st;
	double ns_per_tick = (double)c->num / (double)c->den, m2 = 0;
	struct edge *e = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	*var = 0;
	if (!s->calls || !s->hist)
		return 0;
	step = step ? step : 1;
	for (uint32_t i = 0; i < TT_HIST_NR_BUCKETS; i++) {
		uint64_t lo, width, count = tt_hist_count(s->hist, i);
		double mid, w, from, dv;

		if (!count)
			continue;
		lo = tt_hist_bucket_lo(i);
		width = tt_hist_bucket_max(i) - lo + 1;
		/* The bucket holds the integers lo .. lo + width - 1. */
		mid = ((double)lo + (double)(width - 1) / 2) * ns_per_tick;
		w = (double)(width > step ? width : step) * ns_per_tick;
		from = mid - w / 2;
		if (from < 0) { /* durations are not negative */
			w += from;
			from = 0;
		}
		if (n + 2 > cap) {
			cap = cap ? 2 * cap : 64;
			e = tt_xrealloc(e, cap * sizeof(*e));
		}
		e[n++] = (struct edge){ from, (double)count / w };
		e[n++] = (struct edge){ from + w, -(double)count / w };
		dv = mid - mean;
		m2 += (double)count * (dv * dv + w * w / 12);
	}
	qsort(e, n, sizeof(*e), cmp_edge);
	*var = m2 / (double)s->calls;
	*out = e;
	return n;
}

/* The quantiles q[0..nq) (ascending, in (0, 1)) of total calls, in ns. */
static void edges_quantiles(const struct edge *e, size_t ne, double total, const double *q,
			    size_t nq, double *out)
{
	double below = 0, slope = 0, x = ne ? e[0].x : 0;
	size_t k = 0;

	for (size_t j = 0; j < ne && k < nq; j++) {
		double next = below + slope * (e[j].x - x);

		while (k < nq && next >= q[k] * total) {
			out[k] = slope > 0 ? x + (q[k] * total - below) / slope : x;
			k++;
		}
		below = next;
		x = e[j].x;
		slope += e[j].slope;
	}
	while (k < nq)
		out[k++] = x;
}

/* Durations of 0 ns (shorter than the clock's step) have a log too. */
static double log_ns(double ns)
{
	return log(ns > 1e-3 ? ns : 1e-3);
}

struct qref {
	double q;
	int slot; /* 3 (m - M_P50) + 0, 1, 2: below, at, above */
};

static int cmp_qref(const void *pa, const void *pb)
{
	const struct qref *a = pa, *b = pb;

	return a->q < b->q ? -1 : a->q > b->q ? 1 : 0;
}

/*
 * The statistics of row r of a run (r may be NULL: no call in that run).
 * The sampling variance of a quantile's log inside the run comes from the
 * order statistics: the quantiles at q -/+ two standard errors of a rank,
 * sqrt(q (1 - q) / n), are two standard errors apart each way (two rather
 * than one: the tails are sparse, and a wider window reads their spread
 * less by luck); the mean's
 * from the histogram's variance (the total's too: it is the calls' sum).
 */
static void run_stats(const struct tt_row *r, const struct tt_report *rep, struct runstat *rs)
{
	double ns_per_tick = (double)rep->clock.num / (double)rep->clock.den, n, mean, var;
	struct qref qr[9];
	double q[9], val[9], at[9];
	struct edge *e;
	size_t ne;

	memset(rs, 0, sizeof(*rs));
	if (!r || !r->calls)
		return;
	rs->calls = r->calls;
	n = (double)r->calls;
	mean = (double)r->st.sum_ticks * ns_per_tick / n;
	ne = edges_of(r, &rep->clock, rep->tr.hdr.clock_step_ticks, mean, &e, &var);
	rs->v[M_CALLS] = n;
	rs->v[M_MEAN] = mean;
	rs->v[M_TOTAL] = (double)r->st.total_ticks * ns_per_tick;
	rs->w[M_MEAN] = mean > 0 ? var / n / (mean * mean) : 0;
	rs->w[M_TOTAL] = rs->w[M_MEAN];
	if (!ne)
		return;
	for (int m = M_P50; m <= M_P99; m++) {
		double p = metric_q[m], se = 2 * sqrt(p * (1 - p) / n), edge = 0.5 / n;
		int i = 3 * (m - M_P50);

		qr[i] = (struct qref){ p - se > edge ? p - se : edge, i };
		qr[i + 1] = (struct qref){ p, i + 1 };
		qr[i + 2] = (struct qref){ p + se < 1 - edge ? p + se : 1 - edge, i + 2 };
	}
	qsort(qr, 9, sizeof(qr[0]), cmp_qref);
	for (int i = 0; i < 9; i++)
		q[i] = qr[i].q;
	edges_quantiles(e, ne, n, q, 9, val);
	for (int i = 0; i < 9; i++)
		at[qr[i].slot] = val[i];
	for (int m = M_P50; m <= M_P99; m++) {
		int i = 3 * (m - M_P50);
		double half = (log_ns(at[i + 2]) - log_ns(at[i])) / 4;

		rs->v[m] = at[i + 1];
		rs->w[m] = half * half;
	}
	free(e);
}

/* ---------------------------------------------------------------------
 * Pairs, tests, verdicts and --fail-on.
 */
static double threshold_pct; /* --threshold */

static int cmp_key(const char *ta, const char *na, const char *tb, const char *nb)
{
	int c = strcmp(ta ? ta : "", tb ? tb : "");

	return c ? c : strcmp(na, nb);
}

/*
 * Rows are keyed "name" TT_SITE_SEP "place" (labels.h). The key the two
 * sides are matched by (docs/ANALYZER.md, "Names"): the scope's name alone
 * where each side has exactly one scope of that name (over all its runs), so
 * that a scope whose line moved between the two builds is still one scope;
 * else the name and its place.
 */
struct keyref {
	const struct tt_row *row;
	const char *key; /* row->name, or own: its name part */
	char *own;
	int side;
	unsigned run;
};

static size_t name_part(const char *key)
{
	const char *sep = strchr(key, TT_SITE_SEP);

	return sep ? (size_t)(sep - key) : strlen(key);
}

/* By thread, name part, side, then the whole key. */
static int cmp_name_part(const void *pa, const void *pb)
{
	const struct keyref *a = pa, *b = pb;
	size_t na = name_part(a->row->name), nb = name_part(b->row->name);
	int c = strcmp(a->row->thread ? a->row->thread : "", b->row->thread ? b->row->thread : "");

	if (c)
		return c;
	c = memcmp(a->row->name, b->row->name, na < nb ? na : nb);
	if (c || na != nb)
		return c ? c : na < nb ? -1 : 1;
	if (a->side != b->side)
		return a->side - b->side;
	return strcmp(a->row->name, b->row->name);
}

static bool same_group(const struct keyref *a, const struct keyref *b)
{
	size_t na = name_part(a->row->name);

	return cmp_key(a->row->thread, "", b->row->thread, "") == 0 &&
	       na == name_part(b->row->name) && memcmp(a->row->name, b->row->name, na) == 0;
}

static int cmp_keyref(const void *pa, const void *pb)
{
	const struct keyref *a = pa, *b = pb;

	return cmp_key(a->row->thread, a->key, b->row->thread, b->key);
}

/* Sets refs[g..e)'s match key: the name part where each side has exactly
 * one whole key in the group (sorted by cmp_name_part). */
static void match_keys(struct keyref *refs, size_t g, size_t e)
{
	unsigned distinct[2] = { 0, 0 };

	for (size_t k = g; k < e; k++)
		if (k == g || refs[k].side != refs[k - 1].side ||
		    strcmp(refs[k].row->name, refs[k - 1].row->name) != 0)
			distinct[refs[k].side]++;
	for (size_t k = g; k < e; k++) {
		refs[k].key = refs[k].row->name;
		if (distinct[0] == 1 && distinct[1] == 1)
			refs[k].key = refs[k].own =
				tt_xstrndup(refs[k].row->name, name_part(refs[k].row->name));
	}
}

/* Rows of every run of both sides matched by (thread, scope). */
static size_t make_pairs(const struct diff_args *a, struct tt_report *const rep[2],
			 struct pair **out)
{
	struct keyref *refs;
	struct pair *v;
	size_t nr = 0, n = 0;

	for (int s = 0; s < 2; s++)
		for (unsigned k = 0; k < a->nr[s]; k++)
			nr += rep[s][k].nr_rows;
	refs = tt_xcalloc(nr + 1, sizeof(*refs));
	nr = 0;
	for (int s = 0; s < 2; s++)
		for (unsigned k = 0; k < a->nr[s]; k++)
			for (size_t r = 0; r < rep[s][k].nr_rows; r++)
				refs[nr++] = (struct keyref){ &rep[s][k].rows[r], NULL, NULL, s, k };
	if (nr)
		qsort(refs, nr, sizeof(*refs), cmp_name_part);
	for (size_t g = 0, e; g < nr; g = e) {
		for (e = g + 1; e < nr && same_group(&refs[g], &refs[e]); e++)
			;
		match_keys(refs, g, e);
	}
	if (nr)
		qsort(refs, nr, sizeof(*refs), cmp_keyref);
	v = tt_xcalloc(nr + 1, sizeof(*v));
	for (size_t i = 0; i < nr;) {
		struct pair *pr = &v[n++];
		size_t j = i;

		pr->thread = refs[i].row->thread;
		for (int s = 0; s < 2; s++)
			pr->rs[s] = tt_xcalloc(a->nr[s], sizeof(*pr->rs[s]));
		for (; j < nr && cmp_keyref(&refs[i], &refs[j]) == 0; j++) {
			const struct keyref *k = &refs[j];
			struct runstat *rs = &pr->rs[k->side][k->run];

			/* The new side's scope names the pair: its place is the current one. */
			if (!pr->name || k->side == 1)
				pr->name = k->row->name;
			if (rs->calls) /* two rows of one key in one run: keep the first */
				continue;
			run_stats(k->row, &rep[k->side][k->run], rs);
			pr->calls_all[k->side] += rs->calls;
			pr->present[k->side] |= rs->calls > 0;
		}
		i = j;
	}
	for (size_t r = 0; r < nr; r++)
		free(refs[r].own);
	free(refs);
	*out = v;
	return n;
}

/* Calls metric m needs in every run to be judged. */
static uint64_t min_calls(enum metric m, bool single)
{
	if (metric_q[m] > 0) {
		double q = metric_q[m], rare = q < 0.5 ? q : 1 - q;

		return (uint64_t)ceil(DIFF_MIN_BEYOND / rare - 1e-9);
	}
	return m == M_CALLS ? 1 : single ? DIFF_MIN_CALLS_SINGLE : 1;
}

static int cmp_dbl(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b ? 1 : 0;
}

/*
 * Yuen's trimmed mean of the n values l (sorted here): with trim and 5 runs
 * or more, g = n / 5 of them at each end are left out, so that one run whose
 * machine had a bad moment (its p99 4x the others') does not swamp the
 * other four; else none (g = 0: the mean and Welch's variance). Sets the mean
 * of the h = n - 2g kept, and its squared standard error from the
 * winsorised variance (the g at each end replaced by their neighbour):
 * (n - 1) s_w^2 / (h (h - 1)).
 */
static void trimmed(double *l, unsigned n, bool trim, double *mean, double *se2, unsigned *h)
{
	unsigned g = trim && n >= 5 ? n / 5 : 0;
	double sum = 0, wsum = 0, wsum2 = 0, wmean;

	qsort(l, n, sizeof(*l), cmp_dbl);
	*h = n - 2 * g;
	for (unsigned k = g; k < n - g; k++)
		sum += l[k];
	*mean = sum / *h;
	for (unsigned k = 0; k < n; k++) {
		double x = l[k < g ? g : k >= n - g ? n - g - 1 : k];

		wsum += x;
		wsum2 += x * x;
	}
	wmean = wsum / n;
	*se2 = n > 1 && *h > 1 ? (wsum2 - wsum * wmean) / (*h * (*h - 1.0)) : 0;
	*se2 = *se2 > 0 ? *se2 : 0;
}

/*
 * The change of metric m: the difference of the mean logs of the runs'
 * values (trimmed for p90 and p99), with Yuen's version of Welch's standard
 * error and degrees of freedom from each side's spread over its runs, that
 * spread taken as at least the median sampling variance inside one run
 * (five runs that happen to agree do not make a statistic more precise than
 * its calls allow). With one run a side only the sampling variances are
 * there.
 */
static void compare(struct pair *pr, const unsigned nr[2], enum metric m)
{
	struct test *t = &pr->t[m];
	double mean[2], se2[2], w[2];
	unsigned h[2];
	bool single = nr[0] == 1 || nr[1] == 1;

	t->judged = pr->present[0] && pr->present[1];
	for (int s = 0; s < 2; s++) {
		double *l = tt_xcalloc(nr[s] + 1, sizeof(*l)), sum = 0, sum2 = 0;
		double *wv = tt_xcalloc(nr[s] + 1, sizeof(*wv));
		unsigned used = 0;

		/* A run without calls has a call count (0) and no durations. */
		for (unsigned k = 0; k < nr[s]; k++) {
			const struct runstat *rs = &pr->rs[s][k];

			t->judged &= rs->calls >= min_calls(m, single);
			if (m != M_CALLS && !rs->calls)
				continue;
			l[used] = m == M_CALLS ? log((double)rs->calls + 0.5) : log_ns(rs->v[m]);
			sum += l[used];
			sum2 += l[used] * l[used];
			wv[used] = rs->w[m];
			used++;
		}
		/* The spread shown: the standard deviation of all the runs. */
		pr->spread[s][m] = used > 1 && sum2 - sum * sum / used > 0
					   ? sqrt((sum2 - sum * sum / used) / (used - 1))
					   : 0;
		/* The typical run's sampling variance: the median, not the
		 * mean, so that the run with a bad moment does not set it. */
		qsort(wv, used, sizeof(*wv), cmp_dbl);
		w[s] = !used ? 0 : used % 2 ? wv[used / 2] : (wv[used / 2 - 1] + wv[used / 2]) / 2;
		free(wv);
		/* The tail takes a run's bad moment (a burst of preemption
		 * hits a few % of its calls: that run's p99 is 20x the others'),
		 * the median, the mean and the counts hardly: those keep
		 * Welch's full power (trimming five runs' means flagged long
		 * functions called once a run, whose three middle runs agreed
		 * by chance). */
		if (used)
			trimmed(l, used, m == M_P90 || m == M_P99, &mean[s], &se2[s], &h[s]);
		else
			mean[s] = se2[s] = 0, h[s] = 1;
		pr->shown[s][m] = m == M_CALLS ? (double)pr->calls_all[s] / nr[s]
				  : used ? exp(mean[s]) : 0;
		free(l);
	}
	t->d = mean[1] - mean[0];
	if (single) {
		/* The sampling variances come from the calls themselves, a
		 * quantile's from those in its tail only: Welch's degrees of
		 * freedom with that many calls, less one, a side. */
		double a = w[0] / nr[0], b = w[1] / nr[1], q = metric_q[m];
		double tail = q > 0 ? (q < 0.5 ? q : 1 - q) : 1;
		double n0 = tail * (double)pr->calls_all[0] / nr[0];
		double n1 = tail * (double)pr->calls_all[1] / nr[1];

		t->se = sqrt(a + b);
		t->df = m == M_CALLS || !(a + b > 0) || n0 < 2 || n1 < 2
				? INFINITY
				: (a + b) * (a + b) / (a * a / (n0 - 1) + b * b / (n1 - 1));
	} else {
		double a = se2[0] > w[0] / h[0] ? se2[0] : w[0] / h[0];
		double b = se2[1] > w[1] / h[1] ? se2[1] : w[1] / h[1];

		t->se = sqrt(a + b);
		t->df = a + b > 0 && h[0] > 1 && h[1] > 1
				? (a + b) * (a + b) / (a * a / (h[0] - 1) + b * b / (h[1] - 1))
				: nr[0] + nr[1] - 2;
	}
}

/* One-sided p-values of "rose by more than pct" and "fell by more". */
static void p_beyond(const struct test *t, double pct, double *up, double *down)
{
	double lim = log1p(pct / 100);

	if (!(t->se > 0)) { /* exact (call counts), or every run alike */
		*up = t->d > lim ? 0 : 1;
		*down = -t->d > lim ? 0 : 1;
		return;
	}
	*up = t_upper((t->d - lim) / t->se, t->df);
	*down = t_upper((-t->d - lim) / t->se, t->df);
}

static int cmp_dbl_ptr(const void *pa, const void *pb)
{
	double a = **(double *const *)pa, b = **(double *const *)pb;

	return a < b ? -1 : a > b ? 1 : 0;
}

/*
 * Benjamini-Hochberg after discarding the conservative nulls (Zhao, Small
 * and Su, "Multiple testing when many p-values are uniformly conservative",
 * JASA 2019): p[i] (pointers, m of them) replaced by the adjusted p-values.
 * Our nulls are "changed by at most the threshold", and in most scopes the
 * change is well inside it, so their p-values are far above uniform; those
 * above DIFF_LAMBDA say nothing and are set to 1, the others are divided by
 * DIFF_LAMBDA (still valid p-values, given that they are at most it) and
 * adjusted as BH does: the k-th smallest (from 1) times m' / k, kept
 * monotone from the largest down, m' the number kept. Without the discard,
 * hundreds of unchanged scopes would each raise the bar of the one that
 * changed. Those under the FDR are the discoveries.
 */
#define DIFF_LAMBDA 0.5
static void bh_adjust(double **p, size_t m)
{
	double run = 1;
	size_t kept = 0;

	if (!m)
		return;
	qsort(p, m, sizeof(*p), cmp_dbl_ptr);
	while (kept < m && *p[kept] <= DIFF_LAMBDA)
		kept++;
	for (size_t k = kept; k < m; k++)
		*p[k] = 1;
	for (size_t k = kept; k-- > 0;) {
		double adj = *p[k] / DIFF_LAMBDA * (double)kept / (double)(k + 1);

		run = adj < run ? adj : run;
		*p[k] = run;
	}
}

static bool is_sided(const struct pair *pr)
{
	return pr->present[0] && pr->present[1];
}

static void judge(struct pair *v, size_t n, const unsigned nr[2])
{
	double **ps = tt_xcalloc(2 * n * NR_VERDICT_METRICS + 1, sizeof(*ps));
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < NR_METRICS; k++) {
			struct test *t = &v[i].t[k];

			compare(&v[i], nr, (enum metric)k);
			p_beyond(t, threshold_pct, &t->p_up, &t->p_down);
			t->adj_up = t->p_up;
			t->adj_down = t->p_down;
		}
		for (size_t k = 0; k < nr_verdict_metrics(nr); k++) {
			struct test *t = &v[i].t[verdict_metrics[k]];

			if (!is_sided(&v[i]) || !t->judged)
				continue;
			ps[m++] = &t->adj_up;
			ps[m++] = &t->adj_down;
		}
	}
	/* Up and down are one family: a change is one or the other. */
	bh_adjust(ps, m);
	free(ps);
	for (size_t i = 0; i < n; i++) {
		struct pair *pr = &v[i];
		bool up = false, down = false, any = false;

		for (size_t k = 0; k < nr_verdict_metrics(nr); k++) {
			const struct test *t = &pr->t[verdict_metrics[k]];

			if (!t->judged)
				continue;
			any = true;
			up |= t->adj_up < DIFF_FDR;
			down |= t->adj_down < DIFF_FDR;
		}
		if (!pr->present[0] && pr->present[1])
			pr->verdict = V_NEW;
		else if (pr->present[0] && !pr->present[1])
			pr->verdict = V_GONE;
		else if (up)
			pr->verdict = V_SLOWER;
		else if (down)
			pr->verdict = V_FASTER;
		else if (!any)
			pr->verdict = V_FEW;
		else
			pr->verdict = V_SAME;
	}
}

/*
 * A rule's p-values, adjusted by Benjamini-Hochberg over the scopes judged
 * on its metric; trip[i] for those significantly worse by more than the
 * rule's percentage. New, gone and too-few-calls scopes never trip a rule.
 */
static void rule_trips(const struct pair *v, size_t n, const struct fail_rule *r, bool *trip,
		       double *adj)
{
	double **ps = tt_xcalloc(n + 1, sizeof(*ps)), down;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		trip[i] = false;
		adj[i] = 1;
		if (!is_sided(&v[i]) || !v[i].t[r->m].judged)
			continue;
		p_beyond(&v[i].t[r->m], r->pct, &adj[i], &down);
		ps[m++] = &adj[i];
	}
	bh_adjust(ps, m);
	free(ps);
	for (size_t i = 0; i < n; i++)
		trip[i] = is_sided(&v[i]) && v[i].t[r->m].judged && adj[i] < DIFF_FDR;
}

/* The two-sided DIFF_CI interval of the change of metric m, in %. */
static void change_ci(const struct test *t, double *lo, double *hi)
{
	double q = t->se > 0 ? t_quantile((1 - DIFF_CI) / 2, t->df) * t->se : 0;

	*lo = 100 * expm1(t->d - q);
	*hi = 100 * expm1(t->d + q);
}

static double change_pct(const struct pair *pr, enum metric m)
{
	double a = pr->shown[0][m], b = pr->shown[1][m];

	if (!pr->present[0] || !pr->present[1])
		return !a ? (b ? INFINITY : 0) : -100;
	if (m == M_CALLS)
		return a ? 100 * (b - a) / a : INFINITY;
	return 100 * expm1(pr->t[m].d);
}

static double total_change(const struct pair *pr)
{
	return fabs(pr->shown[1][M_TOTAL] - pr->shown[0][M_TOTAL]);
}

static int cmp_pairs(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	double ka = total_change(a), kb = total_change(b);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return cmp_key(a->thread, a->name, b->thread, b->name);
}

/* ---------------------------------------------------------------------
 * Output.
 */
static const enum metric shown[] = { M_TOTAL, M_P50, M_P90, M_P99 };
#define NR_SHOWN (sizeof(shown) / sizeof(shown[0]))

static uint64_t shown_u64(const struct pair *pr, int side, enum metric m)
{
	double x = pr->present[side] ? pr->shown[side][m] : 0;

	return x > 0 ? (uint64_t)llround(x) : 0;
}

static void csv_pct(const struct pair *pr, enum metric m)
{
	double ch = change_pct(pr, m);

	if (isfinite(ch))
		printf(",%.2f", ch);
	else
		fputc(',', stdout);
}

static void print_csv(const struct diff_args *a, const struct pair *v, size_t n)
{
	/* The headings of the cells below, from the same metrics. */
	if (a->o.by_thread)
		fputs("thread,", stdout);
	printf("function,%s_base,%s_new", metric_names[M_CALLS], metric_names[M_CALLS]);
	for (size_t k = 0; k < NR_SHOWN; k++) {
		const char *mn = metric_names[shown[k]];

		printf(",%s_base_ns,%s_new_ns,%s_change_percent", mn, mn, mn);
	}
	fputs(",verdict,runs_base,runs_new", stdout);
	fputs(a->o.by_site ? ",site\n" : "\n", stdout);
	for (size_t i = 0; i < n; i++) {
		const struct pair *pr = &v[i];

		if (a->o.by_thread) {
			tt_emit_csv_str(stdout, pr->thread ? pr->thread : "");
			fputc(',', stdout);
		}
		tt_emit_csv_str(stdout, pr->name);
		printf(",%" PRIu64 ",%" PRIu64, shown_u64(pr, 0, M_CALLS), shown_u64(pr, 1, M_CALLS));
		for (size_t k = 0; k < NR_SHOWN; k++) {
			printf(",%" PRIu64 ",%" PRIu64, shown_u64(pr, 0, shown[k]),
			       shown_u64(pr, 1, shown[k]));
			csv_pct(pr, shown[k]);
		}
		printf(",%s,%u,%u", verdict_names[pr->verdict], a->nr[0], a->nr[1]);
		if (pr->site) {
			fputc(',', stdout);
			tt_emit_csv_str(stdout, pr->site);
		}
		fputc('\n', stdout);
	}
}

static void json_num(double x)
{
	if (isfinite(x))
		printf("%.6g", x);
	else
		fputs("null", stdout);
}

static void json_side(const char *key, const struct tt_report *rep, const char *const *path,
		      unsigned nr)
{
	bool truncated = false, damaged = false;
	uint64_t dropped = 0;
	bool any_warning = false;

	printf("\"%s\":{\"file\":", key);
	tt_emit_json_str(stdout, path[0]);
	fputs(",\"files\":[", stdout);
	for (unsigned k = 0; k < nr; k++) {
		if (k)
			fputc(',', stdout);
		tt_emit_json_str(stdout, path[k]);
		truncated |= rep[k].tr.truncated;
		damaged |= rep[k].tr.nr_bad_frames || rep[k].tr.nr_lost_frames ||
			   rep[k].tr.nr_bad_blocks;
		dropped += rep[k].nr_dropped;
		any_warning |= rep[k].problems[0] != 0;
	}
	printf("],\"runs\":%u,\"truncated\":%s,\"damaged\":%s,\"dropped\":%" PRIu64
	       ",\"warning\":",
	       nr, truncated ? "true" : "false", damaged ? "true" : "false", dropped);
	for (unsigned k = 0; k < nr && any_warning; k++)
		if (rep[k].problems[0]) {
			tt_emit_json_str(stdout, rep[k].problems);
			break;
		}
	if (!any_warning)
		fputs("null", stdout);
	fputc('}', stdout);
}

static void print_json(const struct diff_args *a, struct tt_report *const rep[2],
		       const struct pair *v, size_t n)
{
	static const enum metric all[] = { M_CALLS, M_TOTAL, M_MEAN, M_P50, M_P90, M_P99 };
	bool single = a->nr[0] == 1 || a->nr[1] == 1;

	fputc('{', stdout);
	json_side("base", rep[0], a->path[0], a->nr[0]);
	fputc(',', stdout);
	json_side("new", rep[1], a->path[1], a->nr[1]);
	printf(",\"method\":\"%s\",\"run_to_run_noise\":%s,\"fdr\":%.2f,\"confidence\":%.2f,"
	       "\"threshold_percent\":",
	       single ? "within-run sampling error, benjamini-hochberg"
		      : "welch t on the runs' log statistics, benjamini-hochberg",
	       single ? "false" : "true", DIFF_FDR, DIFF_CI);
	json_num(a->threshold_pct);
	fputs(",\"functions\":[", stdout);
	for (size_t i = 0; i < n; i++) {
		const struct pair *pr = &v[i];

		fputs(i ? ",\n{" : "\n{", stdout);
		if (a->o.by_thread) {
			fputs("\"thread\":", stdout);
			tt_emit_json_str(stdout, pr->thread ? pr->thread : "");
			fputc(',', stdout);
		}
		fputs("\"function\":", stdout);
		tt_emit_json_str(stdout, pr->name);
		if (pr->site) {
			fputs(",\"site\":", stdout);
			tt_emit_json_str(stdout, pr->site);
		}
		printf(",\"verdict\":\"%s\"", verdict_names[pr->verdict]);
		for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
			const char *unit = all[k] == M_CALLS ? "" : "_ns";
			const char *mn = metric_names[all[k]];
			const struct test *t = &pr->t[all[k]];
			double lo, hi;

			printf(",\"%s_base%s\":%" PRIu64 ",\"%s_new%s\":%" PRIu64
			       ",\"%s_change_percent\":",
			       mn, unit, shown_u64(pr, 0, all[k]), mn, unit, shown_u64(pr, 1, all[k]),
			       mn);
			json_num(change_pct(pr, all[k]));
			if (!is_sided(pr))
				continue;
			printf(",\"%s_spread_base_percent\":", mn);
			json_num(a->nr[0] > 1 ? 100 * expm1(pr->spread[0][all[k]]) : NAN);
			printf(",\"%s_spread_new_percent\":", mn);
			json_num(a->nr[1] > 1 ? 100 * expm1(pr->spread[1][all[k]]) : NAN);
			printf(",\"%s_judged\":%s", mn, t->judged ? "true" : "false");
			if (!t->judged)
				continue;
			change_ci(t, &lo, &hi);
			printf(",\"%s_ci_percent\":[", mn);
			json_num(lo);
			fputc(',', stdout);
			json_num(hi);
			printf("],\"%s_p_slower\":", mn);
			json_num(t->adj_up);
			printf(",\"%s_p_faster\":", mn);
			json_num(t->adj_down);
		}
		if (a->nr_rules)
			printf(",\"regression\":%s", pr->regression ? "true" : "false");
		fputc('}', stdout);
	}
	fputs("\n]}\n", stdout);
}

static void table_cell(const char *s)
{
	fputc(' ', stdout);
	tt_emit_pad(stdout, s, 7, true);
}

static void table_pct(const struct pair *pr, enum metric m)
{
	double ch = change_pct(pr, m);
	char buf[32];

	if (m != M_TOTAL && !pr->t[m].judged)
		snprintf(buf, sizeof(buf), "few");
	else if (!isfinite(ch))
		snprintf(buf, sizeof(buf), "new");
	else if (fabs(ch) >= 1000)
		snprintf(buf, sizeof(buf), "%+.0fx", ch / 100 + 1);
	else
		snprintf(buf, sizeof(buf), "%+.1f%%", ch);
	table_cell(buf);
}

static void table_spread(double s)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "±%.1f%%", 100 * expm1(s));
	table_cell(buf);
}

static void print_name(const struct pair *pr)
{
	size_t width = tt_emit_width(pr->name);

	fputs(pr->name, stdout);
	if (pr->thread) {
		printf(" [%s]", pr->thread);
		width += 3 + tt_emit_width(pr->thread);
	}
	if (width < 65)
		printf("%*s", (int)(65 - width), "");
}

/*
 * Three lines per scope, five with several runs, so that every column fits
 * in 80: the name and the verdict, then each side's numbers (NEW's with the
 * changes beside them), each followed by the spread over its runs.
 */
static void print_table(const struct diff_args *a, struct tt_report *const rep[2],
			const struct pair *v, size_t n)
{
	size_t count[6] = { 0 };
	bool single = a->nr[0] == 1 || a->nr[1] == 1;
	char buf[32], line[256];

	printf("%-65s %14s\n", a->o.by_thread ? "function [thread]" : "function", "verdict");
	printf("%4s %9s", "", "calls");
	for (size_t k = 0; k < NR_SHOWN; k++)
		printf(" %7s %7s", metric_names[shown[k]], "change");
	fputc('\n', stdout);
	for (size_t i = 0; i < 80; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	for (size_t i = 0; i < n; i++) {
		const struct pair *pr = &v[i];

		count[pr->verdict]++;
		print_name(pr);
		printf(" %14s\n", verdict_names[pr->verdict]);
		for (int side = 0; side < 2; side++) {
			if (!pr->present[side]) { /* new or gone: nothing on this side */
				printf("%-4s %9s\n", side ? "new" : "base", "-");
				continue;
			}
			snprintf(buf, sizeof(buf), "%.0f", pr->shown[side][M_CALLS]);
			printf("%-4s %9s", side ? "new" : "base", buf);
			for (size_t k = 0; k < NR_SHOWN; k++) {
				tt_emit_fmt_duration(buf, sizeof(buf), shown_u64(pr, side, shown[k]));
				table_cell(buf);
				if (side && is_sided(pr))
					table_pct(pr, shown[k]);
				else if (k + 1 < NR_SHOWN)
					table_cell("");
			}
			fputc('\n', stdout);
			if (a->nr[side] < 2)
				continue;
			fputs("  ±           ", stdout); /* "±" is 2 bytes, 1 column */
			for (size_t k = 0; k < NR_SHOWN; k++) {
				table_spread(pr->spread[side][shown[k]]);
				if (k + 1 < NR_SHOWN)
					table_cell("");
			}
			fputc('\n', stdout);
		}
	}
	for (size_t i = 0; i < 80; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	printf("%zu scope name%s: %zu slower, %zu faster, %zu same, %zu new, %zu gone, "
	       "%zu too few calls\n",
	       n, n == 1 ? "" : "s", count[V_SLOWER], count[V_FASTER], count[V_SAME],
	       count[V_NEW], count[V_GONE], count[V_FEW]);
	printf("runs: %u base, %u new", a->nr[0], a->nr[1]);
	if (!single)
		printf("; values are the runs' means (geometric for times), ± the\n"
		       "spread of the runs (the geometric standard deviation)\n");
	else
		printf("\n");
	printf("slower/faster: the 95%% interval of the change of p50, p90, p99%s lies\n"
	       "beyond %g%% (%s, Benjamini-Hochberg)\n",
	       single ? "" : " or the mean", a->threshold_pct,
	       single ? "within-run sampling error" : "Welch's t over the runs");
	printf("few: too few calls in some run to judge that quantile (p50 20, p90 100, p99 1000)\n");
	if (single)
		printf("one run per side: the verdicts cannot account for run-to-run noise; "
		       "record each\nside several times and compare with diff BASE... -- NEW...\n");
	for (int side = 0; side < 2; side++) {
		for (unsigned k = 0; k < a->nr[side]; k++) {
			const struct tt_report *r = &rep[side][k];

			if (r->nr_dropped)
				printf("%s: %s: %" PRIu64 " dropped scopes\n", side ? "new" : "base",
				       a->path[side][k], r->nr_dropped);
			tt_report_comp_footer(r, line, sizeof(line));
			if (line[0])
				printf("%s: %s\n", side ? "new" : "base", line);
			if (r->problems[0])
				printf("warning: %s: %s\n", a->path[side][k], r->problems);
		}
	}
}

static void print_trip(const struct diff_args *a, const struct pair *pr,
		       const struct fail_rule *r)
{
	double lo, hi;

	fprintf(stderr, "tracetool: regression: %s", pr->name);
	if (pr->thread)
		fprintf(stderr, " [%s]", pr->thread);
	fprintf(stderr, ": %s %+.1f%% (limit +%g%%", metric_names[r->m], change_pct(pr, r->m),
		r->pct);
	if (pr->t[r->m].se > 0) {
		change_ci(&pr->t[r->m], &lo, &hi);
		fprintf(stderr, "; 95%% interval %+.1f%% to %+.1f%%", lo, hi);
	}
	fprintf(stderr, "; rule --fail-on=%s; runs %u/%u)\n", r->text, a->nr[0], a->nr[1]);
}

int tt_cmd_diff(int argc, char **argv)
{
	struct diff_args a = { .o = TT_OPTIONS_INIT, .format = TT_FORMAT_TABLE,
			       .threshold_pct = DIFF_DEFAULT_THRESHOLD_PCT };
	struct tt_report *rep[2] = { NULL, NULL };
	unsigned ran[2] = { 0, 0 };
	struct tt_options side;
	struct pair *v = NULL;
	struct tt_labels labels = { 0 };
	char **site_names = NULL; /* --by-site in a table: "name (place)" */
	bool *trip = NULL;
	double *adj = NULL;
	char msg[512];
	size_t n = 0;
	int rc = 0, nargs = argc;

	/* Everything after the first "--" is NEW (argp would lose where it was). */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			a.split = true;
			for (int k = i + 1; k < argc; k++)
				add_path(&a, 1, argv[k]);
			nargs = i;
			break;
		}
	argp_parse(&diff_argp, nargs, argv, 0, NULL, &a);
	for (int s = 0; s < 2; s++) {
		rep[s] = tt_xcalloc(a.nr[s], sizeof(*rep[s]));
		for (unsigned k = 0; k < a.nr[s]; k++) {
			side = a.o; /* the filters are shared; tt_options_fini() frees them once */
			side.trace = a.path[s][k];
			ran[s]++;
			if (tt_walk(&rep[s][k], &side, &tt_walk_stats, msg, sizeof(msg)) !=
			    TT_OK) {
				rc = tt_fail_file(a.path[s][k], msg);
				goto out;
			}
		}
	}
	for (int s = 0; s < 2; s++)
		for (unsigned k = 0; k < a.nr[s]; k++) {
			tt_trace_warn(&rep[s][k].tr);
			tt_trace_note_samples_only(&rep[s][k].tr);
			tt_report_comp_warn(&rep[s][k]);
		}
	if (a.nr_rules && (a.nr[0] == 1 || a.nr[1] == 1))
		fprintf(stderr, "tracetool: warning: one run per side: --fail-on cannot account "
				"for run-to-run noise (record each side several times: diff "
				"BASE... -- NEW...)\n");
	n = make_pairs(&a, rep, &v);
	/* Each pair printed by its label among the pairs (labels.h). */
	site_names = tt_xcalloc(n + 1, sizeof(*site_names));
	tt_labels_init(&labels);
	for (size_t i = 0; i < n; i++)
		tt_labels_add(&labels, v[i].name);
	tt_labels_finish(&labels);
	for (size_t i = 0; i < n; i++) {
		const char *key = v[i].name;

		/* --by-site: the name alone and the place apart (CSV's last
		 * column, JSON's "site"); a table shows "name (place)". */
		if (a.o.by_site && a.format != TT_FORMAT_TABLE) {
			v[i].name = tt_labels_name(&labels, key);
			v[i].site = tt_labels_site(&labels, key);
		} else if (a.o.by_site && tt_labels_site(&labels, key)[0]) {
			const char *nm = tt_labels_name(&labels, key), *site = tt_labels_site(&labels, key);
			size_t len = strlen(nm) + strlen(site) + 4;

			site_names[i] = tt_xrealloc(NULL, len);
			snprintf(site_names[i], len, "%s (%s)", nm, site);
			v[i].name = site_names[i];
		} else {
			v[i].name = tt_labels_shown(&labels, key);
		}
	}
	threshold_pct = a.threshold_pct;
	judge(v, n, a.nr);
	if (n)
		qsort(v, n, sizeof(*v), cmp_pairs);
	trip = tt_xcalloc(n * (a.nr_rules ? a.nr_rules : 1) + 1, sizeof(*trip));
	adj = tt_xcalloc(n + 1, sizeof(*adj));
	for (size_t k = 0; k < a.nr_rules; k++) {
		rule_trips(v, n, &a.rules[k], trip + k * n, adj);
		for (size_t i = 0; i < n; i++)
			v[i].regression |= trip[k * n + i];
	}
	if (a.format == TT_FORMAT_CSV)
		print_csv(&a, v, n);
	else if (a.format == TT_FORMAT_JSON)
		print_json(&a, rep, v, n);
	else
		print_table(&a, rep, v, n);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
		goto out;
	}
	/* One line per tripped rule and scope, after the report. */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < a.nr_rules; k++)
			if (trip[k * n + i]) {
				print_trip(&a, &v[i], &a.rules[k]);
				rc = 3;
			}
out:
	for (size_t i = 0; i < n; i++) {
		free(v[i].rs[0]);
		free(v[i].rs[1]);
	}
	free(v);
	for (size_t i = 0; site_names && i < n; i++)
		free(site_names[i]);
	free(site_names);
	tt_labels_fini(&labels);
	free(trip);
	free(adj);
	for (int s = 0; s < 2; s++) {
		for (unsigned k = 0; k < ran[s]; k++)
			tt_report_fini(&rep[s][k]);
		free(rep[s]);
		free(a.path[s]);
	}
	free(a.rules);
	tt_options_fini(&a.o);
	return rc;
}
