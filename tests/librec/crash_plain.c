/* SPDX-License-Identifier: MIT */
/*
 * crash_plain.c - crash capture without Criterion, so that it runs in the
 * ThreadSanitizer pass too (Criterion cannot start under TSan): runs
 * prog_crash for a fault (SIGSEGV), abort() and a crash inside a probe's
 * window, with REC_FLUSH_MS=60000, and checks that each died by its signal
 * with nothing on stderr (a sanitizer report would be there, and would
 * change the exit status) and that the file holds all 2 x 1000
 * activations, well nested, ended by END. test_crash.c covers the rest.
 * Usage: crash_plain PROG_CRASH
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_read.h"

#define NR_SCOPES 1000

static int failures;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "crash_plain: %s: ", #cond);                       \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			failures++;                                                        \
		}                                                                          \
	} while (0)

static void run(const char *prog, const char *sig, int signo, const char *mode)
{
	char out[256], errpath[300], setting[300], err[4096] = "";
	struct tr_trace tr;
	int st, fd;
	ssize_t k;
	pid_t pid;

	snprintf(out, sizeof(out), "/tmp/rec_crash_plain_%d_%s_%s.zst", (int)getpid(), sig, mode);
	snprintf(errpath, sizeof(errpath), "%s.err", out);
	unlink(out);
	pid = fork();
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		snprintf(setting, sizeof(setting), "REC_OUTPUT=%s", out);
		putenv(setting);
		putenv((char *)"REC_FLUSH_MS=60000");
		putenv((char *)"ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
			       "handle_sigill=0:handle_abort=0:detect_leaks=0");
		putenv((char *)"TSAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
			       "handle_sigill=0:handle_abort=0:halt_on_error=1");
		execl(prog, prog, sig, mode, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		CHECK(0, "%s %s: cannot run", sig, mode);
		return;
	}
	fd = open(errpath, O_RDONLY);
	k = fd >= 0 ? read(fd, err, sizeof(err) - 1) : -1;
	err[k > 0 ? k : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(errpath);
	/* qemu-user (scripts/cross-arm64.sh) reports a guest killed by a signal
	 * on the guest's stderr itself, after anything the guest wrote. */
	{
		char *q = strstr(err, "qemu: uncaught target signal ");

		if (q && (q == err || q[-1] == '\n') && strchr(q, '\n') == q + strlen(q) - 1)
			*q = '\0';
	}
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == signo, "%s %s: status %#x, stderr: %s", sig, mode,
	      (unsigned)st, err);
	CHECK(err[0] == '\0', "%s %s: stderr: %s", sig, mode, err);
	if (tr_load(out, &tr) != 0) {
		CHECK(0, "%s %s: cannot read %s", sig, mode, out);
		return;
	}
	CHECK(tr.clean && !tr.truncated && tr.nr_corrupt == 0, "%s %s: not a whole file", sig, mode);
	CHECK(tr_calls(&tr, "work") == NR_SCOPES && tr_calls(&tr, "side") == NR_SCOPES,
	      "%s %s: %lu work, %lu side", sig, mode, (unsigned long)tr_calls(&tr, "work"),
	      (unsigned long)tr_calls(&tr, "side"));
	CHECK(tr.nr_events == 4 * NR_SCOPES && tr.end_nr_events == tr.nr_events,
	      "%s %s: %lu events, END says %lu", sig, mode, (unsigned long)tr.nr_events,
	      (unsigned long)tr.end_nr_events);
	CHECK(tr_well_nested(&tr), "%s %s: not well nested", sig, mode);
	tr_free(&tr);
	unlink(out);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: crash_plain PROG_CRASH\n");
		return 2;
	}
	run(argv[1], "segv", SIGSEGV, "plain");
	run(argv[1], "abrt", SIGABRT, "plain");
	run(argv[1], "segv", SIGSEGV, "window");
	return failures ? 1 : 0;
}
