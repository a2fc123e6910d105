#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, command 2: install what is missing, build (warnings are
# errors) and run every test with meson test. CC=clang builds with clang,
# and then also builds the libFuzzer targets and runs each for a fixed number
# of inputs (-Dfuzz=true; pass -Dfuzz=false to skip).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deps.sh"
# REC_BROWSER_TESTS=1: chromium and speedscope too, for the browser tests (README).
rec_install_deps ${REC_BROWSER_TESTS:+chromium npm}
[ -z "${REC_BROWSER_TESTS:-}" ] || "$top/scripts/speedscope.sh" >/dev/null
build=${BUILD_DIR:-$top/build-test-$(basename "${CC:-cc}")}
opts=()
case "${CC:-}" in *clang*) case " $* " in *" -Dfuzz="*) ;; *) opts+=(-Dfuzz=true) ;; esac ;; esac
rm -rf "$build"
meson setup "$build" "$top" --werror "${opts[@]}" "$@" >/dev/null
ninja -C "$build"
meson test -C "$build" --print-errorlogs
