/* SPDX-License-Identifier: MIT */
/*
 * cmd_histogram.c - `tracetool histogram TRACE`: per scope name, the
 * distribution of durations in log-scaled buckets, drawn as bars sized to the
 * terminal, or as CSV/JSON (tracetool(1), histogram; buckets are half-open
 * [lo_ns, hi_ns)). Display buckets are unions of hist.h's fine buckets, so
 * their counts are exact in ticks; edges are converted to ns with the file's
 * clock, and display buckets whose ns edges coincide are merged.
 */
#include <argp.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "common/emit.h"
#include "common/hist.h"
#include "views/labels.h"
#include "cmd/options.h"
#include "engine/front.h"
#include "engine/report.h"

static struct tt_labels labels; /* the rows' names (labels.h) */

#define MAX_BINS 200

enum { OPT_BINS = 0x400 };

static const struct argp_option histogram_options[] = {
	{ "bins", OPT_BINS, "N", 0,
	  "N log-spaced buckets between each name's min and max (default: one per "
	  "power of two, at most 40)", 30 },
	{ 0 },
};

static const struct argp_child histogram_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_cost_argp, 0, 0, 0 },
	{ &tt_report_argp, 0, 0, 0 },
	{ 0 },
};

static error_t parse_histogram(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;
	uint64_t v;

	switch (key) {
	case ARGP_KEY_INIT:
		tt_options_inputs(state, histogram_children, o);
		break;
	case OPT_BINS:
		if (tt_options_parse_u64(arg, &v) || v == 0 || v > MAX_BINS)
			argp_error(state, "--bins: '%s' is not a number from 1 to %d", arg,
				   MAX_BINS);
		o->nr_bins = (unsigned)v;
		break;
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

static const struct argp histogram_argp = {
	histogram_options, parse_histogram, "TRACE...",
	"The distribution of each scope name's durations in log-scaled buckets, "
	"drawn as bars as wide as the terminal ($COLUMNS).\v"
	"Buckets are half-open, [lo, hi). csv columns: function,lo_ns,hi_ns,count.\n\n"
	"Examples:\n"
	"  tracetool histogram --function='^parse$' trace.zst\n"
	"  tracetool histogram --bins=10 --format=csv trace.zst\n"
	"  tracetool histogram --by-process trace-1234.zst trace-1235.zst\n\n"
	"Several TRACE files make one distribution per scope name (--by-process: per "
	"process NAME[PID] and name, csv column 'process' first).",
	histogram_children, 0, 0,
};

struct bin {
	uint64_t lo_ns, hi_ns, count;
};

/* Display buckets of one row; returns how many. */
static size_t make_bins(const struct tt_row *r, const struct tt_clock *c, unsigned want,
			uint64_t step_ticks, struct bin *bins)
{
	const struct tt_stat *s = &r->st;
	uint32_t edges[MAX_BINS + 2];
	size_t nr_edges = 0, nr = 0;
	uint64_t lo, hi;
	unsigned n = want;

	if (!s->calls || !s->hist)
		return 0;
	lo = s->min_ticks ? s->min_ticks : 1;
	hi = s->max_ticks + 1;
	if (!n) {
		double p = log2((double)hi / (double)lo);

		n = p < 1 ? 1 : p > 40 ? 40 : (unsigned)ceil(p);
	}
	edges[nr_edges++] = tt_hist_index(s->min_ticks);
	for (unsigned i = 1; i < n; i++) {
		double e = (double)lo * pow((double)hi / (double)lo, (double)i / n);
		uint32_t idx = tt_hist_index((uint64_t)(e + 0.5));

		/* No bin narrower than the clock's step: it could only be empty
		 * or hold the same values as its neighbour. */
		if (tt_hist_bucket_lo(idx) - tt_hist_bucket_lo(edges[nr_edges - 1]) < step_ticks)
			continue;
		if (idx > edges[nr_edges - 1])
			edges[nr_edges++] = idx;
	}
	edges[nr_edges++] = tt_hist_index(s->max_ticks) + 1;
	for (size_t i = 0; i + 1 < nr_edges; i++) {
		uint64_t count = 0, lo_ns, hi_ns;

		for (uint32_t k = edges[i]; k < edges[i + 1]; k++)
			count += tt_hist_count(s->hist, k);
		lo_ns = tt_clock_ns(c, tt_hist_bucket_lo(edges[i]));
		hi_ns = edges[i + 1] >= TT_HIST_NR_BUCKETS
				? UINT64_MAX
				: tt_clock_ns(c, tt_hist_bucket_lo(edges[i + 1]));
		if (nr && bins[nr - 1].hi_ns >= hi_ns) {
			bins[nr - 1].count += count; /* edges met in ns: merge */
			continue;
		}
		if (nr && lo_ns < bins[nr - 1].hi_ns)
			lo_ns = bins[nr - 1].hi_ns;
		bins[nr].lo_ns = lo_ns;
		bins[nr].hi_ns = hi_ns;
		bins[nr].count = count;
		nr++;
	}
	return nr;
}

/*
 * The clock's step as the durations show it: the smallest nonzero duration
 * of any activation, in ticks (durations are multiples of the step of the
 * clock that stamped them; values below 256 ticks are exact buckets).
 */
static uint64_t clock_step(const struct tt_report *rep)
{
	uint64_t step = UINT64_MAX;

	for (size_t i = 0; i < rep->nr_rows; i++) {
		const struct tt_stat *s = &rep->rows[i].st;

		for (uint32_t k = 1; s->calls && k < 256 && k < step; k++)
			if (tt_hist_count(s->hist, k)) {
				step = k;
				break;
			}
	}
	return step == UINT64_MAX ? 1 : step;
}

static void print_bars(const struct tt_row *r, const struct bin *bins, size_t nr,
		       unsigned columns)
{
	uint64_t max = 0;
	char a[32], b[32], label[80];
	size_t width;

	for (size_t i = 0; i < nr; i++)
		if (bins[i].count > max)
			max = bins[i].count;
	if (r->process)
		printf("%s: ", r->process);
	if (r->thread)
		printf("%s: ", r->thread);
	tt_emit_fmt_duration(a, sizeof(a), r->p50_ns);
	tt_emit_fmt_duration(b, sizeof(b), r->p99_ns);
	printf("%s  (%" PRIu64 " calls, p50 %s, p99 %s)\n", tt_labels_shown(&labels, r->name), r->calls, a, b);
	/* "[  1.23µs,   2.46µs) 1234567890 |" is 34 columns before the bar. */
	width = columns > 44 ? columns - 35 : 10;
	for (size_t i = 0; i < nr; i++) {
		size_t len;

		tt_emit_fmt_duration(a, sizeof(a), bins[i].lo_ns);
		tt_emit_fmt_duration(b, sizeof(b), bins[i].hi_ns);
		fputs("  [", stdout);
		tt_emit_pad(stdout, a, 7, true);
		fputs(", ", stdout);
		tt_emit_pad(stdout, b, 7, true);
		snprintf(label, sizeof(label), ") %10" PRIu64 " |", bins[i].count);
		fputs(label, stdout);
		len = max ? (size_t)((bins[i].count * (unsigned __int128)width + max - 1) / max) : 0;
		for (size_t k = 0; k < len; k++)
			fputs("\u2588", stdout);
		fputc('\n', stdout);
	}
	fputc('\n', stdout);
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct tt_row *a = pa, *b = pb;
	int c;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	c = strcmp(a->name, b->name);
	if (!c && a->process && b->process)
		c = strcmp(a->process, b->process);
	if (!c && a->thread && b->thread)
		c = strcmp(a->thread, b->thread);
	return c;
}

int tt_cmd_histogram(int argc, char **argv)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_report rep;
	struct tt_walk_spec spec = tt_walk_stats;
	struct bin bins[MAX_BINS + 2];
	unsigned columns = tt_emit_terminal_columns();
	uint64_t step;
	char msg[512];
	int rc = 0;

	argp_parse(&histogram_argp, argc, argv, 0, NULL, &o);
	spec.window_index = true; /* a window reads only its frames (engine/index.h) */
	if (tt_walk(&rep, &o, &spec, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(tt_report_failed(&rep, &o), msg);
		goto out;
	}
	tt_report_warn(&rep);
	tt_report_comp_warn(&rep);
	tt_labels_add_names(&labels, rep.tr.names, rep.tr.nr_names);
	tt_labels_finish(&labels);
	if (rep.nr_rows) /* no rows: rows is NULL, which qsort may not take */
		qsort(rep.rows, rep.nr_rows, sizeof(*rep.rows), cmp_name);
	step = clock_step(&rep);
	if (o.format == TT_FORMAT_CSV)
		printf("%s%sfunction,lo_ns,hi_ns,count\n", o.by_process ? "process," : "",
		       o.by_thread ? "thread," : "");
	else if (o.format == TT_FORMAT_JSON)
		fputs("{\"functions\":[", stdout);
	for (size_t i = 0; i < rep.nr_rows; i++) {
		const struct tt_row *r = &rep.rows[i];
		size_t nr = make_bins(r, &rep.clock, o.nr_bins, step, bins);

		if (o.format == TT_FORMAT_CSV) {
			for (size_t k = 0; k < nr; k++) {
				if (o.by_process) {
					tt_emit_csv_str(stdout, r->process);
					fputc(',', stdout);
				}
				if (o.by_thread) {
					tt_emit_csv_str(stdout, r->thread);
					fputc(',', stdout);
				}
				tt_emit_csv_str(stdout, tt_labels_shown(&labels, r->name));
				printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", bins[k].lo_ns,
				       bins[k].hi_ns, bins[k].count);
			}
		} else if (o.format == TT_FORMAT_JSON) {
			fputs(i ? ",\n{" : "\n{", stdout);
			if (o.by_process) {
				fputs("\"process\":", stdout);
				tt_emit_json_str(stdout, r->process);
				fputc(',', stdout);
			}
			if (o.by_thread) {
				fputs("\"thread\":", stdout);
				tt_emit_json_str(stdout, r->thread);
				fputc(',', stdout);
			}
			fputs("\"function\":", stdout);
			tt_emit_json_str(stdout, tt_labels_shown(&labels, r->name));
			printf(",\"calls\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"buckets\":[",
			       r->calls, r->errors);
			for (size_t k = 0; k < nr; k++)
				printf("%s{\"lo_ns\":%" PRIu64 ",\"hi_ns\":%" PRIu64
				       ",\"count\":%" PRIu64 "}",
				       k ? "," : "", bins[k].lo_ns, bins[k].hi_ns, bins[k].count);
			fputs("]}", stdout);
		} else if (nr) {
			print_bars(r, bins, nr, columns);
		}
	}
	if (o.format == TT_FORMAT_JSON)
		fputs("\n]}\n", stdout);
	if (o.format == TT_FORMAT_TABLE) {
		tt_report_comp_footer(&rep, msg, sizeof(msg));
		if (msg[0])
			printf("%s\n", msg);
		if (rep.problems[0])
			printf("warning: %s\n", rep.problems);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
	}
out:
	tt_labels_fini(&labels);
	tt_report_fini(&rep);
	tt_options_fini(&o);
	return rc;
}
