/* SPDX-License-Identifier: MIT */
/*
 * test_wholeflight.c - whole-program flight mode (issue 26, items 4 and 5):
 * prog_wholeflight, built with -finstrument-functions, traces every one of
 * its 600 functions flat out, then runs a recognisable final part
 * (final_part(): fin_a() 1000 times, end_of_load()) just before its
 * trigger. Checked: the snapshot holds that final part whole and nothing
 * was dropped (the ring discards its oldest events itself, however late
 * the writer runs), as much of the ring as the window asks, and no wait in
 * REC_OVERFLOW=block mode; a crash snapshot names every function (its
 * MODULE records); REC_TRIGGER on a hook-traced function by its symbol
 * name fires and its reason names it, and a name that is no function is
 * said at start. Paths come from meson (tests/instrument/meson.build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* The ring of REC_BUFFER=8M: 524 288 slots; the producer discards an eighth at a time. */
#define RING_SLOTS 524288ull
#define CHUNK_SLOTS (RING_SLOTS / 8)

static char dir[TU_TMPDIR_MAX], err_txt[TU_PATH_MAX];

static void setup(void)
{
	tu_join(err_txt, tu_tmpdir(dir, "rec_wholeflight"), "stderr.txt");
}

static void teardown(void)
{
	tu_tmpdir_remove(dir);
}

TestSuite(wholeflight, .init = setup, .fini = teardown, .timeout = 120);

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/*
 * Runs prog_wholeflight `args` in flight mode with the extra "NAME=value"
 * settings; returns its wait status. Snapshots go to DIR/snap-N.zst.
 */
static int run(const char *extra_env, const char *args)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "env REC_MODE=flight REC_OUTPUT='%s/snap-%%n.zst' REC_BUFFER=8M %s '%s' %s 2>'%s'",
		 dir, extra_env ? extra_env : "", getenv("PROG_WHOLEFLIGHT"), args, err_txt);
	return system(cmd);
}

/* The one snapshot written (asserted), as a path. */
static const char *the_snapshot(void)
{
	static char path[512];
	char pattern[300];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/snap-*.zst", dir);
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no snapshot written; stderr:\n%s",
		     slurp(err_txt));
	cr_assert_eq(g.gl_pathc, 1, "%zu snapshots", g.gl_pathc);
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	return path;
}

/* A number after `key` in text (JSON "key":N), -1 if absent. */
static long long json_num(const char *text, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(text, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

/* Field k of fn's summary CSV row (0 calls ... 9 errors), -1 when fn has no row. */
static long long field_of(const char *csv, const char *fn, unsigned k)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "\n%s,", fn);
	p = strstr(csv, key);
	if (!p)
		return -1;
	p += strlen(key);
	while (k--) {
		p = strchr(p, ',');
		cr_assert_not_null(p);
		p++;
	}
	return strtoll(p, NULL, 10);
}

/* The load's leaf calls, from the program's stderr line. */
static unsigned long long leaf_calls(void)
{
	const char *p = strstr(slurp(err_txt), "leaf calls ");

	cr_assert_not_null(p, "%s", slurp(err_txt));
	return strtoull(p + strlen("leaf calls "), NULL, 10);
}

/*
 * What a snapshot taken at the end of the load must hold: the final part,
 * whole, with nothing dropped, and the newest events the ring held: at
 * least the ring less the chunk its producer discards at once (or every
 * event, for a load too short to fill it).
 */
static void check_final_part(const char *snap, const char *kind)
{
	unsigned long long produced = 2 * leaf_calls(), want;
	struct tu_result r = tu_run("summary", "--format=csv", snap, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_null(strstr(r.out, "\n0x"), "every function is named:\n%s", r.out);
	cr_assert_eq(field_of(r.out, "final_part", 0), 1, "%s", r.out);
	cr_assert_eq(field_of(r.out, "fin_a", 0), 1000, "%s", r.out);
	cr_assert_eq(field_of(r.out, "end_of_load", 0), 1, "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", snap, NULL);
	cr_assert_eq(json_num(r.out, "dropped"), 0, "dropped scopes: %s", r.out);
	want = produced < RING_SLOTS - CHUNK_SLOTS ? produced : RING_SLOTS - CHUNK_SLOTS;
	cr_assert_geq(json_num(r.out, "events"), (long long)want, "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", snap, NULL);
	cr_assert_not_null(strstr(r.out, kind), "%s", r.out);
	tu_result_free(&r);
}

/*
 * Issue 26 item 4: a thread making events flat out kept its window only
 * between the writer's trims: the snapshot held 0.3-0.5 M events against
 * tens of millions of dropped scopes, and the last milliseconds before the
 * trigger were missing.
 */
Test(wholeflight, a_flat_out_whole_program_snapshot_holds_its_final_part_up_to_the_trigger)
{
	int st = run("REC_WINDOW=2s", "snapshot 1500");

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, slurp(err_txt));
	check_final_part(the_snapshot(), "rec_snapshot: end of load");
}

/* The same through REC_SNAPSHOT_SIGNAL (the USR2). */
Test(wholeflight, a_flat_out_whole_program_signal_snapshot_holds_its_final_part)
{
	int st = run("REC_WINDOW=2s REC_SNAPSHOT_SIGNAL=USR2", "signal 1500");

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, slurp(err_txt));
	check_final_part(the_snapshot(), "signal USR2");
}

/*
 * Issue 26 item 4, REC_OVERFLOW=block: 250 waits, 405 ms blocked in 3 s,
 * the flight writer not trimming fast enough. A flight ring now never
 * waits for the writer between snapshots.
 */
Test(wholeflight, block_mode_flight_recorder_never_waits_for_the_writer)
{
	int st = run("REC_WINDOW=2s REC_OVERFLOW=block", "snapshot 1500");
	struct tu_result r;

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, slurp(err_txt));
	r = tu_run("info", "--format=json", the_snapshot(), NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_num(r.out, "blocked"), 0, "%s", r.out);
	cr_assert_eq(json_num(r.out, "blocked_ns"), 0, "%s", r.out);
	tu_result_free(&r);
	check_final_part(the_snapshot(), "end of load");
}

/*
 * Issue 26 item 5: a whole-program crash snapshot had no MODULE records:
 * every row "0x55d6... [no module]", while USR2 snapshots were named.
 */
Test(wholeflight, a_whole_program_crash_snapshot_names_its_functions)
{
	int st = run("REC_WINDOW=2s", "crash 300");

	/* Killed by SIGSEGV (through the shell: 128 + 11); under ASan, its handler
	 * runs after librec's and ends the process its own way. */
	cr_assert(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0), "status %d: %s", st,
		  slurp(err_txt));
	check_final_part(the_snapshot(), "crash: SIGSEGV");
}

/*
 * Issue 26 item 6: REC_TRIGGER='sqlite3VdbeExec>50ms' never fired on
 * hook-traced functions, silently: the hooks' sites have an address, no
 * name. The name is now resolved to the function's address at start.
 */
Test(wholeflight, rec_trigger_fires_on_a_hook_traced_function_by_its_symbol_name)
{
	int st = run("REC_TRIGGER='slow_query>20ms'", "trigger 200 40");
	const char *snap;
	struct tu_result r;

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, slurp(err_txt));
	cr_assert_null(strstr(slurp(err_txt), "rec:"), "%s", slurp(err_txt));
	snap = the_snapshot();
	r = tu_run("info", snap, NULL);
	cr_assert_not_null(strstr(r.out, "trigger: slow_query took "), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("summary", "--format=csv", snap, NULL);
	cr_assert_eq(field_of(r.out, "slow_query", 0), 1, "%s", r.out);
	cr_assert_geq(field_of(r.out, "slow_query", 1), 40000000, "%s", r.out);
	tu_result_free(&r);
}

/* A REC_TRIGGER name that is no function of the program: one rec: line at start, not silence. */
Test(wholeflight, rec_trigger_on_no_function_says_so_at_start)
{
	int st = run("REC_TRIGGER='no_such_function>5ms,slow_query>10s'", "trigger 10 1");
	const char *err;

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	err = slurp(err_txt);
	cr_assert_not_null(strstr(err, "rec: REC_TRIGGER 'no_such_function': no function of that "
				       "name in the symbol tables of the loaded objects; it fires "
				       "only for a TRACE_SCOPE of that name\n"),
			   "%s", err);
	cr_assert_null(strstr(strstr(err, "rec:") + 1, "rec:"), "one line only:\n%s", err);
}
