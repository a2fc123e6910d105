/* SPDX-License-Identifier: MIT */
/*
 * test_pprof.c - `tracetool pprof` (tracetool(1), "pprof") read back by
 * pprof readers that are not ours: protoc decoding the file against
 * pprof's own profile.proto (Debian golang-github-google-pprof-dev, path
 * in PPROF_PROTO), and `go tool pprof` (Debian golang-go). Each check is
 * skipped when its reader is missing. On a trace of known call structure:
 * every call path of tree is one sample with the path's exact self time
 * (or calls), stacks leaf first with the scopes' names, a site's file and
 * line in its function, thread labels with --by-thread; exit codes.
 */
#include "ttest.h"

#include <sys/wait.h>
#include <unistd.h>

static const char *trace, *prof;

static void setup(void)
{
	trace = tu_path(0, "pprof.zst");
	prof = tu_path(1, "pprof.pb.gz");
}

static void teardown(void)
{
	unlink(trace);
	unlink(prof);
}

TestSuite(pprof, .init = setup, .fini = teardown, .timeout = 120);

/*
 * Thread 1 "main": main [1000,2000) > { a [1100,1400) > b [1150,1250),
 *   b [1500,1900) > b [1550,1850) > b [1600,1700), a [1950,1990) }
 * Thread 2 "worker": w [1000,1600) > a [1100,1300) > b [1150,1200)
 * b is a site at b.c:42.
 */
static void write_known(void)
{
	struct tg_trace *t = new_trace(trace);

	cr_assert_eq(tg_known_tree(t, "b.c", 42), 0);
	cr_assert_eq(tg_finish(t, true), 0);
}

static bool have(const char *prog)
{
	char cmd[256];
	int st;

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	st = system(cmd);
	return st == 0;
}

static void pprof_ok(const char *o1, const char *o2)
{
	struct tu_result r = tu_run("pprof", "-o", prof, trace, o1, o2, NULL);

	cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
	cr_assert_str_eq(r.out, "");
	tu_result_free(&r);
}

/*
 * The profile as protoc decodes it, folded back into "root;...;leaf VALUE
 * [key=val,...]" lines (sorted) through the string, function and location
 * tables: nothing of our own decoder is used.
 */
#define MAX_ITEMS 64
struct decoded {
	char *strs[MAX_ITEMS];
	unsigned nr_strs;
	uint64_t loc_func[MAX_ITEMS + 1];   /* location id -> function id */
	int64_t func_name[MAX_ITEMS + 1];   /* function id -> name */
	int64_t func_file[MAX_ITEMS + 1], func_line[MAX_ITEMS + 1];
	struct {
		uint64_t locs[16];
		unsigned nr_locs;
		int64_t value;
		int64_t lab[4];
		unsigned nr_lab;
	} samples[MAX_ITEMS];
	unsigned nr_samples;
	int64_t sample_type[2], default_type;
	char folded[MAX_ITEMS][256];
};

static void decode(struct decoded *d)
{
	const char *proto = getenv("PPROF_PROTO");
	char cmd[1024], *out, *line, *save = NULL;
	enum { NONE, SAMPLE, LOCATION, LINE, FUNCTION, STYPE, LABEL } in = NONE, outer = NONE;
	uint64_t id = 0;
	int st;

	if (!proto || access(proto, R_OK) || !have("protoc"))
		cr_skip_test("no protoc or pprof's profile.proto (golang-github-google-pprof-dev)");
	memset(d, 0, sizeof(*d));
	snprintf(cmd, sizeof(cmd),
		 "gzip -dc '%s' | protoc --decode=perftools.profiles.Profile -I \"$(dirname '%s')\" '%s'",
		 prof, proto, proto);
	out = tu_sh(cmd, &st);
	cr_assert_eq(st, 0, "protoc failed:\n%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ')
			line++;
		long long v;
		if (!strcmp(line, "sample {"))
			in = SAMPLE, d->nr_samples++;
		else if (!strcmp(line, "location {"))
			in = LOCATION;
		else if (!strcmp(line, "line {"))
			outer = in, in = LINE;
		else if (!strcmp(line, "label {"))
			outer = in, in = LABEL;
		else if (!strcmp(line, "function {"))
			in = FUNCTION;
		else if (!strcmp(line, "sample_type {"))
			in = STYPE;
		else if (!strcmp(line, "}"))
			in = in == LINE || in == LABEL ? outer : NONE;
		else if (!strncmp(line, "string_table: \"", 15)) {
			cr_assert_lt(d->nr_strs, MAX_ITEMS);
			d->strs[d->nr_strs++] = strndup(line + 15, strlen(line + 15) - 1);
		} else if (sscanf(line, "default_sample_type: %lld", &v) == 1)
			d->default_type = v;
		else if (sscanf(line, "id: %lld", &v) == 1)
			id = (uint64_t)v;
		else if (in == SAMPLE && sscanf(line, "location_id: %lld", &v) == 1)
			d->samples[d->nr_samples - 1].locs[d->samples[d->nr_samples - 1].nr_locs++] =
				(uint64_t)v;
		else if (in == SAMPLE && sscanf(line, "value: %lld", &v) == 1)
			d->samples[d->nr_samples - 1].value = v;
		else if (in == LABEL && (sscanf(line, "key: %lld", &v) == 1 || sscanf(line, "str: %lld", &v) == 1))
			d->samples[d->nr_samples - 1].lab[d->samples[d->nr_samples - 1].nr_lab++] = v;
		else if (in == LINE && sscanf(line, "function_id: %lld", &v) == 1)
			d->loc_func[id] = (uint64_t)v;
		else if (in == FUNCTION && sscanf(line, "name: %lld", &v) == 1)
			d->func_name[id] = v;
		else if (in == FUNCTION && sscanf(line, "filename: %lld", &v) == 1)
			d->func_file[id] = v;
		else if (in == FUNCTION && sscanf(line, "start_line: %lld", &v) == 1)
			d->func_line[id] = v;
		else if (in == STYPE && sscanf(line, "type: %lld", &v) == 1)
			d->sample_type[0] = v;
		else if (in == STYPE && sscanf(line, "unit: %lld", &v) == 1)
			d->sample_type[1] = v;
	}
	free(out);
	cr_assert_str_eq(d->strs[0], "", "string_table[0] must be empty");
	for (unsigned i = 0; i < d->nr_samples; i++) {
		char *f = d->folded[i];
		size_t n = 0;

		for (unsigned k = d->samples[i].nr_locs; k-- > 0;)
			n += (size_t)snprintf(f + n, 256 - n, "%s%s", n ? ";" : "",
					      d->strs[d->func_name[d->loc_func[d->samples[i].locs[k]]]]);
		n += (size_t)snprintf(f + n, 256 - n, " %lld", (long long)d->samples[i].value);
		for (unsigned k = 0; k + 1 < d->samples[i].nr_lab; k += 2)
			n += (size_t)snprintf(f + n, 256 - n, " %s=%s", d->strs[d->samples[i].lab[k]],
					      d->strs[d->samples[i].lab[k + 1]]);
	}
	qsort(d->folded, d->nr_samples, sizeof(d->folded[0]), (int (*)(const void *, const void *))strcmp);
}

static void decoded_fini(struct decoded *d)
{
	for (unsigned i = 0; i < d->nr_strs; i++)
		free(d->strs[i]);
}

static void assert_folded(const struct decoded *d, const char *const *want, unsigned n)
{
	cr_assert_eq(d->nr_samples, n, "samples: %u, want %u (first: %s)", d->nr_samples, n,
		     d->folded[0]);
	for (unsigned i = 0; i < n; i++)
		cr_assert_str_eq(d->folded[i], want[i], "sample %u", i);
}

Test(pprof, time_weight_is_each_tree_paths_self_time_read_by_protoc)
{
	static const char *const want[] = {
		"main 260",	 "main;a 240",	  "main;a;b 100", "main;b 100",
		"main;b;b 200", "main;b;b;b 100", "w 400",	  "w;a 150",
		"w;a;b 50",
	};
	struct decoded d;

	write_known();
	pprof_ok(NULL, NULL); /* time is the default without stack samples */
	decode(&d);
	assert_folded(&d, want, 9);
	cr_assert_str_eq(d.strs[d.sample_type[0]], "time");
	cr_assert_str_eq(d.strs[d.sample_type[1]], "nanoseconds");
	cr_assert_str_eq(d.strs[d.default_type], "time");
	/* b's function carries its site's file and line. */
	bool found = false;
	for (unsigned f = 1; f <= MAX_ITEMS; f++)
		if (d.func_name[f] && !strcmp(d.strs[d.func_name[f]], "b")) {
			cr_assert_str_eq(d.strs[d.func_file[f]], "b.c");
			cr_assert_eq(d.func_line[f], 42);
			found = true;
		}
	cr_assert(found, "no function b");
	decoded_fini(&d);
}

Test(pprof, calls_weight_is_each_paths_calls)
{
	static const char *const want[] = {
		"main 1", "main;a 2", "main;a;b 1", "main;b 1", "main;b;b 1",
		"main;b;b;b 1", "w 1", "w;a 1", "w;a;b 1",
	};
	struct decoded d;

	write_known();
	pprof_ok("--weight=calls", NULL);
	decode(&d);
	assert_folded(&d, want, 9);
	cr_assert_str_eq(d.strs[d.sample_type[0]], "calls");
	cr_assert_str_eq(d.strs[d.sample_type[1]], "count");
	decoded_fini(&d);
}

Test(pprof, by_thread_labels_each_sample_with_its_thread)
{
	static const char *const want[] = {
		"main 260 thread=main",	    "main;a 240 thread=main", "main;a;b 100 thread=main",
		"main;b 100 thread=main",   "main;b;b 200 thread=main",
		"main;b;b;b 100 thread=main", "w 400 thread=worker", "w;a 150 thread=worker",
		"w;a;b 50 thread=worker",
	};
	struct decoded d;

	write_known();
	pprof_ok("--by-thread", NULL);
	decode(&d);
	assert_folded(&d, want, 9);
	decoded_fini(&d);
}

Test(pprof, thread_filter_keeps_that_threads_paths)
{
	static const char *const want[] = { "w 400", "w;a 150", "w;a;b 50" };
	struct decoded d;

	write_known();
	pprof_ok("--thread=worker", NULL);
	decode(&d);
	assert_folded(&d, want, 3);
	decoded_fini(&d);
}

/* go tool pprof's own report: flat is summary's self, cum tree's total. */
Test(pprof, go_tool_pprof_top_gives_summary_self_and_total)
{
	char cmd[512], *out;
	int st;

	if (!have("go"))
		cr_skip_test("no go (Debian golang-go)");
	write_known();
	pprof_ok(NULL, NULL);
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp GOFLAGS=-mod=mod go tool pprof -top -unit=ns -nodecount=10 '%s' 2>/dev/null | "
		 "awk '$NF ~ /^(main|a|b|w)$/ {print $NF, $1, $4}' | sort",
		 prof);
	out = tu_sh(cmd, &st);
	cr_assert_eq(st, 0);
	/* a: 240 + 150 self; b: 100+100+200+100+50; cum: main 1000, w 600,
	 * a 340 + 200, b 100 + 400 (its nested activations once) + 50. */
	cr_assert_str_eq(out, "a 390ns 540ns\n"
			      "b 550ns 550ns\n"
			      "main 260ns 1000ns\n"
			      "w 400ns 600ns\n");
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp go tool pprof -raw '%s' 2>/dev/null | sed -n 's/^Duration: //p;s/^Time: //p'",
		 prof);
	out = tu_sh(cmd, &st);
	/* The recording's wall-clock start (tracegen's 1.7e18 ns) and span. */
	cr_assert_str_eq(out, "2023-11-14 22:13:20 +0000 UTC\n1µs\n", "%s", out);
	free(out);
}

Test(pprof, usage_errors_exit_2_and_missing_trace_exit_1)
{
	struct tu_result r = tu_run("pprof", trace, NULL);

	cr_assert_eq(r.status, 2, "no -o: exit %d", r.status);
	cr_assert(strstr(r.err, "missing -o OUT"), "%s", r.err);
	tu_result_free(&r);
	r = tu_run("pprof", "--weight=cpu", "-o", prof, trace, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "--weight: 'cpu' is not one of samples|time|calls"), "%s", r.err);
	tu_result_free(&r);
	r = tu_run("pprof", "-o", prof, "/nonexistent/t.zst", NULL);
	cr_assert_eq(r.status, 1, "exit %d", r.status);
	tu_result_free(&r);
	write_known();
	r = tu_run("pprof", "-o", trace, trace, NULL);
	cr_assert_eq(r.status, 2, "the input as output: exit %d", r.status);
	tu_result_free(&r);
	r = tu_run("pprof", "--weight=samples", "-o", prof, trace, NULL);
	cr_assert_eq(r.status, 1, "samples asked of a trace without: exit %d", r.status);
	cr_assert(strstr(r.err, "no stack samples"), "%s", r.err);
	tu_result_free(&r);
}
