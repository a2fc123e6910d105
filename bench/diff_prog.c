/* SPDX-License-Identifier: MIT */
/*
 * diff_prog.c - a program shaped like a real one for bench/diff_rates.sh,
 * which measures how often `tracetool diff` flags runs of one build (false
 * alarms) and finds known regressions (power) on a loaded machine
 * (docs/BENCHMARKS.md, "diff's error rates"). Three threads run 300 traced
 * functions f000..f299 whose work spans ~10 ns to ~10 ms (from 5000 calls
 * a run for the shortest to 1 for the longest) in 10 rounds each, plus four
 * scopes that the build with -DREGRESS=1 makes slower:
 *
 *   shift_target  main, 1000 calls of ~20 us: +10 % work (p50 +10 %);
 *   thread_leaf   worker1 and worker2, 1000 calls of ~5 us each: 3x on
 *                 worker2 only (one of two threads 3x slower);
 *   tiny_fn       main, 20000 calls of ~10 ns: its measured time doubled;
 *   tail_fn       worker1, 5000 calls of ~5 us, one in 50 4x longer: that
 *                 one 6x instead (p99 +50 %, p50 unchanged).
 *
 * The work is a dependent xorshift chain (about 1 ns a step here), so a
 * function's time is CPU time and moves with the machine's load, as real
 * code does. About 0.2 s of CPU a run.
 */
#include <math.h>
#include <pthread.h>
#include <rec.h>
#include <stdint.h>
#include <stdio.h>

#ifndef REGRESS
#define REGRESS 0
#endif

/* The steps of tiny_fn's body; REGRESS adds as many as make its measured
 * time (body plus the probe's part inside the scope) double. */
#ifndef TINY_STEPS
#define TINY_STEPS 2
#endif
#ifndef TINY_EXTRA
#define TINY_EXTRA 12
#endif

static __thread volatile uint64_t sink;

static inline __attribute__((always_inline)) void work(uint64_t steps)
{
	uint64_t x = sink | 1;

	for (uint64_t i = 0; i < steps; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

#define F(n)                                    \
	static void __attribute__((noinline)) f##n(uint64_t steps) \
	{                                       \
		TRACE_SCOPE();                  \
		work(steps);                    \
	}
#define F10(p) F(p##0) F(p##1) F(p##2) F(p##3) F(p##4) F(p##5) F(p##6) F(p##7) F(p##8) F(p##9)
#define F100(p)                                                                              \
	F10(p##0) F10(p##1) F10(p##2) F10(p##3) F10(p##4) F10(p##5) F10(p##6) F10(p##7)   \
	F10(p##8) F10(p##9)
F100(0)
F100(1)
F100(2)
#undef F
#define F(n) f##n,
static void (*const fns[])(uint64_t) = { F100(0) F100(1) F100(2) };
#define NR_FNS (sizeof(fns) / sizeof(fns[0]))
#define ROUNDS 10

static uint64_t steps_of[NR_FNS], calls_of[NR_FNS];

/* f_i costs about 10 ns * 10^(6 (i/299)^2.5) and is called about 100 us
 * worth of times a run, 1 to 5000 (most functions are short; a few long). */
static void plan(void)
{
	for (size_t i = 0; i < NR_FNS; i++) {
		double x = (double)i / (NR_FNS - 1), ns = 10 * pow(10, 6 * pow(x, 2.5));

		steps_of[i] = (uint64_t)(ns / 1.2);
		calls_of[i] = (uint64_t)(100e3 / ns);
		calls_of[i] = calls_of[i] < 1 ? 1 : calls_of[i] > 5000 ? 5000 : calls_of[i];
	}
}

static void shift_target(void)
{
	TRACE_SCOPE();
	work(REGRESS ? 18300 : 16600); /* ~20 us, +10 % */
}

static void thread_leaf(int worker)
{
	TRACE_SCOPE();
	work(REGRESS && worker == 2 ? 12000 : 4000); /* ~5 us, 3x on worker2 */
}

static void __attribute__((noinline)) tiny_fn(void)
{
	TRACE_SCOPE();
	work(REGRESS ? TINY_STEPS + TINY_EXTRA : TINY_STEPS);
}

static void tail_fn(unsigned i)
{
	TRACE_SCOPE();
	/* ~5 us; one call in 50 is 4x (6x with REGRESS). */
	work(i % 50 == 49 ? (REGRESS ? 24000 : 16000) : 4000);
}

/* The calls of f_i in round r: calls_of spread evenly over the rounds. */
static uint64_t calls_in_round(size_t i, unsigned r)
{
	return calls_of[i] * (r + 1) / ROUNDS - calls_of[i] * r / ROUNDS;
}

static void run_fns(int thread, unsigned r)
{
	for (size_t i = (size_t)thread; i < NR_FNS; i += 3)
		for (uint64_t c = calls_in_round(i, r); c; c--)
			fns[i](steps_of[i]);
}

static void round_main(unsigned r)
{
	TRACE_SCOPE();
	run_fns(0, r);
	for (unsigned i = 0; i < 100; i++)
		shift_target();
	for (unsigned i = 0; i < 2000; i++)
		tiny_fn();
}

static void round_worker(int worker, unsigned r)
{
	TRACE_SCOPE();
	run_fns(worker, r);
	for (unsigned i = 0; i < 100; i++)
		thread_leaf(worker);
	if (worker == 1)
		for (unsigned i = 0; i < 500; i++)
			tail_fn(r * 500 + i);
}

static void *worker_main(void *arg)
{
	int worker = (int)(intptr_t)arg;

	rec_thread_name(worker == 1 ? "worker1" : "worker2");
	for (unsigned r = 0; r < ROUNDS; r++)
		round_worker(worker, r);
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	plan();
	rec_thread_name("main");
	for (int k = 0; k < 2; k++)
		if (pthread_create(&t[k], NULL, worker_main, (void *)(intptr_t)(k + 1))) {
			perror("pthread_create");
			return 1;
		}
	for (unsigned r = 0; r < ROUNDS; r++)
		round_main(r);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	return 0;
}
