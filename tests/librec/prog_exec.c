/* SPDX-License-Identifier: MIT */
/*
 * prog_exec.c - a traced program that runs another traced program with the
 * same REC_OUTPUT: NR_OUTER outer() calls, then the child (through system()
 * or fork+exec), then NR_OUTER more. The child's recording must not touch
 * this one's file (test_host.c checks both).
 * Usage: prog_exec system|exec CHILD
 */
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nested_scopes.h"

#define NR_OUTER 1000

int main(int argc, char **argv)
{
	int status;

	if (argc != 3)
		return 2;
	for (int i = 0; i < NR_OUTER; i++)
		outer();
	if (rec_flush() != 0)
		return 3; /* this recording is live and has written its file */
	if (strcmp(argv[1], "system") == 0) {
		status = system(argv[2]);
	} else {
		pid_t pid = fork();

		if (pid == 0) {
			execl(argv[2], argv[2], (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 4;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 5;
	for (int i = 0; i < NR_OUTER; i++)
		outer();
	return 0;
}
