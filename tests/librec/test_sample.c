/* SPDX-License-Identifier: MIT */
/*
 * test_sample.c - REC_SAMPLE (rec(3); FORMAT.md §3.22-§3.24; issue 28):
 * an unmodified program under LD_PRELOAD=librectrace.so is sampled on every
 * thread, its stacks unwound through libc without frame pointers and named
 * by MODULE records; and the hostile hosts: 10 000 threads coming and going,
 * dlopen/dlclose in a loop, malloc interrupted, fork (the child samples only
 * with %p), exec, a host with its own SIGPROF profiler, perf_event_open
 * refused (one rec: line, the timer fallback), probes on the same thread
 * (the SPSC ring), crash capture. Counts are checked against the CPU time
 * the program itself measured: no test depends on the machine's speed.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "recfmt.h"
#include "testutil.h"
#include "trace_read.h"
#include "under_asan.h"

TestSuite(sample, .timeout = 240);

static char dir[TU_TMPDIR_MAX];

static void make_dir(void)
{
	tu_tmpdir(dir, "rec_sample");
}

static void remove_dir(void)
{
	tu_tmpdir_remove(dir);
}

/* ---------------------------------------------------------------------
 * What a file's samples say.
 */
#define MAX_MODS 256

struct mod {
	uint64_t lo[8], hi[8];
	uint32_t nr, flags, id;
	char path[512];
	/* FORMAT.md §3.10, §3.25: when it was mapped, [from, to) each. */
	bool timed;
	uint64_t from[512], to[512];
	uint32_t nr_spans;
};

struct samples {
	bool has_sampling, clean, corrupt, has_crash;
	struct recfmt_sampling sp;
	uint32_t pid;
	uint64_t nr, dropped, frames, in_module, truncated;
	uint64_t first_ticks, last_ticks, ticks_per_second; /* the samples' span, the header's rate */
	uint64_t unnamed; /* samples with a frame in no module */
	uint64_t through_libc; /* a libc frame with a program frame further out */
	uint64_t deep;	       /* 5 frames or more */
	uint64_t in_mod_named; /* a frame in a module whose path has `want_mod` */
	uint32_t threads_sampled;
	uint64_t per_thread[1024];
	struct mod mods[MAX_MODS];
	uint32_t nr_mods;
	const char *want_mod;
};

static bool mapped_at(const struct mod *m, uint64_t ticks)
{
	if (!m->timed)
		return true;
	for (uint32_t i = 0; i < m->nr_spans; i++)
		if (ticks >= m->from[i] && ticks < m->to[i])
			return true;
	return false;
}

/* The module whose ranges held addr at ticks (FORMAT.md §3.23: the latest
 * MODULE that holds it and was mapped then), or NULL. */
static const struct mod *mod_of(const struct samples *s, uint64_t addr, uint64_t ticks)
{
	for (uint32_t m = s->nr_mods; m-- > 0;)
		for (uint32_t r = 0; r < s->mods[m].nr; r++)
			if (addr >= s->mods[m].lo[r] && addr < s->mods[m].hi[r] &&
			    mapped_at(&s->mods[m], ticks))
				return &s->mods[m];
	return NULL;
}

/* A MODULE_MAP record (FORMAT.md §3.25) of module id. */
static void mod_map(struct samples *s, const struct recfmt_module_map *mm)
{
	for (uint32_t i = s->nr_mods; i-- > 0;) {
		struct mod *m = &s->mods[i];

		if (m->id != mm->id)
			continue;
		if (mm->what == RECFMT_MODULE_UNMAPPED && m->nr_spans &&
		    m->to[m->nr_spans - 1] == UINT64_MAX)
			m->to[m->nr_spans - 1] = mm->ticks;
		else if (mm->what == RECFMT_MODULE_MAPPED) {
			cr_assert_lt(m->nr_spans, 512, "mapped more often than the test keeps");
			m->from[m->nr_spans] = mm->ticks;
			m->to[m->nr_spans++] = UINT64_MAX;
		}
		return;
	}
}

static bool is_libc(const struct mod *m)
{
	return m && strstr(m->path, "/libc.so");
}

static void one_sample(struct samples *s, const struct recfmt_sample *smp)
{
	bool libc_seen = false, through = false, named = false;
	uint64_t in = 0;

	if (!s->nr || smp->ticks < s->first_ticks)
		s->first_ticks = smp->ticks;
	if (!s->nr || smp->ticks > s->last_ticks)
		s->last_ticks = smp->ticks;
	s->nr++;
	s->frames += smp->nr_frames;
	s->truncated += smp->flags & RECFMT_SAMPLE_TRUNCATED;
	if (smp->thread < 1024 && s->per_thread[smp->thread]++ == 0)
		s->threads_sampled++;
	for (uint32_t i = 0; i < smp->nr_frames; i++) {
		/* FORMAT.md §3.23: a caller's frame is named by address - 1. */
		const struct mod *m = mod_of(s, smp->frames[i] - (i ? 1 : 0), smp->ticks);

		in += m != NULL;
		if (is_libc(m))
			libc_seen = true;
		else if (m && (m->flags & RECFMT_MODULE_MAIN) && libc_seen)
			through = true;
		if (m && s->want_mod && strstr(m->path, s->want_mod))
			named = true;
	}
	s->in_module += in;
	s->unnamed += in != smp->nr_frames;
	s->through_libc += through;
	s->deep += smp->nr_frames >= 5;
	s->in_mod_named += named;
}

static void read_samples(const char *path, struct samples *s)
{
	static struct recfmt_samples_iter it;
	struct recfmt_reader *r;
	struct recfmt_error err = { 0 };
	const uint8_t *data;
	size_t len;
	uint64_t drops[1024] = { 0 };

	cr_assert_eq(recfmt_reader_open(&r, path, &err), RECFMT_OK, "%s: %s", path, err.message);
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor cur;
		struct recfmt_record rec;

		recfmt_cursor_init(&cur, data, len);
		while (recfmt_cursor_next(&cur, &rec, &err) == RECFMT_OK) {
			struct recfmt_sample smp;
			struct recfmt_sample_drops d;
			struct recfmt_module m;
			struct recfmt_module_map mm;
			struct recfmt_header h;
			enum recfmt_status st;

			switch (rec.type) {
			case RECFMT_FILE_HEADER:
				cr_assert_eq(recfmt_decode_header(&rec, &h, &err), RECFMT_OK);
				s->pid = h.pid;
				s->ticks_per_second = h.ticks_per_second;
				break;
			case RECFMT_SAMPLING:
				cr_assert_eq(recfmt_decode_sampling(&rec, &s->sp, &err), RECFMT_OK);
				s->has_sampling = true;
				break;
			case RECFMT_MODULE:
				cr_assert_eq(recfmt_decode_module(&rec, &m, &err), RECFMT_OK);
				cr_assert_lt(s->nr_mods, MAX_MODS, "more MODULE records than the test keeps");
				if (s->nr_mods < MAX_MODS) {
					struct mod *o = &s->mods[s->nr_mods++];

					o->flags = m.flags;
					o->id = m.id;
					o->timed = m.has_since;
					o->from[0] = m.since_ticks;
					o->to[0] = UINT64_MAX;
					o->nr_spans = 1;
					o->nr = m.nr_ranges < 8 ? m.nr_ranges : 8;
					for (uint32_t i = 0; i < o->nr; i++) {
						struct recfmt_range rg = recfmt_module_range(&m, i);

						o->lo[i] = rg.start;
						o->hi[i] = rg.end;
					}
					snprintf(o->path, sizeof(o->path), "%.*s", (int)m.path_bytes, m.path);
				}
				break;
			case RECFMT_MODULE_MAP:
				cr_assert_eq(recfmt_decode_module_map(&rec, &mm, &err), RECFMT_OK);
				mod_map(s, &mm);
				break;
			case RECFMT_SAMPLES:
				cr_assert_eq(recfmt_samples_open(&rec, &it, &err), RECFMT_OK, "%s",
					     err.message);
				while ((st = recfmt_samples_next(&it, &smp, &err)) == RECFMT_OK)
					one_sample(s, &smp);
				cr_assert_eq(st, RECFMT_END_OF_INPUT, "%s", err.message);
				break;
			case RECFMT_SAMPLE_DROPS:
				cr_assert_eq(recfmt_decode_sample_drops(&rec, &d, &err), RECFMT_OK);
				if (d.thread < 1024 && d.nr_dropped > drops[d.thread])
					drops[d.thread] = d.nr_dropped; /* cumulative: the largest */
				break;
			case RECFMT_CRASH:
				s->has_crash = true;
				break;
			case RECFMT_END:
				s->clean = true;
				break;
			default:
				break;
			}
		}
	}
	s->corrupt = err.status != RECFMT_OK && err.status != RECFMT_END_OF_INPUT;
	recfmt_reader_close(r);
	for (int i = 0; i < 1024; i++)
		s->dropped += drops[i];
}

/* ---------------------------------------------------------------------
 * Running the programs.
 */
static const char *env_or_fail(const char *name)
{
	const char *v = getenv(name);

	cr_assert_not_null(v, "%s is not set (meson sets it)", name);
	return v;
}

/* Runs prog_sample (or argv) with librectrace.so preloaded and REC_SAMPLE=hz. */
static void run_sampled(const char *const *argv, const char *hz, const char *output,
			const char *const *more_env, unsigned limit_ms, unsigned flags,
			struct tu_child *c)
{
	static char preload[4096], sample[64], out[512], asan[1024];
	const char *env[16];
	size_t n = 0;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", env_or_fail("LIBREC_SO"));
	snprintf(sample, sizeof(sample), "REC_SAMPLE=%s", hz);
	snprintf(out, sizeof(out), "REC_OUTPUT=%s", output);
	env[n++] = preload;
	env[n++] = sample;
	env[n++] = out;
#ifdef UNDER_ASAN
	/* The sanitized librectrace.so comes before the ASan runtime it needs. */
	snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%sverify_asan_link_order=0",
		 getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "",
		 getenv("ASAN_OPTIONS") ? ":" : "");
	env[n++] = asan;
#else
	(void)asan;
#endif
	for (size_t i = 0; more_env && more_env[i] && n < 15; i++)
		env[n++] = more_env[i];
	env[n] = NULL;
	tu_run_child(argv, env, limit_ms, flags, c);
}

/* run_sampled() with the output DIR/name, whose path it leaves in out. */
static void run_sampled_to(const char *name, char out[256], const char *const *argv,
			   const char *hz, const char *const *more_env, unsigned limit_ms,
			   unsigned flags, struct tu_child *c)
{
	snprintf(out, 256, "%s/%s", dir, name);
	run_sampled(argv, hz, out, more_env, limit_ms, flags, c);
}

/*
 * prog_sample with args (args[0] its mode) under run_sampled() at hz, into
 * DIR/MODE.zst (its path in out, if not NULL): the program must exit 0 and
 * its file end cleanly, undamaged, with its SAMPLING record. s: what the
 * file's samples say; c: the run.
 */
static void run_mode(const char *const *args, const char *hz, char *out, struct tu_child *c,
		     struct samples *s)
{
	const char *argv[8] = { env_or_fail("PROG_SAMPLE") };
	char name[64], path[256];
	size_t n = 0;

	for (; args[n] && n < 6; n++)
		argv[n + 1] = args[n];
	argv[n + 1] = NULL;
	snprintf(name, sizeof(name), "%s.zst", args[0]);
	run_sampled_to(name, path, argv, hz, NULL, 120000, 0, c);
	cr_assert_eq(c->status, 0, "status %d (-1: hung): %s", c->status, c->err);
	read_samples(path, s);
	cr_assert(s->clean && !s->corrupt && s->has_sampling, "%s: clean %d, damaged %d", path,
		  s->clean, s->corrupt);
	if (out)
		memcpy(out, path, sizeof(path));
}

/* The value printed after "key " on a line of out, or -1. */
static long printed(const char *out, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s ", key);
	for (p = out; (p = strstr(p, pat)); p++)
		if (p == out || p[-1] == '\n')
			return strtol(p + strlen(pat), NULL, 0);
	return -1;
}

/* Lines of err that start with "rec: ". */
static int rec_lines(const char *err)
{
	int n = 0;

	for (const char *p = err; (p = strstr(p, "rec: ")); p++)
		if (p == err || p[-1] == '\n')
			n++;
	return n;
}

/* samples + dropped against the program's user CPU time at hz: within a factor of 2. */
static void assert_rate(const struct samples *s, long cpu_us, unsigned hz)
{
	double want = (double)cpu_us * hz / 1e6, got = (double)(s->nr + s->dropped);

	cr_assert_gt(cpu_us, 0);
	cr_assert(got >= want / 2 && got <= want * 2 + 20,
		  "%.0f samples + dropped for %ld us of CPU at %u Hz (want about %.0f)", got, cpu_us,
		  hz, want);
}

/* ---------------------------------------------------------------------
 * The tests.
 */
Test(sample, unmodified_program_sampled_on_every_thread_through_libc, .init = make_dir,
     .fini = remove_dir)
{
	const char *args[] = { "work", "400", NULL };
	struct tu_child c;
	static struct samples s;

	run_mode(args, "997", NULL, &c, &s);
	cr_assert_leq(rec_lines(c.err), 1, "%s", c.err); /* at most the perf fallback's */
	cr_assert_eq(s.sp.hz, 997);
	cr_assert_eq(s.sp.max_frames, 128);
	cr_assert_eq(s.sp.period_ns, 1003009);
	cr_assert_eq(s.pid, (uint32_t)printed(c.out, "pid"));
	cr_assert_eq(s.threads_sampled, 2, "main and its thread: %u threads sampled",
		     s.threads_sampled);
	assert_rate(&s, printed(c.out, "cpu_us"), 997);
	/* Every address is named through a MODULE record (FORMAT.md §3.23). */
	cr_assert_geq(s.in_module * 100, s.frames * 99, "%lu of %lu frames in a module",
		      (unsigned long)s.in_module, (unsigned long)s.frames);
	/* qsort: the program's comparator under libc's msort under the program's
	 * work(): unwound through libc, built without frame pointers. */
	cr_assert_geq(s.through_libc * 10, s.nr * 8, "%lu of %lu stacks go through libc",
		      (unsigned long)s.through_libc, (unsigned long)s.nr);
	cr_assert_geq(s.deep * 10, s.nr * 8);
	cr_assert_eq(s.truncated, 0, "no stack here is deeper than 128 frames");
}

Test(sample, vdso_flag_marks_the_vdso_alone_not_the_loader_mapped_beside_it, .init = make_dir,
     .fini = remove_dir)
{
	const char *args[] = { "work", "20", NULL };
	struct tu_child c;
	static struct samples s;
	int vdso = 0;

	/* ld.so is often mapped right after the vDSO's 8 KiB: it was flagged as
	 * the vDSO too, and its frames were named "[vdso]". */
	run_mode(args, "997", NULL, &c, &s);
	for (uint32_t i = 0; i < s.nr_mods; i++) {
		if (!(s.mods[i].flags & RECFMT_MODULE_VDSO))
			continue;
		vdso++;
		cr_assert(strstr(s.mods[i].path, "vdso"), "%s flagged as the vDSO",
			  s.mods[i].path);
	}
	cr_assert_eq(vdso, 1, "%d modules flagged as the vDSO", vdso);
}

Test(sample, bad_rate_disables_with_one_line, .init = make_dir, .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "work", "20", NULL };
	char out[256];
	struct tu_child c;

	run_sampled_to("bad.zst", out, argv, "20001", NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "the program runs on: %d", c.status);
	cr_assert_str_eq(c.err, "rec: bad REC_SAMPLE '20001' (want samples per second of CPU time, "
				"1 to 20000); tracing disabled\n");
	cr_assert_neq(access(out, F_OK), 0, "no file");
}

Test(sample, ten_thousand_threads_coming_and_going, .init = make_dir, .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "churn", "10000", NULL };
	const char *env[] = { "REC_BUFFER=64K", NULL };
	char out[256];
	struct tu_child c;
	static struct samples s;
	struct tr_trace tr;

	run_sampled_to("churn.zst", out, argv, "5000", env, 200000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	/* Each thread's clock is closed at its exit: none left open. */
	cr_assert_lt(printed(c.out, "fds"), 16, "%ld descriptors open at the end",
		     printed(c.out, "fds"));
	read_samples(out, &s);
	cr_assert(s.clean && !s.corrupt && s.has_sampling);
	cr_assert_gt(s.nr + s.dropped, 0);
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert(tr.clean);
	tr_free(&tr);
}

/*
 * Threads librec's pthread_create wrapper never saw (libc's own, as clone()
 * or a static thread library makes them): the writer's scan of
 * /proc/self/task arms them, and disarms those that exit without a sample
 * (no destructor of ours runs on them): rec__sample_reap().
 */
Test(sample, threads_made_past_the_wrapper_are_armed_by_the_scan_and_disarmed_when_gone,
     .init = make_dir, .fini = remove_dir)
{
	const char *args[] = { "unhooked", "8", NULL };
	struct tu_child c;
	static struct samples s;

	run_mode(args, "997", NULL, &c, &s);
	cr_assert_eq(printed(c.out, "armed"), 8, "%s", c.out);
	cr_assert_eq(printed(c.out, "left"), 0, "%s", c.out);
	/* The four that worked 150 ms of CPU each, armed before they began. */
	cr_assert_geq(s.threads_sampled, 4, "%u threads sampled", s.threads_sampled);
}

Test(sample, dlopen_dlclose_in_a_loop, .init = make_dir, .fini = remove_dir)
{
	const char *args[] = { "dlopen", "300", env_or_fail("SAMPLE_MOD"), NULL };
	struct tu_child c;
	static struct samples s;

	s.want_mod = "sample_mod";
	run_mode(args, "20000", NULL, &c, &s);
	cr_assert_gt(s.nr, 0);
}

/* The library each folded stack's sample_mod_work() is in, by the caller's name
 * (call_libK), as tracetool names it: every one must agree. Return: stacks checked. */
static int check_folded(const char *path, const char *const libs[3])
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int n = 0;

	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "sample_mod_work");
		char want[128];
		int k;

		cr_assert_null(strstr(line, "no module"), "%s", line);
		if (!p)
			continue;
		cr_assert(p - line > 10 && sscanf(p - 10, "call_lib%d;", &k) == 1 && k >= 0 && k < 3,
			  "sample_mod_work called by no call_libK: %s", line);
		snprintf(want, sizeof(want), "call_lib%d;sample_mod_work (%s)", k, libs[k]);
		cr_assert(strstr(line, want), "want '%s' in: %s", want, line);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * A library closed between two writer passes, another mapped where it was:
 * every sample is named by the module mapped when it was taken. Before the
 * dlclose() check and the times (FORMAT.md §3.25), the samples of such a
 * library had no MODULE record (named "[no module]") or took the one of a
 * library mapped there later.
 */
Test(sample, dlclose_between_writer_passes_names_each_sample_by_the_library_mapped_then,
     .init = make_dir, .fini = remove_dir)
{
	const char *libs[3] = { "libsample_mod.so", "libsample_mod_b.so", "libsample_mod_c.so" };
	const char *args[] = { "dlrotate", "300", env_or_fail("SAMPLE_MOD"),
			       env_or_fail("SAMPLE_MOD_B"), env_or_fail("SAMPLE_MOD_C"), NULL };
	char out[256], folded[300];
	struct tu_child c;
	static struct samples s;

	run_mode(args, "20000", out, &c, &s);
	cr_assert_gt(s.nr, 50, "%lu samples", (unsigned long)s.nr);
	cr_assert_eq(s.unnamed, 0, "%lu of %lu samples have a frame in no module",
		     (unsigned long)s.unnamed, (unsigned long)s.nr);
	/* tracetool names them so too: call_libK's callee is in library K. */
	snprintf(folded, sizeof(folded), "%s/dlrotate.folded", dir);
	{
		const char *tt[] = { env_or_fail("TRACETOOL"), "flame", "--samples", "-o", folded,
				     out, NULL };
		struct tu_child t;

		tu_run_child(tt, NULL, 60000, 0, &t);
		cr_assert_eq(t.status, 0, "%s", t.err);
	}
	cr_assert_gt(check_folded(folded, libs), 0);
}

Test(sample, signals_interrupting_malloc_never_deadlock, .init = make_dir, .fini = remove_dir)
{
	const char *args[] = { "malloc", "300", NULL };
	struct tu_child c;
	static struct samples s;

	run_mode(args, "20000", NULL, &c, &s);
	cr_assert_geq(s.threads_sampled, 4);
}

Test(sample, fork_child_samples_only_with_pid_in_the_name, .init = make_dir, .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "fork", "200", NULL };
	char out[256], child[256];
	struct tu_child c;
	static struct samples s, sc;
	DIR *d;
	struct dirent *e;
	int files = 0;

	skip_fork_under_asan();
	/* Without %p: the parent's file only; the child records nothing. */
	run_sampled_to("fork.zst", out, argv, "997", NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	read_samples(out, &s);
	cr_assert(s.clean && s.has_sampling);
	cr_assert_eq(s.pid, (uint32_t)printed(c.out, "pid"));
	d = opendir(dir);
	while ((e = readdir(d)))
		files += e->d_name[0] != '.';
	closedir(d);
	cr_assert_eq(files, 1, "the child wrote no file");

	/* With %p: the child's own file, with its own samples. */
	run_sampled_to("forkp-%p.zst", out, argv, "997", NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	snprintf(child, sizeof(child), "%s/forkp-%ld.zst", dir, printed(c.out, "child"));
	read_samples(child, &sc);
	cr_assert(sc.clean && sc.has_sampling, "%s", child);
	cr_assert_eq(sc.pid, (uint32_t)printed(c.out, "child"));
	cr_assert_gt(sc.nr, 0, "the child sampled its own thread");
}

Test(sample, exec_in_a_chain_never_kills_the_new_program, .init = make_dir, .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "exec", "40", NULL };
	struct tu_child c;

	run_sampled(argv, "20000", "/dev/null", NULL, 120000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	cr_assert_eq(rec_lines(c.err), 0, "%s", c.err);
}

Test(sample, exec_in_a_chain_on_cpu_timers_never_kills_the_new_program, .init = make_dir,
     .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("SECCOMP_NOPERF"), env_or_fail("PROG_SAMPLE"), "exec",
			       "40", NULL };
	struct tu_child c;

	run_sampled(argv, "20000", "/dev/null", NULL, 120000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	/* Each program of the chain says once that it samples on timers. */
	cr_assert_eq(rec_lines(c.err), 41, "%s", c.err);
}

Test(sample, host_sigprof_profiler_keeps_its_signal, .init = make_dir, .fini = remove_dir)
{
	const char *args[] = { "sigprof", "400", NULL };
	struct tu_child c;
	static struct samples s;

	run_mode(args, "997", NULL, &c, &s);
	/* ITIMER_PROF at 100 Hz over 400 ms of CPU: about 40 of its own. */
	cr_assert_geq(printed(c.out, "sigprof"), 10, "%s", c.out);
	assert_rate(&s, printed(c.out, "cpu_us"), 997);
}

Test(sample, host_small_alternate_signal_stack_survives_sampling, .init = make_dir,
     .fini = remove_dir)
{
	const char *args[] = { "altstack", "300", NULL };
	struct tu_child c;
	static struct samples s;

	/* An 8 KiB alternate stack: the handler on it (SA_ONSTACK) had no room
	 * for the kernel's frame and an unwind, and killed the host (SIGSEGV). */
	run_mode(args, "997", NULL, &c, &s);
	cr_assert_eq(printed(c.out, "onstack"), 3, "%s", c.out);
	cr_assert_eq(s.threads_sampled, 2);
	assert_rate(&s, printed(c.out, "cpu_us"), 997);
	/* The 60 ms of CPU in the host's handler, on its alternate stack: its
	 * handler runs with librec's signal blocked (rec(3)), so a sample there
	 * waits until it returns and is taken then, none dropped (a perf event
	 * queues one signal; a CPU-time timer's merged ticks are counted). */
	if (s.sp.mechanism == RECFMT_SAMPLE_MECH_PERF_TASK_CLOCK)
		cr_assert_eq(s.dropped, 0, "%lu dropped", (unsigned long)s.dropped);
}

/*
 * prog_sample longjmp 300 HOW: a handler of the host's on an alternate stack
 * sized for it alone (guard page below) works 20 ms, a sample waiting, and
 * leaves by a jump, 5 times; then the thread works 300 ms. librec adds its
 * signal to such a handler's mask (rec(3)); a plain longjmp() restores no
 * mask, so the thread kept it blocked for good: never sampled again, no
 * file, no word. siglongjmp() restored the mask while still on the
 * alternate stack: the waiting sample's kernel frame went past the stack's
 * end (SIGSEGV). Each jump must leave the thread sampled, none dropped
 * (perf events: one signal waits), the host's mask otherwise its own (a
 * longjmp() in no handler with every signal blocked leaves them blocked).
 * own: the SA_ONSTACK handler on the thread's stack (no sigaltstack()).
 */
static void handler_left_by_jump_keeps_thread_sampled(const char *how)
{
	const char *args[] = { "longjmp", "300", how, NULL };
	struct tu_child c;
	static struct samples s;

	memset(&s, 0, sizeof(s));
	run_mode(args, "997", NULL, &c, &s);
	cr_assert_eq(printed(c.out, "jumped"), 5, "%s", c.out);
	cr_assert_eq(printed(c.out, "rt_blocked"), 0, "%s", c.out);
	cr_assert_eq(printed(c.out, "kept_blocked"), 1, "%s", c.out);
	cr_assert_eq(rec_lines(c.err), 0, "%s", c.err);
	assert_rate(&s, printed(c.out, "cpu_us"), 997);
	if (s.sp.mechanism == RECFMT_SAMPLE_MECH_PERF_TASK_CLOCK)
		cr_assert_eq(s.dropped, 0, "%lu dropped", (unsigned long)s.dropped);
}

Test(sample, handler_left_by_longjmp_keeps_its_thread_sampled, .init = make_dir,
     .fini = remove_dir)
{
	handler_left_by_jump_keeps_thread_sampled("plain");
}

Test(sample, handler_on_the_thread_stack_left_by_longjmp_keeps_its_thread_sampled,
     .init = make_dir, .fini = remove_dir)
{
	handler_left_by_jump_keeps_thread_sampled("own");
}

Test(sample, handler_left_by_longjmp_chk_keeps_its_thread_sampled, .init = make_dir,
     .fini = remove_dir)
{
#ifdef UNDER_ASAN
	/* ASan's own __longjmp_chk() takes the program's call and calls libc's. */
	cr_skip_test("AddressSanitizer intercepts __longjmp_chk() past librectrace.so");
#endif
	handler_left_by_jump_keeps_thread_sampled("chk");
}

Test(sample, handler_left_by_siglongjmp_takes_the_waiting_sample_off_its_alternate_stack,
     .init = make_dir, .fini = remove_dir)
{
	handler_left_by_jump_keeps_thread_sampled("sig");
}

Test(sample, thread_blocking_every_signal_queues_at_most_one_sample_signal, .init = make_dir,
     .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "blocked", "300", NULL };
	char out[256];
	struct tu_child c;

	/* A perf event's overflow queues one real-time signal each: a thread
	 * that blocks them queued 20000 a second of its CPU, and filled the
	 * user's RLIMIT_SIGPENDING (sigqueue() of every process of the user
	 * failed). One-shot events (PERF_EVENT_IOC_REFRESH): one at most. */
	run_sampled_to("blocked.zst", out, argv, "20000", NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	cr_assert_geq(printed(c.out, "queued"), 0, "%s", c.out);
	cr_assert_leq(printed(c.out, "queued"), 1, "%s", c.out);
}

Test(sample, perf_event_refused_falls_back_with_one_line, .init = make_dir, .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("SECCOMP_NOPERF"), env_or_fail("PROG_SAMPLE"), "work",
			       "400", NULL };
	char out[256];
	struct tu_child c;
	static struct samples s;

	run_sampled_to("noperf.zst", out, argv, "997", NULL, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	cr_assert_eq(rec_lines(c.err), 1, "%s", c.err);
	cr_assert(strstr(c.err, "rec: REC_SAMPLE: perf_event_open refused (Permission denied"),
		  "%s", c.err);
	read_samples(out, &s);
	cr_assert(s.clean && s.has_sampling);
	cr_assert_eq(s.sp.mechanism, RECFMT_SAMPLE_MECH_TIMER);
	cr_assert_eq(s.sp.clock, RECFMT_SAMPLE_CLOCK_THREAD_CPU);
	cr_assert_eq(s.threads_sampled, 2);
	/* The kernel's tick caps the timers: what it merged counts as dropped. */
	assert_rate(&s, printed(c.out, "cpu_us"), 997);
	cr_assert_geq(s.through_libc * 10, s.nr * 8);
}

/*
 * prog_sample_probes 300 sampled at 20 kHz in block mode, into dir/name with
 * env: every scope recorded (none lost to a sample, the file clean and well
 * nested), more than 100 samples from both threads, read into s.
 */
static void probes_keep_every_scope(const char *name, const char **env, struct samples *s)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE_PROBES"), "300", NULL };
	char out[256];
	struct tu_child c;
	struct tr_trace tr;
	long calls = 0;

	/* Linked with librec: no preload needed, but it changes nothing. */
	run_sampled_to(name, out, argv, "20000", env, 120000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	for (const char *p = c.out; (p = strstr(p, "calls ")); p++)
		calls += strtol(p + 6, NULL, 10);
	cr_assert_gt(calls, 0);
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert(tr.clean && tr.nr_corrupt == 0);
	cr_assert(tr_well_nested(&tr));
	/* Block mode: every scope recorded, none lost to a sample. */
	cr_assert_eq(tr_calls(&tr, "outer"), (uint64_t)calls);
	cr_assert_eq(tr_calls(&tr, "leaf"), (uint64_t)calls);
	tr_free(&tr);
	read_samples(out, s);
	cr_assert(!s->corrupt && s->has_sampling);
	cr_assert_gt(s->nr, 100, "%lu samples", (unsigned long)s->nr);
	cr_assert_eq(s->threads_sampled, 2);
}

Test(sample, samples_inside_probes_keep_the_ring_whole, .init = make_dir, .fini = remove_dir)
{
	const char *env[] = { "REC_OVERFLOW=block", NULL };
	static struct samples s;

	probes_keep_every_scope("probes.zst", env, &s);
}

/* A function's total samples in `tracetool profile --format=csv` of path (name a prefix: spin.constprop.0). */
static uint64_t profile_total(const char *csv, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = csv; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p;

		if (strncmp(p, name, len) != 0 || (p[len] != ',' && p[len] != '.'))
			continue;
		for (int field = 0; field < 3 && q; field++)
			q = strchr(q + 1, ','); /* function,module,self,total */
		if (q)
			return strtoull(q + 1, NULL, 10);
	}
	return 0;
}

/*
 * F20: a thread inside dense probes (fib with a TRACE_SCOPE in every call)
 * a large share of its CPU time, the rest in a function with none, gets its
 * samples split as that CPU time is: the program measures each part with
 * CLOCK_THREAD_CPUTIME_ID. The old code kept one sample taken inside a
 * probe's window until the thread's next sample outside one and dropped
 * the others: 490-530 of 1500 dropped at 2000 Hz, fib 0.52-0.54 of the
 * samples where it had 0.67-0.70 of the CPU time. Now none dropped, and
 * within 0.005 in 16 runs at a load average of 24-29 on 2 cores. The bound:
 * 0.03 (kernel time, which the program's clock counts and user-mode
 * sampling does not) and 4 standard deviations of a share of N samples
 * (0.048 at the 1500 of a perf clock, 0.13 at the 200 of the timer that
 * replaces it where perf_event_open is refused); at most 2 % dropped (a
 * full ring's).
 */
Test(sample, samples_inside_dense_probes_are_kept_in_proportion, .init = make_dir,
     .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE_SHARE"), "800", NULL };
	char out[256];
	struct tu_child c, t;
	static struct samples s;
	unsigned long long fib_ns = 0, spin_ns = 0;
	uint64_t fib, spin;
	double want, got, tol;

	run_sampled_to("share.zst", out, argv, "2000", NULL, 120000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	cr_assert_eq(sscanf(c.out, "fib_ns %llu spin_ns %llu", &fib_ns, &spin_ns), 2, "%s", c.out);
	cr_assert_gt(fib_ns + spin_ns, 0);
	read_samples(out, &s);
	cr_assert(s.clean && !s.corrupt && s.has_sampling);
	cr_assert_gt(s.nr, 100, "%lu samples", (unsigned long)s.nr);
	cr_assert_leq(s.dropped, s.nr / 50, "%lu of %lu samples dropped", (unsigned long)s.dropped,
		      (unsigned long)(s.nr + s.dropped));
	{
		const char *tt[] = { env_or_fail("TRACETOOL"), "profile", "--format=csv", out, NULL };

		tu_run_child(tt, NULL, 60000, 0, &t);
		cr_assert_eq(t.status, 0, "%s", t.err);
	}
	fib = profile_total(t.out, "fib");
	spin = profile_total(t.out, "spin");
	cr_assert_gt(fib + spin, s.nr / 2, "fib %lu, spin %lu of %lu samples:\n%s",
		     (unsigned long)fib, (unsigned long)spin, (unsigned long)s.nr, t.out);
	want = (double)fib_ns / (double)(fib_ns + spin_ns);
	got = (double)fib / (double)(fib + spin);
	cr_log_info("fib: %.3f of the samples, %.3f of the CPU time; %lu of %lu dropped", got, want,
		    (unsigned long)s.dropped, (unsigned long)(s.nr + s.dropped));
	tol = 0.03 + 4 * sqrt(want * (1 - want) / (double)(fib + spin));
	cr_assert(got > want - tol && got < want + tol,
		  "fib: %.3f of the samples (%lu of %lu), %.3f of the CPU time (%lu dropped), "
		  "bound %.3f", got, (unsigned long)fib, (unsigned long)(fib + spin), want,
		  (unsigned long)s.dropped, tol);
}

Test(sample, crash_capture_keeps_the_samples, .init = make_dir, .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "abort", "300", NULL };
	char out[256];
	struct tu_child c;
	static struct samples s;

	run_sampled_to("crash.zst", out, argv, "997", NULL, 60000, TU_CHILD_CRASH, &c);
	cr_assert_eq(c.status, 128 + 6, "SIGABRT: %d %s", c.status, c.err);
	read_samples(out, &s);
	cr_assert(s.clean && s.has_crash && s.has_sampling);
	cr_assert_gt(s.nr, 50, "%lu samples", (unsigned long)s.nr);
}

Test(sample, flight_crash_snapshot_holds_the_samples_of_its_window, .init = make_dir,
     .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "abort", "300", NULL };
	const char *env[] = { "REC_MODE=flight", "REC_WINDOW=10s", NULL };
	char out[256], snap[256];
	struct tu_child c;
	static struct samples s;

	run_sampled_to("flight-%p-%n.zst", out, argv, "997", env, 60000, TU_CHILD_CRASH, &c);
	cr_assert_eq(c.status, 128 + 6, "SIGABRT: %d %s", c.status, c.err);
	snprintf(snap, sizeof(snap), "%s/flight-%ld-1.zst", dir, printed(c.out, "pid"));
	read_samples(snap, &s);
	cr_assert(s.clean && s.has_crash && s.has_sampling, "%s", snap);
	/* 300 ms of CPU at 997 Hz, all inside the 10 s window: the ring grew to keep
	 * them rather than discard its oldest (a 16 KiB ring holds about 60). */
	cr_assert_gt(s.nr, 150, "%lu samples", (unsigned long)s.nr);
	cr_assert_geq(s.through_libc * 10, s.nr * 8);
}

/* The number after `"key":` in json, or -1. */
static long long json_num(const char *json, const char *key)
{
	const char *p = tu_json_key(json, key);

	return p ? strtoll(p, NULL, 10) : -1;
}

/*
 * F26 (check4): a flight snapshot of an unmodified program holds stack
 * samples only, and `tracetool info` said "duration: 0ns", events 0 s to
 * 0 s and a history of 0, though its samples span the work. Now the
 * duration is the span of its events and samples together (tracetool(1),
 * info), the snapshot line says where the samples start and end, and the
 * thread's history reaches back to its first sample; text and JSON agree.
 * The span is the file's own (read through format/), within 1 % (the rates
 * differ: tracetool's comes from the SYNC records).
 */
Test(sample, F26_info_of_a_snapshot_of_samples_only_spans_its_samples, .init = make_dir,
     .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE"), "abort", "300", NULL };
	const char *env[] = { "REC_MODE=flight", "REC_WINDOW=10s", NULL };
	char out[256], snap[256], want[64];
	struct tu_child c, t;
	static struct samples s;
	long long dur, from, to, hist;
	double span_ns;

	run_sampled_to("f26-%p-%n.zst", out, argv, "997", env, 60000, TU_CHILD_CRASH, &c);
	cr_assert_eq(c.status, 128 + 6, "SIGABRT: %d %s", c.status, c.err);
	snprintf(snap, sizeof(snap), "%s/f26-%ld-1.zst", dir, printed(c.out, "pid"));
	read_samples(snap, &s);
	cr_assert(s.clean && s.has_crash && s.has_sampling, "%s", snap);
	cr_assert_gt(s.nr, 100, "%lu samples", (unsigned long)s.nr);
	span_ns = (double)(s.last_ticks - s.first_ticks) * 1e9 / (double)s.ticks_per_second;
	{
		const char *tt[] = { env_or_fail("TRACETOOL"), "info", "--format=json", snap, NULL };

		tu_run_child(tt, NULL, 60000, 0, &t);
	}
	cr_assert_eq(t.status, 0, "%s", t.err);
	dur = json_num(t.out, "duration_ns");
	from = json_num(t.out, "samples_start_ns");
	to = json_num(t.out, "samples_end_ns");
	hist = json_num(t.out, "history_ns");
	cr_assert(dur >= span_ns * 0.99 - 1000 && dur <= span_ns * 1.01 + 1000,
		  "info says %lld ns, the samples cover %.0f ns: %s", dur, span_ns, t.out);
	/* Each end rounded to a ns on its own: the difference within 1 ns. */
	cr_assert(to - from >= dur - 1 && to - from <= dur + 1, "%s", t.out);
	cr_assert_eq(json_num(t.out, "events"), 0, "%s", t.out);
	/* The crash is after the last sample: the history reaches the first one. */
	cr_assert_geq(hist, dur, "%s", t.out);
	{
		const char *tt[] = { env_or_fail("TRACETOOL"), "info", snap, NULL };

		tu_run_child(tt, NULL, 60000, 0, &t);
	}
	cr_assert_eq(t.status, 0, "%s", t.err);
	snprintf(want, sizeof(want), "(%lld ns)\n", dur);
	cr_assert_not_null(strstr(t.out, want), "%s\n%s", want, t.out);
	snprintf(want, sizeof(want), "no events; samples %.6f s to %.6f s;", (double)from / 1e9,
		 (double)to / 1e9);
	cr_assert_not_null(strstr(t.out, want), "%s\n%s", want, t.out);
	snprintf(want, sizeof(want), " %.6f\n", (double)hist / 1e9);
	cr_assert_not_null(strstr(t.out, want), "history %s\n%s", want, t.out);
}

Test(sample, samples_with_counters_keep_the_counted_ring_whole, .init = make_dir,
     .fini = remove_dir)
{
	/* 2 counters: groups of 3 slots, so a sample's last group is padded. */
	const char *env[] = { "REC_OVERFLOW=block", "REC_COUNTERS=task-clock,page-faults", NULL };
	static struct samples s;

	/* A counted thread's ring holds groups of 1 + nr slots: its samples
	 * were all dropped (0 kept) and nothing said so. */
	probes_keep_every_scope("counted.zst", env, &s);
	cr_assert_gt(s.nr, s.dropped, "%lu samples, %lu dropped", (unsigned long)s.nr,
		     (unsigned long)s.dropped);
}

/*
 * REC_MODE=flight with REC_COUNTERS: a counted thread's samples were all
 * dropped (its flight ring was taken to hold counted events only; one
 * rec: line at start said so). A flight ring discards whole counter groups
 * and a sample takes whole groups, so the snapshot holds them, its scopes
 * whole and well nested around them.
 */
Test(sample, flight_snapshot_with_counters_holds_the_counted_threads_samples, .init = make_dir,
     .fini = remove_dir)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE_PROBES"), "300", "snap", NULL };
	const char *env[] = { "REC_MODE=flight", "REC_WINDOW=10s", "REC_AFTER=0",
			      "REC_COUNTERS=task-clock,page-faults", NULL };
	char out[256], snap[256];
	struct tu_child c;
	struct tr_trace tr;
	static struct samples s;

	run_sampled_to("fc-%n.zst", out, argv, "997", env, 120000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d: %s", c.status, c.err);
	cr_assert_eq(rec_lines(c.err), 0, "%s", c.err);
	snprintf(snap, sizeof(snap), "%s/fc-1.zst", dir);
	cr_assert_eq(tr_load(snap, &tr), 0, "%s", snap);
	cr_assert(tr.clean && tr.nr_corrupt == 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_gt(tr_calls(&tr, "outer"), 0);
	tr_free(&tr);
	read_samples(snap, &s);
	cr_assert(!s.corrupt && s.has_sampling);
	/* User-mode CPU only is sampled, and a counted probe spends most of its
	 * time in read(2): few samples, but kept, not dropped (the old code kept
	 * none and dropped every one). */
	cr_assert_gt(s.nr, 0, "%lu samples, %lu dropped", (unsigned long)s.nr,
		     (unsigned long)s.dropped);
	cr_assert_gt(s.nr, s.dropped, "%lu samples, %lu dropped", (unsigned long)s.nr,
		     (unsigned long)s.dropped);
}
