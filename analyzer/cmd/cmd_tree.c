/* SPDX-License-Identifier: MIT */
/*
 * cmd_tree.c - `tracetool tree TRACE`: the call tree (tracetool(1)), one row
 * per call path with calls, inclusive total, self time and its share of
 * the grand total, as an indented table, CSV or JSON. The paths come from
 * calltree.c; this file parses the options and prints.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/calltree.h"
#include "cmd/commands.h"
#include "common/emit.h"
#include "cmd/options.h"
#include "common/xalloc.h"

enum { OPT_DEPTH = 0x300, OPT_MIN_PERCENT, OPT_CALLERS };

struct tree_args {
	struct tt_options o;
	struct tt_calltree_opts co;
};

static const struct argp_option tree_options[] = {
	{ "depth", OPT_DEPTH, "N", 0, "Only paths of at most N+1 names (0: the roots)", 30 },
	{ "min-percent", OPT_MIN_PERCENT, "P", 0,
	  "Hide paths below P % of the grand total", 30 },
	{ "callers", OPT_CALLERS, "REGEX", 0,
	  "Upside down: for each function matching REGEX (POSIX extended), the paths that "
	  "lead to it, callee first",
	  30 },
	{ 0 },
};

static error_t parse_tree(int key, char *arg, struct argp_state *state)
{
	struct tree_args *a = state->input;
	uint64_t v;
	char *end;
	int rc;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->o;
		state->child_inputs[1] = &a->o;
		state->child_inputs[2] = &a->o;
		state->child_inputs[3] = &a->o;
		break;
	case OPT_DEPTH:
		if (tt_options_parse_u64(arg, &v) || v > UINT32_MAX - 1)
			argp_error(state, "--depth: '%s' is not a number", arg);
		a->co.has_depth = true;
		a->co.max_depth = (uint32_t)v;
		break;
	case OPT_MIN_PERCENT:
		a->co.min_percent = strtod(arg, &end);
		if (!*arg || *end || !(a->co.min_percent >= 0 && a->co.min_percent <= 100))
			argp_error(state, "--min-percent: '%s' is not a percentage from 0 to 100",
				   arg);
		break;
	case OPT_CALLERS:
		if (a->co.has_callers) {
			regfree(&a->co.callers);
			a->co.has_callers = false;
		}
		rc = regcomp(&a->co.callers, arg, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char buf[128];

			regerror(rc, &a->co.callers, buf, sizeof(buf));
			argp_error(state, "--callers: bad regular expression '%s': %s", arg, buf);
		}
		a->co.has_callers = true;
		break;
	case ARGP_KEY_END:
		if (a->o.sort != TT_SORT_TOTAL)
			argp_error(state, "--sort does not apply to tree: children are ordered "
					  "by total");
		return tt_options_parse_traces(key, arg, state);
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

static const struct argp_child tree_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ &tt_cost_argp, 0, 0, 0 },
	{ &tt_report_argp, 0, 0, 0 },
	{ &tt_site_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp tree_argp = {
	tree_options, parse_tree, "TRACE...",
	"The call tree: one row per call path (the chain of scope names from a root scope "
	"of a thread down to an activation) with calls, inclusive total, self time and "
	"its share of the grand total. Threads merge unless --by-thread.\v"
	"Times are nanoseconds in csv and json. The csv path joins names with ';' from the "
	"root (';' or a line break inside a name becomes '_'), depth is the number of ';'. "
	"--function keeps the paths whose last name matches. The self times of all paths "
	"add up to the sum of summary's self_ns under the same filters.\n\n"
	"Examples:\n"
	"  tracetool tree trace.zst\n"
	"  tracetool tree --depth=2 --min-percent=1 trace.zst\n"
	"  tracetool tree --callers='^malloc$' trace.zst\n"
	"  tracetool tree --format=csv --by-thread trace.zst\n"
	"  tracetool tree --by-process trace-1234.zst trace-1235.zst\n\n"
	"Several TRACE files make one tree (their paths merge); --by-process keeps one "
	"tree per process, NAME[PID] (csv column 'process' first).",
	tree_children, 0, 0,
};

/* The path of node id, names joined by ';' from the root. */
static void print_path(FILE *f, struct tt_calltree *ct, const struct tt_ctree *t, uint32_t id,
		       bool csv)
{
	char *buf = tt_calltree_path(ct, t, id, NULL);

	if (csv)
		tt_emit_csv_str(f, buf);
	else
		tt_emit_json_str(f, buf);
	free(buf);
}

static double share_of(const struct tt_calltree *ct, uint64_t ns)
{
	return ct->grand_total_ns ? 100.0 * (double)ns / (double)ct->grand_total_ns : 0.0;
}

static void print_csv(struct tt_calltree *ct, bool by_thread, bool by_process, bool by_site)
{
	if (by_process)
		fputs("process,", stdout);
	if (by_thread)
		fputs("thread,", stdout);
	fputs(by_site ? "path,depth,calls,total_ns,self_ns,site\n" : "path,depth,calls,total_ns,self_ns\n",
	      stdout);
	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		const struct tt_ctree *t = &ct->trees[i];

		for (uint32_t k = 0; k < t->nr_order; k++) {
			uint32_t id = t->order[k];

			if (by_process) {
				tt_emit_csv_str(stdout, t->process);
				fputc(',', stdout);
			}
			if (by_thread) {
				tt_emit_csv_str(stdout, t->label);
				fputc(',', stdout);
			}
			print_path(stdout, ct, t, id, true);
			printf(",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, t->depth[id],
			       t->p[id].calls, t->total_ns[id], t->self_ns[id]);
			if (by_site) { /* the place of the path's last scope */
				fputc(',', stdout);
				tt_emit_csv_str(stdout, tt_calltree_site(ct, t->p[id].name));
			}
			fputc('\n', stdout);
		}
	}
}

static void print_problems_json(const struct tt_calltree *ct)
{
	const struct tt_report *rep = &ct->rep;

	if (ct->rep.comp_asked)
		printf(",\"compensated\":%s", ct->rep.compensated ? "true" : "false");
	printf(",\"truncated\":%s,\"damaged\":%s,\"clean_end\":%s}\n",
	       tt_report_truncated(rep) ? "true" : "false",
	       tt_report_damaged(rep) ? "true" : "false",
	       (rep->nr_files ? !rep->any_unended : rep->tr.has_end) ? "true" : "false");
}

static void print_json(struct tt_calltree *ct, bool by_thread, bool by_process, bool by_site)
{
	bool first = true;

	fputs("{\"paths\":[", stdout);
	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		const struct tt_ctree *t = &ct->trees[i];

		for (uint32_t k = 0; k < t->nr_order; k++) {
			uint32_t id = t->order[k];

			fputs(first ? "\n{" : ",\n{", stdout);
			first = false;
			if (by_process) {
				fputs("\"process\":", stdout);
				tt_emit_json_str(stdout, t->process);
				fputc(',', stdout);
			}
			if (by_thread) {
				fputs("\"thread\":", stdout);
				tt_emit_json_str(stdout, t->label);
				fputc(',', stdout);
			}
			fputs("\"path\":", stdout);
			print_path(stdout, ct, t, id, false);
			fputs(",\"function\":", stdout);
			tt_emit_json_str(stdout, tt_calltree_label(ct, t->p[id].name));
			if (by_site) {
				fputs(",\"site\":", stdout);
				tt_emit_json_str(stdout, tt_calltree_site(ct, t->p[id].name));
			}
			printf(",\"depth\":%" PRIu32 ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64
			       ",\"self_ns\":%" PRIu64 ",\"percent\":%.2f}",
			       t->depth[id], t->p[id].calls, t->total_ns[id], t->self_ns[id],
			       share_of(ct, t->total_ns[id]));
		}
	}
	printf("\n],\"total_ns\":%" PRIu64 ",\"dropped\":%" PRIu64, ct->grand_total_ns,
	       ct->rep.nr_dropped);
	print_problems_json(ct);
}

/* The table: the numbers, then the name indented two columns per level. */
static void print_table(struct tt_calltree *ct, bool by_thread, bool by_process, bool callers)
{
	char tot[32], self[32], line[256];

	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		const struct tt_ctree *t = &ct->trees[i];

		if (by_process && by_thread)
			printf("%sprocess %s thread %s\n", i ? "\n" : "", t->process, t->label);
		else if (by_process)
			printf("%sprocess %s\n", i ? "\n" : "", t->process);
		else if (by_thread)
			printf("%sthread %s\n", i ? "\n" : "", t->label);
		if (!i || by_thread || by_process) {
			printf("%9s %7s %7s %6s  %s\n", "calls", "total", "self", "share",
			       callers ? "function <- callers" : "path");
			for (size_t c = 0; c < 80; c++)
				fputc('-', stdout);
			fputc('\n', stdout);
		}
		for (uint32_t k = 0; k < t->nr_order; k++) {
			uint32_t id = t->order[k];

			tt_emit_fmt_duration(tot, sizeof(tot), t->total_ns[id]);
			tt_emit_fmt_duration(self, sizeof(self), t->self_ns[id]);
			printf("%9" PRIu64 " ", t->p[id].calls);
			tt_emit_pad(stdout, tot, 7, true);
			fputc(' ', stdout);
			tt_emit_pad(stdout, self, 7, true);
			printf(" %5.1f%%  %*s%s\n", share_of(ct, t->total_ns[id]),
			       (int)(2 * (t->depth[id] > 30 ? 30 : t->depth[id])), "",
			       tt_calltree_label(ct, t->p[id].name));
		}
	}
	for (size_t c = 0; c < 80; c++)
		fputc('-', stdout);
	fputc('\n', stdout);
	tt_emit_fmt_duration(tot, sizeof(tot), ct->grand_total_ns);
	printf("%" PRIu64 " path%s shown, grand total %s, %" PRIu64 " dropped scopes\n",
	       ct->nr_paths, ct->nr_paths == 1 ? "" : "s", tot, ct->rep.nr_dropped);
	tt_report_comp_footer(&ct->rep, line, sizeof(line));
	if (line[0])
		printf("%s\n", line);
	if (ct->rep.problems[0])
		printf("warning: %s\n", ct->rep.problems);
}

int tt_cmd_tree(int argc, char **argv)
{
	struct tree_args a;
	struct tt_calltree ct;
	char msg[512];
	int rc = 0;

	memset(&a, 0, sizeof(a));
	a.o = (struct tt_options)TT_OPTIONS_INIT;
	argp_parse(&tree_argp, argc, argv, 0, NULL, &a);
	if (tt_calltree_run(&ct, &a.o, &a.co, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(tt_report_failed(&ct.rep, &a.o), msg);
		goto out;
	}
	tt_report_warn(&ct.rep);
	tt_report_comp_warn(&ct.rep);
	if (a.o.format == TT_FORMAT_CSV)
		print_csv(&ct, a.o.by_thread, a.o.by_process, a.o.by_site);
	else if (a.o.format == TT_FORMAT_JSON)
		print_json(&ct, a.o.by_thread, a.o.by_process, a.o.by_site);
	else
		print_table(&ct, a.o.by_thread, a.o.by_process, a.co.has_callers);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
	}
out:
	tt_calltree_fini(&ct);
	if (a.co.has_callers)
		regfree(&a.co.callers);
	tt_options_fini(&a.o);
	return rc;
}
