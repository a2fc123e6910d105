/* SPDX-License-Identifier: MIT */
/*
 * cmd_perfetto.c - `tracetool perfetto TRACE... -o OUT` (tracetool(1);
 * docs/EXPORT.md): a Perfetto trace (perfetto.c) of one or more recordings, for
 * ui.perfetto.dev and trace_processor, which load it far beyond the size
 * where Chrome JSON gives up. Each file is a process track with its threads'
 * tracks under it; times are on the wall clock (runs.h), so the processes of
 * several files share one timeline. A consumer of the pairing engine
 * (scopes.h): an enter writes a slice's BEGIN, a timed activation its END;
 * an activation that could not be timed (errors) is ended where the engine
 * closed it, so nesting stays whole, and counted on stderr. Each walker of
 * the walk pairs its threads and writes into its lane of the output
 * (out/lanes.h): the same bytes with any number of walkers. Streaming:
 * memory is the open frames of each thread, the names interned per thread,
 * a 1 MiB buffer and at most 8 MiB of lane per walker.
 */
#include <argp.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "cmd/options.h"
#include "out/perfetto.h"
#include "views/samples.h"
#include "engine/front.h"
#include "engine/report.h"
#include "views/labels.h"
#include "engine/runs.h"
#include "common/xalloc.h"
#include "out/lanes.h"

/* Arguments of one slice written, at most (its first keys). */
#define PF_MAX_ARGS 64

/* An argument of an open frame (TRACE_ARG), written with its END. */
struct pf_arg {
	uint32_t sp; /* the frame: enter_ticks[sp - 1] */
	char *key;
	int64_t v;
};

struct pf_walker;

struct pf_thread {
	struct pf_walker *pw; /* the walker that pairs it */
	uint32_t rank;	      /* its place among the run's threads (pf_thread_seen()) */
	struct tt_pf_seq seq;
	uint64_t *enter_ticks; /* open frames */
	uint32_t sp, cap;
	struct pf_arg *args;   /* of the open frames, by sp ascending */
	uint32_t nr_args, cap_args;
	/* The value tracks described on its sequence. */
	uint64_t *tracks; /* their uuids (track_of()) */
	uint32_t nr_tracks, cap_tracks;
	struct tt_hmap track_map; /* hmap.h: tracks by uuid */
	/* What its TrackDescriptor says, checked against the thread's final
	 * name and tid when the run was skimmed (single_read_held()). */
	uint32_t serial, tid;
	char *name;
	struct pf_thread *next;
};

struct pf;

/*
 * One walker of a run's walk (front.h): its threads, the labels of its
 * replica's names, and a writer of its own into its lane of the output
 * (out/lanes.h), so that the output is the same whatever the number of
 * walkers.
 */
struct pf_walker {
	struct pf *pf;
	struct tt_trace *tr; /* its replica (pf_thread_seen()) */
	struct tt_lane *lane;
	struct tt_pf w;
	struct pf_thread *threads;
	uint32_t nr_ranked, nr_ranks, *rank; /* threads seen; rank by thread index */
	uint64_t slices, errors;
	struct tt_inc_labels labels; /* the replica's scope names (labels.h) */
};

struct pf {
	struct tt_pf w;
	struct tt_out *dst; /* w's file, for the lanes */
	const struct tt_run *run;
	struct tt_report *rep;
	struct pf_walker walkers[TT_WALK_MAX_REPLICAS];
	unsigned nr_walkers;
	struct tt_lanes lanes;
	uint32_t seq_base; /* the run's first thread sequence */
	uint64_t slices, errors;
	uint64_t spilled; /* bytes the lanes put in temporary files */
	bool stats;	  /* TRACETOOL_PERFETTO_STATS */
	uint64_t walker_cpu_ns[TT_WALK_MAX_REPLICAS]; /* each walker's share, all runs */
};

static uint64_t process_uuid(const struct tt_run *r)
{
	return (uint64_t)(r->run_id + 1) << 32;
}

/* What the walker writes next belongs where its replica is in the walk
 * (lanes.h): its buffered packets go into the lane before the mark. */
static void pf_at(struct pf_walker *pw)
{
	if (pw->tr->pos != pw->lane->pos) {
		tt_pf_drain(&pw->w);
		tt_lane_at(pw->lane, pw->tr->pos);
	}
}

/*
 * Every walker, at each thread's first events in the file's order
 * (scopes.h, thread_seen): the thread's rank, which numbers its sequence,
 * so that every walker numbers alike.
 */
static void pf_thread_seen(void *ctx, struct tt_trace *tr, struct tt_thread *th)
{
	struct pf_walker *pw = ctx;
	const uint32_t idx = (uint32_t)(th - tr->threads);

	pw->tr = tr;
	if (idx >= pw->nr_ranks) {
		pw->rank = tt_xrealloc(pw->rank, ((size_t)idx + 1) * sizeof(*pw->rank));
		for (; pw->nr_ranks <= idx; pw->nr_ranks++)
			pw->rank[pw->nr_ranks] = UINT32_MAX;
	}
	pw->rank[idx] = pw->nr_ranked++;
}

/* Every walker, after each record: its lane is written up to there. */
static void pf_progress(void *ctx, struct tt_trace *tr)
{
	struct pf_walker *pw = ctx;

	pw->tr = tr;
	tt_pf_drain(&pw->w);
	tt_lane_done(pw->lane, tr->pos);
}

static void *pf_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct pf_walker *pw = ctx;
	struct pf *pf = pw->pf;
	struct pf_thread *pt = tt_xcalloc(1, sizeof(*pt));
	/* The final name and tid from the metadata pass; after a skim, the
	 * thread's as read so far (checked at the end of the file). */
	const struct tt_thread *m = pf->run->skimmed
		? NULL : tt_trace_find_thread(&pf->run->meta, th->serial);
	const char *name = m ? m->name : th->name;
	uint32_t tid = m && m->defined ? m->os_tid : th->os_tid;
	const uint32_t idx = (uint32_t)(th - pw->tr->threads);

	assert(idx < pw->nr_ranks); /* pf_thread_seen() came first */
	pt->pw = pw;
	pt->rank = pw->rank[idx];
	pt->serial = th->serial;
	pt->tid = tid;
	pt->name = name ? tt_xstrndup(name, strlen(name)) : NULL;
	pf_at(pw);
	pw->w.next_seq = pf->seq_base + pt->rank; /* whoever pairs it */
	tt_pf_thread(&pw->w, &pt->seq, process_uuid(pf->run) | th->serial, (int32_t)pf->run->pid,
		     (int32_t)tid, name, 0);
	pt->next = pw->threads;
	pw->threads = pt;
	return pt;
}

static uint32_t pf_enter(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			 bool in_window)
{
	struct pf_thread *pt = tctx;
	struct pf_walker *pw = pt->pw;
	/* The label only for the packet that interns the name (its first on the thread). */
	const char *s = tt_pf_seq_has_name(&pt->seq, name)
				? NULL
				: tt_inc_label(&pw->labels, pw->tr->names, pw->tr->nr_names, name);

	(void)parent_slot;
	(void)in_window;
	pf_at(pw);
	if (pt->sp == pt->cap) {
		pt->cap = pt->cap ? 2 * pt->cap : 64;
		pt->enter_ticks = tt_xrealloc(pt->enter_ticks, pt->cap * sizeof(*pt->enter_ticks));
	}
	pt->enter_ticks[pt->sp++] = ticks;
	tt_pf_begin(&pw->w, &pt->seq, tt_run_unix_ns(pw->pf->run, ticks), name, s, SIZE_MAX);
	return pt->sp;
}

static void pf_end_top(struct pf_thread *pt, uint64_t ns)
{
	const char *keys[PF_MAX_ARGS];
	int64_t vals[PF_MAX_ARGS];
	uint32_t n = 0, i = pt->nr_args;

	if (!i) { /* no argument on the thread: the plain END (most slices) */
		tt_pf_end(&pt->pw->w, &pt->seq, ns);
		pt->sp--;
		return;
	}

	while (i && pt->args[i - 1].sp >= pt->sp)
		i--;
	for (uint32_t k = i; k < pt->nr_args && n < PF_MAX_ARGS; k++)
		if (pt->args[k].sp == pt->sp) {
			keys[n] = pt->args[k].key;
			vals[n++] = pt->args[k].v;
		}
	tt_pf_end_args(&pt->pw->w, &pt->seq, ns, keys, vals, n);
	for (uint32_t k = i; k < pt->nr_args; k++)
		free(pt->args[k].key);
	pt->nr_args = i;
	pt->sp--;
}

static void pf_act(void *tctx, const struct tt_activation *a)
{
	struct pf_thread *pt = tctx;

	if (!pt->sp)
		return;
	pf_at(pt->pw);
	pf_end_top(pt, tt_run_unix_ns(pt->pw->pf->run, a->exit_ticks));
	pt->pw->slices++;
}

struct track_key {
	const struct pf_thread *pt;
	uint64_t uuid;
};

static bool track_eq(const void *ctx, uint32_t k)
{
	const struct track_key *t = ctx;

	return t->pt->tracks[k] == t->uuid;
}

/*
 * The counter track of the values named s[0, n) in run r: one per name and
 * run, its uuid a 64-bit hash of both with the top bit set (above every
 * process and thread track's: process_uuid()), so that every walker gives
 * it the same without asking the others. Described on each thread's
 * sequence before the thread's first value on it (trace_processor takes a
 * track described again). A hash table: O(1) a sample whatever the number
 * of tracks (issue 26: a scan of the tracks made 1 000 tracks x 4 000
 * samples take 9.5 s).
 */
static uint64_t track_of(struct pf_thread *pt, const char *s, uint32_t n)
{
	const struct tt_run *r = pt->pw->pf->run;
	uint64_t h = 1469598103934665603ull ^ r->run_id;
	uint32_t hk, k;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	h |= (uint64_t)1 << 63;
	const struct track_key key = { pt, h };

	hk = tt_hash_u64(h); /* a name the file chose: keyed, hmap.h */
	k = tt_hmap_find(&pt->track_map, hk, track_eq, &key);
	if (k != TT_HMAP_NONE)
		return h;
	if (pt->nr_tracks == pt->cap_tracks) {
		pt->cap_tracks = pt->cap_tracks ? 2 * pt->cap_tracks : 8;
		pt->tracks = tt_xrealloc(pt->tracks, pt->cap_tracks * sizeof(*pt->tracks));
	}
	tt_hmap_put(&pt->track_map, hk, pt->nr_tracks);
	pt->tracks[pt->nr_tracks++] = h;
	char *name = tt_xstrndup(s, n);

	tt_pf_counter_track(&pt->pw->w, &pt->seq, h, process_uuid(r), name);
	free(name);
	return h;
}

/* A flow's id on the whole trace: its name and 64-bit id. */
static uint64_t flow_uid(const struct tt_annot *a)
{
	uint64_t h = 1469598103934665603ull;

	for (uint32_t i = 0; i < a->name_bytes; i++)
		h = (h ^ (uint8_t)a->name[i]) * 1099511628211ull;
	return h ^ (a->id * 0x9e3779b97f4a7c15ull);
}

/*
 * Annotations (docs/EXPORT.md, "Perfetto traces"): a value on a counter
 * track of the process (one per track name), an instant or a message an instant of the thread
 * (the message's text in a debug annotation "message"), an argument a
 * debug annotation of its slice (on its END, which trace_processor merges
 * into the slice's args; a key set twice: the later value), a flow event
 * an instant inside the slice it was recorded in, carrying the flow's id
 * (flow_ids; terminating_flow_ids at its end), so the flow links the
 * activations it passes through.
 */
static void pf_annot(void *tctx, uint32_t slot, uint32_t depth, const struct tt_annot *a)
{
	struct pf_thread *pt = tctx;
	struct pf_walker *pw = pt->pw;
	uint64_t ns = tt_run_unix_ns(pw->pf->run, a->ticks);

	(void)slot;
	pf_at(pw);
	switch (a->kind) {
	case TT_ANNOT_VALUE: {
		uint64_t uuid = track_of(pt, a->name, a->name_bytes);

		if (a->is_double)
			tt_pf_counter_double(&pw->w, &pt->seq, ns, uuid, a->d);
		else
			tt_pf_counter(&pw->w, &pt->seq, ns, uuid, a->i);
		break;
	}
	case TT_ANNOT_INSTANT:
		tt_pf_mark(&pw->w, &pt->seq, ns, a->name, a->name_bytes, NULL, 0, 0, 0);
		break;
	case TT_ANNOT_MESSAGE: {
		/* Valid UTF-8 for protobuf strings (invalid bytes: U+FFFD). */
		char *text = tt_emit_clean(a->name, a->name_bytes);

		tt_pf_mark(&pw->w, &pt->seq, ns, text, strlen(text), text, strlen(text), 0, 0);
		free(text);
		break;
	}
	case TT_ANNOT_ARG: {
		uint32_t k, n = 0;

		if (!depth || depth != pt->sp)
			return;
		for (k = pt->nr_args; k && pt->args[k - 1].sp == depth; k--, n++)
			if (strlen(pt->args[k - 1].key) == a->name_bytes &&
			    memcmp(pt->args[k - 1].key, a->name, a->name_bytes) == 0) {
				pt->args[k - 1].v = a->i;
				return;
			}
		/* The END carries the frame's first PF_MAX_ARGS keys: a key
		 * past them would never be written, and keeping it would make
		 * this scan quadratic in a frame's arguments. */
		if (n >= PF_MAX_ARGS)
			return;
		if (pt->nr_args == pt->cap_args) {
			pt->cap_args = pt->cap_args ? 2 * pt->cap_args : 8;
			pt->args = tt_xrealloc(pt->args, pt->cap_args * sizeof(*pt->args));
		}
		pt->args[pt->nr_args].sp = depth;
		pt->args[pt->nr_args].key = tt_emit_clean(a->name, a->name_bytes);
		pt->args[pt->nr_args++].v = a->i;
		break;
	}
	default: /* flows */
		if (!depth)
			return;
		tt_pf_mark(&pw->w, &pt->seq, ns, a->name, a->name_bytes, NULL, 0,
			   a->kind == TT_ANNOT_FLOW_END ? -1 : 1, flow_uid(a));
		break;
	}
}

static void pf_error(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
		     uint64_t ticks, enum tt_frame_error why)
{
	struct pf_thread *pt = tctx;

	(void)name;
	(void)slot;
	if (!pt->sp)
		return;
	pf_at(pt->pw);
	/* A clock that went backwards ends the slice where it began. */
	pf_end_top(pt, tt_run_unix_ns(pt->pw->pf->run, ticks < enter_ticks ? enter_ticks : ticks));
	/* A snapshot's window ends inside scopes: open, not untimed (FORMAT.md §3.20). */
	if (why != TT_FRAME_OPEN_AT_END || !pt->pw->tr->has_snapshot)
		pt->pw->errors++;
}

static const struct tt_consumer pf_consumer = {
	.thread_begin = pf_thread_begin,
	.enter = pf_enter,
	.act = pf_act,
	.error = pf_error,
	.annot = pf_annot,
	.thread_seen = pf_thread_seen,
	.progress = pf_progress,
	.eager_names = true, /* labels alike on every walker */
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

/*
 * True if the run's single read wrote what two reads would have: the skim's
 * clock, pid, start and program are the file's final ones, and every
 * thread's TrackDescriptor has its final name and tid (a thread named or
 * renamed after its first events, or whose THREAD record came after its
 * first EVENTS block, was written with an earlier one).
 */
static bool single_read_held(const struct pf *pf, const struct tt_run *r,
			     const struct tt_report *rep)
{
	if (!tt_run_skim_matches(r, &rep->tr))
		return false;
	for (unsigned w = 0; w < pf->nr_walkers; w++)
		for (const struct pf_thread *pt = pf->walkers[w].threads; pt; pt = pt->next) {
			const struct tt_thread *th = tt_trace_find_thread(&rep->tr, pt->serial);

			if (!th)
				continue; /* a metadata pass would not have it either */
			if ((th->defined && th->os_tid != pt->tid) ||
			    (th->name && pt->name ? strcmp(th->name, pt->name) != 0
						  : th->name != pt->name))
				return false;
		}
	return true;
}

/* Frees a walker's threads and state; its counts go to pf's. */
static void walker_fini(struct pf_walker *pw)
{
	pw->pf->slices += pw->slices;
	pw->pf->errors += pw->errors;
	pw->pf->w.packets += pw->w.packets;
	while (pw->threads) {
		struct pf_thread *pt = pw->threads;

		pw->threads = pt->next;
		tt_pf_seq_fini(&pt->seq);
		free(pt->enter_ticks);
		for (uint32_t k = 0; k < pt->nr_args; k++)
			free(pt->args[k].key);
		free(pt->args);
		free(pt->tracks);
		tt_hmap_fini(&pt->track_map);
		free(pt->name);
		free(pt);
	}
	free(pw->rank);
	tt_pf_fini(&pw->w);
	tt_inc_labels_fini(&pw->labels);
	memset(pw, 0, sizeof(*pw));
}

/*
 * A walker per replica (front.h), each writing into its lane (lanes.h) of
 * pf->w's file, after what pf->w has written.
 */
static void walkers_init(struct pf *pf, void **ctxs)
{
	tt_pf_drain(&pf->w);
	if (fflush(pf->w.f) != 0 && !pf->w.err)
		pf->w.err = errno ? -errno : -EIO;
	tt_out_init(pf->dst, fileno(pf->w.f));
	pf->nr_walkers = tt_walk_nr_walkers(&pf_consumer);
	tt_lanes_init(&pf->lanes, pf->nr_walkers, pf->dst, 0);
	pf->lanes.timed = pf->stats;
	for (unsigned i = 0; i < pf->nr_walkers; i++) {
		struct pf_walker *pw = &pf->walkers[i];

		memset(pw, 0, sizeof(*pw));
		pw->pf = pf;
		pw->lane = &pf->lanes.lanes[i];
		tt_pf_init_out(&pw->w, &pw->lane->out);
		ctxs[i] = pw;
	}
}

/* The lanes into the file (what the walk did not write yet); pf->w goes on
 * after them. Return: the thread seen last (NULL: none). */
static struct pf_thread *walkers_done(struct pf *pf, uint32_t *nr_seen)
{
	struct pf_thread *last = NULL;

	*nr_seen = 0;
	for (unsigned i = 0; i < pf->nr_walkers; i++) {
		struct pf_walker *pw = &pf->walkers[i];

		tt_pf_drain(&pw->w);
		if (pw->nr_ranked > *nr_seen)
			*nr_seen = pw->nr_ranked;
		for (struct pf_thread *pt = pw->threads; pt; pt = pt->next)
			if (!last || pt->rank > last->rank)
				last = pt;
	}
	tt_lanes_finish(&pf->lanes);
	for (unsigned i = 0; i < pf->nr_walkers; i++)
		pf->walker_cpu_ns[i] += pf->lanes.lanes[i].cpu_ns;
	pf->w.bytes += pf->lanes.bytes;
	pf->spilled += pf->lanes.spilled;
	if (pf->dst->failed && !pf->w.err)
		pf->w.err = -pf->dst->err;
	return last;
}

static void walkers_fini(struct pf *pf)
{
	for (unsigned i = 0; i < pf->nr_walkers; i++)
		walker_fini(&pf->walkers[i]);
	if (pf->nr_walkers)
		tt_lanes_fini(&pf->lanes);
	pf->nr_walkers = 0;
}

/*
 * Writes every run into pf->w. Files before warn_from have had their
 * warnings printed by an earlier attempt. Return: 0, an exit code, or -1
 * with *again the first run whose single read did not hold (the output
 * must be written again from the runs' metadata passes).
 */
static int convert(struct pf *pf, struct tt_run *runs, unsigned nr_runs, unsigned warn_from,
		   unsigned *again)
{
	char msg[512];

	for (unsigned i = 0; i < nr_runs; i++) {
		struct tt_options o = TT_OPTIONS_INIT;
		struct tt_report rep;
		struct tt_walk_spec spec = { .cons = &pf_consumer };
		struct pf_thread *last;
		uint32_t nr_seen, past = 0;
		bool held = true;

		tt_pf_process(&pf->w, process_uuid(&runs[i]), (int32_t)runs[i].pid,
			      tt_run_program_base(&runs[i]));
		pf->run = &runs[i];
		pf->rep = &rep;
		pf->seq_base = pf->w.next_seq;
		walkers_init(pf, spec.ctxs);
		o.trace = runs[i].path;
		enum tt_status st = tt_walk(&rep, &o, &spec, msg, sizeof(msg));
		last = walkers_done(pf, &nr_seen);
		pf->w.next_seq = pf->seq_base + nr_seen;
		if (st == TT_OK && runs[i].skimmed)
			held = single_read_held(pf, &runs[i], &rep);
		if (!held) {
			tt_report_fini(&rep);
			walkers_fini(pf);
			*again = i;
			return -1;
		}
		if (st == TT_OK && i >= warn_from)
			tt_trace_warn(&rep.tr);
		for (unsigned w = 0; w < pf->nr_walkers; w++)
			if (pf->walkers[w].tr && pf->walkers[w].tr->nr_names > past)
				past = pf->walkers[w].tr->nr_names;
		if (st == TT_OK && rep.tr.has_snapshot && last) {
			/* A flight-recorder snapshot's trigger (FORMAT.md §3.20): an
			 * instant on a thread's track, after all its slices. */
			char what[300];
			int n = snprintf(what, sizeof(what), "snapshot #%" PRIu32 ": %s",
					 rep.tr.snapshot.number,
					 rep.tr.snapshot_reason ? rep.tr.snapshot_reason : "");

			tt_pf_instant(&pf->w, &last->seq,
				      tt_run_unix_ns(&runs[i], rep.tr.snapshot.trigger_ticks),
				      past, what, /* past every name's id */
				      n < 0 ? 0 : (size_t)n < sizeof(what) ? (size_t)n : sizeof(what) - 1);
		}
		tt_report_fini(&rep);
		walkers_fini(pf);
		if (st != TT_OK)
			return tt_fail_file(runs[i].path, msg);
	}
	return 0;
}

/* True if OUT can be written again from its start (a regular file, or a
 * name not taken yet): then the runs are skimmed, not read twice. */
static bool can_rewrite(const char *out)
{
	struct stat st;

	if (getenv("TRACETOOL_TWO_READS"))
		return false;
	if (stat(out, &st) != 0)
		return errno == ENOENT;
	return S_ISREG(st.st_mode);
}

/*
 * Each file is read once when its skim holds (issue 13 item 1): frame 0 and
 * the last frame give the final clock and the program, and each thread's
 * TrackDescriptor is written with the name and tid it has at its first
 * events. At the end of each file that is checked against the file's final
 * tables; if it does not hold (a thread renamed after its first events...)
 * OUT is truncated and written again from the files' metadata passes, as
 * before, so the output is always what two reads give.
 */
static void sample_frame(void *ctx, uint32_t loc, struct tt_pf_frame *out)
{
	const struct tt_samples *s = ctx;
	const struct tt_sloc *l = &s->locs[loc];

	out->func = l->func;
	out->name = tt_samples_label(s, l->func);
	out->map = l->mapping == TT_SAMPLES_NO_MAP ? 0 : l->mapping + 1;
	if (out->map) {
		const struct tt_smap *m = &s->maps[l->mapping];

		/* As Perfetto's profilers write it: the offset in the module's file. */
		out->rel_pc = l->addr - m->start + m->offset;
	}
}

/* Module map - 1 of s, its build-id back from hex to bytes (in a static
 * buffer: the writer copies it before the next call). */
static void sample_map(void *ctx, uint32_t map, struct tt_pf_map *out)
{
	static uint8_t id[RECFMT_MAX_BUILD_ID_BYTES];
	const struct tt_samples *s = ctx;
	const struct tt_smap *m = &s->maps[map - 1];
	size_t n = strlen(m->build_id) / 2;

	if (n > sizeof(id))
		n = sizeof(id);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(m->build_id + 2 * i, "%2x", &v);
		id[i] = (uint8_t)v;
	}
	*out = (struct tt_pf_map){ .start = m->start, .end = m->limit, .start_offset = m->offset,
				   .path = m->path, .build_id = id, .build_id_bytes = (uint32_t)n };
}

/*
 * The stack samples of run r (REC_SAMPLE), after its events: one sequence
 * per thread of Perfetto callstack samples (out/perfetto.h), on the runs'
 * wall clock, named as tracetool profile names them.
 */
static int write_samples(struct pf *pf, const struct tt_run *r, char *msg, size_t msg_bytes)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_samples_opts so = { .locations = true }; /* each frame's address */
	struct tt_samples s;
	uint32_t nr_threads;
	struct tt_pf_seq *seqs;
	bool *started;
	const struct tt_pf_frames frames = { sample_frame, sample_map, &s };

	o.trace = r->path;
	if (tt_samples_read(&s, &o, &so, msg, msg_bytes) != TT_OK) {
		tt_samples_fini(&s);
		return tt_fail_file(r->path, msg);
	}
	nr_threads = s.files[0].tr.nr_threads;
	seqs = tt_xcalloc(nr_threads + 1, sizeof(*seqs));
	started = tt_xcalloc(nr_threads + 1, sizeof(*started));
	/* Rows are in file order, each thread's in its samples' order. */
	for (size_t i = 0; i < s.nr_rows; i++) {
		const struct tt_srow *row = &s.rows[i];
		const struct tt_thread *th = &s.files[0].tr.threads[row->thread];
		const struct tt_sstack *stk = &s.loc_stacks[row->loc_stack];
		uint32_t root_first[RECFMT_MAX_SAMPLE_FRAMES];
		uint64_t ns = tt_run_unix_ns(r, row->ticks);

		if (!started[row->thread]) {
			tt_pf_sample_seq(&pf->w, &seqs[row->thread], ns);
			started[row->thread] = true;
		}
		for (uint32_t k = 0; k < stk->n && k < RECFMT_MAX_SAMPLE_FRAMES; k++)
			root_first[k] = s.loc_frames[stk->at + stk->n - 1 - k];
		tt_pf_sample(&pf->w, &seqs[row->thread], ns, (int32_t)r->pid, (int32_t)th->os_tid,
			     row->loc_stack, root_first, stk->n, &frames);
	}
	for (uint32_t t = 0; t < nr_threads; t++)
		tt_pf_seq_fini(&seqs[t]);
	free(seqs);
	free(started);
	tt_samples_fini(&s);
	return 0;
}

int tt_cmd_perfetto(int argc, char **argv)
{
	struct tt_files_args a = { .missing_out = "missing -o OUT" };
	struct pf pf;
	static struct tt_out dst; /* 64 KiB: not on the stack */
	struct tt_run *runs;
	struct stat ost;
	FILE *f = NULL;
	char msg[512];
	int rc = 0;
	unsigned nr_open = 0, again = 0, nr_once = 0;
	bool skim, created;

	argp_parse(&perfetto_argp, argc, argv, 0, NULL, &a);
	memset(&pf, 0, sizeof(pf));
	pf.dst = &dst;
	pf.stats = getenv("TRACETOOL_PERFETTO_STATS") != NULL;
	runs = tt_xcalloc(a.nr_traces, sizeof(*runs));
	skim = can_rewrite(a.out);
	for (unsigned i = 0; i < a.nr_traces; i++) {
		nr_open++;
		if ((skim ? tt_run_open_skim : tt_run_open)(&runs[i], a.traces[i], i, msg,
							     sizeof(msg)) != TT_OK) {
			rc = tt_fail_file(a.traces[i], msg);
			goto out;
		}
		if (same_file(a.out, a.traces[i])) {
			/* Wrong usage, as chrome's and flame's -o (docs/ANALYZER.md). */
			snprintf(msg, sizeof(msg), "is the input trace %s; refusing to overwrite it",
				 a.traces[i]);
			rc = tt_fail_file(a.out, msg) + 1;
			goto out;
		}
	}
	created = skim && access(a.out, F_OK) != 0;
	f = fopen(a.out, "we");
	if (!f) {
		snprintf(msg, sizeof(msg), "cannot open: %s", strerror(errno));
		rc = tt_fail_file(a.out, msg);
		goto out;
	}
	if (skim && (fstat(fileno(f), &ost) != 0 || !S_ISREG(ost.st_mode)))
		again = 0; /* replaced by something else meanwhile: two reads */
	else if (skim) {
		tt_pf_init(&pf.w, f);
		rc = convert(&pf, runs, a.nr_traces, 0, &again);
		if (rc > 0 && created)
			unlink(a.out); /* as when the metadata pass failed: no OUT */
		if (rc != -1) {
			for (unsigned i = 0; i < a.nr_traces; i++)
				nr_once += runs[i].skimmed;
			goto done;
		}
		tt_pf_fini(&pf.w);
		memset(&pf, 0, sizeof(pf));
		pf.dst = &dst;
		pf.stats = getenv("TRACETOOL_PERFETTO_STATS") != NULL;
		if (fflush(f) != 0 || ftruncate(fileno(f), 0) != 0) {
			snprintf(msg, sizeof(msg), "cannot write: %s", strerror(errno));
			rc = tt_fail_file(a.out, msg);
			goto out;
		}
		rewind(f);
	}
	/* Two reads: each skimmed run's metadata pass, then its events. */
	for (unsigned i = 0; i < a.nr_traces; i++) {
		if (!runs[i].skimmed)
			continue;
		tt_run_close(&runs[i]);
		if (tt_run_open(&runs[i], a.traces[i], i, msg, sizeof(msg)) != TT_OK) {
			rc = tt_fail_file(a.traces[i], msg);
			goto out;
		}
	}
	tt_pf_init(&pf.w, f);
	rc = convert(&pf, runs, a.nr_traces, again, &again);
done:
	if (rc)
		goto out;
	for (unsigned i = 0; i < a.nr_traces && !rc; i++)
		if (runs[i].meta.has_sampling)
			rc = write_samples(&pf, &runs[i], msg, sizeof(msg));
	if (rc)
		goto out;
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
	if (pf.stats) {
		const unsigned nr = tt_walk_nr_walkers(&pf_consumer);

		fprintf(stderr, "%s: %u of %u file(s) read once\n%s: %u walker(s), %" PRIu64
			" bytes through temporary files\n%s: walkers' CPU time (s):", a.out,
			nr_once, a.nr_traces, a.out, nr, pf.spilled, a.out);
		for (unsigned w = 0; w < nr; w++)
			fprintf(stderr, " %.3f", (double)pf.walker_cpu_ns[w] / 1e9);
		fputc('\n', stderr);
	}
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
