#!/bin/sh
# SPDX-License-Identifier: MIT
# diff-noise.sh - how often `tracetool diff` flags scopes of two runs of the
# SAME build on this machine (docs/ANALYZER.md, "diff"): records
# tests/analyzer/prog_diff --hash N+1 times and diffs run 0 against each
# other run, counting verdicts per scope; then once against the build with a
# deliberate 25 % slowdown of solve. The hash scope is CPU-bound and shows
# what load does; the others wait on the clock.
#   usage: scripts/diff-noise.sh BUILD_DIR [N]
set -eu
build=${1:?usage: diff-noise.sh BUILD_DIR [N]}
n=${2:-10}
tt=$build/analyzer/tracetool
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
i=0
while [ "$i" -le "$n" ]; do
	REC_OUTPUT=$dir/run$i.zst "$build/tests/analyzer/prog_diff" --hash
	i=$((i + 1))
done
REC_OUTPUT=$dir/slow.zst "$build/tests/analyzer/prog_diff_slow" --hash
i=1
while [ "$i" -le "$n" ]; do
	"$tt" diff --format=csv "$dir/run0.zst" "$dir/run$i.zst" | tail -n +2
	i=$((i + 1))
done | awk -F, '{ n[$1 "," $16]++ } END { for (k in n) print k "," n[k] }' | sort |
	awk -F, -v n="$n" 'BEGIN { print "same build, " n " pairs: scope,verdict,count" } { print }'
echo "25 % slower solve:"
"$tt" diff --format=csv "$dir/run0.zst" "$dir/slow.zst" | cut -d, -f1,16
