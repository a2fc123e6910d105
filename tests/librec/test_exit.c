/* SPDX-License-Identifier: MIT */
/*
 * test_exit.c - a traced process that ends with _exit() or _Exit() (finding
 * F23; rec(3), EXIT, FORK AND CRASH, "Exit"; README, "What librec
 * guarantees"): from ordinary code its recording ends as at exit(), every
 * thread's events in the file and its end marker, also in a child after a
 * threaded process's fork() (Python's multiprocessing workers, a server's
 * children) and with the static librectrace.a; the parent's recording is
 * unaffected. From a signal handler, or a thread that blocks signals, the
 * file stays as after a kill (what the writer wrote, no end marker); a
 * vfork() child's _exit() touches nothing; a writer that cannot finish (an
 * output that takes nothing) is waited for 2 s, never more. The program is
 * prog_exit.c, run as a child; its paths come from meson. Under ASan the
 * tests that do not fork run the librectrace.a build (the sanitizer's
 * _exit() stands before librectrace.so's); those that fork skip.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "suite.h"
#include "testutil.h"
#include "trace_read.h"
#include "under_asan.h"

TU_TMPDIR_SUITE(exit, dir, "rec_exit", .timeout = 120);

/* dir/ex-PID.zst */
static const char *file_of(int pid)
{
	static char bufs[2][TU_PATH_MAX];
	static unsigned k;
	char name[64];

	snprintf(name, sizeof(name), "ex-%d.zst", pid);
	return tu_join(bufs[k++ % 2], dir, name);
}

/* The file is whole and ended cleanly (tr_check()), pid's, with these scopes. */
static void check_clean(const char *path, int pid, const char *name, uint64_t calls,
			const char *name2, uint64_t calls2)
{
	struct tr_want want = { .pid = (uint32_t)pid,
				.calls = { { name, calls }, { name2, calls2 } } };
	char why[600];

	cr_assert_eq(tr_check(path, &want, NULL, why, sizeof(why)), 0, "%s: %s", path, why);
}

/* The parent's own recording: 500 `parent` scopes, whole and ended. */
static void check_parent(int pid)
{
	check_clean(file_of(pid), pid, "parent", 500, NULL, 0);
}

/* The file as after a kill: readable, every event rec_flush() wrote, no end marker. */
static void check_not_ended(const char *path, uint64_t nr_child)
{
	struct tr_trace tr;

	cr_assert_eq(tr_load(path, &tr), 0, "%s unreadable", path);
	cr_assert(!tr.clean, "%s has an end marker", path);
	cr_assert_eq(tr_calls(&tr, "child"), nr_child);
	cr_assert_eq(tr.nr_corrupt, 0);
	tr_free(&tr);
}

/*
 * Runs prog MODE, which forks (skipped under ASan), with
 * REC_OUTPUT=dir/ex-%p.zst; checks its output and the parent's own
 * recording (check_parent()). Return: the child's pid, whose file the test
 * checks.
 */
static int run_forked(const char *prog, const char *mode)
{
	char output[TU_PATH_MAX + 32];
	const char *argv[] = { tu_env(prog), mode, NULL };
	const char *extra[] = { output, NULL };
	struct tu_child c;
	int parent, child;

	skip_fork_under_asan();
	snprintf(output, sizeof(output), "REC_OUTPUT=%s/ex-%%p.zst", dir);
	tu_run_child(argv, extra, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s%s", c.status, c.out, c.err);
	cr_assert_eq(sscanf(c.out, "parent %d child %d", &parent, &child), 2, "%s", c.out);
	cr_assert_str_eq(c.err, "");
	check_parent(parent);
	return child;
}

static void child_ends_cleanly(const char *prog, const char *mode)
{
	int child = run_forked(prog, mode);

	check_clean(file_of(child), child, "child", 1000, "helper", 500);
}

Test(exit, F23_a_forked_child_that_calls__exit_leaves_its_whole_recording)
{
	child_ends_cleanly("PROG_EXIT", "exit");
}

Test(exit, F23_a_forked_child_that_calls__Exit_leaves_its_whole_recording)
{
	child_ends_cleanly("PROG_EXIT", "Exit");
}

/* librectrace.a stands before _exit() as librectrace.so does. */
Test(exit, F23_static_a_forked_child_that_calls__exit_leaves_its_whole_recording)
{
	child_ends_cleanly("PROG_EXIT_STATIC", "exit");
}

/*
 * Under ASan its runtime's _exit() stands before librectrace.so's and calls
 * glibc's (README says so): what these tests show needs librectrace.a's
 * there, which the program's own call reaches first.
 */
static const char *shared_or_static(void)
{
#ifdef UNDER_ASAN
	return "PROG_EXIT_STATIC";
#else
	return "PROG_EXIT";
#endif
}

/* Without a fork: the recording's own process. */
static void alone_ends_its_file(const char *prog)
{
	char output[TU_PATH_MAX + 32];
	const char *argv[] = { tu_env(prog), "alone", NULL };
	const char *extra[] = { output, NULL };
	struct tu_child c;

	snprintf(output, sizeof(output), "REC_OUTPUT=%s", file_of(0));
	tu_run_child(argv, extra, 60000, 0, &c);
	cr_assert_eq(c.status, 7, "status %d: %s", c.status, c.err);
	cr_assert_str_eq(c.err, "");
	check_clean(file_of(0), 0, "child", 1000, NULL, 0);
}

Test(exit, F23__exit_in_the_recording_process_ends_its_file)
{
	alone_ends_its_file(shared_or_static());
}

Test(exit, F23_static__exit_in_the_recording_process_ends_its_file)
{
	alone_ends_its_file("PROG_EXIT_STATIC");
}

/*
 * Four threads call _exit() at once (or one exit(), three _exit()): the
 * first ends the recording, the others wait for that end rather than end
 * the process in its middle (finding F31: the file had no end marker and
 * none of the events, every time). Three runs: on the old librec one
 * rarely passes.
 */
static void racers_end_the_file(const char *mode)
{
	char output[TU_PATH_MAX + 32];
	const char *argv[] = { tu_env(shared_or_static()), mode, NULL };
	const char *extra[] = { output, NULL };
	struct tu_child c;

	snprintf(output, sizeof(output), "REC_OUTPUT=%s", file_of(0));
	for (int run = 0; run < 3; run++) {
		tu_run_child(argv, extra, 60000, 0, &c);
		cr_assert_eq(c.status, 7, "run %d: status %d: %s", run, c.status, c.err);
		cr_assert_str_eq(c.err, "", "run %d", run);
		check_clean(file_of(0), 0, "child", 1000, "helper", 1000);
	}
}

Test(exit, F31_threads_that_call__exit_together_leave_the_whole_file)
{
	racers_end_the_file("race");
}

Test(exit, F31__exit_while_another_thread_runs_exit_leaves_the_whole_file)
{
	racers_end_the_file("exitrace");
}

/*
 * _exit() on a thread that records nothing while another thread's first
 * probe is starting the recording (its file created, the ring pool being
 * faulted in): the start is waited for and the recording ended (finding
 * F34: the file was left empty, 0 bytes, 10 runs in 10). How many of the
 * 1000 scopes were recorded by then varies; the file is whole and ended.
 */
Test(exit, F34__exit_while_another_thread_starts_the_recording_leaves_an_ended_file)
{
	char output[TU_PATH_MAX + 32];
	const char *argv[] = { tu_env(shared_or_static()), "starting", NULL };
	const char *extra[] = { output, NULL };
	struct tu_child c;

#ifdef UNDER_ASAN
	/* ASan's deadly-signal handlers have SA_NODEFER and an empty mask, which
	 * _exit() takes for a handler that may be running (README) until
	 * librec's crash handler replaces them, at the end of the start this
	 * _exit() comes in the middle of. */
	cr_skip_test("ASan's SA_NODEFER handlers are there until the start ends");
#endif
	snprintf(output, sizeof(output), "REC_OUTPUT=%s", file_of(0));
	for (int run = 0; run < 3; run++) {
		struct tr_trace tr;

		unlink(file_of(0));
		tu_run_child(argv, extra, 60000, 0, &c);
		cr_assert_eq(c.status, 7, "run %d: status %d: %s", run, c.status, c.err);
		cr_assert_str_eq(c.err, "", "run %d", run);
		cr_assert_eq(tr_load(file_of(0), &tr), 0, "run %d: %s unreadable", run, file_of(0));
		cr_assert(tr.clean, "run %d: %s has no end marker", run, file_of(0));
		cr_assert_eq(tr.nr_corrupt, 0);
		cr_assert_leq(tr_calls(&tr, "helper"), 1000);
		tr_free(&tr);
	}
}

/* From a signal handler: no end (librec cannot know what the handler interrupted). */
Test(exit, F23__exit_in_a_signal_handler_leaves_the_file_as_after_a_kill)
{
	int child = run_forked("PROG_EXIT", "handler");

	check_not_ended(file_of(child), 1000);
}

/* A thread that blocks a signal is taken for a handler: as before. */
Test(exit, F23__exit_with_a_signal_blocked_leaves_the_file_as_after_a_kill)
{
	int child = run_forked("PROG_EXIT", "masked");

	check_not_ended(file_of(child), 1000);
}

/* A vfork() child's _exit() touches nothing: its parent's recording goes on. */
Test(exit, F23_a_vfork_child_s__exit_leaves_the_recording_alone)
{
	int child = run_forked("PROG_EXIT", "vfork");

	check_clean(file_of(child), child, "child", 1500, NULL, 0);
}

/* A child that never recorded: its parked writer never started, nothing to end, no file. */
Test(exit, F23_a_forked_child_that_recorded_nothing_leaves_no_file)
{
	int child = run_forked("PROG_EXIT", "idle");

	cr_assert_eq(access(file_of(child), F_OK), -1, "%s exists", file_of(child));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * An output that takes nothing: a FIFO whose reader never reads, already
 * full. The writer waits 10 s for it before it gives up (exit() waits that
 * long); _exit() waits 2 s, then the process ends as after a kill, and one
 * line says so.
 */
Test(exit, F23__exit_waits_a_bounded_time_for_a_writer_that_cannot_finish)
{
	char output[TU_PATH_MAX + 32], junk[4096], fifo_path[TU_PATH_MAX], line[TU_PATH_MAX + 160];
	const char *fifo = tu_join(fifo_path, dir, "stalled");
	const char *argv[] = { tu_env(shared_or_static()), "alone", NULL };
	const char *extra[] = { output, NULL };
	struct tu_child c;
	int rfd, wfd;
	double t0, took;

	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	wfd = open(fifo, O_WRONLY | O_NONBLOCK);
	cr_assert(rfd >= 0 && wfd >= 0);
	memset(junk, 'x', sizeof(junk));
	while (write(wfd, junk, sizeof(junk)) > 0)
		;
	cr_assert_eq(errno, EAGAIN);
	snprintf(output, sizeof(output), "REC_OUTPUT=%s", fifo);
	t0 = now_s();
	tu_run_child(argv, extra, 60000, 0, &c);
	took = now_s() - t0;
	cr_assert_eq(c.status, 7, "status %d: %s", c.status, c.err);
	snprintf(line, sizeof(line),
		 "rec: _exit(): %s not ended: the writer did not finish within 2 s; the file is as "
		 "after a kill, without its end marker\n",
		 fifo);
	cr_assert_str_eq(c.err, line);
	cr_assert(took >= 2.0 && took < 9.5, "_exit() took %.2f s", took);
	close(wfd);
	close(rfd);
}
