/* SPDX-License-Identifier: MIT */
/*
 * prog_sigfirst_altstack.c - the process's first probe in a signal handler
 * that runs on an alternate signal stack (SA_ONSTACK), as a host's crash or
 * timer handler does with a SIGSTKSZ-sized stack: that probe starts the
 * recording there (README, "Signal handlers and outputs"), and what it
 * takes of the stack must leave room in a small one. The alternate stack
 * (64 KiB, painted) is measured below the handler's own frame, so the
 * kernel's signal frame (its size follows the CPU's vector registers) is
 * not counted. For test_host.c.
 * Usage: prog_sigfirst_altstack probe|plain
 *   probe: the handler calls a function with a TRACE_SCOPE (the first probe);
 *   plain: the same function without it (the host's own need).
 * Prints "below B": bytes of the alternate stack used below the handler's
 * frame. Exit 0, 2 on bad usage or if the stack cannot be set.
 */
#define _GNU_SOURCE
#include <rec.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define ALT_BYTES (64u * 1024u)
#define PAINT 0xA5u

static volatile uintptr_t handler_frame;
static volatile int with_probe;
static volatile unsigned sink;

static void __attribute__((noinline)) traced(void)
{
	TRACE_SCOPE();
	sink++;
}

static void __attribute__((noinline)) untraced(void)
{
	sink++;
	__asm__ volatile("" ::: "memory");
}

static void on_signal(int sig)
{
	(void)sig;
	handler_frame = (uintptr_t)__builtin_frame_address(0);
	if (with_probe)
		traced();
	else
		untraced();
}

int main(int argc, char **argv)
{
	uint8_t *alt;
	stack_t ss;
	struct sigaction sa;
	size_t low = 0;

	if (argc != 2 || (strcmp(argv[1], "probe") && strcmp(argv[1], "plain")))
		return 2;
	with_probe = !strcmp(argv[1], "probe");
	alt = mmap(NULL, ALT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt == MAP_FAILED)
		return 2;
	memset(alt, PAINT, ALT_BYTES);
	ss = (stack_t){ .ss_sp = alt, .ss_size = ALT_BYTES };
	if (sigaltstack(&ss, NULL))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) || raise(SIGUSR1))
		return 2;
	while (low < ALT_BYTES && alt[low] == PAINT)
		low++;
	if (handler_frame < (uintptr_t)alt || handler_frame > (uintptr_t)alt + ALT_BYTES)
		return 2; /* not on the alternate stack */
	printf("below %lu\n", (unsigned long)(handler_frame - ((uintptr_t)alt + low)));
	return 0;
}
