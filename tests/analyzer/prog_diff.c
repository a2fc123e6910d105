/* SPDX-License-Identifier: MIT */
/*
 * prog_diff.c - the program test_diff_e2e.c records twice per build to
 * check `tracetool diff` on real traces: 300 steps, each with three scopes
 * that wait on CLOCK_MONOTONIC for a duration drawn from a fixed sequence
 * (log-normal, log-sd 0.2: parse ~20 us, solve ~40 us, emit ~10 us), and,
 * with the argument --hash, one that does a fixed amount of arithmetic
 * (hash; scripts/diff-noise.sh). Built twice: SLOW_PCT=0,
 * and SLOW_PCT=25, where solve waits 25 % longer, the deliberate regression.
 * Waiting on the clock rather than counting loop turns keeps the durations
 * of parse/solve/emit independent of the machine's speed and load, except
 * for preemption, which is the noise a diff must tolerate; hash shows the
 * load as it is, which on a shared machine moves between runs (measured in
 * docs/ANALYZER.md, "diff"), so the test leaves it out.
 */
#include <math.h>
#include <rec.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifndef SLOW_PCT
#define SLOW_PCT 0
#endif

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;

static double normal(void)
{
	double u[2];

	for (int i = 0; i < 2; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		u[i] = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
	}
	return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static void wait_ns(double ns)
{
	uint64_t end = mono_ns() + (uint64_t)ns;

	while (mono_ns() < end)
		;
}

static void parse(double ns)
{
	TRACE_SCOPE();
	wait_ns(ns);
}

static void solve(double ns)
{
	TRACE_SCOPE();
	wait_ns(ns * (100 + SLOW_PCT) / 100);
}

static void emit(double ns)
{
	TRACE_SCOPE();
	wait_ns(ns);
}

static volatile uint64_t sink;

static void hash(void)
{
	TRACE_SCOPE();
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 20000; i++)
		h = (h ^ (uint64_t)i) * 1099511628211ull;
	sink = h;
}

int main(int argc, char **argv)
{
	int with_hash = argc > 1 && strcmp(argv[1], "--hash") == 0;

	for (int i = 0; i < 300; i++) {
		TRACE_SCOPE_NAMED("step");
		parse(20000 * exp(0.2 * normal()));
		solve(40000 * exp(0.2 * normal()));
		emit(10000 * exp(0.2 * normal()));
		if (with_hash)
			hash();
	}
	return 0;
}
