#!/bin/sh
# SPDX-License-Identifier: MIT
# export.sh TRACETOOL EX_GEN PROG_ANNOTS - `tracetool export` of one and of
# two runs (ex_gen recordings of known shape), as Parquet and as CSV, read
# back by DuckDB and hyparquet (export_read.mjs); the same rows whatever the
# number of walkers (export_same.mjs: one walker against 2 and 3, which
# write row groups of their own; also on a recording of every annotation,
# PROG_ANNOTS); exit 2 on usage errors and 1 on a bad trace. Exit 77
# (skipped) only when the readers cannot be installed.
set -eu
tt=$1
gen=$2
prog_annots=$3
here=$(cd "$(dirname "$0")" && pwd)
REC_NPM_DIR=$("$here/../../scripts/npm-clients.sh") || exit $?
export REC_NPM_DIR
command -v node >/dev/null || { echo "node not found" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
r0="4242:1700000000000000000:50000:30000"
r1="4300:1700000000000500000:7:3"
"$gen" "$tmp/a.zst" 4242 1700000000000000000 50000 30000
"$gen" "$tmp/b.zst" 4300 1700000000000500000 7 3
"$tt" summary --format=csv "$tmp/a.zst" >"$tmp/summary0.csv"
for fmt in parquet csv; do
	echo "one run, $fmt"
	"$tt" export --format=$fmt -o "$tmp/one-$fmt" "$tmp/a.zst"
	node "$here/export_read.mjs" "$tmp/one-$fmt" $fmt "$tmp/summary0.csv" "$r0"
	echo "two runs, $fmt"
	"$tt" export --format=$fmt -o "$tmp/two-$fmt" "$tmp/a.zst" "$tmp/b.zst"
	node "$here/export_read.mjs" "$tmp/two-$fmt" $fmt "$tmp/summary0.csv" "$r0" "$r1"
done
# One walker, or several each writing row groups of its own: the same rows.
REC_OUTPUT="$tmp/an.zst" "$prog_annots"
# A TSC clock (not 1 ns a tick): the rounding chains give the same rows too.
EX_GEN_TSC=1 "$gen" "$tmp/tsc.zst" 4400 1700000000000000000 5000 3000
for set in "a.zst b.zst" "an.zst" "tsc.zst"; do
	files=
	for f in $set; do files="$files $tmp/$f"; done
	TRACETOOL_THREADS=1 "$tt" export -o "$tmp/w1" $files
	for w in 2 3; do
		echo "$set: $w walkers against 1"
		TRACETOOL_THREADS=$w "$tt" export -o "$tmp/w$w" $files
		# Two threads: a row group from each of two walkers (given two CPUs).
		groups=
		[ "$(nproc)" -lt 2 ] || groups=2
		node "$here/export_same.mjs" "$tmp/w1" "$tmp/w$w" $groups
		rm -rf "$tmp/w$w"
	done
	rm -rf "$tmp/w1"
done
# Usage and input errors.
rc=0; "$tt" export "$tmp/a.zst" 2>/dev/null || rc=$?
[ $rc -eq 2 ] || { echo "export without -o: exit $rc, want 2"; exit 1; }
rc=0; "$tt" export --format=xml -o "$tmp/x" "$tmp/a.zst" 2>/dev/null || rc=$?
[ $rc -eq 2 ] || { echo "export --format=xml: exit $rc, want 2"; exit 1; }
printf 'not a trace' >"$tmp/bad.zst"
rc=0; "$tt" export -o "$tmp/bad" "$tmp/a.zst" "$tmp/bad.zst" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || { echo "export of a bad file: exit $rc, want 1"; exit 1; }
grep -q "bad.zst" "$tmp/err" || { echo "no message naming the bad file:"; cat "$tmp/err"; exit 1; }
[ ! -e "$tmp/bad" ] || { echo "a bad input left tables behind"; exit 1; }
echo ok
