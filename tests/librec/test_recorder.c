/* SPDX-License-Identifier: MIT */
/*
 * test_recorder.c - librec end to end inside the test process: instrumented
 * code runs, the trace is read back through format/ (trace_read.c), and the
 * counts must be exact: calls, drops (calls + dropped = executed), threads,
 * names, nesting, clean end. Each Test runs in its own process, so each has
 * its own recorder and output file.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <pthread.h>
#include <rec.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nested_scopes.h"
#include "trace_read.h"
#include "under_asan.h"

static char out[256];

/* Points REC_OUTPUT at a fresh file of this test process. */
static void use_output(const char *what)
{
	snprintf(out, sizeof(out), "/tmp/rec_test_%d_%s.zst", (int)getpid(), what);
	unlink(out);
	setenv("REC_OUTPUT", out, 1);
}

static void cleanup(void)
{
	if (out[0])
		unlink(out);
}

TestSuite(recorder, .fini = cleanup, .timeout = 60);

static void load(struct tr_trace *tr)
{
	cr_assert_eq(tr_load(out, tr), 0, "cannot read %s", out);
}

/* ------------------------------------------------------------------ */

#define NR_OUTER 5000

static void *nested_worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	rec_thread_name(name);
	for (int i = 0; i < NR_OUTER; i++)
		outer();
	return NULL;
}

Test(recorder, four_threads_of_nested_calls_give_exact_counts_and_names)
{
	pthread_t th[4];
	struct tr_trace tr;

	use_output("nested");
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, nested_worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(rec_stop(), 0);

	load(&tr);
	cr_assert(tr.clean);
	cr_assert_not(tr.truncated);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr_calls(&tr, "outer"), 4 * NR_OUTER);
	cr_assert_eq(tr_calls(&tr, "middle"), 4 * NR_OUTER);
	cr_assert_eq(tr_calls(&tr, "block"), 4 * NR_OUTER);
	cr_assert_eq(tr_calls(&tr, "leaf"), 4 * 3 * NR_OUTER);
	cr_assert_eq(tr_calls(&tr, "recurse"), 4 * 5 * NR_OUTER);
	cr_assert_eq(tr.nr_threads, 4);
	for (int i = 0; i < 4; i++) {
		char name[16];
		const struct tr_thread *t;

		snprintf(name, sizeof(name), "worker-%d", i);
		t = tr_thread_named(&tr, name);
		cr_assert_not_null(t, "no thread named %s", name);
		cr_assert_eq(t->nr_events, 2 * (1 + 1 + 1 + 3 + 5) * NR_OUTER);
		cr_assert(t->ended, "%s has no THREAD_END", name);
		cr_assert_eq(t->nr_unclosed, 0);
		cr_assert_neq(t->os_tid, 0);
		cr_assert_eq(t->max_depth, 6); /* outer > recurse x5 */
	}
	cr_assert_eq(tr.end_nr_events, tr.nr_events);
	cr_assert_geq(tr.nr_syncs, 2);
	tr_free(&tr);
}

Test(recorder, exit_is_recorded_on_every_way_out_of_a_scope)
{
	struct tr_trace tr;
	int n = 0;

	use_output("ways_out");
	for (int i = 0; i < 10; i++) {
		TRACE_SCOPE_NAMED("loop_body");
		if (i == 3)
			continue;
		if (i == 8)
			break;
		n++;
	}
	for (int i = 0; i < 3; i++) {
		TRACE_SCOPE_NAMED("goto_body");
		if (i == 1)
			goto done;
	}
done:
	cr_assert_eq(n, 7);
	rec_stop();
	load(&tr);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr_calls(&tr, "loop_body"), 9);
	cr_assert_eq(tr_calls(&tr, "goto_body"), 2);
	cr_assert_eq(tr.threads[0].nr_unclosed, 0);
	tr_free(&tr);
}

Test(recorder, thread_named_before_first_probe_and_renamed)
{
	struct tr_trace tr;

	use_output("names");
	cr_assert_eq(rec_thread_name("first"), 0);
	leaf();
	cr_assert_eq(rec_thread_name("second"), 0);
	leaf();
	cr_assert_eq(rec_thread_name(NULL), -EINVAL);
	rec_stop();
	load(&tr);
	cr_assert_eq(tr.nr_threads, 1);
	cr_assert_str_eq(tr.threads[0].name, "second");
	cr_assert_eq(tr.threads[0].os_tid, (uint32_t)gettid());
	cr_assert_eq(tr.pid, (uint32_t)getpid());
	tr_free(&tr);
}

/* ------------------------------------------------------------------ */
/* Overflow: a ring far too small for a tight loop. */

#define NR_TIGHT 2000000

static void run_tight_loop(void)
{
	for (int i = 0; i < NR_TIGHT / 4; i++)
		middle(); /* 3 scopes, and one more: */
	for (int i = 0; i < NR_TIGHT / 4; i++)
		leaf();
}

Test(recorder, drop_mode_counts_whole_scopes_so_calls_plus_dropped_is_exact)
{
	struct tr_trace tr;

	use_output("drop");
	setenv("REC_BUFFER", "4K", 1);
	setenv("REC_OVERFLOW", "drop", 1);
	run_tight_loop();
	rec_stop();
	load(&tr);
	uint64_t calls = tr_calls(&tr, "middle") + tr_calls(&tr, "leaf");
	cr_assert_gt(tr_dropped(&tr), 0, "a 4K ring should overflow in a tight loop");
	cr_assert_eq(calls + tr_dropped(&tr), (uint64_t)NR_TIGHT);
	cr_assert_eq(tr.end_nr_dropped, tr_dropped(&tr));
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr.threads[0].nr_unclosed, 0);
	/* Every recorded enter has its exit: events are exactly 2 per call. */
	cr_assert_eq(tr.nr_events, 2 * calls);
	tr_free(&tr);
}

/* 2 M scopes through a 4 KiB ring: each lap waits for the writer. Under
 * REC_COUNTERS (recorder_counters) every event also reads its counters
 * with system calls: 30 s on a loaded 2-core machine, hence the timeout. */
Test(recorder, block_mode_waits_for_room_and_loses_nothing, .timeout = 240)
{
	struct tr_trace tr;

	use_output("block");
	setenv("REC_BUFFER", "4K", 1);
	setenv("REC_OVERFLOW", "block", 1);
	setenv("REC_FLUSH_MS", "5", 1);
	run_tight_loop();
	rec_stop();
	load(&tr);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert_eq(tr_calls(&tr, "middle"), NR_TIGHT / 4);
	cr_assert_eq(tr_calls(&tr, "leaf"), NR_TIGHT / 4 * 2 + NR_TIGHT / 4);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

/*
 * REC_MIN_NS through a ring drained in turns (writer.c, drain_thread()): a
 * turn that starts at a young enter, all of whose children were filtered,
 * must still consume events. Else the writer reads that turn again and
 * again until the enter is REC_MIN_NS old, and a producer in block mode
 * waits that long. Here 20 s: the loop must finish long before. The
 * children are filtered; the long-lived scope, with more than the hold-back
 * limit after its enter, is written (README, REC_MIN_NS), nothing dropped.
 */
Test(recorder, min_ns_hold_back_does_not_stall_a_blocked_producer)
{
	struct tr_trace tr;
	struct timespec t0, t1;

	use_output("minns_turns");
	unsetenv("REC_COUNTERS"); /* recorder_counters: counted threads are not filtered */
	setenv("REC_BUFFER", "64K", 1);
	setenv("REC_OVERFLOW", "block", 1);
	setenv("REC_MIN_NS", "20000000000", 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	{
		TRACE_SCOPE_NAMED("long_lived");
		for (int i = 0; i < 20000; i++)
			leaf();
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 10, "the producer waited for the enter to age");
	load(&tr);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert_eq(tr_calls(&tr, "leaf"), 0);
	cr_assert_eq(tr_calls(&tr, "long_lived"), 1);
	cr_assert_eq(tr.nr_events, 2);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

/* ------------------------------------------------------------------ */

static void *short_lived(void *arg)
{
	(void)arg;
	middle();
	return NULL;
}

Test(recorder, two_thousand_short_lived_threads_are_all_kept, .timeout = 120)
{
	struct tr_trace tr;
	uint32_t ended = 0;

	use_output("churn");
	setenv("REC_BUFFER", "64K", 1);
	for (int i = 0; i < 2000; i++) {
		pthread_t th;

		cr_assert_eq(pthread_create(&th, NULL, short_lived, NULL), 0);
		pthread_join(th, NULL);
	}
	rec_stop();
	load(&tr);
	cr_assert_eq(tr.nr_threads, 2000);
	cr_assert_eq(tr_calls(&tr, "middle"), 2000);
	cr_assert_eq(tr_calls(&tr, "leaf"), 4000);
	cr_assert_eq(tr_dropped(&tr), 0);
	for (uint32_t i = 0; i < tr.nr_threads; i++) {
		cr_assert_eq(tr.threads[i].nr_events, 6);
		ended += tr.threads[i].ended;
	}
	/* Each exited thread's ring was drained and its end written. */
	cr_assert_eq(ended, 2000);
	tr_free(&tr);
}

/* ------------------------------------------------------------------ */

Test(recorder, rec_flush_puts_every_earlier_event_in_the_file)
{
	struct tr_trace tr;

	use_output("flush");
	setenv("REC_FLUSH_MS", "100000", 1);
	for (int i = 0; i < 1000; i++)
		leaf();
	cr_assert_eq(rec_flush(), 0);
	/* Still recording: read what is on disk now. */
	load(&tr);
	cr_assert_not(tr.clean);
	cr_assert_eq(tr_calls(&tr, "leaf"), 1000);
	tr_free(&tr);
	rec_stop();
}

Test(recorder, stop_then_start_records_only_while_running)
{
	struct rec_config cfg = REC_CONFIG_INIT;
	struct tr_trace tr;

	use_output("restart");
	cfg.output = out;
	cr_assert_eq(rec_start(&cfg), 0);
	cr_assert_eq(rec_start(&cfg), -EALREADY);
	leaf();
	cr_assert_eq(rec_stop(), 0);
	leaf(); /* not recorded, and does not restart by itself */
	cr_assert_eq(rec_stop(), 0);
	load(&tr);
	cr_assert_eq(tr_calls(&tr, "leaf"), 1);
	cr_assert(tr.clean);
	tr_free(&tr);

	cr_assert_eq(rec_start(&cfg), 0); /* a new file */
	leaf();
	leaf();
	cr_assert_eq(rec_stop(), 0);
	load(&tr);
	cr_assert_eq(tr_calls(&tr, "leaf"), 2);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

Test(recorder, config_size_zero_is_refused)
{
	struct rec_config cfg = { 0 };

	use_output("badcfg");
	cr_redirect_stderr();
	cr_assert_eq(rec_start(&cfg), -EINVAL);
}

Test(recorder, rec_disable_env_records_nothing_and_writes_no_file)
{
	struct stat st;

	use_output("disabled");
	setenv("REC_DISABLE", "1", 1);
	leaf();
	cr_assert_eq(rec_flush(), 0);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(stat(out, &st), -1);
	cr_assert_eq(errno, ENOENT);
}

Test(recorder, monotonic_clock_when_asked)
{
	struct tr_trace tr;

	use_output("mono");
	setenv("REC_CLOCK", "monotonic", 1);
	middle();
	rec_stop();
	load(&tr);
	cr_assert_eq(tr.clock, 2);
	cr_assert_eq(tr.ticks_per_second, 1000000000ull);
	cr_assert_eq(tr_calls(&tr, "leaf"), 2);
	tr_free(&tr);
}

Test(recorder, bad_environment_values_are_refused_with_one_line)
{
	use_output("badenv");
	setenv("REC_OVERFLOW", "sometimes", 1);
	cr_redirect_stderr();
	leaf(); /* lazy start fails: untraced, the program carries on */
	cr_assert_eq(rec_start(NULL), -EINVAL);
	fflush(stderr);
	cr_assert_stderr_eq_str("rec: bad REC_OVERFLOW 'sometimes' (want drop or block); tracing disabled\n"
				"rec: bad REC_OVERFLOW 'sometimes' (want drop or block); tracing disabled\n");
}

/* ------------------------------------------------------------------ */
/* Host safety. */

Test(recorder, unwritable_output_gives_one_line_and_the_program_carries_on)
{
	struct stat st;

	snprintf(out, sizeof(out), "/nonexistent-dir-%d/trace.zst", (int)getpid());
	setenv("REC_OUTPUT", out, 1);
	cr_redirect_stderr();
	for (int i = 0; i < 1000; i++)
		middle();
	cr_assert_eq(rec_flush(), 0);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(stat(out, &st), -1);
	fflush(stderr);
	char expect[512];
	snprintf(expect, sizeof(expect),
		 "rec: cannot open %s: No such file or directory; tracing disabled\n", out);
	cr_assert_stderr_eq_str(expect);
	out[0] = 0;
}

Test(recorder, disk_full_stops_tracing_with_one_line_and_the_program_carries_on)
{
	long sum = 0;

	/* Every write to /dev/full fails with ENOSPC. */
	setenv("REC_OUTPUT", "/dev/full", 1);
	cr_redirect_stderr();
	for (int i = 0; i < 100000; i++)
		sum += (long)recurse(2);
	cr_assert_eq(rec_flush(), -EIO);
	for (int i = 0; i < 100000; i++)
		sum += (long)recurse(2); /* untraced now, and harmless */
	cr_assert_eq(rec_stop(), -EIO);
	cr_assert_eq(sum, 400000);
	fflush(stderr);
	cr_assert_stderr_eq_str("rec: cannot write /dev/full: No space left on device; tracing stopped\n");
}

Test(recorder, file_size_limit_stops_tracing_with_one_line_and_keeps_what_was_written)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };
	struct tr_trace tr;

	use_output("fsize");
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	setenv("REC_FLUSH_MS", "1", 1);
	cr_redirect_stderr();
	for (int i = 0; i < 300; i++) {
		for (int j = 0; j < 10000; j++)
			recurse(3);
		rec_flush();
	}
	cr_assert_eq(rec_stop(), -EIO);
	fflush(stderr);
	char expect[512];
	snprintf(expect, sizeof(expect), "rec: cannot write %s: File too large; tracing stopped\n",
		 out);
	cr_assert_stderr_eq_str(expect);
	/* The frames written before the limit are intact. */
	load(&tr);
	cr_assert_gt(tr_calls(&tr, "recurse"), 0);
	cr_assert_not(tr.clean);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

Test(recorder, kill_9_leaves_a_readable_trace_with_everything_flushed)
{
	int pipefd[2];
	pid_t pid;
	char c;
	struct tr_trace tr;

	snprintf(out, sizeof(out), "/tmp/rec_test_%d_kill9_%%p.zst", (int)getpid());
	setenv("REC_OUTPUT", out, 1);
	setenv("REC_FLUSH_MS", "10", 1);
	cr_assert_eq(pipe(pipefd), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		for (int i = 0; i < 100000; i++)
			middle();
		rec_flush();
		cr_assert_eq(write(pipefd[1], "x", 1), 1);
		for (;;)
			middle(); /* killed in here */
	}
	cr_assert_eq(read(pipefd[0], &c, 1), 1);
	usleep(50 * 1000); /* let a few more frames land mid-loop */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(out, sizeof(out), "/tmp/rec_test_%d_kill9_%d.zst", (int)getpid(), (int)pid);
	load(&tr);
	cr_assert_not(tr.clean);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert_geq(tr_calls(&tr, "middle"), 100000);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

Test(recorder, fork_child_without_pid_in_output_records_nothing_and_parent_file_is_intact)
{
	struct tr_trace tr;
	pid_t pid;
	int status;

	skip_fork_under_asan();
	use_output("forkparent");
	leaf(); /* the parent is recording */
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		for (int i = 0; i < 1000; i++)
			middle();
		exit(rec_flush() == 0 && rec_stop() == 0 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	leaf();
	rec_stop();
	load(&tr);
	cr_assert(tr.clean);
	cr_assert_eq(tr_calls(&tr, "leaf"), 2);
	cr_assert_eq(tr_calls(&tr, "middle"), 0);
	cr_assert_eq(tr.nr_threads, 1);
	tr_free(&tr);
}

Test(recorder, fork_child_with_pid_in_output_records_to_its_own_file)
{
	struct tr_trace tr;
	char pattern[256], child_out[256];
	pid_t pid;
	int status;

	skip_fork_under_asan();
	snprintf(pattern, sizeof(pattern), "/tmp/rec_test_%d_fork_%%p.zst", (int)getpid());
	setenv("REC_OUTPUT", pattern, 1);
	snprintf(out, sizeof(out), "/tmp/rec_test_%d_fork_%d.zst", (int)getpid(), (int)getpid());
	TRACE_SCOPE_NAMED("open_across_fork");
	leaf();
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		for (int i = 0; i < 1000; i++)
			middle();
		exit(0); /* the scope open across fork is not recorded by the child */
	}
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(child_out, sizeof(child_out), "/tmp/rec_test_%d_fork_%d.zst", (int)getpid(),
		 (int)pid);
	cr_assert_eq(tr_load(child_out, &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr.pid, (uint32_t)pid);
	cr_assert_eq(tr_calls(&tr, "middle"), 1000);
	cr_assert_eq(tr_calls(&tr, "leaf"), 2000);
	cr_assert_eq(tr_calls(&tr, "open_across_fork"), 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr.threads[0].nr_unclosed, 0);
	tr_free(&tr);
	unlink(child_out);

	leaf();
	rec_stop();
	load(&tr);
	cr_assert_eq(tr_calls(&tr, "leaf"), 2);
	cr_assert_eq(tr_calls(&tr, "middle"), 0);
	tr_free(&tr);
}

/* ------------------------------------------------------------------ */
/* Signals: a handler probing at a high rate while the thread probes. */

static volatile sig_atomic_t nr_alarms;

static void handler_work(void)
{
	TRACE_SCOPE();
	__asm__ volatile("" ::: "memory");
}

static void on_alarm(int sig)
{
	(void)sig;
	handler_work();
	nr_alarms++;
}

Test(recorder, probes_in_a_signal_handler_corrupt_nothing)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct tr_trace tr;
	long nr_main = 0;

	use_output("signal");
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (nr_alarms < 20000) {
		middle();
		nr_main++;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	rec_stop();
	load(&tr);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr.threads[0].nr_unclosed, 0);
	/* Every scope executed is either recorded or counted as dropped. */
	cr_assert_eq(tr_calls(&tr, "middle") + tr_calls(&tr, "leaf") +
			     tr_calls(&tr, "handler_work") + tr_dropped(&tr),
		     (uint64_t)(3 * nr_main + nr_alarms), "middle %lu leaf %lu handler %lu dropped %lu; main %ld alarms %d",
		     tr_calls(&tr, "middle"), tr_calls(&tr, "leaf"), tr_calls(&tr, "handler_work"),
		     tr_dropped(&tr), nr_main, (int)nr_alarms);
	cr_assert_gt(tr_calls(&tr, "handler_work"), 0);
	tr_free(&tr);
}
