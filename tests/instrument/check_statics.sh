#!/bin/sh
# SPDX-License-Identifier: MIT
# Whole-program mode: two static functions named init in two files of one
# program are two scopes, named by their source files (docs/ANALYZER.md,
# "Names"), with exact calls; --by-site gives the files as a column.
set -eu
prog=$1 tt=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
REC_OUTPUT="$out/t.zst" "$prog" >/dev/null
"$tt" summary --format=csv --sort=name "$out/t.zst" >"$out/s.csv"
grep -q '^init (statics_a\.c),2,' "$out/s.csv" || { cat "$out/s.csv"; echo "FAIL: init of statics_a.c"; exit 1; }
grep -q '^init (statics_b\.c),5,' "$out/s.csv" || { cat "$out/s.csv"; echo "FAIL: init of statics_b.c"; exit 1; }
"$tt" summary --format=csv --by-site --function='^init$' "$out/t.zst" >"$out/site.csv"
grep -q '^init,5,.*,statics_b\.c$' "$out/site.csv" || { cat "$out/site.csv"; echo "FAIL: --by-site"; exit 1; }
[ "$(wc -l <"$out/site.csv")" -eq 3 ] || { cat "$out/site.csv"; echo "FAIL: rows"; exit 1; }
echo "ok: two static init functions, two scopes"
