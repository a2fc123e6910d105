/* SPDX-License-Identifier: MIT */
/*
 * prog_window.c - real librec recordings for test_window_librec.c: windows
 * read through the writer's index frames (FORMAT.md §6) against the whole
 * file. Deterministic work (no timing), about 5 million events in all:
 *
 *   prog_window main      "main" open from start to end; "step" calls f,
 *                         which calls g and h; every 16384 steps a recursion
 *                         "rec" that does 300 steps at each of its 40 levels
 *                         on the way down, so that its enters lie in many
 *                         frames and stay open across windows
 *   prog_window threads   the same on 6 threads (each with "thread_main"
 *                         open throughout), joined at the end
 *   prog_window fork      main's work, a fork in the middle of it: the child
 *                         goes on inside main (opened in the parent, so its
 *                         exit in the child's file has no enter) with its
 *                         own steps; the parent waits for it
 *   prog_window snapshot  main's work, then rec_snapshot("window test") (REC_MODE=flight):
 *                         the snapshot's window starts inside open scopes
 *   prog_window churn     main's work in 400 pieces, after each 8 short threads
 *                         ("request", a step each) started and joined: frames
 *                         of short threads, whose index frames are packed
 *                         (FORMAT.md §6.3)
 *   prog_window deep      main's work, with a recursion "deep" 5000 levels deep in
 *                         the middle of it, 40 steps at each level on the way
 *                         down and back up, so that thousands of its enters,
 *                         in many frames, are open at a window's start
 */
#include <pthread.h>
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STEPS 400000u
#define REC_LEVELS 40u
#define REC_STEPS 300u

static volatile unsigned sink;

static void __attribute__((noinline)) g(unsigned i)
{
	TRACE_SCOPE_NAMED("g");
	sink += i;
}

static void __attribute__((noinline)) h(unsigned i)
{
	TRACE_SCOPE_NAMED("h");
	sink ^= i;
}

static void __attribute__((noinline)) f(unsigned i)
{
	TRACE_SCOPE_NAMED("f");
	g(i);
	if (i & 1)
		h(i);
}

static void step(unsigned i)
{
	TRACE_SCOPE_NAMED("step");
	f(i);
}

static void rec(unsigned level)
{
	TRACE_SCOPE_NAMED("rec");
	for (unsigned i = 0; i < REC_STEPS; i++)
		step(i);
	if (level + 1 < REC_LEVELS)
		rec(level + 1);
}

static void deep(unsigned level)
{
	TRACE_SCOPE_NAMED("deep");
	for (unsigned i = 0; i < 40; i++)
		step(i);
	if (level + 1 < 5000)
		deep(level + 1);
	for (unsigned i = 0; i < 40; i++)
		step(i);
}

static void work(unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		step(i);
		if (i % 16384 == 0)
			rec(0);
	}
}

static void *thread_main(void *arg)
{
	TRACE_SCOPE_NAMED("thread_main");
	(void)arg;
	work(0, STEPS / 6);
	return NULL;
}

static void *request(void *arg)
{
	TRACE_SCOPE_NAMED("request");
	step((unsigned)(uintptr_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	int rc = 0;

	{
		TRACE_SCOPE_NAMED("main");

		if (!strcmp(mode, "threads")) {
			pthread_t t[6];

			for (int i = 0; i < 6; i++)
				pthread_create(&t[i], NULL, thread_main, NULL);
			for (int i = 0; i < 6; i++)
				pthread_join(t[i], NULL);
		} else if (!strcmp(mode, "fork")) {
			pid_t pid;
			int status;

			work(0, STEPS / 2);
			pid = fork();
			if (pid < 0)
				return 1;
			work(STEPS / 2, STEPS);
			if (pid == 0)
				return 0;
			if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0)
				rc = 1;
		} else if (!strcmp(mode, "churn")) {
			for (unsigned p = 0; p < 400; p++) {
				pthread_t t[8];

				for (unsigned k = 0; k < 8; k++)
					if (pthread_create(&t[k], NULL, request,
							   (void *)(uintptr_t)(8 * p + k)) != 0)
						return 1;
				for (unsigned k = 0; k < 8; k++)
					pthread_join(t[k], NULL);
				work(p * (STEPS / 400), (p + 1) * (STEPS / 400));
			}
		} else if (!strcmp(mode, "deep")) {
			work(0, STEPS / 4);
			deep(0);
			work(STEPS / 4, STEPS / 2);
		} else {
			work(0, STEPS);
			if (!strcmp(mode, "snapshot"))
				rc = rec_snapshot("window test") != 0;
		}
	}
	return rc;
}
