/* SPDX-License-Identifier: MIT */
/*
 * test_default_ring.c - issue 29 item 1: at the defaults a thread's ring
 * grows to 64 MiB in stream mode (8 MiB in flight mode): to 16 MiB from
 * the pool, which has those rings faulted in ahead of need, so a thread
 * that outruns a writer kept off the CPU grows that far without a page
 * fault; past 16 MiB only when full, mapping its ring itself (README,
 * "Memory"; docs/DESIGN.md, "Ring memory"), so that a writer kept off the
 * CPU by a busy machine for 13-138 ms (what 16 MiB did not cover) loses
 * nothing. Nothing here times the machine: the ring's size and the drops
 * are read from the thread's state and the faults are the kernel's count
 * (getrusage(RUSAGE_THREAD)).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <rec.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rec_internal.h"
#include "trace_read.h"
#include "under_asan.h"
#include "writer_tid.h"

static char out[256];

static void use_output(const char *what)
{
	snprintf(out, sizeof(out), "/tmp/rec_default_ring_%d_%s.zst", (int)getpid(), what);
	unlink(out);
	setenv("REC_OUTPUT", out, 1);
	unsetenv("REC_BUFFER");
	unsetenv("REC_MEMORY");
	unsetenv("REC_MODE");
	unsetenv("REC_OVERFLOW");
}

static void cleanup(void)
{
	if (out[0])
		unlink(out);
}

TestSuite(default_ring, .fini = cleanup, .timeout = 120);

Test(default_ring, is_64_MiB_in_stream_mode_and_8_MiB_in_flight_mode)
{
	struct rec__config cfg = { 0 };

	use_output("cfg");
	cr_assert_eq(rec__config_resolve(NULL, &cfg), 0);
	cr_assert_eq(cfg.buffer_bytes, (size_t)64 << 20, "stream: %zu", cfg.buffer_bytes);
	setenv("REC_MODE", "flight", 1);
	cr_assert_eq(rec__config_resolve(NULL, &cfg), 0);
	cr_assert_eq(cfg.buffer_bytes, (size_t)8 << 20, "flight: %zu", cfg.buffer_bytes);
	setenv("REC_BUFFER", "32M", 1);
	cr_assert_eq(rec__config_resolve(NULL, &cfg), 0);
	cr_assert_eq(cfg.buffer_bytes, (size_t)32 << 20, "flight, REC_BUFFER=32M: %zu",
		     cfg.buffer_bytes);
	unsetenv("REC_MODE");
	unsetenv("REC_BUFFER");
}

/* ------------------------------------------------------------------ */

/* Scopes the thread makes: 8 M events, 2 rings of 64 MiB. */
#define OUTRUN_CALLS (4L << 20)
#define SLOTS(mib) ((uint64_t)(mib) * (1u << 20) / sizeof(struct rec__event))

struct outrun {
	int cpu;
	long calls;
	long faults;	     /* until the ring held 16 MiB: -1 if it never did */
	uint64_t slots;	     /* the ring's at the end */
	uint64_t dropped;    /* scopes */
};

__attribute__((noinline)) static void outrun_scope(void)
{
	TRACE_SCOPE_NAMED("outrun");
	__asm__ volatile("" ::: "memory");
}

static long thread_minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static void pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	cr_assert_eq(sched_setaffinity(tid, sizeof(set), &set), 0);
}

static void unpin(pid_t tid)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &set);
	sched_setaffinity(tid, sizeof(set), &set); /* the kernel keeps the CPUs that exist */
}

static void *outrun_worker(void *arg)
{
	struct outrun *o = arg;
	long before;

	struct rec__thread *t;

	pin(0, o->cpu);
	outrun_scope(); /* attaches this thread: its first ring is faulted in here */
	t = rec__thread_self();
	before = thread_minflt();
	for (long i = 0; i < o->calls; i++) {
		uint64_t was = t->ring.p.mask + 1;

		outrun_scope();
		/* Grown to 16 MiB (from the pool) in this scope: its faults so far. */
		if (was != SLOTS(16) && t->ring.p.mask + 1 == SLOTS(16))
			o->faults = thread_minflt() - before;
	}
	o->slots = t->ring.p.mask + 1;
	o->dropped = __atomic_load_n(&t->ring.p.nr_dropped, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * The writer is made SCHED_IDLE and put on the worker's CPU, so that the
 * worker outruns it whatever the machine. Then restored, and the recording
 * stopped (the stop drains what the ring holds: without CAP_SYS_NICE and
 * with RLIMIT_NICE at 0 the kernel refuses to leave SCHED_IDLE, and the
 * stop then waits for the idle writer instead).
 */
static void outrun_starved(struct outrun *o)
{
	struct sched_param sp = { 0 };
	pthread_t th;
	pid_t wtid = 0;

	o->cpu = sched_getcpu();
	o->faults = -1;
	cr_assert_eq(rec_start(NULL), 0);
	/* The writer names itself once it runs: wait for it (no deadline but the suite's). */
	while (!(wtid = writer_tid())) {
		struct timespec nap = { 0, 1000 * 1000 };

		nanosleep(&nap, NULL);
	}
	cr_assert_geq(o->cpu, 0);
	pin(wtid, o->cpu);
	cr_assert_eq(sched_setscheduler(wtid, SCHED_IDLE, &sp), 0);
	pthread_create(&th, NULL, outrun_worker, o);
	pthread_join(th, NULL);
	sched_setscheduler(wtid, SCHED_OTHER, &sp);
	unpin(wtid);
	rec_stop();
}

/*
 * A thread that outruns a starved writer: the ring grows a quarter full at
 * a time from 16 KiB to 16 MiB, every ring from the pool, faulted in at the
 * start (a ring the probe had to map itself would fault: the pool held no
 * 16 MiB ring when it was capped at an eighth of REC_MEMORY); then, full,
 * to 32 and 64 MiB, which its probes map themselves; then it drops (drop
 * mode, the default).
 */
Test(default_ring, a_thread_outrunning_a_starved_writer_grows_to_16_MiB_without_a_fault_then_to_64)
{
	struct outrun o = { .calls = OUTRUN_CALLS };

#ifdef UNDER_ASAN
	cr_skip_test("ASan's shadow memory faults are not librec's");
#endif
	use_output("outrun");
	outrun_starved(&o);
	cr_assert_eq(o.faults, 0, "%ld minor faults in the scopes until the ring held 16 MiB",
		     o.faults);
	cr_assert_eq(o.slots, SLOTS(64), "the ring holds %llu records",
		     (unsigned long long)o.slots);
}

/*
 * 3 M events (48 MiB) recorded while the writer is kept off the CPU: the
 * default ring holds them all, none dropped. With the 16 MiB ring of
 * before, the writer had to drain 2 M of them at SCHED_IDLE's share of the
 * CPU meanwhile.
 */
#define STARVED_CALLS (1536L << 10)

Test(default_ring, a_writer_kept_off_the_cpu_for_48_MiB_of_events_loses_none_at_the_defaults)
{
	struct outrun o = { .calls = STARVED_CALLS };
	struct tr_trace tr;

	use_output("starved");
	outrun_starved(&o);
	cr_assert_eq(o.dropped, 0, "%llu scopes dropped", (unsigned long long)o.dropped);
	cr_assert_eq(tr_load(out, &tr), 0);
	cr_assert_eq(tr_dropped(&tr), 0);
	cr_assert_eq(tr_calls(&tr, "outrun"), STARVED_CALLS + 1);
	tr_free(&tr);
}
