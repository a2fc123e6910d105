/* SPDX-License-Identifier: MIT */
/*
 * cmd_summary.c - `tracetool summary TRACE`: one row per scope name with
 * calls, inclusive and self totals, min, mean, p50, p90, p99, max and errors
 * (tracetool(1), summary), as a table (a line per row when the terminal is wide
 * enough, else two), CSV or JSON. The numbers come from
 * report.c; this file sorts, cuts (--top) and prints them.
 */
#include <argp.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "views/ctrs.h"
#include "common/emit.h"
#include "views/intervals.h"
#include "cmd/options.h"
#include "views/labels.h"
#include "engine/front.h"
#include "engine/report.h"
#include "common/xalloc.h"

enum { OPT_TOP = 0x200, OPT_INTERVAL, OPT_ARG };

static const struct argp_option summary_options[] = {
	{ "top", OPT_TOP, "N", 0, "Only the first N rows (per interval and thread with --interval)",
	  30 },
	{ "interval", OPT_INTERVAL, "DUR", 0,
	  "Per interval of DUR (e.g. 1s) and thread: each scope's time inside the interval, "
	  "its share of it and its calls",
	  30 },
	{ "arg", OPT_ARG, "KEY", 0,
	  "Per scope, the total and the mean of the argument KEY (TRACE_ARG) over the "
	  "activations that carry it (repeatable; csv columns KEY_total,KEY_mean after errors)",
	  30 },
	{ 0 },
};

static error_t parse_summary(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		tt_options_inputs(state, tt_report_children, o);
		break;
	case OPT_INTERVAL:
		if (tt_options_parse_time(arg, &o->interval_ns) || o->interval_ns == 0)
			argp_error(state, "--interval: '%s' is not a duration like 1s or 250ms", arg);
		break;
	case OPT_ARG:
		if (!*arg)
			argp_error(state, "--arg: the key is empty");
		if (o->nr_arg_keys == TT_MAX_ARG_KEYS)
			argp_error(state, "--arg: at most %d keys", TT_MAX_ARG_KEYS);
		o->arg_keys = tt_xrealloc(o->arg_keys, (o->nr_arg_keys + 1) * sizeof(*o->arg_keys));
		o->arg_keys[o->nr_arg_keys++] = arg;
		break;
	case OPT_TOP:
		if (tt_options_parse_u64(arg, &o->top) || o->top == 0)
			argp_error(state, "--top: '%s' is not a positive number", arg);
		break;
	case ARGP_KEY_END:
		if (o->interval_ns && tt_options_multi(o))
			argp_error(state, "--interval takes one TRACE, without --by-process");
		/* --interval splits activations by their timestamps: a time on
		 * the clock, which compensation cannot move (docs/ANALYZER.md). */
		if (o->interval_ns && o->compensate)
			argp_error(state, "--compensate does not apply to --interval");
		if (o->interval_ns && o->nr_arg_keys)
			argp_error(state, "--arg does not apply to --interval");
		return tt_options_parse_traces(key, arg, state);
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

static const struct argp summary_argp = {
	summary_options, parse_summary, "TRACE...",
	"Time spent in each scope name: calls, inclusive total, self time, min, mean, "
	"p50, p90, p99, max and errors, sorted by total.\v"
	"Times are nanoseconds in csv and json. Errors are activations that could not "
	"be timed (an exit without enter, an enter without exit, a clock going "
	"backwards); they are not counted in calls or times.\n\n"
	"Examples:\n"
	"  tracetool summary trace.zst\n"
	"  tracetool summary --format=csv --function='^worker_' trace.zst\n"
	"  tracetool summary --by-thread --from=1s --to=2.5s trace.zst\n"
	"  tracetool summary --interval=1s --format=csv trace.zst\n"
	"  tracetool summary --by-process trace-1234.zst trace-1235.zst\n\n"
	"Several TRACE files make one report: rows of the same scope name add up "
	"across them (each file's times with its own clock); --by-process keeps "
	"one row per process, NAME[PID], in a first column 'process'.\n\n"
	"A trace recorded with REC_COUNTERS adds, per counter, the inclusive total and "
	"the mean per call (csv columns NAME_total and NAME_mean after errors), and ipc, "
	"branch-miss-rate and cache-miss-rate where their counters were recorded.\n\n"
	"--arg=KEY adds, per scope, the sum of the values of TRACE_ARG(KEY, v) over the "
	"activations that carry it (a key set twice in one activation counts its last "
	"value) and their mean per carrying activation: csv KEY_total,KEY_mean after errors "
	"(empty when none carries it), json \"args\":{\"KEY\":{\"total\",\"mean\"}|null}.",
	tt_report_children, 0, 0,
};

static enum tt_sort sort_key;

static uint64_t key_of(const struct tt_row *r)
{
	switch (sort_key) {
	case TT_SORT_SELF: return r->self_ns;
	case TT_SORT_CALLS: return r->calls;
	case TT_SORT_MEAN: return r->mean_ns;
	case TT_SORT_MIN: return r->min_ns;
	case TT_SORT_P50: return r->p50_ns;
	case TT_SORT_P90: return r->p90_ns;
	case TT_SORT_P99: return r->p99_ns;
	case TT_SORT_MAX: return r->max_ns;
	case TT_SORT_TOTAL: return r->total_ns;
	case TT_SORT_NAME: break;
	}
	return 0;
}

static const struct tt_options *opts;
static struct tt_labels labels; /* the rows' names (labels.h) */

/*
 * What a row prints as its function: the name, told apart by its place
 * where several rows share it ("init (a.c:12)"); with --by-site the name
 * alone in CSV and JSON, which add a column `site`, and in a table always
 * "name (file:line)".
 */
static const char *rname(const struct tt_row *r)
{
	static char buf[4][2 * RECFMT_MAX_NAME_BYTES + 64];
	static unsigned next;
	const char *site;

	if (!opts->by_site)
		return tt_labels_shown(&labels, r->name);
	if (opts->format != TT_FORMAT_TABLE)
		return tt_labels_name(&labels, r->name);
	site = tt_labels_site(&labels, r->name);
	if (!site[0])
		return tt_labels_name(&labels, r->name);
	next = (next + 1) % 4;
	snprintf(buf[next], sizeof(buf[next]), "%s (%s)", tt_labels_name(&labels, r->name), site);
	return buf[next];
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tt_row *a = pa, *b = pb;
	uint64_t ka = key_of(a), kb = key_of(b);
	int c;

	if (ka != kb)
		return ka > kb ? -1 : 1; /* numeric keys descending */
	c = strcmp(rname(a), rname(b)); /* as printed (labels.h) */
	if (c)
		return c;
	if (a->process && b->process && (c = strcmp(a->process, b->process)) != 0)
		return c;
	if (a->thread && b->thread)
		return strcmp(a->thread, b->thread);
	return 0;
}

/*
 * Counter figures (docs/ANALYZER.md, "Counters"): per counter the
 * inclusive total and the mean per call; derived ratios of totals where
 * both counters were recorded.
 */
static const struct derived {
	const char *name, *num, *den;
} derived[] = {
	{ "ipc", "instructions", "cycles" },
	{ "branch-miss-rate", "branch-misses", "branches" },
	{ "cache-miss-rate", "cache-misses", "cache-references" },
};
#define NR_DERIVED (sizeof(derived) / sizeof(derived[0]))

static const struct tt_ctrs *ctrs; /* NULL: the trace has no counters */
static const struct tt_ctrs *argsrc; /* NULL: no --arg */
/* The CSV headings NAME_total,NAME_mean of an argument or a counter.
 * RFC 4180 quotes the whole field: "a,b_total", not "a,b"_total. */
static void csv_total_mean_header(const char *name)
{
	size_t n = strlen(name);
	char *field = tt_xrealloc(NULL, n + sizeof("_total"));

	memcpy(field, name, n);
	memcpy(field + n, "_total", sizeof("_total"));
	fputc(',', stdout);
	tt_emit_csv_str(stdout, field);
	memcpy(field + n, "_mean", sizeof("_mean"));
	fputc(',', stdout);
	tt_emit_csv_str(stdout, field);
	free(field);
}

/* summary --arg KEY (docs/ANALYZER.md, "Annotations"). */
static void csv_arg_header(void)
{
	for (uint32_t k = 0; argsrc && k < opts->nr_arg_keys; k++)
		csv_total_mean_header(opts->arg_keys[k]);
}

static double arg_mean(const struct tt_ctr_agg *a, uint32_t k)
{
	return (double)a->arg_sum[k] / (double)a->arg_n[k];
}

static void csv_arg_cells(const struct tt_row *r)
{
	struct tt_ctr_agg a;

	if (!argsrc)
		return;
	tt_ctrs_lookup(argsrc, opts, r->process, r->thread, r->name, &a);
	for (uint32_t k = 0; k < opts->nr_arg_keys; k++) {
		if (a.arg_n[k])
			printf(",%" PRId64 ",%.2f", a.arg_sum[k], arg_mean(&a, k));
		else
			fputs(",,", stdout);
	}
}

static void json_args(const struct tt_row *r)
{
	struct tt_ctr_agg a;

	if (!argsrc)
		return;
	tt_ctrs_lookup(argsrc, opts, r->process, r->thread, r->name, &a);
	fputs(",\"args\":{", stdout);
	for (uint32_t k = 0; k < opts->nr_arg_keys; k++) {
		if (k)
			fputc(',', stdout);
		tt_emit_json_str(stdout, opts->arg_keys[k]);
		if (a.arg_n[k])
			printf(":{\"total\":%" PRId64 ",\"mean\":%.2f}", a.arg_sum[k],
			       arg_mean(&a, k));
		else
			fputs(":null", stdout);
	}
	fputc('}', stdout);
}

/* A section of the table after its rows: its title over a rule. */
static void table_section(const char *title)
{
	printf("\n%s\n", title);
	for (size_t i = 0; i < 80; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
}

/* A row's prefix, "process: thread: " as it applies. */
static void table_prefix(const struct tt_row *r, bool by_thread)
{
	if (r->process)
		printf("%s: ", r->process);
	if (by_thread)
		printf("%s: ", r->thread);
}

/* The table's arguments section: a line per key under each name. */
static void table_args(const struct tt_report *rep, size_t nr, bool by_thread)
{
	if (!argsrc)
		return;
	table_section("arguments: total and mean per activation that carries the key");
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];
		struct tt_ctr_agg a;
		bool any = false;

		tt_ctrs_lookup(argsrc, opts, r->process, r->thread, r->name, &a);
		for (uint32_t k = 0; k < opts->nr_arg_keys; k++)
			any |= a.arg_n[k] != 0;
		if (!any)
			continue;
		table_prefix(r, by_thread);
		printf("%s\n", rname(r));
		for (uint32_t k = 0; k < opts->nr_arg_keys; k++) {
			if (!a.arg_n[k])
				continue;
			fputs("  ", stdout);
			tt_emit_pad(stdout, opts->arg_keys[k], 24, false);
			printf(" %16" PRId64 " total %14.2f mean over %" PRIu64 "\n", a.arg_sum[k],
			       arg_mean(&a, k), a.arg_n[k]);
		}
	}
}

static bool derived_exists(size_t d)
{
	return tt_ctrs_find(ctrs, derived[d].num) != UINT32_MAX &&
	       tt_ctrs_find(ctrs, derived[d].den) != UINT32_MAX;
}

/* Return: false if a ratio cannot be computed (no counts, or a zero). */
static bool derived_value(size_t d, const struct tt_ctr_agg *a, double *v)
{
	uint32_t n = tt_ctrs_find(ctrs, derived[d].num), k = tt_ctrs_find(ctrs, derived[d].den);

	if (!a->n[n] || !a->n[k] || !a->total[k])
		return false;
	*v = (double)a->total[n] / (double)a->total[k];
	return true;
}

static double mean_of(const struct tt_ctr_agg *a, uint32_t g)
{
	return (double)a->sum[g] / (double)a->n[g];
}

static void csv_counter_header(void)
{
	for (uint32_t g = 0; ctrs && g < tt_ctrs_count(ctrs); g++)
		csv_total_mean_header(tt_ctrs_name(ctrs, g));
	for (size_t d = 0; ctrs && d < NR_DERIVED; d++)
		if (derived_exists(d))
			printf(",%s", derived[d].name);
}

static void csv_counter_cells(const struct tt_row *r)
{
	struct tt_ctr_agg a;
	double v;

	if (!ctrs)
		return;
	tt_ctrs_lookup(ctrs, opts, r->process, r->thread, r->name, &a);
	for (uint32_t g = 0; g < tt_ctrs_count(ctrs); g++) {
		if (a.n[g])
			printf(",%" PRIu64 ",%.2f", a.total[g], mean_of(&a, g));
		else
			fputs(",,", stdout);
	}
	for (size_t d = 0; d < NR_DERIVED; d++) {
		if (!derived_exists(d))
			continue;
		if (derived_value(d, &a, &v))
			printf(",%.4f", v);
		else
			fputc(',', stdout);
	}
}

static void json_counters(const struct tt_row *r)
{
	struct tt_ctr_agg a;
	double v;

	if (!ctrs)
		return;
	tt_ctrs_lookup(ctrs, opts, r->process, r->thread, r->name, &a);
	fputs(",\"counters\":{", stdout);
	for (uint32_t g = 0; g < tt_ctrs_count(ctrs); g++) {
		if (g)
			fputc(',', stdout);
		tt_emit_json_str(stdout, tt_ctrs_name(ctrs, g));
		if (a.n[g])
			printf(":{\"total\":%" PRIu64 ",\"mean\":%.2f}", a.total[g], mean_of(&a, g));
		else
			fputs(":null", stdout);
	}
	fputc('}', stdout);
	for (size_t d = 0; d < NR_DERIVED; d++) {
		if (!derived_exists(d))
			continue;
		printf(",\"%s\":", derived[d].name);
		if (derived_value(d, &a, &v))
			printf("%.4f", v);
		else
			fputs("null", stdout);
	}
}

/* The table's counters section: a line per counter under each name. */
static void table_counters(const struct tt_report *rep, size_t nr, bool by_thread)
{
	if (!ctrs || !tt_ctrs_count(ctrs))
		return;
	table_section("counters: inclusive total and mean per call");
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];
		struct tt_ctr_agg a;
		bool any = false;
		double v;

		tt_ctrs_lookup(ctrs, opts, r->process, r->thread, r->name, &a);
		for (uint32_t g = 0; g < tt_ctrs_count(ctrs); g++)
			any |= a.n[g] != 0;
		if (!any)
			continue;
		table_prefix(r, by_thread);
		printf("%s\n", rname(r));
		for (uint32_t g = 0; g < tt_ctrs_count(ctrs); g++) {
			if (!a.n[g])
				continue;
			printf("  %-24s %16" PRIu64 " total %14.2f per call\n", tt_ctrs_name(ctrs, g),
			       a.total[g], mean_of(&a, g));
		}
		for (size_t d = 0; d < NR_DERIVED; d++) {
			if (!derived_exists(d) || !derived_value(d, &a, &v))
				continue;
			if (d == 0)
				printf("  %-24s %16.3f\n", derived[d].name, v);
			else
				printf("  %-24s %15.2f%%\n", derived[d].name, 100.0 * v);
		}
	}
}

/*
 * A row's columns, one list for the three outputs, so that they cannot
 * disagree: CSV writes a heading and a cell for each, JSON a member, and
 * the table prints the numbers under their headings (the names make the
 * row's label there). What only some outputs have is theirs: the site
 * (--by-site; JSON after the names, CSV last so that the other columns keep
 * their places), the arguments and the counters (CSV and JSON),
 * left_without_exit and maybe_dropped (JSON), the [*] mark (the table).
 */
enum col_kind { COL_COUNT, COL_DURATION };

struct name_col {
	const char *key; /* CSV heading and JSON member */
	const char *(*of)(const struct tt_row *r);
	bool (*shown)(bool by_thread); /* NULL: always */
};

struct num_col {
	const char *key;  /* CSV heading and JSON member */
	const char *head; /* table heading */
	int width;	  /* table: right-aligned, after a space but the first */
	enum col_kind kind; /* table: a count as it is, a duration formatted */
	size_t offset;	  /* of its uint64_t in struct tt_row */
};

static const char *row_process(const struct tt_row *r)
{
	return r->process;
}

static const char *row_thread(const struct tt_row *r)
{
	return r->thread;
}

static bool by_process(bool by_thread)
{
	(void)by_thread;
	return opts->by_process;
}

static bool thread_shown(bool by_thread)
{
	return by_thread;
}

static const struct name_col name_cols[] = {
	{ "process", row_process, by_process },
	{ "thread", row_thread, thread_shown },
	{ "function", rname, NULL },
};
#define NR_NAME_COLS (sizeof(name_cols) / sizeof(name_cols[0]))

#define NUM_COL(key, head, width, kind, field) \
	{ key, head, width, kind, offsetof(struct tt_row, field) }

static const struct num_col num_cols[] = {
	NUM_COL("calls", "calls", 9, COL_COUNT, calls),
	NUM_COL("total_ns", "total", 7, COL_DURATION, total_ns),
	NUM_COL("self_ns", "self", 7, COL_DURATION, self_ns),
	NUM_COL("min_ns", "min", 7, COL_DURATION, min_ns),
	NUM_COL("mean_ns", "mean", 7, COL_DURATION, mean_ns),
	NUM_COL("p50_ns", "p50", 7, COL_DURATION, p50_ns),
	NUM_COL("p90_ns", "p90", 7, COL_DURATION, p90_ns),
	NUM_COL("p99_ns", "p99", 7, COL_DURATION, p99_ns),
	NUM_COL("max_ns", "max", 7, COL_DURATION, max_ns),
	NUM_COL("errors", "errors", 6, COL_COUNT, errors),
};
#define NR_NUM_COLS (sizeof(num_cols) / sizeof(num_cols[0]))

static uint64_t num_of(const struct num_col *c, const struct tt_row *r)
{
	uint64_t v;

	memcpy(&v, (const char *)r + c->offset, sizeof(v));
	return v;
}

static bool name_shown(const struct name_col *c, bool by_thread)
{
	return !c->shown || c->shown(by_thread);
}

static void print_csv(const struct tt_report *rep, size_t nr, bool by_thread)
{
	bool first = true;

	for (size_t k = 0; k < NR_NAME_COLS; k++)
		if (name_shown(&name_cols[k], by_thread)) {
			printf("%s%s", first ? "" : ",", name_cols[k].key);
			first = false;
		}
	for (size_t k = 0; k < NR_NUM_COLS; k++)
		printf(",%s", num_cols[k].key);
	csv_arg_header();
	csv_counter_header();
	if (opts->by_site)
		fputs(",site", stdout);
	fputc('\n', stdout);
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];

		first = true;
		for (size_t k = 0; k < NR_NAME_COLS; k++)
			if (name_shown(&name_cols[k], by_thread)) {
				if (!first)
					fputc(',', stdout);
				tt_emit_csv_str(stdout, name_cols[k].of(r));
				first = false;
			}
		for (size_t k = 0; k < NR_NUM_COLS; k++)
			printf(",%" PRIu64, num_of(&num_cols[k], r));
		csv_arg_cells(r);
		csv_counter_cells(r);
		if (opts->by_site) {
			fputc(',', stdout);
			tt_emit_csv_str(stdout, tt_labels_site(&labels, r->name));
		}
		fputc('\n', stdout);
	}
}

static void print_json(const struct tt_report *rep, size_t nr, bool by_thread)
{
	uint64_t calls = 0, errors = 0;

	fputs("{\"functions\":[", stdout);
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];
		bool first = true;

		calls += r->calls;
		errors += r->errors;
		fputs(i ? ",\n{" : "\n{", stdout);
		for (size_t k = 0; k < NR_NAME_COLS; k++)
			if (name_shown(&name_cols[k], by_thread)) {
				printf("%s\"%s\":", first ? "" : ",", name_cols[k].key);
				tt_emit_json_str(stdout, name_cols[k].of(r));
				first = false;
			}
		if (opts->by_site) {
			fputs(",\"site\":", stdout);
			tt_emit_json_str(stdout, tt_labels_site(&labels, r->name));
		}
		for (size_t k = 0; k < NR_NUM_COLS; k++)
			printf(",\"%s\":%" PRIu64, num_cols[k].key, num_of(&num_cols[k], r));
		/* Only when the trace has them, so other outputs stay as they were. */
		if (rep->nr_left)
			printf(",\"left_without_exit\":%" PRIu64, r->left);
		if (rep->nr_dropped)
			printf(",\"maybe_dropped\":%s", r->maybe_dropped ? "true" : "false");
		json_args(r);
		json_counters(r);
		fputc('}', stdout);
	}
	printf("\n],\"calls\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"dropped\":%" PRIu64,
	       calls, errors, rep->nr_dropped);
	if (rep->nr_left)
		printf(",\"left_without_exit\":%" PRIu64, rep->nr_left);
	/* Only for recordings made with REC_MIN_NS, so 1.0 outputs stay as they were. */
	if (rep->tr.has_filtered)
		printf(",\"filtered\":%" PRIu64, rep->nr_filtered);
	if (rep->nr_blocked || rep->blocked_ns)
		printf(",\"blocked\":%" PRIu64 ",\"blocked_ns\":%" PRIu64, rep->nr_blocked,
		       rep->blocked_ns);
	if (rep->comp_asked)
		printf(",\"compensated\":%s", rep->compensated ? "true" : "false");
	printf(",\"truncated\":%s,\"damaged\":%s}\n", tt_report_truncated(rep) ? "true" : "false",
	       tt_report_damaged(rep) ? "true" : "false");
}

/* Display width of a row's label: "thread: name" with --by-thread, and
 * "  [*]" after a name on a thread that dropped scopes. */
static size_t label_width(const struct tt_row *r, bool by_thread)
{
	return tt_emit_width(rname(r)) + (by_thread ? tt_emit_width(r->thread) + 2 : 0) +
	       (r->process ? tt_emit_width(r->process) + 2 : 0) + (r->maybe_dropped ? 5 : 0);
}

/*
 * The table. Each row is one line, the label padded to the longest, then
 * the numbers: always in a pipe or a file (grep, sort and awk see one row
 * a line, whatever the names' length), and on a terminal when it
 * (tt_emit_terminal_columns(): $COLUMNS, else its width) has room for the
 * longest label and the 80 columns of numbers. On a narrower terminal each
 * row is two lines: the label, then the numbers under a two-line header.
 */
static void print_table(const struct tt_report *rep, size_t nr, bool by_thread)
{
	const char *head = opts->by_process ? (by_thread ? "process: thread: function"
							 : "process: function")
			   : by_thread ? "thread: function" : "function";
	uint64_t calls = 0, errors = 0;
	size_t label_w = tt_emit_width(head), rule_w = 80;
	bool one_line;
	char buf[32], line[256];

	for (size_t i = 0; i < nr; i++) {
		size_t w = label_width(&rep->rows[i], by_thread);

		label_w = w > label_w ? w : label_w;
	}
	one_line = !isatty(STDOUT_FILENO) || label_w + 80 <= tt_emit_terminal_columns();
	if (one_line) {
		tt_emit_pad(stdout, head, label_w, false);
		rule_w += label_w;
	} else {
		printf("%s\n", head);
	}
	for (size_t k = 0; k < NR_NUM_COLS; k++)
		printf("%s%*s", k ? " " : "", num_cols[k].width, num_cols[k].head);
	fputc('\n', stdout);
	for (size_t i = 0; i < rule_w; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	for (size_t i = 0; i < nr; i++) {
		const struct tt_row *r = &rep->rows[i];

		calls += r->calls;
		errors += r->errors;
		table_prefix(r, by_thread);
		if (one_line) {
			fputs(rname(r), stdout);
			tt_emit_pad(stdout, r->maybe_dropped ? "  [*]" : "",
				    label_w - label_width(r, by_thread) + (r->maybe_dropped ? 5 : 0),
				    false);
		} else {
			printf("%s%s\n", rname(r), r->maybe_dropped ? "  [*]" : "");
		}
		for (size_t k = 0; k < NR_NUM_COLS; k++) {
			const struct num_col *c = &num_cols[k];

			if (k)
				fputc(' ', stdout);
			if (c->kind == COL_COUNT) {
				printf("%*" PRIu64, c->width, num_of(c, r));
				continue;
			}
			tt_emit_fmt_duration(buf, sizeof(buf), num_of(c, r));
			tt_emit_pad(stdout, buf, (size_t)c->width, true);
		}
		fputc('\n', stdout);
	}
	for (size_t i = 0; i < rule_w; i++)
		fputc('-', stdout);
	fputc('\n', stdout);
	printf("%zu of %zu scope name%s, %" PRIu64 " calls, %" PRIu64 " errors, %" PRIu64
	       " dropped scopes\n",
	       nr, rep->nr_rows, rep->nr_rows == 1 ? "" : "s", calls, errors, rep->nr_dropped);
	if (rep->nr_left)
		printf("%" PRIu64 " of the errors left without an exit (longjmp): their time is "
		       "their parent's self time\n",
		       rep->nr_left);
	if (rep->nr_dropped)
		printf("[*] on a thread that dropped scopes: calls and times may be low\n");
	if (rep->tr.has_filtered)
		printf("%" PRIu64 " activations shorter than REC_MIN_NS not recorded (filtered)\n",
		       rep->nr_filtered);
	if (rep->nr_blocked || rep->blocked_ns) {
		tt_emit_fmt_duration(buf, sizeof(buf), rep->blocked_ns);
		printf("%" PRIu64 " waits for room (REC_OVERFLOW=block), %s in all, not counted in any"
		       " activation\n", rep->nr_blocked, buf);
	}
	tt_report_comp_footer(rep, line, sizeof(line));
	if (line[0])
		printf("%s\n", line);
	if (rep->problems[0])
		printf("warning: %s\n", rep->problems);
	table_args(rep, nr, by_thread);
	table_counters(rep, nr, by_thread);
}

/* ---------------------------------------------------------------------
 * summary --interval (intervals.c; docs/ANALYZER.md, "Intervals").
 */
static double percent_of(const struct tt_intervals *iv, uint64_t ns)
{
	return 100.0 * (double)ns / (double)iv->interval_ns;
}

/* The columns of an interval's row, for CSV (a heading and a cell each)
 * and JSON (a member each); the table lays its rows out under a heading
 * per interval and thread. */
enum iv_col_kind { IV_COUNT, IV_TEXT, IV_PERCENT };

struct iv_col {
	const char *key;
	enum iv_col_kind kind;
	uint64_t (*count)(const struct tt_intervals *iv, const struct tt_interval_row *r);
	const char *(*text)(const struct tt_interval_row *r);
};

static uint64_t iv_start(const struct tt_intervals *iv, const struct tt_interval_row *r)
{
	return r->k * iv->interval_ns;
}

static uint64_t iv_calls(const struct tt_intervals *iv, const struct tt_interval_row *r)
{
	(void)iv;
	return r->calls;
}

static uint64_t iv_total(const struct tt_intervals *iv, const struct tt_interval_row *r)
{
	(void)iv;
	return r->total_ns;
}

static const char *iv_thread(const struct tt_interval_row *r)
{
	return r->label;
}

static const char *iv_function(const struct tt_interval_row *r)
{
	return tt_labels_shown(&labels, r->name);
}

static const struct iv_col iv_cols[] = {
	{ "interval_start_ns", IV_COUNT, iv_start, NULL },
	{ "thread", IV_TEXT, NULL, iv_thread },
	{ "function", IV_TEXT, NULL, iv_function },
	{ "calls", IV_COUNT, iv_calls, NULL },
	{ "total_ns", IV_COUNT, iv_total, NULL },
	{ "percent", IV_PERCENT, iv_total, NULL },
};
#define NR_IV_COLS (sizeof(iv_cols) / sizeof(iv_cols[0]))

/* One row's cells: CSV's, or JSON's members. */
static void iv_cells(const struct tt_intervals *iv, const struct tt_interval_row *r, bool json)
{
	for (size_t k = 0; k < NR_IV_COLS; k++) {
		const struct iv_col *c = &iv_cols[k];

		if (k)
			fputc(',', stdout);
		if (json)
			printf("\"%s\":", c->key);
		if (c->kind == IV_COUNT)
			printf("%" PRIu64, c->count(iv, r));
		else if (c->kind == IV_PERCENT)
			printf("%.2f", percent_of(iv, c->count(iv, r)));
		else if (json)
			tt_emit_json_str(stdout, c->text(r));
		else
			tt_emit_csv_str(stdout, c->text(r));
	}
}

static void intervals_csv(const struct tt_intervals *iv, const struct tt_options *o)
{
	uint64_t shown = 0;

	for (size_t k = 0; k < NR_IV_COLS; k++)
		printf("%s%s", k ? "," : "", iv_cols[k].key);
	fputc('\n', stdout);
	for (size_t i = 0; i < iv->nr_rows; i++) {
		const struct tt_interval_row *r = &iv->rows[i];

		if (i && (r->k != r[-1].k || r->thread != r[-1].thread))
			shown = 0;
		if (o->top && shown++ >= o->top)
			continue;
		iv_cells(iv, r, false);
		fputc('\n', stdout);
	}
}

static void intervals_json(const struct tt_intervals *iv, const struct tt_options *o)
{
	uint64_t shown = 0;
	bool first = true;

	printf("{\"interval_ns\":%" PRIu64 ",\"rows\":[", iv->interval_ns);
	for (size_t i = 0; i < iv->nr_rows; i++) {
		const struct tt_interval_row *r = &iv->rows[i];

		if (i && (r->k != r[-1].k || r->thread != r[-1].thread))
			shown = 0;
		if (o->top && shown++ >= o->top)
			continue;
		fputs(first ? "\n{" : ",\n{", stdout);
		first = false;
		iv_cells(iv, r, true);
		fputc('}', stdout);
	}
	printf("\n],\"truncated\":%s,\"damaged\":%s}\n",
	       iv->rep.tr.truncated ? "true" : "false",
	       iv->rep.tr.nr_bad_frames || iv->rep.tr.nr_lost_frames || iv->rep.tr.nr_bad_blocks
		       ? "true" : "false");
}

static void intervals_table(const struct tt_intervals *iv, const struct tt_options *o)
{
	char t0[32], t1[32], buf[32];
	uint64_t shown = 0;

	for (size_t i = 0; i < iv->nr_rows; i++) {
		const struct tt_interval_row *r = &iv->rows[i];

		if (!i || r->k != r[-1].k || r->thread != r[-1].thread) {
			tt_emit_fmt_duration(t0, sizeof(t0), r->k * iv->interval_ns);
			tt_emit_fmt_duration(t1, sizeof(t1), (r->k + 1) * iv->interval_ns);
			printf("%s[%s, %s) thread %s\n", i ? "\n" : "", t0, t1, r->label);
			printf("%9s %8s %7s  %s\n", "calls", "time", "%", "function");
			shown = 0;
		}
		if (o->top && shown++ >= o->top)
			continue;
		tt_emit_fmt_duration(buf, sizeof(buf), r->total_ns);
		printf("%9" PRIu64 " ", r->calls);
		tt_emit_pad(stdout, buf, 8, true);
		printf(" %7.2f  %s\n", percent_of(iv, r->total_ns), tt_labels_shown(&labels, r->name));
	}
	if (iv->problems[0])
		printf("warning: %s\n", iv->problems);
}

static int summary_intervals(const struct tt_options *o)
{
	struct tt_intervals iv;
	enum tt_status st;
	char msg[512];
	int rc = 0;

	st = tt_intervals_run(&iv, o, msg, sizeof(msg));
	if (st != TT_OK) {
		rc = tt_fail_file(o->trace, msg);
		goto out;
	}
	tt_trace_warn(&iv.rep.tr);
	tt_labels_init(&labels);
	tt_labels_add_names(&labels, iv.rep.tr.names, iv.rep.tr.nr_names);
	tt_labels_finish(&labels);
	if (o->format == TT_FORMAT_CSV)
		intervals_csv(&iv, o);
	else if (o->format == TT_FORMAT_JSON)
		intervals_json(&iv, o);
	else
		intervals_table(&iv, o);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
	}
out:
	tt_labels_fini(&labels);
	tt_intervals_fini(&iv);
	return rc;
}

int tt_cmd_summary(int argc, char **argv)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_ctrs counters;
	struct tt_report rep;
	struct tt_walk_spec spec;
	char msg[512];
	size_t nr;
	int rc = 0;

	argp_parse(&summary_argp, argc, argv, 0, NULL, &o);
	if (o.interval_ns) {
		rc = summary_intervals(&o);
		tt_options_fini(&o);
		return rc;
	}
	opts = &o;
	/* One pass: the engine times the scopes and, for the threads with
	 * COUNTER_SETs (REC_COUNTERS), the counters consumer takes their
	 * deltas (and the arguments of --arg). */
	tt_ctrs_spec(&counters, &rep, &o, &spec);
	spec.window_index = true; /* a window reads only its frames (index.h) */
	if (tt_walk(&rep, &o, &spec, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(tt_report_failed(&rep, &o), msg);
		goto out;
	}
	if (rep.tr.nr_counter_sets)
		ctrs = &counters;
	if (o.nr_arg_keys)
		argsrc = &counters;
	tt_labels_init(&labels);
	tt_labels_add_names(&labels, rep.tr.names, rep.tr.nr_names);
	tt_labels_finish(&labels);
	sort_key = o.sort;
	if (rep.nr_rows) /* no rows: rows is NULL, which qsort may not take */
		qsort(rep.rows, rep.nr_rows, sizeof(*rep.rows), cmp_rows);
	nr = o.top && o.top < rep.nr_rows ? (size_t)o.top : rep.nr_rows;
	tt_report_warn(&rep);
	tt_report_comp_warn(&rep);
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
	tt_labels_fini(&labels);
	tt_ctrs_fini(&counters);
	ctrs = NULL;
	argsrc = NULL;
	tt_report_fini(&rep);
	tt_options_fini(&o);
	return rc;
}
