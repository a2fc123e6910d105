#!/bin/sh
# SPDX-License-Identifier: MIT
# perfetto.sh PF_GEN - analyzer/out/perfetto.c decoded by protoc (an independent
# decoder) with tests/analyzer/perfetto_min.proto: slice counts per thread
# track, names through the interning, nesting, absolute times rebuilt from
# the incremental clock, process and counter tracks. Exit 77 (skipped) only
# when protoc is missing (scripts/deps.sh installs protobuf-compiler).
set -eu
gen=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v protoc >/dev/null || { echo "protoc not found (apt-get install protobuf-compiler)" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 1 1000; do
	"$gen" "$tmp/t.pftrace" "$n" >/dev/null
	python3 "$here/perfetto_check.py" "$here/perfetto_min.proto" "$tmp/t.pftrace" >"$tmp/got.json"
	python3 - "$tmp/got.json" "$n" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
base = 1700000000000000000
last = base + 5 + n * 70201 + 3
x = 'x' * 300
def th(tid, name):
    return {'pid': 100, 'tid': tid, 'name': name, 'begin': 3 * n + 1, 'end': 3 * n + 1,
            'names': {'outer': n, 'inner': 2 * n, x: 1}, 'max_depth': 2,
            'first_ns': base + 5, 'last_ns': last, 'instants': 1}
want = {'threads': [th(100, 'main'), th(101, None)],
        'processes': [{'pid': 100, 'name': 'prog'}],
        'counter_tracks': ['queue'], 'counter_samples': 5,
        'packets': 6 + 2 * (6 * n + 3) + 5}
if got != want:
    print('got  ', json.dumps(got, sort_keys=True)[:2000])
    print('want ', json.dumps(want, sort_keys=True)[:2000])
    sys.exit(1)
print('n=%d: ok' % n)
PY
done
