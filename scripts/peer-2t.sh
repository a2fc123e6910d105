#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# peer-2t.sh BUILD [ROUNDS] - the 2-thread tight loop of ../shared/bench-peers/
# (its src/loop.c: two workers pinned one per core, 10 M calls each), taken
# apart: base, floor; rec-flight (REC_MODE=flight: rec's probes fill the
# rings and no writer reads them); ref-copy (the harness's reference design,
# src/refrec.h, 16 MiB rings, its writer copying every record into 1 MiB
# blocks for /dev/null and napping 1 ms when idle, as rec's does: what
# reading the records costs); ref-null (the same with the harness's own
# settings, 20 us naps); rec-drop at REC_BUFFER=8M (the default) and 16M.
# Interleaved rounds after a discarded warm-up round; prints each variant's
# median ns/call, x floor ((v - base) / (floor - base)), the events lost
# (rec: 2 x dropped scopes; ref: records dropped) and the per-round figures.
# Asserts nothing: it shows what a writer without a core of its own costs
# (docs/DESIGN.md, "The writer under pressure"; issue 14).
set -euo pipefail
BLD=$(cd "${1:?usage: peer-2t.sh BUILD [ROUNDS]}" && pwd)
ROUNDS=${2:-5}
# shellcheck source=scripts/lib/peer-loop.sh
. "$(dirname "$0")/lib/peer-loop.sh"
W=$(mktemp -d /tmp/peer-2t.XXXXXX)
trap 'rm -rf "$W"' EXIT
((ROUNDS >= 1)) || { echo "peer-2t.sh: ROUNDS must be at least 1" >&2; exit 2; }
peer_loop "$W/base" -DV_BASE
peer_loop "$W/floor" -DV_FLOOR -DFLOOR_CAP=1024
peer_loop "$W/ref" -I"$PEER_SRC" -DV_REF -DREF_RING_LOG2=20
peer_loop "$W/refcopy" -I"$PEER_SRC" -DV_REF -DREF_RING_LOG2=20 -DREF_IDLE_NS=1000000 \
	-DREF_MIN_BATCH=65536
peer_loop_probe "$BLD" "$W/rec"
if (($(nproc) >= 2)); then CPUS=0,1; else CPUS=0,0; fi
NT=10000000 NC=20000000
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
for ((r = 0; r <= ROUNDS; r++)); do
	for v in base floor rec-flight ref-copy ref-null rec-8M rec-16M; do
		lost=0
		case $v in
		base) line=$("$W/base" base "$NC" 2 "$CPUS") ;;
		floor) line=$("$W/floor" floor "$NC" 2 "$CPUS") ;;
		ref-*)
			if [[ $v == ref-copy ]]; then bin=refcopy; else bin=ref; fi
			line=$("$W/$bin" "$v" "$NT" 2 "$CPUS" /dev/null)
			lost=$(field drops <<<"$line")
			;;
		rec-flight)
			line=$(REC_MODE=flight REC_OUTPUT="$W/f.zst" "$W/rec" "$v" "$NT" 2 "$CPUS" "$W/f.zst")
			;;
		rec-*)
			rm -f "$W/t.zst"
			line=$(REC_OVERFLOW=drop REC_BUFFER=${v#rec-} REC_OUTPUT="$W/t.zst" \
				"$W/rec" "$v" "$NT" 2 "$CPUS" "$W/t.zst")
			lost=$("$BLD/analyzer/tracetool" info --format=json "$W/t.zst" |
				python3 -c 'import json,sys; print(2*json.load(sys.stdin)["dropped"])')
			;;
		esac
		((r > 0)) && printf '%s\t%s\t%s\n' "$v" "$(field ns_per_call <<<"$line")" "$lost" >>"$W/raw.tsv"
	done
done
python3 - "$W/raw.tsv" <<'PY'
import statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    v, ns, lost = line.split('\t')
    rows.setdefault(v, []).append((float(ns), int(lost)))
med = {v: st.median(x[0] for x in r) for v, r in rows.items()}
b, f = med['base'], med['floor'] - med['base']
print(f"{'variant':<9} {'ns/call':>8} {'x floor':>8} {'lost (median)':>14}  per round (x floor / lost)")
for v, r in rows.items():
    per = ' '.join(f"{(x[0] - b) / f:.3f}/{x[1]}" for x in r)
    print(f"{v:<9} {med[v]:8.2f} {(med[v] - b) / f:8.3f} {st.median(x[1] for x in r):14.0f}  {per}")
PY
