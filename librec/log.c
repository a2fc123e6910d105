/* SPDX-License-Identifier: MIT */
/*
 * log.c - librec's only output besides the trace: one "rec: ..." line on
 * stderr per problem, written with a single write(2) so that it is not
 * interleaved with the host program's own output.
 */
#include "rec_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Descriptor 2 when librec was loaded: 1 open (err_dev, err_ino), -1 closed,
 * 0 not looked at yet. */
static int err_state;
static dev_t err_dev;
static ino_t err_ino;

void rec__log_init(void)
{
	struct stat st;

	if (fstat(STDERR_FILENO, &st) == 0) {
		err_dev = st.st_dev;
		err_ino = st.st_ino;
		err_state = 1;
	} else {
		err_state = -1;
	}
}

/*
 * Whether descriptor 2 is still somewhere for librec's lines (rec(3),
 * OUTPUTS AND PRIVILEGES): a stream (terminal, pipe, socket, character
 * device) always; a regular file only if it is the one descriptor 2 named
 * when librec was loaded (the shell's `2>log`). A host that closed its
 * standard descriptors, as a daemon does, and opened a data file that got
 * number 2 must not find librec's lines in its data. fstat() only: safe in
 * a signal handler.
 */
static bool stderr_is_ours(void)
{
	struct stat st;

	if (fstat(STDERR_FILENO, &st) != 0)
		return false;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return true;
	return err_state == 0 || (err_state == 1 && st.st_dev == err_dev && st.st_ino == err_ino);
}

/*
 * Writes the line to descriptor 2 with SIGPIPE blocked: a pipe whose reader
 * is gone (a log collector that died, `prog 2>&1 | head`) fails the write
 * with EPIPE, and the SIGPIPE the kernel sends with it must not kill a host
 * that never writes to stderr itself, nor reach its handler: one it did not
 * have pending before is taken back (sigtimedwait(), no wait) before the
 * mask is restored. Keeps errno. System calls only: safe in a signal handler.
 */
static void write_line(const char *line, size_t n)
{
	static const struct timespec now = { 0, 0 };
	sigset_t pipe_set, old, pending;
	int err = errno, pending_before;
	ssize_t w = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pending_before = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	for (size_t off = 0; off < n;) {
		w = write(STDERR_FILENO, line + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (w < 0 && errno == EPIPE && !pending_before)
		while (sigtimedwait(&pipe_set, NULL, &now) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
}

void rec__log_write(const char *text, size_t n)
{
	if (stderr_is_ours())
		write_line(text, n);
}

void rec__log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n = snprintf(line, sizeof(line), "rec: ");

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (!stderr_is_ours())
		return;
	write_line(line, (size_t)n);
}

/*
 * rec__log_path() - `path` as a log line shows it: itself if it is short,
 * else its head and tail around "...", so that the line keeps its reason.
 */
const char *rec__log_path(const char *path, char *buf, size_t buf_bytes)
{
	size_t n = strlen(path), head = buf_bytes / 4;

	if (n < buf_bytes)
		return path;
	snprintf(buf, buf_bytes, "%.*s...%s", (int)head, path, path + n - (buf_bytes - head - 4));
	return buf;
}

/*
 * rec__log_safe() - one "rec: ..." line made of the strings given (the list
 * ends with NULL), for signal handlers: no stdio, no allocation, no lock.
 */
void rec__log_safe(const char *first, ...)
{
	char line[512];
	size_t n = 0;
	va_list ap;

	for (const char *s = "rec: "; *s; s++)
		line[n++] = *s;
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		while (*s && n < sizeof(line) - 1)
			line[n++] = *s++;
	va_end(ap);
	line[n++] = '\n';
	if (!stderr_is_ours())
		return;
	write_line(line, n);
}
