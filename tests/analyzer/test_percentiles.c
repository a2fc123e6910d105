/* SPDX-License-Identifier: MIT */
/*
 * test_percentiles.c - summary's p50/p90/p99 against an exact sort of 1 M
 * random durations (within 1 %, tracetool(1)), with min, max and mean exact.
 */
#include "ttest.h"

#include <math.h>
#include <unistd.h>

#define NR 1000000

TestSuite(percentiles, .timeout = 120);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t exact(const uint64_t *sorted, double q)
{
	size_t rank = (size_t)((double)NR * q + 0.999999); /* ceil, nearest rank */

	return sorted[(rank ? rank : 1) - 1];
}

Test(percentiles, within_one_percent_of_an_exact_sort_of_a_million_durations)
{
	const char *path = tu_path(0, "pct.zst");
	uint64_t *d = malloc(NR * sizeof(*d)), seed = 7, now = 1000, sum = 0;
	struct tg_trace *t = new_trace(path);
	struct csv_row row;
	struct tu_result r;

	tg_site(t, 1, "f");
	tg_thread(t, 1, 1, NULL);
	for (size_t i = 0; i < NR; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		/* Log-uniform-ish over 1 ns .. ~16 ms, so every bucket size is hit. */
		d[i] = 1 + ((seed >> 20) & ((1ull << ((seed >> 59) + 9)) - 1));
		tg_enter(t, 1, 1, now);
		tg_exit(t, 1, 1, now + d[i]);
		now += d[i] + 1;
		sum += d[i];
	}
	cr_assert_eq(tg_finish(t, true), 0);
	r = tu_run("summary", "--format=csv", path, NULL);
	unlink(path);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(parse_summary_csv(r.out, false, &row, 1), 1);
	qsort(d, NR, sizeof(*d), cmp_u64);
	cr_assert_eq(row.calls, NR);
	cr_assert_eq(row.min, d[0]);
	cr_assert_eq(row.max, d[NR - 1]);
	cr_assert_eq(row.total, sum);
	cr_assert_eq(row.mean, (sum + NR / 2) / NR);
	const struct { double q; uint64_t got; } p[] = { { 0.5, row.p50 }, { 0.9, row.p90 },
							  { 0.99, row.p99 } };
	for (size_t i = 0; i < 3; i++) {
		double want = (double)exact(d, p[i].q);

		cr_assert_leq(fabs((double)p[i].got - want) / want, 0.01,
			      "p%g: got %" PRIu64 ", exact %.0f", p[i].q * 100, p[i].got, want);
	}
	tu_result_free(&r);
	free(d);
}
