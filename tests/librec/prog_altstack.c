/* SPDX-License-Identifier: MIT */
/*
 * prog_altstack.c - a host thread with a small alternate signal stack
 * faults (issue 26 item 2), for test_crash.c. The alternate stack lies in
 * shared memory between CANARY_BYTES of canaries below and above it; a
 * child process records scopes and annotations on a thread that sets that
 * alternate stack and then dies by SIGSEGV there, with librec's crash
 * handler on it. The parent, which records nothing, then looks at the
 * memory the child left.
 * Usage: prog_altstack BYTES [NR]
 * Prints "pid P below B above A used U minsig M": the child's pid (its
 * trace file's %p), bytes changed below and above the alternate stack,
 * bytes of it used (from its top down to the lowest byte changed), the
 * kernel's AT_MINSIGSTKSZ. Exit: 0, or 1 if the child
 * did not die by SIGSEGV, 2 on bad usage, 3 if BYTES cannot be an
 * alternate stack here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <rec.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

#define CANARY_BYTES 16384u
#define CANARY 0xC5u
#define FILL 0x5Au

static uint8_t *region; /* canaries, the alternate stack, canaries */
static size_t stack_bytes;
static long nr;

static void __attribute__((noinline)) work(long i)
{
	TRACE_SCOPE_NAMED("work");
	TRACE_VALUE("i", i);
	__asm__ volatile("" ::: "memory");
}

__attribute__((no_sanitize("undefined"))) static void *faulting_thread(void *arg)
{
	stack_t ss = { .ss_sp = region + CANARY_BYTES, .ss_size = stack_bytes };
	volatile int *volatile nowhere = NULL;

	(void)arg;
	if (sigaltstack(&ss, NULL) != 0)
		_exit(3);
	for (long i = 0; i < nr; i++)
		work(i);
	*nowhere = 1; /* SIGSEGV: librec's handler runs on the alternate stack */
	_exit(4);
	return NULL;
}

static size_t changed(const uint8_t *p, size_t n, uint8_t want)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += p[i] != want;
	return k;
}

int main(int argc, char **argv)
{
	size_t total, used = 0;
	int status;
	pid_t pid;

	if (argc < 2)
		return 2;
	stack_bytes = (size_t)atol(argv[1]);
	nr = argc > 2 ? atol(argv[2]) : 1000;
	if (stack_bytes < 1024 || stack_bytes > (1u << 20))
		return 2;
	total = CANARY_BYTES + stack_bytes + CANARY_BYTES;
	region = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return 2;
	memset(region, CANARY, CANARY_BYTES);
	memset(region + CANARY_BYTES, FILL, stack_bytes);
	memset(region + CANARY_BYTES + stack_bytes, CANARY, CANARY_BYTES);
	pid = fork();
	if (pid == 0) {
		pthread_t th;

		/* The default stack size: the thread's own stack is not the point. */
		if (pthread_create(&th, NULL, faulting_thread, NULL) != 0)
			_exit(5);
		pthread_join(th, NULL);
		_exit(6);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 2;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		return 3;
	for (size_t i = 0; i < stack_bytes; i++)
		if (region[CANARY_BYTES + i] != FILL) {
			used = stack_bytes - i;
			break;
		}
	printf("pid %d below %zu above %zu used %zu minsig %lu\n", (int)pid,
	       changed(region, CANARY_BYTES, CANARY),
	       changed(region + CANARY_BYTES + stack_bytes, CANARY_BYTES, CANARY), used,
	       getauxval(AT_MINSIGSTKSZ));
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ? 0 : 1;
}
