#!/bin/sh
# SPDX-License-Identifier: MIT
# check_quick_start.sh SOURCE_ROOT BUILD_ROOT - Quick start command 1
# (scripts/run-example.sh, README "Quick start") on this build: one line per
# step, the example's recording left as ./trace.zst (a clean, complete
# file), its summary, and at the end the next three commands with
# tracetool's real path, each of which then runs (exit 0). The dependency
# step is skipped (REC_SKIP_DEPS: no apt-get from a test).
set -eu
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp"
# REC_OVERFLOW=block: every scope recorded however busy the machine is, so
# the summary's counts are exact (at the default, a loaded machine drops).
REC_OVERFLOW=block REC_SKIP_DEPS=1 BUILD_DIR="$build" "$src/scripts/run-example.sh" >out.txt 2>&1 ||
	{ cat out.txt; fail "exit $?"; }
tt="$build/analyzer/tracetool"
want_steps="[1/4] dependencies: not checked (REC_SKIP_DEPS)
[2/4] configure: $build is configured already
[3/4] build: librec, tracetool and the examples (ninja -C $build)
[4/4] run: $build/examples/pipeline, recording to $tmp/trace.zst"
[ "$(grep '^\[[1-4]/4\] [a-z]*:' out.txt)" = "$want_steps" ] ||
	fail "steps: $(grep '^\[[1-4]/4\]' out.txt)"
[ -f trace.zst ] || fail "no trace.zst in the current directory"
"$tt" check trace.zst >/dev/null || fail "trace.zst does not pass tracetool check"
grep -q '^function  *calls  *total' out.txt || fail "no summary table"
grep -q '^9 of 9 scope names, 3360204 calls, 0 errors' out.txt || fail "summary: $(grep 'scope names' out.txt)"
# The last three lines: commands with tracetool's real path; each runs.
tail -n 3 out.txt >next.txt
[ "$(grep -c "^  $tt [a-z]* trace.zst" next.txt)" = 3 ] || fail "next commands: $(cat next.txt)"
while read -r line; do
	cmd=${line%%#*}
	sh -c "$cmd" >/dev/null 2>cmd.err || fail "'$cmd' failed: $(cat cmd.err)"
done <next.txt
[ -s trace.json ] || fail "the chrome command left no trace.json"
echo ok
