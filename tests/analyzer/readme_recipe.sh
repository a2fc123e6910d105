#!/bin/sh
# SPDX-License-Identifier: MIT
# readme_recipe.sh TRACETOOL EX_GEN README - runs the README's "Beyond one
# machine" recipe as written: the export command on two recordings of known
# shape, then the SQL of its duckdb -c "..." line through DuckDB
# (@duckdb/node-api, scripts/npm-clients.sh; the duckdb CLI is not a
# Debian package), and checks the result: one row per run, p99 of parse =
# 300 ns. Exit 77 (skipped) only when DuckDB cannot be installed.
set -eu
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
tt=$(abs "$1")
gen=$(abs "$2")
readme=$(abs "$3")
here=$(cd "$(dirname "$0")" && pwd)
REC_NPM_DIR=$("$here/../../scripts/npm-clients.sh") || exit $?
export REC_NPM_DIR
command -v node >/dev/null || { echo "node not found" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The recipe block: from the marker to the end of the code fence.
sed -n '/<!-- recipe:duckdb/,/^```$/p' "$readme" | sed '1,2d;$d' >"$tmp/recipe.sh"
grep -q '^tracetool export -o runs trace-\*.zst$' "$tmp/recipe.sh" ||
	{ echo "README recipe changed shape:"; cat "$tmp/recipe.sh"; exit 1; }
sed -n '/^duckdb -c "/,/"$/p' "$tmp/recipe.sh" | sed '1s/^duckdb -c "//;$s/"$//' >"$tmp/query.sql"
[ -s "$tmp/query.sql" ] || { echo "no duckdb query in the README recipe"; exit 1; }
cd "$tmp"
"$gen" trace-4242.zst 4242 1700000000000000000 500 200
"$gen" trace-4300.zst 4300 1700000000000500000 20 3
# The export line, with tracetool from the build and the shell's glob.
eval "$(sed -n 's|^tracetool |"$tt" |p' recipe.sh)"
cat >check.mjs <<'JS'
import fs from 'node:fs';
import { duck, eq, done } from 'HERE/pqlib.mjs';
const db = await duck();
const rows = await db.all(fs.readFileSync('query.sql', 'utf8'));
eq('recipe rows', rows.map((r) => [Number(r.run_id), Number(r.pid), Number(r.p99_ns)]),
	[[0, 4242, 300], [1, 4300, 300]]);
done();
JS
sed -i "s|HERE|$here|" check.mjs
node check.mjs
