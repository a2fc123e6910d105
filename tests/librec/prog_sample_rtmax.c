/* SPDX-License-Identifier: MIT */
/*
 * prog_sample_rtmax.c - a host that knows nothing of rec and takes SIGRTMAX
 * for its own use once it runs (main installs its handler, as a program
 * with "#define MY_SIGNAL SIGRTMAX" does), never sending it: it works
 * MS ms of CPU, then prints "spurious N", the SIGRTMAX signals its handler
 * received. Run by test_sample_host.c under REC_SAMPLE, where librec
 * took the highest real-time signal with no handler when it was loaded.
 * Usage: prog_sample_rtmax MS [plain]  (plain: no handler, only the work)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int spurious;
static volatile double sink;

static void on_rtmax(int sig)
{
	(void)sig;
	atomic_fetch_add(&spurious, 1);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct timespec ts;
	double end;

	if (argc < 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rtmax;
	sigemptyset(&sa.sa_mask);
	if (argc == 2 && sigaction(SIGRTMAX, &sa, NULL))
		return 3;
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
