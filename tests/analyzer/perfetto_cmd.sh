#!/bin/sh
# SPDX-License-Identifier: MIT
# perfetto_cmd.sh TRACETOOL EX_GEN - `tracetool perfetto` of one and of two
# recordings of known shape (ex_gen.c), decoded by protoc with
# perfetto_min.proto and replayed by perfetto_check.py: one process track
# per file, thread tracks with their tids and names, slice counts and names
# per thread through the interning, nesting, and both processes on one
# wall-clock timeline. Exit 77 (skipped) only when protoc is missing.
set -eu
tt=$1
gen=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v protoc >/dev/null || { echo "protoc not found (apt-get install protobuf-compiler)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/a.zst" 4242 1700000000000000000 2000 1000
"$gen" "$tmp/b.zst" 4300 1700000000000500000 7 3
"$tt" perfetto -o "$tmp/one.pftrace" "$tmp/a.zst" 2>"$tmp/err1"
"$tt" perfetto -o "$tmp/two.pftrace" "$tmp/a.zst" "$tmp/b.zst" 2>"$tmp/err2"
grep -q "1 activation(s) could not be timed" "$tmp/err1" || { cat "$tmp/err1"; exit 1; }
grep -q "2 activation(s) could not be timed" "$tmp/err2" || { cat "$tmp/err2"; exit 1; }
for case in one two; do
	python3 "$here/perfetto_check.py" "$here/perfetto_min.proto" "$tmp/$case.pftrace" >"$tmp/$case.json"
done
python3 - "$tmp/one.json" "$tmp/two.json" <<'PY'
import json, sys
def run(pid, start, n, m):
    main = {'pid': pid, 'tid': pid, 'name': 'main', 'begin': 3 * n, 'end': 3 * n,
            'names': {'main_loop': n, 'parse': 2 * n}, 'max_depth': 2,
            'first_ns': start, 'last_ns': start + (n - 1) * 2000 + 1000, 'instants': 0}
    # fib trees, then the parse left open: its slice ends at the file's last tick
    # (the last event of either thread)
    other = {'pid': pid, 'tid': pid + 1, 'name': None, 'begin': 3 * m + 1, 'end': 3 * m + 1,
             'names': {'fib': 3 * m, 'parse': 1}, 'max_depth': 3,
             'first_ns': start + 4000, 'instants': 0,
             'last_ns': start + max((n - 1) * 2000 + 1000, 4000 + m * 1000)}
    return [main, other], {'pid': pid, 'name': None}
ok = True
for path, runs in ((sys.argv[1], [(4242, 1700000000000000000, 2000, 1000)]),
                   (sys.argv[2], [(4242, 1700000000000000000, 2000, 1000),
                                  (4300, 1700000000000500000, 7, 3)])):
    got = json.load(open(path))
    threads, procs = [], []
    for r in runs:
        t, p = run(*r)
        threads += t
        procs.append(p)
    want = {'threads': threads, 'processes': procs, 'counter_tracks': [], 'counter_samples': 0}
    got.pop('packets')
    if got != want:
        ok = False
        print('got ', json.dumps(got, sort_keys=True))
        print('want', json.dumps(want, sort_keys=True))
sys.exit(0 if ok else 1)
PY
rc=0; "$tt" perfetto "$tmp/a.zst" 2>/dev/null || rc=$?
[ $rc -eq 2 ] || { echo "perfetto without -o: exit $rc, want 2"; exit 1; }
printf 'not a trace' >"$tmp/bad.zst"
rc=0; "$tt" perfetto -o "$tmp/bad.pftrace" "$tmp/bad.zst" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || { echo "perfetto of a bad file: exit $rc, want 1"; exit 1; }
rc=0; "$tt" perfetto -o "$tmp/a.zst" "$tmp/a.zst" 2>/dev/null || rc=$?
[ $rc -eq 2 ] || { echo "perfetto onto its input: exit $rc, want 2 (wrong usage, as chrome -o)"; exit 1; }
"$tt" info "$tmp/a.zst" >/dev/null || { echo "the input was damaged"; exit 1; }
echo ok
