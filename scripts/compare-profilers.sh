#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare-profilers.sh [BUILD_DIR] - the README's whole-program comparison:
# examples/hotspot.c profiled by rec (-finstrument-functions + librec), gprof
# (-pg) and uftrace (-pg), with what each reports for func_a/func_b/wrappers
# and each one's overhead on the run time: the median of RUNS runs of each
# build, interleaved, against the uninstrumented build measured in the same
# loop. Installs gprof (binutils) and uftrace with apt-get if missing.
# Environment: ROUNDS (hotspot's argument, default 200), RUNS (default 7),
# CC (default cc).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rec_install_deps binutils uftrace
build=$(realpath "${1:-build}")
cc=${CC:-cc}
rounds=${ROUNDS:-200}
runs=${RUNS:-7}
[ -x "$build/analyzer/tracetool" ] || { meson setup "$build" >/dev/null && ninja -C "$build" >/dev/null; }
ninja -C "$build" >/dev/null
work=$(mktemp -d /tmp/rec-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=examples/hotspot.c
"$cc" -O2 "$src" -o "$work/plain"
"$cc" -O2 -finstrument-functions "$src" -o "$work/rec" -L"$build/librec" -lrec \
	-Wl,-rpath,"$build/librec"
"$cc" -O2 -pg "$src" -o "$work/pg"

ns() { date +%s%N; }
declare -A times
run_one() { # name command...
	local name=$1 t0 t1; shift
	t0=$(ns); "$@" >/dev/null 2>&1; t1=$(ns)
	times[$name]+="$(( (t1 - t0) / 1000 )) "
}
for ((i = 0; i < runs; i++)); do
	run_one plain "$work/plain" "$rounds"
	run_one rec env REC_OUTPUT="$work/trace.zst" "$work/rec" "$rounds"
	run_one gprof sh -c "cd '$work' && ./pg $rounds"
	run_one uftrace uftrace record -d "$work/uftrace.data" "$work/pg" "$rounds"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(echo "${times[plain]}" | median)

echo "== hotspot $rounds rounds; median of $runs runs each, wall time (µs), overhead = run time / uninstrumented"
for name in plain rec gprof uftrace; do
	m=$(echo "${times[$name]}" | median)
	printf '%-8s %9d µs  %6.2f x\n' "$name" "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN { print m / b }')"
done
echo
echo "== rec: tracetool summary"
"$build/analyzer/tracetool" summary "$work/trace.zst" | head -20
echo
echo "== gprof -b -p (flat profile)"
gprof -b -p "$work/pg" "$work/gmon.out" | head -12
echo
echo "== uftrace report"
uftrace report -d "$work/uftrace.data" | head -12
