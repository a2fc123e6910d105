/* SPDX-License-Identifier: MIT */
/*
 * cmd_pprof.c - `tracetool pprof TRACE... -o OUT.pb.gz` (tracetool(1),
 * "pprof"): the recording as a pprof profile (out/pprof.h), for `go tool
 * pprof`, Pyroscope, Grafana and speedscope.
 *
 * --weight=time|calls: the exact scope times. Every call path of `tree`
 * (views/calltree.h) is one sample whose locations are its scopes, leaf
 * first, valued at the path's self time in ns (time) or its calls (calls):
 * so pprof's flat figure of a scope is summary's self_ns and the values add
 * up to tree's; each scope is one Location without an address. --weight=
 * samples (the default when the recording has stack samples): one pprof
 * sample per distinct stack of the sampler, whose Locations are its code
 * addresses (a caller's: its return address - 1), each in the Mapping of its
 * module (views/samples.h's maps) and named by its function.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "common/emit.h"
#include "common/xalloc.h"
#include "out/pprof.h"
#include "views/calltree.h"
#include "views/samples.h"

enum { OPT_WEIGHT = 0x500 };

#define PPROF_WEIGHT_CHOICES "samples|time|calls"
enum pprof_weight { W_SAMPLES, W_TIME, W_CALLS, W_DEFAULT };

struct pprof_args {
	struct tt_options o;
	enum pprof_weight weight;
};

static const struct argp_option pprof_options[] = {
	{ "output", 'o', "OUT", 0, "Write the profile (gzip-compressed profile.proto) to OUT", 30 },
	{ "weight", OPT_WEIGHT, "W", 0,
	  "samples (the stack samples; default when the recording has them), time (each "
	  "scope's exact self time in ns; the default otherwise) or calls",
	  30 },
	{ "by-thread", TT_OPT_PATHS_BY_THREAD, 0, 0,
	  "Label each sample with its thread (pprof -tagfocus=thread=NAME)", 30 },
	{ "by-process", TT_OPT_PATHS_BY_PROCESS, 0, 0,
	  "Label each sample with its process, NAME[PID] (several TRACE files)", 30 },
	{ 0 },
};

static error_t parse_pprof(int key, char *arg, struct argp_state *state)
{
	struct pprof_args *a = state->input;

	switch (key) {
	case OPT_WEIGHT:
		a->weight = (enum pprof_weight)tt_options_choose(state, "--weight",
								 PPROF_WEIGHT_CHOICES, arg);
		break;
	case ARGP_KEY_END:
		if (!a->o.output)
			argp_error(state, "missing -o OUT");
		return tt_options_parse_paths(key, arg, state, &a->o);
	default:
		return tt_options_parse_paths(key, arg, state, &a->o);
	}
	return 0;
}

static const struct argp pprof_argp = {
	pprof_options, parse_pprof, "TRACE...",
	"The recording as a pprof profile (gzip-compressed profile.proto) for go tool pprof, "
	"Pyroscope, Grafana and speedscope.\v"
	"--weight=time or calls: each call path of tracetool tree is a sample whose "
	"locations are its scopes (leaf first), valued at the path's self time in "
	"nanoseconds or its calls; pprof's flat time of a scope is then summary's self_ns. "
	"--weight=samples: each stack the sampler took (tracetool record, REC_SAMPLE) is a "
	"sample of 1 with its CPU time, 1/HZ s. Samples carry the label process with "
	"--by-process, thread with --by-thread.\n\n"
	"Examples:\n"
	"  tracetool pprof -o cpu.pb.gz trace.zst && go tool pprof -top cpu.pb.gz\n"
	"  tracetool pprof --weight=time --thread=worker -o scopes.pb.gz trace.zst",
	tt_paths_children, 0, 0,
};

/* The location of calltree name `name` (one per name, no address): its
 * function's label as tree prints it, the bare name as system name, and its
 * place split into file and line. */
static uint64_t tree_function(struct tt_pprof *pp, struct tt_calltree *ct, uint32_t name,
			      uint64_t *cache)
{
	if (cache[name])
		return cache[name];
	const char *site = tt_calltree_site(ct, name);
	const char *colon = strrchr(site, ':');
	int64_t line = 0;
	char *file;

	/* "file:line" (a TRACE_SCOPE site), else a file or module alone. */
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1) &&
	    strlen(colon + 1) < 10)
		line = strtoll(colon + 1, NULL, 10);
	else
		colon = NULL;
	file = colon ? tt_xstrndup(site, (size_t)(colon - site)) : tt_xstrndup(site, strlen(site));
	uint64_t f = tt_pprof_function(pp, tt_calltree_label(ct, name),
				       tt_labels_name(&ct->labels, ct->rep.tr.names[name]), file, line);

	free(file);
	cache[name] = tt_pprof_location(pp, 0, 0, f, line);
	return cache[name];
}

/* Every shown path of every tree as a sample. */
static void add_tree(struct tt_pprof *pp, struct tt_calltree *ct, bool calls)
{
	uint64_t *cache = tt_xcalloc(ct->rep.tr.nr_names + 1, sizeof(*cache));
	uint64_t *stack = NULL;
	size_t cap = 0;
	static const char *const keys[TT_PPROF_MAX_LABELS] = { "process", "thread" };

	for (uint32_t i = 0; i < ct->nr_trees; i++) {
		const struct tt_ctree *t = &ct->trees[i];
		const char *vals[TT_PPROF_MAX_LABELS] = { t->process, t->label };

		for (uint32_t k = 0; k < t->nr_order; k++) {
			uint32_t id = t->order[k];
			int64_t v = (int64_t)(calls ? t->p[id].calls : t->self_ns[id]);
			size_t d = 0;

			if (!v)
				continue; /* pprof drops zero samples anyway */
			if (cap < t->p[id].depth) {
				cap = t->p[id].depth;
				stack = tt_xrealloc(stack, cap * sizeof(*stack));
			}
			for (uint32_t n = id; n && d < cap; n = t->p[n].parent)
				stack[d++] = tree_function(pp, ct, t->p[n].name, cache);
			tt_pprof_add(pp, stack, d, &v, keys, vals, TT_PPROF_MAX_LABELS);
		}
	}
	free(stack);
	free(cache);
}

/* The source file of sampled function f: the place of its key when that is
 * not its module (a static's STT_FILE), else "" (the module is its
 * location's mapping). */
static const char *source_file(const struct tt_samples *s, uint32_t f)
{
	const char *place = strchr(s->funcs[f].key, TT_SITE_SEP);

	return place && strcmp(place + 1, s->funcs[f].module) ? place + 1 : "";
}

/* Whether sampled function f is an address the analyzer could not name
 * ("[prog: no symbol]", "[vdso]", "[no module]": views/samples.c groups
 * them by module, with no place). */
static bool unnamed(const struct tt_samples *s, uint32_t f)
{
	return !strchr(s->funcs[f].key, TT_SITE_SEP);
}

/*
 * Every kept stack sample as a sample of 1 and its CPU time, its frames as
 * locations in their modules' mappings. A frame the analyzer could not
 * name is a Location without a Line, its address in its mapping only, as
 * perf keeps it (tracetool(1), "pprof"): go tool pprof shows the address.
 * A mapping none of whose frames could be named has no has_functions, so
 * pprof may name them from the module's file (a debug file, a symbol
 * server) itself; one with a named frame has it: pprof names again every
 * location of a mapping without it, replacing the names read here (F21,
 * check4: go tool pprof -top put 27 % of a Python profile under the bare
 * module, its inlined frames named by no function).
 */
/* Mapping m's id in pp (mid[m]), made on first use. */
static uint64_t mapping_of(struct tt_pprof *pp, const struct tt_samples *s, uint32_t m,
			   uint64_t *mid, const bool *named)
{
	const struct tt_smap *mp = &s->maps[m];

	if (!mid[m])
		mid[m] = tt_pprof_mapping(pp, mp->start, mp->limit, mp->offset, mp->path,
					  mp->build_id, mp->has_functions && named[m]);
	return mid[m];
}

static void add_samples(struct tt_pprof *pp, const struct tt_samples *s, const struct tt_options *o)
{
	uint64_t *fid = tt_xcalloc(s->nr_funcs + 1, sizeof(*fid));
	uint64_t *lid = tt_xcalloc(s->nr_locs + 1, sizeof(*lid));
	uint64_t *mid = tt_xcalloc(s->nr_maps + 1, sizeof(*mid));
	uint64_t *stack = NULL;
	size_t cap = 0;
	static const char *const keys[TT_PPROF_MAX_LABELS] = { "process", "thread" };
	int64_t v[2] = { 1, (int64_t)s->period_ns };
	char buf[256];
	bool *named = tt_xcalloc(s->nr_maps + 1, sizeof(*named));

	for (uint32_t l = 0; l < s->nr_locs; l++)
		if (s->locs[l].mapping != TT_SAMPLES_NO_MAP && !unnamed(s, s->locs[l].func))
			named[s->locs[l].mapping] = true;
	/* The main program's mapping first: profile.proto's readers take
	 * mapping 1 for the program (go tool pprof's "File:"). */
	for (uint32_t l = 0; l < s->nr_locs; l++)
		if (s->locs[l].mapping != TT_SAMPLES_NO_MAP && s->maps[s->locs[l].mapping].main)
			mapping_of(pp, s, s->locs[l].mapping, mid, named);
	for (size_t r = 0; r < s->nr_rows; r++) {
		const struct tt_srow *row = &s->rows[r];
		const struct tt_sstack *stk = &s->loc_stacks[row->loc_stack];
		const char *vals[TT_PPROF_MAX_LABELS] = {
			o->by_process ? s->files[row->file].process : NULL,
			o->by_thread ? tt_samples_thread(s, row, buf, sizeof(buf)) : NULL,
		};

		if (cap < stk->n) {
			cap = stk->n;
			stack = tt_xrealloc(stack, cap * sizeof(*stack));
		}
		for (uint32_t i = 0; i < stk->n; i++) {
			uint32_t l = s->loc_frames[stk->at + i];
			const struct tt_sloc *loc = &s->locs[l];
			uint32_t f = loc->func, m = loc->mapping;

			if (!lid[l]) {
				if (!fid[f] && !unnamed(s, f))
					fid[f] = tt_pprof_function(pp, tt_samples_label(s, f),
								   tt_samples_name(s, f),
								   source_file(s, f), 0);
				lid[l] = tt_pprof_location(
					pp, m != TT_SAMPLES_NO_MAP ? mapping_of(pp, s, m, mid, named) : 0,
					loc->addr, fid[f], 0);
			}
			stack[i] = lid[l];
		}
		tt_pprof_add(pp, stack, stk->n, v, keys, vals, TT_PPROF_MAX_LABELS);
	}
	free(stack);
	free(named);
	free(mid);
	free(lid);
	free(fid);
}

/* OUT opened for writing, never one of the inputs; NULL after printing why
 * (*rc the exit status). */
static FILE *open_out(const struct tt_options *o, int *rc)
{
	char msg[512];
	int fd;
	FILE *f;

	for (unsigned i = 1; i < o->nr_traces; i++) {
		fd = tt_emit_open_output(o->output, o->traces[i], msg, sizeof(msg));
		if (fd == -2) {
			*rc = tt_fail_file(o->output, msg) + 1;
			return NULL;
		}
		if (fd >= 0)
			close(fd);
	}
	fd = tt_emit_open_output(o->output, o->trace, msg, sizeof(msg));
	if (fd < 0) {
		*rc = tt_fail_file(o->output, msg) + (fd == -2);
		return NULL;
	}
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		*rc = tt_fail_file(o->output, strerror(errno));
	}
	return f;
}

int tt_cmd_pprof(int argc, char **argv)
{
	struct pprof_args a;
	struct tt_calltree_opts co;
	struct tt_calltree ct;
	struct tt_pprof *pp = NULL;
	FILE *out = NULL;
	struct tt_samples smp;
	bool ran = false, read_samples = false;
	char msg[512];
	int rc = 0;

	memset(&a, 0, sizeof(a));
	memset(&co, 0, sizeof(co));
	memset(&ct, 0, sizeof(ct));
	a.o = (struct tt_options)TT_OPTIONS_INIT;
	a.weight = W_DEFAULT;
	argp_parse(&pprof_argp, argc, argv, 0, NULL, &a);
	if (a.weight == W_SAMPLES || a.weight == W_DEFAULT) {
		struct tt_samples_opts so = { .locations = true };

		read_samples = true;
		if (tt_samples_read(&smp, &a.o, &so, msg, sizeof(msg)) != TT_OK) {
			rc = tt_fail_file(smp.failed ? smp.failed : a.o.trace, msg);
			goto out;
		}
		if (a.weight == W_DEFAULT)
			a.weight = smp.has_sampling ? W_SAMPLES : W_TIME;
		if (a.weight == W_SAMPLES && !smp.has_sampling) {
			fprintf(stderr, "tracetool: %s: no stack samples in the recording (record it "
					"with tracetool record or REC_SAMPLE=HZ); --weight=time gives the "
					"scopes' times\n",
				a.o.trace);
			rc = 1;
			goto out;
		}
	}
	if (a.weight == W_SAMPLES) {
		tt_samples_warn(&smp);
		out = open_out(&a.o, &rc);
		if (!out)
			goto out;
		pp = tt_pprof_create();
		tt_pprof_sample_type(pp, "samples", "count");
		tt_pprof_sample_type(pp, "cpu", "nanoseconds");
		tt_pprof_period(pp, "cpu", "nanoseconds", (int64_t)smp.period_ns);
		if (smp.nr_files == 1) {
			const struct tt_trace *tr = &smp.files[0].tr;
			const struct tt_clock *c = &smp.files[0].clock;
			uint64_t span = tr->max_ticks > c->start_ticks ? tt_clock_ns(c, tr->max_ticks - c->start_ticks) : 0;

			tt_pprof_times(pp, tr->hdr.start_real_ns > INT64_MAX ? 0 : (int64_t)tr->hdr.start_real_ns,
				       span > INT64_MAX ? INT64_MAX : (int64_t)span);
		}
		tt_pprof_comment(pp, "rec: stack samples (REC_SAMPLE)");
		add_samples(pp, &smp, &a.o);
		goto write;
	}
	ran = true;
	if (tt_calltree_run(&ct, &a.o, &co, msg, sizeof(msg)) != TT_OK) {
		rc = tt_fail_file(tt_report_failed(&ct.rep, &a.o), msg);
		goto out;
	}
	tt_report_warn(&ct.rep);
	tt_report_comp_warn(&ct.rep);
	out = open_out(&a.o, &rc);
	if (!out)
		goto out;
	pp = tt_pprof_create();
	if (a.weight == W_CALLS)
		tt_pprof_sample_type(pp, "calls", "count");
	else
		tt_pprof_sample_type(pp, "time", "nanoseconds");
	if (!tt_options_multi(&a.o) && ct.rep.tr.has_header) {
		const struct tt_trace *tr = &ct.rep.tr;
		uint64_t span = tr->max_ticks > ct.rep.clock.start_ticks
					? tt_clock_ns(&ct.rep.clock, tr->max_ticks - ct.rep.clock.start_ticks)
					: 0;

		tt_pprof_times(pp, tr->hdr.start_real_ns > INT64_MAX ? 0 : (int64_t)tr->hdr.start_real_ns,
			       span > INT64_MAX ? INT64_MAX : (int64_t)span);
	}
	tt_pprof_comment(pp, a.weight == W_CALLS ? "rec: calls of each scope call path (tracetool tree)"
						 : "rec: self time of each scope call path (tracetool tree)");
	add_tree(pp, &ct, a.weight == W_CALLS);
write:
	rc = tt_pprof_write(pp, out);
	if (rc) {
		fprintf(stderr, "tracetool: %s: cannot write: %s\n", a.o.output, strerror(-rc));
		rc = 1;
	}
out:
	if (out && fclose(out) && !rc) {
		fprintf(stderr, "tracetool: %s: cannot write: %s\n", a.o.output, strerror(errno));
		rc = 1;
	}
	tt_pprof_destroy(pp);
	if (ran)
		tt_calltree_fini(&ct);
	if (read_samples)
		tt_samples_fini(&smp);
	tt_options_fini(&a.o);
	return rc;
}
