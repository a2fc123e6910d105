#!/usr/bin/env bash
# peer-probe.sh BUILD [REPS] - the probe rows of ../shared/bench-peers/ (its
# src/loop.c, same flags, worker pinned by loop.c) against this build's
# librec, without installing or the other tracers: base, floor, rec-drop,
# rec-block, rec-finstr-block, rec-disabled, and the 2-thread floor and
# rec-drop. Interleaved rounds; prints each variant's median ns/call, its
# x floor ((v - base) / (floor - base)) and the events lost (2 x dropped).
set -euo pipefail
BLD=$(cd "${1:?usage: peer-probe.sh BUILD [REPS]}" && pwd)
REPS=${2:-5}
SRC=${PEERS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)/shared/bench-peers/src}
[[ -f $SRC/loop.c ]] || SRC=/work/shared/bench-peers/src
W=$(mktemp -d /tmp/peer-probe.XXXXXX)
trap 'rm -rf "$W"' EXIT
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RF="-I$BLD/librec -I$ROOT/librec/include -L$BLD/librec -Wl,-rpath,$BLD/librec -lrectrace"
CF="-O2 -g -Wall -Wextra"
gcc $CF -DV_BASE "$SRC/loop.c" -o "$W/base" -lpthread
gcc $CF -DV_FLOOR -DFLOOR_CAP=1024 "$SRC/loop.c" -o "$W/floor" -lpthread
gcc $CF -DV_EXTERNAL -DEXTERNAL_PROBE_HEADER='"rec_probe.h"' -I"$SRC" "$SRC/loop.c" -o "$W/rec" $RF -lpthread
gcc $CF -DV_BASE -finstrument-functions "$SRC/loop.c" -o "$W/recfin" $RF -lpthread
NT=10000000 NC=20000000
if (($(nproc) >= 2)); then C1=1 C2=0,1; else C1=0 C2=0,0; fi
run() {  # label threads n cpus bin [env...]
	local label=$1 th=$2 n=$3 cpus=$4 bin=$5; shift 5
	local of=$W/$label.zst line ns lost=0
	rm -f "$of"
	line=$(env REC_OUTPUT="$of" "$@" "$W/$bin" "$label" "$n" "$th" "$cpus" "$of" | grep '^RESULT')
	ns=$(sed -n 's/.* ns_per_call=\([^ ]*\).*/\1/p' <<<"$line")
	if [[ -f $of ]]; then
		lost=$("$BLD/analyzer/tracetool" info --format=json "$of" |
			python3 -c 'import json,sys; print(2*json.load(sys.stdin)["dropped"])')
	fi
	printf '%s\t%s\t%s\n' "$label" "$ns" "$lost" >>"$OUTF"
}
for ((r = 0; r <= REPS; r++)); do
	# round 0: warm-up, discarded
	if ((r == 0)); then OUTF=/dev/null; else OUTF=$W/raw.tsv; fi
	run base 1 $NC $C1 base
	run floor 1 $NC $C1 floor
	run rec-drop 1 $NT $C1 rec REC_OVERFLOW=drop
	run rec-block 1 $NT $C1 rec REC_OVERFLOW=block
	run rec-finstr-block 1 $NT $C1 recfin REC_OVERFLOW=block
	run rec-disabled 1 $NC $C1 rec REC_DISABLE=1
	run base-2t 2 $NC $C2 base
	run floor-2t 2 $NC $C2 floor
	run rec-drop-2t 2 $NT $C2 rec REC_OVERFLOW=drop
done
python3 - "$W/raw.tsv" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    l, ns, lost = line.split('\t')
    rows.setdefault(l, []).append((float(ns), int(lost)))
med = {l: st.median(x[0] for x in v) for l, v in rows.items()}
print(f"{'variant':<18} {'ns/call':>8} {'x floor':>8} {'lost (median)':>14}  rounds")
for l, v in rows.items():
    two = l.endswith('-2t')
    b = med['base-2t' if two else 'base']; f = med['floor-2t' if two else 'floor'] - b
    print(f"{l:<18} {med[l]:8.2f} {(med[l]-b)/f:8.3f} {st.median(x[1] for x in v):14.0f}  {len(v)}")
PY
