/* SPDX-License-Identifier: MIT */
/*
 * ex_gen.c - writes with tracegen a recording of known shape, for the
 * export and perfetto tests (export.sh, perfetto_cmd.sh), which state the
 * expected rows from the same rules:
 *   ex_gen OUT PID START_UNIX_NS N M
 * Monotonic clock at 1 tick = 1 ns, time zero at tick 1000.
 * Thread 1 (tid PID, "main"): N times, 2000 ns apart from tick 1000:
 *   main_loop [t, t+1000] { parse [t+100, t+400], parse [t+500, t+600] }
 * Thread 2 (tid PID+1, unnamed): M times, 1000 ns apart from tick 5000:
 *   fib [t, t+900] { fib [t+100, t+800] { fib [t+200, t+300] } }
 * then one parse entered and never left (an error: open at the end).
 * Self times: main_loop 600, parse 300 and 100; fib 200, 600, 100.
 * With EX_GEN_TSC=1 in the environment, the same ticks on a TSC clock of
 * 2 596 132 193 ticks/s (not 1 ns a tick: export's rounding chains, EXPORT.md).
 */
#include <stdio.h>
#include <stdlib.h>

#include "tracegen.h"

int main(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .ticks_per_second = 1000000000,
				 .start_ticks = 1000, .pid = (uint32_t)atol(argv[2]),
				 .start_real_ns = strtoull(argv[3], NULL, 10) };
	const char *tsc = getenv("EX_GEN_TSC");

	if (tsc && tsc[0] == '1') {
		cfg.clock = RECFMT_CLOCK_TSC;
		cfg.ticks_per_second = 2596132193ull;
	}
	long n = atol(argv[4]), m = atol(argv[5]);
	struct tg_trace *t = tg_create(argv[1], &cfg);
	if (!t)
		return 1;
	int rc = 0;
	rc |= tg_site(t, 1, "main_loop");
	rc |= tg_site(t, 2, "parse");
	rc |= tg_site(t, 3, "fib");
	rc |= tg_thread(t, 1, cfg.pid, "main");
	rc |= tg_thread(t, 2, cfg.pid + 1, NULL);
	rc |= tg_sync(t, 1000, 5000, cfg.start_real_ns);
	for (long i = 0; i < n; i++) {
		uint64_t b = 1000 + (uint64_t)i * 2000;
		rc |= tg_enter(t, 1, 1, b);
		rc |= tg_enter(t, 1, 2, b + 100);
		rc |= tg_exit(t, 1, 2, b + 400);
		rc |= tg_enter(t, 1, 2, b + 500);
		rc |= tg_exit(t, 1, 2, b + 600);
		rc |= tg_exit(t, 1, 1, b + 1000);
	}
	uint64_t b = 5000;
	for (long i = 0; i < m; i++, b += 1000) {
		rc |= tg_enter(t, 2, 3, b);
		rc |= tg_enter(t, 2, 3, b + 100);
		rc |= tg_enter(t, 2, 3, b + 200);
		rc |= tg_exit(t, 2, 3, b + 300);
		rc |= tg_exit(t, 2, 3, b + 800);
		rc |= tg_exit(t, 2, 3, b + 900);
	}
	rc |= tg_enter(t, 2, 2, b);
	rc |= tg_finish(t, true);
	return rc ? 1 : 0;
}
