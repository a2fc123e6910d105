/* SPDX-License-Identifier: MIT */
/*
 * prog_spin.c - a program that knows nothing of rec (not linked with
 * librec, no -finstrument-functions), for test_record.c's run of `tracetool
 * record`: spin_b does four times spin_a's work, each round, ROUNDS times
 * (argument; default 100), about 0.4 s of CPU in all at the default.
 * A second argument "close": first closes every descriptor from 3 up, as a
 * daemon does at its start (close_range(2)); "rtmax": first installs a
 * handler of its own for SIGRTMAX, as the Go runtime does for every signal
 * at its start; "rtmax-late": the same after half the rounds.
 */
#define _GNU_SOURCE /* syscall */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long sink;

static void on_rtmax(int sig)
{
	(void)sig;
}

static int take_rtmax(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rtmax;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGRTMAX, &sa, NULL);
}

/*
 * Both aligned alike, so that their loops sit alike in the cache lines and
 * the decoder's windows: unaligned, a build where spin_a's loop crossed a
 * 32-byte boundary and spin_b's did not ran spin_b only 2x spin_a (perf
 * agreed with the samples), whatever the 4x work.
 */
__attribute__((noinline, aligned(64))) void spin_a(void);
__attribute__((noinline, aligned(64))) void spin_b(void);

void spin_a(void)
{
	for (unsigned long i = 0; i < 250000; i++)
		sink += i;
}

void spin_b(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	const char *how = argc > 2 ? argv[2] : "";

#ifdef SYS_close_range
	if (strcmp(how, "close") == 0 && syscall(SYS_close_range, 3, ~0U, 0) != 0)
		return 3;
#endif
	if (strcmp(how, "rtmax") == 0 && take_rtmax() != 0)
		return 4;
	for (long r = 0; r < rounds; r++) {
		if (r == rounds / 2 && strcmp(how, "rtmax-late") == 0 && take_rtmax() != 0)
			return 4;
		spin_a();
		spin_b();
		__asm__ volatile("" ::: "memory"); /* no tail call: main stays on the stack */
	}
	return 0;
}
