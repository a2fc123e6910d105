/* SPDX-License-Identifier: MIT */
/*
 * prog_exit.c - a traced program whose forked child ends with _exit()
 * (test_exit.c, finding F23; rec(3), "Exit"). Run with REC_OUTPUT holding
 * %p: the parent and the child each write their own file.
 *
 * The parent records 300 `parent` scopes, starts a thread that records
 * `busy` scopes until told to stop (so the fork is a threaded process's,
 * the thread maybe inside librec at the moment), forks, waits for the
 * child, then records 200 more `parent` scopes and returns from main().
 * The child (one thread after fork) records as MODE says, then ends:
 *   exit      1000 `child` scopes on its thread and 500 `helper` scopes on
 *             a thread it starts, which then waits, still running; _exit(7)
 *   Exit      the same, ended with _Exit(7)
 *   handler   1000 `child` scopes, rec_flush(), then raise(SIGUSR1), whose
 *             handler calls _exit(7) (a handler: the recording is not ended)
 *   masked    1000 `child` scopes, rec_flush(), then SIGUSR2 blocked (as a
 *             signalfd() program does) and _exit(7): taken for a handler
 *   vfork     1000 `child` scopes, then vfork(): the vfork child calls
 *             _exit(0) at once; then 500 more `child` scopes and _exit(7)
 *   idle      nothing recorded: _exit(7) at once
 * The parent prints "parent PID child PID" and exits 0 if the child exited
 * with status 7, else 3 (4: a thread or fork failed, 2: usage).
 * MODE alone: no fork; the process records 1000 `child` scopes and calls
 * _exit(7); alone0: the same with _exit(0).
 * MODE race (finding F31): no fork; 1000 `child` scopes, then 4 threads
 * record 250 `helper` scopes each and call _exit(7) at once (a barrier);
 * exitrace: the same, but the first of them calls exit(7).
 * MODE starting (finding F34): no fork; the main thread records nothing; a
 * thread records 1000 `helper` scopes, its first starting the recording;
 * the main thread calls _exit(7) as soon as the file REC_OUTPUT names
 * exists, while that start is still under way (the pool being faulted in).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <rec.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* static void name(void): one scope, which TRACE_SCOPE() names after its
 * function (a macro: a function cannot give each scope its own __func__). */
#define SCOPE_FN(name)                             \
	static void name(void)                     \
	{                                          \
		TRACE_SCOPE();                     \
		__asm__ volatile("" ::: "memory"); \
	}

SCOPE_FN(parent)
SCOPE_FN(busy)
SCOPE_FN(child)
SCOPE_FN(helper)

static volatile int stop_busy;

static void *busy_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_busy, __ATOMIC_RELAXED))
		busy();
	return NULL;
}

static volatile int helped;

static void *helper_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 500; i++)
		helper();
	__atomic_store_n(&helped, 1, __ATOMIC_RELEASE);
	for (;;)
		pause(); /* still running when _exit() ends every thread */
	return NULL;
}

static void on_usr1(int signo)
{
	(void)signo;
	_exit(7);
}

static void children(int n)
{
	for (int i = 0; i < n; i++)
		child();
}

static __attribute__((noreturn)) void run_child(const char *mode)
{
	pthread_t t;

	if (strcmp(mode, "idle") == 0)
		_exit(7); /* records nothing: its recording never started */
	children(1000);
	if (strcmp(mode, "exit") == 0 || strcmp(mode, "Exit") == 0) {
		if (pthread_create(&t, NULL, helper_main, NULL) != 0)
			_exit(4);
		while (!__atomic_load_n(&helped, __ATOMIC_ACQUIRE))
			usleep(1000);
		if (mode[0] == 'E')
			_Exit(7);
		_exit(7);
	}
	if (strcmp(mode, "handler") == 0) {
		signal(SIGUSR1, on_usr1);
		rec_flush();
		raise(SIGUSR1);
		_exit(4); /* not reached */
	}
	if (strcmp(mode, "masked") == 0) {
		sigset_t set;

		rec_flush();
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		sigprocmask(SIG_BLOCK, &set, NULL);
		_exit(7);
	}
	if (strcmp(mode, "vfork") == 0) {
		pid_t v = vfork();
		int st;

		if (v == 0)
			_exit(0);
		if (v < 0 || waitpid(v, &st, 0) != v || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			_exit(4);
		children(500);
		_exit(7);
	}
	_exit(2);
}

static pthread_barrier_t racing;

static void *racer_main(void *arg)
{
	for (int i = 0; i < 250; i++)
		helper();
	pthread_barrier_wait(&racing);
	if (arg)
		exit(7);
	_exit(7);
}

/* Four threads end the process together: exit() on the first if by_exit. */
static __attribute__((noreturn)) void race(int by_exit)
{
	pthread_t t;

	children(1000);
	pthread_barrier_init(&racing, NULL, 4);
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t, NULL, racer_main, (void *)(by_exit && i == 0 ? 1L : 0L)) != 0)
			_exit(4);
	for (;;)
		pause();
}

static void *starter_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		helper();
	for (;;)
		pause();
	return NULL;
}

/* _exit() while another thread starts the recording: as soon as its file exists. */
static __attribute__((noreturn)) void starting(void)
{
	const char *out = getenv("REC_OUTPUT");
	pthread_t t;

	if (!out || pthread_create(&t, NULL, starter_main, NULL) != 0)
		_exit(4);
	while (access(out, F_OK) != 0)
		;
	_exit(7);
}

int main(int argc, char **argv)
{
	pthread_t t;
	sigset_t none;
	pid_t pid;
	int st;

	if (argc != 2)
		return 2;
	/* A test runner's blocked signals are inherited across exec: none here. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (strcmp(argv[1], "starting") == 0)
		starting();
	if (strcmp(argv[1], "race") == 0 || strcmp(argv[1], "exitrace") == 0)
		race(argv[1][0] == 'e');
	if (strncmp(argv[1], "alone", 5) == 0) {
		children(1000);
		_exit(strcmp(argv[1], "alone0") == 0 ? 0 : 7);
	}
	for (int i = 0; i < 300; i++)
		parent();
	if (pthread_create(&t, NULL, busy_main, NULL) != 0)
		return 4;
	usleep(2000);
	pid = fork();
	if (pid == 0)
		run_child(argv[1]);
	__atomic_store_n(&stop_busy, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 4;
	for (int i = 0; i < 200; i++)
		parent();
	printf("parent %d child %d\n", (int)getpid(), (int)pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 3;
}
