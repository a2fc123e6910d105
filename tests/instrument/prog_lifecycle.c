/* SPDX-License-Identifier: MIT */
/*
 * prog_lifecycle.c - instrumented functions at the edges of a recording,
 * built with -finstrument-functions: early() runs as a constructor, before
 * main (the hooks start recording, as a first TRACE_SCOPE would); main calls
 * work() twice, stops the recording, calls work() 3 more times (recorded
 * nowhere), registers late() with atexit and returns; late() and the
 * destructor fini_fn() run after the recording ended. The trace must hold
 * early 1, work 3, and main as one activation with no exit (its exit came
 * after rec_stop), and the program must exit 0.
 */
#include <rec.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile int sink;

NOINLINE void work(void);
NOINLINE void late(void);

void work(void)
{
	sink++;
}

static NOINLINE __attribute__((constructor)) void early(void)
{
	work();
}

void late(void)
{
	work();
}

static NOINLINE __attribute__((destructor)) void fini_fn(void)
{
	work();
}

int main(void)
{
	work();
	work();
	if (rec_stop() != 0)
		return 1;
	for (int i = 0; i < 3; i++)
		work();
	return atexit(late) == 0 ? 0 : 1;
}
