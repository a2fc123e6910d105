/* SPDX-License-Identifier: MIT */
/*
 * pressure.h - the fixture of the in-process tests of a recording under
 * pressure (every frame fast, its literals raw: rec__writer_test_pressure),
 * test_compact.c and test_exec_reuse.c: REC_OUTPUT is t.zst in the test's
 * own directory (tu_tmpdir()), REC_OVERFLOW=block (exact counts on a loaded
 * machine); work(), one scope a call. Included by one file each: the
 * directory and the output path are that file's.
 */
#ifndef PRESSURE_H
#define PRESSURE_H

#include <rec.h>
#include <stdlib.h>

#include "rec_internal.h"
#include "testutil.h"

static char dir[TU_TMPDIR_MAX], out[TU_PATH_MAX];

static inline void pressure_setup(void)
{
	setenv("REC_OUTPUT", tu_join(out, tu_tmpdir(dir, "rec_pressure"), "t.zst"), 1);
	setenv("REC_OVERFLOW", "block", 1);
	rec__writer_test_pressure = 1;
}

static inline void pressure_teardown(void)
{
	tu_tmpdir_remove(dir);
}

static __attribute__((noinline)) void work(int i)
{
	TRACE_SCOPE();
	__asm__ volatile("" : : "r"(i) : "memory");
}

#endif /* PRESSURE_H */
