#!/bin/sh
# SPDX-License-Identifier: MIT
# check_progress.sh TRACETOOL TRACE - tracetool(1), PROGRESS: the progress line shows on
# stderr when it is a terminal, never in a pipe or a file, and --quiet (the
# command's, or tracetool's own before the command) turns it off. A terminal
# comes from util-linux's script(1). TRACETOOL_PROGRESS_MS=0 shows it from the
# first frame (the default waits a second, longer than this small trace
# takes), so the test does not depend on the machine's speed; 3600000 (an
# hour) shows that nothing is drawn before the delay.
set -eu
tt=$1 trace=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_progress: $*"; echo "0 passed, 1 failed"; exit 1; }
command -v script >/dev/null || { echo "script(1) missing: skipped"; exit 77; }
esc=$(printf '\033')
line="tracetool: reading the trace: "

# on_tty NAME CMD...: runs CMD on a terminal, its output in $tmp/NAME.
on_tty() {
	name=$1
	shift
	script -qec "$*" /dev/null </dev/null >"$tmp/$name" 2>&1 || true
}

TRACETOOL_PROGRESS_MS=0 on_tty summary "$tt" summary "$trace"
grep -q "$line[0-9]*% (" "$tmp/summary" || fail "no progress line on a terminal: $(cat "$tmp/summary")"
# Erased (CR, erase to end of line) before the report starts.
tr -d '\n' <"$tmp/summary" | grep -q "$esc\[K$(printf '\r')$esc\[Kfunction" ||
	fail "the progress line is not erased before the report"
for cmd in histogram info check "chrome -o $tmp/out.json"; do
	TRACETOOL_PROGRESS_MS=0 on_tty c "$tt" $cmd "$trace"
	grep -q "$line" "$tmp/c" || fail "no progress line for $cmd on a terminal"
	TRACETOOL_PROGRESS_MS=0 on_tty c "$tt" $cmd --quiet "$trace"
	grep -q "$line" "$tmp/c" && fail "$cmd --quiet shows progress"
	TRACETOOL_PROGRESS_MS=0 on_tty c "$tt" -q $cmd "$trace"
	grep -q "$line" "$tmp/c" && fail "tracetool -q $cmd shows progress"
done
TRACETOOL_PROGRESS_MS=0 on_tty c "$tt" summary -q "$trace"
grep -q "$line" "$tmp/c" && fail "summary -q shows progress"

# chrome writing JSON to the terminal (-o -): no line in the middle of it.
TRACETOOL_PROGRESS_MS=0 on_tty c "$tt" chrome -o - "$trace"
grep -q traceEvents "$tmp/c" || fail "chrome wrote no JSON to the terminal"
tr -d '\n' <"$tmp/c" | sed 's/.*traceEvents//' | grep -q "$line" &&
	fail "chrome to a terminal shows progress inside its JSON"

# Not before the delay.
TRACETOOL_PROGRESS_MS=3600000 on_tty c "$tt" summary "$trace"
grep -q '^function' "$tmp/c" || fail "summary printed no table"
grep -q "$line" "$tmp/c" && fail "progress shown before its delay"

# Never in a pipe or a file, stdout on a terminal or not.
TRACETOOL_PROGRESS_MS=0 "$tt" summary "$trace" 2>"$tmp/err" | cat >/dev/null
[ ! -s "$tmp/err" ] || fail "stderr to a file got: $(cat "$tmp/err")"
TRACETOOL_PROGRESS_MS=0 on_tty c "$tt" summary "$trace" "2>$tmp/err2"
[ ! -s "$tmp/err2" ] || fail "stderr to a file (stdout a terminal) got: $(cat "$tmp/err2")"
TRACETOOL_PROGRESS_MS=0 on_tty c "$tt" summary "$trace" "2>&1 | cat"
grep -q "$line" "$tmp/c" && fail "progress shown in a pipe"
echo "1 passed, 0 failed"
