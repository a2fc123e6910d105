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
 * Usage: prog_closefds HOST_FILE [stdio]
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

int main(int argc, char **argv)
{
	int fd;

	bool stdio = argc == 3 && strcmp(argv[2], "stdio") == 0;

	if (argc != 2 && !stdio)
		return 2;
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
