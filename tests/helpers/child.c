/* SPDX-License-Identifier: MIT */
/* child.c - see child.h. */
#define _GNU_SOURCE
#include "child.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Reads what fd has into buf (bytes in *used, one byte kept for the '\0');
 * once buf is full the rest is read and thrown away, so a child writing more
 * than the test keeps (a trace to /dev/stdout) never blocks on a full pipe.
 * Returns read(2)'s result: <= 0 at the end.
 */
static ssize_t drain(int fd, char *buf, size_t bytes, size_t *used)
{
	char spill[4096];
	ssize_t k;

	if (*used + 1 < bytes) {
		k = read(fd, buf + *used, bytes - 1 - *used);
		if (k > 0)
			*used += (size_t)k;
		return k;
	}
	return read(fd, spill, sizeof(spill));
}

void tu_run_child(const char *const *argv, const char *const *extra_env, unsigned limit_ms,
		  unsigned flags, struct tu_child *c)
{
	int po[2], pe[2], st;
	size_t no = 0, ne = 0;
	uint64_t deadline = now_ms() + limit_ms;
	bool open_o = true, open_e = true, killed = false;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (flags & TU_CHILD_CRASH) {
			struct rlimit no_core = { 0, 0 };

			setrlimit(RLIMIT_CORE, &no_core);
		}
		dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]), close(pe[0]), close(po[1]), close(pe[1]);
		if (flags & TU_CHILD_CRASH) {
			putenv((char *)"ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
				       "handle_sigill=0:handle_abort=0:detect_leaks=0");
			putenv((char *)"TSAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
				       "handle_sigill=0:handle_abort=0:halt_on_error=1");
			putenv((char *)"UBSAN_OPTIONS=halt_on_error=1");
		}
		for (unsigned i = 0; extra_env && extra_env[i]; i++)
			putenv((char *)extra_env[i]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(po[1]), close(pe[1]);
	while (open_o || open_e) {
		struct pollfd p[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		uint64_t now = now_ms();

		if (now >= deadline) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		if (!open_o)
			p[0].fd = -1;
		if (!open_e)
			p[1].fd = -1;
		if (poll(p, 2, (int)(deadline - now)) < 0)
			continue;
		if (p[0].revents) {
			ssize_t k = drain(po[0], c->out, sizeof(c->out), &no);
			if (k <= 0)
				open_o = false;
		}
		if (p[1].revents) {
			ssize_t k = drain(pe[0], c->err, sizeof(c->err), &ne);
			if (k <= 0)
				open_e = false;
		}
	}
	close(po[0]), close(pe[0]);
	c->err[ne] = '\0';
	/* qemu-user (scripts/cross-arm64.sh) reports a guest killed by a signal
	 * on the guest's stderr itself, after anything the guest wrote. */
	{
		char *q = strstr(c->err, "qemu: uncaught target signal ");

		if (q && (q == c->err || q[-1] == '\n') && strchr(q, '\n') == q + strlen(q) - 1)
			*q = '\0';
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	c->wstatus = st;
	c->status = killed ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
