/* SPDX-License-Identifier: MIT */
/*
 * cmd_values.c - `tracetool values TRACE...` and `tracetool flows
 * TRACE...` (tracetool(1)): per value track, samples, min, max, the
 * time-weighted mean and the last value; per flow name, the begin-to-end
 * latencies and the flows left unfinished. As a table, CSV or JSON (a NaN
 * or an infinity is null in JSON, nan/inf in CSV). The
 * figures come from annots.c; this file parses the options and prints.
 */
#include <argp.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/annots.h"
#include "cmd/commands.h"
#include "common/emit.h"
#include "cmd/options.h"

static const struct argp_child annots_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_report_argp, 0, 0, 0 },
	{ 0 },
};

static error_t parse_annots(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		tt_options_inputs(state, annots_children, o);
		break;
	case ARGP_KEY_END:
		if (o->by_thread || o->by_process)
			argp_error(state, "--by-thread and --by-process do not apply: tracks and "
					  "flows belong to no thread");
		if (o->sort != TT_SORT_TOTAL)
			argp_error(state, "--sort does not apply: rows are sorted by name");
		return tt_options_parse_traces(key, arg, state);
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

static const struct argp values_argp = {
	NULL, parse_annots, "TRACE...",
	"Per value track (TRACE_VALUE): samples, min, max, the time-weighted mean and the "
	"last value.\v"
	"csv header: track,samples,min,max,mean,last. Each sample holds its value until the "
	"track's next sample, the last one until the end of the recording (or of --to); the "
	"mean weighs each value by that time. Integer tracks print min, max and last as "
	"integers; a track with a floating-point sample prints them as doubles.\n\n"
	"--function=REGEX selects track names, --thread the threads whose samples count, "
	"--from/--to the samples by their time. Several TRACE files: each file's track is "
	"weighed on its own clock, rows of the same name add up, last is the latest on "
	"the wall clock.",
	annots_children, 0, 0,
};

static const struct argp flows_argp = {
	NULL, parse_annots, "TRACE...",
	"Per flow name (TRACE_FLOW_BEGIN/STEP/END): the number of finished flows and their "
	"begin-to-end latency (min, mean, p50, p90, p99, max), and the flows left "
	"unfinished.\v"
	"csv header: flow,count,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns,unfinished. A "
	"flow is its name and 64-bit id; its begin and end may be on different threads. "
	"A begin with no end by the end of the recording (or a second begin of the same "
	"id before the end) is unfinished; an end with no begin is counted in json's "
	"orphan_ends only.\n\n"
	"--function=REGEX selects flow names, --thread the threads whose flow events "
	"count, --from/--to the flows by the time of their begin. Several TRACE files: "
	"flows pair within each file, rows of the same name add up.",
	annots_children, 0, 0,
};

static void print_value(bool dbl, int64_t i, double d)
{
	if (dbl)
		printf("%.17g", d);
	else
		printf("%" PRId64, i);
}

static void values_csv(const struct tt_annots *a)
{
	fputs("track,samples,min,max,mean,last\n", stdout);
	for (size_t k = 0; k < a->nr_values; k++) {
		const struct tt_value_row *r = &a->values[k];

		tt_emit_csv_str(stdout, r->track);
		printf(",%" PRIu64 ",", r->samples);
		print_value(r->is_double, r->min_i, r->min_d);
		fputc(',', stdout);
		print_value(r->is_double, r->max_i, r->max_d);
		printf(",%.15g,", tt_value_mean(r));
		print_value(r->is_double, r->last_i, r->last_d);
		fputc('\n', stdout);
	}
}

/* JSON has no NaN or infinity: such a figure is null there. */
static void json_value(bool dbl, int64_t i, double d)
{
	if (dbl && !isfinite(d))
		fputs("null", stdout);
	else
		print_value(dbl, i, d);
}

static void values_json(const struct tt_annots *a)
{
	fputs("{\"tracks\":[", stdout);
	for (size_t k = 0; k < a->nr_values; k++) {
		const struct tt_value_row *r = &a->values[k];

		fputs(k ? ",\n{\"track\":" : "\n{\"track\":", stdout);
		tt_emit_json_str(stdout, r->track);
		printf(",\"samples\":%" PRIu64 ",\"min\":", r->samples);
		json_value(r->is_double, r->min_i, r->min_d);
		fputs(",\"max\":", stdout);
		json_value(r->is_double, r->max_i, r->max_d);
		if (isfinite(tt_value_mean(r)))
			printf(",\"mean\":%.15g", tt_value_mean(r));
		else
			fputs(",\"mean\":null", stdout);
		fputs(",\"last\":", stdout);
		json_value(r->is_double, r->last_i, r->last_d);
		fputc('}', stdout);
	}
	printf("\n],\"truncated\":%s,\"damaged\":%s}\n", a->any_truncated ? "true" : "false",
	       a->any_damaged ? "true" : "false");
}

static void values_table(const struct tt_annots *a)
{
	char buf[4][40];

	printf("%-24s %9s %14s %14s %16s %14s\n", "track", "samples", "min", "max",
	       "mean (by time)", "last");
	for (size_t i = 0; i < 96; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	for (size_t k = 0; k < a->nr_values; k++) {
		const struct tt_value_row *r = &a->values[k];

		if (r->is_double) {
			snprintf(buf[0], sizeof(buf[0]), "%.6g", r->min_d);
			snprintf(buf[1], sizeof(buf[1]), "%.6g", r->max_d);
			snprintf(buf[3], sizeof(buf[3]), "%.6g", r->last_d);
		} else {
			snprintf(buf[0], sizeof(buf[0]), "%" PRId64, r->min_i);
			snprintf(buf[1], sizeof(buf[1]), "%" PRId64, r->max_i);
			snprintf(buf[3], sizeof(buf[3]), "%" PRId64, r->last_i);
		}
		snprintf(buf[2], sizeof(buf[2]), "%.6g", tt_value_mean(r));
		tt_emit_pad(stdout, r->track, 24, false);
		printf(" %9" PRIu64 " %14s %14s %16s %14s\n", r->samples, buf[0], buf[1], buf[2],
		       buf[3]);
	}
	for (size_t i = 0; i < 96; i++)
		fputc('-', stdout);
	printf("\n%zu value track%s\n", a->nr_values, a->nr_values == 1 ? "" : "s");
	if (a->problems[0])
		printf("warning: %s\n", a->problems);
}

struct flow_fig {
	uint64_t mean, p50, p90, p99, min;
};

static void flow_figures(const struct tt_flow_row *r, struct flow_fig *f)
{
	memset(f, 0, sizeof(*f));
	if (!r->count)
		return;
	f->min = r->min_ns;
	f->mean = (r->sum_ns + r->count / 2) / r->count;
	f->p50 = tt_flow_percentile(r, 0.50);
	f->p90 = tt_flow_percentile(r, 0.90);
	f->p99 = tt_flow_percentile(r, 0.99);
}

static void flows_csv(const struct tt_annots *a)
{
	fputs("flow,count,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns,unfinished\n", stdout);
	for (size_t k = 0; k < a->nr_flows; k++) {
		const struct tt_flow_row *r = &a->flows[k];
		struct flow_fig f;

		flow_figures(r, &f);
		tt_emit_csv_str(stdout, r->flow);
		printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		       ",%" PRIu64 ",%" PRIu64 "\n",
		       r->count, f.min, f.mean, f.p50, f.p90, f.p99, r->count ? r->max_ns : 0,
		       r->unfinished);
	}
}

static void flows_json(const struct tt_annots *a)
{
	fputs("{\"flows\":[", stdout);
	for (size_t k = 0; k < a->nr_flows; k++) {
		const struct tt_flow_row *r = &a->flows[k];
		struct flow_fig f;

		flow_figures(r, &f);
		fputs(k ? ",\n{\"flow\":" : "\n{\"flow\":", stdout);
		tt_emit_json_str(stdout, r->flow);
		printf(",\"count\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"mean_ns\":%" PRIu64
		       ",\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
		       ",\"max_ns\":%" PRIu64 ",\"unfinished\":%" PRIu64 ",\"steps\":%" PRIu64
		       ",\"orphan_ends\":%" PRIu64 "}",
		       r->count, f.min, f.mean, f.p50, f.p90, f.p99, r->count ? r->max_ns : 0,
		       r->unfinished, r->steps, r->orphan_ends);
	}
	printf("\n],\"unbound\":%" PRIu64 ",\"truncated\":%s,\"damaged\":%s}\n", a->nr_unbound,
	       a->any_truncated ? "true" : "false", a->any_damaged ? "true" : "false");
}

static void flows_table(const struct tt_annots *a)
{
	static const char *const heads[] = { "min", "mean", "p50", "p90", "p99", "max" };
	char buf[32];

	printf("%-24s %9s", "flow", "count");
	for (size_t i = 0; i < 6; i++)
		printf(" %7s", heads[i]);
	printf(" %10s\n", "unfinished");
	for (size_t i = 0; i < 24 + 10 + 48 + 11; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	for (size_t k = 0; k < a->nr_flows; k++) {
		const struct tt_flow_row *r = &a->flows[k];
		struct flow_fig f;

		flow_figures(r, &f);
		const uint64_t v[6] = { f.min, f.mean, f.p50, f.p90, f.p99, r->count ? r->max_ns : 0 };

		tt_emit_pad(stdout, r->flow, 24, false);
		printf(" %9" PRIu64, r->count);
		for (size_t i = 0; i < 6; i++) {
			tt_emit_fmt_duration(buf, sizeof(buf), v[i]);
			fputc(' ', stdout);
			tt_emit_pad(stdout, buf, 7, true);
		}
		printf(" %10" PRIu64 "\n", r->unfinished);
	}
	for (size_t i = 0; i < 24 + 10 + 48 + 11; i++)
		fputc('-', stdout);
	printf("\n%zu flow name%s; unfinished: begun and not ended by the end of the recording\n",
	       a->nr_flows, a->nr_flows == 1 ? "" : "s");
	if (a->problems[0])
		printf("warning: %s\n", a->problems);
}

static int run(int argc, char **argv, const struct argp *argp, unsigned what)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_annots a;
	const char *failed = NULL;
	char msg[512];
	int rc = 0;

	argp_parse(argp, argc, argv, 0, NULL, &o);
	if (tt_annots_run(&a, &o, what, &failed, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(failed ? failed : o.trace, msg);
		goto out;
	}
	if (what == TT_ANNOTS_VALUES) {
		if (o.format == TT_FORMAT_CSV)
			values_csv(&a);
		else if (o.format == TT_FORMAT_JSON)
			values_json(&a);
		else
			values_table(&a);
	} else {
		if (o.format == TT_FORMAT_CSV)
			flows_csv(&a);
		else if (o.format == TT_FORMAT_JSON)
			flows_json(&a);
		else
			flows_table(&a);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
	}
out:
	tt_annots_fini(&a);
	tt_options_fini(&o);
	return rc;
}

int tt_cmd_values(int argc, char **argv)
{
	return run(argc, argv, &values_argp, TT_ANNOTS_VALUES);
}

int tt_cmd_flows(int argc, char **argv)
{
	return run(argc, argv, &flows_argp, TT_ANNOTS_FLOWS);
}
