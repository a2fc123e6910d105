/* SPDX-License-Identifier: MIT */
/*
 * test_record.c - `tracetool record [-F HZ] [-o FILE] -- CMD [ARG...]`
 * (tracetool(1), "record"): the command's exit status passed on (128+N for
 * a signal, 127 not found), the environment it runs in (librec first in
 * LD_PRELOAD, the user's preloads kept after it, REC_SAMPLE, REC_OUTPUT,
 * REC_LIBRARY honoured), CMD's own options left to it, usage errors, and
 * the stderr line that says where the trace went.
 */
#define _GNU_SOURCE /* memmem */
#include <string.h>

#include "ttest.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <signal.h>

#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define RECORD_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RECORD_UNDER_ASAN 1
#endif
#endif

static const char *trace, *envf;

static void setup(void)
{
	trace = tu_path(0, "record.zst");
	envf = tu_path(1, "record.env");
	unsetenv("LD_PRELOAD");
	unsetenv("REC_LIBRARY");
#ifdef RECORD_UNDER_ASAN
	/* Under ASan, the sanitized librectrace.so that record preloads comes
	 * before the ASan runtime it needs in the commands it runs. */
	static char asan[1024];
	const char *cur = getenv("ASAN_OPTIONS");

	if (!cur || !strstr(cur, "verify_asan_link_order")) {
		snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0", cur ? cur : "",
			 cur ? ":" : "");
		setenv("ASAN_OPTIONS", asan, 1);
	}
#endif
}

static void teardown(void)
{
	unlink(trace);
	unlink(envf);
}

TestSuite(record, .init = setup, .fini = teardown, .timeout = 60);

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert(f, "%s not written", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

Test(record, exit_status_of_the_command_is_passed_on)
{
	struct tu_result r = tu_run("record", "-o", trace, "--", "sh", "-c", "exit 7", NULL);

	cr_assert_eq(r.status, 7, "exit %d, stderr %s", r.status, r.err);
	tu_result_free(&r);
	r = tu_run("record", "-o", trace, "--", "true", NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	tu_result_free(&r);
}

Test(record, a_signal_gives_128_plus_its_number)
{
	struct tu_result r = tu_run("record", "-o", trace, "--", "sh", "-c", "kill -TERM $$", NULL);

	cr_assert_eq(r.status, 128 + 15, "exit %d", r.status);
	cr_assert(strstr(r.err, "ended by signal 15"), "%s", r.err);
	tu_result_free(&r);
}

Test(record, a_command_not_found_exits_127)
{
	struct tu_result r = tu_run("record", "--", "/nonexistent/prog", NULL);

	cr_assert_eq(r.status, 127, "exit %d", r.status);
	cr_assert(strstr(r.err, "tracetool: record: /nonexistent/prog: No such file or directory"),
		  "%s", r.err);
	tu_result_free(&r);
}

Test(record, environment_has_librec_first_rate_and_output)
{
	char script[512];
	struct tu_result r;
	char *env, *sp;

	snprintf(script, sizeof(script), "printf '%%s|%%s|%%s' \"$REC_SAMPLE\" \"$REC_OUTPUT\" "
					 "\"$LD_PRELOAD\" > '%s'",
		 envf);
	r = tu_run("record", "-F", "123", "-o", trace, "--", "sh", "-c", script, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	tu_result_free(&r);
	env = slurp(envf);
	sp = strchr(env, '|');
	cr_assert(sp);
	*sp = '\0';
	cr_assert_str_eq(env, "123");
	env = sp + 1;
	sp = strchr(env, '|');
	*sp = '\0';
	cr_assert_str_eq(env, trace);
	env = sp + 1;
	/* The build tree's librec, found from tracetool's own place. */
	cr_assert(strstr(env, "/librec/librectrace.so."), "LD_PRELOAD=%s", env);
	cr_assert(access(env, R_OK) == 0, "LD_PRELOAD=%s does not exist", env);
}

Test(record, default_rate_is_997_and_user_preloads_stay_after_librec)
{
	char script[512];
	struct tu_result r;

	snprintf(script, sizeof(script), "printf '%%s|%%s|%%s' \"$REC_SAMPLE\" \"$REC_OUTPUT\" "
					 "\"$LD_PRELOAD\" > '%s'",
		 envf);
	/* REC_LIBRARY names the librec; a user's preload stays. Neither
	 * exists, so the loader only warns; sh runs all the same. */
	setenv("REC_LIBRARY", "/nonexistent/librec-test.so", 1);
	setenv("LD_PRELOAD", "/nonexistent/user.so", 1);
	r = tu_run("record", "--", "sh", "-c", script, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	cr_assert(strstr(r.err, "no trace written to trace.zst"), "%s", r.err);
	tu_result_free(&r);
	/* -o's default, trace.zst, made absolute (F25: relative to where record runs). */
	char want[4200], cwd[4000];

	cr_assert(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "997|%s/trace.zst|/nonexistent/librec-test.so:/nonexistent/user.so",
		 cwd);
	cr_assert_str_eq(slurp(envf), want);
}

Test(record, options_after_the_command_are_its_own)
{
	char script[512];
	struct tu_result r;

	snprintf(script, sizeof(script), "printf '%%s %%s' \"$0\" \"$1\" > '%s'", envf);
	/* No "--": -F after CMD is sh's $0 and $1, not record's option. */
	r = tu_run("record", "-o", trace, "sh", "-c", script, "-F", "5", NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	tu_result_free(&r);
	cr_assert_str_eq(slurp(envf), "-F 5");
}

Test(record, bad_rate_or_no_command_is_a_usage_error)
{
	static const char *const bad[] = { "0", "20001", "x", "-5", "" };
	struct tu_result r;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = tu_run("record", "-F", bad[i], "--", "true", NULL);
		cr_assert_eq(r.status, 2, "-F '%s': exit %d", bad[i], r.status);
		cr_assert(strstr(r.err, "is not a rate from 1 to 20000 Hz"), "%s", r.err);
		tu_result_free(&r);
	}
	r = tu_run("record", "-F", "20000", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "missing CMD"), "%s", r.err);
	tu_result_free(&r);
}

Test(record, says_where_the_trace_went)
{
	const char *hotspot = getenv("HOTSPOT");
	struct tu_result r;
	char want[512];

	cr_assert(hotspot, "HOTSPOT not set");
	r = tu_run("record", "-o", trace, "--", hotspot, "2", NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	snprintf(want, sizeof(want), "tracetool: record: trace in %s\n", trace);
	cr_assert_str_eq(r.err, want);
	tu_result_free(&r);
	/* The file is a trace: whole-program mode counted each call. */
	r = tu_run("summary", "--format=csv", "--function=^func_a$", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(!strncmp(tu_line(r.out, 1), "func_a,2,", 9), "%s", r.out);
	tu_result_free(&r);
}

/* Whether the librec under test (LIBREC) holds the text s (an environment
 * variable it reads). */
static bool librec_knows(const char *s)
{
	const char *path = getenv("LIBREC");
	FILE *f = path ? fopen(path, "rb") : NULL;
	static char buf[1 << 16];
	size_t n, len = strlen(s), keep = 0;
	bool found = false;

	cr_assert(f, "LIBREC not set or unreadable");
	while (!found && (n = fread(buf + keep, 1, sizeof(buf) - keep, f)) > 0) {
		n += keep;
		found = memmem(buf, n, s, len) != NULL;
		keep = n < len ? n : len - 1;
		memmove(buf, buf + n - keep, keep);
	}
	fclose(f);
	return found;
}

/* prog_spin's path (PROG_SPIN); skips the test where librec has no REC_SAMPLE. */
static const char *sampled_spin(void)
{
	const char *spin = getenv("PROG_SPIN");

	cr_assert(spin, "PROG_SPIN not set");
	if (!librec_knows("REC_SAMPLE"))
		cr_skip_test("this librec has no REC_SAMPLE");
	return spin;
}

/*
 * record ran a program that took no sample: no trace written, and the why
 * said in one line by librec ("rec: ") and one by record ("tracetool: ").
 */
static void assert_no_trace_one_line_each(const struct tu_result *r)
{
	int rec_lines = 0, tt_lines = 0;

	cr_assert_neq(access(trace, F_OK), 0, "a trace was written");
	for (unsigned i = 0; i < tu_nr_lines(r->err); i++) {
		rec_lines += !strncmp(tu_line(r->err, i), "rec: ", 5);
		tt_lines += !strncmp(tu_line(r->err, i), "tracetool: ", 11);
	}
	cr_assert_eq(rec_lines, 1, "%s", r->err);
	cr_assert_eq(tt_lines, 1, "%s", r->err);
}

/*
 * The whole path on a program that knows nothing of rec (prog_spin.c: not
 * linked with librec, no instrumentation): recorded with sampling, its
 * profile names its own functions and gives the one doing four times the
 * work about four times the samples. Skipped where librec has no
 * REC_SAMPLE (the recording has no SAMPLING record).
 */
/*
 * A program whose every thread blocks the sampling signal: no sample, so no
 * trace (recording starts at the first sample). librec says why in one
 * rec: line, and record in one line, not "ran less than one sample period"
 * (which it said before).
 */
Test(record, every_thread_blocking_the_sampling_signal_is_named_as_why_nothing_was_recorded)
{
	const char *spin = sampled_spin();
	struct tu_result r;
	char want[512];

	/* Blocked here: record and its command inherit the mask (execve keeps it). */
	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	r = tu_run("record", "-F", "997", "-o", trace, "--", spin, "200", NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	assert_no_trace_one_line_each(&r);
	cr_assert(strstr(r.err, "rec: REC_SAMPLE: no sample taken: every thread of the program "
				"blocks signal "),
		  "%s", r.err);
	snprintf(want, sizeof(want), "tracetool: record: no trace written to %s: %s took no sample: "
				     "every thread of it blocked signal ", trace, spin);
	cr_assert(strstr(r.err, want), "%s", r.err);
	cr_assert(strstr(r.err, "which librec samples with\n"), "%s", r.err);
	cr_assert_null(strstr(r.err, "sample period"), "%s", r.err);
	tu_result_free(&r);
}

Test(record, an_unmodified_program_is_profiled_by_its_samples)
{
	const char *spin = sampled_spin();
	struct tu_result r;
	unsigned long a = 0, b = 0, all = 0, main_total = 0;

	r = tu_run("record", "-F", "997", "-o", trace, "--", spin, "1000", NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"sampling\":{"), "no SAMPLING record:\n%s", r.out);
	tu_result_free(&r);
	r = tu_run("profile", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++) {
		char name[256], mod[256];
		unsigned long self, total;
		const char *line = tu_line(r.out, i);

		if (sscanf(line, "%255[^,],%255[^,],%lu,%lu,", name, mod, &self, &total) != 4)
			continue;
		all += self;
		if (!strcmp(name, "spin_a"))
			a = self;
		else if (!strcmp(name, "spin_b"))
			b = self;
		else if (!strcmp(name, "main"))
			main_total = total;
		if (!strcmp(name, "spin_a") || !strcmp(name, "spin_b") || !strcmp(name, "main"))
			cr_assert(strstr(mod, "prog_spin"), "%s", line);
	}
	cr_assert_geq(all, 50, "only %lu samples:\n%s", all, r.out);
	cr_assert_eq(main_total, all, "main is on every stack:\n%s", r.out);
	cr_assert_geq(10 * (a + b), 8 * all, "spin_a + spin_b below 80 %%:\n%s", r.out);
	cr_assert(b > 2 * a && b < 8 * a, "spin_b %lu vs spin_a %lu:\n%s", b, a, r.out);
	tu_result_free(&r);
}

/*
 * The files under dir (a fresh directory), joined as "a b c" in
 * sorted order, and their count; removed with the directory.
 */
static unsigned files_in(const char *dir, char *names, size_t bytes)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	unsigned k = 0;

	cr_assert_geq(n, 0, "%s", dir);
	names[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			char p[512];

			snprintf(names + strlen(names), bytes - strlen(names), "%s%s/%s",
				 k++ ? " " : "", dir, ents[i]->d_name);
			snprintf(p, sizeof(p), "%s/%s", dir, ents[i]->d_name);
			unlink(p);
		}
		free(ents[i]);
	}
	free(ents);
	rmdir(dir);
	return k;
}

/* Each word of list (space-separated) is on stderr's "read them together" line. */
static void all_named_together(const char *err, const char *list)
{
	const char *line = strstr(err, "read them together: tracetool profile --by-process ");
	char copy[2048], *save = NULL;

	cr_assert(line, "%s", err);
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		const char *at = strstr(line, w);

		cr_assert(at && (at[strlen(w)] == ' ' || at[strlen(w)] == '\n'), "%s not on:\n%s",
			  w, err);
	}
}

/*
 * record_names_every_file_of_a_pipeline: two processes of a pipeline want
 * one -o file; librec gives the second FILE-PID (rec(3), REC_OUTPUT), and
 * record's closing lines name that one too, as many as were written, and
 * how to read them together (tracetool(1), "record").
 */
Test(record, record_names_every_file_of_a_pipeline)
{
	const char *spin = getenv("PROG_SPIN");
	char dir[TU_TMPDIR_MAX], out[600], script[1200], files[2048], want[700];
	struct tu_result r;
	unsigned n;

	cr_assert(spin, "PROG_SPIN not set");
	tu_tmpdir(dir, "tt_record_pipe");
	snprintf(out, sizeof(out), "%s/pipe.zst", dir);
	snprintf(script, sizeof(script), "'%s' 300 | '%s' 300", spin, spin);
	r = tu_run("record", "-o", out, "--", "sh", "-c", script, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	n = files_in(dir, files, sizeof(files));
	/* Both prog_spins sampled (0.1 s of CPU each); sh too when it ran a period. */
	cr_assert_geq(n, 2, "%s\n%s", files, r.err);
	snprintf(want, sizeof(want), "tracetool: record: trace in %s; %u more from %s: ", out,
		 n - 1, n == 2 ? "another process" : "other processes");
	cr_assert(strstr(r.err, want), "want '%s' in:\n%s", want, r.err);
	all_named_together(r.err, files);
	tu_result_free(&r);
}

/*
 * record_warns_of_a_file_written_by_processes_in_turn: a script runs two
 * programs one after the other (as make does); each librec opens -o's file
 * when no live recording holds it, and truncates it (rec(3), REC_OUTPUT), so
 * the file holds the second program's recording only. record said "trace in
 * FILE" and nothing more: the first program's samples were lost silently.
 * The shell is not preloaded, so that it holds no file of its own.
 */
Test(record, record_warns_of_a_file_written_by_processes_in_turn)
{
	const char *spin = getenv("PROG_SPIN"), *lib = getenv("LIBREC");
	char dir[TU_TMPDIR_MAX], out[600], script[2400], files[2048], want[700];
	struct tu_result r;
	unsigned n;

	cr_assert(spin && lib, "PROG_SPIN or LIBREC not set");
	tu_tmpdir(dir, "tt_record_seq");
	snprintf(out, sizeof(out), "%s/seq.zst", dir);
	snprintf(script, sizeof(script), "LD_PRELOAD='%s' '%s' 300; LD_PRELOAD='%s' '%s' 300", lib,
		 spin, lib, spin);
	r = tu_run("record", "-o", out, "--", "env", "-u", "LD_PRELOAD", "sh", "-c", script, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	n = files_in(dir, files, sizeof(files));
	cr_assert_eq(n, 1, "%s\n%s", files, r.err);
	snprintf(want, sizeof(want), "tracetool: record: warning: %s was written by ", out);
	cr_assert(strstr(r.err, want), "want '%s' in:\n%s", want, r.err);
	cr_assert(strstr(r.err, " processes one after another: it holds the last one's recording "
				"only (give -o a %p to keep each)\n"),
		  "%s", r.err);
	tu_result_free(&r);
}

/*
 * F28 (check4): a program that closes every descriptor from 3 up at its
 * start (close_range(), closefrom(): daemons) closed the perf events
 * librec samples with, before any sample: no trace and not a word. librec
 * now says so in one rec: line at exit, and record in one line.
 */
Test(record, F28_closing_the_sampling_descriptors_is_named_as_why_nothing_was_recorded)
{
	const char *spin = sampled_spin();
	struct tu_result r;
	char want[512];

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 1000000, 1000000, 0) != 0 && errno == ENOSYS)
		cr_skip_test("no close_range(2) here");
#else
	cr_skip_test("no close_range(2) here");
#endif
	r = tu_run("record", "-F", "997", "-o", trace, "--", spin, "200", "close", NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	if (strstr(r.err, "REC_SAMPLE: perf_event_open"))
		cr_skip_test("no perf events here (POSIX timers have no descriptor): %s", r.err);
	assert_no_trace_one_line_each(&r);
	cr_assert(strstr(r.err, "rec: REC_SAMPLE: no sample taken: the program closed the "
				"descriptors librec samples with (close_range(), closefrom()) "
				"before the first sample\n"),
		  "%s", r.err);
	snprintf(want, sizeof(want),
		 "tracetool: record: no trace written to %s: %s took no sample: it closed the "
		 "descriptors librec samples with (close_range(), closefrom()) before the first "
		 "sample\n",
		 trace, spin);
	cr_assert(strstr(r.err, want), "want '%s' in:\n%s", want, r.err);
	tu_result_free(&r);
}

/* The lines of err that start with prefix. */
static int lines_starting(const char *err, const char *prefix)
{
	int n = 0;

	for (unsigned i = 0; i < tu_nr_lines(err); i++)
		n += !strncmp(tu_line(err, i), prefix, strlen(prefix));
	return n;
}

/*
 * F27 (check4): a Go (cgo) program's runtime installs a handler for every
 * signal at its start, librec's sampling signal too: librec stopped
 * sampling and said so, and then record blamed "ran less than one sample
 * period, or librec was not loaded". librec now tells record when the
 * program takes the signal (the Go runtime's exit runs no exit handler),
 * and record names that cause. prog_spin "rtmax" takes SIGRTMAX first
 * thing, as Go does; at 100 Hz the first sample is 10 ms of CPU away.
 */
Test(record, F27_a_program_taking_the_sampling_signal_is_named_as_why_nothing_was_recorded)
{
	const char *spin = sampled_spin();
	struct tu_result r;
	char want[768];

	/* librec takes the highest real-time signal with no action: SIGRTMAX, left so. */
	signal(SIGRTMAX, SIG_DFL);
	r = tu_run("record", "-F", "100", "-o", trace, "--", spin, "100", "rtmax", NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	assert_no_trace_one_line_each(&r);
	snprintf(want, sizeof(want), "rec: REC_SAMPLE: the program took signal %d (SIGRTMAX-0)",
		 SIGRTMAX);
	cr_assert(strstr(r.err, want), "want '%s' in:\n%s", want, r.err);
	snprintf(want, sizeof(want),
		 "tracetool: record: no trace written to %s: %s took no sample: it installed its "
		 "own action for signal %d (SIGRTMAX-0), which librec samples with, before the "
		 "first sample (the Go runtime does so at start, for every signal: Go programs "
		 "are not sampled)\n",
		 trace, spin, SIGRTMAX);
	cr_assert(strstr(r.err, want), "want '%s' in:\n%s", want, r.err);
	cr_assert_null(strstr(r.err, "sample period"), "%s", r.err);
	tu_result_free(&r);
}

/*
 * F27: a program that takes the signal after samples were taken keeps
 * them, and record says the trace holds samples only up to then.
 */
Test(record, F27_a_program_taking_the_sampling_signal_later_is_named_as_sampled_in_part)
{
	const char *spin = sampled_spin();
	struct tu_result r;
	char want[768];
	const char *p;

	signal(SIGRTMAX, SIG_DFL);
	r = tu_run("record", "-F", "997", "-o", trace, "--", spin, "200", "rtmax-late", NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	cr_assert_eq(lines_starting(r.err, "rec: "), 1, "%s", r.err);
	cr_assert_eq(lines_starting(r.err, "tracetool: "), 2, "%s", r.err);
	snprintf(want, sizeof(want),
		 "tracetool: record: trace in %s\ntracetool: record: warning: %s was sampled only "
		 "until it installed its own action for signal %d (SIGRTMAX-0), which librec "
		 "samples with\n",
		 trace, spin, SIGRTMAX);
	cr_assert(strstr(r.err, want), "want '%s' in:\n%s", want, r.err);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_not_null(p = strstr(r.out, "\"sampling\":{"), "%s", r.out);
	cr_assert_not_null(p = strstr(p, "\"samples\":"), "%s", r.out);
	cr_assert_gt(strtoul(p + 10, NULL, 10), 0, "%s", r.out);
	tu_result_free(&r);
}

/*
 * F25 (check4): -o is relative to the directory record runs in, as perf
 * record's: a command that changes directory before its first sample
 * (sh -c 'cd sub && exec prog') wrote sub/rel.zst, and record named it so.
 */
Test(record, F25_relative_output_is_relative_to_where_record_runs)
{
	const char *spin = getenv("PROG_SPIN");
	char dir[TU_TMPDIR_MAX], sub[TU_PATH_MAX], script[1200], here[TU_PATH_MAX],
		there[TU_PATH_MAX];
	struct tu_result r;

	cr_assert(spin, "PROG_SPIN not set");
	tu_tmpdir(dir, "tt_record_rel");
	cr_assert_eq(mkdir(tu_join(sub, dir, "sub"), 0700), 0);
	cr_assert_eq(chdir(dir), 0);
	snprintf(script, sizeof(script), "cd '%s' && exec '%s' 300", sub, spin);
	r = tu_run("record", "-o", "rel.zst", "--", "sh", "-c", script, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	tu_join(here, dir, "rel.zst");
	tu_join(there, sub, "rel.zst");
	cr_assert_eq(access(there, F_OK), -1, "the trace went into %s:\n%s", there, r.err);
	cr_assert_eq(access(here, F_OK), 0, "no %s:\n%s", here, r.err);
	cr_assert(strstr(r.err, "tracetool: record: trace in rel.zst\n"), "%s", r.err);
	tu_result_free(&r);
	tu_tmpdir_remove(dir);
}

/*
 * record_names_the_file_of_a_forked_child: prog_fork's parent and child
 * each record (-o with %p); record names both files, neither one a
 * pattern (tracetool(1), "record").
 */
Test(record, record_names_the_file_of_a_forked_child)
{
	const char *fork_prog = getenv("PROG_FORK");
	char dir[TU_TMPDIR_MAX], out[600], files[2048];
	struct tu_result r;
	unsigned n;

	cr_assert(fork_prog, "PROG_FORK not set");
	tu_tmpdir(dir, "tt_record_fork");
	snprintf(out, sizeof(out), "%s/fork-%%p.zst", dir);
	r = tu_run("record", "-o", out, "--", fork_prog, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	n = files_in(dir, files, sizeof(files));
	cr_assert_eq(n, 2, "%s\n%s", files, r.err);
	cr_assert(strstr(r.err, "; 1 more from another process: "), "%s", r.err);
	cr_assert(!strstr(r.err, "%p"), "%s", r.err);
	all_named_together(r.err, files);
	tu_result_free(&r);
}

/*
 * sampled_threads_are_named_by_their_comm: in a program that knows nothing
 * of rec, a thread named with pthread_setname_np() is reported by that
 * name (librec's writer reads /proc/self/task/TID/comm of every thread it
 * samples, as of threads with probes); threads that kept the program's
 * name are unnamed, shown by their thread id (tracetool(1), "record").
 */
Test(record, sampled_threads_are_named_by_their_comm)
{
	const char *prog = getenv("PROG_THREADS");
	struct tu_result r;
	unsigned named = 0, by_tid = 0;

	cr_assert(prog, "PROG_THREADS not set");
	r = tu_run("record", "-F", "499", "-o", trace, "--", prog, NULL);
	cr_assert_eq(r.status, 0, "exit %d, stderr %s", r.status, r.err);
	tu_result_free(&r);
	r = tu_run("profile", "--by-thread", "--format=csv", "--function=^spin$", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (unsigned i = 1; i < tu_nr_lines(r.out); i++) {
		char thread[64];
		const char *line = tu_line(r.out, i);

		cr_assert_eq(sscanf(line, "%63[^,],", thread), 1, "%s", line);
		if (!strcmp(thread, "spin-worker"))
			named++;
		else if (strspn(thread, "0123456789") == strlen(thread))
			by_tid++;
	}
	cr_assert_eq(named, 1, "%s", r.out);
	cr_assert_eq(by_tid, 2, "%s", r.out);
	tu_result_free(&r);
}
