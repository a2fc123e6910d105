/* SPDX-License-Identifier: MIT */
/*
 * cmd_perfetto.c - `tracetool perfetto TRACE... -o OUT` (contract §10): a
 * Perfetto trace (perfetto.c) of one or more recordings, for
 * ui.perfetto.dev and trace_processor, which load it far beyond the size
 * where Chrome JSON gives up. Each file is a process track with its threads'
 * tracks under it; times are on the wall clock (runs.h), so the processes of
 * several files share one timeline. A consumer of the pairing engine
 * (scopes.h): an enter writes a slice's BEGIN, a timed activation its END;
 * an activation that could not be timed (errors) is ended where the engine
 * closed it, so nesting stays whole, and counted on stderr. Streaming:
 * memory is the open frames of each thread, the names interned per thread
 * and a 1 MiB buffer.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "options.h"
#include "perfetto.h"
#include "report.h"
#include "runs.h"
#include "xalloc.h"

struct pf_thread {
	struct pf *pf;
	struct tt_pf_seq seq;
	uint64_t *enter_ticks; /* open frames */
	uint32_t sp, cap;
	struct pf_thread *next;
};

struct pf {
	struct tt_pf w;
	const struct tt_run *run;
	struct tt_report *rep;
	struct pf_thread *threads;
	uint64_t slices, errors;
};

static uint64_t process_uuid(const struct tt_run *r)
{
	return (uint64_t)(r->run_id + 1) << 32;
}

static void *pf_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct pf *pf = ctx;
	struct pf_thread *pt = tt_xcalloc(1, sizeof(*pt));
	const struct tt_thread *m = tt_trace_find_thread(&pf->run->meta, th->serial);
	const char *name = m ? m->name : th->name;
	uint32_t tid = m && m->defined ? m->os_tid : th->os_tid;

	pt->pf = pf;
	tt_pf_thread(&pf->w, &pt->seq, process_uuid(pf->run) | th->serial, (int32_t)pf->run->pid,
		     (int32_t)tid, name, 0);
	pt->next = pf->threads;
	pf->threads = pt;
	return pt;
}

static uint32_t pf_enter(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			 bool in_window)
{
	struct pf_thread *pt = tctx;
	struct pf *pf = pt->pf;
	const char *s = pf->rep->tr.names[name];

	(void)parent_slot;
	(void)in_window;
	if (pt->sp == pt->cap) {
		pt->cap = pt->cap ? 2 * pt->cap : 64;
		pt->enter_ticks = tt_xrealloc(pt->enter_ticks, pt->cap * sizeof(*pt->enter_ticks));
	}
	pt->enter_ticks[pt->sp++] = ticks;
	tt_pf_begin(&pf->w, &pt->seq, tt_run_unix_ns(pf->run, ticks), name, s, SIZE_MAX);
	return pt->sp;
}

static void pf_act(void *tctx, const struct tt_activation *a)
{
	struct pf_thread *pt = tctx;

	if (!pt->sp)
		return;
	pt->sp--;
	tt_pf_end(&pt->pf->w, &pt->seq, tt_run_unix_ns(pt->pf->run, a->exit_ticks));
	pt->pf->slices++;
}

static void pf_error(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
		     uint64_t ticks, enum tt_frame_error why)
{
	struct pf_thread *pt = tctx;

	(void)name;
	(void)slot;
	if (!pt->sp)
		return;
	pt->sp--;
	/* A clock that went backwards ends the slice where it began. */
	tt_pf_end(&pt->pf->w, &pt->seq,
		  tt_run_unix_ns(pt->pf->run, ticks < enter_ticks ? enter_ticks : ticks));
	/* A snapshot's window ends inside scopes: open, not untimed (FORMAT.md §3.20). */
	if (why != TT_FRAME_OPEN_AT_END || !pt->pf->rep->tr.has_snapshot)
		pt->pf->errors++;
}

static const struct tt_consumer pf_consumer = {
	.thread_begin = pf_thread_begin,
	.enter = pf_enter,
	.act = pf_act,
	.error = pf_error,
	.one_walker = true,
	.needs_meta = false,
	.no_times = true, /* activations only: no per-name statistics */
};

static error_t parse_perfetto(int key, char *arg, struct argp_state *state)
{
	return tt_options_parse_files(key, arg, state, state->input);
}

static const struct argp_option perfetto_options[] = {
	{ "output", 'o', "OUT", 0, "Write the Perfetto trace to OUT", 0 },
	{ 0 },
};

static const struct argp perfetto_argp = {
	perfetto_options, parse_perfetto, "TRACE...",
	"Convert traces to a Perfetto protobuf trace (open it in https://ui.perfetto.dev "
	"or trace_processor): one process track per TRACE, one track per thread, "
	"activations as slices, on one wall-clock timeline.\v"
	"Examples:\n"
	"  tracetool perfetto -o out.pftrace trace.zst\n"
	"  tracetool perfetto -o service.pftrace trace-1234.zst trace-1235.zst",
	NULL, 0, 0,
};

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int tt_cmd_perfetto(int argc, char **argv)
{
	struct tt_files_args a = { .missing_out = "missing -o OUT" };
	struct pf pf;
	struct tt_run *runs;
	FILE *f = NULL;
	char msg[512];
	int rc = 0;
	unsigned nr_open = 0;

	argp_parse(&perfetto_argp, argc, argv, 0, NULL, &a);
	memset(&pf, 0, sizeof(pf));
	runs = tt_xcalloc(a.nr_traces, sizeof(*runs));
	for (unsigned i = 0; i < a.nr_traces; i++) {
		nr_open++;
		if (tt_run_open(&runs[i], a.traces[i], i, msg, sizeof(msg)) != TT_OK) {
			rc = tt_fail_file(a.traces[i], msg);
			goto out;
		}
		if (same_file(a.out, a.traces[i])) {
			rc = tt_fail_file(a.out, "is an input trace; not overwritten");
			goto out;
		}
	}
	f = fopen(a.out, "we");
	if (!f) {
		snprintf(msg, sizeof(msg), "cannot open: %s", strerror(errno));
		rc = tt_fail_file(a.out, msg);
		goto out;
	}
	tt_pf_init(&pf.w, f);
	for (unsigned i = 0; i < a.nr_traces; i++) {
		struct tt_options o = TT_OPTIONS_INIT;
		struct tt_report rep;
		void *ctxs[TT_REPORT_MAX_REPLICAS] = { &pf };
		tt_pf_process(&pf.w, process_uuid(&runs[i]), (int32_t)runs[i].pid,
			      tt_run_program_base(&runs[i]));
		pf.run = &runs[i];
		pf.rep = &rep;
		o.trace = runs[i].path;
		enum tt_status st = tt_report_run_views(&rep, &o, NULL, NULL, &pf_consumer, ctxs,
						       msg, sizeof(msg));
		if (st == TT_OK)
			tt_trace_warn(&rep.tr);
		if (st == TT_OK && rep.tr.has_snapshot && pf.threads) {
			/* A flight-recorder snapshot's trigger (FORMAT.md §3.20): an
			 * instant on a thread's track, after all its slices. */
			char what[300];
			int n = snprintf(what, sizeof(what), "snapshot #%" PRIu32 ": %s",
					 rep.tr.snapshot.number,
					 rep.tr.snapshot_reason ? rep.tr.snapshot_reason : "");

			tt_pf_instant(&pf.w, &pf.threads->seq,
				      tt_run_unix_ns(&runs[i], rep.tr.snapshot.trigger_ticks),
				      rep.tr.nr_names, what, /* past every name's id */
				      n < 0 ? 0 : (size_t)n < sizeof(what) ? (size_t)n : sizeof(what) - 1);
		}
		tt_report_fini(&rep);
		while (pf.threads) {
			struct pf_thread *pt = pf.threads;

			pf.threads = pt->next;
			tt_pf_seq_fini(&pt->seq);
			free(pt->enter_ticks);
			free(pt);
		}
		if (st != TT_OK) {
			rc = tt_fail_file(runs[i].path, msg);
			goto out;
		}
	}
	if (pf.errors)
		fprintf(stderr,
			"tracetool: %s: %" PRIu64 " activation(s) could not be timed; their "
			"slices end where the pairing closed them\n",
			a.out, pf.errors);
	if (tt_pf_flush(&pf.w) != 0) {
		snprintf(msg, sizeof(msg), "cannot write: %s", strerror(-pf.w.err));
		rc = tt_fail_file(a.out, msg);
	}
	if (getenv("TRACETOOL_PERFETTO_STATS"))
		fprintf(stderr, "%s: %" PRIu64 " slices, %" PRIu64 " packets, %" PRIu64 " bytes\n",
			a.out, pf.slices, pf.w.packets, pf.w.bytes);
out:
	if (f && fclose(f) != 0 && !rc) {
		snprintf(msg, sizeof(msg), "cannot write: %s", strerror(errno));
		rc = tt_fail_file(a.out, msg);
	}
	tt_pf_fini(&pf.w);
	for (unsigned i = 0; i < nr_open; i++)
		tt_run_close(&runs[i]);
	free(runs);
	tt_files_args_fini(&a);
	return rc;
}
