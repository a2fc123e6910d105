/* SPDX-License-Identifier: MIT */
/*
 * prog_sample_rtmax.c - a host that knows nothing of rec and takes SIGRTMAX
 * for its own use once it runs (main installs its handler, as a program
 * with "#define MY_SIGNAL SIGRTMAX" does), never sending it: it works
 * MS ms of CPU, then prints "spurious N", the SIGRTMAX signals its handler
 * received. Run by test_sample_host.c under REC_SAMPLE, where librec
 * took the highest real-time signal with no handler when it was loaded.
 * Usage: prog_sample_rtmax MS [HOW]  HOW: plain (no handler, only the
 * work), or how the handler is installed: sigaction (the default), sigset,
 * __sigaction, ssignal, __sysv_signal, sigignore (SIG_IGN); every way but
 * sigaction and sigignore also prints "old_dfl 1" if the disposition it
 * replaced read SIG_DFL.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The host's System V calls are what it uses, deprecated as they are. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* glibc's other names for these (exported, not declared by its headers). */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);
extern sighandler_t __sysv_signal(int, sighandler_t);
extern sighandler_t ssignal(int, sighandler_t);

static atomic_int spurious;
static volatile double sink;

static void on_rtmax(int sig)
{
	(void)sig;
	atomic_fetch_add(&spurious, 1);
}

int main(int argc, char **argv)
{
	const char *how = argc > 2 ? argv[2] : "sigaction";
	sighandler_t old = SIG_ERR;
	struct sigaction sa;
	struct timespec ts;
	double end;

	if (argc < 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rtmax;
	sigemptyset(&sa.sa_mask);

	if (strcmp(how, "sigaction") == 0 && sigaction(SIGRTMAX, &sa, NULL))
		return 3;
	if (strcmp(how, "__sigaction") == 0 && __sigaction(SIGRTMAX, &sa, NULL))
		return 3;
	if (strcmp(how, "sigset") == 0)
		old = sigset(SIGRTMAX, on_rtmax);
	if (strcmp(how, "ssignal") == 0)
		old = ssignal(SIGRTMAX, on_rtmax);
	if (strcmp(how, "__sysv_signal") == 0)
		old = __sysv_signal(SIGRTMAX, on_rtmax);
	if (strcmp(how, "sigignore") == 0 && sigignore(SIGRTMAX))
		return 3;
	if (old != SIG_ERR)
		printf("old_dfl %d\n", old == SIG_DFL);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 + atof(argv[1]);
	do {
		for (int i = 0; i < 1000; i++)
			sink += i * 0.5;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 < end);
	printf("spurious %d\n", atomic_load(&spurious));
	return 0;
}
