#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_timeline.sh TRACETOOL TRACE [ROUNDS] [WALKERS...] - the timeline
# writers on several walkers (issue 29 item 3; docs/ANALYZER.md, "Parallel
# timelines"): per round, in turn, `zstd -q -d -c TRACE`, then `tracetool
# chrome TRACE` (stdout to /dev/null, as bench_analyzer) and `tracetool
# perfetto -o /dev/null TRACE` with TRACETOOL_THREADS=W for each W of WALKERS
# (default: 1 2), so that a loaded machine slows every command of a round
# alike. Prints, for each, the median over ROUNDS (default 7) of wall time
# and of CPU time (perf stat: duration_time, task-clock of every thread),
# M events per second of each and the ratio to zstd -d's median of the
# same rounds; the busiest walker's CPU time (TRACETOOL_*_STATS) and what
# the run would take on as many free cores as walkers, its critical path:
# its CPU time less the walkers' plus the busiest one's; and the load
# average before and after. With BASE=OLD_TRACETOOL in the environment, each
# round also runs OLD_TRACETOOL's chrome and perfetto right after the new
# ones (rows "chrome-base", "perfetto-base"): a before/after of one run.
# Asserts nothing (style.md section 6).
#   sh bench/bench_timeline.sh build/analyzer/tracetool /tmp/bench_analyzer_N.zst 9 1 2 4
# TRACE: e.g. the one kept by BENCH_KEEP=1 build/bench/bench_analyzer TRACETOOL 20000000 1.
set -eu
tt=${1:?usage: bench_timeline.sh TRACETOOL TRACE [ROUNDS] [WALKERS...]}
trace=${2:?usage: bench_timeline.sh TRACETOOL TRACE [ROUNDS] [WALKERS...]}
rounds=${3:-7}
[ $# -ge 3 ] && shift 3 || shift $#
walkers=${*:-1 2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nr=$("$tt" info --format=json "$trace" |
	python3 -c "import json, sys; print(json.load(sys.stdin)[\"events\"])")
echo "trace: $trace, $nr events; $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # NAME WALKERS COMMAND...: "wall cpu path" in s of one run, appended to $tmp/NAME
	name=$1 w=$2
	shift 2
	TRACETOOL_CHROME_STATS=1 TRACETOOL_PERFETTO_STATS=1 TRACETOOL_THREADS=$w \
		perf stat -x, -o "$tmp/t" -e task-clock,duration_time "$@" >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err"; exit 1; }
	sed -n "s/.*walkers' CPU time (s)://p" "$tmp/err" >"$tmp/walkers"
	awk -F, -v wk="$(cat "$tmp/walkers")" '
		$3 == "task-clock" { c = $1 / 1e3 } $3 == "duration_time" { w = $1 / 1e9 }
		END {
			n = split(wk, v, " "); s = 0; m = 0
			for (i = 1; i <= n; i++) { s += v[i]; if (v[i] > m) m = v[i] }
			print w, c, n ? c - s + m : c
		}' "$tmp/t" >>"$tmp/$name"
}
i=0
while [ "$i" -lt "$rounds" ]; do
	run zstd 1 zstd -q -d -c "$trace"
	for w in $walkers; do
		run "chrome-$w" "$w" "$tt" chrome "$trace"
		[ -z "${BASE:-}" ] || run "chrome-base-$w" "$w" "$BASE" chrome "$trace"
		run "perfetto-$w" "$w" "$tt" perfetto -o /dev/null "$trace"
		[ -z "${BASE:-}" ] || run "perfetto-base-$w" "$w" "$BASE" perfetto -o /dev/null "$trace"
	done
	i=$((i + 1))
done
median() { # FILE COLUMN-EXPRESSION: the median of wall ($1) or cpu ($2)
	awk "{ print $2 }" "$1" | sort -g | awk '{ v[NR] = $1 } END {
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
zw=$(median "$tmp/zstd" '$1')
zc=$(median "$tmp/zstd" '$2')
printf '%-12s wall %.3f s, cpu %.3f s (median of %d)\n' "zstd -d" "$zw" "$zc" "$rounds"
for w in $walkers; do
	for c in chrome ${BASE:+chrome-base} perfetto ${BASE:+perfetto-base}; do
		mw=$(median "$tmp/$c-$w" '$1')
		mc=$(median "$tmp/$c-$w" '$2')
		mp=$(median "$tmp/$c-$w" '$3')
		awk -v n="$nr" -v w="$mw" -v c="$mc" -v p="$mp" -v zw="$zw" -v zc="$zc" \
		    -v name="$c" -v k="$w" -v r="$rounds" 'BEGIN {
			printf "%-13s %d walker(s): wall %.3f s (%.1f M events/s, %.1fx zstd -d), " \
			       "cpu %.3f s (%.1f M events per CPU-second, %.1fx zstd -d); " \
			       "critical path %.3f s (%.1f M events/s on %d free cores); " \
			       "medians of %d\n", name, k, w, n / w / 1e6, w / zw, c, n / c / 1e6,
			       c / zc, p, n / p / 1e6, k, r }'
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
