/* SPDX-License-Identifier: MIT */
/*
 * prog_flight.c - an instrumented program for test_flight.c: runs under
 * REC_MODE=flight (the test sets the environment) and makes one kind of
 * trigger, printing on stdout what the test cannot see in the files (return
 * codes, a child's pid). MODE:
 *   window MS   inside a "span" scope, 1000 "old" scopes and a pause of
 *               2 * MS + 100 ms; then 1000 "recent" scopes inside an "outer"
 *               scope, and rec_snapshot() before "outer" ends
 *   recent      "tick" scopes for 1.5 s without a pause, then rec_snapshot():
 *               prints its code and the longest time between two ticks, ns
 *   after       100 "recent" scopes, rec_snapshot(), 100 "later" ones, a
 *               pause of 600 ms, 100 "late" ones (REC_AFTER=300ms)
 *   api         rec_snapshot() twice in a row: prints both return codes
 *   signal      scopes, then raise(SIGUSR2) (REC_SNAPSHOT_SIGNAL=USR2)
 *   trigger     100 short "slow" scopes, one of 100 ms, more scopes after it
 *   burst MS    100 rec_snapshot() in a row, then after MS ms one more:
 *               prints how many returned 0, -EBUSY and the last one's code
 *   max         10 times: rec_snapshot(), rec_flush(), a 5 ms pause; prints
 *               the return codes (REC_WINDOW=1ms, REC_SNAPSHOT_MAX=3)
 *   restart     rec_snapshot(), rec_stop(), rec_start(), rec_snapshot(): prints
 *               both return codes
 *   fork        scopes; a child records its own scopes and snapshot; the
 *               parent waits for it, then takes its own; prints the child's pid
 *   reenter     rec_snapshot() in a loop while another thread sends SIGUSR1
 *               every 20 us, whose handler calls rec_snapshot() too, until a
 *               handler landed inside the main thread's call (-EDEADLK) and
 *               at least 20000 calls were made, or 20 s: prints how many
 *               handler calls returned -EDEADLK, then how many calls (handler
 *               or main) returned anything but 0, -EBUSY, -ENOSPC, -EDEADLK
 *   abort       1000 "recent" scopes, rec_snapshot("invariant"), abort() at
 *               once: the crash ends the snapshot the trigger asked for,
 *               which the writer may not have begun (finding F33)
 * Every mode ends with rec_flush() (the snapshots are written) and exit 0,
 * but abort.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rec.h"

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile unsigned sink;

__attribute__((noinline)) static void old(void)
{
	TRACE_SCOPE();
	sink++;
}

__attribute__((noinline)) static void recent(void)
{
	TRACE_SCOPE();
	sink++;
}

__attribute__((noinline)) static void tick(void)
{
	TRACE_SCOPE();
	for (int i = 0; i < 2000; i++)
		sink++;
}

__attribute__((noinline)) static void slow(long ms)
{
	TRACE_SCOPE();
	if (ms)
		pause_ms(ms);
	sink++;
}

__attribute__((noinline)) static void child_work(void)
{
	TRACE_SCOPE();
	sink++;
}

static int mode_window(long ms)
{
	{
		TRACE_SCOPE_NAMED("span"); /* entered before the window, left inside it */
		for (int i = 0; i < 1000; i++)
			old();
		pause_ms(2 * ms + 100);
	}
	{
		TRACE_SCOPE_NAMED("outer");
		for (int i = 0; i < 1000; i++)
			recent();
		printf("%d\n", rec_snapshot("window test"));
	}
	return rec_flush();
}

static int mode_recent(void)
{
	uint64_t t0 = now_ns(), prev = t0, gap = 0, now;
	int rc;

	/* The longest time between two ticks' starts (a preempted thread). */
	while ((now = now_ns()) - t0 < 1500000000ull) {
		if (now - prev > gap)
			gap = now - prev;
		prev = now;
		tick();
	}
	if ((now = now_ns()) - prev > gap)
		gap = now - prev; /* the last tick to the trigger, too */
	rc = rec_snapshot("recent");
	printf("%d %llu\n", rc, (unsigned long long)gap);
	return rec_flush();
}

__attribute__((noinline)) static void later(void)
{
	TRACE_SCOPE();
	sink++;
}

__attribute__((noinline)) static void late(void)
{
	TRACE_SCOPE();
	sink++;
}

static int mode_after(void)
{
	int rc;

	for (int i = 0; i < 100; i++)
		recent();
	rc = rec_snapshot("after");
	for (int i = 0; i < 100; i++)
		later();
	pause_ms(600);
	for (int i = 0; i < 100; i++)
		late();
	printf("%d\n", rc);
	return rec_flush();
}

static int mode_api(void)
{
	int a, b;

	for (int i = 0; i < 100; i++)
		recent();
	a = rec_snapshot("first");
	b = rec_snapshot("second");
	printf("%d %d\n", a, b);
	return rec_flush();
}

static int mode_signal(void)
{
	for (int i = 0; i < 100; i++)
		recent();
	raise(SIGUSR2);
	for (int i = 0; i < 100; i++)
		old();
	return rec_flush();
}

static int mode_trigger(void)
{
	for (int i = 0; i < 100; i++)
		slow(0);
	slow(100);
	for (int i = 0; i < 100; i++)
		recent();
	return rec_flush();
}

static int mode_burst(long ms)
{
	int ok = 0, busy = 0, other = 0, last;

	for (int i = 0; i < 100; i++) {
		int rc = rec_snapshot("burst");

		ok += rc == 0;
		busy += rc == -EBUSY;
		other += rc != 0 && rc != -EBUSY;
	}
	rec_flush();
	pause_ms(ms);
	last = rec_snapshot("after the burst");
	printf("%d %d %d %d\n", ok, busy, other, last);
	return rec_flush();
}

static int mode_max(void)
{
	for (int i = 0; i < 10; i++) {
		recent();
		printf("%s%d", i ? " " : "", rec_snapshot("max"));
		rec_flush();
		pause_ms(5);
	}
	printf("\n");
	return rec_flush();
}

static int mode_restart(void)
{
	int a, b;

	recent();
	a = rec_snapshot("before the restart");
	rec_stop();
	rec_start(NULL);
	later();
	b = rec_snapshot("after the restart");
	printf("%d %d\n", a, b);
	return rec_flush();
}

static int mode_fork(void)
{
	pid_t pid;
	int status;

	for (int i = 0; i < 100; i++)
		old();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 50; i++)
			child_work();
		int rc = rec_snapshot("child");
		rec_flush();
		_exit(rc == 0 ? 0 : 3);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 2;
	for (int i = 0; i < 100; i++)
		recent();
	printf("%d %d\n", (int)pid, rec_snapshot("parent"));
	return rec_flush();
}

static volatile int nr_deadlk, nr_odd, stop_sending;
static pthread_t main_thread;

static void count_rc(int rc, bool from_handler)
{
	if (rc == -EDEADLK && from_handler)
		nr_deadlk++;
	else if (rc != 0 && rc != -EBUSY && rc != -ENOSPC)
		nr_odd++;
}

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	count_rc(rec_snapshot("from a handler"), true);
	errno = saved;
}

static void *sender(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_sending, __ATOMIC_RELAXED)) {
		pthread_kill(main_thread, SIGUSR1);
		usleep(20);
	}
	return NULL;
}

static int mode_reenter(void)
{
	struct sigaction sa;
	pthread_t th;
	uint64_t t0 = now_ns();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	recent(); /* recording runs before the signals come */
	main_thread = pthread_self();
	if (pthread_create(&th, NULL, sender, NULL) != 0)
		return 1;
	for (long i = 0; (i < 20000 || !nr_deadlk) && now_ns() - t0 < 20000000000ull; i++)
		count_rc(rec_snapshot("main"), false);
	__atomic_store_n(&stop_sending, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	printf("%d %d\n", nr_deadlk, nr_odd);
	return rec_flush();
}

static int mode_abort(void)
{
	for (int i = 0; i < 1000; i++)
		recent();
	rec_snapshot("invariant");
	abort();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long arg = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	int rc;

	if (!strcmp(mode, "window"))
		rc = mode_window(arg);
	else if (!strcmp(mode, "recent"))
		rc = mode_recent();
	else if (!strcmp(mode, "after"))
		rc = mode_after();
	else if (!strcmp(mode, "api"))
		rc = mode_api();
	else if (!strcmp(mode, "signal"))
		rc = mode_signal();
	else if (!strcmp(mode, "trigger"))
		rc = mode_trigger();
	else if (!strcmp(mode, "burst"))
		rc = mode_burst(arg);
	else if (!strcmp(mode, "max"))
		rc = mode_max();
	else if (!strcmp(mode, "restart"))
		rc = mode_restart();
	else if (!strcmp(mode, "fork"))
		rc = mode_fork();
	else if (!strcmp(mode, "reenter"))
		rc = mode_reenter();
	else if (!strcmp(mode, "abort"))
		rc = mode_abort();
	else {
		fprintf(stderr, "usage: prog_flight MODE [ARG]\n");
		return 2;
	}
	fflush(stdout);
	return rc ? 1 : 0;
}
