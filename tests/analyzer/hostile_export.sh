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
fail=0
run() { # CASE_NAME
	for cmd in "export -o $tmp/pq" "export --format=csv -o $tmp/csv" "perfetto -o $tmp/out.pftrace"; do
		rm -rf "$tmp/pq" "$tmp/csv" "$tmp/out.pftrace"
		# shellcheck disable=SC2086
		timeout 60 "$tt" $cmd "$tmp/bad.zst" >/dev/null 2>"$tmp/err"
		rc=$?
		if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
			echo "$1: tracetool $cmd: exit $rc"; head -3 "$tmp/err"; fail=1
		elif [ $rc -eq 1 ] && ! grep -q "bad.zst\|$tmp" "$tmp/err"; then
			echo "$1: tracetool $cmd: exit 1 without naming the file"; head -3 "$tmp/err"; fail=1
		fi
	done
}
i=0
while [ $i -lt 60 ]; do
	cut=$(( (size * i) / 60 + i % 7 ))
	head -c "$cut" "$tmp/base.zst" >"$tmp/bad.zst"
	run "cut at $cut"
	i=$((i + 1))
done
i=0
while [ $i -lt 60 ]; do
	off=$(( (size * i * 7919 / 60) % size ))
	cp "$tmp/base.zst" "$tmp/bad.zst"
	bit=$(( 1 << (i % 8) ))
	python3 -c "import sys; f=open(sys.argv[1],'r+b'); f.seek($off); b=f.read(1); f.seek($off); f.write(bytes([b[0]^$bit]))" "$tmp/bad.zst"
	run "flip bit $bit at $off"
	if [ $i -lt 20 ] && command -v protoc >/dev/null && [ -s "$tmp/out.pftrace" ]; then
		protoc --decode=perfetto.protos.Trace -I "$here" "$here/perfetto_min.proto" \
			<"$tmp/out.pftrace" >/dev/null || { echo "flip at $off: perfetto output does not decode"; fail=1; }
	fi
	i=$((i + 1))
done
[ $fail -eq 0 ] && echo "ok: 120 damaged files, 3 commands each"
exit $fail
