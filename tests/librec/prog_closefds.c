/* SPDX-License-Identifier: MIT */
/*
 * prog_closefds.c - a host that closes every descriptor it did not open, as
 * a daemon does when it starts (close_range(3, ~0), closefrom()), while
 * librec records, then opens a file of its own, which gets the lowest free
 * descriptor: librec's output's old number. It records more, flushes, writes
 * its own line to its file and exits. Run by test_outputs.c.
 * With "stdio", it closes its standard descriptors too (0 to 1023) and
 * reopens 0 and 1 on /dev/null, so that its file gets descriptor 2, the
 * one librec's "rec:" lines go to.
 * With "reopen" (finding F3), HOST_FILE is the trace itself: the host opens
 * it read-write under librec's old number and reads its first 4 bytes (its
 * own offset moves), records more; librec must write nothing more at that
 * offset and must not close the host's descriptor (exit 0 only if it is
 * still open at offset 4 after rec_stop()).
 * Usage: prog_closefds HOST_FILE [stdio|reopen]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <rec.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HOST_LINE "the host's own data\n"

static void __attribute__((noinline)) work(void)
{
	TRACE_SCOPE_NAMED("work");
	__asm__ volatile("" ::: "memory");
}

/* The descriptor that names path (librec's output), or -1. */
static int fd_of(const char *path)
{
	char link[64], buf[4096];

	for (int fd = 3; fd < 1024; fd++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			if (strcmp(buf, path) == 0)
				return fd;
		}
	}
	return -1;
}

static int reopen_trace(const char *trace)
{
	char head[4];
	int old, fd;

	for (int i = 0; i < 1000; i++)
		work();
	rec_flush(); /* the output is open, a frame written */
	old = fd_of(trace);
	if (old < 0)
		return 7;
	for (int i = 3; i < 1024; i++)
		close(i);
	fd = open(trace, O_RDWR | O_CLOEXEC);
	if (fd != old)
		return 8; /* not the case under test: librec's number again */
	if (read(fd, head, sizeof(head)) != (ssize_t)sizeof(head))
		return 3;
	for (int i = 0; i < 1000; i++)
		work();
	rec_flush();
	for (int i = 0; i < 1000; i++)
		work();
	rec_stop();
	if (lseek(fd, 0, SEEK_CUR) != (off_t)sizeof(head))
		return 4; /* closed by librec, or its offset moved */
	return close(fd) == 0 ? 0 : 5;
}

int main(int argc, char **argv)
{
	int fd;

	bool stdio = argc == 3 && strcmp(argv[2], "stdio") == 0;
	bool reopen = argc == 3 && strcmp(argv[2], "reopen") == 0;

	if (argc != 2 && !stdio && !reopen)
		return 2;
	if (reopen)
		return reopen_trace(argv[1]);
	for (int i = 0; i < 1000; i++)
		work();
	rec_flush(); /* the output is open, a frame written */
	for (int i = stdio ? 0 : 3; i < 1024; i++)
		close(i); /* closefrom(3), or closefrom(0) */
	if (stdio && (open("/dev/null", O_RDONLY) != 0 || open("/dev/null", O_WRONLY) != 1))
		return 6;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 3;
	for (int i = 0; i < 1000; i++)
		work();
	rec_flush(); /* the writer's next frame */
	if (write(fd, HOST_LINE, strlen(HOST_LINE)) != (ssize_t)strlen(HOST_LINE))
		return 4;
	for (int i = 0; i < 1000; i++)
		work();
	printf("host fd %d\n", fd);
	return close(fd) == 0 ? 0 : 5;
}
