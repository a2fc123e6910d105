/* SPDX-License-Identifier: MIT */
/*
 * cmd_flame.c - `tracetool flame TRACE [-o OUT]`: folded stacks
 * (tracetool(1)), one line `a;b;c VALUE` per call path of `tree` (calltree.c), VALUE
 * the path's self time in ns or its calls: the input of flamegraph.pl,
 * inferno and speedscope. The paths and numbers are tree's, row for row.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "views/calltree.h"
#include "cmd/commands.h"
#include "common/emit.h"
#include "cmd/options.h"
#include "common/xalloc.h"
#include "out/flamesvg.h"
#include "views/samples.h"


enum { OPT_WEIGHT = 0x400, OPT_FLAME_FORMAT, OPT_FLAME_SAMPLES };

struct flame_args {
	struct tt_options o;
	bool weight_calls;
	bool svg;
	bool samples;
};

static const struct argp_option flame_options[] = {
	{ "output", 'o', "OUT", 0, "Write to OUT instead of standard output", 30 },
	{ "weight", OPT_WEIGHT, "W", 0, "VALUE is each path's self time in ns (self, default) "
	  "or its calls (calls)", 30 },
	{ "by-thread", TT_OPT_PATHS_BY_THREAD, 0, 0, "The thread as the root frame of each stack",
	  30 },
	{ "by-process", TT_OPT_PATHS_BY_PROCESS, 0, 0,
	  "The process, NAME[PID], as the root frame of each stack (above the thread)", 30 },
	{ "samples", OPT_FLAME_SAMPLES, 0, 0,
	  "The stacks of the sampler (tracetool record, REC_SAMPLE), VALUE their number of "
	  "samples, instead of the scopes' call paths",
	  30 },
	{ "format", OPT_FLAME_FORMAT, "FMT", 0,
	  "folded (default) or svg (an interactive flame graph)", 30 },
	{ 0 },
};

static error_t parse_flame(int key, char *arg, struct argp_state *state)
{
	struct flame_args *a = state->input;

	switch (key) {
	case OPT_WEIGHT:
		a->weight_calls = tt_options_choose(state, "--weight", "self|calls", arg) == 1;
		break;
	case OPT_FLAME_SAMPLES:
		a->samples = true;
		break;
	case OPT_FLAME_FORMAT:
		a->svg = tt_options_choose(state, "--format", "folded|svg", arg) == 1;
		break;
	default:
		return tt_options_parse_paths(key, arg, state, &a->o);
	}
	return 0;
}

static const struct argp flame_argp = {
	flame_options, parse_flame, "TRACE...",
	"Folded stacks, one line per call path: 'a;b;c VALUE', VALUE the path's self time "
	"in ns (--weight=self) or its calls (--weight=calls), for flamegraph.pl, inferno "
	"and speedscope. The paths and numbers are tree's (tracetool tree --format=csv).\v"
	"Examples:\n"
	"  tracetool flame trace.zst > out.folded && flamegraph.pl out.folded > out.svg\n"
	"  tracetool flame --weight=calls --by-thread -o out.folded trace.zst\n"
	"  tracetool flame --by-process trace-1234.zst trace-1235.zst > service.folded\n\n"
	"Several TRACE files make one set of stacks (their paths merge).",
	tt_paths_children, 0, 0,
};

/* True if path names the same file as the trace (never overwrite an input). */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* A tree's process and thread labels as its root frames (';' and line
 * breaks made '_', as in names); NULL without --by-thread or --by-process.
 * malloc'd. */
static char *root_frame(const struct tt_ctree *t)
{
	size_t np = t->process ? strlen(t->process) : 0, nl = t->label ? strlen(t->label) : 0;
	size_t at = 0;
	char *root;

	if (!t->label && !t->process)
		return NULL;
	root = tt_xrealloc(NULL, np + nl + 2);
	for (size_t i = 0; i < np; i++, at++)
		root[at] = t->process[i] == ';' || t->process[i] == '\n' || t->process[i] == '\r'
				   ? '_' : t->process[i];
	if (np && nl)
		root[at++] = ';'; /* the process frame, then the thread's */
	for (size_t i = 0; i < nl; i++, at++)
		root[at] = t->label[i] == ';' || t->label[i] == '\n' || t->label[i] == '\r'
				   ? '_' : t->label[i];
	root[at] = '\0';
	return root;
}

static void write_folded(struct tt_calltree *ct, bool calls, FILE *f)
{
	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		const struct tt_ctree *t = &ct->trees[i];
		char *root = root_frame(t);
		for (uint32_t k = 0; k < t->nr_order; k++) {
			uint32_t id = t->order[k];
			char *path = tt_calltree_path(ct, t, id, root);

			fprintf(f, "%s %" PRIu64 "\n", path, calls ? t->p[id].calls : t->self_ns[id]);
			free(path);
		}
		free(root);
	}
}

/* The tree's rows as the renderer's folded stacks (same paths and values). */
static int write_svg(struct tt_calltree *ct, bool calls, FILE *f, const char *title)
{
	struct tt_flame_frame *st = NULL;
	size_t n = 0, cap = 0;
	int rc;

	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		const struct tt_ctree *t = &ct->trees[i];
		char *root = root_frame(t);
		for (uint32_t k = 0; k < t->nr_order; k++) {
			uint32_t id = t->order[k];

			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				st = tt_xrealloc(st, cap * sizeof(*st));
			}
			st[n].path = tt_calltree_path(ct, t, id, root);
			st[n].self_value = calls ? t->p[id].calls : t->self_ns[id];
			st[n].calls = t->p[id].calls;
			n++;
		}
		free(root);
	}
	rc = tt_flamesvg_write(f, title, st, n, calls ? "calls" : "ns");
	for (size_t i = 0; i < n; i++)
		free((char *)st[i].path);
	free(st);
	return rc;
}

int tt_cmd_flame(int argc, char **argv)
{
	struct flame_args a;
	struct tt_calltree_opts co;
	struct tt_calltree ct;
	struct tt_samples smp;
	bool ran = false, read_samples = false;
	FILE *out = stdout;
	char msg[512];
	int rc = 0;

	memset(&a, 0, sizeof(a));
	memset(&co, 0, sizeof(co));
	a.o = (struct tt_options)TT_OPTIONS_INIT;
	argp_parse(&flame_argp, argc, argv, 0, NULL, &a);
	/* -o - is standard output, as chrome's (tracetool(1), flame). */
	if (a.o.output && strcmp(a.o.output, "-") == 0)
		a.o.output = NULL;
	memset(&ct, 0, sizeof(ct));
	if (a.samples) {
		struct tt_samples_opts so = { 0 };

		read_samples = true;
		if (tt_samples_read(&smp, &a.o, &so, msg, sizeof(msg)) != TT_OK) {
			rc = tt_fail_file(smp.failed ? smp.failed : a.o.trace, msg);
			goto out;
		}
		if (!smp.has_sampling) {
			rc = tt_fail_file(a.o.trace, tt_samples_missing(&smp, msg, sizeof(msg)));
			goto out;
		}
	} else if (tt_calltree_run(&ct, &a.o, &co, msg, sizeof(msg)) != TT_OK) {
		ran = true;
		rc = tt_fail_file(tt_report_failed(&ct.rep, &a.o), msg);
		goto out;
	} else
		ran = true;
	if (a.o.output) {
		/* As chrome's -o: never an input (exit 2, wrong usage), else
		 * exit 1 when it cannot be opened (tt_emit_open_output()). */
		for (unsigned i = 1; i < a.o.nr_traces; i++)
			if (same_file(a.o.output, a.o.traces[i])) {
				rc = tt_fail_file(a.o.output, "is an input trace; refusing to overwrite it")
				     + 1;
				goto out;
			}
		int fd = tt_emit_open_output(a.o.output, a.o.trace, msg, sizeof(msg));

		if (fd < 0) {
			rc = tt_fail_file(a.o.output, msg) + (fd == -2);
			goto out;
		}
		out = fdopen(fd, "w");
		if (!out) {
			snprintf(msg, sizeof(msg), "cannot open: %s", strerror(errno));
			close(fd);
			out = stdout;
			rc = tt_fail_file(a.o.output, msg);
			goto out;
		}
	}
	if (a.samples) {
		size_t nf;
		struct tt_sfolded *fs = tt_samples_folded(&smp, &a.o, &nf);

		tt_samples_warn(&smp);
		if (a.svg) {
			struct tt_flame_frame *st = tt_xcalloc(nf + 1, sizeof(*st));

			for (size_t i = 0; i < nf; i++)
				st[i] = (struct tt_flame_frame){ fs[i].path, fs[i].samples, fs[i].samples };
			if (tt_flamesvg_write(out, a.o.trace, st, nf, "samples") == -ENOMEM) {
				fputs("tracetool: out of memory\n", stderr);
				rc = 1;
			}
			free(st);
		} else
			for (size_t i = 0; i < nf; i++)
				fprintf(out, "%s %" PRIu64 "\n", fs[i].path, fs[i].samples);
		for (size_t i = 0; i < nf; i++)
			free(fs[i].path);
		free(fs);
	} else {
		tt_report_warn(&ct.rep);
		tt_report_comp_warn(&ct.rep);
		if (a.svg) {
			if (write_svg(&ct, a.weight_calls, out, a.o.trace) == -ENOMEM) {
				fputs("tracetool: out of memory\n", stderr);
				rc = 1;
			}
		} else
			write_folded(&ct, a.weight_calls, out);
	}
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "tracetool: %s: cannot write\n", a.o.output ? a.o.output : "stdout");
		rc = 1;
	}
out:
	if (out != stdout)
		fclose(out);
	if (ran)
		tt_calltree_fini(&ct);
	if (read_samples)
		tt_samples_fini(&smp);
	tt_options_fini(&a.o);
	return rc;
}
