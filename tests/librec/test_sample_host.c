/* SPDX-License-Identifier: MIT */
/*
 * test_sample_host.c - REC_SAMPLE in hosts it must not disturb (README,
 * "Profile an unmodified program"; rec(3), REC_SAMPLE).
 *
 * A host whose signal handler runs
 * on an alternate stack sized for it alone (prog_sample_altstack.c: the
 * kernel's frame and 2 KiB, a guard page below). librec's sampling signal
 * is not SA_ONSTACK, so the kernel puts its frame on the stack it
 * interrupts: inside the host's handler, that is the host's alternate stack,
 * which has no room for a second kernel frame (AT_MINSIGSTKSZ, 3 KiB and
 * more with AVX-512). The frame went past the stack's end: a heap-allocated
 * stack corrupted the heap ("double free or corruption" at thread exit),
 * this one faults. README ("Profile an unmodified program") promises the
 * host's alternate stack is left to the host's handler.
 *
 * A host that takes SIGRTMAX once it runs (prog_sample_rtmax.c): librec
 * took the highest real-time signal with no handler when it was loaded,
 * SIGRTMAX, and rec(3) promises never to use a signal of the program's;
 * the host's handler got librec's next sample signal, which it never sent,
 * and the recording stopped without a word (no file, no "rec:" line).
 *
 * REC_SAMPLE with REC_COUNTERS: every sample of a thread that records
 * counters is dropped (its ring holds counter groups), and nothing says
 * so: the file holds "0 samples, N dropped". README and rec(3) promise
 * every thread's stacks; either they are recorded or a "rec:" line says why.
 * Paths from meson: LIBREC_SO, PROG_SAMPLE_ALTSTACK, PROG_SAMPLE_RTMAX, TRACETOOL.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "under_asan.h"

static const char *env_or_fail(const char *name)
{
	const char *v = getenv(name);

	cr_assert_not_null(v, "%s is not set (meson sets it)", name);
	return v;
}

static char preload[4096], out[128], asan[1024];
static const char *env[6] = { preload, "REC_SAMPLE=997", out };

/* env: librectrace.so preloaded, REC_SAMPLE=997, REC_OUTPUT in /tmp. */
static void sampled_env(const char *name)
{
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", env_or_fail("LIBREC_SO"));
	snprintf(out, sizeof(out), "REC_OUTPUT=/tmp/rec_sample_%s_%d.zst", name, (int)getpid());
#ifdef UNDER_ASAN
	snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%sverify_asan_link_order=0",
		 getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "",
		 getenv("ASAN_OPTIONS") ? ":" : "");
	env[3] = asan;
#else
	(void)asan;
#endif
}

Test(sample_host, host_handler_on_a_tight_alternate_stack_survives_sampling, .timeout = 120)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE_ALTSTACK"), "20", NULL };
	struct tu_child c;

	sampled_env("altstack");
	/* 5 rounds: each handler's 20 ms of CPU at 997 Hz takes samples. */
	for (int round = 0; round < 5; round++) {
		tu_run_child(argv, env, 60000, TU_CHILD_CRASH, &c);
		cr_assert_eq(c.status, 0, "round %d: status %d; stderr: %s", round, c.status, c.err);
		cr_assert_str_eq(c.out, "onstack 10\n", "round %d", round);
	}
	unlink(out + strlen("REC_OUTPUT="));
}

Test(sample_host, host_taking_librec_s_signal_gets_none_of_its_samples, .timeout = 120)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE_RTMAX"), "300", NULL };
	struct tu_child c;

	sampled_env("rtmax");
	tu_run_child(argv, env, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d; stderr: %s", c.status, c.err);
	cr_assert_str_eq(c.out, "spurious 0\n", "stderr: %s", c.err);
	unlink(out + strlen("REC_OUTPUT="));
}

/*
 * The same host taking SIGRTMAX through glibc's other ways: sigset() (System
 * V), sigignore(), __sigaction(), ssignal() and __sysv_signal() reached
 * libc's sigaction() inside libc, past librec's wrapper: the host's handler
 * replaced librec's unseen, got the samples librec's clocks kept sending,
 * and sigset() handed back librec's handler as the old disposition. Each
 * way must stop sampling with the one rec: line, the host never receiving
 * a signal it did not send, and read back SIG_DFL.
 */
static void host_takes_signal_by(const char *how, bool says_old)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE_RTMAX"), "300", how, NULL };
	struct tu_child c;

	sampled_env(how);
	tu_run_child(argv, env, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "%s: status %d; stderr: %s", how, c.status, c.err);
	cr_assert(strstr(c.out, "spurious 0\n"), "%s: %s; stderr: %s", how, c.out, c.err);
	if (says_old)
		cr_assert(strstr(c.out, "old_dfl 1\n"), "%s: %s", how, c.out);
	cr_assert(strstr(c.err, "rec: REC_SAMPLE: the program took signal ") &&
			  !strstr(strstr(c.err, "took signal") + 1, "rec: "),
		  "%s: one rec: line wanted; stderr: %s", how, c.err);
	unlink(out + strlen("REC_OUTPUT="));
}

Test(sample_host, host_taking_librec_s_signal_by_sigset_gets_none_of_its_samples, .timeout = 120)
{
	host_takes_signal_by("sigset", true);
}

Test(sample_host, host_ignoring_librec_s_signal_by_sigignore_stops_sampling, .timeout = 120)
{
	host_takes_signal_by("sigignore", false);
}

Test(sample_host, host_taking_librec_s_signal_by_glibc_aliases_gets_none_of_its_samples,
     .timeout = 120)
{
	host_takes_signal_by("__sigaction", false);
	host_takes_signal_by("ssignal", true);
	host_takes_signal_by("__sysv_signal", true);
}

Test(sample_host, counters_and_samples_together_record_samples_or_say_why, .timeout = 120)
{
	const char *argv[] = { env_or_fail("PROG_SAMPLE_RTMAX"), "300", "plain", NULL };
	const char *info[] = { env_or_fail("TRACETOOL"), "info", "--format=json", NULL, NULL };
	struct tu_child c, i;
	const char *n;

	sampled_env("counters");
	for (size_t k = 3; k < 5; k++)
		if (!env[k]) {
			env[k] = "REC_COUNTERS=task-clock";
			break;
		}
	tu_run_child(argv, env, 60000, 0, &c);
	cr_assert_eq(c.status, 0, "status %d; stderr: %s", c.status, c.err);
	info[3] = out + strlen("REC_OUTPUT=");
	tu_run_child(info, NULL, 60000, 0, &i);
	n = strstr(i.out, "\"samples\":");
	cr_assert(n, "info: %s %s", i.out, i.err);
	cr_assert(strtol(n + 10, NULL, 10) > 0 || strstr(c.err, "REC_SAMPLE"),
		  "no sample recorded and nothing said; info: %s; stderr: %s", i.out, c.err);
	unlink(out + strlen("REC_OUTPUT="));
}
