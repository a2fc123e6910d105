#!/usr/bin/env bash
# writer-cost.sh ROUNDS BUILD... - the writer thread's CPU per event on the
# peer harness's two-worker loop (../shared/bench-peers' loop.c with
# rec_probe.h, built by scripts/lib/peer-loop.sh as for peer-probe.sh: two
# workers pinned to cores 0 and 1, 10 M calls each, REC_OVERFLOW=drop), for
# each build's librec, builds interleaved round by round. The writer's CPU
# is counted by `perf record -e cpu-clock` samples of the thread named
# rec-writer taken while both workers still ran (so not its recompression at
# the end), times the sampling period, over the events recorded (40.4 M with
# the warm-up). On two cores that CPU is what the workers' wall time pays
# for the writer (docs/BENCHMARKS.md, "The writer's CPU per event"). Prints
# per build the median, least and most ns/event, the loop's median ns/call
# (wall) and in how many rounds events were lost. Asserts nothing; run it on
# a quiet machine or interleave builds (it does) and read medians.
set -euo pipefail
ROUNDS=${1:?usage: writer-cost.sh ROUNDS BUILD...}
shift
(($# > 0)) || { echo "usage: writer-cost.sh ROUNDS BUILD..." >&2; exit 2; }
# shellcheck source=scripts/lib/peer-loop.sh
. "$(dirname "$0")/lib/peer-loop.sh"
W=$(mktemp -d /tmp/writer-cost.XXXXXX)
trap 'rm -rf "$W"' EXIT
HZ=4000
N=10000000
builds=()
for b in "$@"; do
	b=$(cd "$b" && pwd)
	builds+=("$b")
	i=$((${#builds[@]} - 1))
	peer_loop_probe "$b" "$W/rec$i"
done
# Any build's tracetool reads the files (TRACETOOL= to name one).
TT=${TRACETOOL:-}
for b in "${builds[@]}"; do [[ -n $TT || ! -x $b/analyzer/tracetool ]] || TT=$b/analyzer/tracetool; done
[[ -n $TT ]] || { echo "writer-cost.sh: no tracetool in the builds (TRACETOOL=)" >&2; exit 2; }
for ((r = 0; r < ROUNDS; r++)); do
	for i in "${!builds[@]}"; do
		rm -f "$W/t.zst"
		line=$(REC_OUTPUT="$W/t.zst" REC_OVERFLOW=drop perf record -q -e cpu-clock -F $HZ \
			-o "$W/perf.data" -- "$W/rec$i" x $N 2 0,1 "$W/t.zst" 2>/dev/null | grep '^RESULT')
		events=$("$TT" info "$W/t.zst" | sed -n 's/^events: *\([0-9]*\) records.*/\1/p')
		lost=$("$TT" info "$W/t.zst" | sed -n 's/^dropped scopes: *\([0-9]*\).*/\1/p')
		ns=$(sed -n 's/.* ns_per_call=\([^ ]*\).*/\1/p' <<<"$line")
		# The workers: the two threads other than rec-writer with the most
		# samples; count the writer's samples up to the first one's last.
		perf script -i "$W/perf.data" -F comm,tid,time 2>/dev/null | awk -v hz=$HZ \
			-v ev="$events" -v b="$i" -v ns="$ns" -v lost="${lost:-0}" '
			{ t = $3; sub(":", "", t); t += 0
			  if ($1 == "rec-writer") w[++nw] = t
			  else { n[$2]++; if (t > last[$2]) last[$2] = t } }
			END { for (k in n) if (n[k] > m1) { m2 = m1; k2 = k1; m1 = n[k]; k1 = k }
				  else if (n[k] > m2) { m2 = n[k]; k2 = k }
			      cut = last[k1] < last[k2] ? last[k1] : last[k2]
			      for (j = 1; j <= nw; j++) c += w[j] <= cut
			      printf "%s %.4f %s %s\n", b, c * 1e9 / hz / ev, ns, lost }' >>"$W/rows"
	done
done
printf '%-40s %9s %9s %9s %9s %12s\n' build "ns/event" least most "ns/call" "rounds lost"
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for i in "${!builds[@]}"; do
	awk -v b="$i" '$1 == b' "$W/rows" >"$W/mine"
	printf '%-40s %9.3f %9.3f %9.3f %9.2f %6d of %d\n' "${builds[$i]}" \
		"$(cut -d' ' -f2 "$W/mine" | median)" "$(cut -d' ' -f2 "$W/mine" | sort -g | head -1)" \
		"$(cut -d' ' -f2 "$W/mine" | sort -g | tail -1)" "$(cut -d' ' -f3 "$W/mine" | median)" \
		"$(awk '$4 > 0' "$W/mine" | wc -l)" "$(wc -l <"$W/mine")"
done
