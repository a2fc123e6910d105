/* SPDX-License-Identifier: MIT */
/*
 * cmd_profile.c - `tracetool profile TRACE...` (tracetool(1), "profile"):
 * the hotspot report of a sampled recording (REC_SAMPLE, tracetool record).
 * One row per function seen in the samples (views/samples.h): samples in
 * which it was the leaf (self) and in which it was anywhere on the stack
 * (total, once per sample however often it is there), their shares of the
 * kept samples and the estimated CPU time, self samples × the recording's
 * period. Sorted by self samples, then total, then name.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "common/xalloc.h"
#include "views/samples.h"

enum {
	OPT_WITHIN = 0x600,
	OPT_PROFILE_FORMAT,
	OPT_PROFILE_BY_THREAD,
	OPT_PROFILE_BY_PROCESS,
	OPT_PROFILE_TOP
};

#define PROFILE_CSV_HEADER \
	"function,module,self_samples,total_samples,self_percent,total_percent,est_self_ns"

struct profile_args {
	struct tt_options o;
	struct tt_samples_opts so;
};

static const struct argp_option profile_options[] = {
	{ "within", OPT_WITHIN, "REGEX", 0,
	  "Only samples taken while a scope whose name matches REGEX (POSIX extended) was "
	  "open on their thread: where that scope's time went, instrumented or not",
	  30 },
	{ "format", OPT_PROFILE_FORMAT, "FMT", 0, "Output as table (default), csv or json", 30 },
	{ "by-thread", OPT_PROFILE_BY_THREAD, 0, 0, "One row per thread and function", 30 },
	{ "by-process", OPT_PROFILE_BY_PROCESS, 0, 0,
	  "One row per process (NAME[PID], one per TRACE file) and function", 30 },
	{ "top", OPT_PROFILE_TOP, "N", 0, "Only the first N rows", 30 },
	{ 0 },
};

static error_t parse_profile(int key, char *arg, struct argp_state *state)
{
	struct profile_args *a = state->input;
	uint64_t v;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->o;
		break;
	case OPT_WITHIN:
		tt_options_regex(state, "--within", arg, &a->so.within, &a->so.has_within);
		break;
	case OPT_PROFILE_FORMAT:
		a->o.format = (enum tt_format)tt_options_choose(state, "--format",
								TT_FORMAT_CHOICES, arg);
		break;
	case OPT_PROFILE_BY_THREAD:
		a->o.by_thread = true;
		break;
	case OPT_PROFILE_BY_PROCESS:
		a->o.by_process = true;
		break;
	case OPT_PROFILE_TOP:
		if (tt_options_parse_u64(arg, &v) || !v)
			argp_error(state, "--top: '%s' is not a positive number", arg);
		a->o.top = v;
		break;
	default:
		return tt_options_parse_traces(key, arg, state);
	}
	return 0;
}

static const struct argp_child profile_children[] = {
	{ &tt_filter_argp, 0, 0, 0 },
	{ 0 },
};

static const struct argp profile_argp = {
	profile_options, parse_profile, "TRACE...",
	"The hotspot report of a sampled recording (tracetool record, REC_SAMPLE): one row "
	"per function seen in the stack samples, with the samples in which it was running "
	"(self) and in which it was on the stack (total, once per sample), their shares of "
	"the samples kept, and the estimated CPU time, self samples x 1/HZ s. Sorted by "
	"self samples.\v"
	"CSV header: " PROFILE_CSV_HEADER " (thread first with --by-thread, process first "
	"with --by-process). Functions are "
	"named from the recorded modules' symbol tables (build-ids checked), as in "
	"whole-program mode; a frame that cannot be named counts for its module, "
	"'[module: reason]'. --thread and --from/--to select samples by thread and time; "
	"--function keeps the rows whose function matches.\n\n"
	"Examples:\n"
	"  tracetool record -- ./app && tracetool profile trace.zst\n"
	"  tracetool profile --within='^handle_request$' trace.zst\n"
	"  tracetool profile --format=csv --by-thread --top=20 trace.zst\n"
	"  tracetool profile --by-process trace-*.zst",
	profile_children, 0, 0,
};

/* A row's process and thread labels (--by-process, --by-thread; NULL when
 * not split so), owned by the group table. */
struct pgroup {
	char *process, *thread;
};

struct prow {
	const struct pgroup *group; /* NULL without --by-thread or --by-process */
	uint32_t func;
	uint64_t self, total;
};

/* The samples whose rows are being sorted (qsort has no context). */
static const struct tt_samples *sort_samples;

static int by_self(const void *pa, const void *pb)
{
	const struct prow *a = pa, *b = pb;
	const struct tt_samples *s = sort_samples;
	int c;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	c = strcmp(tt_samples_label(s, a->func), tt_samples_label(s, b->func));
	if (c || !a->group || !b->group)
		return c;
	if (a->group->process && b->group->process) {
		c = strcmp(a->group->process, b->group->process);
		if (c)
			return c;
	}
	return a->group->thread && b->group->thread ? strcmp(a->group->thread, b->group->thread) : 0;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

struct group_key {
	const struct pgroup *groups;
	const char *process, *thread;
};

static bool group_eq(const void *ctx, uint32_t id)
{
	const struct group_key *k = ctx;

	return same(k->groups[id].process, k->process) && same(k->groups[id].thread, k->thread);
}

/* Labels come from the files: hashed with the seeded hash (hmap.h). */
static uint32_t group_hash(const char *process, const char *thread)
{
	return tt_hash_bytes(process ? process : "", process ? strlen(process) : 0) ^
	       tt_hash_u32(tt_hash_bytes(thread ? thread : "", thread ? strlen(thread) : 0));
}

/*
 * With --by-thread or --by-process: rows per (group, function), counted from
 * the samples; a group is the sample's process label (NAME[PID]) with
 * --by-process and its thread label with --by-thread. groups[] holds the
 * distinct groups (*nr_groups of them; the rows point into it, so it is
 * sized once for the worst case, one group per sample).
 */
static struct prow *group_rows(const struct tt_samples *s, const struct tt_options *o, size_t *nr,
			       struct pgroup **groups, size_t *nr_groups)
{
	struct prow *rows = NULL;
	size_t n = 0, cap = 0;
	uint32_t *hash = NULL, mask = 0;
	uint32_t *row_group = NULL; /* per prow: its group's index */
	uint32_t *seen_row = NULL;  /* per prow: last sample that counted it + 1 */
	struct tt_hmap group_map = TT_HMAP_INIT;
	char buf[256];

	*groups = tt_xcalloc(s->nr_rows + 1, sizeof(**groups));
	*nr_groups = 0;
	for (size_t r = 0; r < s->nr_rows; r++) {
		const struct tt_srow *row = &s->rows[r];
		const char *proc = o->by_process ? s->files[row->file].process : NULL;
		const char *th = o->by_thread ? tt_samples_thread(s, row, buf, sizeof(buf)) : NULL;
		const struct group_key gk = { *groups, proc, th };
		uint32_t gh = group_hash(proc, th);
		size_t gi = tt_hmap_find(&group_map, gh, group_eq, &gk);

		if (gi == TT_HMAP_NONE) {
			gi = *nr_groups;
			(*groups)[gi].process = proc ? tt_xstrndup(proc, strlen(proc)) : NULL;
			(*groups)[gi].thread = th ? tt_xstrndup(th, strlen(th)) : NULL;
			tt_hmap_put(&group_map, gh, (uint32_t)gi);
			(*nr_groups)++;
		}
		const struct tt_sstack *stk = &s->stacks[row->stack];
		const uint32_t *ids = s->frames + stk->at;

		for (uint32_t i = 0; i < stk->n; i++) {
			uint64_t key = (uint64_t)gi << 32 | ids[i];
			uint32_t h = tt_hash_u32((uint32_t)key ^ tt_hash_u32((uint32_t)(key >> 32)));
			uint32_t sl, at = UINT32_MAX;

			if (hash)
				for (sl = h & mask; hash[sl]; sl = (sl + 1) & mask)
					if (rows[hash[sl] - 1].func == ids[i] &&
					    row_group[hash[sl] - 1] == gi) {
						at = hash[sl] - 1;
						break;
					}
			if (at == UINT32_MAX) {
				if (n == cap) {
					cap = cap ? 2 * cap : 256;
					rows = tt_xrealloc(rows, cap * sizeof(*rows));
					seen_row = tt_xrealloc(seen_row, cap * sizeof(*seen_row));
					row_group = tt_xrealloc(row_group, cap * sizeof(*row_group));
				}
				rows[n] = (struct prow){ &(*groups)[gi], ids[i], 0, 0 };
				seen_row[n] = 0;
				row_group[n] = (uint32_t)gi;
				at = (uint32_t)n++;
				if (!hash || 2 * (uint64_t)n > mask) {
					mask = mask ? 2 * mask + 1 : 1023;
					while (2 * (uint64_t)n > mask)
						mask = 2 * mask + 1;
					free(hash);
					hash = tt_xcalloc((size_t)mask + 1, sizeof(*hash));
					for (uint32_t k = 0; k < n; k++) {
						uint64_t kk = (uint64_t)row_group[k] << 32 | rows[k].func;
						uint32_t hk = tt_hash_u32((uint32_t)kk ^
									  tt_hash_u32((uint32_t)(kk >> 32)));
						for (sl = hk & mask; hash[sl]; sl = (sl + 1) & mask)
							;
						hash[sl] = k + 1;
					}
				} else {
					for (sl = h & mask; hash[sl]; sl = (sl + 1) & mask)
						;
					hash[sl] = at + 1;
				}
			}
			if (i == 0)
				rows[at].self++;
			if (seen_row[at] != r + 1) {
				seen_row[at] = (uint32_t)(r + 1);
				rows[at].total++;
			}
		}
	}
	free(hash);
	free(seen_row);
	free(row_group);
	tt_hmap_fini(&group_map);
	*nr = n;
	return rows;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_rows(const struct tt_samples *s, const struct prow *rows, size_t n,
		       const struct tt_options *o)
{
	uint64_t all = s->nr_rows;
	char self_t[32], est[32];

	if (o->format == TT_FORMAT_CSV) {
		if (o->by_process)
			fputs("process,", stdout);
		if (o->by_thread)
			fputs("thread,", stdout);
		puts(PROFILE_CSV_HEADER);
		for (size_t i = 0; i < n; i++) {
			if (o->by_process) {
				tt_emit_csv_str(stdout, rows[i].group->process);
				putchar(',');
			}
			if (o->by_thread) {
				tt_emit_csv_str(stdout, rows[i].group->thread);
				putchar(',');
			}
			tt_emit_csv_str(stdout, tt_samples_label(s, rows[i].func));
			putchar(',');
			tt_emit_csv_str(stdout, s->funcs[rows[i].func].module);
			printf(",%" PRIu64 ",%" PRIu64 ",%.2f,%.2f,%" PRIu64 "\n", rows[i].self,
			       rows[i].total, pct(rows[i].self, all), pct(rows[i].total, all),
			       rows[i].self * s->period_ns);
		}
		return;
	}
	if (o->format == TT_FORMAT_JSON) {
		printf("{\"samples\":%" PRIu64 ",\"hz\":%" PRIu32 ",\"period_ns\":%" PRIu64
		       ",\"dropped\":%" PRIu64 ",\"truncated\":%" PRIu64 ",\"functions\":[",
		       all, s->hz, s->period_ns, s->nr_dropped, s->nr_truncated);
		for (size_t i = 0; i < n; i++) {
			printf("%s{", i ? "," : "");
			if (o->by_process) {
				fputs("\"process\":", stdout);
				tt_emit_json_str(stdout, rows[i].group->process);
				putchar(',');
			}
			if (o->by_thread) {
				fputs("\"thread\":", stdout);
				tt_emit_json_str(stdout, rows[i].group->thread);
				putchar(',');
			}
			fputs("\"function\":", stdout);
			tt_emit_json_str(stdout, tt_samples_label(s, rows[i].func));
			fputs(",\"module\":", stdout);
			tt_emit_json_str(stdout, s->funcs[rows[i].func].module);
			printf(",\"self_samples\":%" PRIu64 ",\"total_samples\":%" PRIu64
			       ",\"self_percent\":%.2f,\"total_percent\":%.2f,\"est_self_ns\":%" PRIu64
			       "}",
			       rows[i].self, rows[i].total, pct(rows[i].self, all),
			       pct(rows[i].total, all), rows[i].self * s->period_ns);
		}
		puts("]}");
		return;
	}
	printf("%7s %7s %8s %8s %9s  %s%s%s\n", "self%", "total%", "self", "total", "est.self",
	       o->by_process ? "process  " : "", o->by_thread ? "thread  " : "",
	       "function  [module]");
	puts("--------------------------------------------------------------------------------");
	for (size_t i = 0; i < n; i++) {
		tt_emit_fmt_duration(est, sizeof(est), rows[i].self * s->period_ns);
		snprintf(self_t, sizeof(self_t), "%6.2f%%", pct(rows[i].self, all));
		printf("%7s %6.2f%% %8" PRIu64 " %8" PRIu64 " %9s  ", self_t,
		       pct(rows[i].total, all), rows[i].self, rows[i].total, est);
		if (o->by_process) {
			tt_emit_text(stdout, rows[i].group->process);
			fputs("  ", stdout);
		}
		if (o->by_thread) {
			tt_emit_text(stdout, rows[i].group->thread);
			fputs("  ", stdout);
		}
		tt_emit_text(stdout, tt_samples_label(s, rows[i].func));
		if (s->funcs[rows[i].func].module[0]) {
			fputs("  [", stdout);
			tt_emit_text(stdout, s->funcs[rows[i].func].module);
			putchar(']');
		}
		putchar('\n');
	}
	puts("--------------------------------------------------------------------------------");
	tt_emit_fmt_duration(est, sizeof(est), s->period_ns);
	printf("%" PRIu64 " samples at %" PRIu32 " Hz (%s of CPU time each), %" PRIu64
	       " dropped, %" PRIu64 " with a truncated stack\n",
	       all, s->hz, est, s->nr_dropped, s->nr_truncated);
}

int tt_cmd_profile(int argc, char **argv)
{
	struct profile_args a;
	struct tt_samples s;
	struct prow *rows = NULL;
	struct pgroup *groups = NULL;
	size_t n = 0, nr_groups = 0, k;
	char msg[512];
	enum tt_status st;
	int rc = 0;

	memset(&a, 0, sizeof(a));
	a.o = (struct tt_options)TT_OPTIONS_INIT;
	argp_parse(&profile_argp, argc, argv, 0, NULL, &a);
	st = tt_samples_read(&s, &a.o, &a.so, msg, sizeof(msg));
	if (st != TT_OK) {
		rc = tt_fail_file(s.failed ? s.failed : a.o.trace, msg);
		goto out;
	}
	if (!s.has_sampling) {
		rc = tt_fail_file(a.o.trace, tt_samples_missing(&s, msg, sizeof(msg)));
		goto out;
	}
	tt_samples_warn(&s);
	if (a.o.by_thread || a.o.by_process)
		rows = group_rows(&s, &a.o, &n, &groups, &nr_groups);
	else {
		rows = tt_xcalloc(s.nr_funcs + 1, sizeof(*rows));
		for (uint32_t f = 0; f < s.nr_funcs; f++)
			if (s.funcs[f].total)
				rows[n++] = (struct prow){ NULL, f, s.funcs[f].self, s.funcs[f].total };
	}
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (!a.o.has_function ||
		    regexec(&a.o.function_re, tt_samples_label(&s, rows[i].func), 0, NULL, 0) == 0)
			rows[k++] = rows[i];
	n = k;
	sort_samples = &s;
	if (n) /* no row: rows may be NULL, which qsort() must not get */
		qsort(rows, n, sizeof(*rows), by_self);
	if (a.o.top && n > a.o.top)
		n = a.o.top;
	print_rows(&s, rows, n, &a.o);
	if (fflush(stdout) || ferror(stdout)) {
		fputs("tracetool: stdout: cannot write\n", stderr);
		rc = 1;
	}
out:
	free(rows);
	for (size_t i = 0; i < nr_groups; i++) {
		free(groups[i].process);
		free(groups[i].thread);
	}
	free(groups);
	tt_samples_fini(&s);
	if (a.so.has_within)
		regfree(&a.so.within);
	tt_options_fini(&a.o);
	return rc;
}
