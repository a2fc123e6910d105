#!/bin/sh
# SPDX-License-Identifier: MIT
# fork_timeline.sh TRACETOOL PROG_FORK SANITIZED - a fork's parent and child
# (prog_fork.c, REC_OUTPUT=trace-%p.zst) in one perfetto trace and one
# export: two process tracks with their pids and thread names, exact slice
# counts, the child's slices inside the parent's recording on the shared
# wall-clock timeline and after the parent's 20 ms sleep; export's runs
# table with both pids and the child starting later. Exit 77 when protoc is
# missing, or under ASan (forking while librec's writer allocates deadlocks
# ASan's allocator, tests/librec/test_recorder.c).
set -eu
tt=$1
prog=$2
[ "${3:-false}" = true ] && { echo "skipped under sanitizers (fork)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
command -v protoc >/dev/null || { echo "protoc not found" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
REC_OUTPUT="$tmp/trace-%p.zst" "$prog"
set -- "$tmp"/trace-*.zst
[ $# -eq 2 ] || { echo "want 2 trace files, got: $*"; exit 1; }
# The parent's pid is the smaller one only usually: order by first event.
"$tt" perfetto -o "$tmp/both.pftrace" "$1" "$2"
python3 "$here/perfetto_check.py" "$here/perfetto_min.proto" "$tmp/both.pftrace" >"$tmp/both.json"
python3 - "$tmp/both.json" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
th = {t['name']: t for t in got['threads']}
assert set(th) == {'parent', 'child'}, th.keys()
p, c = th['parent'], th['child']
assert p['names'] == {'before_fork': 100, 'parent_work': 300}, p['names']
assert c['names'] == {'child_work': 200}, c['names']
assert p['begin'] == p['end'] == 400 and c['begin'] == c['end'] == 200
assert p['pid'] != c['pid'] and p['tid'] == p['pid'] and c['tid'] == c['pid']
assert sorted(x['pid'] for x in got['processes']) == sorted([p['pid'], c['pid']])
# one timeline: the child ran after the parent's 20 ms sleep, during its recording
assert c['first_ns'] >= p['first_ns'] + 20_000_000, (c['first_ns'] - p['first_ns'])
assert c['first_ns'] <= p['last_ns'] + 5_000_000_000, (c['first_ns'] - p['last_ns'])
print('perfetto: parent %d and child %d on one timeline, child starts %.1f ms later'
      % (p['pid'], c['pid'], (c['first_ns'] - p['first_ns']) / 1e6))
PY
"$tt" export --format=csv -o "$tmp/x" "$1" "$2"
python3 - "$tmp/x" <<'PY'
import csv, sys
d = sys.argv[1]
runs = list(csv.DictReader(open(d + '/runs.csv')))
threads = {(r['run_id'], r['name']): r for r in csv.DictReader(open(d + '/threads.csv'))}
names = {(r['run_id'], r['scope_id']): r['name'] for r in csv.DictReader(open(d + '/scopes.csv'))}
count = {}
for a in csv.DictReader(open(d + '/activations.csv')):
    k = (a['run_id'], names[(a['run_id'], a['scope_id'])])
    count[k] = count.get(k, 0) + 1
assert len(runs) == 2
par = [r for r in runs if ('' + r['run_id'], 'parent') in threads][0]
chi = [r for r in runs if (r['run_id'], 'child') in threads][0]
assert count[(par['run_id'], 'before_fork')] == 100 and count[(par['run_id'], 'parent_work')] == 300
assert count[(chi['run_id'], 'child_work')] == 200 and len(count) == 3, count
assert int(chi['start_unix_ns']) >= int(par['start_unix_ns']) + 20_000_000
assert par['clean'] == chi['clean'] == 'true'
print('export: runs', par['pid'], chi['pid'], 'ok')
PY
