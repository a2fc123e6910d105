/* SPDX-License-Identifier: MIT */
/*
 * bench_wholeprog.c - a program of the shape of a real whole-program
 * recording (issue 29 item 2: Lua or SQLite built with
 * -finstrument-functions), for the writer's trials under pressure: 585
 * functions built with -finstrument-functions -- 512 leaves of uneven
 * cost, 64 mid functions that call 4 to 11 leaves each, chosen by the data,
 * 8 top functions that call mid functions the same way -- called as fast
 * as one thread can for SECONDS, tens of millions of events a second.
 * The calls are chosen by the data (a xorshift generator): seven top calls
 * in eight replay one of 16 recorded inputs, the eighth takes a fresh one,
 * as a program loops over its usual cases with now and then a new one; so
 * the file is neither one repeated period nor noise. Prints "rounds R in
 * S s" on stderr.
 *
 *   bench_wholeprog [SECONDS]
 *
 * scripts/pressure-trial.sh runs it beside two CPU-bound processes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

/* Leaf n: a few multiply-adds, up to 4 more for some. */
#define LEAF(n) \
	NOINLINE uint64_t leaf_##n(uint64_t x); \
	uint64_t leaf_##n(uint64_t x) \
	{ \
		for (unsigned i = 0; i < (0##n & 3u) + (unsigned)(x & 1u); i++) \
			x = x * 6364136223846793005u + 0##n; \
		return x ^ (x >> 29); \
	}
#define L8(p) LEAF(p##0) LEAF(p##1) LEAF(p##2) LEAF(p##3) LEAF(p##4) LEAF(p##5) LEAF(p##6) LEAF(p##7)
#define L64(p) L8(p##0) L8(p##1) L8(p##2) L8(p##3) L8(p##4) L8(p##5) L8(p##6) L8(p##7)
L64(0) L64(1) L64(2) L64(3) L64(4) L64(5) L64(6) L64(7)

#define T1(n) leaf_##n,
#define T8(p) T1(p##0) T1(p##1) T1(p##2) T1(p##3) T1(p##4) T1(p##5) T1(p##6) T1(p##7)
#define T64(p) T8(p##0) T8(p##1) T8(p##2) T8(p##3) T8(p##4) T8(p##5) T8(p##6) T8(p##7)
static uint64_t (*const leaves[512])(uint64_t) = {
	T64(0) T64(1) T64(2) T64(3) T64(4) T64(5) T64(6) T64(7)
};

static inline uint64_t next(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* mid_k: 4 to 11 leaves, from its own 64 (k*8 .. k*8+63, wrapping), by the data. */
#define MID(k) \
	NOINLINE uint64_t mid_##k(uint64_t x); \
	uint64_t mid_##k(uint64_t x) \
	{ \
		unsigned n = 4 + (unsigned)(x >> 61); \
		for (unsigned i = 0; i < n; i++) { \
			x = next(x); \
			x = leaves[((0##k) * 8 + (x >> 58)) & 511](x); \
		} \
		return x; \
	}
#define M8(p) MID(p##0) MID(p##1) MID(p##2) MID(p##3) MID(p##4) MID(p##5) MID(p##6) MID(p##7)
M8(0) M8(1) M8(2) M8(3) M8(4) M8(5) M8(6) M8(7)
#define N1(k) mid_##k,
#define N8(p) N1(p##0) N1(p##1) N1(p##2) N1(p##3) N1(p##4) N1(p##5) N1(p##6) N1(p##7)
static uint64_t (*const mids[64])(uint64_t) = { N8(0) N8(1) N8(2) N8(3) N8(4) N8(5) N8(6) N8(7) };

/* top_k: 2 to 5 mid functions among 16 (k*8 .. k*8+15, wrapping). */
#define TOP(k) \
	NOINLINE uint64_t top_##k(uint64_t x); \
	uint64_t top_##k(uint64_t x) \
	{ \
		unsigned n = 2 + (unsigned)(x >> 62); \
		for (unsigned i = 0; i < n; i++) { \
			x = next(x); \
			x = mids[((k) * 8 + (x >> 60)) & 63](x); \
		} \
		return x; \
	}
TOP(0) TOP(1) TOP(2) TOP(3) TOP(4) TOP(5) TOP(6) TOP(7)
static uint64_t (*const tops[8])(uint64_t) = { top_0, top_1, top_2, top_3,
					       top_4, top_5, top_6, top_7 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOINLINE uint64_t run(double seconds);
uint64_t run(double seconds)
{
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(seconds * 1e9), fresh = 88172645463325252u;
	uint64_t rounds = 0, inputs[16], acc = 0;

	for (unsigned i = 0; i < 16; i++)
		inputs[i] = fresh = next(fresh);
	do {
		for (unsigned i = 0; i < 256; i++) {
			uint64_t x = (i & 7) ? inputs[(i >> 3) & 15] : (fresh = next(fresh));

			acc += tops[x >> 61](x);
		}
		rounds++;
	} while (now_ns() < end);
	sink = acc;
	fprintf(stderr, "rounds %llu in %.2f s\n", (unsigned long long)rounds,
		(double)(now_ns() - t0) / 1e9);
	return rounds;
}

int main(int argc, char **argv)
{
	run(argc > 1 ? atof(argv[1]) : 3.0);
	return 0;
}
