#!/usr/bin/env bash
# peer-probe.sh BUILD [REPS] [THREADS] - the probe rows of ../shared/bench-peers/
# (its src/loop.c, same flags, workers pinned by loop.c) against this build's
# librec, without installing or the other tracers. THREADS is a comma list of
# thread counts (default 1,2; on a bigger machine e.g. 1,2,4,8,15), one table
# each:
#   1 thread (worker on core 1, the writer free to use core 0): base, floor,
#     ref-null (the harness's reference recorder, its writer discarding),
#     rec-drop, rec-block, rec-finstr-block (the -finstrument-functions
#     hook), rec-disabled;
#   N threads (workers pinned to cores 0..N-1, round robin when N is at least
#     the number of cores: then the writer has no core of its own): base,
#     floor, ref-null, rec-drop, rec-block and rec-drop-16M (REC_BUFFER=16M,
#     the default before issue 29's losses at defaults; the default is 64M).
# Interleaved rounds after a discarded warm-up round; prints each variant's
# median ns/call, its x floor ((v - base) / (floor - base), base and floor
# of the same thread count), the events lost (rec: 2 x dropped scopes; ref:
# records dropped), median, most and in how many rounds any was lost. Asserts
# nothing (docs/BENCHMARKS.md, "The peer harness on more cores").
# PEER_CLOCK=cpu: loop.c's timer reads each worker's CPU time
# (CLOCK_THREAD_CPUTIME_ID) instead of CLOCK_MONOTONIC, so that on a shared
# machine the time other processes take is not counted (time a block-mode
# probe sleeps is not counted either); default wall, loop.c as it is. Also
# printed either way: "proc x floor", the whole process's CPU time (perf stat's
# task-clock: the workers, the writer, its recompression at the end, start-up)
# per call, as a ratio the same way.
set -euo pipefail
BLD=$(cd "${1:?usage: peer-probe.sh BUILD [REPS] [THREADS]}" && pwd)
REPS=${2:-5}
THREADS=${3:-1,2}
# shellcheck source=scripts/lib/peer-loop.sh
. "$(dirname "$0")/lib/peer-loop.sh"
[[ $THREADS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
	{ echo "peer-probe.sh: THREADS must be a comma list of counts, e.g. 1,2,4" >&2; exit 2; }
W=$(mktemp -d /tmp/peer-probe.XXXXXX)
trap 'rm -rf "$W"' EXIT
case ${PEER_CLOCK:=wall} in
wall) ;;
cpu)
	sed '/^static uint64_t now_ns(void)/,/^}/ s/CLOCK_MONOTONIC/CLOCK_THREAD_CPUTIME_ID/' \
		"$PEER_SRC/loop.c" >"$W/loop.c"
	grep -q CLOCK_THREAD_CPUTIME_ID "$W/loop.c" ||
		{ echo "peer-probe.sh: loop.c's now_ns() not found" >&2; exit 2; }
	cp "$PEER_SRC"/*.h "$W/"
	PEER_SRC=$W
	;;
*) echo "peer-probe.sh: PEER_CLOCK is wall or cpu" >&2; exit 2 ;;
esac
peer_loop "$W/base" -DV_BASE
peer_loop "$W/floor" -DV_FLOOR -DFLOOR_CAP=1024
peer_loop "$W/ref" -I"$PEER_SRC" -DV_REF -DREF_RING_LOG2=20
peer_loop_probe "$BLD" "$W/rec"
peer_loop_rec "$BLD" "$W/recfin" -DV_BASE -finstrument-functions
NT=${PEER_CALLS:-10000000} NC=$((2 * NT)) # calls per thread (PEER_CALLS: a quick look)
NCPU=$(nproc)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
# The cores of N workers: one thread on core 1 (the writer has core 0);
# else 0..N-1, round robin over the cores when there are fewer.
cpus() {
	local n=$1 i list=
	if ((n == 1)); then
		((NCPU >= 2)) && echo 1 || echo 0
		return
	fi
	for ((i = 0; i < n; i++)); do list+=${list:+,}$((i % NCPU)); done
	echo "$list"
}
run() {  # threads label calls cpus bin [env...]
	local th=$1 label=$2 n=$3 cpus=$4 bin=$5; shift 5
	local of=$W/$label.zst line lost=0 cpu
	rm -f "$of"
	if [[ $bin == ref ]]; then
		line=$(perf stat -x, -e task-clock -o "$W/time" -- "$W/ref" "$label" "$n" "$th" "$cpus" /dev/null |
			grep '^RESULT')
		lost=$(field drops <<<"$line")
	else
		line=$(perf stat -x, -e task-clock -o "$W/time" -- env REC_OUTPUT="$of" "$@" "$W/$bin" "$label" "$n" \
			"$th" "$cpus" "$of" | grep '^RESULT')
		if [[ -f $of ]]; then
			lost=$("$BLD/analyzer/tracetool" info --format=json "$of" |
				python3 -c 'import json,sys; print(2*json.load(sys.stdin)["dropped"])')
		fi
	fi
	# Process CPU ns per call (all threads' calls).
	cpu=$(awk -F, -v n="$n" -v th="$th" '$3 == "task-clock" { printf "%.3f", $1 * 1e6 / (n * th) }' "$W/time")
	printf '%s\t%s\t%s\t%s\t%s\n' "$th" "$label" "$(field ns_per_call <<<"$line")" "$lost" "$cpu" >>"$OUTF"
}
IFS=, read -ra COUNTS <<<"$THREADS"
for ((r = 0; r <= REPS; r++)); do
	# round 0: warm-up, discarded
	if ((r == 0)); then OUTF=/dev/null; else OUTF=$W/raw.tsv; fi
	for n in "${COUNTS[@]}"; do
		c=$(cpus "$n")
		run "$n" base $NC "$c" base
		run "$n" floor $NC "$c" floor
		run "$n" ref-null $NT "$c" ref
		run "$n" rec-drop $NT "$c" rec REC_OVERFLOW=drop
		run "$n" rec-block $NT "$c" rec REC_OVERFLOW=block
		if ((n == 1)); then
			run "$n" rec-finstr-block $NT "$c" recfin REC_OVERFLOW=block
			run "$n" rec-disabled $NC "$c" rec REC_DISABLE=1
		else
			run "$n" rec-drop-16M $NT "$c" rec REC_OVERFLOW=drop REC_BUFFER=16M
		fi
	done
done
python3 - "$W/raw.tsv" "$NCPU" "$NT" "$PEER_CLOCK" <<'PY'
import sys, statistics as st
ncpu, nt, clock = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tables = {}
for line in open(sys.argv[1]):
    th, l, ns, lost, cpu = line.rstrip('\n').split('\t')
    tables.setdefault(int(th), {}).setdefault(l, []).append((float(ns), int(lost), float(cpu)))
for th, rows in tables.items():
    med = {l: st.median(x[0] for x in v) for l, v in rows.items()}
    pmed = {l: st.median(x[2] for x in v) for l, v in rows.items()}
    b = med['base']; f = med['floor'] - b
    pb = pmed['base']; pf = pmed['floor'] - pb
    spare = 'the writer has a core of its own' if th < ncpu else 'no spare core for the writer'
    print(f"\n{th} thread{'s' if th > 1 else ''} on {ncpu} cores ({spare}); "
          f"events per round: {2 * th * nt:,}; ns/call: {clock} time of each worker")
    print(f"{'variant':<18} {'ns/call':>8} {'x floor':>8} {'proc x floor':>13} {'lost (median)':>14} "
          f"{'lost (max)':>11} {'rounds lost':>12}")
    for l, v in rows.items():
        lossy = sum(1 for x in v if x[1] > 0)
        print(f"{l:<18} {med[l]:8.2f} {(med[l]-b)/f:8.3f} {(pmed[l]-pb)/pf:13.3f} "
              f"{st.median(x[1] for x in v):14.0f} {max(x[1] for x in v):11d} {lossy:>5} of {len(v):<4}")
PY
