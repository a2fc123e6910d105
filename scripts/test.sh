#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, command 2: install what is missing, build (warnings are
# errors) and run every test with meson test. CC=clang builds with clang.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deps.sh"
rec_install_deps
build=${BUILD_DIR:-$top/build-test-$(basename "${CC:-cc}")}
rm -rf "$build"
meson setup "$build" "$top" --werror "$@" >/dev/null
ninja -C "$build"
meson test -C "$build" --print-errorlogs
