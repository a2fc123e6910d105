#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, command 1: install what is missing, build librec, tracetool
# and the example pipeline (a multi-threaded program instrumented with
# TRACE_SCOPE, two value tracks, an argument and a flow), run it, leave its
# recording as ./trace.zst, print `tracetool summary` of it and the next
# commands to try, with tracetool's real path. One line per step (the
# build's own progress as well); the output of a step that fails is shown.
# BUILD_DIR (default: build/ of the source tree) and CC are honoured;
# REC_SKIP_DEPS=1 skips the first step (tests/packaging/check_quick_start.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deps.sh"
build=${BUILD_DIR:-$top/build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ -n "${REC_SKIP_DEPS:-}" ]; then
	echo "[1/4] dependencies: not checked (REC_SKIP_DEPS)"
else
	echo "[1/4] dependencies: the Debian packages of scripts/deps.sh (apt-get installs what is missing)"
	rec_install_deps
fi
if [ -f "$build/build.ninja" ]; then
	echo "[2/4] configure: $build is configured already"
else
	echo "[2/4] configure: meson setup $build"
	meson setup "$build" "$top" >"$log" 2>&1 || { cat "$log"; exit 1; }
fi
echo "[3/4] build: librec, tracetool and the examples (ninja -C $build)"
ninja -C "$build" examples/pipeline examples/hotspot analyzer/tracetool
echo "[4/4] run: $build/examples/pipeline, recording to $PWD/trace.zst"
REC_OUTPUT="$PWD/trace.zst" "$build/examples/pipeline" >"$log" 2>&1 || { cat "$log"; exit 1; }

tt="$build/analyzer/tracetool"
echo
"$tt" summary trace.zst
cat <<EOF

The recording is ./trace.zst. Next, with tracetool at $tt
(or \`export PATH="$build/analyzer:\$PATH"\` and type tracetool, as the README does):

  $tt tree trace.zst                    # the call tree: where each function's time goes
  $tt chrome trace.zst -o trace.json    # a timeline: open trace.json in https://ui.perfetto.dev
  $tt values trace.zst                  # the example's value tracks (TRACE_VALUE)
EOF
