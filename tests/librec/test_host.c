/* SPDX-License-Identifier: MIT */
/*
 * test_host.c - librec never harms its host (README, "What librec guarantees";
 * issue 11): a
 * library with probes unloaded by dlclose() before or after the writer's
 * next frame, and reloaded at another address; the exact names and counts
 * must be in the file. The process's first probe in a 20 kHz signal handler.
 * Outputs that are not regular files (FIFO without and with a reader, a
 * reader that stops reading, a terminal) never block. A recording never
 * truncates a file another live recording writes (a traced program running
 * a traced child with the same output, through system() and fork+exec).
 * Environment values: long paths keep their reason, the documented forms
 * are accepted, white space is treated alike on both sides.
 * Programs run as children, with a time limit. Each Test runs in its own process (Criterion), so
 * each has its own recorder and output file. Paths of the helper modules
 * and programs come from meson (tests/librec/meson.build).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <criterion/redirect.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <rec.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "suite.h"
#include "under_asan.h"
#include "nested_scopes.h"
#include "trace_read.h"

static char out[256];

static void use_output(const char *what)
{
	snprintf(out, sizeof(out), "/tmp/rec_host_%d_%s.zst", (int)getpid(), what);
	unlink(out);
	setenv("REC_OUTPUT", out, 1);
}

static void cleanup(void)
{
	if (out[0])
		unlink(out);
}

TestSuite(host, .fini = cleanup, .timeout = 120);

/* ------------------------------------------------------------------ */
/* dlclose: sites outlive their module. */

typedef int (*mod_work_fn)(int);

#define MOD_LEAVES 10

static void *load_mod(mod_work_fn *work)
{
	void *h = dlopen(tu_env("SCOPE_MOD"), RTLD_NOW | RTLD_LOCAL);

	cr_assert_not_null(h, "%s", dlerror());
	*work = (mod_work_fn)(uintptr_t)dlsym(h, "mod_work");
	cr_assert_not_null(*work);
	return h;
}

/* Unloads the module and checks that it is really gone (its pages unmapped). */
static void unload_mod(void *h)
{
	cr_assert_eq(dlclose(h), 0);
	cr_assert_null(dlopen(tu_env("SCOPE_MOD"), RTLD_NOW | RTLD_NOLOAD), "module still loaded");
}

/* Number of sites named `name` in the trace. */
static unsigned nr_sites_named(const struct tr_trace *tr, const char *name)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < tr->nr_sites; i++)
		n += tr->site_names[i] && strcmp(tr->site_names[i], name) == 0;
	return n;
}

static void check_mod_trace(unsigned cycles, unsigned loads)
{
	struct tr_trace tr;

	cr_assert_eq(tr_load(out, &tr), 0, "cannot read %s", out);
	cr_assert(tr.clean);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert_eq(tr_calls(&tr, "mod_work"), cycles);
	cr_assert_eq(tr_calls(&tr, "mod_leaf"), (uint64_t)cycles * MOD_LEAVES);
	/* Each load of the module has sites of its own, under the same names. */
	cr_assert_eq(nr_sites_named(&tr, "mod_work"), loads);
	cr_assert_eq(nr_sites_named(&tr, "mod_leaf"), loads);
	tr_free(&tr);
}

struct dl_case {
	unsigned cycles;
	bool flush_first; /* dlclose after the writer's next frame, else before */
};

static struct dl_case dl_cases[] = {
	{ 1, false }, { 3, false }, { 5, false }, { 100, false },
	{ 1, true },  { 3, true },  { 5, true },  { 100, true },
};

ParameterizedTestParameters(host, dlclose_of_a_traced_library_loses_nothing_and_never_crashes)
{
	return cr_make_param_array(struct dl_case, dl_cases, sizeof(dl_cases) / sizeof(dl_cases[0]));
}

ParameterizedTest(struct dl_case *c, host, dlclose_of_a_traced_library_loses_nothing_and_never_crashes)
{
	use_output("dlclose");
	for (unsigned i = 0; i < c->cycles; i++) {
		mod_work_fn work;
		void *h = load_mod(&work);

		cr_assert_eq(work(MOD_LEAVES), MOD_LEAVES * (MOD_LEAVES + 1) / 2);
		if (c->flush_first)
			cr_assert_eq(rec_flush(), 0);
		unload_mod(h);
	}
	/* The writer's next frame, with the sites of modules no longer mapped. */
	cr_assert_eq(rec_stop(), 0);
	/* A module may be loaded at the same address again: its sites are new ones. */
	check_mod_trace(c->cycles, c->cycles);
}

struct mod_range {
	uintptr_t lo, hi;
	const char *path;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod_range *r = arg;

	(void)size;
	if (!info->dlpi_name || strcmp(info->dlpi_name, r->path) != 0)
		return 0;
	r->lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < r->lo)
			r->lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > r->hi)
			r->hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

Test(host, a_library_reloaded_at_another_address_keeps_its_names_and_counts)
{
	struct mod_range first = { .path = tu_env("SCOPE_MOD") },
			 second = { .path = tu_env("SCOPE_MOD") };
	long page = sysconf(_SC_PAGESIZE);
	mod_work_fn work;
	void *h, *hold;

	use_output("reload");
	h = load_mod(&work);
	cr_assert_eq(dl_iterate_phdr(find_range, &first), 1);
	cr_assert_eq(work(MOD_LEAVES), MOD_LEAVES * (MOD_LEAVES + 1) / 2);
	unload_mod(h);
	/*
	 * Keep the old addresses taken, so that the next load goes elsewhere:
	 * page by page, because librec's writer may have mapped a ring into
	 * part of the hole meanwhile (taken as well, then).
	 */
	first.lo &= ~(uintptr_t)(page - 1);
	first.hi = (first.hi + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
	size_t nr_pages = (first.hi - first.lo) / (uintptr_t)page;
	bool *held = calloc(nr_pages, sizeof(*held));

	cr_assert_not_null(held);
	for (size_t i = 0; i < nr_pages; i++) {
		void *at = (void *)(first.lo + i * (uintptr_t)page);

		hold = mmap(at, (size_t)page, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		cr_assert(hold == at || (hold == MAP_FAILED && errno == EEXIST),
			  "cannot hold the old range: %s", strerror(errno));
		held[i] = hold == at;
	}
	h = load_mod(&work);
	cr_assert_eq(dl_iterate_phdr(find_range, &second), 1);
	cr_assert(second.hi <= first.lo || second.lo >= first.hi, "reloaded at the same address");
	cr_assert_eq(work(MOD_LEAVES), MOD_LEAVES * (MOD_LEAVES + 1) / 2);
	unload_mod(h);
	cr_assert_eq(rec_stop(), 0);
	check_mod_trace(2, 2);
	for (size_t i = 0; i < nr_pages; i++)
		if (held[i])
			munmap((void *)(first.lo + i * (uintptr_t)page), (size_t)page);
	free(held);
}

/* ------------------------------------------------------------------ */
/* Child programs, with a time limit: librec must never hang its host. */

/*
 * Runs argv with the extra "NAME=value" settings (NULL-terminated, may be
 * NULL), stdin from /dev/null, capturing stdout and stderr; kills it after
 * limit_ms (tests/helpers/child.h).
 */
static void run_child(const char *const *argv, const char *const *extra_env, unsigned limit_ms,
		      struct tu_child *c)
{
	tu_run_child(argv, extra_env, limit_ms, 0, c);
}

/* ------------------------------------------------------------------ */
/* The first probe of the process in a signal handler. */

#define SIGFIRST_RUNS 100
#define SIGFIRST_ALARMS "1000"

Test(host, first_probe_in_a_20khz_signal_handler_starts_recording_safely_in_100_runs,
     .timeout = 600)
{
	char setting[300];
	const char *argv[] = { tu_env("PROG_SIGFIRST"), SIGFIRST_ALARMS, NULL };
	const char *extra[] = { setting, NULL };

	snprintf(out, sizeof(out), "/tmp/rec_host_%d_sigfirst.zst", (int)getpid());
	snprintf(setting, sizeof(setting), "REC_OUTPUT=%s", out);
	for (int run = 0; run < SIGFIRST_RUNS; run++) {
		struct tu_child c;
		struct tr_trace tr;
		long nr_alarms;

		unlink(out);
		run_child(argv, extra, 60000, &c);
		cr_assert_eq(c.status, 0, "run %d: status %d (-1: hung), stderr: %s", run, c.status,
			     c.err);
		cr_assert_str_eq(c.err, "", "run %d", run);
		nr_alarms = atol(c.out);
		cr_assert_geq(nr_alarms, 1000);
		cr_assert_eq(tr_load(out, &tr), 0, "run %d: cannot read %s", run, out);
		cr_assert(tr.clean, "run %d", run);
		cr_assert_eq(tr.nr_corrupt, 0);
		cr_assert(tr_well_nested(&tr));
		/* Every handler run is recorded or counted as dropped. */
		cr_assert_eq(tr_calls(&tr, "in_handler") + tr_dropped(&tr), (uint64_t)nr_alarms,
			     "run %d: %lu calls, %lu dropped, %ld alarms", run,
			     (unsigned long)tr_calls(&tr, "in_handler"),
			     (unsigned long)tr_dropped(&tr), nr_alarms);
		cr_assert_gt(tr_calls(&tr, "in_handler"), 0);
		tr_free(&tr);
	}
}

/*
 * Found by check: the process's first probe in a handler on an alternate
 * stack took 12.8 KiB of it below the handler (announce()'s and
 * open_output()'s path buffers on the stack, and ld.so's lazy binding of
 * each libc function librec called first, which saves the vector state),
 * so a host's SIGSTKSZ (8 KiB) stack overflowed into its heap ("free():
 * invalid pointer"). README, "Signal handlers and outputs": at most 6 KiB.
 */
#define SIGFIRST_ALT_LIMIT 6144ul

static unsigned long altstack_below(const char *mode, const char *file)
{
	char setting[300];
	const char *argv[] = { tu_env("PROG_SIGFIRST_ALTSTACK"), mode, NULL };
	const char *extra[] = { setting, NULL };
	struct tu_child c;
	unsigned long below;

	snprintf(setting, sizeof(setting), "REC_OUTPUT=%s", file);
	run_child(argv, extra, 60000, &c);
	cr_assert_eq(c.status, 0, "%s: status %d, stderr: %s", mode, c.status, c.err);
	cr_assert_eq(sscanf(c.out, "below %lu", &below), 1, "%s: %s", mode, c.out);
	return below;
}

Test(host, first_probe_in_a_handler_on_a_small_altstack_takes_at_most_6_kib)
{
#ifdef UNDER_ASAN
	cr_skip_test("the sanitizer's frames are larger by design");
#endif
	struct tr_trace tr;
	unsigned long plain, probe;

	snprintf(out, sizeof(out), "/tmp/rec_host_%d_sigalt.zst", (int)getpid());
	unlink(out);
	plain = altstack_below("plain", out);
	cr_assert_eq(access(out, F_OK), -1, "no probe, no file");
	probe = altstack_below("probe", out);
	cr_log_info("alternate stack below the handler: %lu bytes untraced, %lu with the first probe",
		    plain, probe);
	cr_assert_leq(probe, plain + SIGFIRST_ALT_LIMIT,
		      "the first probe took %lu bytes of the handler's stack (limit %lu)",
		      probe - plain, SIGFIRST_ALT_LIMIT);
	cr_assert_eq(tr_load(out, &tr), 0, "cannot read %s", out);
	cr_assert(tr.clean);
	cr_assert_eq(tr_calls(&tr, "traced"), 1);
	tr_free(&tr);
	unlink(out);
}

/* ------------------------------------------------------------------ */
/* Outputs that are not regular files never block. */

static char fifo[256];

static void make_fifo(void)
{
	snprintf(fifo, sizeof(fifo), "/tmp/rec_host_%d_fifo", (int)getpid());
	unlink(fifo);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
}

static void output_setting(char *setting, size_t n, const char *path)
{
	snprintf(setting, n, "REC_OUTPUT=%s", path);
}

Test(host, fifo_without_a_reader_gives_one_line_and_the_program_runs_untraced)
{
	char setting[300], expect[512];
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { setting, NULL };
	struct tu_child c;

	make_fifo();
	output_setting(setting, sizeof(setting), fifo);
	run_child(argv, extra, 30000, &c);
	unlink(fifo);
	cr_assert_eq(c.status, 0, "status %d (-1: hung)", c.status);
	snprintf(expect, sizeof(expect), "rec: cannot open %s: a FIFO with no reader; tracing disabled\n",
		 fifo);
	cr_assert_str_eq(c.err, expect);
}

/* Reads the FIFO into `data` until the writer is done and nothing is left. */
struct fifo_reader {
	int fd;
	bool done;     /* set (release) once the child exited */
	bool stall;    /* read nothing: a reader that stopped reading */
	size_t len;
	uint8_t data[1u << 20];
};

static void *read_fifo(void *arg)
{
	struct fifo_reader *r = arg;

	for (;;) {
		struct pollfd p = { r->fd, POLLIN, 0 };
		ssize_t k;

		if (r->stall) {
			if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
				return NULL;
			poll(NULL, 0, 10);
			continue;
		}
		/* Small reads, so that the writer meets a full pipe often. */
		k = read(r->fd, r->data + r->len, sizeof(r->data) - r->len < 512 ? sizeof(r->data) - r->len : 512);
		if (k > 0) {
			r->len += (size_t)k;
			continue;
		}
		if (k == 0 || errno == EAGAIN) {
			/* No writer (yet, or any more), or nothing to read now. */
			if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) && k == 0)
				return NULL;
			poll(&p, 1, 10);
			continue;
		}
		return NULL;
	}
}

static void run_with_fifo_reader(struct fifo_reader *r, struct tu_child *c)
{
	char setting[300];
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { setting, NULL };
	pthread_t th;

	make_fifo();
	/* Non-blocking, so that opening needs no writer; a one-page pipe. */
	r->fd = open(fifo, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(r->fd, 0);
	cr_assert_geq(fcntl(r->fd, F_SETPIPE_SZ, 4096), 4096);
	output_setting(setting, sizeof(setting), fifo);
	cr_assert_eq(pthread_create(&th, NULL, read_fifo, r), 0);
	run_child(argv, extra, 60000, c);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	close(r->fd);
	unlink(fifo);
}

Test(host, fifo_with_a_slow_reader_gets_the_whole_trace)
{
	static struct fifo_reader r;
	struct tu_child c;
	struct tr_trace tr;
	FILE *f;

	run_with_fifo_reader(&r, &c);
	cr_assert_eq(c.status, 0, "status %d (-1: hung)", c.status);
	cr_assert_str_eq(c.err, "");
	cr_assert_gt(r.len, 4096, "the trace fits in the pipe: the test tests nothing");
	snprintf(out, sizeof(out), "/tmp/rec_host_%d_fromfifo.zst", (int)getpid());
	f = fopen(out, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(r.data, 1, r.len, f), r.len);
	fclose(f);
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr_calls(&tr, "outer"), 4000);
	cr_assert_eq(tr_calls(&tr, "leaf"), 3 * 4000);
	cr_assert_eq(tr_dropped(&tr), 0);
	tr_free(&tr);
}

Test(host, fifo_whose_reader_stops_reading_gives_one_line_and_the_program_exits)
{
	static struct fifo_reader r;
	struct tu_child c;
	char expect[512];

	r.stall = true;
	run_with_fifo_reader(&r, &c);
	cr_assert_eq(c.status, 0, "status %d (-1: hung)", c.status);
	snprintf(expect, sizeof(expect),
		 "rec: cannot write %s: nothing was read from it for 10 s; tracing stopped\n", fifo);
	cr_assert_str_eq(c.err, expect);
}

Test(host, terminal_output_gives_one_line_and_the_program_runs_untraced)
{
	char setting[300], expect[512];
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { setting, NULL };
	struct tu_child c;
	int master = posix_openpt(O_RDWR | O_NOCTTY);

	cr_assert_geq(master, 0);
	cr_assert_eq(grantpt(master), 0);
	cr_assert_eq(unlockpt(master), 0);
	output_setting(setting, sizeof(setting), ptsname(master));
	snprintf(expect, sizeof(expect), "rec: cannot write %s: a terminal; tracing disabled\n",
		 ptsname(master));
	run_child(argv, extra, 30000, &c);
	close(master);
	cr_assert_eq(c.status, 0, "status %d (-1: hung)", c.status);
	cr_assert_str_eq(c.err, expect);
}

/* ------------------------------------------------------------------ */
/* Never clobber a trace. */

static void tracetool_check(const char *path)
{
	const char *argv[] = { tu_env("TRACETOOL"), "check", path, NULL };
	struct tu_child c;

	run_child(argv, NULL, 60000, &c);
	cr_assert_eq(c.status, 0, "tracetool check %s: %s", path, c.err);
}

/*
 * The one line of a recording that found `out` taken; returns the path it
 * wrote instead (static), which must be `out` with -<pid> inserted before
 * its extension `ext` ("" for none).
 */
static const char *fallback_of_ext(const char *err, const char *ext)
{
	static char other[300];
	char head[600];
	size_t n = strlen(out) - strlen(ext);
	const char *p;

	snprintf(head, sizeof(head), "rec: %s is being written by another recording; writing ", out);
	cr_assert_eq(strncmp(err, head, strlen(head)), 0, "%s", err);
	p = err + strlen(head);
	cr_assert(strchr(p, ' '), "%s", err);
	snprintf(other, sizeof(other), "%.*s", (int)(strchr(p, ' ') - p), p);
	cr_assert_str_eq(strchr(p, ' '), " instead\n", "one line only: %s", err);
	cr_assert_eq(strncmp(other, out, n), 0, "%s", other);
	cr_assert_eq(other[n], '-');
	cr_assert_gt(atoi(other + n + 1), 0);
	cr_assert_eq(strspn(other + n + 1, "0123456789"), strlen(other + n + 1) - strlen(ext), "%s",
		     other);
	cr_assert_str_eq(other + strlen(other) - strlen(ext), ext);
	return other;
}

static const char *fallback_of(const char *err)
{
	return fallback_of_ext(err, ".zst");
}

static void check_nested_trace(const char *path, uint64_t nr_outer, uint32_t nr_threads)
{
	struct tr_trace tr;

	cr_assert_eq(tr_load(path, &tr), 0, "cannot read %s", path);
	cr_assert(tr.clean, "%s", path);
	cr_assert_not(tr.truncated);
	cr_assert_eq(tr.nr_corrupt, 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert_eq(tr_calls(&tr, "outer"), nr_outer, "%s", path);
	cr_assert_eq(tr_calls(&tr, "leaf"), 3 * nr_outer, "%s", path);
	cr_assert_eq(tr.nr_threads, nr_threads);
	tr_free(&tr);
	tracetool_check(path);
}

/* By value: Criterion passes parameters to another process (no pointers). */
struct exec_mode {
	char name[8];
};

static struct exec_mode exec_modes[] = { { "system" }, { "exec" } };

ParameterizedTestParameters(host, traced_program_running_a_traced_child_keeps_both_traces)
{
	return cr_make_param_array(struct exec_mode, exec_modes, 2);
}

ParameterizedTest(struct exec_mode *mode, host, traced_program_running_a_traced_child_keeps_both_traces)
{
	char setting[300];
	const char *argv[] = { tu_env("PROG_EXEC"), mode->name, tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { setting, NULL };
	const char *other;
	struct tu_child c;

	snprintf(out, sizeof(out), "/tmp/rec_host_%d_exec_%s.zst", (int)getpid(), mode->name);
	unlink(out);
	output_setting(setting, sizeof(setting), out);
	run_child(argv, extra, 60000, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	other = fallback_of(c.err);
	check_nested_trace(out, 2000, 1);  /* the parent: every call */
	check_nested_trace(other, 4000, 4); /* the child: its own file */
	unlink(other);
}

Test(host, a_second_program_with_the_same_output_writes_its_own_file)
{
	char setting[300];
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { setting, NULL };
	const char *other;
	struct tu_child c;

	use_output("two");
	outer(); /* this process records to out */
	cr_assert_eq(rec_flush(), 0);
	output_setting(setting, sizeof(setting), out);
	run_child(argv, extra, 60000, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	other = fallback_of(c.err);
	outer();
	cr_assert_eq(rec_stop(), 0);
	check_nested_trace(out, 2, 1);
	check_nested_trace(other, 4000, 4);
	unlink(other);
}

Test(host, a_stale_file_of_a_dead_recording_is_overwritten)
{
	char setting[300];
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { setting, NULL };
	struct tu_child c;
	FILE *f;

	snprintf(out, sizeof(out), "/tmp/rec_host_%d_stale.zst", (int)getpid());
	f = fopen(out, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < 100000; i++)
		fputs("not a trace ", f);
	fclose(f);
	output_setting(setting, sizeof(setting), out);
	run_child(argv, extra, 60000, &c);
	cr_assert_eq(c.status, 0);
	cr_assert_str_eq(c.err, "");
	check_nested_trace(out, 4000, 4);
}

/* ------------------------------------------------------------------ */
/* Environment values. */

/* stderr of this process so far (cr_redirect_stderr), read whole. */
static char *stderr_text(void)
{
	static char text[8192];
	FILE *f = cr_get_redirected_stderr();
	size_t n;

	fflush(stderr);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	return text;
}

static unsigned tu_lines(const char *text)
{
	unsigned n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static const char *ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && strcmp(s + n - k, tail) == 0 ? s + n - k : NULL;
}

Test(host, a_5000_byte_output_name_gives_one_line_that_keeps_its_reason)
{
	static char name[5001];
	char *text;

	memset(name, 'a', sizeof(name) - 1);
	setenv("REC_OUTPUT", name, 1);
	cr_redirect_stderr();
	cr_assert_eq(rec_start(NULL), -ENAMETOOLONG);
	text = stderr_text();
	cr_assert_eq(strncmp(text, "rec: bad REC_OUTPUT 'aaa", 24), 0, "%s", text);
	cr_assert(ends_with(text, "': File name too long; tracing disabled\n"), "%s", text);
	cr_assert_eq(tu_lines(text), 1);
	cr_assert_lt(strlen(text), 512);
}

Test(host, a_long_missing_directory_gives_one_line_that_keeps_its_reason)
{
	static char name[4001];
	char *text;

	memset(name, 'b', sizeof(name) - 1);
	for (size_t i = 200; i < sizeof(name) - 1; i += 200)
		name[i] = '/';
	name[0] = '/';
	setenv("REC_OUTPUT", name, 1);
	cr_redirect_stderr();
	cr_assert_eq(rec_start(NULL), -ENOENT);
	text = stderr_text();
	cr_assert_eq(strncmp(text, "rec: cannot open /bbb", 21), 0, "%s", text);
	cr_assert(ends_with(text, ": No such file or directory; tracing disabled\n"), "%s", text);
	cr_assert(strstr(text, "..."), "the path is cut in the middle: %s", text);
	cr_assert_eq(tu_lines(text), 1);
}

struct env_case {
	char name[16];
	char value[16];
	bool accepted;
};

static struct env_case env_cases[] = {
	{ "REC_BUFFER", "16M", true },	    { "REC_BUFFER", " 16M", true },
	{ "REC_BUFFER", "16M ", true },	    { "REC_BUFFER", "\t16M\n", true },
	{ "REC_BUFFER", "16 M", false },    { "REC_FLUSH_MS", " 50 ", true },
	{ "REC_FLUSH_MS", "5 0", false },   { "REC_MIN_NS", " 100 ", true },
	{ "REC_OVERFLOW", " block ", true }, { "REC_CLOCK", "monotonic ", true },
	{ "REC_LIVE", "1h", true },	    { "REC_LIVE", " 30min ", true },
	{ "REC_LIVE", "10ms", true },	    { "REC_LIVE", "2h", false },
	{ "REC_LIVE", "5ms", false },	    { "REC_MEMORY", " 64M ", true },
	{ "REC_MEMORY", "64K", true },	    { "REC_MEMORY", "32K", false },
	{ "REC_MEMORY", "lots", false },
};

ParameterizedTestParameters(host, environment_values_are_accepted_as_documented)
{
	return cr_make_param_array(struct env_case, env_cases, sizeof(env_cases) / sizeof(env_cases[0]));
}

ParameterizedTest(struct env_case *c, host, environment_values_are_accepted_as_documented)
{
	char *text;
	int err;

	use_output("env");
	setenv(c->name, c->value, 1);
	cr_redirect_stderr();
	err = rec_start(NULL);
	rec_stop();
	text = stderr_text();
	if (c->accepted) {
		cr_assert_eq(err, 0, "%s='%s': %d", c->name, c->value, err);
		cr_assert_str_eq(text, "", "%s='%s'", c->name, c->value);
		return;
	}
	/* Refused: one line naming the value as given. REC_LIVE only loses its report. */
	cr_assert_eq(err, strcmp(c->name, "REC_LIVE") == 0 ? 0 : -EINVAL, "%s='%s'", c->name, c->value);
	cr_assert_eq(tu_lines(text), 1, "%s", text);
	cr_assert(strstr(text, c->name) && strstr(text, c->value), "%s", text);
}

static struct env_case disable_cases[] = {
	{ "REC_DISABLE", "1", true },	 { "REC_DISABLE", "yes", true },
	{ "REC_DISABLE", "true", true }, { "REC_DISABLE", "on", true },
	{ "REC_DISABLE", "YES ", true }, { "REC_DISABLE", "0", false },
	{ "REC_DISABLE", "no", false },	 { "REC_DISABLE", "false", false },
	{ "REC_DISABLE", "Off", false }, { "REC_DISABLE", " ", false },
};

ParameterizedTestParameters(host, rec_disable_yes_true_on_and_1_disable_and_0_no_false_off_do_not)
{
	return cr_make_param_array(struct env_case, disable_cases,
				   sizeof(disable_cases) / sizeof(disable_cases[0]));
}

ParameterizedTest(struct env_case *c, host, rec_disable_yes_true_on_and_1_disable_and_0_no_false_off_do_not)
{
	struct stat st;

	use_output("disable");
	setenv(c->name, c->value, 1);
	cr_assert_eq(rec_start(NULL), 0);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(stat(out, &st) == 0, !c->accepted, "REC_DISABLE='%s'", c->value);
}

Test(host, a_taken_output_without_extension_gets_the_pid_at_its_end)
{
	char setting[300];
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { setting, NULL };
	const char *other;
	struct tu_child c;

	snprintf(out, sizeof(out), "/tmp/rec_host_%d.dir/trace", (int)getpid());
	/* A dot in a directory name is not an extension. */
	snprintf(setting, sizeof(setting), "/tmp/rec_host_%d.dir", (int)getpid());
	cr_assert_eq(mkdir(setting, 0700), 0);
	setenv("REC_OUTPUT", out, 1);
	outer();
	cr_assert_eq(rec_flush(), 0);
	output_setting(setting, sizeof(setting), out);
	run_child(argv, extra, 60000, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	other = fallback_of_ext(c.err, "");
	cr_assert_eq(rec_stop(), 0);
	check_nested_trace(out, 1, 1);
	check_nested_trace(other, 4000, 4);
	unlink(other);
	unlink(out);
	*strrchr(out, '/') = 0;
	cr_assert_eq(rmdir(out), 0);
	out[0] = 0;
}

Test(host, dev_null_output_is_written_without_a_word)
{
	const char *argv[] = { tu_env("PROG_NESTED"), NULL };
	const char *extra[] = { "REC_OUTPUT=/dev/null", NULL };
	struct tu_child c;

	run_child(argv, extra, 60000, &c);
	cr_assert_eq(c.status, 0);
	cr_assert_str_eq(c.err, "");
}

/*
 * REC_MEMORY reached (rec(3)): threads that got no ring drop their scopes,
 * counted in the file, and librec says so once, at the end: how many, by
 * how many threads, and what to raise. Before, nothing was said.
 */
Test(host, memory_cap_drops_are_told_in_one_line_at_the_end)
{
	const char *argv[] = { tu_env("PROG_MANY_THREADS"), NULL };
	static char output[300];
	const char *extra[] = { output, "REC_MEMORY=256K", "MANY_THREADS=40", "MANY_SCOPES=200",
				"MANY_DROPS=1", "MANY_CHECK_RSS=0", NULL };
	struct tu_child c;
	unsigned long long dropped = 0, told = 0, samples = 1, annots = 1;
	unsigned threads = 0, lines = 0;
	const char *p;

	use_output("memcap");
	snprintf(output, sizeof(output), "REC_OUTPUT=%s", out);
	tu_run_child(argv, extra, 120000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s%s", c.status, c.out, c.err);
	p = strstr(c.out, "dropped ");
	cr_assert(p && sscanf(p, "dropped %llu", &dropped) == 1 && dropped > 0, "%s", c.out);
	for (p = c.err; (p = strstr(p, "rec: ")); p++)
		lines += p == c.err || p[-1] == '\n';
	cr_assert_eq(lines, 1, "%s", c.err);
	cr_assert_eq(sscanf(c.err,
			    "rec: REC_MEMORY (262144 bytes) was reached: the %u threads it refused a "
			    "ring or a larger one dropped %llu scopes, %llu samples and %llu "
			    "annotations;",
			    &threads, &told, &samples, &annots),
		     4, "%s", c.err);
	cr_assert_eq(told, dropped, "%s", c.err);
	cr_assert_eq(samples, 0);
	cr_assert_eq(annots, 0);
	cr_assert(threads > 0 && threads < 40, "%s", c.err);
	cr_assert(strstr(c.err, "; raise REC_MEMORY to keep them\n"), "%s",
		  c.err);
}
