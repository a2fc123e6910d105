/* SPDX-License-Identifier: MIT */
/*
 * options.c - parsing of the shared options of options.h: tracetool(1)'s
 * OPTIONS for --thread, --function (POSIX ERE, matches anywhere),
 * --from/--to (ns|us|ms|s from the trace start), --format, --sort and
 * --by-thread. What the filters mean is engine/filter.c's.
 */
#include "cmd/options.h"
#include "common/progress.h"
#include "engine/runs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_FROM = 0x100, OPT_TO, OPT_SORT, OPT_BY_THREAD, OPT_FORMAT, OPT_MAX_DURATION,
       OPT_BY_PROCESS, OPT_COMPENSATE, OPT_BY_SITE };

int tt_options_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int tt_options_parse_time(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "µs", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 },
	};
	uint64_t whole = 0, frac = 0, frac_scale = 1, mult = 0;
	const char *p = s;
	size_t digits = 0;

	while (*p >= '0' && *p <= '9') {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (frac_scale < 1000000000000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_scale *= 10;
			}
			p++;
			digits++;
		}
	}
	if (!digits)
		return -1;
	if (!*p && whole == 0 && frac == 0) {
		*ns = 0; /* zero needs no unit */
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].unit) == 0)
			mult = units[i].ns;
	if (!mult || whole > UINT64_MAX / mult)
		return -1;
	/* Exact: whole * mult + frac * mult / frac_scale, fractions of a ns cut. */
	*ns = whole * mult + (uint64_t)((unsigned __int128)frac * mult / frac_scale);
	return 0;
}

void tt_options_regex(struct argp_state *state, const char *option, const char *arg, regex_t *re,
		      bool *has)
{
	int rc;

	if (*has) {
		regfree(re);
		*has = false;
	}
	rc = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char buf[128];

		regerror(rc, re, buf, sizeof(buf));
		argp_error(state, "%s: bad regular expression '%s': %s", option, arg, buf);
	}
	*has = true;
}

static error_t parse_filter(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case 't':
		o->threads = realloc(o->threads, (o->nr_threads + 1) * sizeof(*o->threads));
		o->threads_found = realloc(o->threads_found,
					   (o->nr_threads + 1) * sizeof(*o->threads_found));
		if (!o->threads || !o->threads_found)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->threads_found[o->nr_threads] = false;
		o->threads[o->nr_threads++] = arg;
		break;
	case 'f':
		tt_options_regex(state, "--function", arg, &o->function_re, &o->has_function);
		break;
	case OPT_FROM:
		if (tt_options_parse_time(arg, &o->from_ns))
			argp_error(state, "--from: '%s' is not a time like 1.5ms (units ns, us, ms, s)",
				   arg);
		o->has_from = true;
		break;
	case OPT_TO:
		if (tt_options_parse_time(arg, &o->to_ns))
			argp_error(state, "--to: '%s' is not a time like 1.5ms (units ns, us, ms, s)",
				   arg);
		o->has_to = true;
		break;
	case ARGP_KEY_END:
		if (o->has_from && o->has_to && o->to_ns <= o->from_ns)
			argp_error(state, "--to must be later than --from");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option filter_options[] = {
	{ 0, 0, 0, 0, "Filters:", 10 },
	{ "thread", 't', "ID|NAME", 0,
	  "Only threads with this OS thread id or name (repeatable)", 10 },
	{ "function", 'f', "REGEX", 0,
	  "Only scope names matching this POSIX extended regex (anywhere in the name; "
	  "anchor with ^...$ for the whole name)", 10 },
	{ "from", OPT_FROM, "T", 0,
	  "Only activations starting at or after T from the trace start (e.g. 1.5ms; "
	  "units ns, us, ms, s)", 10 },
	{ "to", OPT_TO, "T", 0, "Only activations starting before T", 10 },
	{ 0 },
};

/* Every command with filters reads enough to want a progress line. */
static const struct argp_child filter_children[] = {
	{ &tt_progress_argp, 0, 0, 0 },
	{ 0 },
};

const struct argp tt_filter_argp = { filter_options, parse_filter, 0, 0, filter_children, 0, 0 };

int tt_options_choice(const char *choices, const char *arg)
{
	size_t n = strlen(arg);
	int i = 0;

	for (const char *p = choices;; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && n && memcmp(p, arg, n) == 0)
			return i;
		if (!bar)
			return -1;
		p = bar + 1;
	}
}

int tt_options_choose(struct argp_state *state, const char *option, const char *choices,
		      const char *arg)
{
	int c = tt_options_choice(choices, arg);

	if (c < 0)
		argp_error(state, "%s: '%s' is not one of %s", option, arg, choices);
	return c;
}

static error_t parse_report(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case OPT_FORMAT:
		o->format = (enum tt_format)tt_options_choose(state, "--format", TT_FORMAT_CHOICES,
							      arg);
		o->format_set = true;
		break;
	case OPT_SORT:
		o->sort = (enum tt_sort)tt_options_choose(state, "--sort", TT_SORT_CHOICES, arg);
		break;
	case OPT_MAX_DURATION:
		if (tt_options_parse_time(arg, &o->max_duration_ns))
			argp_error(state,
				   "--max-duration: '%s' is not a time like 1.5s (units ns, us, ms, s)",
				   arg);
		o->has_max_duration = true;
		break;
	case OPT_BY_THREAD:
		o->by_thread = true;
		break;
	case OPT_BY_PROCESS:
		o->by_process = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option report_options[] = {
	{ 0, 0, 0, 0, "Report:", 20 },
	{ "format", OPT_FORMAT, "FMT", 0, "Output as table (default), csv or json", 20 },
	{ "sort", OPT_SORT, "KEY", 0,
	  "Order rows by total (default), self, calls, mean, min, p50, p90, p99, max "
	  "(descending) or name (ascending); ties by name", 20 },
	{ "by-thread", OPT_BY_THREAD, 0, 0, "One row per thread and scope name", 20 },
	{ "by-process", OPT_BY_PROCESS, 0, 0,
	  "One row per process (NAME[PID], one per TRACE file) and scope name", 20 },
	{ "max-duration", OPT_MAX_DURATION, "DUR", 0,
	  "Count activations longer than DUR (e.g. 10s) as errors, not times: a guard "
	  "against a suspended or migrated thread", 20 },
	{ 0 },
};

const struct argp tt_report_argp = { report_options, parse_report, 0, 0, 0, 0, 0 };

/* The flags of their own argp: --compensate (tt_cost_argp), --by-site (tt_site_argp). */
static error_t parse_flag(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	(void)arg;
	if (key == OPT_COMPENSATE)
		o->compensate = true;
	else if (key == OPT_BY_SITE)
		o->by_site = true;
	else
		return ARGP_ERR_UNKNOWN;
	return 0;
}

static const struct argp_option cost_options[] = {
	{ "compensate", OPT_COMPENSATE, 0, 0,
	  "Subtract the probes' own cost, as recorded in the file (PROBE_COST), from every "
	  "activation: its own probes' inner part and the whole cost of each activation "
	  "recorded inside it (docs/ANALYZER.md)", 30 },
	{ 0 },
};

const struct argp tt_cost_argp = { cost_options, parse_flag, 0, 0, 0, 0, 0 };

static const struct argp_option site_options[] = {
	{ "by-site", OPT_BY_SITE, 0, 0,
	  "Give each scope's name alone and add a column site: file:line of its TRACE_SCOPE, "
	  "or a hooked function's source file or module (scopes of different sites never "
	  "merge either way)", 20 },
	{ 0 },
};

const struct argp tt_site_argp = { site_options, parse_flag, 0, 0, 0, 0, 0 };

const struct argp_child tt_report_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_cost_argp, 0, 0, 0 },
	{ &tt_report_argp, 0, 0, 0 },
	{ &tt_site_argp, 0, 0, 0 },
	{ 0 },
};

const struct argp_child tt_paths_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_cost_argp, 0, 0, 0 },
	{ 0 },
};

void tt_options_inputs(struct argp_state *state, const struct argp_child *children,
		       struct tt_options *o)
{
	for (unsigned i = 0; children[i].argp; i++)
		state->child_inputs[i] = o;
}

error_t tt_options_parse_paths(int key, char *arg, struct argp_state *state,
			       struct tt_options *o)
{
	switch (key) {
	case ARGP_KEY_INIT:
		tt_options_inputs(state, tt_paths_children, o);
		break;
	case 'o':
		o->output = arg;
		break;
	case TT_OPT_PATHS_BY_THREAD:
		o->by_thread = true;
		break;
	case TT_OPT_PATHS_BY_PROCESS:
		o->by_process = true;
		break;
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

void tt_options_fini(struct tt_options *o)
{
	if (o->has_function)
		regfree(&o->function_re);
	free(o->threads);
	o->threads = NULL;
	free(o->threads_found);
	o->threads_found = NULL;
	free(o->arg_keys);
	o->arg_keys = NULL;
	free(o->traces);
	o->traces = NULL;
	o->nr_traces = 0;
	o->has_function = false;
}

struct file_id {
	dev_t dev;
	ino_t ino;
	unsigned i;
};

static int cmp_file_id(const void *pa, const void *pb)
{
	const struct file_id *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void tt_refuse_stdout_input(const char *const *paths, unsigned n)
{
	struct stat out, st;

	if (fstat(1, &out) != 0 || !S_ISREG(out.st_mode))
		return;
	for (unsigned i = 0; i < n; i++)
		if (stat(paths[i], &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino) {
			fprintf(stderr,
				"tracetool: %s: is also standard output: the output would be written "
				"into the recording\n",
				paths[i]);
			exit(2);
		}
}

void tt_refuse_same_file(struct argp_state *state, const char *const *paths, unsigned n,
			 const char *what)
{
	struct file_id *v;
	unsigned m = 0, first = 0, again = 0;

	if (n < 2)
		return;
	v = calloc(n, sizeof(*v));
	if (!v)
		argp_failure(state, 1, ENOMEM, "out of memory");
	for (unsigned i = 0; i < n; i++) {
		struct stat st;

		if (stat(paths[i], &st) == 0)
			v[m++] = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino, .i = i };
	}
	qsort(v, m, sizeof(*v), cmp_file_id);
	for (unsigned k = 1; k < m; k++)
		if (v[k].dev == v[k - 1].dev && v[k].ino == v[k - 1].ino &&
		    (!again || v[k].i < again)) {
			first = v[k - 1].i;
			again = v[k].i;
		}
	free(v);
	if (again) {
		fprintf(stderr, "tracetool: %s: the same file as %s: a %s given twice would count twice\n",
			paths[again], paths[first], what);
		exit(2);
	}
}

/* The checks of a command's TRACE operands: not standard output, no file twice. */
static void refuse_same_file(struct argp_state *state, const char *const *paths, unsigned n)
{
	tt_refuse_stdout_input(paths, n);
	tt_refuse_same_file(state, paths, n, "recording");
	tt_runs_warn_same_recording(paths, n);
}

error_t tt_options_parse_traces(int key, char *arg, struct argp_state *state)
{
	struct tt_options *o = state->input;

	switch (key) {
	case ARGP_KEY_ARG:
		o->traces = realloc(o->traces, (o->nr_traces + 1) * sizeof(*o->traces));
		if (!o->traces)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->traces[o->nr_traces++] = arg;
		if (!o->trace)
			o->trace = arg;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "missing TRACE");
		return 0;
	case ARGP_KEY_END:
		refuse_same_file(state, o->traces, o->nr_traces);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

error_t tt_options_parse_files(int key, char *arg, struct argp_state *state,
			       struct tt_files_args *a)
{
	switch (key) {
	case 'o':
		a->out = arg;
		return 0;
	case ARGP_KEY_ARG:
		a->traces = realloc(a->traces, (a->nr_traces + 1) * sizeof(*a->traces));
		if (!a->traces)
			argp_failure(state, 1, ENOMEM, "out of memory");
		a->traces[a->nr_traces++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (!a->nr_traces)
			argp_error(state, "missing TRACE");
		if (!a->out)
			argp_error(state, "%s", a->missing_out);
		refuse_same_file(state, a->traces, a->nr_traces);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

void tt_files_args_fini(struct tt_files_args *a)
{
	free(a->traces);
	a->traces = NULL;
	a->nr_traces = 0;
}
