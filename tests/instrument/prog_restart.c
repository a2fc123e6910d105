/* SPDX-License-Identifier: MIT */
/*
 * prog_restart.c FILE2 - built with -finstrument-functions: main calls
 * around(), which restarts the recorder into FILE2 (REC_OUTPUT was the
 * first file) and calls work() twice before returning. around()'s and
 * main's exits belong to the first recording: the second file must hold
 * work's 2 activations and no exit without its enter (check_restart.sh).
 */
#include <rec.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

static volatile int sink;
static const char *second;

NOINLINE void work(void);
NOINLINE int around(void);

void work(void)
{
	sink++;
}

int around(void)
{
	struct rec_config cfg = REC_CONFIG_INIT;

	work();
	if (rec_stop() != 0)
		return 1;
	cfg.output = second;
	if (rec_start(&cfg) != 0)
		return 1;
	work();
	work();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: prog_restart FILE2\n");
		return 2;
	}
	second = argv[1];
	return around();
}
