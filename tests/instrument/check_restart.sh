#!/bin/sh
# check_restart.sh PROG TRACETOOL - whole-program hooks across rec_stop()/
# rec_start() (prog_restart): the second file has no exit without its enter
# (tracetool check passes it), work's two calls and no error; the first
# holds work once and main and around open (their exits came later).
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
REC_OUTPUT="$dir/one.zst" "$1" "$dir/two.zst"
"$2" check "$dir/two.zst"
"$2" summary --format=csv "$dir/two.zst" > "$dir/two.csv"
field() { # field FILE FUNCTION COLUMN (2 = calls, 11 = errors)
	awk -F, -v f="$2" -v c="$3" '$1 == f { print $c; found = 1 } END { if (!found) print 0 }' "$1"
}
test "$(field "$dir/two.csv" work 2)" -eq 2
test "$(awk -F, 'NR > 1' "$dir/two.csv" | wc -l)" -eq 1
test "$(awk -F, 'NR > 1 && $11 != 0' "$dir/two.csv" | wc -l)" -eq 0
"$2" summary --format=csv "$dir/one.zst" > "$dir/one.csv"
test "$(field "$dir/one.csv" work 2)" -eq 1
