/* SPDX-License-Identifier: MIT */
/*
 * prog_secure.c - a host for test_outputs.c's setuid case, linked with
 * librectrace.a (a setuid program's loader ignores LD_LIBRARY_PATH and $ORIGIN):
 * prints "secure N" (the kernel's AT_SECURE for this run), records 100
 * scopes and exits 0. With an argument PATH it first calls rec_start() with
 * config.output = PATH (the program naming its own output) and prints its
 * return code as "start N"; with the argument "null" it records one scope
 * (its probe tries to start), then calls rec_start(NULL) and prints its
 * return code the same way.
 */
#include <rec.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

static volatile unsigned sink;

__attribute__((noinline)) static void work(void)
{
	TRACE_SCOPE();
	sink++;
}

int main(int argc, char **argv)
{
	printf("secure %lu\n", getauxval(AT_SECURE));
	if (argc > 1 && strcmp(argv[1], "null") == 0) {
		work();
		printf("start %d\n", rec_start(NULL));
	} else if (argc > 1) {
		struct rec_config c = REC_CONFIG_INIT;

		c.output = argv[1];
		printf("start %d\n", rec_start(&c));
	}
	fflush(stdout);
	for (int i = 0; i < 100; i++)
		work();
	return rec_flush() ? 1 : 0;
}
