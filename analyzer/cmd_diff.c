/* SPDX-License-Identifier: MIT */
/*
 * cmd_diff.c - `tracetool diff BASE NEW` (contract §8): per scope name the
 * calls, total, p50, p90 and p99 of two recordings, their changes in %, and
 * a verdict (slower, faster, same, new, gone) from a comparison of the two
 * duration distributions; `--fail-on=METRIC:+PCT` turns a significant
 * regression into exit 3. Both files go through report.c's pipeline (the
 * same rows as summary, under the same filters); this file owns only the
 * comparison and its output. The test (Mann-Whitney U on the histograms'
 * buckets, Holm's correction, a practical threshold on the Hodges-Lehmann
 * estimate of the ratio of durations and on the p10 floor) is explained in
 * docs/ANALYZER.md, "diff".
 */
#include <argp.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "labels.h"
#include "hist.h"
#include "options.h"
#include "report.h"
#include "xalloc.h"

enum { OPT_FORMAT = 0x300, OPT_FAIL_ON, OPT_THRESHOLD };

enum metric { M_TOTAL, M_MEAN, M_P50, M_P90, M_P99, M_CALLS, NR_METRICS };
static const char *const metric_names[NR_METRICS] = { "total", "mean", "p50",
						      "p90",   "p99",  "calls" };

struct fail_rule {
	enum metric m;
	double pct;
};

struct diff_args {
	struct tt_options o; /* the shared filters; o.trace is set per side */
	const char *path[2]; /* BASE, NEW */
	unsigned nr_paths;
	enum tt_format format;
	double threshold_pct; /* practical significance of the median's change */
	struct fail_rule *rules;
	size_t nr_rules;
};

/* The family-wise confidence of the verdicts (contract §8: 95 %). */
#define DIFF_ALPHA 0.05
#define DIFF_DEFAULT_THRESHOLD_PCT 5.0
/* The floor: the quantile that load on the machine hardly moves. */
#define DIFF_FLOOR_Q 0.10

enum verdict { V_SAME, V_SLOWER, V_FASTER, V_NEW, V_GONE };
static const char *const verdict_names[] = { "same", "slower", "faster", "new", "gone" };

struct pair {
	const struct tt_row *r[2]; /* base, new; NULL where the name is absent */
	const char *name;
	uint64_t v[2][NR_METRICS];  /* metric values in ns (calls for M_CALLS) */
	bool tested;		    /* both sides have timed calls */
	double p, p_holm;	    /* two-sided p-value of U, and after Holm */
	double superiority;	    /* P(new > base) + P(tie) / 2 */
	double shift_pct;	    /* Hodges-Lehmann estimate of new / base - 1, in % */
	uint64_t floor_ns[2];	    /* p10 of each side: where the unhindered calls are */
	enum verdict verdict;
	bool regression; /* some --fail-on rule tripped */
};

static const struct argp_option diff_options[] = {
	{ "format", OPT_FORMAT, "FMT", 0, "Output as table (default), csv or json", 20 },
	{ "fail-on", OPT_FAIL_ON, "METRIC:+PCT", 0,
	  "Exit 3 when some scope's METRIC (total, mean, p50, p90, p99, calls) is "
	  "significantly worse by more than PCT % (repeatable)", 20 },
	{ "threshold", OPT_THRESHOLD, "PCT", 0,
	  "Smallest typical change of a duration (Hodges-Lehmann estimate, in %) that a "
	  "verdict slower/faster reports (default 5)", 20 },
	{ 0 },
};

static int parse_pct(const char *s, double *pct)
{
	char *end;

	if (!*s)
		return -1;
	*pct = strtod(s, &end);
	return *end || !(*pct >= 0) || *pct > 1e9 ? -1 : 0;
}

static error_t parse_diff(int key, char *arg, struct argp_state *state)
{
	struct diff_args *a = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->o;
		state->child_inputs[1] = &a->o;
		break;
	case OPT_FORMAT:
		if (strcmp(arg, "table") == 0)
			a->format = TT_FORMAT_TABLE;
		else if (strcmp(arg, "csv") == 0)
			a->format = TT_FORMAT_CSV;
		else if (strcmp(arg, "json") == 0)
			a->format = TT_FORMAT_JSON;
		else
			argp_error(state, "--format: '%s' is not table, csv or json", arg);
		break;
	case OPT_THRESHOLD:
		if (parse_pct(arg, &a->threshold_pct))
			argp_error(state, "--threshold: '%s' is not a percentage like 5 or 2.5", arg);
		break;
	case OPT_FAIL_ON: {
		const char *colon = strchr(arg, ':');
		struct fail_rule r = { NR_METRICS, 0 };

		for (int m = 0; colon && m < NR_METRICS; m++)
			if (strlen(metric_names[m]) == (size_t)(colon - arg) &&
			    strncmp(arg, metric_names[m], (size_t)(colon - arg)) == 0)
				r.m = (enum metric)m;
		if (r.m == NR_METRICS || colon[1] != '+' || parse_pct(colon + 2, &r.pct))
			argp_error(state,
				   "--fail-on: '%s' is not METRIC:+PCT with METRIC one of total, "
				   "mean, p50, p90, p99, calls (e.g. p90:+10)",
				   arg);
		a->rules = tt_xrealloc(a->rules, (a->nr_rules + 1) * sizeof(*a->rules));
		a->rules[a->nr_rules++] = r;
		break;
	}
	case ARGP_KEY_ARG:
		if (a->nr_paths == 2)
			argp_error(state, "two trace files only: BASE and NEW");
		a->path[a->nr_paths++] = arg;
		break;
	case ARGP_KEY_END:
		if (a->nr_paths != 2)
			argp_error(state, "missing %s", a->nr_paths ? "NEW" : "BASE and NEW");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_child diff_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_cost_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp diff_argp = {
	diff_options, parse_diff, "BASE NEW",
	"What changed between two recordings, per scope name: calls, total, p50, p90 "
	"and p99 on both sides, the change in %, and a verdict slower, faster, same, "
	"new or gone.\v"
	"A verdict slower or faster needs both: the two duration distributions differ "
	"at 95 % confidence (Mann-Whitney U on the histograms, Holm-corrected over all "
	"scopes compared), and both the typical duration (the Hodges-Lehmann estimate of "
	"the ratio NEW / BASE) and the floor (p10) moved by at least --threshold % (load "
	"on the machine slows some calls, a change to the code all of them). The filters "
	"apply to both files. Rows are sorted by the size of the total's change.\n\n"
	"Examples:\n"
	"  tracetool diff base.zst new.zst\n"
	"  tracetool diff --fail-on=p90:+10 --fail-on=calls:+5 base.zst new.zst\n"
	"  tracetool diff --format=csv --function='^parse' base.zst new.zst\n\n"
	"Exit status: 0 success, 1 a trace is unreadable or damaged, 2 wrong usage, "
	"3 a --fail-on rule found a regression.",
	diff_children, 0, 0,
};

/* ---------------------------------------------------------------------
 * The distributions: each row's histogram as sorted (value in ns, count).
 */
struct bin {
	uint64_t ns;
	uint64_t count;
};

/*
 * A row's histogram as bins in ascending order, each bucket read at its
 * midpoint (clamped to the exact min and max) and converted to ns with its
 * own file's clock, so that files with different tick rates compare. Buckets
 * that land on one ns value become one bin. This is the only place that
 * reads the histogram's layout. Return: the number of bins.
 */
static size_t bins_of(const struct tt_row *r, const struct tt_clock *c, struct bin **out)
{
	const struct tt_stat *s = &r->st;
	struct bin *b = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (!s->calls || !s->hist)
		return 0;
	for (uint32_t i = 0; i < TT_HIST_NR_BUCKETS; i++) {
		uint64_t lo, hi, mid, ns, count = tt_hist_count(s->hist, i);

		if (!count)
			continue;
		lo = tt_hist_bucket_lo(i);
		hi = tt_hist_bucket_max(i);
		mid = lo + (hi - lo) / 2;
		mid = mid < s->min_ticks ? s->min_ticks : mid > s->max_ticks ? s->max_ticks : mid;
		ns = tt_clock_ns(c, mid);
		if (n && b[n - 1].ns == ns) {
			b[n - 1].count += count;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			b = tt_xrealloc(b, cap * sizeof(*b));
		}
		b[n].ns = ns;
		b[n].count = count;
		n++;
	}
	*out = b;
	return n;
}

/* The nearest-rank quantile q of the bins. */
static uint64_t bins_quantile(const struct bin *b, size_t n, double q)
{
	uint64_t total = 0, seen = 0, rank;

	for (size_t i = 0; i < n; i++)
		total += b[i].count;
	rank = (uint64_t)ceil(q * (double)total);
	rank = rank ? rank : 1;
	for (size_t i = 0; i < n; i++) {
		seen += b[i].count;
		if (seen >= rank)
			return b[i].ns;
	}
	return n ? b[n - 1].ns : 0;
}

/*
 * Mann-Whitney U of NEW against BASE from their bins: values in one bin are
 * ties and get their mid-rank, and the variance carries the tie correction.
 * Normal approximation with a continuity correction (n of a few is enough:
 * at tiny n the p-value only errs on the side of "same").
 * Sets p (two-sided) and superiority = U / (n1 n2).
 */
static void mann_whitney(const struct bin *a, size_t na, const struct bin *b, size_t nb,
			 double *p, double *superiority)
{
	double n1 = 0, n2 = 0, u = 0, below_a = 0, ties = 0, mean, var, z, nn;
	size_t i = 0, j = 0;

	for (size_t k = 0; k < na; k++)
		n1 += (double)a[k].count;
	for (size_t k = 0; k < nb; k++)
		n2 += (double)b[k].count;
	while (i < na || j < nb) {
		uint64_t v = i < na && (j >= nb || a[i].ns <= b[j].ns) ? a[i].ns : b[j].ns;
		double ca = i < na && a[i].ns == v ? (double)a[i++].count : 0;
		double cb = j < nb && b[j].ns == v ? (double)b[j++].count : 0;
		double t = ca + cb;

		u += cb * (below_a + ca / 2);
		below_a += ca;
		ties += t * t * t - t;
	}
	*superiority = u / (n1 * n2);
	nn = n1 + n2;
	mean = n1 * n2 / 2;
	var = n1 * n2 / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
	if (!(var > 0)) { /* every duration in one bin on both sides */
		*p = 1;
		return;
	}
	z = fabs(u - mean) - 0.5;
	z = z < 0 ? 0 : z / sqrt(var);
	*p = erfc(z / sqrt(2.0));
}

/* Pairs (x in a, y in b) with log(1 + y) - log(1 + x) <= d, weighted by
 * their counts. la and lb are the bins' logs, ascending. */
static double pairs_at_most(const double *la, const struct bin *a, size_t na, const double *lb,
			    const struct bin *b, size_t nb, double d)
{
	double at_least = 0, count = 0; /* of a's values >= lb[j] - d */
	size_t i = 0;

	/* As j rises, lb[j] - d rises: the a-values above it only shrink. */
	for (size_t k = 0; k < na; k++)
		at_least += (double)a[k].count;
	for (size_t j = 0; j < nb; j++) {
		while (i < na && la[i] < lb[j] - d)
			at_least -= (double)a[i++].count;
		count += (double)b[j].count * at_least;
	}
	return count;
}

/*
 * The Hodges-Lehmann estimate of the shift of log durations from BASE to
 * NEW: the median of log(1 + y) - log(1 + x) over all n1 n2 pairs, found by
 * bisection on the shift (each step counts the pairs below it in one merge,
 * O(bins), so no pair is listed). The estimator that belongs to the
 * Mann-Whitney test: the shift at which U would sit at its mean. Return:
 * the ratio minus 1, in %.
 */
static double hodges_lehmann_pct(const struct bin *a, size_t na, const struct bin *b, size_t nb)
{
	double *la = tt_xcalloc(na + 1, sizeof(double)), *lb = tt_xcalloc(nb + 1, sizeof(double));
	double n1 = 0, n2 = 0, lo, hi;

	for (size_t k = 0; k < na; k++) {
		la[k] = log1p((double)a[k].ns);
		n1 += (double)a[k].count;
	}
	for (size_t k = 0; k < nb; k++) {
		lb[k] = log1p((double)b[k].ns);
		n2 += (double)b[k].count;
	}
	lo = lb[0] - la[na - 1];
	hi = lb[nb - 1] - la[0];
	/* The smallest d with at least half the pairs at or below it; 60
	 * halvings of a range under 90 (log of 2^64) leave < 1e-16. */
	for (int it = 0; it < 60 && hi - lo > 1e-9; it++) {
		double mid = lo + (hi - lo) / 2;

		if (pairs_at_most(la, a, na, lb, b, nb, mid) >= n1 * n2 / 2)
			hi = mid;
		else
			lo = mid;
	}
	free(la);
	free(lb);
	return 100.0 * expm1(hi);
}

/* ---------------------------------------------------------------------
 * Pairs, verdicts and --fail-on.
 */
static double change_pct(uint64_t base, uint64_t now)
{
	if (!base)
		return now ? INFINITY : 0;
	return 100.0 * ((double)now - (double)base) / (double)base;
}

static void fill_values(struct pair *pr, int side)
{
	const struct tt_row *r = pr->r[side];
	uint64_t *v = pr->v[side];

	if (!r)
		return;
	v[M_TOTAL] = r->total_ns;
	v[M_MEAN] = r->mean_ns;
	v[M_P50] = r->p50_ns;
	v[M_P90] = r->p90_ns;
	v[M_P99] = r->p99_ns;
	v[M_CALLS] = r->calls;
}

/*
 * The key two recordings' rows are matched by (docs/ANALYZER.md, "Names"):
 * the scope's name alone where each side has exactly one scope of that name,
 * so that a scope whose line moved between the two builds is still one
 * scope; else the name and its place.
 */
struct mrow {
	const struct tt_row *r;
	const char *key; /* the row's name, or a copy of its name part (own) */
	char *own;
	int side;
};

static size_t name_part(const char *key)
{
	const char *sep = strchr(key, TT_SITE_SEP);

	return sep ? (size_t)(sep - key) : strlen(key);
}

static bool same_name(const char *a, const char *b)
{
	size_t na = name_part(a);

	return na == name_part(b) && memcmp(a, b, na) == 0;
}

static int cmp_name_part(const void *pa, const void *pb)
{
	const struct mrow *a = pa, *b = pb;
	size_t na = name_part(a->r->name), nb = name_part(b->r->name);
	int c = memcmp(a->r->name, b->r->name, na < nb ? na : nb);

	if (c)
		return c;
	if (na != nb)
		return na < nb ? -1 : 1;
	return a->side - b->side;
}

static int cmp_mrow(const void *pa, const void *pb)
{
	const struct mrow *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	return c ? c : a->side - b->side;
}

static int cmp_p(const void *pa, const void *pb)
{
	const struct pair *const *a = pa, *const *b = pb;

	return (*a)->p < (*b)->p ? -1 : (*a)->p > (*b)->p ? 1 : 0;
}

static uint64_t total_change(const struct pair *pr)
{
	uint64_t a = pr->v[0][M_TOTAL], b = pr->v[1][M_TOTAL];

	return a > b ? a - b : b - a;
}

static int cmp_pairs(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	uint64_t ka = total_change(a), kb = total_change(b);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Rows of both reports matched by scope (one row per scope: no --by-thread). */
static size_t make_pairs(const struct tt_report *rep, struct pair **out)
{
	size_t nr0 = rep[0].nr_rows, nr1 = rep[1].nr_rows, nr = nr0 + nr1, n = 0;
	struct mrow *m = tt_xcalloc(nr + 1, sizeof(*m));
	struct pair *v;

	for (size_t r = 0; r < nr; r++) {
		m[r].side = r >= nr0;
		m[r].r = &rep[m[r].side].rows[r >= nr0 ? r - nr0 : r];
		m[r].key = m[r].r->name;
	}
	if (nr)
		qsort(m, nr, sizeof(*m), cmp_name_part);
	for (size_t g = 0, e; g < nr; g = e) {
		for (e = g + 1; e < nr && same_name(m[g].r->name, m[e].r->name); e++)
			;
		/* One scope of the name on each side: matched by the name. */
		if (e - g == 2 && m[g].side == 0 && m[g + 1].side == 1)
			for (size_t k = g; k < e; k++)
				m[k].key = m[k].own = tt_xstrndup(m[k].r->name, name_part(m[k].r->name));
	}
	if (nr)
		qsort(m, nr, sizeof(*m), cmp_mrow);
	v = tt_xcalloc(nr + 1, sizeof(*v));
	for (size_t i = 0; i < nr; n++) {
		struct pair *pr = &v[n];
		bool both = i + 1 < nr && m[i].side == 0 && m[i + 1].side == 1 &&
			    strcmp(m[i].key, m[i + 1].key) == 0;

		pr->r[m[i].side] = m[i].r;
		if (both)
			pr->r[1] = m[i + 1].r;
		/* The new side's scope names the pair: its place is the current one. */
		pr->name = pr->r[1] ? pr->r[1]->name : pr->r[0]->name;
		fill_values(pr, 0);
		fill_values(pr, 1);
		i += both ? 2 : 1;
	}
	for (size_t r = 0; r < nr; r++)
		free(m[r].own);
	free(m);
	*out = v;
	return n;
}

static double threshold_pct; /* --threshold */

/*
 * Significantly slower: the distributions differ (after Holm), NEW's
 * durations tend to be the larger, and the floor (p10) rose by the
 * threshold too. Load on the machine (preemption, a busy sibling
 * hyperthread, a lower clock) only adds time to some calls: it moves the
 * body and the tail of a distribution but leaves the unhindered calls at
 * the bottom where they were, while a change to the code moves them all
 * (docs/ANALYZER.md, "diff").
 */
static bool sig_slower(const struct pair *pr)
{
	return pr->tested && pr->p_holm < DIFF_ALPHA && pr->superiority > 0.5 &&
	       change_pct(pr->floor_ns[0], pr->floor_ns[1]) >= threshold_pct;
}

static bool sig_faster(const struct pair *pr)
{
	return pr->tested && pr->p_holm < DIFF_ALPHA && pr->superiority < 0.5 &&
	       -change_pct(pr->floor_ns[0], pr->floor_ns[1]) >= threshold_pct;
}

static void judge(struct pair *v, size_t n, const struct tt_report *rep)
{
	struct pair **order = tt_xcalloc(n + 1, sizeof(*order));
	size_t m = 0;
	double run = 0;

	for (size_t i = 0; i < n; i++) {
		struct pair *pr = &v[i];
		struct bin *a, *b;
		size_t na, nb;

		pr->p = pr->p_holm = 1;
		pr->superiority = 0.5;
		if (!pr->v[0][M_CALLS] || !pr->v[1][M_CALLS])
			continue;
		na = bins_of(pr->r[0], &rep[0].clock, &a);
		nb = bins_of(pr->r[1], &rep[1].clock, &b);
		mann_whitney(a, na, b, nb, &pr->p, &pr->superiority);
		pr->shift_pct = hodges_lehmann_pct(a, na, b, nb);
		pr->floor_ns[0] = bins_quantile(a, na, DIFF_FLOOR_Q);
		pr->floor_ns[1] = bins_quantile(b, nb, DIFF_FLOOR_Q);
		free(a);
		free(b);
		pr->tested = true;
		order[m++] = pr;
	}
	/* Holm's step-down: the k-th smallest p (from 0) times m - k, kept
	 * monotone; the family-wise error of all verdicts stays under alpha. */
	if (m)
		qsort(order, m, sizeof(*order), cmp_p);
	for (size_t k = 0; k < m; k++) {
		double adj = order[k]->p * (double)(m - k);

		run = adj > run ? adj : run;
		order[k]->p_holm = run > 1 ? 1 : run;
	}
	free(order);
	for (size_t i = 0; i < n; i++) {
		struct pair *pr = &v[i];
		if (!pr->v[0][M_CALLS] && pr->v[1][M_CALLS])
			pr->verdict = V_NEW;
		else if (pr->v[0][M_CALLS] && !pr->v[1][M_CALLS])
			pr->verdict = V_GONE;
		else if (sig_slower(pr) && pr->shift_pct >= threshold_pct)
			pr->verdict = V_SLOWER;
		else if (sig_faster(pr) && -pr->shift_pct >= threshold_pct)
			pr->verdict = V_FASTER;
		else
			pr->verdict = V_SAME;
	}
}

/*
 * Whether rule r trips on pr: the metric rose by more than r->pct, and the
 * rise is significant. For the duration metrics that is sig_slower(); the
 * total also rises when the code runs more often, and call counts are exact,
 * so a total whose call count alone rose by more than r->pct trips it too;
 * calls need no test. New and gone scopes have no change to measure.
 */
static bool rule_trips(const struct pair *pr, const struct fail_rule *r)
{
	double ch = change_pct(pr->v[0][r->m], pr->v[1][r->m]);

	if (!pr->v[0][M_CALLS] || !pr->v[1][M_CALLS] || !(ch > r->pct))
		return false;
	switch (r->m) {
	case M_CALLS:
		return true;
	case M_TOTAL:
		return sig_slower(pr) || change_pct(pr->v[0][M_CALLS], pr->v[1][M_CALLS]) > r->pct;
	default:
		return sig_slower(pr);
	}
}

/* ---------------------------------------------------------------------
 * Output.
 */
static const enum metric shown[] = { M_TOTAL, M_P50, M_P90, M_P99 };
#define NR_SHOWN (sizeof(shown) / sizeof(shown[0]))

static void csv_pct(uint64_t base, uint64_t now)
{
	double ch = change_pct(base, now);

	if (isfinite(ch))
		printf(",%.2f", ch);
	else
		fputc(',', stdout);
}

static void print_csv(const struct pair *v, size_t n)
{
	fputs("function,calls_base,calls_new,total_base_ns,total_new_ns,total_change_percent,"
	      "p50_base_ns,p50_new_ns,p50_change_percent,p90_base_ns,p90_new_ns,"
	      "p90_change_percent,p99_base_ns,p99_new_ns,p99_change_percent,verdict\n",
	      stdout);
	for (size_t i = 0; i < n; i++) {
		const struct pair *pr = &v[i];

		tt_emit_csv_str(stdout, pr->name);
		printf(",%" PRIu64 ",%" PRIu64, pr->v[0][M_CALLS], pr->v[1][M_CALLS]);
		for (size_t k = 0; k < NR_SHOWN; k++) {
			printf(",%" PRIu64 ",%" PRIu64, pr->v[0][shown[k]], pr->v[1][shown[k]]);
			csv_pct(pr->v[0][shown[k]], pr->v[1][shown[k]]);
		}
		printf(",%s\n", verdict_names[pr->verdict]);
	}
}

static void json_num(double x)
{
	if (isfinite(x))
		printf("%.6g", x);
	else
		fputs("null", stdout);
}

static void json_side(const char *key, const struct tt_report *rep, const char *path)
{
	printf("\"%s\":{\"file\":", key);
	tt_emit_json_str(stdout, path);
	printf(",\"truncated\":%s,\"damaged\":%s,\"dropped\":%" PRIu64 ",\"warning\":",
	       rep->tr.truncated ? "true" : "false",
	       rep->tr.nr_bad_frames || rep->tr.nr_lost_frames || rep->tr.nr_bad_blocks ? "true"
											: "false",
	       rep->nr_dropped);
	if (rep->problems[0])
		tt_emit_json_str(stdout, rep->problems);
	else
		fputs("null", stdout);
	fputc('}', stdout);
}

static void print_json(const struct diff_args *a, const struct tt_report *rep,
		       const struct pair *v, size_t n)
{
	fputc('{', stdout);
	json_side("base", &rep[0], a->path[0]);
	fputc(',', stdout);
	json_side("new", &rep[1], a->path[1]);
	printf(",\"method\":\"mann-whitney-u, holm\",\"alpha\":%.2f,\"threshold_percent\":",
	       DIFF_ALPHA);
	json_num(a->threshold_pct);
	fputs(",\"functions\":[", stdout);
	for (size_t i = 0; i < n; i++) {
		const struct pair *pr = &v[i];
		static const enum metric all[] = { M_CALLS, M_TOTAL, M_MEAN, M_P50, M_P90, M_P99 };

		fputs(i ? ",\n{\"function\":" : "\n{\"function\":", stdout);
		tt_emit_json_str(stdout, pr->name);
		printf(",\"verdict\":\"%s\"", verdict_names[pr->verdict]);
		for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
			const char *unit = all[k] == M_CALLS ? "" : "_ns";
			const char *mn = metric_names[all[k]];

			printf(",\"%s_base%s\":%" PRIu64 ",\"%s_new%s\":%" PRIu64
			       ",\"%s_change_percent\":",
			       mn, unit, pr->v[0][all[k]], mn, unit, pr->v[1][all[k]], mn);
			json_num(change_pct(pr->v[0][all[k]], pr->v[1][all[k]]));
		}
		fputs(",\"p_value\":", stdout);
		if (pr->tested)
			json_num(pr->p);
		else
			fputs("null", stdout);
		fputs(",\"p_adjusted\":", stdout);
		if (pr->tested)
			json_num(pr->p_holm);
		else
			fputs("null", stdout);
		fputs(",\"superiority\":", stdout);
		if (pr->tested)
			json_num(pr->superiority);
		else
			fputs("null", stdout);
		fputs(",\"shift_percent\":", stdout);
		if (pr->tested) {
			json_num(pr->shift_pct);
			printf(",\"p10_base_ns\":%" PRIu64 ",\"p10_new_ns\":%" PRIu64,
			       pr->floor_ns[0], pr->floor_ns[1]);
		} else {
			fputs("null", stdout);
		}
		if (a->nr_rules)
			printf(",\"regression\":%s", pr->regression ? "true" : "false");
		fputc('}', stdout);
	}
	fputs("\n]}\n", stdout);
}

static void table_pct(uint64_t base, uint64_t now)
{
	double ch = change_pct(base, now);
	char buf[32];

	if (!isfinite(ch))
		snprintf(buf, sizeof(buf), "new");
	else if (fabs(ch) >= 1000)
		snprintf(buf, sizeof(buf), "%+.0fx", ch / 100 + 1);
	else
		snprintf(buf, sizeof(buf), "%+.1f%%", ch);
	printf(" %7s", buf);
}

/*
 * Three lines per scope, so that every column fits in 80: the name and the
 * verdict, then BASE's numbers, then NEW's with the changes beside them.
 */
static void print_table(const struct diff_args *a, const struct tt_report *rep,
			const struct pair *v, size_t n)
{
	static const char *const heads[] = { "total", "p50", "p90", "p99" };
	size_t count[5] = { 0 };
	char buf[32], line[256];

	printf("%-72s %7s\n", "function", "verdict");
	printf("%4s %9s", "", "calls");
	for (size_t k = 0; k < NR_SHOWN; k++)
		printf(" %7s %7s", heads[k], "change");
	fputc('\n', stdout);
	for (size_t i = 0; i < 80; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	for (size_t i = 0; i < n; i++) {
		const struct pair *pr = &v[i];

		count[pr->verdict]++;
		fputs(pr->name, stdout);
		if (tt_emit_width(pr->name) < 72)
			printf("%*s", (int)(72 - tt_emit_width(pr->name)), "");
		printf(" %7s\n", verdict_names[pr->verdict]);
		for (int side = 0; side < 2; side++) {
			if (!pr->r[side]) { /* new or gone: nothing on this side */
				printf("%-4s %9s\n", side ? "new" : "base", "-");
				continue;
			}
			printf("%-4s %9" PRIu64, side ? "new" : "base", pr->v[side][M_CALLS]);
			for (size_t k = 0; k < NR_SHOWN; k++) {
				tt_emit_fmt_duration(buf, sizeof(buf), pr->v[side][shown[k]]);
				fputc(' ', stdout);
				tt_emit_pad(stdout, buf, 7, true);
				if (side && pr->r[0] && pr->r[1])
					table_pct(pr->v[0][shown[k]], pr->v[1][shown[k]]);
				else if (k + 1 < NR_SHOWN)
					printf(" %7s", "");
			}
			fputc('\n', stdout);
		}
	}
	for (size_t i = 0; i < 80; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	printf("%zu scope name%s: %zu slower, %zu faster, %zu same, %zu new, %zu gone\n", n,
	       n == 1 ? "" : "s", count[V_SLOWER], count[V_FASTER], count[V_SAME], count[V_NEW],
	       count[V_GONE]);
	printf("slower/faster: Mann-Whitney U, Holm-adjusted p < %.2f, and both the typical\n"
	       "duration (Hodges-Lehmann) and the p10 floor moved by at least %g%%\n",
	       DIFF_ALPHA, a->threshold_pct);
	for (int side = 0; side < 2; side++) {
		if (rep[side].nr_dropped)
			printf("%s: %" PRIu64 " dropped scopes\n", side ? "new" : "base",
			       rep[side].nr_dropped);
		tt_report_comp_footer(&rep[side], line, sizeof(line));
		if (line[0])
			printf("%s: %s\n", side ? "new" : "base", line);
		if (rep[side].problems[0])
			printf("warning: %s: %s\n", a->path[side], rep[side].problems);
	}
}

int tt_cmd_diff(int argc, char **argv)
{
	struct diff_args a = { .o = TT_OPTIONS_INIT, .format = TT_FORMAT_TABLE,
			       .threshold_pct = DIFF_DEFAULT_THRESHOLD_PCT };
	struct tt_report rep[2];
	struct tt_options side;
	struct pair *v = NULL;
	struct tt_labels labels = { 0 };
	bool ran[2] = { false, false };
	char msg[512];
	size_t n = 0;
	int rc = 0;

	argp_parse(&diff_argp, argc, argv, 0, NULL, &a);
	for (int k = 0; k < 2; k++) {
		side = a.o; /* the filters are shared; tt_options_fini() frees them once */
		side.trace = a.path[k];
		ran[k] = true;
		if (tt_report_run(&rep[k], &side, NULL, NULL, msg, sizeof(msg)) != TT_OK) {
			rc = tt_fail_file(a.path[k], msg);
			goto out;
		}
	}
	tt_trace_warn(&rep[0].tr);
	tt_trace_warn(&rep[1].tr);
	tt_report_comp_warn(&rep[0]);
	tt_report_comp_warn(&rep[1]);
	n = make_pairs(rep, &v);
	/* Each pair printed by its label among the pairs (labels.h). */
	tt_labels_init(&labels);
	for (size_t i = 0; i < n; i++)
		tt_labels_add(&labels, v[i].name);
	tt_labels_finish(&labels);
	for (size_t i = 0; i < n; i++)
		v[i].name = tt_labels_shown(&labels, v[i].name);
	threshold_pct = a.threshold_pct;
	judge(v, n, rep);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < a.nr_rules; k++)
			v[i].regression |= rule_trips(&v[i], &a.rules[k]);
	if (n)
		qsort(v, n, sizeof(*v), cmp_pairs);
	if (a.format == TT_FORMAT_CSV)
		print_csv(v, n);
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
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < a.nr_rules; k++) {
			const struct fail_rule *r = &a.rules[k];

			if (!rule_trips(&v[i], r))
				continue;
			fprintf(stderr, "tracetool: regression: %s: %s %+.1f%% (limit +%g%%)\n",
				v[i].name, metric_names[r->m],
				change_pct(v[i].v[0][r->m], v[i].v[1][r->m]), r->pct);
			rc = 3;
		}
	}
out:
	free(v);
	tt_labels_fini(&labels);
	for (int k = 0; k < 2; k++)
		if (ran[k])
			tt_report_fini(&rep[k]);
	free(a.rules);
	tt_options_fini(&a.o);
	return rc;
}
