/* SPDX-License-Identifier: MIT */
/*
 * test_exec.c - a traced program that exec()s (finding F2; rec(3), EXIT,
 * FORK AND CRASH, "Exec"; README, "One file, one live recording"): each
 * program image's recording is ended before the exec, every thread's events
 * in it and its end marker, and the next image, the same pid with the same
 * REC_OUTPUT, writes the next name instead of replacing it. An exec that
 * fails goes on recording in the next name; one that surely fails (no such
 * file) changes nothing; a vfork() child's exec leaves its parent's
 * recording alone. The program is prog_execself.c, run as a child; its
 * paths come from meson (tests/librec/meson.build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "suite.h"
#include "testutil.h"
#include "trace_read.h"
#include "under_asan.h"

TU_TMPDIR_SUITE(exec, dir, "rec_exec", .timeout = 120);

/* dir/NAME */
static const char *in_dir(const char *name)
{
	static char bufs[4][TU_PATH_MAX];
	static unsigned k;

	return tu_join(bufs[k++ % 4], dir, name);
}

/* Runs prog (PROG_EXECSELF or another) with REC_OUTPUT=dir/ex.zst and `more` settings. */
static void run(const char *prog, const char *mode, const char *last, const char *more,
		struct tu_child *c)
{
	char output[300];
	const char *argv[] = { tu_env(prog), mode, last, NULL };
	const char *extra[] = { output, more, NULL };

	snprintf(output, sizeof(output), "REC_OUTPUT=%s", in_dir("ex.zst"));
	tu_run_child(argv, extra, 60000, 0, c);
}

/*
 * The file holds one recording, whole and ended cleanly (tr_check()): pid
 * `pid` (0: any; returned), nr_work `work` and nr_worker `worker` scopes.
 * An image's whole recording has 500 `worker` scopes; a recording that
 * goes on after a failed exec, none (the worker's were all before it).
 */
static uint32_t check_image(const char *path, uint32_t pid, uint64_t nr_work,
			    uint64_t nr_worker)
{
	struct tr_want want = { .pid = pid,
				.calls = { { "work", nr_work }, { "worker", nr_worker } } };
	char why[600];
	uint32_t got = 0;

	cr_assert_eq(tr_check(path, &want, &got, why, sizeof(why)), 0, "%s", why);
	return got;
}

/* dir/ex-PID.zst (k == 1) or dir/ex-PID-K.zst */
static const char *next_name(uint32_t pid, unsigned k)
{
	char name[64];

	if (k == 1)
		snprintf(name, sizeof(name), "ex-%u.zst", pid);
	else
		snprintf(name, sizeof(name), "ex-%u-%u.zst", pid, k);
	return in_dir(name);
}

/* Image 0, then 1, then 2 of prog MODE: three files, each whole; one line per later image. */
static void check_three_images(const char *prog, const char *mode)
{
	char line[2][600];
	struct tu_child c;
	uint32_t pid;

	run(prog, mode, "2", NULL, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	pid = check_image(in_dir("ex.zst"), 0, 1000, 500);
	check_image(next_name(pid, 1), pid, 2000, 500);
	check_image(next_name(pid, 2), pid, 3000, 500);
	snprintf(line[0], sizeof(line[0]),
		 "rec: %s holds the recording of this process's program before exec; writing %s "
		 "instead\n",
		 in_dir("ex.zst"), next_name(pid, 1));
	snprintf(line[1], sizeof(line[1]),
		 "rec: %s and the 1 name after it hold the recordings of this process's programs "
		 "before exec; writing %s instead\n",
		 in_dir("ex.zst"), next_name(pid, 2));
	cr_assert_eq(strncmp(c.err, line[0], strlen(line[0])), 0, "%s", c.err);
	cr_assert_str_eq(c.err + strlen(line[0]), line[1]);
	cr_assert_eq(access(next_name(pid, 3), F_OK), -1);
}

Test(exec, F2_a_program_that_execs_itself_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF", "self");
}

Test(exec, F2_execl_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF", "selfl");
}

/* execle() and execlp(): their argument lists as execl()'s; execle()'s environment after them. */
Test(exec, execle_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF", "selfle");
}

Test(exec, execlp_found_on_path_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF", "selflp");
}

Test(exec, F2_execvpe_found_on_path_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF", "selfvpe");
}

/* A librectrace.a program that ends its recording itself before each exec (rec_stop()). */
Test(exec, F2_static_a_program_that_stops_before_exec_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF_STATIC", "stop");
}

/*
 * librectrace.a stands before the exec family as librectrace.so does (its
 * copies are the plain names, which the program's calls bind to): every
 * image's scopes are in its file, ended, and the next image writes the
 * next name. Before, the last events of each image were lost and the file
 * had no end marker.
 */
Test(exec, static_a_program_that_execs_itself_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF_STATIC", "self");
}

Test(exec, static_a_execvpe_found_on_path_keeps_every_image_s_recording)
{
	check_three_images("PROG_EXECSELF_STATIC", "selfvpe");
}

/*
 * prog_execself MODE tries nr_tries execs of a file that is executable but no
 * program (ENOEXEC), 500 `work` scopes after each: the image's recording up
 * to the first is in ex.zst, each try's 500 in the next name, every file
 * kept, and one line per try says where the recording goes on.
 */
static void check_failed_execs(const char *mode, unsigned nr_tries)
{
	char lines[1800] = "";
	const char *before = in_dir("ex.zst");
	struct tu_child c;
	uint32_t pid;
	FILE *f = fopen(in_dir("not-a-program"), "w");

	cr_assert_not_null(f);
	fputs("neither ELF nor #!\n", f);
	fclose(f);
	cr_assert_eq(chmod(in_dir("not-a-program"), 0700), 0);
	run("PROG_EXECSELF", mode, in_dir("not-a-program"), NULL, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	pid = check_image(before, 0, 1000, 500);
	for (unsigned k = 1; k <= nr_tries; k++) {
		const char *after = next_name(pid, k);
		size_t n = strlen(lines);

		check_image(after, pid, 500, 0);
		snprintf(lines + n, sizeof(lines) - n,
			 "rec: exec of %s failed (%s): %s holds the recording up to it, which goes "
			 "on in %s\n",
			 in_dir("not-a-program"), strerror(ENOEXEC), before, after);
		before = after;
	}
	cr_assert_eq(access(next_name(pid, nr_tries + 1), F_OK), -1);
	cr_assert_str_eq(c.err, lines);
}

Test(exec, F2_an_exec_that_fails_goes_on_recording_in_the_next_name)
{
	check_failed_execs("fail", 1);
}

/*
 * Finding F10 (check2): a program that retries a failing exec ends a file per
 * try; the restart after the second try took the first file's name back
 * (only the last ended file was known) and truncated it: ex.zst lost the
 * recording up to the first exec. Every file is kept, each in its own name.
 */
Test(exec, F10_an_exec_that_fails_again_and_again_keeps_every_file)
{
	check_failed_execs("fail3", 3);
}

/*
 * prog_execself MODE LAST execs nothing that ends its recording (an exec
 * that cannot start, one in a vfork() child, posix_spawn() and system()):
 * one file with all 1500 `work` scopes, no other name, nothing on stderr.
 */
static void check_recording_goes_on(const char *mode, const char *last)
{
	struct tu_child c;
	uint32_t pid;

	run("PROG_EXECSELF", mode, last, NULL, &c);
	cr_assert_eq(c.status, 0, "%s: status %d: %s", mode, c.status, c.err);
	cr_assert_str_eq(c.err, "", "%s", mode);
	pid = check_image(in_dir("ex.zst"), 0, 1500, 500);
	cr_assert_eq(access(next_name(pid, 1), F_OK), -1, "%s", mode);
}

Test(exec, F2_an_exec_of_no_file_changes_nothing)
{
	check_recording_goes_on("missing", in_dir("no-such-program"));
}

Test(exec, F2_a_vfork_child_s_exec_leaves_the_parent_s_recording_alone)
{
	check_recording_goes_on("vfork", "0");
}

/* posix_spawn() and system() exec in a new process: this one's recording goes on. */
Test(exec, F2_posix_spawn_and_system_leave_the_recording_alone)
{
	check_recording_goes_on("spawn", "0");
}

/* REC_MODE=flight: each image's snapshot kept, numbered on across the execs. */
Test(exec, F2_flight_snapshots_of_every_image_are_kept_and_numbered_on)
{
	struct tu_child c;
	struct tr_trace tr;
	uint32_t pid;

	run("PROG_EXECSELF", "flight", "2", "REC_MODE=flight", &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	cr_assert_str_eq(c.err, "");
	pid = check_image(in_dir("ex-1.zst"), 0, 1000, 500);
	check_image(in_dir("ex-2.zst"), pid, 2000, 500);
	for (int n = 1; n <= 2; n++) {
		cr_assert_eq(tr_load(in_dir(n == 1 ? "ex-1.zst" : "ex-2.zst"), &tr), 0);
		cr_assert(tr.has_snapshot);
		cr_assert_eq(tr.snap_number, (uint32_t)n);
		cr_assert_str_eq(tr.snap_reason, "before exec");
		tr_free(&tr);
	}
	cr_assert_eq(access(in_dir("ex-3.zst"), F_OK), -1);
	cr_assert_eq(access(in_dir("ex.zst"), F_OK), -1);
}

/* tracetool record names every image's file, as the programs the command exec()ed. */
Test(exec, F2_tracetool_record_names_every_image_s_file)
{
	const char *argv[] = { tu_env("TRACETOOL"), "record", "-o", in_dir("r.zst"), "--",
			       tu_env("PROG_EXECSELF"), "self", "2", NULL };
	char want[1024], *p;
	struct tu_child c;
	struct tr_trace tr;
	const char *extra[] = { NULL, NULL };
#ifdef UNDER_ASAN
	/* The sanitized librectrace.so that record preloads comes before the ASan runtime. */
	static char asan[1024];
	const char *cur = getenv("ASAN_OPTIONS");

	snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%sverify_asan_link_order=0", cur ? cur : "",
		 cur ? ":" : "");
	extra[0] = asan;
#endif

	tu_run_child(argv, extra, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	cr_assert_eq(tr_load(in_dir("r.zst"), &tr), 0);
	cr_assert_eq(tr_calls(&tr, "work"), 1000);
	snprintf(want, sizeof(want),
		 "tracetool: record: trace in %s; 2 more from the programs it exec()ed: "
		 "%s/r-%u.zst, %s/r-%u-2.zst\n",
		 in_dir("r.zst"), dir, tr.pid, dir, tr.pid);
	tr_free(&tr);
	p = strstr(c.err, "tracetool: record: trace in ");
	cr_assert_not_null(p, "%s", c.err);
	cr_assert_eq(strncmp(p, want, strlen(want)), 0, "%s", c.err);
}

/* The whole of a small file (at most 4095 bytes), as a string. */
static const char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/*
 * Finding F12 (check2): REC_OUTPUT=/dev/stdout with stdout redirected to a
 * regular file: the next program after exec took the file for an earlier
 * recording's and wrote "/dev/stdout-PID" instead (a file in /dev as root,
 * "cannot open ... tracing disabled" otherwise). A descriptor named is a
 * stream (rec(3), Exec): each program's recording follows the last in it.
 */
Test(exec, F12_dev_stdout_redirected_to_a_file_holds_every_image_in_turn)
{
	char cmd[1200];

	/* Each in_dir() name in dir: the shell runs there. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && { REC_OUTPUT=/dev/stdout '%s' self 2 > st.bin 2> err.txt; "
		 "echo $? > rc.txt; '%s' check st.bin > check.txt 2>&1; }",
		 dir, tu_env("PROG_EXECSELF"), tu_env("TRACETOOL"));
	(void)!system(cmd); /* check exits 1 on a stream of several recordings: its text says */
	cr_assert_str_eq(slurp(in_dir("rc.txt")), "0\n");
	cr_assert_str_eq(slurp(in_dir("err.txt")), "");
	cr_assert_not_null(strstr(slurp(in_dir("check.txt")), "3 recordings concatenated"), "%s",
			   slurp(in_dir("check.txt")));
}
