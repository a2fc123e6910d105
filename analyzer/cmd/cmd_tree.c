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
#include "views/samples.h"

enum { OPT_DEPTH = 0x300, OPT_MIN_PERCENT, OPT_CALLERS, OPT_TREE_SAMPLES };

struct tree_args {
	struct tt_options o;
	struct tt_calltree_opts co;
	bool samples;
};

static const struct argp_option tree_options[] = {
	{ "depth", OPT_DEPTH, "N", 0, "Only paths of at most N+1 names (0: the roots)", 30 },
	{ "min-percent", OPT_MIN_PERCENT, "P", 0,
	  "Hide paths below P % of the grand total", 30 },
	{ "samples", OPT_TREE_SAMPLES, 0, 0,
	  "The call paths of the sampler's stacks (tracetool record, REC_SAMPLE) with their "
	  "samples: total (the path on the stack) and self (the path's last function running)",
	  30 },
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

	switch (key) {
	case ARGP_KEY_INIT:
		tt_options_inputs(state, tt_report_children, &a->o);
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
	case OPT_TREE_SAMPLES:
		a->samples = true;
		break;
	case OPT_CALLERS:
		tt_options_regex(state, "--callers", arg, &a->co.callers, &a->co.has_callers);
		break;
	case ARGP_KEY_END:
		if (a->samples && a->co.has_callers)
			argp_error(state, "--callers does not apply to --samples");
		if (a->o.sort != TT_SORT_TOTAL)
			argp_error(state, "--sort does not apply to tree: children are ordered "
					  "by total");
		return tt_options_parse_traces(key, arg, state);
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

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
	tt_report_children, 0, 0,
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

/*
 * tree --samples: the trie of the folded sample stacks (samples.h), one
 * node per call path, with the samples that had the path on the stack
 * (total) and that ended in it (self); printed depth first, children by
 * total (desc.) then name, as the scopes' tree.
 */
struct snode {
	char *name;
	uint32_t parent, first, next, depth;
	uint64_t total, self;
};

struct stree {
	struct snode *n;
	uint32_t nr, cap;
};

static uint32_t snode_child(struct stree *t, uint32_t parent, const char *name, size_t len)
{
	uint32_t c;

	for (c = t->n[parent].first; c; c = t->n[c].next)
		if (strlen(t->n[c].name) == len && !memcmp(t->n[c].name, name, len))
			return c;
	if (t->nr == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->n = tt_xrealloc(t->n, t->cap * sizeof(*t->n));
	}
	c = t->nr++;
	t->n[c] = (struct snode){ tt_xstrndup(name, len), parent, 0, t->n[parent].first,
				  t->n[parent].depth + 1, 0, 0 };
	t->n[parent].first = c;
	return c;
}

static const struct stree *sort_tree;

static int by_total(const void *pa, const void *pb)
{
	const struct snode *a = &sort_tree->n[*(const uint32_t *)pa],
			   *b = &sort_tree->n[*(const uint32_t *)pb];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Node ids in output order, depth first; *nr of them. */
static uint32_t *snode_order(struct stree *t, uint32_t *nr)
{
	uint32_t *out = tt_xcalloc(t->nr, sizeof(*out)), *stack = tt_xcalloc(t->nr, sizeof(*stack));
	uint32_t no = 0, sp = 0, *kids = tt_xcalloc(t->nr, sizeof(*kids));

	stack[sp++] = 0;
	sort_tree = t;
	while (sp) {
		uint32_t id = stack[--sp], nk = 0;

		if (id)
			out[no++] = id;
		for (uint32_t c = t->n[id].first; c; c = t->n[c].next)
			kids[nk++] = c;
		qsort(kids, nk, sizeof(*kids), by_total);
		while (nk)
			stack[sp++] = kids[--nk]; /* the first child on top */
	}
	free(stack);
	free(kids);
	*nr = no;
	return out;
}

/* Node id's path below the first `skip` frames, names joined by ';' from
 * the root; malloc'd. */
static char *snode_path(const struct stree *t, uint32_t id, uint32_t skip)
{
	size_t len = 0, at;
	char *p;

	for (uint32_t x = id; x && t->n[x].depth > skip; x = t->n[x].parent)
		len += strlen(t->n[x].name) + 1;
	p = tt_xcalloc(len + 1, 1);
	at = len ? len - 1 : 0; /* the end of the last name */
	for (uint32_t x = id; x && t->n[x].depth > skip; x = t->n[x].parent) {
		size_t nl = strlen(t->n[x].name);

		at -= nl;
		memcpy(p + at, t->n[x].name, nl);
		if (at)
			p[--at] = ';';
	}
	return p;
}

static int samples_tree(struct tree_args *a)
{
	struct tt_samples_opts so = { 0 };
	struct tt_samples smp;
	struct tt_sfolded *fs = NULL;
	struct stree t = { 0 };
	uint32_t *order = NULL, nr = 0;
	size_t nf = 0;
	char msg[512];
	int rc = 0;
	/* --by-thread/--by-process: the folded stacks' first frames. */
	uint32_t skip = (a->o.by_thread ? 1u : 0u) + (a->o.by_process ? 1u : 0u);

	if (tt_samples_read(&smp, &a->o, &so, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(smp.failed ? smp.failed : a->o.trace, msg);
		goto out;
	}
	if (!smp.has_sampling) {
		rc = tt_fail_file(a->o.trace, tt_samples_missing(&smp, msg, sizeof(msg)));
		goto out;
	}
	tt_samples_warn(&smp);
	fs = tt_samples_folded(&smp, &a->o, &nf);
	t.cap = 256;
	t.n = tt_xcalloc(t.cap, sizeof(*t.n));
	t.n[0].name = tt_xstrndup("", 0);
	t.nr = 1;
	for (size_t i = 0; i < nf; i++) {
		const char *p = fs[i].path;
		uint32_t id = 0;

		for (;;) {
			const char *e = strchr(p, ';');
			size_t len = e ? (size_t)(e - p) : strlen(p);

			id = snode_child(&t, id, p, len);
			t.n[id].total += fs[i].samples;
			if (!e)
				break;
			p = e + 1;
		}
		t.n[id].self += fs[i].samples;
	}
	order = snode_order(&t, &nr);
	if (a->o.format == TT_FORMAT_CSV) {
		if (a->o.by_process)
			fputs("process,", stdout);
		if (a->o.by_thread)
			fputs("thread,", stdout);
		puts("path,depth,total_samples,self_samples");
	} else if (a->o.format == TT_FORMAT_JSON)
		printf("{\"samples\":%zu,\"hz\":%" PRIu32 ",\"paths\":[", smp.nr_rows, smp.hz);
	else
		printf("%8s %8s %7s  %s\n", "total", "self", "share", "path");
	bool first = true;
	for (uint32_t k = 0; k < nr; k++) {
		const struct snode *n = &t.n[order[k]];
		uint32_t depth = n->depth - 1 - skip;
		double share = smp.nr_rows ? 100.0 * (double)n->total / (double)smp.nr_rows : 0.0;

		if (n->depth <= skip)
			continue; /* a process or thread frame: a column, not a path */
		if (a->co.has_depth && depth > a->co.max_depth)
			continue;
		if (share < a->co.min_percent)
			continue;
		char *path = snode_path(&t, order[k], skip);
		const char *labels[2] = { NULL, NULL };
		uint32_t x = order[k];

		while (t.n[x].depth > skip)
			x = t.n[x].parent;
		/* x is the innermost root frame: the thread with --by-thread. */
		if (a->o.by_thread && a->o.by_process) {
			labels[1] = t.n[x].name;
			labels[0] = t.n[t.n[x].parent].name;
		} else if (a->o.by_thread)
			labels[1] = t.n[x].name;
		else if (a->o.by_process)
			labels[0] = t.n[x].name;
		if (a->o.format == TT_FORMAT_CSV) {
			for (int l = 0; l < 2; l++)
				if (labels[l]) {
					tt_emit_csv_str(stdout, labels[l]);
					putchar(',');
				}
			tt_emit_csv_str(stdout, path);
			printf(",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "\n", depth, n->total, n->self);
		} else if (a->o.format == TT_FORMAT_JSON) {
			fputs(first ? "\n{" : ",\n{", stdout);
			if (labels[0]) {
				fputs("\"process\":", stdout);
				tt_emit_json_str(stdout, labels[0]);
				putchar(',');
			}
			if (labels[1]) {
				fputs("\"thread\":", stdout);
				tt_emit_json_str(stdout, labels[1]);
				putchar(',');
			}
			fputs("\"path\":", stdout);
			tt_emit_json_str(stdout, path);
			printf(",\"depth\":%" PRIu32 ",\"total_samples\":%" PRIu64
			       ",\"self_samples\":%" PRIu64 ",\"percent\":%.2f}",
			       depth, n->total, n->self, share);
		} else {
			printf("%8" PRIu64 " %8" PRIu64 " %6.1f%%  %*s", n->total, n->self, share,
			       (int)(2 * depth), "");
			if (labels[1] && depth == 0) {
				tt_emit_text(stdout, labels[1]);
				fputs(": ", stdout);
			}
			tt_emit_text(stdout, n->name);
			putchar('\n');
		}
		first = false;
		free(path);
	}
	if (a->o.format == TT_FORMAT_JSON)
		puts("\n]}");
	else if (a->o.format == TT_FORMAT_TABLE)
		printf("%zu samples at %" PRIu32 " Hz, %" PRIu64 " dropped\n", smp.nr_rows, smp.hz,
		       smp.nr_dropped);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tracetool: cannot write the report\n");
		rc = 1;
	}
out:
	for (uint32_t i = 0; i < t.nr; i++)
		free(t.n[i].name);
	free(t.n);
	free(order);
	for (size_t i = 0; i < nf; i++)
		free(fs[i].path);
	free(fs);
	tt_samples_fini(&smp);
	return rc;
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
	if (a.samples) {
		rc = samples_tree(&a);
		tt_options_fini(&a.o);
		return rc;
	}
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
