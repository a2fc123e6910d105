#!/bin/sh
# SPDX-License-Identifier: MIT
# npm-clients.sh - installs the independent Parquet readers that the export
# tests read our files back with, at pinned versions, into a cache directory
# (default: .cache/npm at the top of the source tree; override with
# REC_NPM_CACHE). Prints the directory that holds node_modules on success;
# exits 77 (meson's "skipped") when npm is missing or the network is down, so
# a machine without them skips the readers' checks instead of failing them.
#   @duckdb/node-api       DuckDB, the reader users query exports with
#   hyparquet(+compressors) a second reader written from the spec in JavaScript
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${REC_NPM_CACHE:-$top/.cache/npm}
pkgs="@duckdb/node-api@1.5.6-r.1 hyparquet@1.31.5 hyparquet-compressors@1.1.2"
stamp="$dir/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkgs" ]; then
	echo "$dir"
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "npm-clients.sh: npm not found" >&2; exit 77; }
mkdir -p "$dir" || exit 77
lock="$dir/.lock"
# Several tests may ask at once: one installs, the others wait for it.
exec 9>"$lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkgs" ]; then
	echo "$dir"
	exit 0
fi
[ -f "$dir/package.json" ] || echo '{"name":"rec-test-clients","private":true}' >"$dir/package.json"
# shellcheck disable=SC2086
if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error $pkgs) >&2; then
	echo "npm-clients.sh: cannot install $pkgs (no network?)" >&2
	exit 77
fi
echo "$pkgs" >"$stamp"
echo "$dir"
