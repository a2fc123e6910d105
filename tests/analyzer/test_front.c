/* SPDX-License-Identifier: MIT */
/*
 * test_front.c - analyzer/engine/front.h called directly: tt_walk() on
 * traces written by tracegen (monotonic clock, 1 tick = 1 ns), with
 * consumers that count what they are handed. A consumer with no enter(),
 * one with only counters(), several files with a per-file merge step,
 * each_file and keep_files, and --thread resolved by the metadata pass.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/front.h"
#include "testutil.h"
#include "tracegen.h"

TestSuite(front, .timeout = 120);

/*
 * A file of pid `pid`: threads 1 ("main", tid pid) and 2 ("worker"), each
 * with `calls` activations of f [10k, 10k + 5) holding one of g [10k + 1,
 * 10k + 3). With counters, thread 1's "cycles" grows by 7 across each f
 * and 2 across each g.
 */
static void write_file(const char *path, uint32_t pid, unsigned calls, bool counters)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .pid = pid };
	struct tg_trace *t = tg_create(path, &cfg);
	static const char *const names[] = { "cycles" };
	static const uint32_t flags[] = { RECFMT_COUNTER_RECORDED };

	cr_assert(t);
	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_thread(t, 1, pid, "main");
	tg_thread(t, 2, pid + 1, "worker");
	if (counters)
		cr_assert_eq(tg_counter_set(t, 1, 1, names, flags), 0);
	for (uint32_t th = 1; th <= 2; th++)
		for (unsigned k = 0; k < calls; k++) {
			uint64_t at = 10000 * (uint64_t)(k + 1);
			uint64_t v[4] = { 100 * (uint64_t)k, 100 * (uint64_t)k + 1,
					  100 * (uint64_t)k + 3, 100 * (uint64_t)k + 7 };

			if (counters && th == 1) {
				tg_enter_ctr(t, th, 1, at, &v[0]);
				tg_enter_ctr(t, th, 2, at + 1, &v[1]);
				tg_exit_ctr(t, th, 2, at + 3, &v[2]);
				tg_exit_ctr(t, th, 1, at + 5, &v[3]);
			} else {
				tg_enter(t, th, 1, at);
				tg_enter(t, th, 2, at + 1);
				tg_exit(t, th, 2, at + 3);
				tg_exit(t, th, 1, at + 5);
			}
		}
	cr_assert_eq(tg_finish(t, true), 0);
}

/* What a counting consumer saw, per replica. */
struct seen {
	uint64_t threads, acts, nonzero_slots, dur_ticks;
	uint64_t ctr_calls, ctr_sum;
};

static void *count_thread(void *ctx, const struct tt_thread *th)
{
	struct seen *s = ctx;

	(void)th;
	s->threads++;
	return s;
}

static void count_act(void *tctx, const struct tt_activation *a)
{
	struct seen *s = tctx;

	s->acts++;
	s->dur_ticks += a->dur_ticks;
	s->nonzero_slots += a->slot != 0;
}

static void count_counters(void *ctx, uint32_t thread, uint32_t name, bool outermost,
			   uint32_t mask, const uint64_t *delta)
{
	struct seen *s = ctx;

	(void)thread, (void)name, (void)outermost;
	if (mask & 1) {
		s->ctr_calls++;
		s->ctr_sum += delta[0];
	}
}

static struct seen total(const struct seen *w)
{
	struct seen t = { 0 };

	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++) {
		t.threads += w[r].threads;
		t.acts += w[r].acts;
		t.nonzero_slots += w[r].nonzero_slots;
		t.dur_ticks += w[r].dur_ticks;
		t.ctr_calls += w[r].ctr_calls;
		t.ctr_sum += w[r].ctr_sum;
	}
	return t;
}

static const struct tt_row *row_named(const struct tt_report *rep, const char *name)
{
	for (size_t i = 0; i < rep->nr_rows; i++)
		if (strncmp(rep->rows[i].name, name, strlen(name)) == 0 &&
		    rep->rows[i].name[strlen(name)] == TT_SITE_SEP)
			return &rep->rows[i];
	return NULL;
}

Test(front, a_consumer_without_enter_is_handed_every_activation_with_slot_0)
{
	static const struct tt_consumer cons = { .thread_begin = count_thread, .act = count_act };
	struct tt_options o = TT_OPTIONS_INIT;
	struct seen w[TT_WALK_MAX_REPLICAS] = { 0 };
	struct tt_walk_spec spec = { .cons = &cons };
	struct tt_report rep;
	char msg[256];

	write_file(tu_path(0, "front.zst"), 100, 50, false);
	o.trace = tu_path(0, "front.zst");
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++)
		spec.ctxs[r] = &w[r];
	cr_assert_eq(tt_walk(&rep, &o, &spec, msg, sizeof(msg)), TT_OK, "%s", msg);
	struct seen t = total(w);
	cr_assert_eq(t.threads, 2);
	cr_assert_eq(t.acts, 200); /* 2 threads x 50 x (f, g) */
	cr_assert_eq(t.dur_ticks, 2 * 50 * (5 + 2));
	cr_assert_eq(t.nonzero_slots, 0);
	tt_report_fini(&rep);
	unlink(o.trace);
}

Test(front, a_counters_only_consumer_gets_the_deltas_and_sees_no_activation)
{
	static const struct tt_consumer cons = { .counters = count_counters };
	struct tt_options o = TT_OPTIONS_INIT;
	struct seen w[TT_WALK_MAX_REPLICAS] = { 0 };
	struct tt_walk_spec spec = { .cons = &cons };
	struct tt_report rep;
	char msg[256];

	write_file(tu_path(0, "ctrs.zst"), 100, 20, true);
	o.trace = tu_path(0, "ctrs.zst");
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++)
		spec.ctxs[r] = &w[r];
	cr_assert_eq(tt_walk(&rep, &o, &spec, msg, sizeof(msg)), TT_OK, "%s", msg);
	struct seen t = total(w);
	cr_assert_eq(t.ctr_calls, 40);		   /* thread 1: 20 f and 20 g */
	cr_assert_eq(t.ctr_sum, 20 * (7 + 2));
	cr_assert_eq(t.threads, 0);		   /* no thread_begin() to call */
	for (unsigned r = 0; r < rep.nr_replicas; r++)
		cr_assert_null(tt_report_replica_scopes(&rep, r)->cons,
			       "replica %u: the pairing loop sees a consumer", r);
	/* The engine's own statistics are whole: f and g, both threads. */
	cr_assert_eq(row_named(&rep, "f")->calls, 40);
	cr_assert_eq(row_named(&rep, "g")->total_ns, 40 * 2);
	tt_report_fini(&rep);
	unlink(o.trace);
}

/* The merge step's record of the files it saw. */
struct files_seen {
	unsigned begun, ended;
	char process[4][64];
	unsigned index[4];
	uint64_t acts[4];
	struct seen w[TT_WALK_MAX_REPLICAS];
};

static void fs_begin(void *ctx, struct tt_walk_file *f)
{
	struct files_seen *fs = ctx;

	memset(fs->w, 0, sizeof(fs->w));
	for (unsigned r = 0; r < TT_WALK_MAX_REPLICAS; r++)
		f->ctxs[r] = &fs->w[r];
	fs->begun++;
}

static enum tt_status fs_end(void *ctx, struct tt_walk_file *f, char *msg, size_t msg_bytes)
{
	struct files_seen *fs = ctx;

	(void)msg, (void)msg_bytes;
	snprintf(fs->process[fs->ended], sizeof(fs->process[0]), "%s",
		 f->process ? f->process : "(none)");
	fs->index[fs->ended] = f->index;
	fs->acts[fs->ended] = total(fs->w).acts;
	fs->ended++;
	return TT_OK;
}

static void two_files(struct tt_options *o, const char **paths)
{
	paths[0] = tu_path(1, "one.zst");
	paths[1] = tu_path(2, "two.zst");
	write_file(paths[0], 100, 10, false);
	write_file(paths[1], 200, 30, false);
	o->trace = paths[0];
	o->traces = paths;
	o->nr_traces = 2;
}

Test(front, several_files_are_merged_and_each_handed_to_the_merge_step_with_its_process)
{
	static const struct tt_consumer cons = { .thread_begin = count_thread, .act = count_act };
	struct tt_options o = TT_OPTIONS_INIT;
	const char *paths[2];
	struct files_seen *fs = calloc(1, sizeof(*fs));
	struct tt_walk_spec spec = { .cons = &cons, .file_begin = fs_begin, .file_end = fs_end,
				     .ctx = fs };
	struct tt_report rep;
	char msg[256];

	two_files(&o, paths);
	cr_assert_eq(tt_walk(&rep, &o, &spec, msg, sizeof(msg)), TT_OK, "%s", msg);
	cr_assert_eq(fs->begun, 2);
	cr_assert_eq(fs->ended, 2);
	cr_assert_eq(fs->index[0], 0);
	cr_assert_eq(fs->index[1], 1);
	cr_assert_str_eq(fs->process[0], "main[100]");
	cr_assert_str_eq(fs->process[1], "main[200]");
	cr_assert_eq(fs->acts[0], 2 * 10 * 2);
	cr_assert_eq(fs->acts[1], 2 * 30 * 2);
	cr_assert_eq(rep.nr_files, 2);
	cr_assert_eq(rep.nr_kept, 0);
	cr_assert_eq(row_named(&rep, "f")->calls, 2 * (10 + 30));
	cr_assert_eq(row_named(&rep, "f")->total_ns, 2 * (10 + 30) * 5);
	tt_report_fini(&rep);
	unlink(paths[0]);
	unlink(paths[1]);
	free(fs);
}

Test(front, keep_files_keeps_each_files_report_until_the_merged_one_is_finished)
{
	struct tt_options o = TT_OPTIONS_INIT;
	const char *paths[2];
	struct tt_walk_spec spec = { .keep_files = true };
	struct tt_report rep;
	char msg[256];

	two_files(&o, paths);
	cr_assert_eq(tt_walk(&rep, &o, &spec, msg, sizeof(msg)), TT_OK, "%s", msg);
	cr_assert_eq(rep.nr_kept, 2);
	cr_assert_eq(rep.files[0]->tr.hdr.pid, 100);
	cr_assert_eq(rep.files[1]->tr.hdr.pid, 200);
	cr_assert_str_eq(rep.files[1]->process, "main[200]");
	cr_assert_eq(row_named(rep.files[1], "g")->calls, 2 * 30);
	tt_report_fini(&rep);
	unlink(paths[0]);
	unlink(paths[1]);
}

Test(front, each_file_hands_every_file_to_the_consumer_and_merges_no_rows)
{
	static const struct tt_consumer cons = { .thread_begin = count_thread, .act = count_act };
	struct tt_options o = TT_OPTIONS_INIT;
	const char *paths[2];
	struct files_seen *fs = calloc(1, sizeof(*fs));
	struct tt_walk_spec spec = { .cons = &cons, .file_begin = fs_begin, .file_end = fs_end,
				     .ctx = fs, .each_file = true };
	struct tt_report rep;
	char msg[256];

	two_files(&o, paths);
	cr_assert_eq(tt_walk(&rep, &o, &spec, msg, sizeof(msg)), TT_OK, "%s", msg);
	cr_assert_eq(fs->ended, 2);
	cr_assert_str_eq(fs->process[0], "(none)");
	cr_assert_eq(fs->acts[1], 2 * 30 * 2);
	cr_assert_eq(rep.nr_rows, 0);
	tt_report_fini(&rep);
	/* One file too: each_file is not about how many. */
	memset(fs, 0, sizeof(*fs));
	o.nr_traces = 1;
	o.traces = NULL;
	cr_assert_eq(tt_walk(&rep, &o, &spec, msg, sizeof(msg)), TT_OK, "%s", msg);
	cr_assert_eq(fs->ended, 1);
	cr_assert_eq(fs->acts[0], 2 * 10 * 2);
	tt_report_fini(&rep);
	unlink(paths[0]);
	unlink(paths[1]);
	free(fs);
}

Test(front, a_thread_filter_is_decided_by_the_metadata_pass_and_a_missing_thread_fails)
{
	struct tt_options o = TT_OPTIONS_INIT;
	const char *want[] = { "worker" }, *none[] = { "nosuch" };
	bool found[1] = { false };
	struct tt_report rep;
	char msg[512];

	write_file(tu_path(0, "thr.zst"), 100, 10, false);
	o.trace = tu_path(0, "thr.zst");
	o.threads = want;
	o.threads_found = found;
	o.nr_threads = 1;
	cr_assert_eq(tt_walk(&rep, &o, &tt_walk_stats, msg, sizeof(msg)), TT_OK, "%s", msg);
	cr_assert(rep.has_meta);
	cr_assert_eq(row_named(&rep, "f")->calls, 10); /* the worker's only */
	tt_report_fini(&rep);
	o.threads = none;
	found[0] = false;
	cr_assert_eq(tt_walk(&rep, &o, &tt_walk_stats, msg, sizeof(msg)), TT_ERR_FILE);
	cr_assert(strstr(msg, "no thread 'nosuch' (--thread)"), "%s", msg);
	cr_assert(strstr(msg, "worker"), "%s", msg);
	tt_report_fini(&rep);
	unlink(o.trace);
}
