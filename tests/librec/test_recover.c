/* SPDX-License-Identifier: MIT */
/*
 * test_recover.c - finding F7: a fault the program's own handler takes is
 * no crash (README "After a crash"; rec(3), "Crash"). librec calls the
 * program's handler first and captures only when the signal then kills.
 * A handler that siglongjmp()s out 100 times, before or after recording
 * started, on an alternate stack or not: the program goes on (it was
 * killed at the second fault: a per-thread flag stayed set by the jump),
 * and every scope is in a clean file. A write barrier whose handler
 * returns: every scope, no crash (the recording ended at the first fault).
 * A handler that _exit()s: captured first; one that exit()s: librec's exit
 * finishes the file, no crash record. A
 * handler that calls librec's back: captured, and the process dies by the
 * signal. prog_recover.c is the program.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "suite.h"
#include "trace_read.h"
#include "under_asan.h"

#define NR_FAULTS 100
#define NR_LEAVES 1000
#define NR_ROUNDS 10

static void out_path(char *out, size_t bytes, const char *what)
{
	snprintf(out, bytes, "/tmp/rec_recover_%d_%s.zst", (int)getpid(), what);
	unlink(out);
}

/* Runs prog_recover MODE with REC_OUTPUT=out, REC_FLUSH_MS=60000 and more (may be NULL). */
static void run(const char *mode, const char *out, const char *more, struct tu_child *c)
{
	const char *argv[] = { tu_env("PROG_RECOVER"), mode, NULL };
	char setting[300];
	const char *extra[] = { "REC_FLUSH_MS=60000", setting, more, NULL };

	snprintf(setting, sizeof(setting), "REC_OUTPUT=%s", out);
	/* TU_CHILD_CRASH: no core dump, no sanitizer's fault handler in between. */
	tu_run_child(argv, extra, 120000, TU_CHILD_CRASH, c);
	cr_assert_neq(c->status, -1, "%s: hung", mode);
}

/* tracetool check and summary: exit 0, and neither says "crash". */
static void assert_no_crash_reported(const char *out)
{
	const char *check[] = { tu_env("TRACETOOL"), "check", out, NULL };
	const char *summary[] = { tu_env("TRACETOOL"), "summary", out, NULL };
	struct tu_child c;

	tu_run_child(check, NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "check: %s%s", c.out, c.err);
	cr_assert(!strstr(c.out, "crash") && !strstr(c.err, "crash"), "check: %s%s", c.out, c.err);
	tu_run_child(summary, NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "summary: %s", c.err);
	cr_assert(!strstr(c.err, "crash"), "summary's stderr: %s", c.err);
}

/* tracetool check: exit 0, and it says the recording ended by a crash of signame. */
static void assert_crash_reported(const char *out, const char *signame)
{
	const char *check[] = { tu_env("TRACETOOL"), "check", out, NULL };
	char want[64];
	struct tu_child c;

	tu_run_child(check, NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "check: %s%s", c.out, c.err);
	snprintf(want, sizeof(want), "ended by a crash: %s", signame);
	cr_assert(strstr(c.out, want), "check: %s", c.out);
}

/* What a run of prog_recover MODE must show. */
struct recover_want {
	int exit_code;	     /* its exit status, unless signo */
	int signo;	     /* the signal it dies by; 0: it exits */
	const char *out;     /* its stdout, exactly */
	const char *err;     /* its stderr, exactly; NULL: not checked */
	struct tr_want file; /* its trace, whole and clean besides (tr_check()) */
	const char *crash;   /* check says "ended by a crash: <crash>"; NULL: no crash reported */
};

/* Runs prog_recover mode (REC_FLUSH_MS=60000) and checks its end, output and trace. */
static void run_and_check(const char *mode, const struct recover_want *w)
{
	char out[256], why[600];
	struct tu_child c;

	out_path(out, sizeof(out), mode);
	run(mode, out, NULL, &c);
	if (w->signo)
		cr_assert(WIFSIGNALED(c.wstatus) && WTERMSIG(c.wstatus) == w->signo,
			  "%s: status %d, stderr %s", mode, c.status, c.err);
	else
		cr_assert(WIFEXITED(c.wstatus) && WEXITSTATUS(c.wstatus) == w->exit_code,
			  "%s: status %d, out %s, stderr %s", mode, c.status, c.out, c.err);
	cr_assert_str_eq(c.out, w->out, "%s", mode);
	if (w->err)
		cr_assert_str_eq(c.err, w->err, "%s", mode);
	cr_assert_eq(tr_check(out, &w->file, NULL, why, sizeof(why)), 0, "%s: %s", mode, why);
	if (w->crash)
		assert_crash_reported(out, w->crash);
	else
		assert_no_crash_reported(out);
	unlink(out);
}

/* 100 faults, each left by siglongjmp(): "recovered 100", exit 0, every scope. */
static void jumps(const char *mode)
{
	const struct recover_want w = {
		.out = "recovered 100\n",
		.err = "",
		.file = { .nr_events = 2 * (1 + (uint64_t)NR_FAULTS * (NR_LEAVES + 1)),
			  .calls = { { "probe", NR_FAULTS },
				     { "leaf", 1 + (uint64_t)NR_FAULTS * NR_LEAVES } } },
	};

	run_and_check(mode, &w);
}

Test(recover, f7_handler_installed_before_start_longjmps_out_of_100_faults)
{
	jumps("jump");
}

Test(recover, f7_handler_on_an_alternate_stack_longjmps_out_of_100_faults)
{
	jumps("jumpalt");
}

Test(recover, f7_handler_installed_after_start_longjmps_out_of_100_faults)
{
	jumps("jumpafter");
}

/*
 * After the jumps, _exit() from a frame spanning where the handler ran:
 * not from inside a handler (the jump ended it, and restored the mask), so
 * no capture and no crash reported: ordinary code's _exit(), which ends the
 * recording as exit() does (F23; rec(3), "Exit"). Under ASan its runtime's
 * _exit() stands before librec's: the file is as after kill -9 (no end
 * marker).
 */
Test(recover, f7_exit_after_jumping_out_is_no_crash)
{
	const char *check[] = { tu_env("TRACETOOL"), "check", NULL, NULL };
	char out[256];
	struct tr_trace tr;
	struct tu_child c;

	out_path(out, sizeof(out), "jumpexit");
	run("jumpexit", out, NULL, &c);
	cr_assert_eq(c.status, 0, "status %d, out %s, stderr %s", c.status, c.out, c.err);
	cr_assert_str_eq(c.out, "recovered 100\n");
	cr_assert_eq(tr_load(out, &tr), 0);
#ifdef UNDER_ASAN
	cr_assert(!tr.clean);
#else
	cr_assert(tr.clean);
#endif
	tr_free(&tr);
	check[2] = out;
	tu_run_child(check, NULL, 60000, 0, &c);
	cr_assert(!strstr(c.out, "crash") && !strstr(c.err, "crash"), "check: %s%s", c.out, c.err);
	unlink(out);
}

/* A write barrier: 10 faults the handler fixes and returns from, among 10 000 scopes. */
Test(recover, f7_write_barrier_handler_returns_and_recording_goes_on)
{
	const struct recover_want w = {
		.out = "handled 10\n",
		.err = "",
		.file = { .nr_events = 2 * (uint64_t)NR_ROUNDS * NR_LEAVES,
			  .calls = { { "leaf", (uint64_t)NR_ROUNDS * NR_LEAVES } } },
	};

	run_and_check("guard", &w);
}

/*
 * The program's handler ends the process with _exit(): librectrace.so
 * stands before _exit(), sees it called from inside the handler librec
 * called, and captures first: every scope, the crash record, the end
 * marker; the exit status is the handler's. Under ASan its runtime's
 * _exit() stands before librec's and calls glibc's: not seen, so the file
 * is as after kill -9 (README "After a crash" says so), as asserted there.
 */
Test(recover, f7_handler_that_exits_is_captured_first)
{
	const struct recover_want w = {
		.exit_code = 7,
		.out = "own handler exits\n",
		.file = { .calls = { { "side", NR_LEAVES }, { "work", NR_LEAVES } } },
		.crash = "SIGSEGV",
	};
#ifdef UNDER_ASAN
	char out[256];
	struct tr_trace tr;
	struct tu_child c;

	out_path(out, sizeof(out), "exit");
	run("exit", out, NULL, &c);
	cr_assert(WIFEXITED(c.wstatus) && WEXITSTATUS(c.wstatus) == 7, "status %d, stderr %s",
		  c.status, c.err);
	cr_assert_str_eq(c.out, "own handler exits\n");
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert(!tr.clean);
	cr_assert_eq(tr_calls(&tr, "side"), NR_LEAVES);
	cr_assert_eq(tr_calls(&tr, "work"), 0);
	tr_free(&tr);
	unlink(out);
	(void)w;
	return;
#endif
	run_and_check("exit", &w);
}

/* The handler calls exit(): librec's exit finishes the file, every scope, no crash record. */
Test(recover, f7_handler_that_calls_exit_finishes_the_file_without_a_crash_record)
{
	const struct recover_want w = {
		.exit_code = 7,
		.out = "own handler exits\n",
		.file = { .calls = { { "side", NR_LEAVES }, { "work", NR_LEAVES } } },
	};

	run_and_check("exitc", &w);
}

/*
 * The program's handler, installed after start past sigaction() (which
 * never returns librec's handler), calls back the action it replaced
 * (librec's), as chaining handlers do: that is the crash. librec
 * captures (every work scope, the crash record) and the default action
 * kills the process by SIGSEGV.
 */
Test(recover, f7_handler_that_calls_librec_back_is_a_crash_captured_whole)
{
	const struct recover_want w = {
		.signo = SIGSEGV,
		.out = "own handler chains back\n",
		.file = { .calls = { { "side", 1 }, { "work", NR_LEAVES } } },
		.crash = "SIGSEGV",
	};

	run_and_check("chainback", &w);
}
