#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, command 1: install what is missing, build, run the example
# pipeline (a multi-threaded program instrumented with TRACE_SCOPE, two value
# tracks, an argument and a flow) and print `tracetool summary`, `values` and
# `flows` of the trace it wrote.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deps.sh"
rec_install_deps
build=${BUILD_DIR:-$top/build}
[ -f "$build/build.ninja" ] || meson setup "$build" "$top" >/dev/null
ninja -C "$build" >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
REC_OUTPUT="$out/trace.zst" "$build/examples/pipeline"
echo
"$build/analyzer/tracetool" summary "$out/trace.zst"
echo
"$build/analyzer/tracetool" values "$out/trace.zst"
echo
"$build/analyzer/tracetool" flows "$out/trace.zst"
