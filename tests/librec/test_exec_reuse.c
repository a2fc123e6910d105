/* SPDX-License-Identifier: MIT */
/*
 * test_exec_reuse.c - finding F13 (rec(3), "Exec"): after a failed exec the
 * recording goes on in the next name, passing by the file the exec's stop
 * ended, which it knew by device and inode. That file is compacted at its
 * end (compact.c: a new inode renamed over it), so its old inode number is
 * free, and the next name, created for the new recording, may get it: the
 * candidate then matched the ended file's identity and was passed by too,
 * an empty stray file, the recording one name further on. The identity
 * counts only while the ended file is still at its path.
 *
 * In-process, with librec's internals: a recording under pressure (every
 * frame fast: rec__writer_test_pressure, so the stop compacts), then the
 * exec wrapper's two calls, rec__exec_begin() and, the exec having failed,
 * rec__exec_failed(). Between them the next name is made to hold the old
 * inode: the file system is asked for files until one gets it (ext4 gives
 * a freed inode back at once), which is renamed to that name. Where none
 * does (a file system that never reuses an inode number soon), the test
 * says so and is skipped: there the finding cannot happen.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pressure.h"
#include "trace_read.h"

#define NR_CALLS 20000
#define NR_TRIES 256 /* files asked for until one gets the old inode */

TestSuite(exec_reuse, .init = pressure_setup, .fini = pressure_teardown, .timeout = 120);

/* A file at `name` whose inode number is ino, made by asking for files until one gets it. */
static bool make_with_inode(const char *name, ino_t ino)
{
	char scratch[NR_TRIES][160];
	bool got = false;
	int n = 0;

	for (; n < NR_TRIES && !got; n++) {
		struct stat st;
		int fd;

		snprintf(scratch[n], sizeof(scratch[n]), "%s/scratch%d", dir, n);
		fd = open(scratch[n], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		cr_assert_geq(fd, 0, "%s: %s", scratch[n], strerror(errno));
		cr_assert_eq(fstat(fd, &st), 0);
		close(fd);
		if (st.st_ino == ino) {
			cr_assert_eq(rename(scratch[n], name), 0, "%s", strerror(errno));
			scratch[n][0] = '\0';
			got = true;
		}
	}
	for (int i = 0; i < n; i++)
		if (scratch[i][0])
			unlink(scratch[i]);
	return got;
}

Test(exec_reuse, F13_the_ended_files_old_inode_reused_by_the_next_name_skips_no_name)
{
	char next[160], next2[160];
	struct stat ended, compacted;
	struct tr_trace tr;

	snprintf(next, sizeof(next), "%s/t-%d.zst", dir, (int)getpid());
	snprintf(next2, sizeof(next2), "%s/t-%d-2.zst", dir, (int)getpid());
	cr_assert_eq(rec_start(NULL), 0);
	for (int i = 0; i < NR_CALLS; i++)
		work(i);
	cr_assert_eq(stat(out, &ended), 0);
	/* The exec wrapper's calls (exec.c) around an exec that fails. */
	cr_assert(rec__exec_begin(), "the exec's stop ended no recording");
	cr_assert_eq(stat(out, &compacted), 0);
	cr_assert_neq(compacted.st_ino, ended.st_ino, "the ended file was not compacted");
	if (!make_with_inode(next, ended.st_ino))
		cr_skip_test("no file got the freed inode %lu back in %d tries: no reuse here",
			     (unsigned long)ended.st_ino, NR_TRIES);
	rec__exec_failed("a program", ENOEXEC);
	cr_assert_str_eq(rec__g.cfg.output, next, "recording goes on in %s", rec__g.cfg.output);
	for (int i = 0; i < NR_CALLS; i++)
		work(i);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(access(next2, F_OK), -1, "%s was made", next2);
	/* Both recordings whole, each in its own file. */
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr_calls(&tr, "work"), NR_CALLS);
	tr_free(&tr);
	cr_assert_eq(tr_load(next, &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr_calls(&tr, "work"), NR_CALLS);
	tr_free(&tr);
}
