/* SPDX-License-Identifier: MIT */
/*
 * test_honest.c - librec's numbers are the program's (issue 14): a scope
 * open across rec_stop()/rec_start() leaves no exit without its enter in
 * the new file. Each Test runs in its own process.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_read.h"

static char out[2][256];

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
