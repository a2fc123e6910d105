#!/bin/sh
# SPDX-License-Identifier: MIT
# check_flamesvg_browser.sh - the SVG flame graph (analyzer/out/flamesvg.c) in a
# real browser, headless Chromium: the file is well-formed XML, the
# screenshot is not blank and shows the frames' colours, and the inline
# script runs: ?s=REGEX highlights exactly the matching frames and prints
# the share they cover (nested matches counted once), ?z=REGEX zooms so
# that only the zoomed frame's ancestors and descendants stay visible.
# Exit 77 (skipped) when chromium is not installed.
#   usage: check_flamesvg_browser.sh FLAMESVG_DRIVER
set -eu
driver=${1:?usage: check_flamesvg_browser.sh FLAMESVG_DRIVER}
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	echo "chromium not found: skipped"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

cat >"$dir/in.folded" <<'STACKS'
main;parse;lex 3000000 300
main;parse 1000000 100
main;solve;fib;fib;fib 2000000 50
main;solve 4000000 10
main;emit 500000 40
main 100000 1
worker;<tag>&"quote" 700000 7
STACKS
"$driver" "$dir/in.folded" ns "test flame graph" >"$dir/f.svg"

# Chromium as root needs --no-sandbox; a fresh profile keeps runs apart.
run_chromium() {
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$dir/profile" "$@" 2>/dev/null
}

python3 - "$dir/f.svg" <<'PY' || fail "not well-formed XML"
import sys, xml.etree.ElementTree as ET
ET.parse(sys.argv[1])
PY

run_chromium --window-size=1200,260 --screenshot="$dir/f.png" "file://$dir/f.svg" >/dev/null
[ -s "$dir/f.png" ] || fail "no screenshot"
# Decode the PNG (8-bit RGB/RGBA, any filter) and count the pixels of the
# frames' colours: solve's rgb(249,65,23) covers 626 x 15 px.
python3 - "$dir/f.png" <<'PY' || fail "blank or wrong screenshot"
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
count = {}
for line in rows:
    for x in range(w):
        px = tuple(line[x * bpp:x * bpp + 3])
        count[px] = count.get(px, 0) + 1
solve = count.get((249, 65, 23), 0)
print('colours', len(count), 'solve px', solve)
assert len(count) > 20, 'blank picture'
assert 0.8 * 626 * 15 <= solve <= 1.2 * 626 * 15, solve
PY

dom=$(run_chromium --dump-dom "file://$dir/f.svg?s=%5Efib%24")
echo "$dom" | grep -q 'data-matches="3"' || fail "search ^fib\$ did not highlight 3 frames"
[ "$(echo "$dom" | grep -o 'data-hl="1"' | wc -l)" -eq 3 ] || fail "highlighted frames"
echo "$dom" | grep -q 'Matched: 17.7%' || fail "matched share (2 ms of 11.3 ms, nested once)"
dom=$(run_chromium --dump-dom "file://$dir/f.svg?s=o")
echo "$dom" | grep -q "Matched: 59.3%" || fail "search o: solve, worker and <tag> in it: 6.7 of 11.3 ms"

dom=$(run_chromium --dump-dom "file://$dir/f.svg?z=%5Eparse%24")
echo "$dom" | grep -q 'data-zoom="parse"' || fail "zoom did not run"
# Visible after zooming into parse: all, main (ancestors), parse, lex.
[ "$(echo "$dom" | grep '<g class="f' | grep -vc 'display: none')" -eq 4 ] ||
	fail "zoom shows other frames than parse's ancestors and descendants"
echo "$dom" | grep '<title>lex (' | grep -q 'width="885.0"' ||
	fail "lex is not 3/4 of the zoomed width"
echo "ok"
