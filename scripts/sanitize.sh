#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/sanitize.sh address|thread - the test suite under ASan+UBSan
# (any report fails the test) or under TSan. Criterion cannot run under TSan
# (Snaipe/Criterion#274), so the TSan build runs the plain-program tests that
# exercise librec's threads: the stress test (8 threads, churn, flushes, both
# overflow modes) and the example pipeline.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
address) san=address,undefined ;;
thread) san=thread ;;
*) echo "usage: $0 address|thread" >&2; exit 2 ;;
esac
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
# Leaks inside the test framework itself (scripts/lsan-suppressions.txt).
export LSAN_OPTIONS=suppressions=$top/scripts/lsan-suppressions.txt:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# A sanitized tracetool runs 3-5x slower: meson's per-test limits doubled.
export REC_MESON_TEST_ARGS="${REC_MESON_TEST_ARGS:-} --timeout-multiplier 2"
BUILD_DIR="$top/build-san-$1" "$top/scripts/test.sh" -Db_sanitize=$san -Db_lundef=false -Dbench=false
