#!/bin/sh
# check_sigfork.sh PROG TRACETOOL [nofork] - whole-program hooks in a signal handler
# and across fork (prog_sigfork): every activation is a call or a counted
# drop, nothing is mismatched, and a child forked with %p in REC_OUTPUT
# records its own functions to its own file. A plain program, so TSan
# watches it too.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rounds=200000
# nofork (the TSan build): TSan cannot follow the child of a threaded
# process that starts threads of its own (librec's writer, with %p).
REC_OUTPUT="$dir/t-%p.zst" "$1" "$rounds" ${3:-} > "$dir/out.txt"
read -r _ parent _ child _ handled < "$dir/out.txt"
test "$handled" -gt 0
field() { # field FILE FUNCTION COLUMN (2 = calls, 11 = errors)
	awk -F, -v f="$2" -v c="$3" '$1 == f { print $c; found = 1 } END { if (!found) print 0 }' "$1"
}
"$2" summary --format=csv "$dir/t-$parent.zst" > "$dir/parent.csv"
"$2" info --format=json "$dir/t-$parent.zst" > "$dir/parent.json"
# The main thread's own calls are never dropped.
test "$(field "$dir/parent.csv" work 2)" -eq "$rounds"
test "$(field "$dir/parent.csv" leaf 2)" -eq "$rounds"
# The handler's calls: recorded, or dropped and counted (a signal that lands
# inside a probe's few instructions), never lost and never mismatched.
# The file's total comes first; the threads' own counts follow it.
dropped=$(grep -o '"dropped":[0-9]*' "$dir/parent.json" | head -n 1 | cut -d: -f2)
sig=$(($(field "$dir/parent.csv" on_signal 2) + $(field "$dir/parent.csv" sig_leaf 2)))
test $((sig + dropped)) -eq $((2 * handled))
test "$(awk -F, 'NR > 1 && $11 != 0' "$dir/parent.csv" | wc -l)" -eq 0
test "$(field "$dir/parent.csv" child_work 2)" -eq 0
"$2" check "$dir/t-$parent.zst"
# The child: its own file, its own functions, exact.
if [ "$child" -ne 0 ]; then
	"$2" summary --format=csv "$dir/t-$child.zst" > "$dir/child.csv"
	test "$(field "$dir/child.csv" child_work 2)" -eq 7
	test "$(field "$dir/child.csv" work 2)" -eq 0
	"$2" check "$dir/t-$child.zst"
fi
echo "1 passed, 0 failed (handled $handled signals, $dropped dropped)"
