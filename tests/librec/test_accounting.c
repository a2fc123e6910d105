/* SPDX-License-Identifier: MIT */
/*
 * test_accounting.c - librec's numbers are the program's (issue 14): a scope
 * open across rec_stop()/rec_start() leaves no exit without its enter in
 * the new file; in block mode a probe's wait for room is counted per thread
 * and is not part of the activation it enters. Each Test runs in its own
 * process.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "trace_read.h"

static char out[2][256], fifo[256];

static void use_outputs(const char *what)
{
	for (int i = 0; i < 2; i++) {
		snprintf(out[i], sizeof(out[i]), "/tmp/rec_honest_%d_%s_%d.zst", (int)getpid(), what,
			 i);
		unlink(out[i]);
	}
}

static void cleanup(void)
{
	for (int i = 0; i < 2; i++)
		if (out[i][0])
			unlink(out[i]);
	if (fifo[0])
		unlink(fifo);
}

/* Runs tracetool (TRACETOOL) with `args`; returns its stdout (malloc'ed). */
static char *tracetool(const char *args)
{
	const char *tt = getenv("TRACETOOL");
	char cmd[1024], *buf;
	int status;

	cr_assert(tt, "TRACETOOL not set");
	snprintf(cmd, sizeof(cmd), "%s %s", tt, args);
	buf = tu_sh(cmd, &status);
	cr_assert_eq(status, 0, "%s failed: %s", cmd, buf);
	return buf;
}

/* The number after `"key":` at or after `from`; fails if absent. */
static uint64_t json_u64_after(const char *from, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(from, pat);
	cr_assert(p, "no %s in %s", pat, from);
	return strtoull(p + strlen(pat), NULL, 10);
}

TestSuite(honest, .fini = cleanup, .timeout = 60);

static void after(void)
{
	TRACE_SCOPE_NAMED("after");
}

/* Restarts the recorder into out[1] from inside two open scopes. */
static void open_across_restart(void)
{
	struct rec_config cfg = REC_CONFIG_INIT;

	TRACE_SCOPE_NAMED("outer");
	{
		TRACE_SCOPE_NAMED("inner");
		cr_assert_eq(rec_stop(), 0);
		cfg.output = out[1];
		cr_assert_eq(rec_start(&cfg), 0);
		after(); /* inside the old scopes, in the new file */
	}
	after();
}

Test(honest, a_scope_open_across_a_restart_leaves_no_orphan_exit)
{
	struct rec_config cfg = REC_CONFIG_INIT;
	struct tr_trace tr;

	use_outputs("restart");
	cfg.output = out[0];
	cr_assert_eq(rec_start(&cfg), 0);
	after();
	open_across_restart();
	after();
	cr_assert_eq(rec_stop(), 0);

	cr_assert_eq(tr_load(out[0], &tr), 0);
	cr_assert_eq(tr_calls(&tr, "after"), 1);
	cr_assert_eq(tr_calls(&tr, "outer"), 1);
	cr_assert_eq(tr.threads[0].nr_bad_exits, 0);
	cr_assert_eq(tr.threads[0].nr_unclosed, 2); /* outer and inner: open at the stop */
	tr_free(&tr);

	cr_assert_eq(tr_load(out[1], &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr_calls(&tr, "after"), 3);
	cr_assert_eq(tr_calls(&tr, "outer"), 0);
	cr_assert_eq(tr_calls(&tr, "inner"), 0);
	cr_assert_eq(tr.threads[0].nr_bad_exits, 0, "an exit without its enter in the new file");
	cr_assert_eq(tr.threads[0].nr_unclosed, 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr.nr_events, 6);
	tr_free(&tr);
}

/* Many restarts with scopes open: the reservations given back keep the ring exact. */
Test(honest, reservations_of_old_scopes_are_given_back)
{
	struct rec_config cfg = REC_CONFIG_INIT;
	struct tr_trace tr;

	use_outputs("many");
	cfg.output = out[0];
	setenv("REC_BUFFER", "4K", 1);
	setenv("REC_OVERFLOW", "block", 1);
	cr_assert_eq(rec_start(&cfg), 0);
	for (int i = 0; i < 300; i++) {
		TRACE_SCOPE_NAMED("outer");
		cr_assert_eq(rec_stop(), 0);
		cr_assert_eq(rec_start(&cfg), 0);
	}
	/* 300 scopes' reservations would fill the 256-slot ring if kept: block mode would hang. */
	for (int i = 0; i < 10000; i++)
		after();
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(tr_load(out[0], &tr), 0);
	cr_assert_eq(tr_calls(&tr, "after"), 10000);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

/* ------------------------------------------------------------------ */

static void leaf(void)
{
	TRACE_SCOPE_NAMED("leaf");
}

/* Reads the FIFO into out[0] after holding the writer up for 200 ms. */
static void *slow_reader(void *arg)
{
	int rfd = *(int *)arg, wfd;
	struct timespec stall = { 0, 200 * 1000 * 1000 };
	char buf[65536];
	ssize_t k;

	nanosleep(&stall, NULL);
	fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) & ~O_NONBLOCK);
	wfd = open(out[0], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (wfd < 0)
		return (void *)1;
	while ((k = read(rfd, buf, sizeof(buf))) > 0)
		if (write(wfd, buf, (size_t)k) != k)
			return (void *)1;
	close(wfd);
	return NULL;
}

#define NR_LEAVES 100000

Test(honest, block_mode_waits_are_counted_per_thread_and_outside_activations)
{
	struct rec_config cfg = REC_CONFIG_INIT;
	char args[600], *json, *csv, *table, *threads, *after_threads;
	uint64_t nr_blocked, blocked_ns, max_ns = 0, calls = 0;
	struct tr_trace tr;
	pthread_t reader;
	void *res;
	int rfd;

	use_outputs("block");
	snprintf(fifo, sizeof(fifo), "/tmp/rec_honest_%d.fifo", (int)getpid());
	unlink(fifo);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(rfd, 0);
	fcntl(rfd, F_SETPIPE_SZ, 4096); /* the writer stalls on a full pipe at once */
	setenv("REC_BUFFER", "4K", 1);
	setenv("REC_OVERFLOW", "block", 1);
	setenv("REC_FLUSH_MS", "5", 1);
	cfg.output = fifo;
	cr_assert_eq(rec_start(&cfg), 0);
	cr_assert_eq(pthread_create(&reader, NULL, slow_reader, &rfd), 0);
	for (int i = 0; i < NR_LEAVES; i++)
		leaf();
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(pthread_join(reader, &res), 0);
	cr_assert_null(res);
	close(rfd);

	cr_assert_eq(tr_load(out[0], &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr_calls(&tr, "leaf"), NR_LEAVES);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);

	snprintf(args, sizeof(args), "info --format=json %s", out[0]);
	json = tracetool(args);
	threads = strstr(json, "\"threads\":[");
	cr_assert(threads, "%s", json);
	/* Totals come after the threads; one thread, so they agree. */
	after_threads = strstr(threads, "}]");
	cr_assert(after_threads, "%s", json);
	nr_blocked = json_u64_after(after_threads, "blocked");
	blocked_ns = json_u64_after(after_threads, "blocked_ns");
	cr_assert_eq(json_u64_after(threads, "blocked"), nr_blocked, "%s", json);
	cr_assert_eq(json_u64_after(threads, "blocked_ns"), blocked_ns, "%s", json);
	cr_assert_gt(nr_blocked, 0, "%s", json);
	cr_assert_leq(nr_blocked, NR_LEAVES, "one wait at most per enter: %s", json);
	/* The writer was held up 200 ms: the probes waited most of it. */
	cr_assert_geq(blocked_ns, 100u * 1000 * 1000, "%s", json);
	free(json);

	/* The waits are not inside any leaf: the longest leaf is far below them. */
	snprintf(args, sizeof(args), "summary --format=csv %s", out[0]);
	csv = tracetool(args);
	for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
		uint64_t v[10];

		if (strncmp(line, "leaf,", 5))
			continue;
		cr_assert_eq(sscanf(line + 5,
				    "%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64
				    ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNu64,
				    &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
				    &v[9]), 10);
		calls = v[0];
		max_ns = v[8];
	}
	free(csv);
	cr_assert_eq(calls, NR_LEAVES);
	cr_assert_lt(max_ns, blocked_ns / 2, "longest leaf %" PRIu64 " ns, waits %" PRIu64 " ns",
		     max_ns, blocked_ns);

	snprintf(args, sizeof(args), "summary %s", out[0]);
	table = tracetool(args);
	cr_assert(strstr(table, " waits for room (REC_OVERFLOW=block), "), "%s", table);
	free(table);
}

/* ------------------------------------------------------------------ */

static void named_work(void)
{
	TRACE_SCOPE_NAMED("work");
}

static pthread_barrier_t renamed, stopped;

static void *set_name_then_probe(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "early-name");
	named_work();
	return NULL;
}

/* Named after its first probe, and exits: its name at exit is kept. */
static void *probe_then_set_name(void *arg)
{
	(void)arg;
	named_work();
	prctl(PR_SET_NAME, "exit-name");
	named_work();
	return NULL;
}

/* Renamed while recording and still alive at rec_stop(): the writer's periodic read. */
static void *rename_and_live_on(void *arg)
{
	(void)arg;
	named_work();
	pthread_setname_np(pthread_self(), "late-name");
	pthread_barrier_wait(&renamed);
	pthread_barrier_wait(&stopped);
	return NULL;
}

static void *never_named(void *arg)
{
	(void)arg;
	named_work();
	return NULL;
}

Test(honest, kernel_thread_names_are_recorded_without_rec_thread_name)
{
	struct rec_config cfg = REC_CONFIG_INIT;
	struct timespec wait = { 1, 300 * 1000 * 1000 }; /* the writer reads names every second */
	void *(*const fns[4])(void *) = { set_name_then_probe, probe_then_set_name,
					  rename_and_live_on, never_named };
	char args[600], *json, *csv;
	pthread_t th[4];

	use_outputs("names");
	cfg.output = out[0];
	cr_assert_eq(rec_start(&cfg), 0);
	pthread_barrier_init(&renamed, NULL, 2);
	pthread_barrier_init(&stopped, NULL, 2);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, fns[i], NULL), 0);
	pthread_barrier_wait(&renamed);
	for (int i = 0; i < 4; i++)
		if (i != 2)
			pthread_join(th[i], NULL);
	nanosleep(&wait, NULL);
	cr_assert_eq(rec_stop(), 0);
	pthread_barrier_wait(&stopped);
	pthread_join(th[2], NULL);

	snprintf(args, sizeof(args), "info --format=json %s", out[0]);
	json = tracetool(args);
	cr_assert(strstr(json, "\"name\":\"early-name\""), "%s", json);
	cr_assert(strstr(json, "\"name\":\"exit-name\""), "%s", json);
	cr_assert(strstr(json, "\"name\":\"late-name\""), "%s", json);
	/* A thread that never named itself has no name (not the program's). */
	cr_assert(strstr(json, "\"name\":null"), "%s", json);
	free(json);
	snprintf(args, sizeof(args), "summary --by-thread --format=csv %s", out[0]);
	csv = tracetool(args);
	cr_assert(strstr(csv, "\nearly-name,work,1,"), "%s", csv);
	cr_assert(strstr(csv, "\nexit-name,work,2,"), "%s", csv);
	cr_assert(strstr(csv, "\nlate-name,work,1,"), "%s", csv);
	free(csv);
}

/* ------------------------------------------------------------------ */

/* json "key":{"scope":S,... as a double; fails if absent. */
static double json_cost(const char *json, const char *key)
{
	char pat[64];
	const char *p = strstr(json, "\"probe_cost_ns\":{");

	cr_assert(p, "no probe_cost_ns in %s", json);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(p, pat);
	cr_assert(p, "no %s in %s", pat, json);
	return strtod(p + strlen(pat), NULL);
}

/* The probe's cost is in the file, and measuring it put nothing else there. */
Test(honest, probe_cost_is_measured_at_start_and_pollutes_nothing)
{
	struct rec_config cfg = REC_CONFIG_INIT;
	char args[600], *json, *table;
	struct tr_trace tr;

	use_outputs("cost");
	cfg.output = out[0];
	cr_assert_eq(rec_start(&cfg), 0);
	for (int i = 0; i < 10; i++)
		after();
	cr_assert_eq(rec_stop(), 0);

	cr_assert_eq(tr_load(out[0], &tr), 0);
	cr_assert_eq(tr.nr_events, 20);
	cr_assert_eq(tr.nr_threads, 1);
	for (uint32_t id = 0; id < tr.nr_sites; id++)
		cr_assert(!tr.site_names[id] || !strcmp(tr.site_names[id], "after"),
			  "site %u is %s", id, tr.site_names[id]);
	tr_free(&tr);

	snprintf(args, sizeof(args), "info --format=json %s", out[0]);
	json = tracetool(args);
	cr_assert_gt(json_cost(json, "scope"), 0.0, "%s", json);
	cr_assert_gt(json_cost(json, "hook"), 0.0, "%s", json);
	cr_assert_leq(json_cost(json, "scope_inner"), json_cost(json, "scope"), "%s", json);
	cr_assert_leq(json_cost(json, "hook_inner"), json_cost(json, "hook"), "%s", json);
	free(json);
	snprintf(args, sizeof(args), "info %s", out[0]);
	table = tracetool(args);
	cr_assert(strstr(table, "\nprobe cost:       TRACE_SCOPE "), "%s", table);
	free(table);
}
