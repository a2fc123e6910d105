/* SPDX-License-Identifier: MIT */
/*
 * pf_gen.c - writes, with analyzer/out/perfetto.c, a Perfetto trace of known
 * shape for perfetto.sh to decode with protoc: process 100 "prog" with
 * threads 100 "main" and 101 (unnamed); on each, N times: outer { inner,
 * inner }, then one slice whose name is 300 bytes long (a two-byte length)
 * and an instant "tick"; gaps of 1, 200 and 70000 ns (one-, two- and
 * three-byte deltas); a counter track "queue" (described on main's sequence)
 * with values 1..5 on main.
 *   pf_gen OUT N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/perfetto.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	FILE *f = fopen(argv[1], "wb");
	if (!f)
		return 1;
	long n = atol(argv[2]);
	struct tt_pf w;
	struct tt_pf_seq s[2];
	char longname[301];
	const uint64_t base = 1700000000000000000ull;

	memset(longname, 'x', 300);
	longname[300] = '\0';
	tt_pf_init(&w, f);
	tt_pf_process(&w, 1, 100, "prog");
	tt_pf_thread(&w, &s[0], 2, 100, 100, "main", base);
	tt_pf_thread(&w, &s[1], 3, 100, 101, NULL, base);
	tt_pf_counter_track(&w, &s[0], 4, 1, "queue");
	for (int t = 0; t < 2; t++) {
		uint64_t ns = base + 5;
		for (long i = 0; i < n; i++) {
			tt_pf_begin(&w, &s[t], ns, 0, "outer", 5);
			ns += 1;
			tt_pf_begin(&w, &s[t], ns, 1, "inner", 5);
			ns += 200;
			tt_pf_end(&w, &s[t], ns);
			tt_pf_begin(&w, &s[t], ns, 1, "inner", 5);
			ns += 70000;
			tt_pf_end(&w, &s[t], ns);
			tt_pf_end(&w, &s[t], ns);
		}
		tt_pf_begin(&w, &s[t], ns, 2, longname, 300);
		tt_pf_end(&w, &s[t], ns + 3);
		tt_pf_instant(&w, &s[t], ns + 3, 3, "tick", 4);
		if (t == 0)
			for (int v = 1; v <= 5; v++)
				tt_pf_counter(&w, &s[t], ns + 3 + (uint64_t)v, 4, v);
	}
	int rc = tt_pf_flush(&w);
	printf("%llu bytes, %llu packets\n", (unsigned long long)w.bytes,
	       (unsigned long long)w.packets);
	tt_pf_seq_fini(&s[0]);
	tt_pf_seq_fini(&s[1]);
	tt_pf_fini(&w);
	return (fclose(f) || rc) ? 1 : 0;
}
