/* SPDX-License-Identifier: MIT */
/*
 * test_flush_window.c - the kill -9 window (issue 26 item 9): REC_FLUSH_MS
 * holds while a producer holds rec__g.lock. A thread attaching or naming
 * itself holds it for microseconds, but with every core busy it may be
 * preempted with it for hundreds of ms, and the writer used to wait for it
 * in every pass, writing nothing meanwhile (bench_flush_lag: lags of
 * 0.3-0.8 s). Here the test holds the lock itself, as such a producer
 * would, while it records scopes on a thread attached before; they must
 * reach the file, read as after a kill -9, while the lock is still held.
 * Linked with librec's internals (rec__g).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "rec_internal.h"
#include "trace_read.h"

#define NR_HELD 1000
#define WAIT_MS 10000 /* for a writer pass: the machine may be busy, not that busy */

static volatile unsigned sink;

__attribute__((noinline)) static void held(void)
{
	TRACE_SCOPE_NAMED("held");
	sink++;
}

static uint64_t count_in_file(const char *path)
{
	struct tr_trace tr;
	uint64_t n;

	if (tr_load(path, &tr) != 0)
		return 0;
	n = tr_calls(&tr, "held");
	tr_free(&tr);
	return n;
}

Test(flush_window, scopes_reach_the_file_while_a_producer_holds_the_registry_lock, .timeout = 60)
{
	struct rec_config c = REC_CONFIG_INIT;
	char path[128];
	uint64_t n = 0;
	int waited;

	snprintf(path, sizeof(path), "/tmp/rec_flush_window_%d.zst", (int)getpid());
	c.output = path;
	c.flush_ms = 20;
	cr_assert_eq(rec_start(&c), 0);
	{
		TRACE_SCOPE_NAMED("attach"); /* registers this thread */
	}
	cr_assert_eq(rec_flush(), 0); /* and the writer has seen it */
	pthread_mutex_lock(&rec__g.lock);
	for (int i = 0; i < NR_HELD; i++)
		held();
	for (waited = 0; waited < WAIT_MS && (n = count_in_file(path)) < NR_HELD; waited += 10) {
		struct timespec nap = { 0, 10 * 1000 * 1000 };

		nanosleep(&nap, NULL);
	}
	pthread_mutex_unlock(&rec__g.lock);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(n, NR_HELD, "%lu of %d scopes in the file after %d ms with the lock held",
		     (unsigned long)n, NR_HELD, waited);
	cr_assert_eq(count_in_file(path), NR_HELD);
	unlink(path);
}
