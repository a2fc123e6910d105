#!/bin/bash
# SPDX-License-Identifier: MIT
# sampling.sh BUILD_DIR [accuracy|overhead|cost|sqlite|all] - the figures of
# README "Sampling: accuracy and cost" (issue 28): run by hand, never by
# meson test. Needs perf (linux-perf) for the comparisons, gcc, and
# libsqlite3-dev (Debian's own libsqlite3.a, symbols kept).
#
#   accuracy  examples/hotspot.c built plainly (gcc -O2, no rec, no
#             -finstrument-functions) under `tracetool record -F 997`,
#             8000 rounds: func_b/func_a self samples, the wrappers' self
#             share, and samples against CPU time x HZ; then RUNS executions
#             each sampled at once by rec at 997 Hz, perf at 997 Hz and perf
#             at 20 kHz (the reference): the spread that sampling at 997 Hz
#             has over that run length, for both.
#   overhead  the same program (ROUNDS rounds, default 4000) plain, under
#             tracetool record -F HZ and under perf record -F HZ (cpu-clock,
#             frame-pointer call graphs: what perf can do on a -O2 binary
#             without DWARF copies) at 50..5000 Hz: user+sys CPU (rusage,
#             the whole command: rec's writer thread, perf's own process)
#             and wall time; per rate RUNS (default 5) rounds of the three
#             run in turn, the change the median of each round's ratios.
#   cost      where the CPU of a sample goes (bench/sample_cost.c), each
#             layer measured inside one process against itself: chunks of
#             40 rounds alternately with the thread's perf event enabled and
#             disabled (PERF_EVENT_IOC_ENABLE/DISABLE), the thread's CPU
#             time of each, the median of 100 pairs' ratios; per layer and
#             rate (1000 and 10000 Hz) REPS (default 3) runs in turn, the
#             median of their medians: the kernel's hrtimer alone, + the
#             signal to an empty handler, + _Unwind_Backtrace in it, librec
#             (REC_SAMPLE, its own event found and toggled); then librec's
#             writer thread's CPU beside the sampled thread's.
#   sqlite    bench/sqlite_host.c on Debian's libsqlite3.a (ROWS rows,
#             default 300000), one execution sampled by both at 997 Hz
#             (perf record -e cpu-clock:u around tracetool record): the top
#             10 functions by self share side by side (perf report
#             --no-children --comm sqlite_host --sort=sym).
set -eu
build=$(cd "$1" && pwd)
what=${2:-all}
runs=${RUNS:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
tt=$build/analyzer/tracetool
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gcc -O2 -g -o "$tmp/hotspot" "$src/examples/hotspot.c"
gcc -O2 -g -Wall -Wextra -pthread -o "$tmp/sample_cost" "$src/bench/sample_cost.c"
gcc -O2 -g -o "$tmp/sqlite_host" "$src/bench/sqlite_host.c" \
	/usr/lib/x86_64-linux-gnu/libsqlite3.a -lm -lpthread -ldl

# cpu_wall CMD...: "user+sys wall" in seconds of the command and its children.
cpu_wall() {
	python3 - "$@" <<'PY'
import os, subprocess, sys, time
t = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, _, ru = os.wait4(p.pid, 0)
print("%.4f %.4f" % (ru.ru_utime + ru.ru_stime, time.monotonic() - t))
PY
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# ab_ratio CSV: func_b/func_a of tracetool profile's self samples.
ab_ratio() {
	awk -F, '$1 == "func_a" {a = $3} $1 == "func_b" {b = $3}
		END {printf "%d/%d = %.3f", b, a, a ? b / a : 0}' "$1"
}

# perf_ratio DATA EVENT: func_b/func_a of perf report's self shares for EVENT.
perf_ratio() {
	perf report -i "$1" --stdio --no-children --comm hotspot --sort=sym 2>/dev/null |
		awk -v ev="$2" '/^# Samples:/ {on = index($0, ev) > 0} on && /func_a/ {a = $1}
			on && /func_b/ {b = $1} END {sub("%", "", a); sub("%", "", b);
			printf "%.3f", a ? b / a : 0}'
}

accuracy() {
	echo "== accuracy: hotspot 8000 rounds, tracetool record -F 997"
	/usr/bin/time -f '%U %S' -o "$tmp/cpu" "$tt" record -F 997 -o "$tmp/h.zst" -- "$tmp/hotspot" 8000
	"$tt" profile --format=csv "$tmp/h.zst" >"$tmp/h.csv"
	"$tt" profile "$tmp/h.zst" | head -n 8
	awk -F, -v cpu="$(awk '{print $1 + $2}' "$tmp/cpu")" '
		NR > 1 { self[$1] = $3; pct[$1] = $5; n += $3 }
		END {
			printf "func_b/func_a self samples: %d/%d = %.2f (want 3.6-4.4)\n",
			       self["func_b"], self["func_a"], self["func_b"] / self["func_a"]
			printf "wrapper_a self %.2f %%, wrapper_b self %.2f %% (want < 2)\n",
			       pct["wrapper_a"], pct["wrapper_b"]
			printf "samples %d, CPU time %.3f s x 997 = %.0f: %+.1f %% (want within 10)\n",
			       n, cpu, cpu * 997, 100 * (n - cpu * 997) / (cpu * 997)
		}' "$tmp/h.csv"
	echo "== accuracy spread: $runs executions of hotspot 8000, each sampled at once by rec"
	echo "   (tracetool record -F 997), perf at the same rate (cpu-clock, 997 Hz) and perf at"
	echo "   20 kHz (task-clock: the reference, ~20x the samples); func_b/func_a of each"
	for i in $(seq "$runs"); do
		rm -f "$tmp/a.data" "$tmp/a.zst"
		perf record -q -e 'cpu-clock/freq=997/u' -e 'task-clock/freq=20000/u' -o "$tmp/a.data" -- \
			"$tt" record -F 997 -o "$tmp/a.zst" -- "$tmp/hotspot" 8000 2>/dev/null
		"$tt" profile --format=csv "$tmp/a.zst" >"$tmp/a.csv"
		printf "run %d (load %s): rec %s   perf@997 %s   perf@20k %s\n" "$i" \
			"$(cut -d' ' -f1 /proc/loadavg)" "$(ab_ratio "$tmp/a.csv")" \
			"$(perf_ratio "$tmp/a.data" cpu-clock)" "$(perf_ratio "$tmp/a.data" task-clock)"
	done
}

overhead() {
	local rounds=${ROUNDS:-4000}
	echo "== overhead: hotspot $rounds rounds; per rate, $runs rounds of (plain, rec, perf) run in turn;"
	echo "   CPU = user+sys of the whole command (rusage), s; the change is the median of the"
	echo "   runs' own ratios to the plain run beside them"
	printf "%-6s %-8s %-8s %-14s %-14s %-8s %-14s %-14s %-8s\n" Hz "plain" "" "rec CPU" \
		"rec wall" samples "perf CPU" "perf wall" samples
	for hz in 50 100 200 500 1000 5000; do
		: >"$tmp/rows"
		for i in $(seq "$runs"); do
			p=$(cpu_wall "$tmp/hotspot" "$rounds")
			r=$(cpu_wall "$tt" record -F "$hz" -o "$tmp/o.zst" -- "$tmp/hotspot" "$rounds")
			q=$(cpu_wall perf record -q -e cpu-clock:u -F "$hz" -g -o "$tmp/perf.data" -- \
				"$tmp/hotspot" "$rounds")
			echo "$p $r $q" >>"$tmp/rows"
		done
		rs=$("$tt" profile --format=json "$tmp/o.zst" | sed 's/^{"samples":\([0-9]*\),.*/\1/')
		ps=$(perf report -i "$tmp/perf.data" --stdio 2>/dev/null |
			sed -n 's/^# Samples: \([0-9.]*[KM]\{0,1\}\).*/\1/p' | head -n 1)
		col() { awk -v c="$1" '{print $c}' "$tmp/rows" | median; }
		ratio() { awk -v a="$1" -v b="$2" '{print 100 * ($a - $b) / $b}' "$tmp/rows" | median; }
		printf "%-6s %-8s %-8s %5.3f %+5.1f%%  %6.2f %+5.1f%%  %-8s %5.3f %+5.1f%%  %6.2f %+5.1f%%  %-8s\n" \
			"$hz" "$(col 1)" "$(col 2)" "$(col 3)" "$(ratio 3 1)" "$(col 4)" "$(ratio 4 2)" \
			"$rs" "$(col 5)" "$(ratio 5 1)" "$(col 6)" "$(ratio 6 2)" "$ps"
	done
}

cost() {
	local reps=${REPS:-3} lib=$build/librec/librectrace.so
	echo "== cost: sample_cost's AB (one process, event on/off by chunks of 40 rounds, 100 pairs;"
	echo "   the median of $reps runs' medians); load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf "%-44s %18s %18s\n" layer "1000 Hz" "10000 Hz"
	for hz in 1000 10000; do
		for i in $(seq "$reps"); do
			for m in perf-nosig perf-empty perf-unwind perf-ring found; do
				if [ $m = found ]; then
					AB_CHUNK=40 LD_PRELOAD=$lib REC_SAMPLE=$hz REC_OUTPUT="$tmp/c.zst" \
						"$tmp/sample_cost" found "$hz" 8000
				else
					AB_CHUNK=40 "$tmp/sample_cost" $m "$hz" 8000
				fi
			done
		done
	done >"$tmp/ab"
	for m in perf-nosig perf-empty perf-unwind perf-ring found; do
		case $m in
		perf-nosig) name="perf task-clock event, no signal" ;;
		perf-empty) name="+ its signal, an empty handler" ;;
		perf-unwind) name="+ _Unwind_Backtrace in the handler" ;;
		perf-ring) name="(instead: 8 KiB stack copies, no signal)" ;;
		found) name="librec REC_SAMPLE (the sampled thread)" ;;
		esac
		cell() {
			awk -v m="$1" -v hz="$2" '$2 == m && $3 == hz { p = $0; sub(/.*median /, "", p);
				sub(/ %.*/, "", p); u = $0; sub(/ us a period.*/, "", u); sub(/.*%, /, "", u);
				print p, u }' "$tmp/ab" | sort -n | awk '{a[NR] = $0} END {split(a[int((NR + 1) / 2)], v, " ");
				printf "%+6.2f %% %5.1f us", v[1], v[2]}'
		}
		printf "%-44s %18s %18s\n" "$name" "$(cell $m 1000)" "$(cell $m 10000)"
	done
	echo "librec's writer thread at 1000 Hz, beside the sampled thread (CPU s, /proc/self/task):"
	THREADS=1 LD_PRELOAD=$lib REC_SAMPLE=1000 REC_OUTPUT="$tmp/c.zst" "$tmp/sample_cost" plain 1000 4000 |
		grep '^thread'
	echo "a recording's fixed cost: hotspot 1 round, CPU of the whole command (the first two"
	echo "through env(1)), median of 15 in turn:"
	: >"$tmp/fixed"
	for i in $(seq 15); do
		echo "$(cpu_wall env "$tmp/hotspot" 1) $(cpu_wall env LD_PRELOAD="$lib" REC_SAMPLE=1000 \
			REC_OUTPUT="$tmp/f.zst" "$tmp/hotspot" 1) \
			$(cpu_wall "$tt" record -F 1000 -o "$tmp/f2.zst" -- "$tmp/hotspot" 1)" >>"$tmp/fixed"
	done
	for c in 1 3 5; do awk -v c=$c '{print $c}' "$tmp/fixed" | median; done | paste -sd' ' |
		awk '{printf "plain %.2f ms, LD_PRELOAD=librectrace.so REC_SAMPLE=1000 %.2f ms, tracetool record -F 1000 %.2f ms\n",
			1000 * $1, 1000 * $2, 1000 * $3}'
}

sqlite() {
	echo "== sqlite: bench/sqlite_host (Debian libsqlite3.a), one run sampled by both at 997 Hz"
	echo "   (perf record -e cpu-clock:u around tracetool record: the same execution)"
	perf record -q -e cpu-clock:u -F 997 -o "$tmp/s.data" -- \
		"$tt" record -F 997 -o "$tmp/s.zst" -- "$tmp/sqlite_host" "${ROWS:-300000}"
	"$tt" profile --format=csv --top=10 "$tmp/s.zst" |
		awk -F, 'NR > 1 {printf "%s %.2f\n", $1, $5}' >"$tmp/rec10"
	perf report -i "$tmp/s.data" --stdio --no-children --comm sqlite_host --sort=sym 2>/dev/null |
		awk '/^ *[0-9.]+%/ {p = $1; sub("%", "", p); printf "%s %.2f\n", $NF, p}' >"$tmp/perfall"
	head -n 10 "$tmp/perfall" >"$tmp/perf10"
	echo "rank  rec (tracetool profile)               perf report                          perf's share of rec's function"
	paste -d' ' "$tmp/rec10" "$tmp/perf10" | while read -r rn rp pn pp; do
		ps=$(awk -v n="$rn" '$1 == n {print $2; exit}' "$tmp/perfall")
		printf "%-34s %6.2f   %-34s %6.2f   %6s\n" "$rn" "$rp" "$pn" "$pp" "${ps:-none}"
	done | awk '{printf "%-4d  %s\n", NR, $0}'
}

case $what in
accuracy) accuracy ;;
overhead) overhead ;;
cost) cost ;;
sqlite) sqlite ;;
all) accuracy; overhead; cost; sqlite ;;
*) echo "usage: $0 BUILD_DIR [accuracy|overhead|cost|sqlite|all]" >&2; exit 2 ;;
esac
