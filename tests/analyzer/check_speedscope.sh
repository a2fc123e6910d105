#!/bin/sh
# SPDX-License-Identifier: MIT
# check_speedscope.sh - `tracetool flame`'s folded stacks load in speedscope:
# the example pipeline (threads, nesting, recursion) is recorded, its folded
# stacks checked against flamegraph.pl's line grammar, then imported by
# speedscope's own importer (its web app, in headless Chromium) and read
# back from its Sandwich view: the same functions as `tracetool summary`,
# with its total_ns and self_ns (recursion counted once on both sides), to
# within 1 ns per folded line (each line's value is rounded on its own). Then
# `tracetool chrome` of the same trace (two functions, to stay small) is
# imported by speedscope's trace-event importer: every thread with events is
# listed under its name, from the thread_name metadata chrome writes after
# the events. Last, one worker's nested scopes (process > compute,
# checksum, slow_io: some 30 000) load with none of the importer's warnings:
# no scope ends after its parent or overlaps its next sibling in
# speedscope's arithmetic (complete events: ts + dur in doubles, after
# subtracting the thread's first ts; pairs where ends tie). The recording
# has stack samples too (REC_SAMPLE), so chrome's JSON carries sample events
# and stackFrames, which must not change what speedscope imports; and
# `tracetool pprof` of it, imported by speedscope's pprof importer, lists
# each function of `tracetool profile` with its self and total time (to the
# 10 us speedscope shows). Exit 77 (skipped) without chromium, without
# speedscope in .cache/npm (scripts/speedscope.sh installs it) or without a
# `flame` command in this tracetool.
#   usage: check_speedscope.sh TRACETOOL PIPELINE_EXAMPLE SPEEDSCOPE_DIR
set -eu
tt=${1:?usage: check_speedscope.sh TRACETOOL PIPELINE SPEEDSCOPE_DIR}
prog=${2:?}
app=${3:?}
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "chromium not found: skipped"; exit 77; }
[ -f "$app/index.html" ] || { echo "no speedscope in $app (scripts/speedscope.sh): skipped"; exit 77; }
"$tt" flame --help >/dev/null 2>&1 || { echo "tracetool has no flame command: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# load JS NAME OUT [ERR] [BUDGET]: speedscope's app opens the file a script
# hands it (what its command line does) and headless Chromium dumps the
# Sandwich view to OUT, the app's console to ERR. The import goes on after
# the page has loaded (pprof's is gunzipped and decoded first): on a busy
# machine the dump can come before the table is drawn, as in one CI run where
# the pprof import had started and the table was empty. Such a dump (the
# title, no row) is taken again with twice the virtual time, 3 tries at most;
# what speedscope cannot import still fails below, on the title or the rows.
load() {
	budget=${5:-15000}
	for try in 1 2 3; do
		timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--enable-logging=stderr --v=0 \
			--user-data-dir="$dir/profile-$2-$try" --window-size=1400,3000 \
			--virtual-time-budget="$budget" \
			--dump-dom "file://$app/index.html#localProfilePath=$1&view=sandwich" \
			2>"${4:-/dev/null}" >"$3" || true
		grep -q "<title>$2 - speedscope</title>" "$3" || return 0
		grep -q '%)' "$3" && return 0
		echo "speedscope had drawn no row of $2 after $budget ms of virtual time (try $try)"
		budget=$((budget * 2))
	done
}

REC_SAMPLE=997 REC_OUTPUT=$dir/t.zst "$prog" >/dev/null
"$tt" flame "$dir/t.zst" >"$dir/t.folded"
"$tt" summary --format=csv "$dir/t.zst" >"$dir/summary.csv"
[ -s "$dir/t.folded" ] || fail "no folded stacks"
# flamegraph.pl reads /^(.*)\s+?(\d+(?:\.\d*)?)$/ and skips what does not
# match: every line must match, with no empty frame and a whole number.
if grep -Evq '^[^; ]([^;]*[^; ])?(;[^; ]([^;]*[^; ])?)* [0-9]+$' "$dir/t.folded"; then
	grep -Ev '^[^; ]([^;]*[^; ])?(;[^; ]([^;]*[^; ])?)* [0-9]+$' "$dir/t.folded" | head -3 >&2
	fail "lines outside flamegraph.pl's grammar"
fi

# What speedscope's command line does: a script that hands the file to the app.
printf 'speedscope.loadFileFromBase64("t.folded", "%s")' "$(base64 -w0 "$dir/t.folded")" \
	>"$dir/t.js"
load "$dir/t.js" t.folded "$dir/dom.html"
grep -q '<title>t.folded - speedscope</title>' "$dir/dom.html" || fail "speedscope did not load it"

python3 - "$dir/dom.html" "$dir/summary.csv" "$(wc -l <"$dir/t.folded")" <<'PY' || fail "speedscope's numbers differ from summary's"
import csv, html, re, sys
text = [html.unescape(t).strip() for t in re.split(r'<[^>]*>', open(sys.argv[1]).read())]
text = [t for t in text if t]
# The Sandwich table: after "Symbol Name", rows of "TOTAL (x%)", "SELF (y%)", NAME.
i = text.index('Symbol Name') + 1
seen = {}
num = re.compile(r'^([0-9,]+) \(<?[0-9.]+%\)$')
while i + 2 < len(text) and num.match(text[i]) and num.match(text[i + 1]):
    seen[text[i + 2]] = (int(num.match(text[i]).group(1).replace(',', '')),
                         int(num.match(text[i + 1]).group(1).replace(',', '')))
    i += 3
want = {r['function']: (int(r['total_ns']), int(r['self_ns']))
        for r in csv.DictReader(open(sys.argv[2]))}
lines = int(sys.argv[3])
print('speedscope rows:', len(seen), 'summary rows:', len(want))
assert seen.keys() == want.keys(), (seen, want)
# summary converts each name's summed ticks to ns once; each folded line is
# a path's ticks converted on its own: sums may differ by 1 ns per line.
for name in want:
    for k in range(2):
        assert abs(seen[name][k] - want[name][k]) <= lines, (name, seen[name], want[name])
PY

# chrome's JSON: thread names come from M events written after the events.
"$tt" chrome --function='^(produce|process)$' "$dir/t.zst" -o "$dir/t.json"
printf 'speedscope.loadFileFromBase64("t.json", "%s")' "$(base64 -w0 "$dir/t.json")" >"$dir/c.js"
load "$dir/c.js" t.json "$dir/cdom.html"
grep -q '<title>t.json - speedscope</title>' "$dir/cdom.html" || fail "speedscope did not load chrome's JSON"
python3 - "$dir/cdom.html" "$dir/t.json" <<'PY' || fail "speedscope does not list chrome's threads by name"
import html, json, re, sys
text = html.unescape(re.sub(r'<[^>]*>', '\n', open(sys.argv[1]).read()))
ev = json.load(open(sys.argv[2]))['traceEvents']
names = {e['tid']: e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'}
busy = {e['tid'] for e in ev if e['ph'] in 'BX'}
want = {names[t] for t in busy}
print('threads with events:', sorted(want))
assert len(want) >= 2, want
for n in want:
    assert re.search(r'\), %s \(tid \d+\)' % re.escape(n), text), n
PY

"$tt" chrome --thread=worker-1 --function='^(process|compute|checksum|slow_io)$' "$dir/t.zst" \
	-o "$dir/w.json"
grep -q '"ph":"X"' "$dir/w.json" || fail "no complete event in chrome's JSON"
printf 'speedscope.loadFileFromBase64("w.json", "%s")' "$(base64 -w0 "$dir/w.json")" >"$dir/w.js"
load "$dir/w.js" w.json "$dir/wdom.html" "$dir/console.txt" 30000
grep -q '<title>w.json - speedscope</title>' "$dir/wdom.html" || fail "speedscope did not load chrome's window"
grep -q 'Importing as Trace Event Format' "$dir/console.txt" ||
	fail "no console log from speedscope's importer"
# speedscope's trace-event importer warns on a scope that does not nest.
if grep -E 'Doing nothing instead|stack was empty|still open at end' "$dir/console.txt" >"$dir/bad.txt"; then
	head -3 "$dir/bad.txt" >&2
	fail "speedscope found $(wc -l <"$dir/bad.txt") scope(s) of chrome's JSON that do not nest"
fi
# pprof's profile.proto of the samples, through speedscope's pprof importer.
"$tt" pprof -o "$dir/cpu.pb.gz" "$dir/t.zst"
"$tt" profile --format=csv "$dir/t.zst" >"$dir/profile.csv"
printf 'speedscope.loadFileFromBase64("cpu.pb.gz", "%s")' "$(base64 -w0 "$dir/cpu.pb.gz")" \
	>"$dir/p.js"
load "$dir/p.js" cpu.pb.gz "$dir/pdom.html" "$dir/pconsole.txt"
grep -q '<title>cpu.pb.gz - speedscope</title>' "$dir/pdom.html" || fail "speedscope did not load pprof's file"
grep -q 'Importing as protobuf encoded pprof file' "$dir/pconsole.txt" ||
	fail "speedscope did not take pprof's file for pprof"
python3 - "$dir/pdom.html" "$dir/profile.csv" <<'PY' || fail "speedscope's pprof numbers differ from profile's"
import csv, html, re, sys
text = [html.unescape(t).strip() for t in re.split(r'<[^>]*>', open(sys.argv[1]).read())]
text = [t for t in text if t]
i = text.index('Symbol Name') + 1
units = {'ns': 1e-6, 'µs': 1e-3, 'ms': 1.0, 's': 1e3}
num = re.compile(r'^([0-9.]+)(ns|µs|ms|s) \(<?[0-9.]+%\)$')
def ms(t):
    m = num.match(t)
    return float(m.group(1)) * units[m.group(2)]
seen = {}
while i + 2 < len(text) and num.match(text[i]) and num.match(text[i + 1]):
    seen[text[i + 2]] = (ms(text[i]), ms(text[i + 1]))
    i += 3
if not seen:
    print('no row in speedscope\'s table; it shows:', text[i:i + 6])
rows = list(csv.DictReader(open(sys.argv[2])))
period = int(rows[0]['est_self_ns']) / int(rows[0]['self_samples']) if rows else 0
# A frame tracetool cannot name is profile's "[module: reason]" row and an
# address-only Location in pprof (tracetool(1)), which speedscope leaves out
# or shows as an address: the other rows match within those samples' time.
def unnamed(f):
    return (f.startswith('[') and f.endswith(']')) or re.match(r'^0x[0-9a-f]+$', f)
slack = sum(int(r['est_self_ns']) for r in rows if unnamed(r['function'])) / 1e6
want = {r['function']: (int(r['total_samples']) * period / 1e6, int(r['est_self_ns']) / 1e6)
        for r in rows if not unnamed(r['function'])}
seen = {f: v for f, v in seen.items() if not unnamed(f)}
print('speedscope functions:', len(seen), 'profile rows:', len(want), 'unnamed ms:', slack)
assert want and seen.keys() == want.keys(), (sorted(seen), sorted(want))
for name in want:
    for k in range(2):
        # speedscope shows 2 decimals of its unit (ms here): 5 us of rounding
        assert abs(seen[name][k] - want[name][k]) <= 0.006 + 0.0005 * want[name][k] + slack, \
            (name, seen[name], want[name])
PY
echo ok
