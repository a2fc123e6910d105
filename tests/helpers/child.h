/* SPDX-License-Identifier: MIT */
/*
 * child.h - runs a program as a child with a time limit, stdin from
 * /dev/null, capturing its stdout and stderr through pipes (polled, so a
 * chatty child cannot dead-lock the test): librec must never hang its host,
 * and a crash test must see the signal its child died of. Used by the
 * librec tests (test_host.c, test_crash.c).
 */
#ifndef TU_CHILD_H
#define TU_CHILD_H

struct tu_child {
	int status;  /* exit code, 128 + signal, or -1: killed at the time limit */
	int wstatus; /* waitpid()'s status (SIGKILL's when killed at the limit) */
	char out[8192]; /* stdout, cut */
	char err[8192]; /* stderr, cut */
};

/* The child is meant to die of a signal: no core file, and the sanitizers
 * leave SEGV, BUS, FPE, ILL and ABRT to it (no report, no leak check). */
#define TU_CHILD_CRASH 1u

/*
 * tu_run_child() - runs argv (argv[0] a path) with the extra "NAME=value"
 * settings (NULL-terminated, may be NULL) and kills it after limit_ms.
 * flags: 0 or TU_CHILD_CRASH. Fails the calling test if it cannot start.
 */
void tu_run_child(const char *const *argv, const char *const *extra_env, unsigned limit_ms,
		  unsigned flags, struct tu_child *c);

#endif /* TU_CHILD_H */
