/* SPDX-License-Identifier: MIT */
/*
 * fault_write.c - an LD_PRELOAD shim for librec's fault-injection tests. It
 * watches the file named by FAULT_PATH and, for write() and writev() calls
 * on it:
 *   FAULT_MODE=eio|enospc  after FAULT_AFTER successful writes, every write
 *                          fails with EIO or ENOSPC;
 *   FAULT_MODE=short       every write writes at most a third of what it
 *                          was asked (at least 1 byte; a writev() may so
 *                          end inside any of its parts);
 *   FAULT_MODE=eintr       every other write fails with EINTR first.
 * Other files are untouched.
 */
#define _GNU_SOURCE
/* Both open and open64 are defined below: no header redirection of one to the other. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int watched_fd = -1;
static long nr_writes;

static void note_open(const char *path, int fd)
{
	const char *want = getenv("FAULT_PATH");

	if (fd >= 0 && want && path && strcmp(path, want) == 0)
		__atomic_store_n(&watched_fd, fd, __ATOMIC_RELEASE);
}

#define OPEN_WRAPPER(name)                                                                \
	int name(const char *path, int flags, ...)                                        \
	{                                                                                 \
		static int (*real)(const char *, int, ...);                               \
		mode_t mode = 0;                                                          \
		int fd;                                                                   \
		if (flags & (O_CREAT | O_TMPFILE)) {                                      \
			va_list ap;                                                       \
			va_start(ap, flags);                                              \
			mode = (mode_t)va_arg(ap, int);                                   \
			va_end(ap);                                                       \
		}                                                                         \
		if (!real)                                                                \
			real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name);  \
		fd = real(path, flags, mode);                                             \
		note_open(path, fd);                                                      \
		return fd;                                                                \
	}

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

/*
 * The fault for one call of n bytes on fd: -1 with errno set (the call
 * fails), else the bytes it may write (n, or less in short mode).
 */
static ssize_t fault(int fd, size_t n)
{
	const char *mode = getenv("FAULT_MODE");

	if (fd != __atomic_load_n(&watched_fd, __ATOMIC_ACQUIRE) || !mode)
		return (ssize_t)n;
	nr_writes++;
	if (strcmp(mode, "eio") == 0 || strcmp(mode, "enospc") == 0) {
		const char *after = getenv("FAULT_AFTER");
		if (nr_writes > (after ? atol(after) : 0)) {
			errno = mode[1] == 'i' ? EIO : ENOSPC;
			return -1;
		}
	} else if (strcmp(mode, "short") == 0) {
		if (n > 3)
			n /= 3;
	} else if (strcmp(mode, "eintr") == 0 && nr_writes % 2) {
		errno = EINTR;
		return -1;
	}
	return (ssize_t)n;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	ssize_t may;

	if (!real)
		real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	may = fault(fd, n);
	return may < 0 ? -1 : real(fd, buf, (size_t)may);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	struct iovec cut[64];
	size_t total = 0, left;
	ssize_t may;
	int k = 0;

	if (!real)
		real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
	for (int i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	may = fault(fd, total);
	if (may < 0)
		return -1;
	if ((size_t)may == total || cnt > 64)
		return real(fd, iov, cnt);
	/* Short: the parts up to `may` bytes, the last one cut. */
	for (left = (size_t)may; k < cnt && left; k++) {
		cut[k] = iov[k];
		if (cut[k].iov_len > left)
			cut[k].iov_len = left;
		left -= cut[k].iov_len;
	}
	return real(fd, cut, k);
}
