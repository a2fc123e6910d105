/* SPDX-License-Identifier: MIT */
/*
 * prog_counters.c - a program for the counters and live-report tests
 * (test_counters.c). `prog_counters counters`: 20 calls of touch_pages(),
 * each first-touching 64 fresh pages, and 20 calls of nap(), each sleeping
 * 2 ms. `prog_counters live`: about 600 ms of live_busy() slices inside
 * one long live_outer(), for REC_LIVE. `prog_counters reuse`: a host that
 * puts a pipe of its own, 16 bytes waiting in it, at the number of librec's
 * counter descriptor (dup2()), as a host that closes what it did not open
 * and reuses the numbers does; rec_flush(); 100 scopes; then reads its pipe:
 * prints "counter fd N" (librec's, -1 if none) and "host bytes N" (what it
 * got back of its 16).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES 64

static __attribute__((noinline)) void touch_pages(void)
{
	TRACE_SCOPE();
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, PAGES * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	madvise(p, PAGES * (size_t)page, MADV_NOHUGEPAGE); /* one fault per page */
	for (int i = 0; i < PAGES; i++)
		((volatile char *)p)[(size_t)i * (size_t)page] = 1;
	munmap(p, PAGES * (size_t)page);
}

static __attribute__((noinline)) void nap(void)
{
	TRACE_SCOPE();
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void live_busy(void)
{
	TRACE_SCOPE();
	double end = now_s() + 0.005;

	while (now_s() < end)
		;
}

static __attribute__((noinline)) void live_outer(void)
{
	TRACE_SCOPE();
	double end = now_s() + 0.6;

	while (now_s() < end)
		live_busy();
}

/* The lowest descriptor naming a perf event (librec's counter group's), or -1. */
static int perf_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	while (d && (e = readdir(d))) {
		char path[64], link[64];
		ssize_t n;
		int fd = atoi(e->d_name);

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strstr(link, "perf_event") && (found < 0 || fd < found))
			found = fd;
	}
	if (d)
		closedir(d);
	return found;
}

static int reuse(void)
{
	char buf[64];
	int p[2], fd;
	ssize_t n;

	nap(); /* the thread's group is open */
	fd = perf_fd();
	printf("counter fd %d\n", fd);
	if (fd < 0 || pipe2(p, O_NONBLOCK) || write(p[1], "0123456789abcdef", 16) != 16 ||
	    dup2(p[0], fd) != fd)
		return 3;
	rec_flush();
	for (int i = 0; i < 100; i++)
		nap();
	n = read(fd, buf, sizeof(buf));
	printf("host bytes %d\n", (int)(n < 0 ? 0 : n));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "reuse") == 0)
		return reuse();
	if (argc > 1 && strcmp(argv[1], "live") == 0) {
		rec_thread_name("main");
		live_outer();
		return 0;
	}
	for (int i = 0; i < 20; i++)
		touch_pages();
	for (int i = 0; i < 20; i++)
		nap();
	return 0;
}
