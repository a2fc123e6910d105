/* SPDX-License-Identifier: MIT */
/*
 * test_instrument.c - whole-program mode end to end: programs built with
 * -finstrument-functions and linked with librec (prog_instr, hotspot) run,
 * then tracetool must name every function truthfully. Checked: exact calls
 * under real (demangled) names for a static function, a C++ method, a
 * shared library's and a dlopen'ed module's functions, mixed with a manual
 * TRACE_SCOPE; the hotspot demo's ratios; a binary replaced or removed after
 * the recording is reported, never misnamed; REC_MIN_NS counts. Paths come
 * from meson (tests/instrument/meson.build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suite.h"
#include "testutil.h"

static char dir[TU_TMPDIR_MAX], trace[TU_PATH_MAX];

static void setup(void)
{
	tu_join(trace, tu_tmpdir(dir, "rec_instr"), "trace.zst");
}

static void teardown(void)
{
	tu_tmpdir_remove(dir);
}

TestSuite(instrument, .init = setup, .fini = teardown, .timeout = 120);

/* Runs `prog args` with REC_OUTPUT=trace and extra "NAME=value" settings. */
static void record(const char *prog, const char *args, const char *extra_env)
{
	char cmd[2048];
	int status;

	snprintf(cmd, sizeof(cmd), "env REC_OUTPUT='%s' LD_LIBRARY_PATH='%s' %s '%s' %s", trace,
		 tu_env("SHLIB_DIR"), extra_env ? extra_env : "", prog, args ? args : "");
	status = system(cmd);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d", cmd, status);
}

/* The CSV row of function fn ("\nfn,..."), or NULL. */
static const char *row_of(const char *csv, const char *fn)
{
	static char key[256];
	const char *p;

	snprintf(key, sizeof(key), "\n%s,", fn);
	p = strstr(csv, key);
	return p ? p + strlen(key) : NULL;
}

/*
 * Field k of fn's row (0 calls, 1 total_ns, 2 self_ns, 3 min_ns ... 9 errors),
 * or -1 when fn has no row.
 */
static long long field_of(const char *csv, const char *fn, unsigned k)
{
	const char *p = row_of(csv, fn);

	if (!p)
		return -1;
	while (k--) {
		p = strchr(p, ',');
		cr_assert_not_null(p);
		p++;
	}
	return strtoll(p, NULL, 10);
}

static long long calls_of(const char *csv, const char *fn)
{
	return field_of(csv, fn, 0);
}

static struct tu_result summary_csv(void)
{
	struct tu_result r = tu_run("summary", "--format=csv", trace, NULL);

	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(tu_line(r.out, 0),
			 "function,calls,total_ns,self_ns,min_ns,mean_ns,p50_ns,p90_ns,p99_ns,"
			 "max_ns,errors");
	return r;
}

static char prog_copy[300];

/* Copies prog_instr into the test's directory, so that the test may change it. */
static void copy_prog(void)
{
	char cmd[1024];

	snprintf(prog_copy, sizeof(prog_copy), "%s/prog", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", tu_env("PROG_INSTR"), prog_copy);
	cr_assert_eq(system(cmd), 0);
}

Test(instrument, every_kind_of_function_has_exact_calls_under_its_real_name)
{
	struct tu_result r;
	bool plain;

	record(tu_env("PROG_INSTR"), tu_env("DLMOD"), NULL);
	r = summary_csv();
	cr_assert_eq(calls_of(r.out, "main"), 1, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "helper(int)"), 3, "static function\n%s", r.out);
	cr_assert_eq(calls_of(r.out, "Foo::bar(int)"), 5, "C++ method\n%s", r.out);
	cr_assert_eq(calls_of(r.out, "shlib_work"), 7, "shared library\n%s", r.out);
	cr_assert_eq(calls_of(r.out, "dl_work"), 11, "dlopen'ed module\n%s", r.out);
	cr_assert_eq(calls_of(r.out, "manual_block"), 2, "TRACE_SCOPE\n%s", r.out);
	/* A library not linked with librec: traced where librectrace.so overrides
	 * glibc's empty hooks (x86-64), else silently not (README). */
	plain = strcmp(tu_env("PLAINLIB_TRACED"), "1") == 0;
	cr_assert_eq(calls_of(r.out, "plain_work"), plain ? 4 : -1, "%s", r.out);
	/* Nothing else: no unnamed address, no instrumented helper of rec.h. */
	cr_assert_eq(tu_nr_lines(r.out), plain ? 8 : 7, "%s", r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);

	/* Every command sees the names: histogram, chrome, and --function. */
	r = tu_run("summary", "--format=csv", "--function=^Foo::", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(tu_nr_lines(r.out), 2, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "Foo::bar(int)"), 5);
	tu_result_free(&r);
	r = tu_run("histogram", "--format=csv", "--function=^dl_work$", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "\ndl_work,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("chrome", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "\"name\":\"helper(int)\""), "%s", r.out);
	cr_assert(strstr(r.out, "\"name\":\"shlib_work\""));
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

Test(instrument, a_replaced_binary_is_reported_and_never_misnamed)
{
	struct tu_result r;
	char cmd[1024], want[1024];

	copy_prog();
	record(prog_copy, tu_env("DLMOD"), NULL);
	/* Another build of the same source, where the recorded one was. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", tu_env("PROG_INSTR_V2"), prog_copy);
	cr_assert_eq(system(cmd), 0);
	r = summary_csv();
	snprintf(want, sizeof(want), "tracetool: %s: warning: %s: build-id mismatch (recorded ",
		 trace, prog_copy);
	cr_assert_eq(strncmp(r.err, want, strlen(want)), 0, "%s", r.err);
	cr_assert(strstr(r.err, "): the file changed since the recording; its functions are "
				"shown as addresses\n"),
		  "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.err), 1, "one warning per module\n%s", r.err);
	/* The program's functions are addresses, with the reason; never names. */
	cr_assert_null(strstr(r.out, "helper"), "%s", r.out);
	cr_assert_null(strstr(r.out, "Foo::"), "%s", r.out);
	cr_assert_null(strstr(r.out, "\nmain,"), "%s", r.out);
	cr_assert(strstr(r.out, " [prog: build-id mismatch],3,"), "%s", r.out);
	cr_assert(strstr(r.out, " [prog: build-id mismatch],5,"), "%s", r.out);
	/* The unchanged libraries still give names. */
	cr_assert_eq(calls_of(r.out, "shlib_work"), 7, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "dl_work"), 11, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "manual_block"), 2);
	tu_result_free(&r);
}

Test(instrument, a_removed_binary_is_reported_and_never_misnamed)
{
	struct tu_result r;
	char want[1024];

	copy_prog();
	record(prog_copy, tu_env("DLMOD"), NULL);
	cr_assert_eq(unlink(prog_copy), 0);
	r = summary_csv();
	snprintf(want, sizeof(want),
		 "tracetool: %s: warning: %s: cannot open: No such file or directory; its "
		 "functions are shown as addresses\n",
		 trace, prog_copy);
	cr_assert_str_eq(r.err, want);
	cr_assert(strstr(r.out, " [prog: missing],3,"), "%s", r.out);
	cr_assert_null(strstr(r.out, "helper"), "%s", r.out);
	cr_assert_eq(calls_of(r.out, "shlib_work"), 7, "%s", r.out);
	tu_result_free(&r);
	/* json stays pure json: the warning is on stderr only. */
	r = tu_run("summary", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_eq(r.out[0], '{', "%s", r.out);
	cr_assert_str_eq(r.err, want);
	tu_result_free(&r);
}

Test(instrument, a_moved_binary_is_found_through_tracetool_symbol_path_by_its_build_id)
{
	struct tu_result r;
	char cmd[1024], moved[300];

	copy_prog();
	record(prog_copy, tu_env("DLMOD"), NULL);
	snprintf(moved, sizeof(moved), "%s/elsewhere", dir);
	snprintf(cmd, sizeof(cmd), "mkdir '%s' && mv '%s' '%s/'", moved, prog_copy, moved);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(setenv("TRACETOOL_SYMBOL_PATH", moved, 1), 0);
	r = summary_csv();
	cr_assert_str_eq(r.err, "");
	cr_assert_eq(calls_of(r.out, "helper(int)"), 3, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "Foo::bar(int)"), 5, "%s", r.out);
	tu_result_free(&r);
	/* Another build under that name is not taken for it. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/prog'", tu_env("PROG_INSTR_V2"), moved);
	cr_assert_eq(system(cmd), 0);
	r = summary_csv();
	cr_assert(strstr(r.out, " [prog: missing],3,"), "%s", r.out);
	cr_assert_null(strstr(r.out, "helper"), "%s", r.out);
	tu_result_free(&r);
	unsetenv("TRACETOOL_SYMBOL_PATH");
}

/*
 * REC_MIN_NS: main sleeps 300 ms in sleeper(); with REC_MIN_NS at 250 ms,
 * main and sleeper stay and the 28 other activations (32 with plain_work;
 * all far shorter, and with nothing kept inside them) are filtered and
 * counted.
 */
Test(instrument, rec_min_ns_keeps_long_activations_and_counts_the_others)
{
	struct tu_result r;
	int nr = strcmp(tu_env("PLAINLIB_TRACED"), "1") == 0 ? 32 : 28;
	char want[128];

	record(tu_env("PROG_INSTR"), tu_env("DLMOD"), "INSTR_SLEEP_MS=300 REC_MIN_NS=250000000");
	r = summary_csv();
	cr_assert_eq(calls_of(r.out, "main"), 1, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "sleeper(long)"), 1, "%s", r.out);
	cr_assert_eq(tu_nr_lines(r.out), 3, "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"dropped\":0,"), "%s", r.out);
	snprintf(want, sizeof(want), "\"filtered\":%d,\"threads\"", nr);
	cr_assert(strstr(r.out, want), "%s", r.out);
	snprintf(want, sizeof(want), "\"dropped\":0,\"filtered\":%d,\"ended\"", nr);
	cr_assert(strstr(r.out, want), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("summary", trace, NULL);
	snprintf(want, sizeof(want),
		 "\n%d activations shorter than REC_MIN_NS not recorded (filtered)\n", nr);
	cr_assert(strstr(r.out, want), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

/* The value of "key":N after the first occurrence of "after" in text. */
static long long json_after(const char *text, const char *after, const char *key)
{
	const char *p = strstr(text, after);
	char k[64];

	cr_assert_not_null(p, "%s not in %s", after, text);
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(p, k);
	cr_assert_not_null(p, "%s not in %s", k, text);
	return strtoll(p + strlen(k), NULL, 10);
}

/*
 * Two threads, 2 x 4 x 50 000 short activations over many writer passes,
 * REC_MIN_NS at 10 s: whatever the passes cut, every activation is either
 * a call in the summary or filtered (nested ones too: outer() goes with its
 * inner()s), the file stays well nested and its counts agree.
 */
Test(instrument, rec_min_ns_accounts_for_every_activation_across_writer_passes)
{
	struct tu_result r;
	long long calls = 0, filtered;
	const char *p;

	record(tu_env("PROG_MINNS"), "50000", "REC_MIN_NS=10000000000");
	r = summary_csv();
	for (p = strchr(r.out, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
		const char *c = strchr(p + 1, ',');

		cr_assert_not_null(c);
		calls += strtoll(c + 1, NULL, 10);
	}
	/* Short, and with nothing kept inside: never kept, wherever a pass cut. */
	cr_assert_eq(calls_of(r.out, "inner"), -1, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "outer"), -1, "%s", r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	filtered = json_after(r.out, "\"problems\"", "filtered");
	cr_assert_eq(calls + filtered, 2 * 50000 * 4 + 2, "calls %lld + filtered %lld\n%s", calls,
		     filtered, r.out);
	cr_assert_eq(json_after(r.out, "\"version\"", "dropped"), 0);
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

Test(instrument, rec_min_ns_unset_keeps_everything_and_says_nothing_of_it)
{
	struct tu_result r;

	record(tu_env("PROG_INSTR"), tu_env("DLMOD"), NULL);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_null(strstr(r.out, "filtered"), "%s", r.out);
	tu_result_free(&r);
}

/*
 * Hooks before main (a constructor), after rec_stop(), in an atexit handler
 * and in a destructor: recorded while recording, ignored otherwise, never a
 * crash. main's exit came after the stop: one enter with no exit, an error.
 */
Test(instrument, hooks_before_main_and_after_the_recording_stopped_are_safe)
{
	struct tu_result r;

	record(tu_env("PROG_LIFECYCLE"), NULL, NULL);
	r = summary_csv();
	cr_assert_eq(calls_of(r.out, "early"), 1, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "work"), 3, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "main"), 0, "%s", r.out);
	cr_assert_eq(field_of(r.out, "main", 9), 1, "main's enter has no exit\n%s", r.out);
	cr_assert_eq(calls_of(r.out, "late"), -1, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "fini_fn"), -1, "%s", r.out);
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

/*
 * The README's hotspot demo, 10 rounds: func_b's loop is 4 times func_a's.
 * Calls are exact; times are compared through the fastest activation of
 * each (a preempted one only makes a maximum longer), within a wide band.
 */
Test(instrument, hotspot_func_b_takes_four_times_func_a_and_wrappers_no_self_time)
{
	struct tu_result r;
	long long a, b;

	record(tu_env("HOTSPOT"), "10", NULL);
	r = summary_csv();
	cr_assert_eq(calls_of(r.out, "main"), 1, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "func_a"), 10, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "func_b"), 10, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "wrapper_a"), 10, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "wrapper_b"), 10, "%s", r.out);
	a = field_of(r.out, "func_a", 3); /* min_ns */
	b = field_of(r.out, "func_b", 3);
	cr_assert(a > 0 && b > 5 * a / 2 && b < 6 * a, "func_b %lld ns vs func_a %lld ns", b, a);
	/* A wrapper's self time is its two hooks: under 5 % of its total. */
	cr_assert(field_of(r.out, "wrapper_a", 2) * 20 < field_of(r.out, "wrapper_a", 1), "%s",
		  r.out);
	cr_assert(field_of(r.out, "wrapper_b", 2) * 20 < field_of(r.out, "wrapper_b", 1), "%s",
		  r.out);
	tu_result_free(&r);
}

/* A module unloaded at once after its functions ran: named all the same (issue 11). */
static int dl_cycles[] = { 1, 3, 5, 100 };

ParameterizedTestParameters(instrument, functions_of_a_module_unloaded_at_once_keep_their_names)
{
	return cr_make_param_array(int, dl_cycles, sizeof(dl_cycles) / sizeof(dl_cycles[0]));
}

ParameterizedTest(int *cycles, instrument, functions_of_a_module_unloaded_at_once_keep_their_names)
{
	struct tu_result r;
	char args[1024];

	snprintf(args, sizeof(args), "'%s' %d", tu_env("DLMOD"), *cycles);
	record(tu_env("PROG_DLLOOP"), args, NULL);
	r = summary_csv();
	cr_assert_eq(calls_of(r.out, "main"), 1, "%s", r.out);
	cr_assert_eq(calls_of(r.out, "dl_work"), 2 * *cycles, "%s", r.out);
	cr_assert_eq(tu_nr_lines(r.out), 3, "nothing else\n%s", r.out);
	cr_assert_null(strstr(r.out, "\n0x"), "no unnamed address\n%s", r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
	r = tu_run("check", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

/*
 * A library the loader found by a relative name (LD_LIBRARY_PATH=., a
 * dlopen("./x.so")) is recorded by its absolute path (FORMAT.md §3.10), so
 * that tracetool names its functions from any directory (finding F32: the
 * MODULE said "./libinstr_shlib.so", and a report run elsewhere showed
 * "0x1139 [libinstr_shlib.so: missing]").
 */
Test(instrument, F32_libraries_loaded_by_relative_names_are_named_from_any_directory)
{
	char cmd[4096], libdir[TU_PATH_MAX], here[TU_PATH_MAX];
	const char *dlmod = tu_env("DLMOD"), *shlib = tu_env("SHLIB_DIR");
	const char *slash = strrchr(dlmod, '/'), *colon = strchr(shlib, ':');
	struct tu_result r;
	int status;

	cr_assert(slash && colon);
	snprintf(libdir, sizeof(libdir), "%.*s", (int)(slash - dlmod), dlmod);
	/* The shared library through LD_LIBRARY_PATH=., the module as ./NAME. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && env REC_OUTPUT='%s' LD_LIBRARY_PATH='.%s' '%s' './%s'",
		 libdir, trace, colon, tu_env("PROG_INSTR"), slash + 1);
	status = system(cmd);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d", cmd, status);
	/* tracetool in another directory: the test's own. */
	cr_assert_not_null(getcwd(here, sizeof(here)));
	cr_assert_eq(chdir(dir), 0);
	r = tu_run("summary", "--format=csv", trace, NULL);
	cr_assert_eq(chdir(here), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(calls_of(r.out, "shlib_work"), 7, "%s\n%s", r.out, r.err);
	cr_assert_eq(calls_of(r.out, "dl_work"), 11, "%s\n%s", r.out, r.err);
	cr_assert_null(strstr(r.out, "\n0x"), "no unnamed address\n%s", r.out);
	cr_assert_str_eq(r.err, "");
	tu_result_free(&r);
}
