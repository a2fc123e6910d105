/* SPDX-License-Identifier: MIT */
/*
 * prog_sigfork.c - whole-program hooks in a signal handler and across
 * fork, built with -finstrument-functions. The main thread calls work(),
 * which calls leaf(), ROUNDS times (argv[1]) while SIGALRM arrives every
 * 100 us; the handler calls on_signal(), which calls sig_leaf(), so hooks
 * run inside hooks' windows and inside librec's slow paths. Then it forks:
 * the child calls child_work() 7 times and exits (not with "nofork" as
 * argv[2]: ThreadSanitizer cannot follow a threaded process's child that
 * starts threads). Prints "parent P child C handled H" (C is 0 without a
 * child).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t handled;
static volatile unsigned long sink;

NOINLINE void leaf(void);
NOINLINE void work(void);
NOINLINE void sig_leaf(void);
NOINLINE void on_signal(int sig);
NOINLINE void child_work(void);

void leaf(void)
{
	for (int i = 0; i < 20; i++)
		sink = sink + 1;
}

void work(void)
{
	leaf();
}

void sig_leaf(void)
{
	handled = handled + 1;
}

void on_signal(int sig)
{
	(void)sig;
	sig_leaf();
}

void child_work(void)
{
	sink = sink + 1;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	struct itimerval every = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	pid_t child;
	int status;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &every, NULL))
		return 1;
	for (long i = 0; i < rounds; i++)
		work();
	setitimer(ITIMER_REAL, &off, NULL);
	if (argc > 2 && strcmp(argv[2], "nofork") == 0) {
		printf("parent %d child 0 handled %d\n", (int)getpid(), (int)handled);
		return 0;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		for (int i = 0; i < 7; i++)
			child_work();
		exit(0);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	printf("parent %d child %d handled %d\n", (int)getpid(), (int)child, (int)handled);
	return 0;
}
