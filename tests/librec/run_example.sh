#!/bin/sh
# run_example.sh PIPELINE TRACETOOL - the Quick start's example runs, its
# trace is intact (tracetool check) and accounts for every item processed.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Block mode: exact counts even on a loaded machine or under a sanitizer.
REC_OVERFLOW=block REC_OUTPUT="$dir/trace.zst" "$1" > "$dir/out.txt"
grep -q "processed 20000 items" "$dir/out.txt"
"$2" check "$dir/trace.zst"
"$2" summary --format=csv "$dir/trace.zst" > "$dir/summary.csv"
grep -q '^process,20000,' "$dir/summary.csv"
grep -q '^checksum,20000,' "$dir/summary.csv"
grep -q '^slow_io,200,' "$dir/summary.csv"
# Its annotations (value tracks, an argument, a flow) are not scopes, and
# none was dropped.
if grep -qE '^(work_queue|results_queue|item),' "$dir/summary.csv"; then
	echo "an annotation's name shows as a scope"; exit 1
fi
"$2" info --format=json "$dir/trace.zst" > "$dir/info.json"
if grep -q '"annotations_dropped"' "$dir/info.json"; then
	echo "annotations dropped in block mode"; exit 1
fi
# Pairing on three walker threads (TSan watches this test) prints what one
# walker prints.
for opts in "--format=csv --by-thread" "--format=json"; do
	# shellcheck disable=SC2086 # opts is two words on purpose
	TRACETOOL_THREADS=1 "$2" summary $opts "$dir/trace.zst" > "$dir/one.txt"
	# shellcheck disable=SC2086
	TRACETOOL_THREADS=3 "$2" summary $opts "$dir/trace.zst" > "$dir/three.txt"
	cmp "$dir/one.txt" "$dir/three.txt"
done
# Parquet export on three walkers, each writing row groups of its own into
# the same files (TSan watches this too): the rows of one walker's export.
for w in 1 3; do
	TRACETOOL_EXPORT_STATS=1 TRACETOOL_THREADS=$w "$2" export -o "$dir/pq$w" "$dir/trace.zst" \
		2>&1 | sed "s|$dir/pq$w/||; s|, [0-9]* bytes||" > "$dir/rows$w.txt"
done
grep -q '^activations.parquet: [1-9][0-9]* rows$' "$dir/rows1.txt"
cmp "$dir/rows1.txt" "$dir/rows3.txt"
echo "1 passed, 0 failed"
