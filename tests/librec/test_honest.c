/* SPDX-License-Identifier: MIT */
/*
 * test_honest.c - contract §7, "honest numbers" (issue 14, items 1 and 8):
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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "honest_hook.h"
#include "recfmt.h"
#include "trace_read.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

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

/* The default ring (16 MiB) is lapped 4 times by these 4 M records. */
Test(honest, no_fault_after_first_probe_scope)
{
	pthread_t th;
	long faults = -1;

	skip_under_asan();
	use_output("fault");
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
	pthread_create(&th, NULL, fault_hook_worker, &faults);
	pthread_join(th, NULL);
	rec_stop();
	cr_assert_eq(faults, 0, "%ld minor faults in %d hook calls after the first", faults,
		     2 * FAULT_CALLS);
}

/* ------------------------------------------------------------------ */
/* The first activation of a fresh thread is like its others. */

#define BUSY_NS 20000u
#define ACTIVATIONS 41
#define FIRST_TOLERANCE 1.5 /* the checker's: first <= 1.5 x the thread's median */
/*
 * This shared VM also slows a single activation without any context switch
 * (3x to 388x seen, in any activation, librec's set-up long done: the
 * hypervisor taking the vCPU or backing a page): one thread of the 8 may be
 * over FIRST_TOLERANCE. Before issue 14 every fresh thread's first
 * activation was 9x to 860x its median, so this still fails on that.
 */
#define NOISE_THREADS 1
#define WANTED_THREADS 8
#define MAX_THREADS 64

/*
 * The scope of the checker's program, a 20 us busy-wait, which also reads
 * the thread's involuntary context switches at its start and end (in every
 * activation alike). Return: whether the kernel switched the thread out.
 */
__attribute__((noinline)) static bool busy_scope(void)
{
	TRACE_SCOPE_NAMED("busy");
	long before = thread_nivcsw();
	uint64_t t0 = mono_ns();

	while (mono_ns() - t0 < BUSY_NS)
		;
	return thread_nivcsw() != before;
}

struct fresh {
	pid_t tid;
	bool preempted; /* involuntarily switched out during its first activation */
	int ran;	/* its activations are done (release) */
};

static pthread_mutex_t fresh_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
static bool fresh_done;

static void *fresh_worker(void *arg)
{
	struct fresh *f = arg;
	f->tid = gettid();
	(void)thread_nivcsw(); /* as warm as in the later activations */
	/* The first probe of this thread: attach and ring set-up happen in it. */
	f->preempted = busy_scope();
	for (int i = 1; i < ACTIVATIONS; i++)
		busy_scope();
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
	uint64_t open[MAX_THREADS + 2];
	uint32_t n[MAX_THREADS + 2];
	uint64_t d[MAX_THREADS + 2][ACTIVATIONS];
};

static void on_busy(void *arg, uint32_t serial, uint64_t ticks, uint32_t code)
{
	struct durations *du = arg;

	if (serial >= MAX_THREADS + 2u || RECFMT_CODE_SITE(code) != du->busy_id)
		return;
	if (!RECFMT_CODE_IS_EXIT(code))
		du->open[serial] = ticks;
	else if (du->n[serial] < ACTIVATIONS)
		du->d[serial][du->n[serial]++] = ticks - du->open[serial];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t site_id(const struct tr_trace *tr, const char *name)
{
	for (uint32_t i = 0; i < tr->nr_sites; i++)
		if (tr->site_names[i] && !strcmp(tr->site_names[i], name))
			return i;
	return 0;
}

/*
 * Eight fresh threads, one after another, each running 41 scopes that
 * busy-wait 20 us on CLOCK_MONOTONIC; each stays alive to the end, so
 * each attaches a fresh ring. Tolerance: each thread's first activation
 * <= 1.5 x its median (the checker's), but one (see NOISE_THREADS). A thread the kernel switched out
 * involuntarily during its first activation (ru_nivcsw moved: the
 * machine is shared) is replaced by
 * another, up to 64 threads, as its first activation may then measure the
 * scheduler, not librec; librec's own waits would be voluntary switches
 * and are not excused.
 */
Test(honest, first_activation_like_the_others)
{
	static struct fresh f[MAX_THREADS];
	static struct durations du;
	struct tr_trace tr;
	int nr = 0, good = 0, over = 0;

	skip_under_asan();
	use_output("first");
	static pthread_t th[MAX_THREADS];

	while (good < WANTED_THREADS && nr < MAX_THREADS) {
		/* One at a time: its first activation has a core to itself. */
		pthread_create(&th[nr], NULL, fresh_worker, &f[nr]);
		while (!__atomic_load_n(&f[nr].ran, __ATOMIC_ACQUIRE))
			usleep(1000);
		good += !f[nr].preempted;
		nr++;
	}
	pthread_mutex_lock(&fresh_lock);
	fresh_done = true;
	pthread_cond_broadcast(&fresh_cond);
	pthread_mutex_unlock(&fresh_lock);
	for (int i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	rec_stop();
	cr_assert_eq(good, WANTED_THREADS, "only %d of %d threads ran their first scope unpreempted",
		     good, nr);
	memset(&du, 0, sizeof(du));
	cr_assert_eq(tr_load(out, &tr), 0);
	du.busy_id = site_id(&tr, "busy");
	tr_free(&tr);
	cr_assert_neq(du.busy_id, 0, "no site named busy");
	cr_assert_eq(tr_load_each(out, &tr, on_busy, &du), 0);
	cr_assert_eq(tr_dropped(&tr), 0);
	for (int i = 0; i < nr; i++) {
		const struct tr_thread *t = NULL;
		uint64_t sorted[ACTIVATIONS], median, first;

		for (uint32_t k = 0; k < tr.nr_threads; k++)
			if (tr.threads[k].os_tid == (uint32_t)f[i].tid)
				t = &tr.threads[k];
		cr_assert_not_null(t, "thread %d (tid %d) not in the trace", i, (int)f[i].tid);
		cr_assert_lt(t->serial, MAX_THREADS + 2);
		cr_assert_eq(du.n[t->serial], ACTIVATIONS);
		if (f[i].preempted)
			continue;
		memcpy(sorted, du.d[t->serial], sizeof(sorted));
		qsort(sorted, ACTIVATIONS, sizeof(sorted[0]), cmp_u64);
		median = sorted[ACTIVATIONS / 2];
		first = du.d[t->serial][0];
		if (getenv("HONEST_VERBOSE"))
			fprintf(stderr, "thread %d: %.2fx\n", i, (double)first / (double)median);
		if ((double)first > FIRST_TOLERANCE * (double)median) {
			over++;
			fprintf(stderr, "thread %d: first activation %llu ticks, median %llu (%.2fx)\n",
				i, (unsigned long long)first, (unsigned long long)median,
				(double)first / (double)median);
		}
	}
	cr_expect_leq(over, NOISE_THREADS, "%d of %d threads' first activation over %.1fx their median",
		      over, WANTED_THREADS, FIRST_TOLERANCE);
	tr_free(&tr);
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
