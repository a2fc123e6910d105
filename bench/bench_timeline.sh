#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_timeline.sh TRACETOOL TRACE [ROUNDS] [WALKERS...] - the timeline
# writers on several walkers (issue 29 item 3; docs/ANALYZER.md, "Parallel
# timelines"): per round, in turn, `zstd -q -d -c TRACE`, then `tracetool
# chrome TRACE` (stdout to /dev/null, as bench_analyzer) and `tracetool
# perfetto -o /dev/null TRACE` with TRACETOOL_THREADS=W for each W of WALKERS
# (default: 1 2), so that a loaded machine slows every command of a round
# alike. Prints, for each, the median over ROUNDS (default 7) of wall time
# and of CPU time (user + system), M events per second of each and the
# ratio to zstd -d's median of the same rounds, and the load average
# before and after. Asserts nothing (style.md section 6).
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
run() { # NAME WALKERS COMMAND...: one timed run appended to $tmp/NAME
	name=$1 w=$2
	shift 2
	TRACETOOL_THREADS=$w /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err"; exit 1; }
	cat "$tmp/t" >>"$tmp/$name"
}
i=0
while [ "$i" -lt "$rounds" ]; do
	run zstd 1 zstd -q -d -c "$trace"
	for w in $walkers; do
		run "chrome-$w" "$w" "$tt" chrome "$trace"
		run "perfetto-$w" "$w" "$tt" perfetto -o /dev/null "$trace"
	done
	i=$((i + 1))
done
median() { # FILE COLUMN-EXPRESSION: the median of wall ($1) or cpu ($2 + $3)
	awk "{ print $2 }" "$1" | sort -g | awk '{ v[NR] = $1 } END {
		print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
zw=$(median "$tmp/zstd" '$1')
zc=$(median "$tmp/zstd" '$2 + $3')
printf '%-12s wall %.3f s, cpu %.3f s (median of %d)\n' "zstd -d" "$zw" "$zc" "$rounds"
for w in $walkers; do
	for c in chrome perfetto; do
		mw=$(median "$tmp/$c-$w" '$1')
		mc=$(median "$tmp/$c-$w" '$2 + $3')
		awk -v n="$nr" -v w="$mw" -v c="$mc" -v zw="$zw" -v zc="$zc" -v name="$c" \
		    -v k="$w" -v r="$rounds" 'BEGIN {
			printf "%-8s %d walker(s): wall %.3f s (%.1f M events/s, %.1fx zstd -d), " \
			       "cpu %.3f s (%.1f M events per CPU-second, %.1fx zstd -d), median of %d\n",
			       name, k, w, n / w / 1e6, w / zw, c, n / c / 1e6, c / zc, r }'
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
