/* SPDX-License-Identifier: MIT */
/*
 * prog_fork.c - a parent and its forked child, each recording to its own
 * file (REC_OUTPUT with %p), for fork_timeline.sh: the parent runs
 * "before_fork" 100 times, sleeps 20 ms, forks; the child names its thread
 * "child" and runs "child_work" 200 times; the parent runs "parent_work"
 * 300 times, then waits for the child.
 */
#include <rec.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned sink;

static void work(void)
{
	for (unsigned i = 0; i < 200; i++)
		sink += i;
}

int main(void)
{
	struct timespec ms20 = { 0, 20 * 1000 * 1000 };

	rec_thread_name("parent");
	for (int i = 0; i < 100; i++) {
		TRACE_SCOPE_NAMED("before_fork");
		work();
	}
	nanosleep(&ms20, NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		rec_thread_name("child");
		for (int i = 0; i < 200; i++) {
			TRACE_SCOPE_NAMED("child_work");
			work();
		}
		return 0;
	}
	for (int i = 0; i < 300; i++) {
		TRACE_SCOPE_NAMED("parent_work");
		work();
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	return 0;
}
