#!/usr/bin/env bash
# pressure-trial.sh BUILD [RUNS] [-- COMMAND...] - a whole-program recording
# while two CPU-bound processes keep every core busy (issue 29 item 2): runs
# COMMAND (default: BUILD/bench/bench_wholeprog 5, 585 functions built with
# -finstrument-functions) RUNS times (default 3) with librec's defaults, two
# `sh -c 'while :; do :; done'` at nice 0 beside it, and prints for each run
# and as medians: events, bytes per event on disk, the share of scopes
# dropped, the frames written fast under pressure and those compressed
# again at the end (`tracetool info`). A Lua or SQLite built with
# -finstrument-functions and linked with librec is a COMMAND too
# (docs/BENCHMARKS.md, "Files under pressure"). Asserts nothing.
set -euo pipefail
BLD=$(cd "${1:?usage: pressure-trial.sh BUILD [RUNS] [-- COMMAND...]}" && pwd)
RUNS=${2:-3}
shift $(($# >= 2 ? 2 : 1))
[[ ${1:-} == -- ]] && shift
(($# > 0)) || set -- "$BLD/bench/bench_wholeprog" 5
W=$(mktemp -d /tmp/pressure-trial.XXXXXX)
HOGS=()
cleanup() {
	for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT
for _ in 1 2; do
	nice -n 0 sh -c 'while :; do :; done' &
	HOGS+=($!)
done
for ((r = 1; r <= RUNS; r++)); do
	rm -f "$W/t.zst"
	/usr/bin/time -f '%e %U %S' -o "$W/time" env REC_OUTPUT="$W/t.zst" "$@" >/dev/null 2>"$W/err" ||
		{ cat "$W/err" >&2; exit 1; }
	"$BLD/analyzer/tracetool" info --format=json "$W/t.zst" >"$W/info.json"
	python3 - "$W/info.json" "$(cat "$W/time")" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY' | tee -a "$W/rows"
import json, sys
d = json.load(open(sys.argv[1]))
wall, usr, sy = sys.argv[2].split()
scopes = d["events"] / 2 + d["dropped"]
print(f"events {d['events']} bytes/event {d['bytes_per_event']:.3f} "
      f"dropped {d['dropped']} ({100 * d['dropped'] / scopes:.4f} % of scopes) "
      f"fast {d.get('fast_frames', 0)} recompressed {d.get('recompressed_frames', 0)} "
      f"of {d['frames']} frames; wall {wall} s, cpu {float(usr) + float(sy):.2f} s; load {sys.argv[3]}")
PY
done
python3 - "$W/rows" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
bpe = st.median(float(r[3]) for r in rows)
pct = st.median(float(r[6].strip('(')) for r in rows)
print(f"median of {len(rows)}: {bpe:.3f} bytes/event, {pct:.4f} % of scopes dropped")
PY
