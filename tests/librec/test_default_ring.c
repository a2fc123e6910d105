/* SPDX-License-Identifier: MIT */
/*
 * test_default_ring.c - issue 29 item 1: at the defaults a thread's ring
 * grows to 16 MiB in stream mode (8 MiB in flight mode), and the pool has
 * that ring faulted in ahead of need (README, "Memory"; docs/DESIGN.md,
 * "Ring memory"): a thread that outruns a writer kept off the CPU grows all
 * the way without a page fault. Nothing here times the machine: the ring's
 * size is read from the thread's state and the faults are the kernel's
 * count (getrusage(RUSAGE_THREAD)).
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

Test(default_ring, is_16_MiB_in_stream_mode_and_8_MiB_in_flight_mode)
{
	struct rec__config cfg = { 0 };

	use_output("cfg");
	cr_assert_eq(rec__config_resolve(NULL, &cfg), 0);
	cr_assert_eq(cfg.buffer_bytes, (size_t)16 << 20, "stream: %zu", cfg.buffer_bytes);
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

/* Scopes the thread makes: 8 M events, 8 rings of 16 MiB. */
#define OUTRUN_CALLS (4L << 20)

struct outrun {
	int cpu;
	long faults;
	uint64_t slots;
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

	pin(0, o->cpu);
	outrun_scope(); /* attaches this thread: its first ring is faulted in here */
	before = thread_minflt();
	for (long i = 0; i < OUTRUN_CALLS; i++)
		outrun_scope();
	o->faults = thread_minflt() - before;
	o->slots = rec__thread_self()->ring.p.mask + 1;
	return NULL;
}

/*
 * The writer is made SCHED_IDLE and put on the worker's CPU, so that the
 * worker outruns it whatever the machine: the ring grows a quarter full at
 * a time from 16 KiB to REC_BUFFER, then drops (drop mode, the default).
 * Every larger ring must come from the pool, faulted in at the start: a
 * ring the probe had to map itself would fault (the pool held no 16 MiB
 * ring when it was capped at an eighth of REC_MEMORY).
 */
Test(default_ring, a_thread_outrunning_a_starved_writer_grows_to_16_MiB_without_a_fault)
{
	struct sched_param sp = { 0 };
	struct outrun o = { .cpu = sched_getcpu(), .faults = -1 };
	pthread_t th;
	pid_t wtid = 0;

#ifdef UNDER_ASAN
	cr_skip_test("ASan's shadow memory faults are not librec's");
#endif
	use_output("outrun");
	cr_assert_eq(rec_start(NULL), 0);
	/* The writer names itself once it runs: wait for it (no deadline but the suite's). */
	while (!(wtid = writer_tid())) {
		struct timespec nap = { 0, 1000 * 1000 };

		nanosleep(&nap, NULL);
	}
	cr_assert_geq(o.cpu, 0);
	pin(wtid, o.cpu);
	cr_assert_eq(sched_setscheduler(wtid, SCHED_IDLE, &sp), 0);
	pthread_create(&th, NULL, outrun_worker, &o);
	pthread_join(th, NULL);
	/*
	 * The stop drains what the ring holds: the writer gets its share again
	 * (without CAP_SYS_NICE and with RLIMIT_NICE at 0 the kernel refuses to
	 * leave SCHED_IDLE: the stop then waits for the idle writer instead).
	 */
	sched_setscheduler(wtid, SCHED_OTHER, &sp);
	unpin(wtid);
	rec_stop();
	cr_assert_eq(o.slots, (uint64_t)(16u << 20) / sizeof(struct rec__event),
		     "the ring holds %llu records", (unsigned long long)o.slots);
	cr_assert_eq(o.faults, 0, "%ld minor faults in %ld scopes after the first", o.faults,
		     OUTRUN_CALLS);
}
