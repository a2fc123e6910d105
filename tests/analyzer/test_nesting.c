/* SPDX-License-Identifier: MIT */
/*
 * test_nesting.c - issue 14 on the analyzer's side: `check` fails an exit
 * without an enter (no enter of its site open on its thread), saying where;
 * and passes what nests, including enters still open at the end and enters
 * left without an exit by longjmp (noted on its success line).
 */
#include "ttest.h"

#include <unistd.h>

static const char *trace;

static void setup(void)
{
	trace = tu_path(0, "honest.zst");
}

static void teardown(void)
{
	unlink(trace);
}

TestSuite(honest, .init = setup, .fini = teardown, .timeout = 120);

Test(honest, check_fails_an_exit_without_an_enter_and_says_where)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;
	char want[512];

	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_thread(t, 1, 100, "main");
	tg_thread(t, 2, 101, NULL);
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 2100);
	tg_exit(t, 2, 2, 2200); /* thread 2's first event: an exit */
	tg_enter(t, 2, 1, 2300);
	tg_exit(t, 2, 1, 2400);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1, "%s", r.out);
	cr_assert_str_eq(r.out, "");
	cr_assert_eq(tu_nr_lines(r.err), 1, "%s", r.err);
	snprintf(want, sizeof(want),
		 "tracetool: %s: frame 0 at byte ", trace);
	cr_assert(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
	cr_assert(strstr(r.err, "thread 2: event 0 of the EVENTS block is an exit of site 2 "
				"without an enter\n"), "%s", r.err);
	tu_result_free(&r);
}

/*
 * An exit whose enter is open below the innermost one (longjmp left g without
 * its exit): the file is intact, the success line says how many were left;
 * an exit of a site with no open enter after that is a problem.
 */
Test(honest, check_notes_enters_left_by_longjmp_and_fails_an_exit_with_none_open)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;

	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_site(t, 3, "h");
	tg_thread(t, 1, 100, "main");
	for (uint64_t i = 0; i < 3; i++) {
		tg_enter(t, 1, 1, 2000 + 1000 * i);
		tg_enter(t, 1, 2, 2100 + 1000 * i);
		tg_enter(t, 1, 3, 2150 + 1000 * i);
		tg_exit(t, 1, 1, 2200 + 1000 * i);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	cr_assert(strstr(r.out, ": ok (") && strstr(r.out, "; note: 6 activation(s) left without an "
								 "exit (longjmp)\n"), "%s", r.out);
	tu_result_free(&r);

	t = new_trace(trace);
	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_thread(t, 1, 100, "main");
	tg_enter(t, 1, 1, 2000);
	tg_enter(t, 1, 2, 2100);
	tg_exit(t, 1, 1, 2200);
	tg_exit(t, 1, 2, 2300);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "thread 1: event 3 of the EVENTS block is an exit of site 2 "
				"without an enter\n"), "%s", r.err);
	tu_result_free(&r);
}

/* Nesting is followed across blocks and frames; enters open at the end are fine. */
Test(honest, check_passes_nesting_across_blocks_and_open_enters)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .block_events = 3,
				 .frame_bytes = 100 };
	struct tg_trace *t = tg_create(trace, &cfg);
	struct tu_result r;

	cr_assert(t);
	tg_site(t, 1, "f");
	tg_site(t, 2, "g");
	tg_thread(t, 1, 100, "main");
	tg_thread(t, 2, 101, NULL);
	tg_enter(t, 1, 1, 10);
	for (uint64_t i = 0; i < 50; i++) {
		tg_enter(t, 1, 2, 100 + 10 * i);
		tg_enter(t, 2, 1, 100 + 10 * i);
		tg_exit(t, 2, 1, 101 + 10 * i);
		tg_exit(t, 1, 2, 105 + 10 * i);
	}
	tg_enter(t, 2, 2, 1000);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
}
