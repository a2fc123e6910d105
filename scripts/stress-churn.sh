#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/stress-churn.sh [BUILD_DIR] - issue 11, item 6, the long version of
# the churn_memory_bound test: 8 threads tracing flat out, each replaced
# every CHURN_LIFE_MS (default 20 ms), for CHURN_MS (default 30 s) with
# rings of up to REC_BUFFER (default 16 MiB), three ways: plain; with HOGS
# CPU-bound processes (default 2, one per core here); and with the writer
# starved (SCHED_IDLE) on top. Each run prints the peak RSS above the RSS at
# start against README's bound (REC_MEMORY, default 256 MiB, + slack), and
# the drops; exits 1 if any run broke the bound or lost a scope uncounted.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
churn=$build/tests/librec/churn
[ -x "$churn" ] || { echo "stress-churn: build first: ninja -C $build" >&2; exit 2; }
export CHURN_MS=${CHURN_MS:-30000} CHURN_LIFE_MS=${CHURN_LIFE_MS:-20} REC_BUFFER=${REC_BUFFER:-16M}
hogs=${HOGS:-2}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
failed=0
run() { # LABEL STARVE
	echo "== $1"
	REC_OUTPUT=$tmp/churn.zst CHURN_STARVE=$2 "$churn" >"$tmp/out" || failed=1
	head -n 1 "$tmp/out"
}
run "plain" 0
for _ in $(seq "$hogs"); do (while :; do :; done) & pids+=($!); done
run "$hogs CPU hogs" 0
run "$hogs CPU hogs, writer SCHED_IDLE" 1
exit $failed
