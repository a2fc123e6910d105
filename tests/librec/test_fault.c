/* SPDX-License-Identifier: MIT */
/*
 * test_fault.c - the writer under injected write faults (fault_write.so
 * preloaded into prog_fault): EIO and ENOSPC part-way through give one clear
 * stderr line, the program finishes normally, and the frames written before
 * the fault are readable; short writes and EINTR lose nothing. Paths come
 * from meson: PROG_FAULT, FAULT_SO. Under ASan the shim is preloaded ahead of
 * ASan's runtime, which ASan refuses unless told its link order is fine.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_read.h"

static char out[256], err_path[256];

static void cleanup(void)
{
	unlink(out);
	unlink(err_path);
}

TestSuite(fault, .fini = cleanup, .timeout = 60);

/* Runs prog_fault with the shim; returns its stdout's first line and fills stderr. */
static void run_faulty(const char *mode, const char *after, char *stdout_line, size_t n,
		       char *stderr_text, size_t m)
{
	char cmd[2048];
	FILE *p, *f;
	size_t k;

	snprintf(out, sizeof(out), "/tmp/rec_fault_%d_%s.zst", (int)getpid(), mode);
	snprintf(err_path, sizeof(err_path), "/tmp/rec_fault_%d_%s.err", (int)getpid(), mode);
	snprintf(cmd, sizeof(cmd),
		 "REC_OUTPUT=%s FAULT_PATH=%s FAULT_MODE=%s FAULT_AFTER=%s REC_FLUSH_MS=1000 "
		 "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "
		 "LD_PRELOAD=%s %s 2>%s; echo \"exit $?\"",
		 out, out, mode, after, getenv("FAULT_SO"), getenv("PROG_FAULT"), err_path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	k = fread(stdout_line, 1, n - 1, p);
	stdout_line[k] = 0;
	pclose(p);
	f = fopen(err_path, "r");
	cr_assert_not_null(f);
	k = fread(stderr_text, 1, m - 1, f);
	stderr_text[k] = 0;
	fclose(f);
}

static void check_fault(const char *mode, const char *reason)
{
	char so[256], se[1024], expect[512];
	struct tr_trace tr;

	run_faulty(mode, "10", so, sizeof(so), se, sizeof(se));
	/* The host finished normally with its own output intact. */
	cr_assert_str_eq(so, "done 200000\nexit 0\n");
	snprintf(expect, sizeof(expect), "rec: cannot write %s: %s; tracing stopped\n", out, reason);
	cr_assert_str_eq(se, expect);
	/* The 10 frames written before the fault are intact. */
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr.nr_frames, 10);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert_not(tr.truncated);
	cr_assert_not(tr.clean);
	cr_assert(tr_well_nested(&tr));
	cr_assert_gt(tr_calls(&tr, "depth3"), 0);
	tr_free(&tr);
}

Test(fault, eio_midway_one_line_program_finishes_earlier_frames_readable)
{
	check_fault("eio", "Input/output error");
}

Test(fault, enospc_midway_one_line_program_finishes_earlier_frames_readable)
{
	check_fault("enospc", "No space left on device");
}

static void check_lossless(const char *mode)
{
	char so[256], se[1024];
	struct tr_trace tr;

	run_faulty(mode, "0", so, sizeof(so), se, sizeof(se));
	cr_assert_str_eq(so, "done 200000\nexit 0\n");
	cr_assert_str_eq(se, "");
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert_eq(tr_calls(&tr, "depth3"), 50 * 2000 * 3);
	cr_assert_eq(tr_calls(&tr, "round"), 50);
	cr_assert(tr_well_nested(&tr));
	tr_free(&tr);
}

Test(fault, short_writes_lose_nothing)
{
	check_lossless("short");
}

Test(fault, interrupted_writes_lose_nothing)
{
	check_lossless("eintr");
}
