/* SPDX-License-Identifier: MIT */
/*
 * test_honest.c - README, "What librec guarantees", honest numbers (issue 14, items 1 and 8):
 * nothing of librec's set-up lands inside a recorded activation, and no
 * probe takes a page fault on librec's memory. None of these tests times
 * the machine: faults are counted by the kernel (getrusage(RUSAGE_THREAD)),
 * and activations are compared with other activations of the same thread
 * in the same trace.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "honest_hook.h"
#include "recfmt.h"
#include "trace_read.h"
#include "under_asan.h"

/*
 * Under ASan every store into the ring first touches its shadow memory
 * (1/8 of the ring, faulted lazily by the sanitizer's runtime, not librec),
 * and the checks slow some activations more than others: the counts and
 * ratios below are librec's only without it.
 */
#ifdef UNDER_ASAN
#define UNDER_SANITIZER true
#else
#define UNDER_SANITIZER false
#endif

static void skip_under_asan(void)
{
#ifdef UNDER_ASAN
	cr_skip_test("ASan's shadow memory faults and checks are not librec's");
#endif
}

static char out[256];

static void use_output(const char *what)
{
	snprintf(out, sizeof(out), "/tmp/rec_honest_%d_%s.zst", (int)getpid(), what);
	unlink(out);
	setenv("REC_OUTPUT", out, 1);
}

static void cleanup(void)
{
	if (out[0])
		unlink(out);
}

TestSuite(honest, .fini = cleanup, .timeout = 120);

static long thread_minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static long thread_nivcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void empty_scope(void)
{
	TRACE_SCOPE_NAMED("empty");
	__asm__ volatile("" ::: "memory");
}

/* ------------------------------------------------------------------ */
/*
 * A site's first hit registers it (site.c) in the activations around it
 * (docs/DESIGN.md, "First activation"): without a page fault. A fresh
 * thread, on a fresh stack, enters a scope whose site the main thread
 * registered, then the first hit of a nested site registers that one:
 * copy_site()'s 4 KiB stack buffer took the next page of the stack, one
 * fault in the outer activation on every such thread (1 in 4 of 10 runs of
 * the growth test below, where it was taken for the ring's growth).
 */
#define REGISTER_STACK_BYTES (256u << 10)

__attribute__((noinline)) static void register_nested(long *faults)
{
	TRACE_SCOPE_NAMED("registered_before");
	long f1 = thread_minflt();

	if (faults) {
		TRACE_SCOPE_NAMED("registered_inside");
		__asm__ volatile("" ::: "memory");
	}
	if (faults)
		*faults = thread_minflt() - f1;
}

static void *register_worker(void *arg)
{
	register_nested(arg);
	return NULL;
}

Test(honest, a_site_registered_inside_a_scope_faults_nothing)
{
	pthread_attr_t attr;
	pthread_t th;
	void *stack;
	long faults = -1;
	struct tr_trace tr;

	skip_under_asan();
	use_output("register");
	cr_assert_eq(rec_start(NULL), 0);
	register_nested(NULL); /* the outer site, registered by this thread */
	/* A stack of the thread's own, so that none of it was touched by an earlier thread. */
	stack = mmap(NULL, REGISTER_STACK_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	cr_assert_neq(stack, MAP_FAILED);
	cr_assert_eq(pthread_attr_init(&attr), 0);
	cr_assert_eq(pthread_attr_setstack(&attr, stack, REGISTER_STACK_BYTES), 0);
	cr_assert_eq(pthread_create(&th, &attr, register_worker, &faults), 0);
	pthread_join(th, NULL);
	pthread_attr_destroy(&attr);
	munmap(stack, REGISTER_STACK_BYTES);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(faults, 0, "%ld minor faults inside the activation that registered a site",
		     faults);
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr_calls(&tr, "registered_before"), 2);
	cr_assert_eq(tr_calls(&tr, "registered_inside"), 1);
	tr_free(&tr);
}

/* ------------------------------------------------------------------ */
/* No page fault in 2 M probes after a thread's first one. */

#define FAULT_CALLS 1000000 /* scopes: 2 M probes */

static void *fault_worker(void *arg)
{
	long *faults = arg;
	long before;

	empty_scope(); /* attaches this thread: its ring is faulted in here */
	before = thread_minflt();
	for (long i = 0; i < FAULT_CALLS; i++)
		empty_scope();
	*faults = thread_minflt() - before;
	return NULL;
}

/*
 * REC_BUFFER=16M, the pool's largest ring at the default REC_MEMORY: a ring
 * grows that far from the pool, without a fault, however late the writer.
 * Past it (the default REC_BUFFER is 64M) only a full ring grows, and its
 * probe maps and faults the larger ring in its slow path, before its stamp
 * (README, "Memory"; test_default_ring.c): with a writer kept off the CPU
 * on a loaded machine these 2 M records would fill a 16 MiB ring.
 */
Test(honest, no_fault_after_first_probe_scope)
{
	pthread_t th;
	long faults = -1;

	skip_under_asan();
	use_output("fault");
	setenv("REC_BUFFER", "16M", 1);
	pthread_create(&th, NULL, fault_worker, &faults);
	pthread_join(th, NULL);
	rec_stop();
	cr_assert_eq(faults, 0, "%ld minor faults in %d probes after the first", faults,
		     2 * FAULT_CALLS);
}

static void *fault_hook_worker(void *arg)
{
	long *faults = arg;
	long before;

	hook_empty();
	before = thread_minflt();
	for (long i = 0; i < FAULT_CALLS; i++)
		hook_empty();
	*faults = thread_minflt() - before;
	return NULL;
}

Test(honest, no_fault_after_first_probe_hook)
{
	pthread_t th;
	long faults = -1;

	skip_under_asan();
	use_output("faulthook");
	setenv("REC_BUFFER", "16M", 1); /* as no_fault_after_first_probe_scope */
	pthread_create(&th, NULL, fault_hook_worker, &faults);
	pthread_join(th, NULL);
	rec_stop();
	cr_assert_eq(faults, 0, "%ld minor faults in %d hook calls after the first", faults,
		     2 * FAULT_CALLS);
}

/*
 * Issue 31: a thread's ring starts small and grows. 8 fresh threads at
 * once, each with one scope around 1 000 others (its ring grows twice or
 * three times while the outer scope is open, whatever the writer does:
 * 2 002 events, growth at a quarter full): the attach faults before the
 * outer stamp, and nothing faults inside it -- the larger rings come from
 * the pool, faulted in already.
 */
#define GROW_THREADS 8
#define GROW_INNER 1000

struct grow_faults {
	long attach, inside;
};

static void *grow_worker(void *arg)
{
	struct grow_faults *f = arg;
	long f0 = thread_minflt(), f1, f2;

	{
		TRACE_SCOPE_NAMED("outer");
		f1 = thread_minflt();
		for (int i = 0; i < GROW_INNER; i++)
			empty_scope();
		f2 = thread_minflt();
	}
	f->attach = f1 - f0;
	f->inside = f2 - f1;
	return NULL;
}

Test(honest, attach_and_ring_growth_of_8_fresh_threads_fault_nothing_inside_a_scope)
{
	pthread_t th[GROW_THREADS];
	struct grow_faults f[GROW_THREADS];
	struct tr_trace tr;

	skip_under_asan();
	use_output("grow");
	cr_assert_eq(rec_start(NULL), 0);
	for (int i = 0; i < GROW_THREADS; i++)
		pthread_create(&th[i], NULL, grow_worker, &f[i]);
	for (int i = 0; i < GROW_THREADS; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(rec_stop(), 0);
	for (int i = 0; i < GROW_THREADS; i++) {
		cr_assert_geq(f[i].attach, 1, "thread %d: its attach faulted nothing?", i);
		/* None: the larger rings come from the pool, and the thread
		 * that registers "empty" (whichever gets there first) does so
		 * without a fault (a_site_registered_inside_a_scope_faults_nothing). */
		cr_assert_eq(f[i].inside, 0, "thread %d: %ld minor faults inside its outer scope", i,
			     f[i].inside);
	}
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr_calls(&tr, "outer") + tr_calls(&tr, "empty") + tr_dropped(&tr),
		     GROW_THREADS * (GROW_INNER + 1));
	tr_free(&tr);
}

/* ------------------------------------------------------------------ */
/*
 * A scope open across rec_stop()/rec_start() leaves no exit without its
 * enter in the new file: with TRACE_SCOPE and with the hook, and (this file
 * is built twice) with the shared and the static librec.
 */

static char out2[256];

static void cleanup2(void)
{
	if (out2[0])
		unlink(out2);
}

static void restart_to_out2(void)
{
	snprintf(out2, sizeof(out2), "/tmp/rec_honest_%d_restarted.zst", (int)getpid());
	unlink(out2);
	setenv("REC_OUTPUT", out2, 1);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(rec_start(NULL), 0);
}

__attribute__((noinline)) static void scope_across(void)
{
	TRACE_SCOPE_NAMED("across");
	empty_scope();
	restart_to_out2();
	empty_scope(); /* inside the old scope, in the new file */
}

/* old: enters recorded before the stop; fresh: the new file's scopes (2 events each). */
static void check_restart(uint64_t old_events, uint64_t fresh_scopes)
{
	struct tr_trace tr;

	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr.nr_threads, 1);
	cr_assert_eq(tr.nr_events, old_events);
	cr_assert_eq(tr.threads[0].nr_bad_exits, 0);
	cr_assert_eq(tr.threads[0].nr_unclosed, 1, "the scope open at the stop");
	tr_free(&tr);
	cr_assert_eq(tr_load(out2, &tr), 0);
	cr_assert(tr.clean);
	cr_assert_eq(tr.nr_threads, 1);
	cr_assert_eq(tr.threads[0].nr_bad_exits, 0, "an exit without its enter in the new file");
	cr_assert_eq(tr.threads[0].nr_unclosed, 0);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr.nr_events, 2 * fresh_scopes);
	tr_free(&tr);
}

Test(honest, restart_inside_a_scope_leaves_no_orphan_exit, .fini = cleanup2)
{
	use_output("restart");
	empty_scope();
	scope_across();
	empty_scope();
	cr_assert_eq(rec_stop(), 0);
	/* old: empty (2), across's enter, empty (2); new: empty twice */
	check_restart(5, 2);
	cleanup();
}

Test(honest, restart_inside_a_hooked_function_leaves_no_orphan_exit, .fini = cleanup2)
{
	use_output("restarthook");
	hook_empty();
	hook_across(restart_to_out2);
	hook_empty();
	cr_assert_eq(rec_stop(), 0);
	/* old: hook_empty (2), hook_across's enter, hook_empty (2); new: hook_empty twice */
	check_restart(5, 2);
	cleanup();
}

/* ------------------------------------------------------------------ */
/* The first activation of a fresh thread is like its others. */

#define BUSY_NS 20000u
#define ACTIVATIONS 41
#define FIRST_TOLERANCE 1.5 /* the checker's: first <= 1.5 x the thread's median */
/*
 * librec's part of an activation: its trace duration minus the time the
 * thread's own clock saw spent in the body. The enter's stamp is taken after
 * every set-up (attach, ring fault-in, site registration) and the exit's
 * first thing, so this is tens of nanoseconds later on; in a fresh thread's
 * first activation also its first clock_gettime() (0.4-1.6 us here, without
 * librec too) and the cache misses left by zeroing its ring: p50 1.4 us,
 * p90 3.3 us (docs/DESIGN.md, "First activation").
 */
#define LIBREC_PART_MAX 0.5 /* of the thread's median activation: 10 us of 20 */
/*
 * Not yet 0: about 1 in 100 fresh threads in this test's process showed
 * 10 to 120 us there (not reproduced outside Criterion; cause not found).
 * Every such thread is printed.
 */
#define LIBREC_PART_SLOW_THREADS 1
#define NR_FRESH 8

/*
 * The checker's scope, a 20 us busy-wait on CLOCK_MONOTONIC; it also keeps
 * the busy-wait's own duration (the program's clock, read inside the scope)
 * so that each activation splits into the body's time and librec's.
 */
__attribute__((noinline)) static uint64_t busy_scope(void)
{
	TRACE_SCOPE_NAMED("busy");
	uint64_t t0 = mono_ns(), t1;

	while ((t1 = mono_ns()) - t0 < BUSY_NS)
		;
	return t1 - t0;
}

struct fresh {
	pid_t tid;
	uint64_t body_ns[ACTIVATIONS]; /* the busy-wait's own time, per activation */
	bool preempted; /* involuntarily switched out around its first activation */
	int ran;	/* its activations are done (release) */
};

static pthread_mutex_t fresh_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
static bool fresh_done;

static void *fresh_worker(void *arg)
{
	struct fresh *f = arg;

	f->tid = gettid();
	long sw = thread_nivcsw();

	/* The first probe of this thread: attach and ring set-up happen in it. */
	f->body_ns[0] = busy_scope();
	/* librec's own waits would be voluntary switches: not counted here. */
	f->preempted = thread_nivcsw() != sw;
	for (int i = 1; i < ACTIVATIONS; i++)
		f->body_ns[i] = busy_scope();
	__atomic_store_n(&f->ran, 1, __ATOMIC_RELEASE);
	/* Stay alive until all are done: each thread gets a ring of its own,
	 * never one an exited thread left in librec's pool. */
	pthread_mutex_lock(&fresh_lock);
	while (!fresh_done)
		pthread_cond_wait(&fresh_cond, &fresh_lock);
	pthread_mutex_unlock(&fresh_lock);
	return NULL;
}

struct durations {
	uint32_t busy_id;
	uint64_t open[NR_FRESH + 2];
	uint32_t n[NR_FRESH + 2];
	uint64_t d[NR_FRESH + 2][ACTIVATIONS];
};

static void on_busy(void *arg, uint32_t serial, uint64_t ticks, uint32_t code)
{
	struct durations *du = arg;

	if (serial >= NR_FRESH + 2u || RECFMT_CODE_SITE(code) != du->busy_id)
		return;
	if (!RECFMT_CODE_IS_EXIT(code))
		du->open[serial] = ticks;
	else if (du->n[serial] < ACTIVATIONS)
		du->d[serial][du->n[serial]++] = ticks - du->open[serial];
}

static int cmp_double_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint32_t site_id(const struct tr_trace *tr, const char *name)
{
	for (uint32_t i = 0; i < tr->nr_sites; i++)
		if (tr->site_names[i] && !strcmp(tr->site_names[i], name))
			return i;
	return 0;
}

static double median_of(const double *v, int n)
{
	double s[ACTIVATIONS];

	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double_asc);
	return s[n / 2];
}

/*
 * Eight fresh threads, each running 41 scopes that busy-wait 20 us on
 * CLOCK_MONOTONIC and staying alive to the end (so each attaches a fresh
 * ring): created one after another (each runs alone), or all at once.
 * For every thread:
 *  - librec's part of its first activation (trace minus the body's own
 *    clock) is within LIBREC_PART_MAX of its median activation (but
 *    LIBREC_PART_SLOW_THREADS, see there), unless the thread was switched
 *    out involuntarily around that activation (ru_nivcsw moved: CI runs
 *    other tests beside this one; a first CI run saw 281 us there) --
 *    librec's own waits would be voluntary switches, which are not excused;
 *  - the checker's ratio, first <= 1.5 x median, holds once the time the
 *    body's own clock saw over its median is taken out: that time is the
 *    program's or the machine's (a preemption on this shared VM, the
 *    program's first call through its PLT), which the same program without
 *    librec shows as often (docs/DESIGN.md, "First activation"). A body
 *    1.41x its median plus librec's usual part made 1.65x in CI.
 */
static void fresh_threads(const char *what, bool all_at_once)
{
	static struct fresh f[NR_FRESH];
	static struct durations du;
	static pthread_t th[NR_FRESH];
	struct tr_trace tr;
	int over = 0, machine = 0, slow = 0;

	skip_under_asan();
	use_output(what);
	memset(f, 0, sizeof(f));
	fresh_done = false;
	for (int i = 0; i < NR_FRESH; i++) {
		pthread_create(&th[i], NULL, fresh_worker, &f[i]);
		/* One at a time: its first activation has a core to itself. */
		while (!all_at_once && !__atomic_load_n(&f[i].ran, __ATOMIC_ACQUIRE))
			usleep(1000);
	}
	for (int i = 0; i < NR_FRESH; i++)
		while (!__atomic_load_n(&f[i].ran, __ATOMIC_ACQUIRE))
			usleep(1000);
	pthread_mutex_lock(&fresh_lock);
	fresh_done = true;
	pthread_cond_broadcast(&fresh_cond);
	pthread_mutex_unlock(&fresh_lock);
	for (int i = 0; i < NR_FRESH; i++)
		pthread_join(th[i], NULL);
	rec_stop();
	memset(&du, 0, sizeof(du));
	cr_assert_eq(tr_load(out, &tr), 0);
	du.busy_id = site_id(&tr, "busy");
	tr_free(&tr);
	cr_assert_neq(du.busy_id, 0, "no site named busy");
	cr_assert_eq(tr_load_each(out, &tr, on_busy, &du), 0);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert_gt(tr.ticks_per_second, 0);
	for (int i = 0; i < NR_FRESH; i++) {
		const struct tr_thread *t = NULL;
		double trace_ns[ACTIVATIONS], body_ns[ACTIVATIONS], median, body_median, part;

		for (uint32_t k = 0; k < tr.nr_threads; k++)
			if (tr.threads[k].os_tid == (uint32_t)f[i].tid)
				t = &tr.threads[k];
		cr_assert_not_null(t, "thread %d (tid %d) not in the trace", i, (int)f[i].tid);
		cr_assert_lt(t->serial, NR_FRESH + 2);
		cr_assert_eq(du.n[t->serial], ACTIVATIONS);
		for (int k = 0; k < ACTIVATIONS; k++) {
			trace_ns[k] = (double)du.d[t->serial][k] * 1e9 / (double)tr.ticks_per_second;
			body_ns[k] = (double)f[i].body_ns[k];
		}
		median = median_of(trace_ns, ACTIVATIONS);
		body_median = median_of(body_ns, ACTIVATIONS);
		part = trace_ns[0] - body_ns[0];
		if (getenv("HONEST_VERBOSE"))
			fprintf(stderr, "%s thread %d: first %.2fx its median, body %.2fx, librec %.0f ns\n",
				what, i, trace_ns[0] / median, body_ns[0] / body_median, part);
		if (part > LIBREC_PART_MAX * median && f[i].preempted) {
			/* The gap between a stamp and the body held a preemption: the
			 * scheduler's time on a shared machine, not librec's. */
			machine++;
			cr_log_info("%s thread %d: preempted in its first activation, librec's part "
				    "%.0f ns", what, i, part);
			continue;
		}
		if (part > LIBREC_PART_MAX * median) {
			slow++;
			fprintf(stderr, "%s thread %d: librec's part of its first activation %.0f ns, "
				"median activation %.0f ns\n", what, i, part, median);
			continue;
		}
		if (trace_ns[0] <= FIRST_TOLERANCE * median)
			continue;
		/* What the body's own clock saw over its median is the program's
		 * or the machine's; the rest must be within the checker's ratio. */
		if (trace_ns[0] - (body_ns[0] > body_median ? body_ns[0] - body_median : 0) <=
		    FIRST_TOLERANCE * median) {
			machine++;
			cr_log_info("%s thread %d: first %.2fx its median, the body's own clock %.2fx",
				    what, i, trace_ns[0] / median, body_ns[0] / body_median);
			continue;
		}
		over++;
		fprintf(stderr, "%s thread %d: first activation %.0f ns, median %.0f (%.2fx), body %.2fx\n",
			what, i, trace_ns[0], median, trace_ns[0] / median, body_ns[0] / body_median);
	}
	cr_expect_eq(over, 0, "%s: %d of %d threads' first activation over %.1fx their median",
		     what, over, NR_FRESH, FIRST_TOLERANCE);
	cr_expect_leq(slow, LIBREC_PART_SLOW_THREADS,
		      "%s: %d of %d threads with librec's part of their first activation over %.1fx "
		      "their median", what, slow, NR_FRESH, LIBREC_PART_MAX);
	cr_expect_lt(machine, NR_FRESH, "%s: every thread's own clock saw its first run slow", what);
	tr_free(&tr);
}

Test(honest, first_activation_like_the_others)
{
	fresh_threads("first", false);
}

Test(honest, first_activation_like_the_others_all_at_once)
{
	fresh_threads("firstall", true);
}

/* ------------------------------------------------------------------ */
/* The seed's hotspot demo: a wrapper's self time is about 0. */

static volatile unsigned long sink;

__attribute__((noinline)) static void func_a(void)
{
	TRACE_SCOPE_NAMED("func_a");
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}

__attribute__((noinline)) static void func_b(void)
{
	TRACE_SCOPE_NAMED("func_b");
	for (unsigned long i = 0; i < 400000; i++)
		sink += i;
}

__attribute__((noinline)) static void wrapper_a(void)
{
	TRACE_SCOPE_NAMED("wrapper_a");
	func_a();
}

__attribute__((noinline)) static void wrapper_b(void)
{
	TRACE_SCOPE_NAMED("wrapper_b");
	func_b();
}

/*
 * Per site: each activation's self share (its time minus its direct
 * children's, over its time). The test judges the median activation: one
 * preemption inside a wrapper's few nanoseconds of its own (this VM is
 * shared, and the sanitizer runs are slow) must not fail it.
 */
#define MAX_SHARES 128
struct selftime {
	uint32_t stack[64];
	uint64_t at[64], children[64]; /* per open frame */
	uint32_t depth;
	double share[64][MAX_SHARES];
	uint32_t nr_shares[64];
	uint64_t total[64], self[64]; /* over all activations */
	uint32_t first_root; /* site of the first outermost activation */
};

static void on_self(void *arg, uint32_t serial, uint64_t ticks, uint32_t code)
{
	struct selftime *s = arg;
	uint32_t site = RECFMT_CODE_SITE(code);

	(void)serial;
	if (site >= 64)
		return;
	if (!RECFMT_CODE_IS_EXIT(code)) {
		if (!s->depth && !s->first_root)
			s->first_root = site;
		s->stack[s->depth] = site;
		s->children[s->depth] = 0;
		s->at[s->depth++] = ticks;
		return;
	}
	cr_assert_gt(s->depth, 0);
	s->depth--;
	uint64_t d = ticks - s->at[s->depth];

	s->total[site] += d;
	s->self[site] += d - s->children[s->depth];
	if (d && s->nr_shares[site] < MAX_SHARES)
		s->share[site][s->nr_shares[site]++] =
			(double)(d - s->children[s->depth]) / (double)d;
	if (s->depth)
		s->children[s->depth - 1] += d;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * quiet: the run had no involuntary context switch and no sanitizer; then
 * the whole run's self share is judged too, which the first activation's
 * set-up (the bug this guards against) would dominate.
 */
static void check_self(const char *wrapper, double max_share, bool quiet)
{
	static struct selftime s;
	struct tr_trace tr;
	uint32_t id;

	memset(&s, 0, sizeof(s));
	cr_assert_eq(tr_load_each(out, &tr, on_self, &s), 0);
	cr_assert_eq(tr_dropped(&tr), 0);
	/* Function sites are named offline (tracetool): the hook's wrapper is
	 * the outermost one. */
	id = wrapper ? site_id(&tr, wrapper) : s.first_root;
	if (!wrapper)
		wrapper = "hook_wrapper_a";
	cr_assert_neq(id, 0, "no site %s", wrapper);
	cr_assert_lt(id, 64);
	cr_assert_gt(s.nr_shares[id], 50, "%s: %u activations", wrapper, s.nr_shares[id]);
	qsort(s.share[id], s.nr_shares[id], sizeof(double), cmp_double);
	double share = s.share[id][s.nr_shares[id] / 2];

	cr_expect_lt(share, max_share, "%s: median self time %.2f %% of its total", wrapper,
		     share * 100);
	share = (double)s.self[id] / (double)s.total[id];
	if (quiet)
		cr_expect_lt(share, max_share, "%s: self time %.2f %% of its total", wrapper,
			     share * 100);
	else
		cr_log_info("%s: self time %.2f %% of its total in a preempted run", wrapper,
			    share * 100);
	tr_free(&tr);
}

Test(honest, hotspot_wrappers_have_no_self_time)
{
	long sw = thread_nivcsw();
	bool quiet;

	use_output("hotspot");
	for (int i = 0; i < 100; i++) {
		wrapper_a();
		wrapper_b();
	}
	rec_stop();
	quiet = thread_nivcsw() == sw && !UNDER_SANITIZER;
	check_self("wrapper_a", 0.02, quiet);
	check_self("wrapper_b", 0.02, quiet);
}

Test(honest, hotspot_wrappers_have_no_self_time_hook)
{
	long sw = thread_nivcsw();
	bool quiet;

	use_output("hotspothook");
	for (int i = 0; i < 100; i++)
		hook_wrapper_a();
	rec_stop();
	quiet = thread_nivcsw() == sw && !UNDER_SANITIZER;
	check_self(NULL, 0.02, quiet);
}
