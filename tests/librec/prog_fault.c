/* SPDX-License-Identifier: MIT */
/*
 * prog_fault.c - the host program of the fault-injection tests: records
 * ROUNDS rounds of nested scopes, flushing after each, so that the trace is
 * written in many frames; then prints what it computed. It must finish
 * normally whatever happens to its trace file.
 */
#include <rec.h>
#include <stdio.h>

#define ROUNDS 50
#define PER_ROUND 2000

static unsigned depth3(unsigned n)
{
	TRACE_SCOPE();
	return n ? 1 + depth3(n - 1) : 0;
}

int main(void)
{
	unsigned long sum = 0;

	for (int r = 0; r < ROUNDS; r++) {
		TRACE_SCOPE_NAMED("round");
		for (int i = 0; i < PER_ROUND; i++)
			sum += depth3(2);
		rec_flush();
	}
	printf("done %lu\n", sum);
	return 0;
}
