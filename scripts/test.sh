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
# Debian's npm only where no npm is installed: it conflicts with a Node.js
# that did not come from Debian's packages.
extra=()
if [ -n "${REC_BROWSER_TESTS:-}" ]; then
	extra+=(chromium)
	command -v npm >/dev/null 2>&1 || extra+=(npm)
fi
rec_install_deps "${extra[@]}"
if [ -n "${REC_BROWSER_TESTS:-}" ]; then
	"$top/scripts/speedscope.sh" >/dev/null ||
		echo "speedscope could not be fetched: its test will skip"
fi
build=${BUILD_DIR:-$top/build-test-$(basename "${CC:-cc}")}
opts=()
case "${CC:-}" in *clang*) case " $* " in *" -Dfuzz="*) ;; *) opts+=(-Dfuzz=true) ;; esac ;; esac
rm -rf "$build"
meson setup "$build" "$top" --werror "${opts[@]}" "$@" >/dev/null
ninja -C "$build"
# REC_MESON_TEST_ARGS: more arguments to meson test (.ci/run: --no-suite browser
# with clang, the browser tests having run with gcc).
# shellcheck disable=SC2086
meson test -C "$build" --print-errorlogs ${REC_MESON_TEST_ARGS:-}
