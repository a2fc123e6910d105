#!/bin/sh
# check_walkers.sh PROG TRACETOOL - a whole-program trace of two threads
# (prog_minns), summarised with one walker and with three: each walker
# names the function sites of its own threads from the program's ELF
# symbols (analyzer/engine/symbols.c, libelf) at the same time as the others, and
# the reports must be the same bytes. A plain program, so ThreadSanitizer
# watches tracetool's walkers too. With REC_CLOCK=monotonic in the
# environment the hooks record through their out-of-line path (hooks.c),
# and the file must say that clock.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
REC_OVERFLOW=block REC_OUTPUT="$dir/t.zst" "$1" 2000
for n in 1 3; do
	TRACETOOL_THREADS=$n "$2" summary --format=csv --by-thread "$dir/t.zst" \
		> "$dir/out$n.csv" 2> "$dir/err$n.txt"
done
cmp "$dir/out1.csv" "$dir/out3.csv"
cmp "$dir/err1.txt" "$dir/err3.txt"
# Real names, exact calls: 2000 rounds of outer() and 3 inner() per round
# on each of the two threads.
grep -q ',outer,2000,' "$dir/out1.csv"
grep -q ',inner,6000,' "$dir/out1.csv"
test "$(grep -c ',outer,2000,' "$dir/out1.csv")" -eq 2
if [ "${REC_CLOCK:-}" = monotonic ]; then
	"$2" info "$dir/t.zst" | grep -q '^clock: *monotonic,'
fi
echo "1 passed, 0 failed"
