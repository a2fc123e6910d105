#!/usr/bin/env bash
# peer-probe-ab.sh BUILD_A BUILD_B [REPS] - scripts/peer-probe.sh's probe rows
# for two build trees in the same interleaved rounds (warm-up round
# discarded), so that two builds compare under the same load: base and floor
# once a round, then rec-drop, rec-block and rec-finstr-block of A and of B,
# and the 2-thread rows (drop and block) of each. Prints each variant's median
# ns/call, x floor and events lost. BUILD_A's tracetool reads the files.
# Each BUILD must sit directly in its source tree (for librec/include).
set -euo pipefail
A=$(cd "${1:?usage: peer-probe-ab.sh BUILD_A BUILD_B [REPS]}" && pwd)
B=$(cd "${2:?usage: peer-probe-ab.sh BUILD_A BUILD_B [REPS]}" && pwd)
REPS=${3:-5}
# shellcheck source=scripts/lib/peer-loop.sh
. "$(dirname "$0")/lib/peer-loop.sh"
W=$(mktemp -d /tmp/peer-ab.XXXXXX); trap 'rm -rf "$W"' EXIT
peer_loop "$W/base" -DV_BASE
peer_loop "$W/floor" -DV_FLOOR -DFLOOR_CAP=1024
for x in A B; do BLD=${!x}; PEER_REC_ROOT=$(cd "$BLD/.." && pwd)
 peer_loop_probe "$BLD" "$W/rec$x"
 peer_loop_rec "$BLD" "$W/recfin$x" -DV_BASE -finstrument-functions
done
TT=$A/analyzer/tracetool
NT=10000000 NC=20000000; C1=1 C2=0,1
run() { local label=$1 th=$2 n=$3 cpus=$4 bin=$5; shift 5
 local of=$W/$label.zst line ns lost=0; rm -f "$of"
 line=$(env REC_OUTPUT="$of" "$@" "$W/$bin" "$label" "$n" "$th" "$cpus" "$of" | grep '^RESULT')
 ns=$(sed -n 's/.* ns_per_call=\([^ ]*\).*/\1/p' <<<"$line")
 if [[ -f $of ]]; then lost=$("$TT" info --format=json "$of" | python3 -c 'import json,sys; print(2*json.load(sys.stdin)["dropped"])'); fi
 printf '%s\t%s\t%s\n' "$label" "$ns" "$lost" >>"$OUTF"; }
for ((r = 0; r <= REPS; r++)); do
 if ((r == 0)); then OUTF=/dev/null; else OUTF=$W/raw.tsv; fi
 run base 1 $NC $C1 base
 run floor 1 $NC $C1 floor
 for x in A B; do
  run rec-drop-$x 1 $NT $C1 rec$x REC_OVERFLOW=drop
  run rec-block-$x 1 $NT $C1 rec$x REC_OVERFLOW=block
  run rec-finstr-block-$x 1 $NT $C1 recfin$x REC_OVERFLOW=block
 done
 run base-2t 2 $NC $C2 base
 run floor-2t 2 $NC $C2 floor
 for x in A B; do run rec-drop-2t-$x 2 $NT $C2 rec$x REC_OVERFLOW=drop; run rec-block-2t-$x 2 $NT $C2 rec$x REC_OVERFLOW=block; done
done
python3 - "$W/raw.tsv" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    l, ns, lost = line.split('\t'); rows.setdefault(l, []).append((float(ns), int(lost)))
med = {l: st.median(x[0] for x in v) for l, v in rows.items()}
print(f"{'variant':<22} {'ns/call':>8} {'x floor':>8} {'lost (median)':>14}  rounds")
for l, v in rows.items():
    two = '-2t' in l
    b = med['base-2t' if two else 'base']; f = med['floor-2t' if two else 'floor'] - b
    print(f"{l:<22} {med[l]:8.2f} {(med[l]-b)/f:8.3f} {st.median(x[1] for x in v):14.0f}  {len(v)}")
PY
