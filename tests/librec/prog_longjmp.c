/* SPDX-License-Identifier: MIT */
/*
 * prog_longjmp.c - a TRACE_SCOPE left by longjmp, as Lua's errors,
 * libpng and PostgreSQL leave them: leaf() is entered 10 times and left
 * by longjmp each time (its exit is never recorded), then called 10 times
 * normally, all inside main's scope. test_cli_e2e.c checks that the
 * normal calls are timed as such (total > 0, = self) and the others are
 * errors of their own kind.
 */
#include <setjmp.h>

#include <rec.h>

static jmp_buf env;
static volatile unsigned long sink;

static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

static void leaf(int jump)
{
	TRACE_SCOPE();
	spin(20000);
	if (jump)
		longjmp(env, 1);
}

int main(void)
{
	TRACE_SCOPE();
	for (volatile int i = 0; i < 10; i++)
		if (!setjmp(env))
			leaf(1);
	for (int i = 0; i < 10; i++)
		leaf(0);
	return 0;
}
