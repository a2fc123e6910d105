#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_export.sh BUILD_DIR [EVENTS] [RUNS] - throughput and size of
# `tracetool perfetto` and `tracetool export` (issue 16) on bench_analyzer's
# benchmark trace (4 threads, TSC ticks with jitter, nested server-loop
# scopes; generated once, kept with BENCH_KEEP). Reports, for the median of
# RUNS runs: wall and CPU (user+sys) time, M events/s and M activations/s
# (an enter and an exit are two events: an activation is two events),
# output bytes per event and per activation, and peak RSS; for export, the
# same with TRACETOOL_THREADS=1 (everything on one thread: the cost on one
# core; the default uses a reader thread and, for Parquet, an encoding
# thread). Asserts nothing (style.md §6).
#   sh bench/bench_export.sh build 20000000 3
# BENCH_TRACE=FILE measures an existing trace instead (kept, not generated:
# e.g. one kept by BENCH_KEEP=1 build/bench/bench_analyzer TRACETOOL 20000000 1).
set -eu
b=${1:?usage: bench_export.sh BUILD_DIR [EVENTS] [RUNS]}
events=${2:-20000000}
runs=${3:-3}
tt="$b/analyzer/tracetool"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${BENCH_TRACE:-}" ]; then
	trace=$BENCH_TRACE small=
else
	# bench_analyzer writes the trace, times summary/chrome once, keeps the file.
	out=$(BENCH_KEEP=1 "$b/bench/bench_analyzer" "$tt" "$events" 1)
	trace=$(printf '%s\n' "$out" | sed -n 's/^kept \([^ ]*\) and \([^ ]*\) (BENCH_KEEP)$/\1/p')
	small=$(printf '%s\n' "$out" | sed -n 's/^kept \([^ ]*\) and \([^ ]*\) (BENCH_KEEP)$/\2/p')
	[ -n "$trace" ] || { printf '%s\n' "$out"; echo "no trace kept" >&2; exit 1; }
fi
nr=$("$tt" info --format=json "$trace" | python3 -c "import json, sys; print(json.load(sys.stdin)[\"events\"])")
echo "trace: $trace, $nr events, $(stat -c %s "$trace") bytes"
measure() { # NAME OUTPUT_PATH COMMAND...
	name=$1 outp=$2
	shift 2
	: >"$tmp/times"
	i=0
	while [ $i -lt "$runs" ]; do
		rm -rf "$outp"
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" ||
			{ cat "$tmp/err"; exit 1; }
		cat "$tmp/t" >>"$tmp/times"
		i=$((i + 1))
	done
	bytes=$(du -sb "$outp" | cut -f1)
	sort -n "$tmp/times" | awk -v n="$nr" -v name="$name" -v bytes="$bytes" -v runs="$runs" '
		{ wall[NR] = $1; cpu[NR] = $2 + $3; rss[NR] = $4 }
		END {
			m = int((NR + 1) / 2)
			# medians of wall and of CPU each (not the CPU of the median wall)
			for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++)
				if (cpu[j] < cpu[i]) { t = cpu[i]; cpu[i] = cpu[j]; cpu[j] = t }
			c = cpu[m]
			printf "%-12s %.2f s wall (%.1f M events/s, %.1f M activations/s), " \
			       "%.2f s cpu (%.1f M events/s, %.1f M activations/s), median of %d; " \
			       "%d bytes, %.2f bytes/event, %.2f bytes/activation; peak RSS %d KiB\n",
			       name, wall[m], n / wall[m] / 1e6, n / 2 / wall[m] / 1e6, c,
			       n / c / 1e6, n / 2 / c / 1e6, runs, bytes, bytes / n, 2 * bytes / n, rss[m]
		}'
}
measure perfetto "$tmp/out.pftrace" "$tt" perfetto -o "$tmp/out.pftrace" "$trace"
measure parquet "$tmp/pq" "$tt" export -o "$tmp/pq" "$trace"
measure parquet-1t "$tmp/pq" env TRACETOOL_THREADS=1 "$tt" export -o "$tmp/pq" "$trace"
measure csv "$tmp/csv" "$tt" export --format=csv -o "$tmp/csv" "$trace"
[ -n "${BENCH_TRACE:-}" ] || rm -f "$trace" "$small"
