/* SPDX-License-Identifier: MIT */
/*
 * test_outputs.c - every file librec writes is opened one way (output.c,
 * issue 26 items 3 and 8): whatever is at the path, the host never hangs
 * and librec never writes through a link it did not expect, saying so in
 * one "rec:" line; files are created 0600 unless REC_FILE_MODE widens them;
 * a setuid host ignores its caller's REC_* environment. Each case runs a
 * real host as a child (child.h, killed at a time limit: a hang fails the
 * test instead of hanging it): the stream file (prog_nested), a snapshot
 * by rec_snapshot() and by REC_SNAPSHOT_SIGNAL (prog_flight), a crash
 * snapshot (prog_crash), the setuid host (prog_secure).
 * Paths from meson: PROG_NESTED, PROG_FLIGHT, PROG_CRASH, PROG_SECURE.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "suite.h"
#include "testutil.h"
#include "trace_read.h"
#include "under_asan.h"

#define LIMIT_MS 30000u
#define PRECIOUS "precious: not a trace\n"
#define LINK_WHY "a symbolic link (name its target to write there)"

static char dir[TU_TMPDIR_MAX];

static void setup(void)
{
	tu_tmpdir(dir, "rec_out");
	umask(022);
}

static void teardown(void)
{
	tu_tmpdir_remove(dir);
}

TestSuite(outputs, .init = setup, .fini = teardown, .timeout = 120);

static void in_dir(char *out, size_t bytes, const char *name)
{
	snprintf(out, bytes, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* The file's text ("" if missing), in a static buffer. */
static const char *read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	return st.st_mode & 07777;
}

/* Runs argv with "REC_OUTPUT=output" and more (NULL-terminated) settings. */
static void run(const char *const *argv, const char *output, const char *const *more,
		unsigned flags, struct tu_child *c)
{
	char setting[512];
	const char *all[16] = { setting };
	size_t n = 1;

	snprintf(setting, sizeof(setting), "REC_OUTPUT=%s", output);
	for (size_t i = 0; more && more[i]; i++)
		all[n++] = more[i];
	all[n] = NULL;
	tu_run_child(argv, all, LIMIT_MS, flags, c);
	cr_assert_neq(c->status, -1, "%s hung (killed after %u ms); stderr: %s", argv[0],
		      LIMIT_MS, c->err);
}

/* prog_flight MODE in flight mode, snapshots to DIR/snap-%n.zst; number 1 is `first`. */
static void run_flight(const char *mode, const char *more, char *first, size_t first_bytes,
		       struct tu_child *c)
{
	const char *argv[] = { tu_env("PROG_FLIGHT"), mode, NULL };
	const char *settings[] = { "REC_MODE=flight", "REC_SNAPSHOT_SIGNAL=USR2", more, NULL };
	char pattern[128];

	in_dir(pattern, sizeof(pattern), "snap-%n.zst");
	in_dir(first, first_bytes, "snap-1.zst");
	run(argv, pattern, settings, 0, c);
}

/* What prog_flight MODE says besides the refusal: api's second rec_snapshot() is suppressed. */
static const char *flight_tail(const char *mode)
{
	return strcmp(mode, "api") == 0 ? "rec: flight recorder: 1 snapshot trigger suppressed (at "
					  "most one snapshot per REC_WINDOW and 10 per process)\n"
					: "";
}

/* ---------------------------------------------------------------------
 * Finding 3: a FIFO at a snapshot path hung the host forever (the writer
 * blocked in open(2), rec_flush() and exit waited for it; in the crash
 * handler the process never died).
 */

static void assert_fifo_snapshot_refused(const char *mode)
{
	char snap[128], expect[512];
	struct tu_child c;

	in_dir(snap, sizeof(snap), "snap-1.zst");
	cr_assert_eq(mkfifo(snap, 0600), 0);
	run_flight(mode, NULL, snap, sizeof(snap), &c);
	cr_assert_eq(c.status, 0, "%s: status %d; stderr: %s", mode, c.status, c.err);
	snprintf(expect, sizeof(expect), "rec: cannot write snapshot %s: a FIFO\n%s", snap,
		 flight_tail(mode));
	cr_assert_str_eq(c.err, expect);
}

Test(outputs, fifo_at_the_snapshot_path_does_not_hang_rec_snapshot)
{
	assert_fifo_snapshot_refused("api");
}

Test(outputs, fifo_at_the_snapshot_path_does_not_hang_a_usr2_trigger)
{
	assert_fifo_snapshot_refused("signal");
}

/* prog_crash segv plain in flight mode: the crash's snapshot is number 1. */
static void run_crash(struct tu_child *c)
{
	const char *argv[] = { tu_env("PROG_CRASH"), "segv", "plain", NULL };
	const char *settings[] = { "REC_MODE=flight", "REC_FLUSH_MS=60000", NULL };
	char pattern[128];

	in_dir(pattern, sizeof(pattern), "snap-%n.zst");
	run(argv, pattern, settings, TU_CHILD_CRASH, c);
	cr_assert(WIFSIGNALED(c->wstatus) && WTERMSIG(c->wstatus) == SIGSEGV,
		  "status %d; stderr: %s", c->status, c->err);
}

Test(outputs, fifo_at_the_crash_snapshot_path_does_not_hang_the_crash_handler)
{
	char snap[128], expect[512];
	struct tu_child c;

	in_dir(snap, sizeof(snap), "snap-1.zst");
	cr_assert_eq(mkfifo(snap, 0600), 0);
	run_crash(&c);
	snprintf(expect, sizeof(expect),
		 "rec: SIGSEGV: cannot write snapshot %s: a FIFO; the crash is not recorded\n",
		 snap);
	cr_assert_str_eq(c.err, expect);
}

/* ---------------------------------------------------------------------
 * Findings 3 and 8: a symbolic link at an output path was followed and
 * its target truncated (stream file with flock+ftruncate, snapshot with
 * O_TRUNC). Now it is refused: the target keeps its bytes.
 */

/* DIR/victim holding PRECIOUS, and a link to it at `at`. */
static void link_to_victim(const char *at, char *victim, size_t victim_bytes)
{
	in_dir(victim, victim_bytes, "victim");
	write_text(victim, PRECIOUS);
	cr_assert_eq(symlink(victim, at), 0, "%s", strerror(errno));
}

Test(outputs, symlink_at_the_stream_output_is_not_followed)
{
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	char out[128], victim[128], expect[512];
	struct tu_child c;

	in_dir(out, sizeof(out), "trace.zst");
	link_to_victim(out, victim, sizeof(victim));
	run(argv, out, NULL, 0, &c);
	cr_assert_eq(c.status, 0, "stderr: %s", c.err);
	snprintf(expect, sizeof(expect), "rec: cannot open %s: " LINK_WHY "; tracing disabled\n",
		 out);
	cr_assert_str_eq(c.err, expect);
	cr_assert_str_eq(read_text(victim), PRECIOUS);
}

Test(outputs, dangling_symlink_at_the_stream_output_creates_nothing)
{
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	char out[128], target[128], expect[512];
	struct tu_child c;

	in_dir(out, sizeof(out), "trace.zst");
	in_dir(target, sizeof(target), "created-through-the-link");
	cr_assert_eq(symlink(target, out), 0);
	run(argv, out, NULL, 0, &c);
	cr_assert_eq(c.status, 0, "stderr: %s", c.err);
	snprintf(expect, sizeof(expect), "rec: cannot open %s: " LINK_WHY "; tracing disabled\n",
		 out);
	cr_assert_str_eq(c.err, expect);
	cr_assert(!exists(target), "%s was created through the link", target);
}

static void assert_symlink_snapshot_refused(const char *mode)
{
	char snap[128], victim[128], expect[512];
	struct tu_child c;

	in_dir(snap, sizeof(snap), "snap-1.zst");
	link_to_victim(snap, victim, sizeof(victim));
	run_flight(mode, NULL, snap, sizeof(snap), &c);
	cr_assert_eq(c.status, 0, "%s: status %d; stderr: %s", mode, c.status, c.err);
	snprintf(expect, sizeof(expect), "rec: cannot write snapshot %s: " LINK_WHY "\n%s", snap,
		 flight_tail(mode));
	cr_assert_str_eq(c.err, expect);
	cr_assert_str_eq(read_text(victim), PRECIOUS);
}

Test(outputs, symlink_at_the_snapshot_path_is_not_followed_by_rec_snapshot)
{
	assert_symlink_snapshot_refused("api");
}

Test(outputs, symlink_at_the_snapshot_path_is_not_followed_by_a_usr2_trigger)
{
	assert_symlink_snapshot_refused("signal");
}

Test(outputs, symlink_at_the_crash_snapshot_path_is_not_followed)
{
	char snap[128], victim[128], expect[512];
	struct tu_child c;

	in_dir(snap, sizeof(snap), "snap-1.zst");
	link_to_victim(snap, victim, sizeof(victim));
	run_crash(&c);
	snprintf(expect, sizeof(expect),
		 "rec: SIGSEGV: cannot write snapshot %s: " LINK_WHY "; the crash is not recorded\n",
		 snap);
	cr_assert_str_eq(c.err, expect);
	cr_assert_str_eq(read_text(victim), PRECIOUS);
}

/* A link the user names on purpose: /dev/stdout (a pipe here) gets the trace. */
Test(outputs, dev_stdout_is_still_written)
{
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	/* The first frame's index frame (FORMAT.md §6), a zstd skippable frame. */
	static const unsigned char index_magic[4] = { 0x53, 0x2a, 0x4d, 0x18 };
	struct tu_child c;

	run(argv, "/dev/stdout", NULL, 0, &c);
	cr_assert_eq(c.status, 0, "stderr: %s", c.err);
	cr_assert_str_eq(c.err, "");
	cr_assert_eq(memcmp(c.out, index_magic, 4), 0, "stdout does not start with an index frame");
}

/*
 * A host that closes every descriptor it did not open (closefrom(3), as a
 * daemon does) and then opens a file of its own gets librec's old output
 * descriptor: librec's writer went on writing its frames to that number,
 * into the host's file (zstd frames before and after the host's own data).
 * librec must never write to a descriptor that no longer names its output:
 * the host's file holds the host's line only, and librec stops with one
 * "rec:" line.
 */
Test(outputs, host_closing_librec_output_fd_never_gets_trace_bytes)
{
	char out[128], host[128];
	const char *argv[] = { tu_env("PROG_CLOSEFDS"), host, NULL };
	struct tu_child c;
	const char *line;

	in_dir(out, sizeof(out), "trace.zst");
	in_dir(host, sizeof(host), "host.txt");
	run(argv, out, NULL, 0, &c);
	cr_assert_eq(c.status, 0, "status %d; stderr: %s", c.status, c.err);
	cr_assert_str_eq(read_text(host), "the host's own data\n");
	line = strstr(c.err, "rec: ");
	cr_assert(line && !strstr(line + 1, "rec: "), "one rec: line wanted: %s", c.err);
}

/*
 * Finding F3: a host that closed librec's descriptor and opened the trace
 * file itself, read-write, under the same number (same device and inode),
 * then read its head: librec's next frames went to the host's offset 4,
 * over the file's first frame, and rec_stop() closed the host's
 * descriptor. Now the open is not librec's (its flags, its offset): the
 * trace ends whole after its first frame, one line says so, and the host's
 * descriptor stays open where it left it.
 */
Test(outputs, F3_host_reopening_the_trace_under_its_number_never_moves_librec_frames)
{
	char out[128], want[512];
	const char *argv[] = { tu_env("PROG_CLOSEFDS"), out, "reopen", NULL };
	struct tu_child c;
	struct tr_trace tr;
	struct stat st;

	in_dir(out, sizeof(out), "trace.zst");
	run(argv, out, NULL, 0, &c);
	cr_assert_eq(c.status, 0, "status %d; stderr: %s", c.status, c.err);
	cr_assert_eq(stat(out, &st), 0);
	snprintf(want, sizeof(want),
		 "rec: the program closed descriptor %%d, the trace's; tracing stopped: %s ends "
		 "after its first %lld bytes, without its end record\n",
		 out, (long long)st.st_size);
	{
		char line[512];
		int fd;

		cr_assert_eq(sscanf(c.err, "rec: the program closed descriptor %d,", &fd), 1, "%s",
			     c.err);
		snprintf(line, sizeof(line), want, fd);
		cr_assert_str_eq(c.err, line);
	}
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert_not(tr.truncated);
	cr_assert_not(tr.clean);
	cr_assert_eq(tr_calls(&tr, "work"), 1000);
	tr_free(&tr);
}

/*
 * Found by check: a host that closed its standard descriptors (a daemon)
 * and opened a data file, which got descriptor 2, had librec's "rec:" line
 * written into that file. rec(3): librec's lines go to descriptor 2 only
 * while it names what it named when librec was loaded, or a stream (a
 * terminal, pipe, socket); never to a regular file the host opened there.
 */
Test(outputs, host_data_file_on_descriptor_2_never_gets_rec_lines)
{
	char out[128], host[128];
	const char *argv[] = { tu_env("PROG_CLOSEFDS"), host, "stdio", NULL };
	struct tu_child c;

	in_dir(out, sizeof(out), "trace.zst");
	in_dir(host, sizeof(host), "host.txt");
	run(argv, out, NULL, 0, &c);
	cr_assert_eq(c.status, 0, "status %d; stderr: %s", c.status, c.err);
	cr_assert_str_eq(read_text(host), "the host's own data\n");
	cr_assert_str_eq(c.err, "", "stderr was closed: %s", c.err);
}

/* ---------------------------------------------------------------------
 * Finding 8: trace files were created 0644, readable by every user.
 */

Test(outputs, trace_files_are_created_0600)
{
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	char out[128], snap[128];
	struct tu_child c;

	in_dir(out, sizeof(out), "trace.zst");
	run(argv, out, NULL, 0, &c);
	cr_assert_eq(c.status, 0, "stderr: %s", c.err);
	cr_assert_eq(mode_of(out), 0600, "stream file mode %o", mode_of(out));
	run_flight("api", NULL, snap, sizeof(snap), &c);
	cr_assert_eq(c.status, 0, "stderr: %s", c.err);
	cr_assert_eq(mode_of(snap), 0600, "snapshot mode %o", mode_of(snap));
}

Test(outputs, rec_file_mode_widens_the_mode_of_created_files)
{
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *more[] = { "REC_FILE_MODE=0644", NULL };
	char out[128], snap[128];
	struct tu_child c;

	in_dir(out, sizeof(out), "trace.zst");
	run(argv, out, more, 0, &c);
	cr_assert_eq(c.status, 0, "stderr: %s", c.err);
	cr_assert_str_eq(c.err, "");
	cr_assert_eq(mode_of(out), 0644, "mode %o", mode_of(out));
	run_flight("api", "REC_FILE_MODE=640", snap, sizeof(snap), &c);
	cr_assert_eq(c.status, 0, "stderr: %s", c.err);
	cr_assert_eq(mode_of(snap), 0640, "snapshot mode %o", mode_of(snap));
}

Test(outputs, bad_rec_file_mode_is_one_line_and_no_file)
{
	static const char *const bad[] = { "0444", "0700x", "1777", "rw-------", "-0600" };
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	char out[128], setting[64], expect[512];
	struct tu_child c;

	in_dir(out, sizeof(out), "trace.zst");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *more[] = { setting, NULL };

		snprintf(setting, sizeof(setting), "REC_FILE_MODE=%s", bad[i]);
		run(argv, out, more, 0, &c);
		cr_assert_eq(c.status, 0, "%s: stderr: %s", bad[i], c.err);
		snprintf(expect, sizeof(expect),
			 "rec: bad REC_FILE_MODE '%s' (want octal permissions from 0600 to 0777, "
			 "such as 0644); tracing disabled\n", bad[i]);
		cr_assert_str_eq(c.err, expect);
		cr_assert(!exists(out), "%s: a file was written", bad[i]);
	}
}

/* ---------------------------------------------------------------------
 * Finding 8: REC_OUTPUT was trusted in setuid programs (getenv), letting
 * the caller create or truncate files with the program's privileges.
 *
 * As root, the host is made setuid to nobody: a run by root then has
 * AT_SECURE set and nobody's rights. REC_OUTPUT names files in a directory
 * only nobody may write: a file the program's privileges could create, and
 * an existing one they could truncate. Neither may be touched. Where the
 * test is not root or the file system ignores setuid, it is skipped.
 */

struct setuid_host {
	char path[128], priv[128];
	uid_t uid;
	gid_t gid;
};

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	ssize_t k;

	cr_assert(in >= 0 && out >= 0, "%s -> %s: %s", from, to, strerror(errno));
	while ((k = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)k), k);
	close(in);
	cr_assert_eq(close(out), 0);
}

static void make_setuid_host(struct setuid_host *h)
{
	struct passwd *pw = getpwnam("nobody");
	struct statvfs vfs;

#ifdef UNDER_ASAN
	cr_skip_test("LeakSanitizer cannot run in a setuid process (it cannot ptrace it)");
#endif
	if (geteuid() != 0)
		cr_skip_test("not root: cannot make a host setuid to another user");
	if (!pw || pw->pw_uid == 0)
		cr_skip_test("no user 'nobody' to make the host setuid to");
	if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		cr_skip_test("%s is on a file system mounted nosuid", dir);
	h->uid = pw->pw_uid;
	h->gid = pw->pw_gid;
	cr_assert_eq(chmod(dir, 0755), 0);
	in_dir(h->path, sizeof(h->path), "prog_secure");
	copy_file(tu_env("PROG_SECURE"), h->path);
	if (chown(h->path, h->uid, h->gid) != 0 && errno == EINVAL)
		cr_skip_test("user 'nobody' is not mapped here (a user namespace that maps only root)");
	cr_assert_eq(chown(h->path, h->uid, h->gid), 0);
	cr_assert_eq(chmod(h->path, 04755), 0);
	in_dir(h->priv, sizeof(h->priv), "priv");
	cr_assert_eq(mkdir(h->priv, 0700), 0);
	cr_assert_eq(chown(h->priv, h->uid, h->gid), 0);
}

/* Runs the setuid host; skips if the kernel did not run it with AT_SECURE. */
static void run_setuid(const struct setuid_host *h, const char *arg, const char *output,
		       struct tu_child *c)
{
	const char *argv[] = { h->path, arg, NULL };

	run(argv, output, NULL, 0, c);
	if (strncmp(c->out, "secure 1\n", 9) != 0)
		cr_skip_test("the host did not run with AT_SECURE (stdout: %s)", c->out);
	cr_assert_eq(c->status, 0, "status %d; stderr: %s", c->status, c->err);
}

#define SETUID_LINE                                                                         \
	"rec: a setuid or setgid program: the REC_* environment is ignored and nothing is " \
	"recorded (the program may name its output with rec_start())\n"

Test(outputs, setuid_host_ignores_rec_output)
{
	struct setuid_host h;
	char fresh[160], existing[160];
	struct tu_child c;

	make_setuid_host(&h);
	snprintf(fresh, sizeof(fresh), "%s/created.zst", h.priv);
	run_setuid(&h, NULL, fresh, &c);
	cr_assert_str_eq(c.err, SETUID_LINE);
	cr_assert(!exists(fresh), "%s was created with the host's privileges", fresh);

	snprintf(existing, sizeof(existing), "%s/existing.zst", h.priv);
	write_text(existing, PRECIOUS);
	cr_assert_eq(chown(existing, h.uid, h.gid), 0);
	cr_assert_eq(chmod(existing, 0600), 0);
	run_setuid(&h, NULL, existing, &c);
	cr_assert_str_eq(c.err, SETUID_LINE);
	cr_assert_str_eq(read_text(existing), PRECIOUS);
}

/*
 * Finding F14 (check3): a setuid program whose probe had already been refused
 * said so again when it called rec_start(NULL) (README, "Setuid and setgid
 * programs": it says so once).
 */
Test(outputs, F14_setuid_host_says_once_that_its_environment_is_ignored)
{
	struct setuid_host h;
	char ignored[160];
	struct tu_child c;

	make_setuid_host(&h);
	snprintf(ignored, sizeof(ignored), "%s/from-the-environment.zst", h.priv);
	run_setuid(&h, "null", ignored, &c);
	cr_assert_str_eq(c.out, "secure 1\nstart -1\n");
	cr_assert_str_eq(c.err, SETUID_LINE);
	cr_assert(!exists(ignored));
}

/* The program itself may still name its output: created 0600, by its owner. */
Test(outputs, setuid_host_records_to_the_output_it_names_itself)
{
	struct setuid_host h;
	char own[160], ignored[160];
	struct stat st;
	struct tu_child c;

	make_setuid_host(&h);
	snprintf(own, sizeof(own), "%s/own.zst", h.priv);
	snprintf(ignored, sizeof(ignored), "%s/from-the-environment.zst", h.priv);
	run_setuid(&h, own, ignored, &c);
	cr_assert_str_eq(c.out, "secure 1\nstart 0\n");
	cr_assert_str_eq(c.err, "");
	cr_assert(!exists(ignored));
	cr_assert_eq(stat(own, &st), 0, "%s: %s", own, strerror(errno));
	cr_assert_eq(st.st_uid, h.uid);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert_gt(st.st_size, 0);
}

/*
 * Finding F11 (check2): librec's rec: line to a stderr pipe whose reader is
 * gone (`prog 2>&1 | head`, a log collector that died) raised SIGPIPE and
 * killed a host that never writes to stderr itself (exit 141 in a shell).
 * The line is lost, the host runs on and exits as it would have.
 */
/*
 * Runs the host named by the environment variable prog_var, with
 * REC_OUTPUT=output, in a child that calls prepare() first (exit 120 if it
 * fails or prog_var is unset, 121 if the host cannot start); its wait status.
 */
static int run_prepared_host(const char *prog_var, const char *output, bool (*prepare)(void))
{
	int status;
	pid_t pid = fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		const char *prog = getenv(prog_var);

		if (!prog || !prepare())
			_exit(120);
		setenv("REC_OUTPUT", output, 1);
		execl(prog, prog, (char *)NULL);
		_exit(121);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

/* stdout to /dev/null, stderr to a pipe whose reader is closed, SIGPIPE's default action. */
static bool stderr_to_a_broken_pipe(void)
{
	int null = open("/dev/null", O_WRONLY), p[2];

	/* The pipe is the child's alone: with its reader closed, a write to p[1]
	 * fails with EPIPE and raises SIGPIPE. */
	if (null < 0 || pipe(p) != 0 || close(p[0]) != 0 || dup2(null, 1) < 0 || dup2(p[1], 2) < 0)
		return false;
	signal(SIGPIPE, SIG_DFL);
	return true;
}

Test(outputs, F11_rec_line_to_a_broken_stderr_pipe_never_kills_the_host)
{
	char output[TU_PATH_MAX];
	int status;

	tu_join(output, dir, "no/such/dir/t.zst");
	status = run_prepared_host("PROG_NESTED", output, stderr_to_a_broken_pipe);
	cr_assert(WIFEXITED(status), "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert_eq(WEXITSTATUS(status), 0);
}

/*
 * Finding F17 (check3): a host started with a standard descriptor closed
 * (`prog 2>&-`, as a supervisor may start a service) had librec's trace take
 * that descriptor (the lowest free), so the host's own
 * stderr line, which fails without librec, went into the trace: at byte 0,
 * before librec's first frame, and `tracetool check` found frame 0 bad.
 * librec's outputs never take 0, 1 or 2 (rec(3), OUTPUTS AND PRIVILEGES).
 */
/* stderr closed; 0 and 1 stay open: the trace's lowest free number is 2. */
static bool stderr_closed(void)
{
	return close(2) == 0;
}

Test(outputs, F17_trace_never_takes_a_standard_descriptor_of_a_host_started_without_them)
{
	char output[TU_PATH_MAX];
	struct tr_trace tr;
	int status;

	tu_join(output, dir, "t.zst");
	status = run_prepared_host("PROG_STDIO_CLOSED", output, stderr_closed);
	cr_assert(WIFEXITED(status), "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert_eq(WEXITSTATUS(status), 0, "exit %d: the host's stderr line was written (3)",
		     WEXITSTATUS(status));
	cr_assert_eq(tr_load(output, &tr), 0, "%s unreadable", output);
	cr_assert(tr.clean, "%s: no END record", output);
	cr_assert_eq(tr.nr_corrupt, 0, "%s: %d frames unreadable", output, tr.nr_corrupt);
	cr_assert_eq(tr_calls(&tr, "work"), 200);
	tr_free(&tr);
}
