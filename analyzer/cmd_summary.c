/* SPDX-License-Identifier: MIT */
/*
 * cmd_summary.c - `tracetool summary TRACE`: one row per scope name with
 * calls, inclusive and self totals, min, mean, p50, p90, p99, max and errors
 * (contract §4-§5), as an 80-column table, CSV or JSON. The numbers come from
 * report.c; this file sorts, cuts (--top) and prints them.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "options.h"
#include "report.h"

enum { OPT_TOP = 0x200 };

static const struct argp_option summary_options[] = {
	{ "top", OPT_TOP, "N", 0, "Only the first N rows", 30 },
	{ 0 },
};

static error_t parse_summary(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = o;
		state->child_inputs[1] = o;
		break;
	case OPT_TOP:
		if (tt_options_parse_u64(arg, &o->top) || o->top == 0)
			argp_error(state, "--top: '%s' is not a positive number", arg);
		break;
	default:
		return tt_options_parse_trace(key, arg, state);
	}
	return 0;
}

static const struct argp_child summary_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_report_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp summary_argp = {
	summary_options, parse_summary, "TRACE",
	"Time spent in each scope name: calls, inclusive total, self time, min, mean, "
	"p50, p90, p99, max and errors, sorted by total.\v"
	"Times are nanoseconds in csv and json. Errors are activations that could not "
	"be timed (an exit without enter, an enter without exit, a clock going "
	"backwards); they are not counted in calls or times.\n\n"
	"Examples:\n"
	"  tracetool summary trace.zst\n"
	"  tracetool summary --format=csv --function='^worker_' trace.zst\n"
	"  tracetool summary --by-thread --from=1s --to=2.5s trace.zst",
	summary_children, 0, 0,
};

static enum tt_sort sort_key;

static uint64_t key_of(const struct tt_row *r)
{
	switch (sort_key) {
	case TT_SORT_SELF: return r->self_ns;
	case TT_SORT_CALLS: return r->calls;
	case TT_SORT_MEAN: return r->mean_ns;
	case TT_SORT_MAX: return r->max_ns;
	case TT_SORT_TOTAL: return r->total_ns;
	case TT_SORT_NAME: break;
	}
	return 0;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tt_row *a = pa, *b = pb;
	uint64_t ka = key_of(a), kb = key_of(b);
	int c;

	if (ka != kb)
		return ka > kb ? -1 : 1; /* numeric keys descending */
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->thread && b->thread)
		return strcmp(a->thread, b->thread);
	return 0;
}

static void print_csv(const struct tt_report *rep, size_t nr, bool by_thread)
{
	if (by_thread)
		fputs("thread,", stdout);
	fputs("function,calls,total_ns,self_ns,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,max_ns,errors\n",
	      stdout);
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];

		if (by_thread) {
			tt_emit_csv_str(stdout, r->thread);
			fputc(',', stdout);
		}
		tt_emit_csv_str(stdout, r->name);
		printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
		       r->calls, r->total_ns, r->self_ns, r->min_ns, r->mean_ns, r->p50_ns,
		       r->p90_ns, r->p99_ns, r->max_ns, r->errors);
	}
}

static void print_json(const struct tt_report *rep, size_t nr, bool by_thread)
{
	uint64_t calls = 0, errors = 0;

	fputs("{\"functions\":[", stdout);
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];

		calls += r->calls;
		errors += r->errors;
		fputs(i ? ",\n{" : "\n{", stdout);
		if (by_thread) {
			fputs("\"thread\":", stdout);
			tt_emit_json_str(stdout, r->thread);
			fputc(',', stdout);
		}
		fputs("\"function\":", stdout);
		tt_emit_json_str(stdout, r->name);
		printf(",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		       ",\"min_ns\":%" PRIu64 ",\"mean_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64
		       ",\"p90_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
		       ",\"errors\":%" PRIu64 "}",
		       r->calls, r->total_ns, r->self_ns, r->min_ns, r->mean_ns, r->p50_ns,
		       r->p90_ns, r->p99_ns, r->max_ns, r->errors);
	}
	printf("\n],\"calls\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"dropped\":%" PRIu64,
	       calls, errors, rep->nr_dropped);
	/* Only for recordings made with REC_MIN_NS, so 1.0 outputs stay as they were. */
	if (rep->tr.has_filtered)
		printf(",\"filtered\":%" PRIu64, rep->nr_filtered);
	printf(",\"truncated\":%s,\"damaged\":%s}\n", rep->tr.truncated ? "true" : "false",
	       rep->tr.nr_bad_frames || rep->tr.nr_lost_frames || rep->tr.nr_bad_blocks
		       ? "true" : "false");
}

/*
 * The table: each row is two lines so that every column fits in 80: the
 * (thread and) name, then the numbers under a two-line header.
 */
static void print_table(const struct tt_report *rep, size_t nr, bool by_thread)
{
	static const char *const heads[] = { "total", "self", "min", "mean", "p50",
					     "p90",   "p99",  "max" };
	uint64_t calls = 0, errors = 0;
	char buf[32];

	printf("%s\n", by_thread ? "thread: function" : "function");
	printf("%9s", "calls");
	for (size_t i = 0; i < 8; i++)
		printf(" %7s", heads[i]);
	printf(" %6s\n", "errors");
	for (size_t i = 0; i < 80; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];
		const uint64_t v[8] = { r->total_ns, r->self_ns, r->min_ns, r->mean_ns,
					r->p50_ns,   r->p90_ns,	 r->p99_ns, r->max_ns };

		calls += r->calls;
		errors += r->errors;
		if (by_thread)
			printf("%s: ", r->thread);
		printf("%s\n", r->name);
		printf("%9" PRIu64, r->calls);
		for (size_t k = 0; k < 8; k++) {
			tt_emit_fmt_duration(buf, sizeof(buf), v[k]);
			fputc(' ', stdout);
			tt_emit_pad(stdout, buf, 7, true);
		}
		printf(" %6" PRIu64 "\n", r->errors);
	}
	for (size_t i = 0; i < 80; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	printf("%zu of %zu scope name%s, %" PRIu64 " calls, %" PRIu64 " errors, %" PRIu64
	       " dropped scopes\n",
	       nr, rep->nr_rows, rep->nr_rows == 1 ? "" : "s", calls, errors, rep->nr_dropped);
	if (rep->tr.has_filtered)
		printf("%" PRIu64 " activations shorter than REC_MIN_NS not recorded (filtered)\n",
		       rep->nr_filtered);
	if (rep->problems[0])
		printf("warning: %s\n", rep->problems);
}

int tt_cmd_summary(int argc, char **argv)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_report rep;
	char msg[512];
	size_t nr;
	int rc = 0;

	argp_parse(&summary_argp, argc, argv, 0, NULL, &o);
	if (tt_report_run(&rep, &o, NULL, NULL, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(o.trace, msg);
		goto out;
	}
	sort_key = o.sort;
	if (rep.nr_rows) /* no rows: rows is NULL, which qsort may not take */
		qsort(rep.rows, rep.nr_rows, sizeof(*rep.rows), cmp_rows);
	nr = o.top && o.top < rep.nr_rows ? (size_t)o.top : rep.nr_rows;
	tt_trace_warn(&rep.tr);
	if (o.format == TT_FORMAT_CSV)
		print_csv(&rep, nr, o.by_thread);
	else if (o.format == TT_FORMAT_JSON)
		print_json(&rep, nr, o.by_thread);
	else
		print_table(&rep, nr, o.by_thread);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
	}
out:
	tt_report_fini(&rep);
	tt_options_fini(&o);
	return rc;
}
