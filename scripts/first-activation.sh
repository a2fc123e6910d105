#!/bin/sh
# first-activation.sh [BUILD_DIR] [RUNS] — the issue-14 checker's measurement, as an outside
# program would make it: 8 fresh threads, each running 40 scopes that busy-wait 20 us on
# CLOCK_MONOTONIC, created one after another (seq) or all at once (all). Builds that program
# twice, with librec (shared) and with -DREC_DISABLE, runs each RUNS times (default 30) per mode,
# and prints the distribution of each thread's first activation over its median: from the trace
# (tracetool chrome), and from the program's own clock read inside the scope (rdtsc), which the
# no-librec build has too. Also how often any later activation is over 1.5x (the machine's
# noise). docs/DESIGN.md, "First activation", has the figures.
set -e
build=$(cd "${1:-build}" && pwd)
runs=${2:-30}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/first-activation.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/fresh.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include <rec.h>
#define N 8
#define A 40
static unsigned long long own[N][A];
static volatile int done[N];
static unsigned long long mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
__attribute__((noinline)) static void busy(int th, int i)
{
	TRACE_SCOPE_NAMED("busy");
	unsigned long long a = __rdtsc(), t0 = mono();
	while (mono() - t0 < 20000)
		;
	own[th][i] = __rdtsc() - a;
}
static void *worker(void *arg)
{
	int th = (int)(long)arg;
	for (int i = 0; i < A; i++)
		busy(th, i);
	done[th] = 1;
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t[N];
	int seq = argc < 2 || !strcmp(argv[1], "seq");
	for (int i = 0; i < N; i++) {
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
		while (seq && !done[i])
			usleep(1000);
	}
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < N; i++) {
		printf("own");
		for (int k = 0; k < A; k++)
			printf(" %llu", own[i][k]);
		printf("\n");
	}
	return 0;
}
C
cc -O2 -I"$build/librec" "$tmp/fresh.c" -o "$tmp/with" -L"$build/librec" -lrectrace \
	-Wl,-rpath,"$build/librec" -pthread
cc -O2 -DREC_DISABLE -I"$build/librec" "$tmp/fresh.c" -o "$tmp/without" -pthread
for mode in seq all; do
	for i in $(seq "$runs"); do
		"$tmp/without" $mode >> "$tmp/without_$mode.txt"
		REC_OUTPUT="$tmp/t.zst" "$tmp/with" $mode >> "$tmp/with_$mode.txt"
		"$build/analyzer/tracetool" chrome -q "$tmp/t.zst" -o "$tmp/with_${mode}_$i.json"
	done
done
python3 - "$tmp" "$runs" <<'PY'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
def report(label, rows):
    first = sorted(l[0] / statistics.median(l) for l in rows)
    later = sum(sum(x > 1.5 * statistics.median(l) for x in l[1:]) for l in rows)
    n, q = len(first), lambda p: first[min(len(first) - 1, int(p * len(first)))]
    runs_over = sum(any(r > 1.5 for r in first_of) for first_of in
                    [[l[0] / statistics.median(l) for l in rows[k:k + 8]] for k in range(0, n, 8)])
    print('%-28s threads %3d  first/median p50 %.2f p90 %.2f p99 %.2f max %.2f  '
          'first > 1.5x: %4.1f %%  later > 1.5x: %4.1f %% each  runs with one > 1.5x: %d/%d'
          % (label, n, q(.5), q(.9), q(.99), first[-1], 100.0 * sum(r > 1.5 for r in first) / n,
             100.0 * later / (n * (len(rows[0]) - 1)), runs_over, n // 8))
for mode in ('seq', 'all'):
    for who in ('without', 'with'):
        rows = [[int(x) for x in l.split()[1:]] for l in open('%s/%s_%s.txt' % (tmp, who, mode))]
        report('%s librec, %s, own clock' % (who, mode), rows)
    rows = []
    for i in range(1, runs + 1):
        d, o, dur = json.load(open('%s/with_%s_%d.json' % (tmp, mode, i))), {}, {}
        for e in d['traceEvents']:
            if e.get('name') != 'busy':
                continue
            if e['ph'] == 'B':
                o[e['tid']] = e['ts']
            elif e['ph'] == 'E':
                dur.setdefault(e['tid'], []).append(e['ts'] - o[e['tid']])
            elif e['ph'] == 'X':
                dur.setdefault(e['tid'], []).append(e['dur'])
        rows += list(dur.values())
    report('with librec, %s, trace' % mode, rows)
PY
