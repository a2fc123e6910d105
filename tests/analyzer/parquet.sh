#!/bin/sh
# SPDX-License-Identifier: MIT
# parquet.sh PQ_GEN - analyzer/out/parquet.c read back by two independent readers
# (DuckDB and hyparquet, installed by scripts/npm-clients.sh): every value of
# files with one and with many row groups and pages, nulls, booleans, UTF-8
# dictionaries and the footer's statistics. Exit 77 (skipped) only when the
# readers cannot be installed.
set -eu
gen=$1
here=$(cd "$(dirname "$0")" && pwd)
REC_NPM_DIR=$("$here/../../scripts/npm-clients.sh") || exit $?
export REC_NPM_DIR
command -v node >/dev/null || { echo "node not found" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# rows, row-group rows, page rows: one page; pages split inside row groups
# at odd sizes; a single row; many small row groups; no row at all.
for shape in "1000 1048576 65536" "250007 100000 30001" "1 10 10" "5000 512 100" "0 10 10"; do
	set -- $shape
	"$gen" "$tmp/t.parquet" "$1" "$2" "$3" >/dev/null
	echo "shape: $shape"
	node "$here/pq_read.mjs" "$tmp/t.parquet" "$1" "$2" "$3"
done
# tt_pq_int_row (a whole row in one call) writes the same bytes as the
# per-value calls, over the same shapes; so does it with the writer's
# encoding thread (tt_pq_opts.encode_thread: pages encoded while the next
# fills, row groups written by that thread).
for shape in "1000 1048576 65536" "250007 100000 30001" "1 10 10" "5000 512 100" "0 10 10"; do
	set -- $shape
	"$gen" --values "$tmp/v.parquet" "$1" "$2" "$3"
	"$gen" --int-row "$tmp/r.parquet" "$1" "$2" "$3"
	"$gen" --thread "$tmp/th.parquet" "$1" "$2" "$3"
	# the encoder's portable loops, not its AVX2 ones (where the CPU has AVX2)
	TRACETOOL_PORTABLE=1 "$gen" --thread "$tmp/pt.parquet" "$1" "$2" "$3"
	cmp "$tmp/v.parquet" "$tmp/r.parquet" || { echo "int_row differs: $shape" >&2; exit 1; }
	cmp "$tmp/v.parquet" "$tmp/pt.parquet" || { echo "portable differs: $shape" >&2; exit 1; }
	cmp "$tmp/v.parquet" "$tmp/th.parquet" || { echo "thread differs: $shape" >&2; exit 1; }
	# read back: every chunk ZSTD, noise in raw blocks, steps compressed, every value exact
	echo "int table: $shape"
	node "$here/pq_int_read.mjs" "$tmp/r.parquet" "$1"
done
echo "int_row, encode_thread: byte-identical"
