#!/usr/bin/env bash
# window-first.sh TRACE TRACETOOL [ROUNDS] [FROM] [TO] - a window's first
# contact (issue 29 item 3; docs/BENCHMARKS.md, "A window's first contact"):
# ROUNDS (default 5) interleaved rounds of `zstd -d` of TRACE (the
# reference), summary, tree and chrome of the window [FROM, TO) (default 6s,
# 6.001s) through the index in the file (TRACETOOL_INDEX=1), then summary
# with the index made by a pass into an empty cache (TRACETOOL_INDEX=pass)
# and again from that cache; prints each one's median wall and CPU time
# (user + system, /usr/bin/time) and the load. Asserts nothing.
set -euo pipefail
F=${1:?usage: window-first.sh TRACE TRACETOOL [ROUNDS] [FROM] [TO]}
T=${2:?usage: window-first.sh TRACE TRACETOOL [ROUNDS] [FROM] [TO]}
R=${3:-5}
W1=${4:-6s}
W2=${5:-6.001s}
D=$(mktemp -d /tmp/window-first.XXXXXX)
trap 'rm -rf "$D"' EXIT
declare -A wall cpu
run() { # NAME COMMAND...
	local n=$1 e u s
	shift
	/usr/bin/time -f "%e %U %S" -o "$D/t" "$@" >/dev/null 2>"$D/err" ||
		{ echo "window-first.sh: $n failed:" >&2; cat "$D/err" >&2; exit 1; }
	read -r e u s <"$D/t"
	wall[$n]+="$e "
	cpu[$n]+="$(python3 -c "print($u + $s)") "
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < R; r++)); do
	run zstd zstd -q -d -c "$F"
	run summary env TRACETOOL_INDEX=1 "$T" summary --from="$W1" --to="$W2" "$F"
	run tree env TRACETOOL_INDEX=1 "$T" tree --from="$W1" --to="$W2" "$F"
	run chrome env TRACETOOL_INDEX=1 "$T" chrome --from="$W1" --to="$W2" -o /dev/null "$F"
	rm -rf "$D/idx"
	mkdir "$D/idx"
	run pass_first env TRACETOOL_INDEX=pass TRACETOOL_INDEX_DIR="$D/idx" "$T" summary \
		--from="$W1" --to="$W2" "$F"
	run pass_cached env TRACETOOL_INDEX=pass TRACETOOL_INDEX_DIR="$D/idx" "$T" summary \
		--from="$W1" --to="$W2" "$F"
done
for n in zstd summary tree chrome pass_first pass_cached; do
	python3 - "$n" "${wall[$n]}" "${cpu[$n]}" <<'PY'
import statistics as s, sys
w = [float(x) for x in sys.argv[2].split()]
c = [float(x) for x in sys.argv[3].split()]
print("%-12s wall %.3f s  cpu %.3f s  (median of %d; walls %s)" %
      (sys.argv[1], s.median(w), s.median(c), len(w), " ".join("%.2f" % x for x in w)))
PY
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
TRACETOOL_INDEX=1 TRACETOOL_INDEX_STATS=1 "$T" summary --from="$W1" --to="$W2" "$F" 2>&1 >/dev/null |
	grep 'index:' || true
