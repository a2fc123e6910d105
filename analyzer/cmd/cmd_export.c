/* SPDX-License-Identifier: MIT */
/*
 * cmd_export.c - `tracetool export --format=parquet|csv -o DIR TRACE...`
 * (tracetool(1); docs/EXPORT.md): the runs, threads, scopes and activations of one or more
 * traces as tables, DIR/NAME.parquet (parquet.c) or DIR/NAME.csv, for
 * DuckDB, Spark, Trino and ClickHouse. The schema (version
 * TT_EXPORT_SCHEMA) is documented in docs/EXPORT.md.
 *
 * Each file is a run (run_id = its position on the command line, from 0).
 * Activations come from the pairing engine (scopes.h) as one consumer: an
 * enter pushes a frame with the next activation_id of the run (ids are in
 * enter order, so a parent's id is smaller than its children's), a timed
 * activation or an error pops it and writes its row. Memory: the open
 * frames of each thread plus one Parquet row group.
 */
#define _GNU_SOURCE 1 /* fputs_unlocked, fwrite_unlocked */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/commands.h"
#include "common/emit.h"
#include "common/hmap.h"
#include "common/keyidx.h"
#include "views/labels.h"
#include "views/samples.h"
#include "out/parquet.h"
#include "cmd/options.h"
#include "engine/front.h"
#include "engine/report.h"
#include "engine/runs.h"
#include "common/xalloc.h"

#define TT_EXPORT_SCHEMA "2" /* 2: values, instants, flows, args (annotations) */

/* ---- one table, Parquet or CSV ---- */

struct tbl {
	const char *name;
	struct tt_pq *pq;
	FILE *csv;
	char *path;
	const struct tt_pq_col *cols;
	size_t nr_cols, cur;
	uint64_t rows;
	int err;
};

static int tbl_open(struct tbl *t, const char *dir, const char *name, bool csv,
		    const struct tt_pq_col *cols, size_t nr_cols, bool encode_thread)
{
	size_t n = strlen(dir) + strlen(name) + 16;

	memset(t, 0, sizeof(*t));
	t->name = name;
	t->cols = cols;
	t->nr_cols = nr_cols;
	t->path = tt_xrealloc(NULL, n);
	snprintf(t->path, n, "%s/%s.%s", dir, name, csv ? "csv" : "parquet");
	if (csv) {
		t->csv = fopen(t->path, "we");
		if (!t->csv)
			return -errno;
		setvbuf(t->csv, NULL, _IOFBF, 1 << 20);
		for (size_t i = 0; i < nr_cols; i++)
			fprintf(t->csv, "%s%s", i ? "," : "", cols[i].name);
		fputc('\n', t->csv);
		return 0;
	}
	/* With one walker, the activations' pages are encoded on a second
	 * thread while the walk fills the next (parquet.h; the other tables
	 * have strings: ignored). zstd's fast level -1: a quarter less
	 * compression time than level 1 for 0.5 % more bytes (the times are
	 * mostly noise to zstd). */
	struct tt_pq_opts o = { .encode_thread = encode_thread, .zstd_level = -1 };
	t->pq = tt_pq_create(t->path, cols, nr_cols, &o);
	if (!t->pq)
		return -errno;
	tt_pq_meta(t->pq, "rec.export.schema", TT_EXPORT_SCHEMA);
	tt_pq_meta(t->pq, "rec.export.table", name);
	return 0;
}

static inline void csv_sep(struct tbl *t)
{
	if (t->cur++)
		putc_unlocked(',', t->csv);
}

static void tbl_i64(struct tbl *t, int64_t v)
{
	if (t->pq) {
		tt_pq_i64(t->pq, v);
		return;
	}
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	csv_sep(t);
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), t->csv);
}

static void tbl_i32(struct tbl *t, int32_t v)
{
	if (t->pq)
		tt_pq_i32(t->pq, v);
	else
		tbl_i64(t, v);
}

static void tbl_bool(struct tbl *t, bool v)
{
	if (t->pq) {
		tt_pq_bool(t->pq, v);
		return;
	}
	csv_sep(t);
	fputs_unlocked(v ? "true" : "false", t->csv);
}

static void tbl_null(struct tbl *t)
{
	if (t->pq)
		tt_pq_null(t->pq);
	else
		csv_sep(t);
}

/* RFC 4180: quoted when it holds a comma, a quote or a line break; a text
 * a spreadsheet would take for a formula starts with ' (emit.h). */
static void tbl_str(struct tbl *t, const char *s)
{
	if (!s) {
		tbl_null(t);
		return;
	}
	if (t->pq) {
		tt_pq_str(t->pq, s, strlen(s));
		return;
	}
	csv_sep(t);
	if (!s[strcspn(s, ",\"\r\n")] && s[0]) {
		if (tt_emit_csv_formula(s))
			putc_unlocked('\'', t->csv);
		fputs_unlocked(s, t->csv);
		return;
	}
	putc_unlocked('"', t->csv);
	if (tt_emit_csv_formula(s))
		putc_unlocked('\'', t->csv);
	for (; *s; s++) {
		if (*s == '"')
			putc_unlocked('"', t->csv);
		putc_unlocked(*s, t->csv);
	}
	putc_unlocked('"', t->csv);
}

static void tbl_row_end(struct tbl *t)
{
	t->rows++;
	if (t->pq) {
		int rc = tt_pq_row_end(t->pq);
		if (rc && !t->err)
			t->err = rc;
		return;
	}
	t->cur = 0;
	putc_unlocked('\n', t->csv);
}

/*
 * One value of a row, written as its column's type says (tbl_row()): an
 * integer or a bool in i, a text in s (NULL: a null), or a null.
 */
struct cell {
	int64_t i;
	const char *s;
	bool null;
};

#define C_INT(v) ((struct cell){ .i = (int64_t)(v) })
#define C_STR(v) ((struct cell){ .s = (v) })
#define C_NULL ((struct cell){ .null = true })

/* Writes a row of t, one cell per column in the order of t->cols, in
 * either format. */
static void tbl_row(struct tbl *t, const struct cell *c, size_t n)
{
	if (n != t->nr_cols) { /* a row that is not its table's: a bug here */
		fprintf(stderr, "tracetool: export: %zu values for the %zu columns of %s\n", n,
			t->nr_cols, t->name);
		abort();
	}
	for (size_t k = 0; k < n; k++) {
		if (c[k].null) {
			tbl_null(t);
			continue;
		}
		switch (t->cols[k].type) {
		case TT_PQ_BOOL:
			tbl_bool(t, c[k].i != 0);
			break;
		case TT_PQ_INT32:
			tbl_i32(t, (int32_t)c[k].i);
			break;
		case TT_PQ_INT64:
			tbl_i64(t, c[k].i);
			break;
		case TT_PQ_STRING:
			tbl_str(t, c[k].s);
			break;
		}
	}
	tbl_row_end(t);
}

/* TBL_ROW(t, C_INT(run_id), C_STR(name), C_NULL, ...): a row of t. */
#define TBL_ROW(t, ...)                                                       \
	do {                                                                  \
		const struct cell row_[] = { __VA_ARGS__ };                   \
		tbl_row((t), row_, sizeof(row_) / sizeof(row_[0]));           \
	} while (0)

/* 0, or a negative errno value; the file is complete only on 0. */
static int tbl_close(struct tbl *t, uint64_t *bytes)
{
	int rc = t->err;

	*bytes = 0;
	if (t->pq) {
		int c = tt_pq_close(t->pq, bytes);
		if (!rc)
			rc = c;
	} else if (t->csv) {
		if (fflush(t->csv) || ferror(t->csv))
			rc = rc ? rc : -(errno ? errno : EIO);
		long pos = ftell(t->csv);
		*bytes = pos > 0 ? (uint64_t)pos : 0;
		if (fclose(t->csv) && !rc)
			rc = -(errno ? errno : EIO);
	}
	t->pq = NULL;
	t->csv = NULL;
	return rc;
}

/* A table for another walker: a sibling of t's Parquet writer. */
static void tbl_sibling(struct tbl *s, struct tbl *t)
{
	memset(s, 0, sizeof(*s));
	s->name = t->name;
	s->cols = t->cols;
	s->nr_cols = t->nr_cols;
	s->pq = tt_pq_sibling(t->pq);
}

/* Closes the sibling s into t: its rows and its error are t's. */
static void tbl_close_sibling(struct tbl *s, struct tbl *t)
{
	uint64_t bytes;
	int rc = tbl_close(s, &bytes);

	t->rows += s->rows;
	if (rc && !t->err)
		t->err = rc;
}

/* ---- the tables ---- */

static const struct tt_pq_col runs_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "file", TT_PQ_STRING, false },
	{ "program", TT_PQ_STRING, true },
	{ "pid", TT_PQ_INT64, false },
	{ "start_unix_ns", TT_PQ_INT64, false },
	{ "duration_ns", TT_PQ_INT64, false },
	{ "events", TT_PQ_INT64, false },
	{ "dropped", TT_PQ_INT64, false },
	{ "clean", TT_PQ_BOOL, false },
	{ "truncated", TT_PQ_BOOL, false },
	{ "clock", TT_PQ_STRING, false },
};

static const struct tt_pq_col threads_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "thread_id", TT_PQ_INT64, false },
	{ "os_tid", TT_PQ_INT64, false },
	{ "name", TT_PQ_STRING, true },
	{ "events", TT_PQ_INT64, false },
	{ "dropped", TT_PQ_INT64, false },
};

static const struct tt_pq_col scopes_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "scope_id", TT_PQ_INT64, false },
	{ "name", TT_PQ_STRING, false },
	{ "site", TT_PQ_STRING, false },
};

static const struct tt_pq_col acts_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "thread_id", TT_PQ_INT64, false },
	{ "scope_id", TT_PQ_INT64, false },
	{ "activation_id", TT_PQ_INT64, false },
	{ "parent_id", TT_PQ_INT64, true },
	{ "depth", TT_PQ_INT32, false },
	{ "start_ns", TT_PQ_INT64, false },
	{ "start_unix_ns", TT_PQ_INT64, false },
	{ "dur_ns", TT_PQ_INT64, true },
	{ "self_ns", TT_PQ_INT64, true },
	{ "error", TT_PQ_BOOL, false },
};

/* Annotations (schema 2, docs/EXPORT.md): a row per value sample,
 * instant or message, flow event, and argument of an activation. */
static const struct tt_pq_col values_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "thread_id", TT_PQ_INT64, false },
	{ "track", TT_PQ_STRING, false },
	{ "ts_ns", TT_PQ_INT64, false },
	{ "ts_unix_ns", TT_PQ_INT64, false },
	{ "value_i64", TT_PQ_INT64, true },
	{ "value_f64", TT_PQ_STRING, true },
};

static const struct tt_pq_col instants_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "thread_id", TT_PQ_INT64, false },
	{ "name", TT_PQ_STRING, false },
	{ "message", TT_PQ_BOOL, false },
	{ "ts_ns", TT_PQ_INT64, false },
	{ "ts_unix_ns", TT_PQ_INT64, false },
	{ "activation_id", TT_PQ_INT64, true },
};

static const struct tt_pq_col flows_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "thread_id", TT_PQ_INT64, false },
	{ "flow", TT_PQ_STRING, false },
	{ "flow_id", TT_PQ_INT64, false },
	{ "kind", TT_PQ_STRING, false },
	{ "ts_ns", TT_PQ_INT64, false },
	{ "ts_unix_ns", TT_PQ_INT64, false },
	{ "activation_id", TT_PQ_INT64, true },
};

static const struct tt_pq_col args_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "activation_id", TT_PQ_INT64, false },
	{ "key", TT_PQ_STRING, false },
	{ "value", TT_PQ_INT64, false },
};

/* Stack samples (REC_SAMPLE, FORMAT.md §3.22-§3.24; docs/EXPORT.md): a row
 * per sample, written only when some run has samples. */
static const struct tt_pq_col samples_cols[] = {
	{ "run_id", TT_PQ_INT32, false },
	{ "thread_id", TT_PQ_INT64, false },
	{ "ts_ns", TT_PQ_INT64, false },
	{ "ts_unix_ns", TT_PQ_INT64, false },
	{ "function", TT_PQ_STRING, false },
	{ "module", TT_PQ_STRING, false },
	{ "stack", TT_PQ_STRING, false },
	{ "truncated", TT_PQ_BOOL, false },
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

enum { T_RUNS, T_THREADS, T_SCOPES, T_ACTS, T_VALUES, T_INSTANTS, T_FLOWS, T_ARGS, T_SAMPLES,
       NR_TABLES };

/* The tables, each a file DIR/NAME.parquet or .csv. */
static const struct {
	const char *name;
	const struct tt_pq_col *cols;
	size_t n;
} tables[NR_TABLES] = {
	[T_RUNS] = { "runs", runs_cols, NCOLS(runs_cols) },
	[T_THREADS] = { "threads", threads_cols, NCOLS(threads_cols) },
	[T_SCOPES] = { "scopes", scopes_cols, NCOLS(scopes_cols) },
	[T_ACTS] = { "activations", acts_cols, NCOLS(acts_cols) },
	[T_VALUES] = { "values", values_cols, NCOLS(values_cols) },
	[T_INSTANTS] = { "instants", instants_cols, NCOLS(instants_cols) },
	[T_FLOWS] = { "flows", flows_cols, NCOLS(flows_cols) },
	[T_ARGS] = { "args", args_cols, NCOLS(args_cols) },
	[T_SAMPLES] = { "samples", samples_cols, NCOLS(samples_cols) },
};

struct exp_arg {
	char *key;
	int64_t v;
};

struct exp_frame {
	uint64_t id;
	uint64_t enter_ticks;
	uint32_t name;
	struct exp_arg *args; /* kept with the stack slot, reused */
	uint32_t nr_args, cap_args;
	struct tt_keyidx idx; /* args by key, past TT_KEYIDX_FROM of them */
};

struct exporter;

/*
 * Rounding that adds up (docs/EXPORT.md, "Sums equal summary's"): summary
 * converts a scope's summed ticks to ns once; a row per activation rounds
 * each. On a clock that is not 1 ns a tick (a TSC), durations are multiples
 * of the clock's step, so the rows' roundings do not cancel: their sum
 * drifts from summary's. So each (thread, scope) rounds cumulatively, along
 * a chain that starts where the same scope's chains of the threads before
 * it ended (their tick sums, from a first pass): row ns = ns(chain after) -
 * ns(chain before). The rows of a scope then add up, over all threads, to
 * ns(sum of its ticks): summary's figure, exactly; each row is still within
 * 1 ns of its own duration. total: the outermost activations of the scope
 * (summary's total_ns); self: all of them.
 */
struct exp_offset {
	uint32_t serial;
	char *key;		    /* the scope's name key (events.h) */
	uint64_t total, self;	    /* ticks of the scope's chains before this thread's */
};

struct exp_offsets {
	struct exp_offset *v;
	uint32_t n, cap;
	struct tt_hmap map; /* hmap.h: entries by (serial, key) */
};

struct exp_chain {
	uint32_t name; /* the walker's name index */
	uint64_t total_ticks, self_ticks; /* chain positions, offsets included */
	uint64_t total_ns, self_ns;	  /* ns of those positions */
};

struct exp_thread {
	struct exporter *ex;
	uint64_t next_id; /* the next enter's activation id (exp_block) */
	uint32_t serial;
	struct exp_frame *stack;
	uint32_t sp, cap;
	struct exp_chain *chains;
	uint32_t nr_chains, cap_chains;
	struct tt_hmap chain_map; /* hmap.h: chains by name index */
	struct exp_thread *next;
};

/*
 * One per walker replica (the walk's threads are shared among them,
 * report.h): replica 0's tables are the files, another replica's are
 * siblings of them (tt_pq_sibling(): Parquet only, several walkers), so no
 * walker waits for another. Activation ids are the run-wide numbers of
 * the enters (tt_consumer.block), the same whatever the walkers.
 */
struct exporter {
	struct tbl t[NR_TABLES];
	const struct tt_run *run;
	struct exp_thread *threads;
	struct tt_report *rep;		  /* the walk: the replica's names */
	unsigned replica;
	const struct exp_offsets *offsets; /* the run's chain starts */
};

/* Keys come from the file: keyed hashes (hmap.h). */
static uint32_t offset_hash(uint32_t serial, const char *key)
{
	return tt_hash_u64((uint64_t)serial << 32 | tt_hash_bytes(key, strlen(key)));
}

struct offset_key {
	const struct exp_offsets *o;
	uint32_t serial;
	const char *key;
};

static bool offset_eq(const void *ctx, uint32_t k)
{
	const struct offset_key *key = ctx;
	const struct exp_offset *e = &key->o->v[k];

	return e->serial == key->serial && strcmp(e->key, key->key) == 0;
}

static struct exp_offset *offset_find(const struct exp_offsets *o, uint32_t serial, const char *key)
{
	const struct offset_key k = { o, serial, key };
	uint32_t i = tt_hmap_find(&o->map, offset_hash(serial, key), offset_eq, &k);

	return i == TT_HMAP_NONE ? NULL : &o->v[i];
}

static void offset_add(struct exp_offsets *o, uint32_t serial, const char *key, uint64_t total,
		       uint64_t self)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 64;
		o->v = tt_xrealloc(o->v, o->cap * sizeof(*o->v));
	}
	tt_hmap_put(&o->map, offset_hash(serial, key), o->n);
	o->v[o->n++] = (struct exp_offset){ serial, tt_xstrndup(key, strlen(key)), total, self };
}

static void offsets_fini(struct exp_offsets *o)
{
	for (uint32_t k = 0; k < o->n; k++)
		free(o->v[k].key);
	free(o->v);
	tt_hmap_fini(&o->map);
	memset(o, 0, sizeof(*o));
}

/*
 * The first pass: each thread's tick sums per scope (the engine's
 * per-thread tables, --by-thread), and from them where each (thread,
 * scope) chain starts: the sum of the same scope's ticks over the threads
 * before it, in the order of the file's threads.
 */
static enum tt_status exp_first_pass(const char *path, struct exp_offsets *out, char *msg,
				     size_t msg_bytes)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_report rep;
	struct exp_offsets sums = { 0 }; /* serial 0: a scope's running sums */
	enum tt_status st;

	o.trace = path;
	o.by_thread = true;
	st = tt_walk(&rep, &o, &tt_walk_stats, msg, msg_bytes);
	for (uint32_t i = 0; st == TT_OK && i < rep.tr.nr_threads; i++) {
		uint32_t serial = rep.tr.threads[i].serial;

		/* The replicas list the same threads in the same order; one of
		 * them paired thread i (report.c). */
		for (unsigned r = 0; r < rep.nr_replicas; r++) {
			const struct tt_trace *tr = tt_report_replica(&rep, r);
			const struct tt_stat_table *tab =
				i < tr->nr_threads ? tt_scopes_table(&tr->threads[i]) : NULL;

			for (uint32_t n = 0; tab && n < tab->n && n < tr->nr_names; n++) {
				const struct tt_stat *s = &tab->v[n];
				struct exp_offset *run;

				if (!s->total_ticks && !s->self_ticks)
					continue;
				run = offset_find(&sums, 0, tr->names[n]);
				if (!run) {
					offset_add(&sums, 0, tr->names[n], 0, 0);
					run = &sums.v[sums.n - 1];
				}
				offset_add(out, serial, tr->names[n], run->total, run->self);
				run = offset_find(&sums, 0, tr->names[n]);
				run->total += s->total_ticks;
				run->self += s->self_ticks;
			}
		}
	}
	offsets_fini(&sums);
	tt_report_fini(&rep);
	return st;
}

struct chain_key {
	const struct exp_thread *et;
	uint32_t name;
};

static bool chain_eq(const void *ctx, uint32_t k)
{
	const struct chain_key *key = ctx;

	return key->et->chains[k].name == key->name;
}

/* The chain of (thread, name), made on first use. */
static struct exp_chain *exp_chain_of(struct exp_thread *et, uint32_t name)
{
	struct exporter *ex = et->ex;
	const struct chain_key key = { et, name };
	uint32_t h = tt_hash_u32(name), k = tt_hmap_find(&et->chain_map, h, chain_eq, &key);

	if (k != TT_HMAP_NONE)
		return &et->chains[k];
	if (et->nr_chains == et->cap_chains) {
		et->cap_chains = et->cap_chains ? 2 * et->cap_chains : 64;
		et->chains = tt_xrealloc(et->chains, et->cap_chains * sizeof(*et->chains));
	}
	tt_hmap_put(&et->chain_map, h, et->nr_chains);
	struct exp_chain *c = &et->chains[et->nr_chains++];
	const struct tt_trace *tr = tt_report_replica(ex->rep, ex->replica);
	const struct exp_offset *off =
		name < tr->nr_names ? offset_find(ex->offsets, et->serial, tr->names[name]) : NULL;

	c->name = name;
	c->total_ticks = off ? off->total : 0;
	c->self_ticks = off ? off->self : 0;
	c->total_ns = tt_run_ns(ex->run, c->total_ticks);
	c->self_ns = tt_run_ns(ex->run, c->self_ticks);
	return c;
}

/* A timed activation's dur_ns and self_ns, along its chains. */
static void exp_chain_step(struct exp_thread *et, uint32_t name, uint64_t dur, uint64_t self,
			   bool outermost, int64_t *dur_ns, int64_t *self_ns)
{
	const struct tt_run *r = et->ex->run;
	struct exp_chain *c;
	uint64_t ns;

	if (r->clock.num == r->clock.den) { /* 1 ns a tick: nothing to round */
		*dur_ns = (int64_t)dur;
		*self_ns = (int64_t)self;
		return;
	}
	c = exp_chain_of(et, name);
	if (outermost) {
		c->total_ticks += dur;
		ns = tt_run_ns(r, c->total_ticks);
		*dur_ns = (int64_t)(ns - c->total_ns);
		c->total_ns = ns;
	} else {
		*dur_ns = (int64_t)tt_run_ns(r, dur); /* not in total_ns: alone */
	}
	c->self_ticks += self;
	ns = tt_run_ns(r, c->self_ticks);
	*self_ns = (int64_t)(ns - c->self_ns);
	c->self_ns = ns;
}

static void *exp_thread_begin(void *ctx, const struct tt_thread *th)
{
	struct exporter *ex = ctx;
	struct exp_thread *et = tt_xcalloc(1, sizeof(*et));

	et->ex = ex;
	et->serial = th->serial;
	et->next = ex->threads;
	ex->threads = et;
	return et;
}

static uint32_t exp_enter(void *tctx, uint32_t parent_slot, uint32_t name, uint64_t ticks,
			  bool in_window)
{
	struct exp_thread *et = tctx;

	(void)parent_slot;
	(void)in_window;
	if (et->sp == et->cap) {
		uint32_t cap = et->cap ? 2 * et->cap : 64;

		et->stack = tt_xrealloc(et->stack, cap * sizeof(*et->stack));
		memset(et->stack + et->cap, 0, (cap - et->cap) * sizeof(*et->stack));
		et->cap = cap;
	}
	struct exp_frame *f = &et->stack[et->sp++];
	f->nr_args = 0;
	tt_keyidx_clear(&f->idx);
	f->id = et->next_id++;
	f->enter_ticks = ticks;
	f->name = name;
	return et->sp;
}

static void exp_block(void *tctx, uint64_t first_enter)
{
	struct exp_thread *et = tctx;

	et->next_id = first_enter;
}

/* An activation's arguments by key (keyidx.h): the keyed hash of the key (hmap.h). */
static uint32_t key_hash(const char *s)
{
	return tt_hash_bytes(s, strlen(s)); /* seeded: hmap.h */
}

static uint32_t arg_hash(const void *ctx, uint32_t i)
{
	return key_hash(((const struct exp_frame *)ctx)->args[i].key);
}

struct arg_probe {
	const struct exp_frame *f;
	const char *key;
};

static bool arg_same(const void *ctx, uint32_t i)
{
	const struct arg_probe *p = ctx;

	return strcmp(p->f->args[i].key, p->key) == 0;
}

/* The top frame's arguments (each key once: its last value). */
static void exp_args(struct exp_thread *et, struct exp_frame *f)
{
	struct tbl *t = &et->ex->t[T_ARGS];

	for (uint32_t i = 0; i < f->nr_args; i++) {
		TBL_ROW(t, C_INT(et->ex->run->run_id), C_INT(f->id), C_STR(f->args[i].key),
			C_INT(f->args[i].v));
		free(f->args[i].key);
	}
	f->nr_args = 0;
	tt_keyidx_clear(&f->idx);
}

/* The row of the top frame; dur/self only for a timed activation. Inlined
 * into exp_act() and exp_error(), so each has its own copy with timed a
 * constant (no call per row, no test of timed on the hot path). */
static inline __attribute__((always_inline)) void exp_row(struct exp_thread *et, bool timed, uint64_t exit_ticks, uint64_t self_ticks, bool outermost)
{
	struct exporter *ex = et->ex;
	struct tbl *t = &ex->t[T_ACTS];
	struct exp_frame *f = &et->stack[et->sp - 1];
	const struct tt_run *r = ex->run;
	int64_t dur_ns = 0, self_ns = 0;

	if (f->nr_args)
		exp_args(et, f);
	if (timed)
		exp_chain_step(et, f->name, exit_ticks - f->enter_ticks, self_ticks, outermost,
			       &dur_ns, &self_ns);

	if (t->pq) { /* the row in place, in acts_cols' order */
		uint64_t nulls = et->sp > 1 ? 0 : 1u << 4;
		int64_t *v = tt_pq_int_row_begin(t->pq);
		int rc;

		t->rows++;
		if (v) {
			int64_t rel = tt_run_rel_ns(r, f->enter_ticks);

			v[0] = (int32_t)r->run_id;
			v[1] = et->serial;
			v[2] = f->name;
			v[3] = (int64_t)f->id;
			v[4] = et->sp > 1 ? (int64_t)et->stack[et->sp - 2].id : 0;
			v[5] = (int32_t)(et->sp - 1);
			v[6] = rel;
			v[7] = (int64_t)tt_run_unix_of_rel(r, rel);
			v[8] = dur_ns;
			v[9] = self_ns;
			v[10] = !timed;
			if (!timed)
				nulls |= 1u << 8 | 1u << 9;
			rc = tt_pq_int_row_done(t->pq, nulls);
		} else {
			rc = tt_pq_int_row_done(t->pq, 0); /* the writer's error */
		}
		if (rc && !t->err)
			t->err = rc;
		et->sp--;
		return;
	}
	TBL_ROW(t, C_INT(r->run_id), C_INT(et->serial), C_INT(f->name), C_INT(f->id),
		et->sp > 1 ? C_INT(et->stack[et->sp - 2].id) : C_NULL, C_INT(et->sp - 1),
		C_INT(tt_run_rel_ns(r, f->enter_ticks)), C_INT(tt_run_unix_ns(r, f->enter_ticks)),
		timed ? C_INT(dur_ns) : C_NULL, timed ? C_INT(self_ns) : C_NULL, C_INT(!timed));
	et->sp--;
}

static void exp_act(void *tctx, const struct tt_activation *a)
{
	struct exp_thread *et = tctx;

	if (et->sp)
		exp_row(et, true, a->exit_ticks, a->self_ticks, a->outermost);
}

static void exp_error(void *tctx, uint32_t name, uint32_t slot, uint64_t enter_ticks,
		      uint64_t ticks, enum tt_frame_error why)
{
	struct exp_thread *et = tctx;

	(void)name;
	(void)slot;
	(void)enter_ticks;
	(void)ticks;
	(void)why;
	if (et->sp)
		exp_row(et, false, 0, 0, false);
}

/* Annotations: rows of values, instants, flows; arguments wait for their
 * activation's row (exp_args()). depth: the activation they belong to. */
static void exp_annot(void *tctx, uint32_t slot, uint32_t depth, const struct tt_annot *a)
{
	struct exp_thread *et = tctx;
	struct exporter *ex = et->ex;
	const struct tt_run *r = ex->run;
	const struct exp_frame *f = depth && depth <= et->sp ? &et->stack[depth - 1] : NULL;
	char *name = tt_emit_clean(a->name, a->name_bytes);

	(void)slot;
	switch (a->kind) {
	case TT_ANNOT_VALUE: {
		char num[40];

		if (a->is_double)
			snprintf(num, sizeof(num), "%.17g", a->d);
		TBL_ROW(&ex->t[T_VALUES], C_INT(r->run_id), C_INT(et->serial), C_STR(name),
			C_INT(tt_run_rel_ns(r, a->ticks)), C_INT(tt_run_unix_ns(r, a->ticks)),
			a->is_double ? C_NULL : C_INT(a->i), a->is_double ? C_STR(num) : C_NULL);
		break;
	}
	case TT_ANNOT_INSTANT:
	case TT_ANNOT_MESSAGE:
		TBL_ROW(&ex->t[T_INSTANTS], C_INT(r->run_id), C_INT(et->serial), C_STR(name),
			C_INT(a->kind == TT_ANNOT_MESSAGE), C_INT(tt_run_rel_ns(r, a->ticks)),
			C_INT(tt_run_unix_ns(r, a->ticks)), f ? C_INT(f->id) : C_NULL);
		break;
	case TT_ANNOT_ARG:
		if (f) {
			struct exp_frame *w = &et->stack[depth - 1];
			const struct arg_probe pr = { w, name };
			uint32_t i = UINT32_MAX;

			if (tt_keyidx_is_built(&w->idx)) {
				i = tt_keyidx_find(&w->idx, key_hash(name), arg_same, &pr);
			} else {
				for (uint32_t k = 0; k < w->nr_args && i == UINT32_MAX; k++)
					if (strcmp(w->args[k].key, name) == 0)
						i = k;
			}
			if (i != UINT32_MAX) {
				w->args[i].v = a->i; /* set twice: the later wins */
				free(name);
				return;
			}
			if (w->nr_args == w->cap_args) {
				w->cap_args = w->cap_args ? 2 * w->cap_args : 4;
				w->args = tt_xrealloc(w->args, w->cap_args * sizeof(*w->args));
			}
			w->args[w->nr_args].key = name;
			w->args[w->nr_args++].v = a->i;
			tt_keyidx_added(&w->idx, w->nr_args, arg_hash, w);
			return;
		}
		break;
	default:
		TBL_ROW(&ex->t[T_FLOWS], C_INT(r->run_id), C_INT(et->serial), C_STR(name),
			C_INT(a->id),
			C_STR(a->kind == TT_ANNOT_FLOW_BEGIN  ? "begin"
			      : a->kind == TT_ANNOT_FLOW_STEP ? "step"
							      : "end"),
			C_INT(tt_run_rel_ns(r, a->ticks)), C_INT(tt_run_unix_ns(r, a->ticks)),
			f ? C_INT(f->id) : C_NULL);
		break;
	}
	free(name);
}

/* CSV, or Parquet with its encoding thread: one walker, rows in the order
 * of the file's events. Parquet on several walkers: the same with
 * one_walker false, each walker with sibling writers (tt_cmd_export()). */
static const struct tt_consumer exp_consumer = {
	.thread_begin = exp_thread_begin,
	.enter = exp_enter,
	.act = exp_act,
	.error = exp_error,
	.annot = exp_annot,
	.block = exp_block,
	.one_walker = true,
	.needs_meta = false,
	.no_times = true, /* activations only: no per-name statistics */
};

static void free_threads(struct exporter *ex)
{
	while (ex->threads) {
		struct exp_thread *et = ex->threads;

		ex->threads = et->next;
		for (uint32_t k = 0; k < et->cap; k++) {
			for (uint32_t j = 0; j < et->stack[k].nr_args; j++)
				free(et->stack[k].args[j].key);
			free(et->stack[k].args);
			tt_keyidx_clear(&et->stack[k].idx);
		}
		free(et->stack);
		free(et->chains);
		tt_hmap_fini(&et->chain_map);
		free(et);
	}
}

static void write_run(struct exporter *ex, const struct tt_run *r)
{
	TBL_ROW(&ex->t[T_RUNS], C_INT(r->run_id), C_STR(r->path), C_STR(r->program),
		C_INT(r->pid), C_INT(r->start_unix_ns), C_INT(r->duration_ns), C_INT(r->events),
		C_INT(r->dropped), C_INT(r->clean), C_INT(r->meta.truncated),
		C_STR(r->meta.hdr.clock == RECFMT_CLOCK_TSC ? "tsc" : "monotonic"));
	for (uint32_t i = 0; i < r->meta.nr_threads; i++) {
		const struct tt_thread *th = &r->meta.threads[i];

		TBL_ROW(&ex->t[T_THREADS], C_INT(r->run_id), C_INT(th->serial), C_INT(th->os_tid),
			C_STR(th->name), C_INT(th->nr_events), C_INT(th->nr_dropped));
	}
}

static void write_scopes(struct exporter *ex, const struct tt_run *r, const struct tt_trace *tr)
{
	struct tt_labels labels; /* name as summary prints it; site apart (labels.h) */

	tt_labels_init(&labels);
	tt_labels_add_names(&labels, tr->names, tr->nr_names);
	tt_labels_finish(&labels);
	for (uint32_t i = 0; i < tr->nr_names; i++) {
		TBL_ROW(&ex->t[T_SCOPES], C_INT(r->run_id), C_INT(i),
			C_STR(tt_labels_shown(&labels, tr->names[i])),
			C_STR(tt_labels_site(&labels, tr->names[i])));
	}
	tt_labels_fini(&labels);
}

/*
 * The run's stack samples (views/samples.h), in file order: the leaf's
 * function as profile names it, its module, and the stack root first,
 * names joined by ';' (';' and line breaks in a name made '_').
 */
static enum tt_status write_samples(struct exporter *ex, const struct tt_run *r, char *msg,
				    size_t msg_bytes)
{
	struct tt_options o = TT_OPTIONS_INIT;
	struct tt_samples_opts so = { 0 };
	struct tt_samples s;
	char *path = NULL;
	size_t cap = 0;

	o.trace = r->path;
	if (tt_samples_read(&s, &o, &so, msg, msg_bytes) != TT_OK) {
		tt_samples_fini(&s);
		return TT_ERR_FILE;
	}
	for (size_t i = 0; i < s.nr_rows; i++) {
		const struct tt_srow *row = &s.rows[i];
		const struct tt_sstack *stk = &s.stacks[row->stack];
		const uint32_t *ids = s.frames + stk->at;
		int64_t rel = tt_run_rel_ns(r, row->ticks);
		size_t n = 0;

		for (uint32_t k = stk->n; k-- > 0;) {
			const char *name = tt_samples_label(&s, ids[k]);
			size_t len = strlen(name);

			if (n + len + 2 > cap) {
				cap = 2 * (n + len + 2);
				path = tt_xrealloc(path, cap);
			}
			if (n)
				path[n++] = ';';
			for (size_t c = 0; c < len; c++)
				path[n++] = name[c] == ';' || name[c] == '\n' || name[c] == '\r' ? '_' : name[c];
			path[n] = '\0';
		}
		TBL_ROW(&ex->t[T_SAMPLES], C_INT(r->run_id),
			C_INT(s.files[0].tr.threads[row->thread].serial), C_INT(rel),
			C_INT(tt_run_unix_of_rel(r, rel)), C_STR(tt_samples_label(&s, ids[0])),
			C_STR(s.funcs[ids[0]].module), C_STR(path ? path : ""),
			C_INT(row->truncated));
	}
	free(path);
	tt_samples_fini(&s);
	return TT_OK;
}

/* ---- the command ---- */

struct export_args {
	struct tt_files_args f; /* -o DIR and the TRACE operands (options.h) */
	bool csv;
};

enum { OPT_FORMAT = 0x500 };

static const struct argp_option export_options[] = {
	{ "output", 'o', "DIR", 0, "Write the tables into DIR (created if missing)", 0 },
	{ "format", OPT_FORMAT, "FMT", 0, "parquet (default) or csv", 0 },
	{ 0 },
};

static error_t parse_export(int key, char *arg, struct argp_state *state)
{
	struct export_args *a = state->input;

	switch (key) {
	case OPT_FORMAT:
		a->csv = tt_options_choose(state, "--format", "parquet|csv", arg) == 1;
		break;
	default:
		return tt_options_parse_files(key, arg, state, &a->f);
	}
	return 0;
}

static const struct argp export_argp = {
	export_options, parse_export, "TRACE...",
	"Export traces as tables for SQL engines: DIR/runs, threads, scopes and "
	"activations, and the annotations: values, instants, flows and args, as Apache Parquet (zstd pages, dictionary strings, statistics) "
	"or CSV. Each TRACE is a run (run_id 0, 1, ... in the order given). Schema: "
	"docs/EXPORT.md.\v"
	"Examples:\n"
	"  tracetool export -o out trace.zst\n"
	"  duckdb -c \"SELECT s.name, count(*), sum(a.self_ns) FROM 'out/activations.parquet' a "
	"JOIN 'out/scopes.parquet' s USING (run_id, scope_id) GROUP BY 1\"",
	NULL, 0, 0,
};

/*
 * The index of the input trace that DIR/NAME.EXT (the table's file) already
 * is, by st_dev and st_ino (another path, a hard or a symbolic link), or -1;
 * the table's path in path.
 */
static int table_is_input(const struct export_args *a, const char *name, char *path,
			  size_t path_bytes)
{
	struct stat out, in;

	int n = snprintf(path, path_bytes, "%s/%s.%s", a->f.out, name, a->csv ? "csv" : "parquet");

	if (n < 0 || (size_t)n >= path_bytes || stat(path, &out) != 0)
		return -1;
	for (unsigned i = 0; i < a->f.nr_traces; i++)
		if (stat(a->f.traces[i], &in) == 0 && in.st_dev == out.st_dev &&
		    in.st_ino == out.st_ino)
			return (int)i;
	return -1;
}

int tt_cmd_export(int argc, char **argv)
{
	struct export_args a = { .f.missing_out = "missing -o DIR" };
	static struct exporter exs[TT_WALK_MAX_REPLICAS];
	struct exporter *const ex0 = &exs[0];
	struct tt_run *runs;
	char msg[512];
	int rc = 0;
	unsigned nr_open = 0, nr_ex = 1;
	bool multi_thread = false, sampled = false;
	struct tt_consumer cons_par = exp_consumer;

	cons_par.one_walker = false;

	argp_parse(&export_argp, argc, argv, 0, NULL, &a);
	memset(exs, 0, sizeof(exs));
	runs = tt_xcalloc(a.f.nr_traces, sizeof(*runs));
	/* Every file's metadata first: a bad file leaves no tables behind. */
	for (unsigned i = 0; i < a.f.nr_traces; i++, nr_open++) {
		if (tt_run_open(&runs[i], a.f.traces[i], i, msg, sizeof(msg)) != TT_OK) {
			rc = tt_fail_file(a.f.traces[i], msg);
			nr_open++;
			goto out;
		}
	}
	for (unsigned i = 0; i < a.f.nr_traces; i++) {
		multi_thread |= runs[i].meta.nr_threads > 1;
		sampled |= runs[i].meta.has_sampling;
	}
	/*
	 * Parquet of a run with several threads: a walker per CPU, each
	 * encoding its own row groups (the rows need not cross cores);
	 * else one walker, with the activations encoded on a second thread
	 * when there are CPUs for it.
	 */
	const unsigned walkers = tt_trace_walkers();
	if (!a.csv && multi_thread && walkers > 1)
		nr_ex = walkers < TT_WALK_MAX_REPLICAS ? walkers : TT_WALK_MAX_REPLICAS;
	/* -o never an input (docs/ANALYZER.md, "Hostile files"): a trace in DIR
	 * named as a table (DIR/runs.csv) would be truncated before it is read. */
	for (int k = 0; k < NR_TABLES; k++) {
		char path[PATH_MAX];
		int in = table_is_input(&a, tables[k].name, path, sizeof(path));

		if (in >= 0) {
			snprintf(msg, sizeof(msg), "is the input trace %s; refusing to overwrite it",
				 a.f.traces[in]);
			rc = tt_fail_file(path, msg) + 1;
			goto out;
		}
	}
	if (mkdir(a.f.out, 0755) != 0 && errno != EEXIST) {
		snprintf(msg, sizeof(msg), "cannot create: %s", strerror(errno));
		rc = tt_fail_file(a.f.out, msg);
		goto out;
	}
	for (int k = 0; k < NR_TABLES; k++) {
		if (k == T_SAMPLES && !sampled)
			continue; /* no samples table for recordings without */
		int e = tbl_open(&ex0->t[k], a.f.out, tables[k].name, a.csv, tables[k].cols,
				 tables[k].n, nr_ex == 1 && walkers > 1);
		if (e) {
			snprintf(msg, sizeof(msg), "cannot create: %s", strerror(-e));
			rc = tt_fail_file(ex0->t[k].path, msg);
			goto out;
		}
		for (unsigned r = 1; r < nr_ex; r++)
			tbl_sibling(&exs[r].t[k], &ex0->t[k]);
	}
	for (unsigned i = 0; i < a.f.nr_traces; i++) {
		struct tt_options o = TT_OPTIONS_INIT;
		struct tt_report rep;
		struct tt_walk_spec spec = { .cons = nr_ex > 1 ? &cons_par : &exp_consumer };

		struct exp_offsets offsets = { 0 };

		/* Where each (thread, scope) rounding chain starts (exp_chain_step()):
		 * not needed on a clock of 1 ns a tick, and 0 with one thread. */
		if (runs[i].clock.num != runs[i].clock.den && runs[i].meta.nr_threads > 1 &&
		    exp_first_pass(runs[i].path, &offsets, msg, sizeof(msg)) != TT_OK) {
			offsets_fini(&offsets);
			rc = tt_fail_file(runs[i].path, msg);
			goto out;
		}
		for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
			exs[r].run = &runs[i];
			exs[r].rep = &rep;
			exs[r].replica = r < nr_ex ? r : 0;
			exs[r].offsets = &offsets;
			spec.ctxs[r] = &exs[r < nr_ex ? r : 0]; /* the walk has nr_ex replicas at most */
		}
		o.trace = runs[i].path;
		enum tt_status st = tt_walk(&rep, &o, &spec, msg, sizeof(msg));
		if (st == TT_OK) {
			tt_trace_warn(&rep.tr);
			/* After the events: the duration is the main pass's. */
			tt_run_saw_ticks(&runs[i], rep.tr.max_ticks);
			write_run(ex0, &runs[i]);
			write_scopes(ex0, &runs[i], &rep.tr);
			if (runs[i].meta.has_sampling)
				st = write_samples(ex0, &runs[i], msg, sizeof(msg));
		}
		tt_report_fini(&rep);
		for (unsigned r = 0; r < nr_ex; r++)
			free_threads(&exs[r]);
		offsets_fini(&offsets);
		if (st != TT_OK) {
			rc = tt_fail_file(runs[i].path, msg);
			goto out;
		}
	}
out:
	for (int k = 0; k < NR_TABLES; k++) {
		uint64_t bytes;

		if (!ex0->t[k].path)
			continue;
		/* The siblings first: the footer lists their row groups too. */
		for (unsigned r = 1; r < nr_ex; r++)
			if (exs[r].t[k].pq)
				tbl_close_sibling(&exs[r].t[k], &ex0->t[k]);
		int e = tbl_close(&ex0->t[k], &bytes);
		if (e && !rc) {
			snprintf(msg, sizeof(msg), "cannot write: %s", strerror(-e));
			rc = tt_fail_file(ex0->t[k].path, msg);
		}
		if (!rc && getenv("TRACETOOL_EXPORT_STATS"))
			fprintf(stderr, "%s: %" PRIu64 " rows, %" PRIu64 " bytes\n", ex0->t[k].path,
				ex0->t[k].rows, bytes);
		free(ex0->t[k].path);
	}
	for (unsigned i = 0; i < nr_open && i < a.f.nr_traces; i++)
		tt_run_close(&runs[i]);
	free(runs);
	tt_files_args_fini(&a.f);
	return rc;
}
