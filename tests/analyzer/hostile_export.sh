#!/bin/sh
# SPDX-License-Identifier: MIT
# hostile_export.sh TRACETOOL EX_GEN - export (Parquet and CSV) and perfetto
# on damaged copies of a multi-frame recording: cut at 60 offsets spread over
# the file and 60 single-bit flips. Each run must exit 0 (analysed, maybe
# with a warning) or 1 (a one-line message naming the file), never crash,
# hang or exit otherwise; on exit 0 a perfetto file must still decode with
# protoc when protoc is present. Complements tests/analyzer/test_sweep.c,
# which runs the report commands in-process.
set -u
tt=$1
gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
"$gen" "$tmp/base.zst" 4242 1700000000000000000 30000 20000 || exit 1
size=$(stat -c %s "$tmp/base.zst")
# Two cases at a time (this machine's cores), each in its own directory; a
# failing case leaves its message in $tmp/failed.
run() { # CASE_NAME DIR
	for cmd in "export -o $2/pq" "export --format=csv -o $2/csv" "perfetto -o $2/out.pftrace"; do
		rm -rf "$2/pq" "$2/csv" "$2/out.pftrace"
		# shellcheck disable=SC2086
		timeout 60 "$tt" $cmd "$2/bad.zst" >/dev/null 2>"$2/err"
		rc=$?
		if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
			{ echo "$1: tracetool $cmd: exit $rc"; head -3 "$2/err"; } >>"$2/failed"
		elif [ $rc -eq 1 ] && ! grep -q "bad.zst\|$2" "$2/err"; then
			{ echo "$1: tracetool $cmd: exit 1 without naming the file"; head -3 "$2/err"; } >>"$2/failed"
		fi
	done
}
one_case() { # I: 0-59 a cut, 60-119 a bit flip
	d=$tmp/case$1
	mkdir "$d"
	if [ "$1" -lt 60 ]; then
		i=$1
		cut=$(( (size * i) / 60 + i % 7 ))
		head -c "$cut" "$tmp/base.zst" >"$d/bad.zst"
		run "cut at $cut" "$d"
	else
		i=$(( $1 - 60 ))
		off=$(( (size * i * 7919 / 60) % size ))
		cp "$tmp/base.zst" "$d/bad.zst"
		bit=$(( 1 << (i % 8) ))
		python3 -c "import sys; f=open(sys.argv[1],'r+b'); f.seek($off); b=f.read(1); f.seek($off); f.write(bytes([b[0]^$bit]))" "$d/bad.zst"
		run "flip bit $bit at $off" "$d"
		if [ $i -lt 20 ] && command -v protoc >/dev/null && [ -s "$d/out.pftrace" ]; then
			protoc --decode=perfetto.protos.Trace -I "$here" "$here/perfetto_min.proto" \
				<"$d/out.pftrace" >/dev/null ||
				echo "flip at $off: perfetto output does not decode" >>"$d/failed"
		fi
	fi
	[ -e "$d/failed" ] && cat "$d/failed" >>"$tmp/failed"
	rm -rf "$d"
}
n=0
while [ $n -lt 120 ]; do
	one_case $n &
	one_case $((n + 1))
	wait
	n=$((n + 2))
done
if [ -e "$tmp/failed" ]; then
	cat "$tmp/failed"
	exit 1
fi
echo "ok: 120 damaged files, 3 commands each"
