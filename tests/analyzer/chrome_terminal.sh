#!/bin/sh
# SPDX-License-Identifier: MIT
# chrome_terminal.sh TRACETOOL TRACE - `tracetool chrome` never dumps JSON
# into a terminal: with standard output a terminal (util-linux's script(1))
# and no -o it writes trace.json in the current directory, the same bytes as
# in a pipe, and says so in exactly one line on stderr; `-o -` writes to the
# terminal all the same; in a pipe nothing changes (JSON on stdout, nothing
# on stderr, no file).
set -eu
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
tt=$(abs "$1") trace=$(abs "$2")
command -v script >/dev/null || { echo "script(1) missing: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp"

"$tt" chrome "$trace" >pipe.json 2>pipe.err
[ -s pipe.json ] || fail "no JSON in a pipe"
[ -s pipe.err ] && fail "stderr in a pipe: $(cat pipe.err)"
[ -e trace.json ] && fail "trace.json written in a pipe"

script -qec "'$tt' chrome '$trace'" /dev/null </dev/null >tty.out 2>&1 || fail "exit $? on a terminal"
want="tracetool: wrote trace.json (standard output is a terminal; -o - writes there): open it in https://ui.perfetto.dev"
got=$(tr -d '\r' <tty.out)
[ "$got" = "$want" ] || fail "on a terminal: [$got]"
cmp -s trace.json pipe.json || fail "trace.json differs from the JSON of a pipe"
rm trace.json

script -qec "'$tt' chrome -o - '$trace'" /dev/null </dev/null >tty2.out 2>&1 || fail "-o -: exit $?"
grep -q '^{"traceEvents":\[' tty2.out || fail "-o - wrote no JSON to the terminal"
[ -e trace.json ] && fail "-o - wrote trace.json"
"$tt" chrome -o - "$trace" | cmp -s - pipe.json || fail "-o - in a pipe differs"
echo ok
