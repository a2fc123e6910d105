/* SPDX-License-Identifier: MIT */
/*
 * test_annots.c - annotations (rec(3), Annotations) end to end inside the test
 * process: TRACE_VALUE/INSTANT/MESSAGE/ARG/FLOW_* run, the trace is read
 * back through format/'s decode API (recfmt_annots_open/next), each
 * annotation is placed in its thread's stream of enters and exits exactly as
 * FORMAT.md §3.18 says, and the counts, values, texts and bindings must be
 * exact; dropped annotations are counted (recorded + dropped = executed), an
 * argument never lands on an outer scope when its own was dropped, and
 * REC_MIN_NS keeps a short scope that carries an argument (FORMAT.md §3.19).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <pthread.h>
#include <rec.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "recfmt.h"
#include "trace_read.h"
#include "writer_tid.h"

static char out[256];

static void use_output(const char *what)
{
	snprintf(out, sizeof(out), "/tmp/rec_annots_%d_%s.zst", (int)getpid(), what);
	unlink(out);
	setenv("REC_OUTPUT", out, 1);
}

static void cleanup(void)
{
	if (out[0])
		unlink(out);
}

TestSuite(annots, .fini = cleanup, .timeout = 120);

/* ------------------------------------------------------------------
 * A reader of annotations, independent of tracetool.
 */
struct an {
	uint32_t kind, thread;
	char name[64];	/* the annotation's name (ANNOT_NAME), "" for a message */
	char scope[64]; /* innermost open scope at its position, "" if none */
	int64_t i64;
	double f64;
	uint64_t id, ticks;
	char text[256];
	uint32_t text_bytes;
};

#define MAX_SITES 4096
#define MAX_NAMES 4096
#define MAX_THREADS 64

struct rd {
	char site[MAX_SITES][64];
	char name[MAX_NAMES][64];
	uint32_t name_kind[MAX_NAMES];
	uint32_t stack[MAX_THREADS][4096];
	uint32_t depth[MAX_THREADS];
	struct an *an;
	size_t nr_an, cap_an;
	uint64_t annot_dropped[MAX_THREADS];
	uint64_t nr_unbound_blocks; /* ANNOTS records with nr_events that follow no block */
	bool snapshot;		    /* a flight-recorder snapshot: exits may come first */
	/* The EVENTS block just read, not applied yet. */
	uint32_t pend_thread, pend_nr;
	uint32_t *pend_codes;
	size_t pend_cap;
};

static void apply_events(struct rd *r, uint32_t thread, const uint32_t *codes, uint32_t from,
			 uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {
		uint32_t *d = &r->depth[thread];

		if (RECFMT_CODE_IS_EXIT(codes[i])) {
			if (!*d && r->snapshot)
				continue; /* open when a snapshot's window began (FORMAT.md §3.20) */
			cr_assert_gt(*d, 0, "exit with nothing open");
			cr_assert_eq(r->stack[thread][*d - 1], RECFMT_CODE_SITE(codes[i]));
			(*d)--;
		} else {
			r->stack[thread][(*d)++] = RECFMT_CODE_SITE(codes[i]);
		}
	}
}

static void flush_pending(struct rd *r)
{
	if (r->pend_nr)
		apply_events(r, r->pend_thread, r->pend_codes, 0, r->pend_nr);
	r->pend_nr = 0;
}

static void add_annot(struct rd *r, const struct recfmt_annot *a)
{
	struct an *x;
	uint32_t d = r->depth[a->thread];

	if (r->nr_an == r->cap_an) {
		r->cap_an = r->cap_an ? 2 * r->cap_an : 1024;
		r->an = realloc(r->an, r->cap_an * sizeof(*r->an));
		cr_assert(r->an);
	}
	x = &r->an[r->nr_an++];
	memset(x, 0, sizeof(*x));
	x->kind = a->kind;
	x->thread = a->thread;
	x->i64 = a->i64;
	x->f64 = a->f64;
	x->id = a->id;
	x->ticks = a->ticks;
	if (a->name_id) {
		cr_assert_lt(a->name_id, MAX_NAMES);
		cr_assert_eq(r->name_kind[a->name_id], recfmt_annot_name_kind(a->kind),
			     "name %u used by a kind of another name space", a->name_id);
		strcpy(x->name, r->name[a->name_id]);
	}
	if (d)
		strcpy(x->scope, r->site[r->stack[a->thread][d - 1]]);
	if (a->text_bytes)
		memcpy(x->text, a->text, a->text_bytes);
	x->text_bytes = a->text_bytes;
}

static void read_trace(const char *path, struct rd *r)
{
	struct recfmt_reader *rdr;
	struct recfmt_error err;
	const uint8_t *data;
	size_t len;

	memset(r, 0, sizeof(*r));
	cr_assert_eq(recfmt_reader_open(&rdr, path, &err), RECFMT_OK, "%s", path);
	while (recfmt_reader_next(rdr, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor c;
		struct recfmt_record rec;

		recfmt_cursor_init(&c, data, len);
		while (recfmt_cursor_next(&c, &rec, &err) == RECFMT_OK) {
			if (rec.type == RECFMT_ANNOTS) {
				struct recfmt_annots_iter it;
				struct recfmt_annot a;
				enum recfmt_status st;
				uint32_t applied = 0;
				bool bound;

				cr_assert_eq(recfmt_annots_open(&rec, &it, &err), RECFMT_OK);
				cr_assert_lt(it.thread, MAX_THREADS);
				bound = it.nr_events && r->pend_nr == it.nr_events &&
					r->pend_thread == it.thread;
				if (it.nr_events && !bound) {
					r->nr_unbound_blocks++;
					continue;
				}
				if (!bound)
					flush_pending(r);
				while ((st = recfmt_annots_next(&it, &a, &err)) == RECFMT_OK) {
					if (bound) {
						apply_events(r, it.thread, r->pend_codes, applied, a.pos);
						applied = a.pos;
					}
					add_annot(r, &a);
				}
				cr_assert_eq(st, RECFMT_END_OF_INPUT, "%s", err.message);
				if (bound) {
					apply_events(r, it.thread, r->pend_codes, applied, r->pend_nr);
					r->pend_nr = 0;
				}
				continue;
			}
			flush_pending(r);
			if (rec.type == RECFMT_SNAPSHOT)
				r->snapshot = true;
			if (rec.type == RECFMT_SITE) {
				struct recfmt_site s;

				cr_assert_eq(recfmt_decode_site(&rec, &s, &err), RECFMT_OK);
				cr_assert_lt(s.id, MAX_SITES);
				snprintf(r->site[s.id], 64, "%.*s", (int)s.name_bytes, s.name);
			} else if (rec.type == RECFMT_ANNOT_NAME) {
				struct recfmt_annot_name n;

				cr_assert_eq(recfmt_decode_annot_name(&rec, &n, &err), RECFMT_OK);
				cr_assert_lt(n.id, MAX_NAMES);
				snprintf(r->name[n.id], 64, "%.*s", (int)n.name_bytes, n.name);
				r->name_kind[n.id] = n.kind;
			} else if (rec.type == RECFMT_ANNOT_DROPS) {
				struct recfmt_annot_drops d;

				cr_assert_eq(recfmt_decode_annot_drops(&rec, &d, &err), RECFMT_OK);
				cr_assert_lt(d.thread, MAX_THREADS);
				if (d.nr_dropped > r->annot_dropped[d.thread])
					r->annot_dropped[d.thread] = d.nr_dropped;
			} else if (rec.type == RECFMT_EVENTS) {
				struct recfmt_events_iter it;
				uint64_t ticks;
				uint32_t code, i = 0;

				cr_assert_eq(recfmt_events_open(&rec, &it, &err), RECFMT_OK);
				cr_assert_lt(it.thread, MAX_THREADS);
				if (it.nr_events > r->pend_cap) {
					r->pend_cap = it.nr_events;
					r->pend_codes = realloc(r->pend_codes, r->pend_cap * 4);
				}
				while (recfmt_events_next(&it, &ticks, &code) == 1)
					r->pend_codes[i++] = code;
				cr_assert_eq(i, it.nr_events);
				r->pend_thread = it.thread;
				r->pend_nr = i;
			}
		}
		flush_pending(r);
	}
	recfmt_reader_close(rdr);
}

static void rd_free(struct rd *r)
{
	free(r->an);
	free(r->pend_codes);
}

static size_t count(const struct rd *r, uint32_t kind, const char *name, const char *scope)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_an; i++)
		n += r->an[i].kind == kind && (!name || !strcmp(r->an[i].name, name)) &&
		     (!scope || !strcmp(r->an[i].scope, scope));
	return n;
}

static uint64_t annot_dropped(const struct rd *r)
{
	uint64_t n = 0;

	for (int i = 0; i < MAX_THREADS; i++)
		n += r->annot_dropped[i];
	return n;
}

/* ------------------------------------------------------------------ */

#define NR 1000

static __attribute__((noinline)) void inner(int i)
{
	TRACE_SCOPE_NAMED("inner");
	TRACE_ARG("k", -i);
}

static __attribute__((noinline)) void work(int i)
{
	TRACE_SCOPE_NAMED("work");
	TRACE_ARG("bytes", i * 10);
	TRACE_FLOW_STEP("req", 1000 + i);
	inner(i);
	TRACE_VALUE("after_inner", (unsigned char)i);
}

Test(annots, every_kind_is_recorded_exactly_and_bound_to_the_innermost_scope)
{
	static struct rd r;
	struct tr_trace tr;
	char msg[400];

	use_output("kinds");
	{
		TRACE_SCOPE_NAMED("outer");
		TRACE_FLOW_BEGIN("req", UINT64_MAX);
		for (int i = 0; i < NR; i++) {
			TRACE_VALUE("q", i);
			TRACE_VALUE("load", i * 0.5);
			TRACE_VALUE("flt", (float)i / 4);
			TRACE_INSTANT("tick");
			work(i);
			snprintf(msg, sizeof(msg), "message %d", i);
			TRACE_MESSAGE(msg);
		}
		TRACE_VALUE("big", INT64_MIN);
		TRACE_VALUE("big", INT64_MAX);
		TRACE_FLOW_END("req", UINT64_MAX);
	}
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = 0;
	TRACE_MESSAGE(msg); /* cut at 255 bytes */
	TRACE_MESSAGE("");
	TRACE_INSTANT("no scope");
	cr_assert_eq(rec_stop(), 0);

	read_trace(out, &r);
	cr_assert_eq(r.nr_unbound_blocks, 0);
	cr_assert_eq(annot_dropped(&r), 0);
	cr_assert_eq(count(&r, RECFMT_ANNOT_VALUE_I64, "q", "outer"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_VALUE_F64, "load", "outer"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_VALUE_F64, "flt", "outer"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_VALUE_I64, "after_inner", "work"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_INSTANT, "tick", "outer"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "bytes", "work"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "k", "inner"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, NULL, NULL), 2 * NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_FLOW_STEP, "req", "work"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_FLOW_BEGIN, "req", "outer"), 1);
	cr_assert_eq(count(&r, RECFMT_ANNOT_FLOW_END, "req", "outer"), 1);
	cr_assert_eq(count(&r, RECFMT_ANNOT_MESSAGE, NULL, "outer"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_MESSAGE, NULL, ""), 2);
	cr_assert_eq(count(&r, RECFMT_ANNOT_INSTANT, "no scope", ""), 1);

	/* Values in order, exact; times never go backwards on one thread (TSC). */
	int q = 0, ld = 0, fl = 0, by = 0, k = 0, st = 0, m = 0, ai = 0, big = 0;
	for (size_t i = 0; i < r.nr_an; i++) {
		const struct an *a = &r.an[i];

		if (i)
			cr_assert_geq(a->ticks, r.an[i - 1].ticks);
		if (!strcmp(a->name, "q"))
			cr_assert_eq(a->i64, q++);
		else if (!strcmp(a->name, "load"))
			cr_assert(a->f64 == ld++ * 0.5);
		else if (!strcmp(a->name, "flt"))
			cr_assert(a->f64 == (double)((float)fl++ / 4));
		else if (!strcmp(a->name, "bytes"))
			cr_assert_eq(a->i64, by++ * 10);
		else if (!strcmp(a->name, "k"))
			cr_assert_eq(a->i64, -(k++));
		else if (!strcmp(a->name, "after_inner"))
			cr_assert_eq(a->i64, (unsigned char)ai++);
		else if (!strcmp(a->name, "big"))
			cr_assert_eq(a->i64, big++ ? INT64_MAX : INT64_MIN);
		else if (a->kind == RECFMT_ANNOT_FLOW_STEP)
			cr_assert_eq(a->id, 1000u + (unsigned)st++);
		else if (a->kind == RECFMT_ANNOT_FLOW_BEGIN || a->kind == RECFMT_ANNOT_FLOW_END)
			cr_assert_eq(a->id, UINT64_MAX);
		else if (a->kind == RECFMT_ANNOT_MESSAGE && m < NR) {
			snprintf(msg, sizeof(msg), "message %d", m++);
			cr_assert_eq(a->text_bytes, strlen(msg));
			cr_assert_arr_eq(a->text, msg, a->text_bytes);
		} else if (a->kind == RECFMT_ANNOT_MESSAGE && m++ == NR) {
			cr_assert_eq(a->text_bytes, 255);
			for (int j = 0; j < 255; j++)
				cr_assert_eq(a->text[j], 'x');
		} else if (a->kind == RECFMT_ANNOT_MESSAGE) {
			cr_assert_eq(a->text_bytes, 0);
		}
	}
	cr_assert_eq(q, NR);
	cr_assert_eq(big, 2);
	cr_assert_eq(m, NR + 2);

	/* Names are not scopes: the scopes are exactly the three. */
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr.nr_events, 2 * (1 + 2 * (uint64_t)NR));
	cr_assert_eq(tr_calls(&tr, "outer"), 1);
	cr_assert_eq(tr_calls(&tr, "work"), NR);
	cr_assert_eq(tr_calls(&tr, "inner"), NR);
	cr_assert_eq(tr.nr_sites, 4, "site ids 1-3 (nr_sites is the table's size)");
	for (uint32_t id = 1; id < tr.nr_sites; id++)
		cr_assert(tr.site_names[id] && (!strcmp(tr.site_names[id], "outer") ||
						!strcmp(tr.site_names[id], "work") ||
						!strcmp(tr.site_names[id], "inner")),
			  "site %u is %s", id, tr.site_names[id] ? tr.site_names[id] : "(null)");
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
	rd_free(&r);
}

/* A flow begun on one thread and ended on another, in the scopes it passes through. */
static void *handler_thread(void *arg)
{
	uint64_t *ids = arg;

	rec_thread_name("worker");
	for (int i = 0; i < NR; i++) {
		TRACE_SCOPE_NAMED("handle");
		TRACE_FLOW_END("request", ids[i]);
	}
	return NULL;
}

Test(annots, a_flow_crosses_threads_bound_to_the_scopes_it_passes_through)
{
	static uint64_t ids[NR];
	pthread_t th;
	static struct rd r;

	use_output("flow");
	for (int i = 0; i < NR; i++) {
		TRACE_SCOPE_NAMED("accept");
		ids[i] = 0x100000000ull * (uint64_t)i + 7;
		TRACE_FLOW_BEGIN("request", ids[i]);
	}
	cr_assert_eq(pthread_create(&th, NULL, handler_thread, ids), 0);
	pthread_join(th, NULL);
	cr_assert_eq(rec_stop(), 0);
	read_trace(out, &r);
	cr_assert_eq(count(&r, RECFMT_ANNOT_FLOW_BEGIN, "request", "accept"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_FLOW_END, "request", "handle"), NR);
	/* Each thread's in its order; the writer may drain either ring first. */
	size_t first_b = r.nr_an, first_e = r.nr_an;

	for (size_t i = 0, b = 0, e = 0; i < r.nr_an; i++) {
		if (r.an[i].kind == RECFMT_ANNOT_FLOW_BEGIN) {
			first_b = first_b < r.nr_an ? first_b : i;
			cr_assert_eq(r.an[i].id, ids[b++]);
			cr_assert_eq(r.an[i].thread, r.an[first_b].thread);
		} else {
			first_e = first_e < r.nr_an ? first_e : i;
			cr_assert_eq(r.an[i].id, ids[e++]);
			cr_assert_eq(r.an[i].thread, r.an[first_e].thread);
		}
	}
	cr_assert(first_b < r.nr_an && first_e < r.nr_an);
	cr_assert_neq(r.an[first_b].thread, r.an[first_e].thread);
	rd_free(&r);
}

/*
 * A 4K ring overflows in a tight loop: every annotation is recorded or
 * counted, and an argument whose scope was dropped is dropped too -- no
 * argument ever lands on "outer".
 */
#define NR_TIGHT 300000

Test(annots, drops_are_counted_and_never_rebind_an_argument_to_an_outer_scope)
{
	static struct rd r;
	struct tr_trace tr;

	use_output("drop");
	setenv("REC_BUFFER", "4K", 1);
	setenv("REC_OVERFLOW", "drop", 1);
	{
		TRACE_SCOPE_NAMED("outer");
		for (int i = 0; i < NR_TIGHT; i++) {
			TRACE_SCOPE_NAMED("s");
			TRACE_ARG("a", i);
			TRACE_VALUE("v", i);
		}
	}
	cr_assert_eq(rec_stop(), 0);
	read_trace(out, &r);
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_gt(tr_dropped(&tr), 0, "a 4K ring should overflow in a tight loop");
	cr_assert_gt(annot_dropped(&r), 0);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "a", "s") + count(&r, RECFMT_ANNOT_VALUE_I64, "v", NULL) +
			     annot_dropped(&r),
		     2 * (uint64_t)NR_TIGHT, "recorded + dropped = executed");
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "a", "outer"), 0);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "a", ""), 0);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, NULL, NULL), count(&r, RECFMT_ANNOT_ARG, "a", "s"));
	cr_assert_leq(count(&r, RECFMT_ANNOT_ARG, "a", "s"), tr_calls(&tr, "s"));
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
	rd_free(&r);
}

Test(annots, block_mode_loses_no_annotation)
{
	static struct rd r;

	use_output("block");
	setenv("REC_BUFFER", "4K", 1);
	setenv("REC_OVERFLOW", "block", 1);
	setenv("REC_FLUSH_MS", "5", 1);
	for (int i = 0; i < NR_TIGHT; i++) {
		TRACE_SCOPE_NAMED("s");
		TRACE_ARG("a", i);
		TRACE_MESSAGE("m");
	}
	cr_assert_eq(rec_stop(), 0);
	read_trace(out, &r);
	cr_assert_eq(annot_dropped(&r), 0);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "a", "s"), NR_TIGHT);
	cr_assert_eq(count(&r, RECFMT_ANNOT_MESSAGE, NULL, "s"), NR_TIGHT);
	for (size_t i = 0, a = 0; i < r.nr_an; i++)
		if (r.an[i].kind == RECFMT_ANNOT_ARG)
			cr_assert_eq(r.an[i].i64, (int64_t)a++);
	rd_free(&r);
}

/* The shortest "plain" activation kept (site pd->id), for the test below. */
struct plain_durations {
	uint32_t id;
	uint64_t nr_kept, enter_ticks, min_ticks;
};

static void plain_duration(void *arg, uint32_t serial, uint64_t ticks, uint32_t code)
{
	struct plain_durations *pd = arg;

	(void)serial;
	if (code == RECFMT_CODE(pd->id, RECFMT_KIND_ENTER)) {
		pd->enter_ticks = ticks;
	} else if (code == RECFMT_CODE(pd->id, RECFMT_KIND_EXIT)) {
		if (!pd->nr_kept++ || ticks - pd->enter_ticks < pd->min_ticks)
			pd->min_ticks = ticks - pd->enter_ticks;
	}
}

/*
 * REC_MIN_NS (FORMAT.md §3.19): of many short activations, those that carry
 * an argument or a flow step are kept, the others filtered; a value inside
 * a filtered one stays, placed in the scope around it.
 */
Test(annots, min_ns_keeps_a_short_scope_that_carries_an_argument_or_a_flow)
{
	static struct rd r;
	struct tr_trace tr;

	use_output("minns");
	setenv("REC_MIN_NS", "1000000", 1); /* 1 ms: every activation below is shorter */
	{
		TRACE_SCOPE_NAMED("outer");
		for (int i = 0; i < NR; i++) {
			{
				TRACE_SCOPE_NAMED("with_arg");
				TRACE_ARG("n", i);
			}
			{
				TRACE_SCOPE_NAMED("with_flow");
				TRACE_FLOW_STEP("f", i);
			}
			{
				TRACE_SCOPE_NAMED("plain");
				TRACE_VALUE("v", i);
			}
		}
		usleep(2000); /* outer is long: kept */
	}
	cr_assert_eq(rec_stop(), 0);
	read_trace(out, &r);
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr_calls(&tr, "with_arg"), NR);
	cr_assert_eq(tr_calls(&tr, "with_flow"), NR);
	cr_assert_eq(tr_calls(&tr, "outer"), 1);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "n", "with_arg"), NR);
	cr_assert_eq(count(&r, RECFMT_ANNOT_FLOW_STEP, "f", "with_flow"), NR);
	cr_assert(tr_well_nested(&tr));

	/*
	 * "plain" is filtered unless it really lasted 1 ms: a thread switched
	 * out inside one (a loaded machine, a sanitizer build) keeps it, with
	 * its value. So: every "plain" kept lasted >= 1 ms (to the writer's
	 * tick rate, which may differ from the file's refined one by a little),
	 * and each value is in the "plain" it was set in or, when that one was
	 * filtered, in "outer".
	 */
	struct plain_durations pd = { .id = UINT32_MAX };

	for (uint32_t id = 0; id < tr.nr_sites; id++)
		if (tr.site_names[id] && !strcmp(tr.site_names[id], "plain"))
			pd.id = id;
	tr_free(&tr);
	if (pd.id != UINT32_MAX) {
		cr_assert_eq(tr_load_each(out, &tr, plain_duration, &pd), 0);
		cr_assert_eq(pd.nr_kept, tr_calls(&tr, "plain"));
		if (pd.nr_kept)
			cr_assert_geq(pd.min_ticks, tr.ticks_per_second / 1000 * 9 / 10,
				      "a plain of %" PRIu64 " ticks was kept", pd.min_ticks);
		tr_free(&tr);
	}
	cr_assert_eq(count(&r, RECFMT_ANNOT_VALUE_I64, "v", "plain"), pd.nr_kept);
	cr_assert_eq(count(&r, RECFMT_ANNOT_VALUE_I64, "v", "outer"), NR - pd.nr_kept);
	rd_free(&r);
}

/* Annotations in a signal handler, as scopes: recorded or counted, never torn. */
static volatile sig_atomic_t nr_alarms;

static void on_alarm(int sig)
{
	(void)sig;
	TRACE_SCOPE_NAMED("handler");
	TRACE_ARG("sig", sig);
	TRACE_MESSAGE("in handler");
	nr_alarms++;
}

Test(annots, annotations_in_a_signal_handler_are_recorded_or_counted)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	static struct rd r;
	uint64_t loops = 0;

	use_output("signal");
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	while (nr_alarms < 200) {
		TRACE_SCOPE_NAMED("loop");
		TRACE_VALUE("i", (int64_t)loops);
		loops++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	cr_assert_eq(rec_stop(), 0);
	read_trace(out, &r);
	cr_assert_eq(r.nr_unbound_blocks, 0);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "sig", NULL) + count(&r, RECFMT_ANNOT_MESSAGE, NULL, NULL) +
			     count(&r, RECFMT_ANNOT_VALUE_I64, "i", NULL) + annot_dropped(&r),
		     2 * (uint64_t)nr_alarms + loops, "args %zu msgs %zu values %zu dropped %" PRIu64 " alarms %d loops %" PRIu64,
		     count(&r, RECFMT_ANNOT_ARG, "sig", NULL), count(&r, RECFMT_ANNOT_MESSAGE, NULL, NULL),
		     count(&r, RECFMT_ANNOT_VALUE_I64, "i", NULL), annot_dropped(&r), (int)nr_alarms, loops);
	cr_assert_eq(r.nr_unbound_blocks, 0);
	/* A recorded argument is in its handler's scope, never in "loop". */
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "sig", "handler"), count(&r, RECFMT_ANNOT_ARG, NULL, NULL));
	for (size_t i = 0; i < r.nr_an; i++)
		if (r.an[i].kind == RECFMT_ANNOT_MESSAGE)
			cr_assert_arr_eq(r.an[i].text, "in handler", 10);
	rd_free(&r);
}

/*
 * The binding rule made deterministic: the writer is stalled on a FIFO
 * nobody reads (a one-page pipe), so the ring fills and the scope "victim"
 * is dropped; then the FIFO is drained and rec_flush() empties the ring, so
 * an argument inside "victim" finds room -- and must still be dropped
 * (counted), not put on "outer". After "victim" is left, an argument lands
 * on "outer" again.
 */
struct fifo_sink {
	int fd;
	FILE *copy;
};

static void *drain_fifo(void *arg)
{
	struct fifo_sink *s = arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(s->fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EAGAIN) {
				usleep(1000);
				continue;
			}
			break;
		}
		fwrite(buf, 1, (size_t)n, s->copy);
	}
	return NULL;
}

/*
 * True while librec's writer thread waits for room in its output: in write(2)
 * or in the poll(2) that write_all() waits in after EAGAIN (the output of a
 * FIFO is non-blocking). /proc/self/task/TID/syscall starts with the number
 * of the system call a blocked thread is in ("running" when it is not).
 */
static bool writer_waits_on_output(void)
{
	pid_t tid = writer_tid();
	char path[64], buf[64];
	bool blocked = false;
	FILE *f;

	if (!tid)
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	if (!(f = fopen(path, "r")))
		return false;
	if (fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9') {
		long nr = strtol(buf, NULL, 10);

		blocked = nr == SYS_write || nr == SYS_ppoll;
#ifdef SYS_poll
		blocked = blocked || nr == SYS_poll;
#endif
#if defined(__aarch64__)
		/* Under qemu-user on an x86-64 host (scripts/cross-arm64.sh) the
		 * file shows the host's numbers: write 1, poll 7, ppoll 271 (on
		 * ARM64 itself no writer waits in those calls). */
		blocked = blocked || nr == 1 || nr == 7 || nr == 271;
#endif
	}
	fclose(f);
	return blocked;
}

Test(annots, an_argument_whose_scope_was_dropped_is_dropped_though_the_ring_has_room)
{
	static struct rd r;
	char fifo[256];
	struct fifo_sink sink;
	pthread_t th;

	use_output("victim");
	snprintf(fifo, sizeof(fifo), "/tmp/rec_annots_%d.fifo", (int)getpid());
	unlink(fifo);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	sink.fd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, which reads nothing yet */
	cr_assert_geq(sink.fd, 0);
	fcntl(sink.fd, F_SETPIPE_SZ, 4096);
	sink.copy = fopen(out, "wb");
	cr_assert(sink.copy);
	setenv("REC_OUTPUT", fifo, 1);
	setenv("REC_BUFFER", "4K", 1);
	setenv("REC_OVERFLOW", "drop", 1);
	setenv("REC_FLUSH_MS", "1", 1);
	{
		TRACE_SCOPE_NAMED("outer");
		/*
		 * Frames until the pipe is full and the writer waits for room
		 * (twice in a row, 20 ms apart: not a write passing by); then
		 * the ring fills and stays full. On a loaded machine the writer
		 * may need many rounds to fill the pipe, so look, not guess;
		 * within the writer's 10 s stall limit (writer.c).
		 */
		int still = 0;

		for (int round = 0; round < 200 && still < 2; round++) {
			for (int i = 0; i < 20000; i++) {
				TRACE_SCOPE_NAMED("filler");
			}
			usleep(20 * 1000);
			still = writer_waits_on_output() ? still + 1 : 0;
		}
		cr_assert_eq(still, 2, "the writer never blocked on the full pipe");
		for (int i = 0; i < 1000; i++) {
			TRACE_SCOPE_NAMED("filler");
		}
		{
			TRACE_SCOPE_NAMED("victim"); /* the ring is full: dropped */
			cr_assert_eq(pthread_create(&th, NULL, drain_fifo, &sink), 0);
			cr_assert_eq(rec_flush(), 0); /* now the ring is empty */
			TRACE_ARG("key", 1);	      /* room, but its scope was dropped */
			TRACE_VALUE("v", 1);	      /* values bind to no scope: recorded */
		}
		TRACE_ARG("key", 2);
	}
	cr_assert_eq(rec_stop(), 0);
	pthread_join(th, NULL);
	close(sink.fd);
	fclose(sink.copy);
	unlink(fifo);

	read_trace(out, &r);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, NULL, NULL), 1);
	cr_assert_eq(count(&r, RECFMT_ANNOT_ARG, "key", "outer"), 1);
	for (size_t i = 0; i < r.nr_an; i++)
		if (r.an[i].kind == RECFMT_ANNOT_ARG)
			cr_assert_eq(r.an[i].i64, 2);
	cr_assert_eq(count(&r, RECFMT_ANNOT_VALUE_I64, "v", "outer"), 1);
	cr_assert_geq(annot_dropped(&r), 1);
	rd_free(&r);
}

/*
 * REC_MODE=flight: the writer trims the rings and cuts the snapshot's window
 * by time; neither may split an annotation (flight.c skips their later
 * slots), so every value and message in the snapshot is whole and in order.
 */
Test(annots, a_flight_snapshot_holds_whole_annotations)
{
	static struct rd r;
	static const char text[] = "0123456789abcdefghij"; /* 20 bytes: 3 text slots */
	char path[256];
	int64_t last = -1;
	size_t nr_msg = 0;

	use_output("flight");
	snprintf(path, sizeof(path), "/tmp/rec_annots_%d_flight-%%n.zst", (int)getpid());
	setenv("REC_OUTPUT", path, 1);
	setenv("REC_MODE", "flight", 1);
	setenv("REC_BUFFER", "64K", 1);
	for (int i = 0; i < 300000; i++) {
		TRACE_SCOPE_NAMED("s");
		TRACE_VALUE("v", i);
		TRACE_MESSAGE(text);
	}
	cr_assert_eq(rec_snapshot("test"), 0);
	cr_assert_eq(rec_flush(), 0);
	cr_assert_eq(rec_stop(), 0);
	snprintf(out, sizeof(out), "/tmp/rec_annots_%d_flight-1.zst", (int)getpid());
	read_trace(out, &r);
	cr_assert(r.snapshot);
	cr_assert_eq(r.nr_unbound_blocks, 0);
	cr_assert_gt(count(&r, RECFMT_ANNOT_VALUE_I64, "v", NULL), 100);
	for (size_t i = 0; i < r.nr_an; i++) {
		if (r.an[i].kind == RECFMT_ANNOT_VALUE_I64) {
			cr_assert_gt(r.an[i].i64, last, "values in order, none torn");
			cr_assert_lt(r.an[i].i64, 300000);
			last = r.an[i].i64;
		} else {
			cr_assert_eq(r.an[i].kind, RECFMT_ANNOT_MESSAGE);
			cr_assert_eq(r.an[i].text_bytes, 20);
			cr_assert_arr_eq(r.an[i].text, text, 20);
			nr_msg++;
		}
	}
	cr_assert_gt(nr_msg, 100);
	rd_free(&r);
}
