#!/bin/sh
# check_valgrind.sh PROG... - each instrumented program runs under valgrind's
# memcheck with no memory error and no definite or indirect leak at exit:
# librec frees what it allocated once the file is finished. Skipped (77)
# where valgrind is not installed.
set -eu
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
for prog in "$@"; do
	if ! REC_OUTPUT="$tmp/t.zst" valgrind -q --error-exitcode=99 --leak-check=full \
		--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
		"$prog" >"$tmp/out" 2>"$tmp/err"; then
		cat "$tmp/err"
		echo "$passed passed, 1 failed"
		exit 1
	fi
	passed=$((passed + 1))
done
echo "$passed passed, 0 failed"
