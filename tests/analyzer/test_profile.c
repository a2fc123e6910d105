/* SPDX-License-Identifier: MIT */
/*
 * test_profile.c - `tracetool profile` (tracetool(1), "profile") and the
 * sample-weighted outputs (pprof --weight=samples, flame --samples, tree
 * --samples) on tracegen traces with stack samples (FORMAT.md §3.22-§3.24)
 * whose addresses are this test program's own functions, named through a
 * MODULE record of this very binary as whole-program mode names them: exact
 * self and total per function (a recursive function counted once per
 * sample), shares, estimated time, --within, --thread, --from/--to,
 * --by-thread, drops and truncated stacks, unnamed frames, and the errors.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <link.h>

#include "ttest.h"

#include <elf.h>
#include <limits.h>
#include <unistd.h>

static const char *trace, *prof;

static void setup(void)
{
	trace = tu_path(0, "profile.zst");
	prof = tu_path(1, "profile.pb.gz");
}

static void teardown(void)
{
	unlink(trace);
	unlink(prof);
}

TestSuite(profile, .init = setup, .fini = teardown, .timeout = 120);

static volatile unsigned sink;

/* Three functions of known names, each more than 16 bytes long. */
__attribute__((noinline)) void prof_leaf(void);
__attribute__((noinline)) void prof_mid(void);
__attribute__((noinline)) void prof_root(void);
void prof_leaf(void)
{
	for (unsigned i = 0; i < 10; i++)
		sink += i * 3;
}
void prof_mid(void)
{
	for (unsigned i = 0; i < 10; i++)
		sink += i * 5;
	prof_leaf();
}
void prof_root(void)
{
	for (unsigned i = 0; i < 10; i++)
		sink += i * 7;
	prof_mid();
}

/* Run-time addresses: inside each function (frame 0), and return
 * addresses (a caller's frame: the address after its call, so - 1 is in it). */
#define LEAF ((uint64_t)(uintptr_t)&prof_leaf + 4)
#define MID ((uint64_t)(uintptr_t)&prof_mid + 5)
#define ROOT ((uint64_t)(uintptr_t)&prof_root + 5)

/*
 * What shell command cmd writes on its stdout, cut to out_bytes - 1 bytes,
 * in out (NUL-terminated). Return: pclose()'s status (0: it exited 0).
 */
static int cmd_output(const char *cmd, char *out, size_t out_bytes)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	cr_assert(p, "popen %s", cmd);
	n = fread(out, 1, out_bytes - 1, p);
	out[n] = '\0';
	return pclose(p);
}

static struct tg_trace *begin_trace(void)
{
	struct tg_trace *t = new_trace(trace);
	struct tg_self_map m;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert(n > 0);
	exe[n] = '\0';
	tg_self_map(&m);
	cr_assert(m.hi > m.lo, "no PT_LOAD of the test program");
	cr_assert_eq(tg_module(t, 1, exe, m.bias, m.lo, m.hi), 0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0); /* period 1 ms */
	return t;
}

/*
 * Thread 1 "main": scope handle [2000, 6000); samples (leaf first)
 *   1500 leaf mid root, 2500 leaf mid root, 3500 mid root,
 *   4500 leaf mid leaf root (leaf twice: counted once in total), 7000 root
 * Thread 2 "worker": 2500 leaf root, 3000 root; 5 samples dropped.
 */
static void write_known(void)
{
	struct tg_trace *t = begin_trace();
	const uint64_t s1[] = { LEAF, MID, ROOT }, s3[] = { MID, ROOT },
		       s4[] = { LEAF, MID, LEAF, ROOT }, s5[] = { ROOT }, w1[] = { LEAF, ROOT };

	tg_site(t, 1, "handle");
	tg_thread(t, 1, 701, "main");
	tg_thread(t, 2, 702, "worker");
	tg_enter(t, 1, 1, 2000);
	tg_exit(t, 1, 1, 6000);
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_sample(t, 1, 2500, 0, 3, s1), 0);
	cr_assert_eq(tg_sample(t, 1, 3500, 0, 2, s3), 0);
	cr_assert_eq(tg_sample(t, 1, 4500, 0, 4, s4), 0);
	cr_assert_eq(tg_sample(t, 1, 7000, RECFMT_SAMPLE_TRUNCATED, 1, s5), 0);
	cr_assert_eq(tg_sample(t, 2, 2500, 0, 2, w1), 0);
	cr_assert_eq(tg_sample(t, 2, 3000, 0, 1, s5), 0);
	cr_assert_eq(tg_sample_drops(t, 2, 5), 0);
	cr_assert_eq(tg_finish(t, true), 0);
}

/* write_known()'s trace read by `tracetool CMD -o OUT`, which must exit 0. */
static void known_to(const char *cmd, const char *out)
{
	struct tu_result r;

	write_known();
	r = tu_run(cmd, "-o", out, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

static char *module_name(void)
{
	static char base[NAME_MAX + 1]; /* a file name: the buffers below hold it */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int len;

	exe[n > 0 ? n : 0] = '\0';
	len = snprintf(base, sizeof(base), "%s", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
	cr_assert(len >= 0 && (size_t)len < sizeof(base), "test binary name too long: %s", exe);
	return base;
}

static struct tu_result run_ok(const char *o1, const char *o2, const char *o3)
{
	struct tu_result r = tu_run("profile", "--format=csv", trace, o1, o2, o3, NULL);

	cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
	return r;
}

/* The csv's lines with the module column checked and dropped. */
static void assert_csv(const char *out, const char *header, const char *const *want, unsigned n)
{
	const char *mod = module_name();

	cr_assert_eq(tu_nr_lines(out), n + 1, "lines:\n%s", out);
	cr_assert_str_eq(tu_line(out, 0), header);
	for (unsigned i = 0; i < n; i++) {
		char line[512], *c1, *c2;

		snprintf(line, sizeof(line), "%s", tu_line(out, i + 1));
		/* The module is the second column from the function (third with thread). */
		c1 = strstr(line, "prof_");
		cr_assert(c1, "line %u: %s", i, line);
		c1 = strchr(c1 + 1, ',');
		c2 = strchr(c1 + 1, ',');
		cr_assert(c1 && c2);
		*c2 = '\0';
		cr_assert_str_eq(c1 + 1, mod, "line %u: module", i);
		memmove(c1 + 1, c2 + 1, strlen(c2 + 1) + 1);
		cr_assert_str_eq(line, want[i], "line %u", i);
	}
}

#define HEADER "function,module,self_samples,total_samples,self_percent,total_percent,est_self_ns"

Test(profile, self_and_total_per_function_a_recursive_one_once_per_sample)
{
	static const char *const want[] = {
		"prof_leaf,4,4,57.14,57.14,4000000",
		"prof_root,2,7,28.57,100.00,2000000",
		"prof_mid,1,4,14.29,57.14,1000000",
	};
	struct tu_result r;

	write_known();
	r = run_ok(NULL, NULL, NULL);
	assert_csv(r.out, HEADER, want, 3);
	tu_result_free(&r);
}

Test(profile, within_keeps_the_samples_taken_while_the_scope_was_open)
{
	static const char *const want[] = {
		"prof_leaf,2,2,66.67,66.67,2000000",
		"prof_mid,1,3,33.33,100.00,1000000",
		"prof_root,0,3,0.00,100.00,0",
	};
	struct tu_result r;

	write_known();
	r = run_ok("--within=^handle$", NULL, NULL);
	assert_csv(r.out, HEADER, want, 3);
	tu_result_free(&r);
	/* A regex no scope matches keeps nothing. */
	r = run_ok("--within=^nothing$", NULL, NULL);
	cr_assert_eq(tu_nr_lines(r.out), 1, "%s", r.out);
	tu_result_free(&r);
}

Test(profile, thread_and_window_filters_select_samples)
{
	static const char *const worker[] = {
		"prof_root,1,2,50.00,100.00,1000000", /* ties in self: by total */
		"prof_leaf,1,1,50.00,50.00,1000000",
	};
	/* From 1.5 µs to 2.5 µs after the start (tick 1000): ticks [2500, 3500). */
	static const char *const window[] = {
		"prof_leaf,2,2,66.67,66.67,2000000",
		"prof_root,1,3,33.33,100.00,1000000",
		"prof_mid,0,1,0.00,33.33,0",
	};
	struct tu_result r;

	write_known();
	r = run_ok("--thread=worker", NULL, NULL);
	assert_csv(r.out, HEADER, worker, 2);
	tu_result_free(&r);
	r = run_ok("--from=1500ns", "--to=2500ns", NULL);
	assert_csv(r.out, HEADER, window, 3);
	tu_result_free(&r);
	r = tu_run("profile", "--thread=nobody", trace, NULL);
	cr_assert_eq(r.status, 1, "exit %d", r.status);
	tu_result_free(&r);
}

Test(profile, by_thread_rows_per_thread_and_function)
{
	static const char *const want[] = {
		"main,prof_leaf,3,3,42.86,42.86,3000000",
		"main,prof_root,1,5,14.29,71.43,1000000",
		"main,prof_mid,1,4,14.29,57.14,1000000",
		"worker,prof_root,1,2,14.29,28.57,1000000",
		"worker,prof_leaf,1,1,14.29,14.29,1000000",
	};
	struct tu_result r;

	write_known();
	r = run_ok("--by-thread", NULL, NULL);
	assert_csv(r.out, "thread," HEADER, want, 5);
	tu_result_free(&r);
}

Test(profile, json_and_table_give_the_counts_drops_and_truncated_stacks)
{
	struct tu_result r;

	write_known();
	r = tu_run("profile", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out), "%s", r.out);
	cr_assert(!strncmp(r.out,
			   "{\"samples\":7,\"hz\":1000,\"period_ns\":1000000,\"dropped\":5,"
			   "\"truncated\":1,\"functions\":[{\"function\":\"prof_leaf\",",
			   strlen("{\"samples\":7,\"hz\":1000,\"period_ns\":1000000,\"dropped\":5,"
				  "\"truncated\":1,\"functions\":[{\"function\":\"prof_leaf\",")),
		  "%s", r.out);
	tu_result_free(&r);
	r = tu_run("profile", "--top=1", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 5, "%s", r.out);
	cr_assert(strstr(tu_line(r.out, 2), " 57.14%  57.14%        4        4    4.00ms  prof_leaf  ["),
		  "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 4), "7 samples at 1000 Hz (1.00ms of CPU time each), 5 dropped, "
					    "1 with a truncated stack");
	tu_result_free(&r);
}

Test(profile, frames_outside_any_module_count_for_one_unnamed_row)
{
	struct tg_trace *t = begin_trace();
	const uint64_t a[] = { 0x10, ROOT }, b[] = { 0x20, ROOT };
	struct tu_result r;

	tg_thread(t, 1, 701, "main");
	tg_sample(t, 1, 1500, 0, 2, a);
	tg_sample(t, 1, 1600, 0, 2, b);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("profile", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tu_nr_lines(r.out), 3, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 1), "[no module],,2,2,100.00,100.00,2000000");
	tu_result_free(&r);
}

Test(profile, a_recording_without_samples_is_an_error)
{
	struct tg_trace *t = new_trace(trace);
	struct tu_result r;

	tg_site(t, 1, "a");
	tg_thread(t, 1, 701, "main");
	tg_enter(t, 1, 1, 1000);
	tg_exit(t, 1, 1, 2000);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("profile", trace, NULL);
	cr_assert_eq(r.status, 1, "exit %d", r.status);
	cr_assert(strstr(r.err, "no stack samples"), "%s", r.err);
	tu_result_free(&r);
	r = tu_run("profile", "--within=(", trace, NULL);
	cr_assert_eq(r.status, 2, "exit %d", r.status);
	tu_result_free(&r);
}

/*
 * a_recording_of_samples_only_says_so_in_scope_reports: `tracetool record`
 * makes files of stack samples only; summary (the README's first command),
 * tree, histogram, flame, diff and top of such a file printed an empty table
 * ("0 of 0 scope names") and nothing else, as if the program had done
 * nothing. Each now says on stderr where the samples are read (stdout and
 * the exit status as before); profile says the opposite case
 * (a_recording_without_samples_is_an_error).
 */
Test(profile, a_recording_of_samples_only_says_so_in_scope_reports)
{
	struct tg_trace *t = begin_trace();
	const uint64_t s1[] = { LEAF, MID, ROOT };
	static const char *const cmds[] = { "summary", "tree", "histogram", "flame", "diff",
					    "top" };
	char want[600];

	tg_thread(t, 1, 701, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_sample(t, 1, 2500, 0, 3, s1), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	snprintf(want, sizeof(want),
		 "tracetool: %s: note: no scopes, only stack samples: tracetool profile, flame "
		 "--samples and tree --samples read them\n",
		 trace);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct tu_result r = strcmp(cmds[i], "diff") ? tu_run(cmds[i], trace, NULL)
							   : tu_run(cmds[i], trace, trace, NULL);

		cr_assert_eq(r.status, 0, "%s: exit %d, %s", cmds[i], r.status, r.err);
		cr_assert(strstr(r.err, want), "%s: want '%s' in:\n%s", cmds[i], want, r.err);
		tu_result_free(&r);
	}
}

Test(profile, flame_samples_folds_each_stack_root_first_with_its_count)
{
	struct tu_result r;

	write_known();
	r = tu_run("flame", "--samples", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "prof_root 2\n"
				"prof_root;prof_leaf 1\n"
				"prof_root;prof_leaf;prof_mid;prof_leaf 1\n"
				"prof_root;prof_mid 1\n"
				"prof_root;prof_mid;prof_leaf 2\n");
	tu_result_free(&r);
	r = tu_run("flame", "--samples", "--by-thread", "--within=^handle$", trace, NULL);
	cr_assert_eq(r.status, 2, "flame has no --within: exit %d", r.status);
	tu_result_free(&r);
	r = tu_run("flame", "--samples", "--by-thread", "--thread=worker", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "worker;prof_root 1\nworker;prof_root;prof_leaf 1\n");
	tu_result_free(&r);
}

Test(profile, tree_samples_gives_total_and_self_per_call_path)
{
	struct tu_result r;

	write_known();
	r = tu_run("tree", "--samples", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "path,depth,total_samples,self_samples\n"
				"prof_root,0,7,2\n"
				"prof_root;prof_mid,1,3,1\n"
				"prof_root;prof_mid;prof_leaf,2,2,2\n"
				"prof_root;prof_leaf,1,2,1\n"
				"prof_root;prof_leaf;prof_mid,2,1,0\n"
				"prof_root;prof_leaf;prof_mid;prof_leaf,3,1,1\n");
	tu_result_free(&r);
	r = tu_run("tree", "--samples", "--format=csv", "--by-thread", "--depth=0", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "thread,path,depth,total_samples,self_samples\n"
				"main,prof_root,0,5,1\n"
				"worker,prof_root,0,2,1\n");
	tu_result_free(&r);
	r = tu_run("tree", "--samples", "--callers=x", trace, NULL);
	cr_assert_eq(r.status, 2);
	tu_result_free(&r);
}

/* pprof's default for a sampled recording: the samples, read by go tool pprof. */
Test(profile, pprof_defaults_to_samples_with_their_cpu_time)
{
	char cmd[512], *out;
	struct tu_result r;

	if (system("command -v go >/dev/null 2>&1"))
		cr_skip_test("no go (Debian golang-go)");
	known_to("pprof", prof);
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp go tool pprof -top -unit=ns '%s' 2>/dev/null | "
		 "awk '$NF ~ /^prof_/ {print $NF, $1, $4}' | sort; "
		 "HOME=/tmp go tool pprof -raw '%s' 2>/dev/null | sed -n 's/^Period: //p;s/^PeriodType: //p'",
		 prof, prof);
	out = calloc(1, 4096);
	cmd_output(cmd, out, 4096);
	cr_assert_str_eq(out, "prof_leaf 4000000ns 4000000ns\n"
			      "prof_mid 1000000ns 4000000ns\n"
			      "prof_root 2000000ns 7000000ns\n"
			      "cpu nanoseconds\n"
			      "1000000\n");
	free(out);
	/* --weight=time of a sampled recording: its one scope. */
	r = tu_run("pprof", "--weight=time", "-o", prof, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

Test(profile, info_counts_the_samples_and_their_drops)
{
	struct tu_result r;

	write_known();
	r = tu_run("info", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nstack samples:    7 at 1000 Hz of CPU time, 5 dropped\n"), "%s",
		  r.out);
	tu_result_free(&r);
	r = tu_run("info", "--format=json", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, ",\"sampling\":{\"hz\":1000,\"period_ns\":1000000,\"samples\":7,"
				"\"dropped\":5}"),
		  "%s", r.out);
	tu_result_free(&r);
}

/* export: a samples table (docs/EXPORT.md), a row per sample in file order. */
Test(profile, export_writes_a_row_per_sample)
{
	char dir[256], path[300], want[4096];
	const char *mod = module_name();
	struct tu_result r;
	FILE *f;
	size_t n;

	write_known();
	snprintf(dir, sizeof(dir), "%s.d", trace);
	r = tu_run("export", "--format=csv", "-o", dir, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
	snprintf(path, sizeof(path), "%s/samples.csv", dir);
	f = fopen(path, "r");
	cr_assert(f, "no %s", path);
	char *got = calloc(1, 8192);
	n = fread(got, 1, 8191, f);
	got[n] = '\0';
	fclose(f);
	snprintf(want, sizeof(want),
		 "run_id,thread_id,ts_ns,ts_unix_ns,function,module,stack,truncated\n"
		 "0,1,500,1700000000000000500,prof_leaf,%s,prof_root;prof_mid;prof_leaf,false\n"
		 "0,1,1500,1700000000000001500,prof_leaf,%s,prof_root;prof_mid;prof_leaf,false\n"
		 "0,1,2500,1700000000000002500,prof_mid,%s,prof_root;prof_mid,false\n"
		 "0,1,3500,1700000000000003500,prof_leaf,%s,prof_root;prof_leaf;prof_mid;prof_leaf,false\n"
		 "0,1,6000,1700000000000006000,prof_root,%s,prof_root,true\n"
		 "0,2,1500,1700000000000001500,prof_leaf,%s,prof_root;prof_leaf,false\n"
		 "0,2,2000,1700000000000002000,prof_root,%s,prof_root,false\n",
		 mod, mod, mod, mod, mod, mod, mod);
	cr_assert_str_eq(got, want);
	free(got);
	cr_assert(tu_rm_rf(dir), "%s", dir);
}

static unsigned count_of(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* perfetto: the samples as Perfetto callstack samples (PerfSample with
 * interned function names, frames and callstacks), decoded by protoc. */
Test(profile, perfetto_writes_callstack_samples_per_thread)
{
	const char *proto = getenv("PERFETTO_PROTO");
	char cmd[1024];
	char *out = calloc(1, 1 << 20);

	if (!proto || system("command -v protoc >/dev/null 2>&1"))
		cr_skip_test("no protoc");
	known_to("perfetto", prof);
	snprintf(cmd, sizeof(cmd), "protoc --decode=perfetto.protos.Trace -I \"$(dirname '%s')\" '%s' < '%s'",
		 proto, proto, prof);
	cr_assert_eq(cmd_output(cmd, out, 1 << 20), 0, "protoc failed");
	cr_assert_eq(count_of(out, "perf_sample {"), 7, "%s", out);
	cr_assert_eq(count_of(out, "\n    tid: 701\n"), 5);
	cr_assert_eq(count_of(out, "\n    tid: 702\n"), 2);
	cr_assert_eq(count_of(out, "cpu_mode: 2\n"), 7);
	/* Interned once per thread's sequence: leaf and root on both, mid on main's. */
	cr_assert_eq(count_of(out, "str: \"prof_leaf\""), 2);
	cr_assert_eq(count_of(out, "str: \"prof_root\""), 2);
	cr_assert_eq(count_of(out, "str: \"prof_mid\""), 1);
	/* 4 distinct stacks on main, 2 on worker. */
	cr_assert_eq(count_of(out, "callstacks {"), 6);
	free(out);
}

/*
 * A stripped program (as Debian ships them) is named from its detached
 * debug file of the same build-id, DIR/.build-id/NN/REST.debug
 * (TRACETOOL_DEBUG_DIR; default /usr/lib/debug), as perf and gdb do.
 */
Test(profile, a_stripped_module_is_named_from_its_debug_file)
{
	char exe[1024], dir[512], cmd[16384], id[128] = "", stripped[600];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct tg_self_map m;
	struct tu_result r;

	if (system("command -v objcopy >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1"))
		cr_skip_test("no binutils");
	cr_assert(n > 0);
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | sed -n 's/.*Build ID: *//p'", exe);
	cmd_output(cmd, id, sizeof(id));
	id[strcspn(id, "\n")] = '\0';
	if (strlen(id) < 4)
		cr_skip_test("the test program has no build-id");
	snprintf(dir, sizeof(dir), "%s.dbg", trace);
	snprintf(stripped, sizeof(stripped), "%s/prog", dir);
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && mkdir -p '%s/.build-id/%.2s' && "
		 "objcopy --only-keep-debug '%s' '%s/.build-id/%.2s/%s.debug' && "
		 "objcopy --strip-all '%s' '%s'",
		 dir, dir, id, exe, dir, id, id + 2, exe, stripped);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	tg_self_map(&m);
	struct tg_trace *t = new_trace(trace);
	const uint64_t s1[] = { LEAF, MID, ROOT };

	cr_assert_eq(tg_module(t, 1, stripped, m.bias, m.lo, m.hi), 0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	tg_thread(t, 1, 701, "main");
	tg_sample(t, 1, 1500, 0, 3, s1);
	cr_assert_eq(tg_finish(t, true), 0);
	/* Without the debug file: the module only. */
	setenv("TRACETOOL_DEBUG_DIR", "/nonexistent", 1);
	r = tu_run("flame", "--samples", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "[prog: no symbol];[prog: no symbol];[prog: no symbol] 1\n");
	tu_result_free(&r);
	setenv("TRACETOOL_DEBUG_DIR", dir, 1);
	r = tu_run("flame", "--samples", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "prof_root;prof_mid;prof_leaf 1\n");
	tu_result_free(&r);
	cr_assert(tu_rm_rf(dir), "%s", dir);
}

/* chrome: a sample is an instant on its thread's track, with its stack. */
Test(profile, chrome_puts_each_sample_on_its_threads_track)
{
	struct tu_result r;

	write_known();
	r = tu_run("chrome", "-o", "-", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(tu_json_valid(r.out));
	cr_assert_eq(count_of(r.out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\""), 7);
	cr_assert(strstr(r.out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"name\":\"prof_leaf\","
				"\"pid\":4242,\"tid\":701,\"ts\":0.500,\"args\":{\"stack\":"
				"\"prof_root;prof_mid;prof_leaf\"}}"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"name\":\"prof_root\","
				"\"pid\":4242,\"tid\":702,\"ts\":2.000,\"args\":{\"stack\":"
				"\"prof_root\"}}"),
		  "%s", r.out);
	tu_result_free(&r);
	/* --thread and --from/--to select them as they select scopes. */
	r = tu_run("chrome", "-o", "-", "--thread=worker", "--from=1600ns", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(count_of(r.out, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\""), 1, "%s",
		     r.out);
	cr_assert_eq(count_of(r.out, "{\"ph\":\"P\",\"cat\":\"sample\""), 1, "%s", r.out);
	tu_result_free(&r);
}

/* This program's executable PT_LOAD segment (what librec records as a
 * module's range), its file offset and its build-id (the NT_GNU_BUILD_ID
 * note, read from memory). */
struct exec_seg {
	uint64_t bias, lo, hi, offset;
	uint8_t id[64];
	uint32_t id_bytes;
};

static int find_exec(struct dl_phdr_info *info, size_t size, void *data)
{
	struct exec_seg *e = data;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;
	e->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && !e->hi) {
			e->lo = info->dlpi_addr + ph->p_vaddr;
			e->hi = e->lo + ph->p_memsz;
			e->offset = ph->p_offset;
		}
		if (ph->p_type == PT_NOTE) {
			const uint8_t *n = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
			const uint8_t *end = n + ph->p_memsz;

			while (n + 12 <= end) {
				const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)n;
				const uint8_t *name = n + sizeof(*nh);
				const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

				if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
				    !memcmp(name, "GNU", 4) && nh->n_descsz <= sizeof(e->id)) {
					memcpy(e->id, desc, nh->n_descsz);
					e->id_bytes = nh->n_descsz;
				}
				n = desc + ((nh->n_descsz + 3) & ~3u);
			}
		}
	}
	return 1;
}

/*
 * A trace of this program's own code, its module recorded with build-id id
 * (id_bytes; NULL: its own) and three samples on thread 701 (LEAF MID ROOT,
 * MID ROOT, and 0x10 ROOT: an address in no module), read by `tracetool
 * CMD -o prof`. exe: the program's path; e: its executable segment.
 */
static void own_samples(const char *cmd, char exe[4096], struct exec_seg *e, const uint8_t *id,
			uint32_t id_bytes)
{
	ssize_t n = readlink("/proc/self/exe", exe, 4095);
	const uint64_t s1[] = { LEAF, MID, ROOT }, s2[] = { MID, ROOT }, out1[] = { 0x10, ROOT };
	struct tu_result r;

	cr_assert(n > 0);
	exe[n] = '\0';
	memset(e, 0, sizeof(*e));
	dl_iterate_phdr(find_exec, e);
	cr_assert(e->hi > e->lo && e->id_bytes >= 4, "no executable segment or build-id");
	struct tg_trace *t = new_trace(trace);

	cr_assert_eq(tg_module_build_id(t, 1, exe, e->bias, e->lo, e->hi, id ? id : e->id,
					id ? id_bytes : e->id_bytes),
		     0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	tg_thread(t, 1, 701, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_sample(t, 1, 2500, 0, 2, s2), 0);
	cr_assert_eq(tg_sample(t, 1, 3500, 0, 2, out1), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run(cmd, "-o", prof, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);
}

/* protoc's text of the profile `prof` (pprof's own profile.proto), or skip. */
static char *protoc_profile(void)
{
	const char *proto = getenv("PPROF_PROTO");
	char cmd[1024];
	char *out = calloc(1, 1 << 20);

	if (!proto || access(proto, R_OK) || system("command -v protoc >/dev/null 2>&1"))
		cr_skip_test("no protoc or pprof's profile.proto (golang-github-google-pprof-dev)");
	snprintf(cmd, sizeof(cmd),
		 "gzip -dc '%s' | protoc --decode=perftools.profiles.Profile -I \"$(dirname '%s')\" '%s'",
		 prof, proto, proto);
	cr_assert(out);
	cr_assert_eq(cmd_output(cmd, out, 1 << 20), 0, "protoc failed");
	return out;
}

/* The decoded profile's string table entry i. */
static const char *pstr(const char *text, long long i, char *buf, size_t bytes)
{
	const char *p = text;

	for (long long k = 0; (p = strstr(p, "string_table: \"")); k++, p++)
		if (k == i) {
			p += 15;
			snprintf(buf, bytes, "%.*s", (int)strcspn(p, "\""), p);
			return buf;
		}
	cr_assert_fail("no string %lld", i);
	return NULL;
}

/* The value of "field: V" within the block that starts at b (up to its
 * closing brace at the block's own indent), or -1. */
static long long field_in(const char *b, const char *field)
{
	const char *end = strstr(b, "\n}");
	char key[64];
	const char *f;

	snprintf(key, sizeof(key), "\n  %s: ", field);
	f = strstr(b, key);
	if (!f || (end && f > end))
		return -1;
	f += strlen(key);
	if (!strncmp(f, "true", 4))
		return 1;
	return strtoll(f, NULL, 10);
}

/* Whether the block that starts at b has a "line {" (a Location's Line). */
static bool has_line(const char *b)
{
	const char *end = strstr(b, "\n}"), *l = strstr(b, "\n  line {");

	return l && (!end || l < end);
}

static unsigned blocks(const char *text, const char *name, const char **at, unsigned max)
{
	char key[64];
	unsigned n = 0;

	snprintf(key, sizeof(key), "\n%s {\n", name);
	for (const char *p = strstr(text, key); p && n < max; p = strstr(p + 1, key))
		at[n++] = p + 1;
	return n;
}

/*
 * profile.proto's readers take mapping 1 for the program (go tool pprof's
 * "File:" and "Build ID:"): the main program's mapping comes first even when
 * the first sample's leaf is in a library.
 */
Test(profile, pprof_first_mapping_is_the_main_program)
{
	static const uint8_t lib_id[] = { 0x11, 0x22, 0x33, 0x44 };
	static const uint8_t prog_id[] = { 0xaa, 0xbb, 0xcc, 0xdd };
	const uint64_t s1[] = { 0x7f0000001100, 0x400200, 0x400100 };
	const char *map[4];
	char buf[256];
	struct tu_result r;
	struct tg_trace *t = new_trace(trace);

	cr_assert_eq(tg_module_flags(t, 1, 0, "/lib/libfake.so", 0x7f0000000000, 0x7f0000001000,
				     0x7f0000002000, lib_id, sizeof(lib_id)), 0);
	cr_assert_eq(tg_module_flags(t, 2, RECFMT_MODULE_MAIN, "/usr/bin/fakeprog", 0, 0x400000,
				     0x401000, prog_id, sizeof(prog_id)), 0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	tg_thread(t, 1, 702, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("pprof", "-o", prof, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);

	char *text = protoc_profile();

	cr_assert_eq(blocks(text, "mapping", map, 4), 2, "%s", text);
	cr_assert_eq(field_in(map[0], "id"), 1);
	cr_assert_str_eq(pstr(text, field_in(map[0], "filename"), buf, sizeof(buf)),
			 "/usr/bin/fakeprog");
	cr_assert_eq(field_in(map[1], "id"), 2);
	cr_assert_str_eq(pstr(text, field_in(map[1], "filename"), buf, sizeof(buf)),
			 "/lib/libfake.so");
	free(text);
}

/*
 * pprof --weight=samples: each frame is a Location with its address (frame
 * 0's own, a caller's return address - 1) in the Mapping of its module: the
 * recorded executable range, the segment's file offset (from the file's
 * program headers), the recorded path and build-id, has_functions (the names
 * are the file's own). A frame outside every module has a Location with its
 * address and no mapping. go tool pprof lists the mapping as its own.
 */
Test(profile, pprof_samples_are_addresses_in_their_modules_mapping)
{
	struct exec_seg e;
	char exe[4096], hexid[140] = "", buf[4096], cmd[8192];
	const char *map[4], *loc[8];

	own_samples("pprof", exe, &e, NULL, 0);
	for (uint32_t i = 0; i < e.id_bytes; i++)
		snprintf(hexid + 2 * i, 3, "%02x", e.id[i]);

	char *text = protoc_profile();

	cr_assert_eq(blocks(text, "mapping", map, 4), 1, "%s", text);
	cr_assert_eq(field_in(map[0], "id"), 1);
	cr_assert_eq((uint64_t)field_in(map[0], "memory_start"), e.lo);
	cr_assert_eq((uint64_t)field_in(map[0], "memory_limit"), e.hi);
	cr_assert_eq((uint64_t)field_in(map[0], "file_offset"), e.offset ? e.offset : (uint64_t)-1);
	cr_assert_str_eq(pstr(text, field_in(map[0], "filename"), buf, sizeof(buf)), exe);
	cr_assert_str_eq(pstr(text, field_in(map[0], "build_id"), buf, sizeof(buf)), hexid);
	cr_assert_eq(field_in(map[0], "has_functions"), 1);
	/* LEAF, MID - 1, ROOT - 1 (s1); MID (s2's leaf); 0x10 and ROOT - 1 again. */
	cr_assert_eq(blocks(text, "location", loc, 8), 5, "%s", text);
	const uint64_t want[] = { LEAF, MID - 1, ROOT - 1, MID, 0x10 };

	for (unsigned i = 0; i < 5; i++) {
		cr_assert_eq((uint64_t)field_in(loc[i], "address"), want[i], "location %u", i);
		cr_assert_eq(field_in(loc[i], "mapping_id"), i < 4 ? 1 : -1, "location %u", i);
		/* 0x10, in no module, is an address alone: no Line, no Function. */
		cr_assert_eq(has_line(loc[i]), i < 4, "location %u", i);
	}
	free(text);
	if (system("command -v go >/dev/null 2>&1"))
		return;
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp go tool pprof -raw '%s' 2>/dev/null | sed -n '/^Mappings/,$p'", prof);
	cmd_output(cmd, buf, sizeof(buf));
	snprintf(cmd, sizeof(cmd), "Mappings\n1: %#" PRIx64 "/%#" PRIx64 "/%#" PRIx64 " %s %s [FN]\n",
		 e.lo, e.hi, e.offset, exe, hexid);
	cr_assert_str_eq(buf, cmd);
	/* pprof's own symbolizer, forced, reads this program's file through the
	 * mapping (start, offset, build-id): each address lands in its function,
	 * with the source file when the program has line tables. */
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp go tool pprof -symbolize=local:force -lines -traces '%s' 2>/dev/null | "
		 "awk '{for (i = 1; i <= NF; i++) if ($i ~ /^prof_/) print $i, $(i + 1) ~ "
		 "/test_profile[.]c:[0-9]+$/}' | sort | uniq -c | awk '{print $2, $3, $1}'",
		 prof);
	cmd_output(cmd, buf, sizeof(buf));
	/* prof_leaf once (s1), prof_mid twice (s1, s3), prof_root on the three
	 * stacks; each with its file:line when the program has line tables. */
	snprintf(cmd, sizeof(cmd), "readelf -S '%s' 2>/dev/null | grep -q debug_line", exe);
	bool lines = !system(cmd);

	cr_assert_str_eq(buf, lines ? "prof_leaf 1 1\nprof_mid 1 2\nprof_root 1 3\n"
				    : "prof_leaf 0 1\nprof_mid 0 2\nprof_root 0 3\n");
}

/*
 * perfetto_frames_carry_their_module: each sampled frame of the Perfetto
 * trace is one address, a Frame with its function's name, the Mapping of
 * its module (InternedData mappings: start, end, file offset, the path in
 * mapping_paths and the build-id's bytes in build_ids) and rel_pc, its
 * offset in that file, as Perfetto's own profilers write them
 * (tracetool(1), "perfetto"); a frame outside every module has neither.
 */
Test(profile, perfetto_frames_carry_their_module)
{
	const char *proto = getenv("PERFETTO_PROTO");
	struct exec_seg e;
	char exe[4096], cmd[8192], want[4400];
	char *out = calloc(1, 1 << 20);

	if (!proto || system("command -v protoc >/dev/null 2>&1"))
		cr_skip_test("no protoc");
	cr_assert(out);
	own_samples("perfetto", exe, &e, NULL, 0);
	snprintf(cmd, sizeof(cmd),
		 "protoc --decode=perfetto.protos.Trace -I \"$(dirname '%s')\" '%s' < '%s'", proto,
		 proto, prof);
	cr_assert_eq(cmd_output(cmd, out, 1 << 20), 0, "protoc failed");
	/* One module, interned once on the thread's sequence. */
	cr_assert_eq(count_of(out, "mappings {"), 1, "%s", out);
	snprintf(want, sizeof(want),
		 "mappings {\n      iid: 1\n      build_id: 1\n      start_offset: %" PRIu64
		 "\n      start: %" PRIu64 "\n      end: %" PRIu64 "\n      path_string_ids: 1\n",
		 e.offset, e.lo, e.hi);
	cr_assert(strstr(out, want), "want\n%s\nin\n%s", want, out);
	snprintf(want, sizeof(want), "mapping_paths {\n      iid: 1\n      str: \"%s\"\n", exe);
	cr_assert(strstr(out, want), "want\n%s\nin\n%s", want, out);
	/* The build-id's bytes (protoc escapes them): one entry, iid 1. */
	cr_assert_eq(count_of(out, "build_ids {\n      iid: 1\n      str: \""), 1, "%s", out);
	/* Five addresses: LEAF, MID - 1, ROOT - 1 (s1); MID (s2's leaf); 0x10. */
	cr_assert_eq(count_of(out, "frames {"), 5, "%s", out);
	cr_assert_eq(count_of(out, "mapping_id: 1\n"), 4, "%s", out);
	const uint64_t in_module[] = { LEAF, MID - 1, ROOT - 1, MID };

	for (unsigned i = 0; i < 4; i++) {
		snprintf(want, sizeof(want), "mapping_id: 1\n      rel_pc: %" PRIu64 "\n",
			 in_module[i] - e.lo + e.offset);
		cr_assert_eq(count_of(out, want), 1, "frame %u: want\n%s\nin\n%s", i, want, out);
	}
	cr_assert_eq(count_of(out, "perf_sample {"), 3, "%s", out);
	free(out);
}

/* A module whose file has another build-id: its mapping keeps the recorded
 * build-id, no file offset and no has_functions (pprof may look for the
 * right file itself), and its frames, which profile calls
 * "[module: build-id mismatch]", are Locations with their addresses and no
 * Line (pprof_unnamed_frames_are_addresses_without_a_line: as perf keeps
 * them, not all of them one function). */
Test(profile, pprof_mapping_of_a_changed_file_has_no_functions)
{
	struct exec_seg e = { 0 };
	char exe[4096], buf[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const uint8_t other[] = { 0xde, 0xad, 0xbe, 0xef };
	const uint64_t s1[] = { LEAF, MID, ROOT };
	const char *map[4], *fn[8], *loc[8];
	struct tu_result r;

	cr_assert(n > 0);
	exe[n] = '\0';
	dl_iterate_phdr(find_exec, &e);
	struct tg_trace *t = new_trace(trace);

	cr_assert_eq(tg_module_build_id(t, 1, exe, e.bias, e.lo, e.hi, other, 4), 0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	tg_thread(t, 1, 701, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("pprof", "-o", prof, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "build-id mismatch"), "%s", r.err);
	tu_result_free(&r);

	char *text = protoc_profile();

	cr_assert_eq(blocks(text, "mapping", map, 4), 1, "%s", text);
	cr_assert_str_eq(pstr(text, field_in(map[0], "build_id"), buf, sizeof(buf)), "deadbeef");
	cr_assert_eq(field_in(map[0], "file_offset"), -1);
	cr_assert_eq(field_in(map[0], "has_functions"), -1);
	/* pprof_unnamed_frames_are_addresses_without_a_line: three addresses,
	 * three Locations in the mapping, none with a Line, no Function. */
	cr_assert_eq(blocks(text, "function", fn, 8), 0, "%s", text);
	cr_assert_eq(blocks(text, "location", loc, 8), 3, "%s", text);
	for (unsigned i = 0; i < 3; i++) {
		cr_assert_eq(field_in(loc[i], "mapping_id"), 1, "location %u", i);
		cr_assert(!has_line(loc[i]), "location %u:\n%s", i, text);
	}
	free(text);
	/* profile still gives them one row for the module, named so. */
	r = tu_run("profile", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(exe, sizeof(exe), "[%s: build-id mismatch],", module_name());
	cr_assert(!strncmp(tu_line(r.out, 1), exe, strlen(exe)), "%s", r.out);
	tu_result_free(&r);
}

/*
 * F21 (check4): a module some of whose frames are named and some not (an
 * address past its last function: "[module: no symbol]") keeps
 * has_functions, its named frames their Lines and the other its address
 * alone. Without has_functions, go tool pprof names every location of the
 * mapping again by itself, replacing these names (an inlined frame of a
 * Python build then showed as a bare file:line of no function).
 */
Test(profile, F21_pprof_partly_named_module_keeps_has_functions)
{
	struct exec_seg e = { 0 };
	char exe[4096], want[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *map[4], *loc[8];
	struct tu_result r;

	cr_assert(n > 0);
	exe[n] = '\0';
	dl_iterate_phdr(find_exec, &e);
	cr_assert(e.hi > e.lo && e.id_bytes >= 4, "no executable segment or build-id");

	const uint64_t s1[] = { LEAF, MID, ROOT }, s2[] = { e.hi + 0x10, ROOT };
	struct tg_trace *t = new_trace(trace);

	/* The recorded range reaches past the segment's last function. */
	cr_assert_eq(tg_module_build_id(t, 1, exe, e.bias, e.lo, e.hi + 0x1000, e.id, e.id_bytes),
		     0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	tg_thread(t, 1, 703, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_sample(t, 1, 2500, 0, 2, s2), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("profile", "--format=csv", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "\n[%s: no symbol],", module_name());
	cr_assert(strstr(r.out, want), "%s", r.out);
	cr_assert(strstr(r.out, "\nprof_leaf,"), "%s", r.out);
	tu_result_free(&r);
	r = tu_run("pprof", "-o", prof, trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tu_result_free(&r);

	char *text = protoc_profile();

	cr_assert_eq(blocks(text, "mapping", map, 4), 1, "%s", text);
	cr_assert_eq(field_in(map[0], "has_functions"), 1, "%s", text);
	/* LEAF, MID - 1, ROOT - 1 (s1), then the unnamed address (s2). */
	cr_assert_eq(blocks(text, "location", loc, 8), 4, "%s", text);
	for (unsigned i = 0; i < 4; i++) {
		cr_assert_eq(field_in(loc[i], "mapping_id"), 1, "location %u", i);
		cr_assert_eq(has_line(loc[i]), i < 3, "location %u:\n%s", i, text);
	}
	cr_assert_eq((uint64_t)field_in(loc[3], "address"), e.hi + 0x10);
	free(text);
}

/*
 * chrome: each sample is also a Trace Event Format sample event ("P") whose
 * "sf" names its leaf in the top-level "stackFrames" tree (name, module as
 * category, parent), as chrome://tracing reads sampled stacks: read back
 * with Python's json, every sample's chain of frames, root first, is the
 * stack of its instant, and each distinct call path is one frame.
 */
Test(profile, chrome_sample_events_reference_their_stack_frames)
{
	char cmd[2048], out[4096];
	const char *json = tu_path(2, "profile.json");

	if (system("command -v python3 >/dev/null 2>&1"))
		cr_skip_test("no python3");
	known_to("chrome", json);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c '\n"
		 "import json, sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "sf = d[\"stackFrames\"]\n"
		 "def path(i):\n"
		 "    f = sf[str(i)]\n"
		 "    p = path(f[\"parent\"]) + \";\" if \"parent\" in f else \"\"\n"
		 "    return p + f[\"name\"] + \"@\" + f[\"category\"]\n"
		 "ev = d[\"traceEvents\"]\n"
		 "ps = [e for e in ev if e[\"ph\"] == \"P\"]\n"
		 "ins = [e for e in ev if e[\"ph\"] == \"i\" and e.get(\"cat\") == \"sample\"]\n"
		 "assert len(ps) == len(ins)\n"
		 "for a, b in zip(ps, ins):\n"
		 "    assert (a[\"tid\"], a[\"ts\"], a[\"name\"]) == (b[\"tid\"], b[\"ts\"], b[\"name\"])\n"
		 "    got = \";\".join(x.split(\"@\")[0] for x in path(a[\"sf\"]).split(\";\"))\n"
		 "    assert got == b[\"args\"][\"stack\"], (got, b)\n"
		 "    print(a[\"tid\"], a[\"ts\"], path(a[\"sf\"]))\n"
		 "print(len(sf), \"frames\")\n"
		 "' '%s' | sed 's/@[^;]*\\(;\\|$\\)/\\1/g'",
		 json);
	cr_assert_eq(cmd_output(cmd, out, sizeof(out)), 0, "python3 failed: %s", out);
	unlink(json);
	/* Frames, one per call path: root; root>mid; root>mid>leaf; root>leaf;
	 * root>leaf>mid; root>leaf>mid>leaf. */
	cr_assert_str_eq(out, "701 0.5 prof_root;prof_mid;prof_leaf\n"
			      "701 1.5 prof_root;prof_mid;prof_leaf\n"
			      "701 2.5 prof_root;prof_mid\n"
			      "701 3.5 prof_root;prof_leaf;prof_mid;prof_leaf\n"
			      "701 6.0 prof_root\n"
			      "702 1.5 prof_root;prof_leaf\n"
			      "702 2.0 prof_root\n"
			      "6 frames\n");
}

/* A sampled trace at `path` of process `pid` (this program's module). */
static struct tg_trace *begin_process(const char *path, uint32_t pid)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = pid, .start_real_ns = 1700000000000000000ull };
	struct tg_trace *t = tg_create(path, &cfg);
	struct tg_self_map m;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert(t && n > 0);
	exe[n] = '\0';
	tg_self_map(&m);
	cr_assert_eq(tg_module(t, 1, exe, m.bias, m.lo, m.hi), 0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	return t;
}

/*
 * profile --by-process over a parent's and a child's files (REC_OUTPUT with
 * %p): a first column process, NAME[PID] as summary --by-process writes it
 * (here the name of the thread whose tid is the pid: no main program's MODULE),
 * self and total per process and function, shares of all the samples kept;
 * with --by-thread too, process then thread.
 */
Test(profile, by_process_rows_per_process_and_function)
{
	const char *child = tu_path(2, "profile-child.zst");
	const uint64_t s1[] = { LEAF, MID, ROOT }, s3[] = { MID, ROOT }, s5[] = { ROOT };
	char want[8][NAME_MAX + 64], hdr[NAME_MAX + 64]; /* a row with the module's name */
	const char *mod = module_name();
	struct tg_trace *t = begin_process(trace, 4242);
	struct tu_result r;

	tg_thread(t, 1, 4242, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_sample(t, 1, 2500, 0, 3, s1), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	t = begin_process(child, 4243);
	tg_thread(t, 1, 4243, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 2, s3), 0);
	cr_assert_eq(tg_sample(t, 1, 2500, 0, 1, s5), 0);
	cr_assert_eq(tg_finish(t, true), 0);

	r = tu_run("profile", "--format=csv", "--by-process", trace, child, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want[0], sizeof(want[0]), "main[4242],prof_leaf,%s,2,2,50.00,50.00,2000000", mod);
	snprintf(want[1], sizeof(want[1]), "main[4243],prof_root,%s,1,2,25.00,50.00,1000000", mod);
	snprintf(want[2], sizeof(want[2]), "main[4243],prof_mid,%s,1,1,25.00,25.00,1000000", mod);
	snprintf(want[3], sizeof(want[3]), "main[4242],prof_mid,%s,0,2,0.00,50.00,0", mod);
	snprintf(want[4], sizeof(want[4]), "main[4242],prof_root,%s,0,2,0.00,50.00,0", mod);
	cr_assert_eq(tu_nr_lines(r.out), 6, "%s", r.out);
	cr_assert_str_eq(tu_line(r.out, 0), "process," HEADER);
	for (unsigned i = 0; i < 5; i++)
		cr_assert_str_eq(tu_line(r.out, i + 1), want[i], "line %u: %s", i + 1, r.out);
	tu_result_free(&r);

	r = tu_run("profile", "--format=csv", "--by-process", "--by-thread", "--top=1", trace, child,
		   NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(hdr, sizeof(hdr), "main[4242],main,prof_leaf,%s,2,2,50.00,50.00,2000000", mod);
	cr_assert_str_eq(tu_line(r.out, 0), "process,thread," HEADER);
	cr_assert_str_eq(tu_line(r.out, 1), hdr);
	tu_result_free(&r);

	r = tu_run("profile", "--format=json", "--by-process", "--top=1", trace, child, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(hdr, sizeof(hdr), "\"functions\":[{\"process\":\"main[4242]\",\"function\":\"prof_leaf\"");
	cr_assert(strstr(r.out, hdr), "%s", r.out);
	tu_result_free(&r);
	unlink(child);
}

/*
 * The cut after `at`: every 7th byte in the first 64, then every 23rd, and
 * every frame's first byte (a cut exactly at a frame's end, what kill -9
 * leaves), wherever the frames fall: the test's own path fills the first
 * frame's MODULE record, so their offsets move with it.
 */
static long next_cut(long at, const uint64_t *offs, size_t nr_frames)
{
	long next = at + (at < 64 ? 7 : 23);

	for (size_t k = 1; k < nr_frames; k++)
		if ((long)offs[k] > at && (long)offs[k] < next)
			next = (long)offs[k];
	return next;
}

/*
 * A sampled recording cut anywhere (the program killed, the disk full): cut
 * inside its first frame it cannot be read, and each command that reads
 * samples exits 1 with one line "tracetool: FILE: problem"; cut later it is
 * read up to its last complete frame, exit 0 with a warning, the samples
 * kept never more than a longer cut keeps (profile --format=json), all 40
 * in the whole file (tracetool(1), EXIT STATUS).
 */
Test(profile, a_cut_sampled_recording_exits_1_with_one_line_or_reads_its_whole_frames)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .pid = 4242, .start_real_ns = 1700000000000000000ull,
				 .frame_bytes = 200, .block_events = 4 };
	const char *cut = tu_path(2, "profile-cut.zst");
	const char *json = tu_path(3, "profile-cut.json");
	const uint64_t s1[] = { LEAF, MID, ROOT }, s3[] = { MID, ROOT };
	struct tg_trace *t = tg_create(trace, &cfg);
	struct tg_self_map m;
	uint64_t offs[64], last = 0;
	char exe[4096], cmd[8192];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t nr_frames;
	FILE *f;
	long size;

	cr_assert(t && n > 0);
	exe[n] = '\0';
	tg_self_map(&m);
	cr_assert_eq(tg_module(t, 1, exe, m.bias, m.lo, m.hi), 0);
	cr_assert_eq(tg_sampling(t, 1000, 128), 0);
	tg_site(t, 1, "handle");
	tg_thread(t, 1, 701, "main");
	tg_thread(t, 2, 702, "worker");
	for (uint32_t i = 0; i < 20; i++) {
		tg_enter(t, 1, 1, 2000 + 100 * i);
		cr_assert_eq(tg_sample(t, 1, 2050 + 100 * i, 0, 3, s1), 0);
		tg_exit(t, 1, 1, 2090 + 100 * i);
		cr_assert_eq(tg_sample(t, 2, 2060 + 100 * i, 0, 2, s3), 0);
	}
	cr_assert_eq(tg_finish(t, true), 0);
	nr_frames = tg_file_frame_offsets(trace, offs, 64);
	cr_assert_gt(nr_frames, 4, "want several frames, got %zu", nr_frames);
	f = fopen(trace, "rb");
	cr_assert(f && !fseek(f, 0, SEEK_END));
	size = ftell(f);
	fclose(f);
	for (long at = 1; at <= size; at = next_cut(at, offs, nr_frames)) {
		static const char *const cmds[][4] = {
			{ "profile", NULL }, { "pprof", "-o", NULL }, { "flame", "--samples", NULL },
			{ "tree", "--samples", NULL }, { "chrome", "-o", NULL },
		};
		bool whole_first = (uint64_t)at >= offs[1];

		if (at + 23 > size)
			at = size; /* the whole file last */
		snprintf(cmd, sizeof(cmd), "head -c %ld '%s' > '%s'", at, trace, cut);
		cr_assert_eq(system(cmd), 0);
		for (unsigned c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
			const char *argv[6] = { 0 };
			unsigned k = 0;

			for (; cmds[c][k]; k++)
				argv[k] = cmds[c][k];
			if (!strcmp(argv[k - 1], "-o"))
				argv[k++] = json;
			argv[k++] = cut;
			struct tu_result r = tu_runv(argv);

			if (!whole_first) {
				cr_assert_eq(r.status, 1, "%s cut at %ld: exit %d", argv[0], at, r.status);
				cr_assert_eq(tu_nr_lines(r.err), 1, "%s cut at %ld: %s", argv[0], at, r.err);
				cr_assert(!strncmp(r.err, "tracetool: ", 11), "%s", r.err);
			} else if (r.status == 1 && !last) {
				/* The whole frames read hold no sample yet (how many
				 * the metadata fills depends on the test's own path):
				 * one line that says the file is cut, inside a frame
				 * or at a frame's end. */
				cr_assert_eq(tu_nr_lines(r.err), 1, "%s cut at %ld: %s", argv[0], at,
					     r.err);
				cr_assert(strstr(r.err, "no stack samples in its") &&
						  strstr(r.err, "the file is cut"),
					  "%s cut at %ld: %s", argv[0], at, r.err);
			} else {
				cr_assert_eq(r.status, 0, "%s cut at %ld: exit %d: %s", argv[0], at,
					     r.status, r.err);
				if (at < size)
					cr_assert(strstr(r.err, "warning"), "%s cut at %ld: %s", argv[0],
						  at, r.err);
			}
			tu_result_free(&r);
		}
		if (!whole_first)
			continue;
		struct tu_result r = tu_run("profile", "--format=json", cut, NULL);
		uint64_t kept = 0;
		const char *p = strstr(r.out, "{\"samples\":");

		if (r.status == 1 && !last && at < size) {
			tu_result_free(&r); /* no sample in the whole frames yet, as above */
			continue;
		}
		cr_assert(p, "%s", r.out);
		kept = strtoull(p + 11, NULL, 10);
		cr_assert_geq(kept, last, "cut at %ld: %" PRIu64 " samples, fewer than before", at,
			      kept);
		last = kept;
		tu_result_free(&r);
	}
	cr_assert_eq(last, 40);
	unlink(cut);
	unlink(json);
}

/* An unmodified program's recording has samples and no scope: chrome shows
 * the samples and does not warn that there is nothing to show; without
 * either, it still does. */
Test(profile, chrome_of_samples_without_scopes_does_not_warn_of_nothing_to_show)
{
	const uint64_t s1[] = { LEAF, MID, ROOT };
	struct tg_trace *t = begin_process(trace, 4242);
	struct tu_result r;

	tg_thread(t, 1, 4242, "main");
	cr_assert_eq(tg_sample(t, 1, 1500, 0, 3, s1), 0);
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("chrome", "-o", "-", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(count_of(r.out, "{\"ph\":\"P\",\"cat\":\"sample\""), 1, "%s", r.out);
	cr_assert(!strstr(r.err, "no activation to show"), "%s", r.err);
	tu_result_free(&r);
	r = tu_run("chrome", "-o", "-", "--from=1ms", trace, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "warning: no activation to show in the window"), "%s", r.err);
	tu_result_free(&r);
}

/* Splitting by thread or process when --within keeps no sample: the header
 * alone, exit 0 (fuzz_profile's first finding under UBSan: qsort() given
 * the NULL of an empty row table). */
Test(profile, by_thread_with_no_sample_kept_prints_the_header_alone)
{
	struct tu_result r;

	write_known();
	r = run_ok("--by-thread", "--by-process", "--within=^nothing$");
	cr_assert_str_eq(r.out, "process,thread," HEADER "\n");
	tu_result_free(&r);
}
