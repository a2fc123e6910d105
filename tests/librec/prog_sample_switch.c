/* SPDX-License-Identifier: MIT */
/*
 * prog_sample_switch.c - a program that switches to a coroutine with
 * swapcontext() and leaves a recursion by longjmp() in a loop, for
 * REC_SAMPLE (finding F37): a sample landing in swapcontext() after it
 * loaded the other context's stack pointer walked a word of that stack as
 * the return address and the process died of SIGSEGV (every run at 20 kHz).
 * It must run to its end, exit 0. No probe of its own, as under tracetool
 * record. ARG: how many rounds (default 2000000).
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

/* The shape that was seen to die: jumper() leaves only by longjmp(), and i
 * lives in a register that longjmp() restores as setjmp() saw it (the same
 * value: nothing changes it between the two). */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option"
#pragma GCC diagnostic ignored "-Winfinite-recursion"
#pragma GCC diagnostic ignored "-Wclobbered"

static ucontext_t main_ctx, co_ctx;
static volatile unsigned long sink;
static char co_stack[65536];
static jmp_buf out;

static void co(void)
{
	for (;;) {
		for (int i = 0; i < 50; i++)
			sink += (unsigned long)i;
		swapcontext(&co_ctx, &main_ctx);
	}
}

__attribute__((noinline)) static void jumper(int d)
{
	for (int i = 0; i < 20; i++)
		sink += (unsigned long)i;
	if (d == 0)
		longjmp(out, 1);
	jumper(d - 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;

	if (getcontext(&co_ctx) != 0)
		return 2;
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co, 0);
	for (long i = 0; i < n; i++) {
		if (swapcontext(&main_ctx, &co_ctx) != 0)
			return 2;
		if (!setjmp(out))
			jumper((int)(i % 15));
	}
	return 0;
}
