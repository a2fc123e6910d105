#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# perfetto_check.py PROTO TRACE - decodes TRACE with `protoc --decode` and the
# schema subset PROTO (an independent decoder: protoc knows nothing of our
# encoder), then replays it the way trace_processor reads TrackEvents:
# sequences and their incremental state (cleared flag, interned names,
# packet defaults, the incremental clock of their ClockSnapshot), tracks
# and their descriptors. Prints one JSON object: per thread track its pid,
# tid, name, slices (begin/end counts), names of the slices with counts,
# maximum nesting, first/last absolute time; processes; counters. Exits 1
# on a violation: a name iid not interned on its sequence, an event before
# its sequence was cleared, an END without a BEGIN, unbalanced slices at the
# end, a time going backwards on a track.
import json
import re
import subprocess
import sys

proto, trace = sys.argv[1], sys.argv[2]
with open(trace, 'rb') as f:
    r = subprocess.run(['protoc', '--decode=perfetto.protos.Trace', '-I', proto.rsplit('/', 1)[0],
                        proto], stdin=f, capture_output=True)
if r.returncode != 0:
    print('protoc failed:', r.stderr.decode(), file=sys.stderr)
    sys.exit(1)
text = r.stdout.decode()

# Parse protoc's text format into nested dicts (lists for every field).
tok = re.compile(r'\s*(?:(\w+)\s*\{|(\w+)\s*:\s*("(?:[^"\\]|\\.)*"|[^\s]+)|(\}))')
def parse(s):
    root, stack, pos = {}, [], 0
    cur = root
    while pos < len(s):
        m = tok.match(s, pos)
        if not m:
            if s[pos:].strip() == '':
                break
            raise SystemExit('cannot parse protoc output at %d: %r' % (pos, s[pos:pos + 40]))
        pos = m.end()
        if m.group(1):
            child = {}
            cur.setdefault(m.group(1), []).append(child)
            stack.append(cur)
            cur = child
        elif m.group(2):
            v = m.group(3)
            if v.startswith('"'):
                v = v[1:-1].encode('latin-1', 'backslashreplace').decode('unicode_escape').encode('latin-1').decode('utf-8')
            cur.setdefault(m.group(2), []).append(v)
        else:
            cur = stack.pop()
    return root

def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default

errors = []
doc = parse(text)
packets = doc.get('packet', [])
seqs = {}
tracks = {}
processes = {}
counter_tracks = {}
counters = {}
flows, args, marks = {}, [], {}
for p in packets:
    sid = int(one(p, 'trusted_packet_sequence_id', 0))
    flags = int(one(p, 'sequence_flags', 0))
    seq = seqs.setdefault(sid, {'cleared': False, 'names': {}, 'clock': None, 'last': None,
                                'defaults': {}})
    if flags & 1:
        seq.update(cleared=True, names={}, defaults={}, clock=None)
    if flags & 2 and not seq['cleared']:
        errors.append('packet needs incremental state on sequence %d before it was cleared' % sid)
    for cs in p.get('clock_snapshot', []):
        for c in cs.get('clocks', []):
            if int(one(c, 'clock_id')) == 64:
                if one(c, 'is_incremental') != 'true':
                    errors.append('clock 64 is not incremental')
                seq['clock'] = int(one(c, 'timestamp'))
    for d in p.get('trace_packet_defaults', []):
        seq['defaults'] = {'clock': int(one(d, 'timestamp_clock_id', 6)),
                           'track': int(one(one(d, 'track_event_defaults', {}), 'track_uuid', 0))}
    for idata in p.get('interned_data', []):
        for en in idata.get('event_names', []):
            seq['names'][int(one(en, 'iid'))] = one(en, 'name')
    for td in p.get('track_descriptor', []):
        uuid = int(one(td, 'uuid'))
        if 'thread' in td:
            th = td['thread'][0]
            tracks[uuid] = {'pid': int(one(th, 'pid')), 'tid': int(one(th, 'tid')),
                            'name': one(th, 'thread_name'), 'begin': 0, 'end': 0,
                            'names': {}, 'depth': 0, 'max_depth': 0, 'first_ns': None,
                            'last_ns': None, 'instants': 0}
        elif 'process' in td:
            pr = td['process'][0]
            processes[uuid] = {'pid': int(one(pr, 'pid')), 'name': one(pr, 'process_name')}
        elif 'counter' in td:
            counter_tracks[uuid] = {'name': one(td, 'name'), 'parent': int(one(td, 'parent_uuid', 0))}
    if 'timestamp' in p:
        clock = int(one(p, 'timestamp_clock_id', seq['defaults'].get('clock', 6)))
        ts = int(one(p, 'timestamp'))
        if clock == 64:
            if seq['clock'] is None:
                errors.append('incremental timestamp on sequence %d with no clock snapshot' % sid)
                continue
            seq['clock'] += ts
            ts = seq['clock']
    for te in p.get('track_event', []):
        typ = one(te, 'type')
        uuid = int(one(te, 'track_uuid', seq['defaults'].get('track', 0)))
        if typ == 'TYPE_COUNTER':
            c = counters.setdefault(uuid, {'samples': 0, 'sum': 0})
            c['samples'] += 1
            if 'double_counter_value' in te:
                c['sum'] += float(one(te, 'double_counter_value'))
            else:
                c['sum'] += int(one(te, 'counter_value', 0))
            continue
        t = tracks.get(uuid)
        if t is None:
            errors.append('event on undescribed track %d' % uuid)
            continue
        if t['last_ns'] is not None and ts < t['last_ns']:
            errors.append('time goes backwards on track %d' % uuid)
        t['last_ns'] = ts
        if t['first_ns'] is None:
            t['first_ns'] = ts
        # Annotations (only traces that have them add these keys).
        for fid in te.get('flow_ids', []):
            flows.setdefault(fid, []).append('step' if flows.get(fid) else 'begin')
        for fid in te.get('terminating_flow_ids', []):
            flows.setdefault(fid, []).append('end')
        for da in te.get('debug_annotations', []):
            v = one(da, 'int_value')
            args.append([one(da, 'name'), int(v) if v is not None else one(da, 'string_value')])
        if typ in ('TYPE_SLICE_BEGIN', 'TYPE_INSTANT'):
            iid = int(one(te, 'name_iid', 0))
            name = seq['names'].get(iid) if 'name' not in te else one(te, 'name')
            if typ == 'TYPE_INSTANT' and 'name' in te:
                marks[name] = marks.get(name, 0) + 1
            if name is None:
                errors.append('name iid %d not interned on sequence %d' % (iid, sid))
                continue
            if typ == 'TYPE_INSTANT':
                t['instants'] += 1
                continue
            t['begin'] += 1
            t['names'][name] = t['names'].get(name, 0) + 1
            t['depth'] += 1
            t['max_depth'] = max(t['max_depth'], t['depth'])
        elif typ == 'TYPE_SLICE_END':
            t['end'] += 1
            t['depth'] -= 1
            if t['depth'] < 0:
                errors.append('END without BEGIN on track %d' % uuid)
        else:
            errors.append('unexpected event type %s' % typ)
for uuid, t in tracks.items():
    if t['depth'] != 0:
        errors.append('track %d (tid %d) ends with %d open slices' % (uuid, t['tid'], t['depth']))
    del t['depth']
out = {'packets': len(packets),
       'threads': sorted(tracks.values(), key=lambda t: (t['pid'], t['tid'])),
       'processes': sorted(processes.values(), key=lambda p: p['pid']),
       'counter_tracks': sorted(c['name'] for c in counter_tracks.values()),
       'counter_samples': sum(c['samples'] for c in counters.values())}
if flows or args or marks:
    out['flows'] = sorted(' '.join(v) for v in flows.values())
    out['args'] = args
    out['marks'] = marks
    out['counter_sums'] = {counter_tracks[u]['name']: c['sum'] for u, c in counters.items()
                           if u in counter_tracks}
print(json.dumps(out, sort_keys=True))
for e in errors:
    print('perfetto_check: ' + e, file=sys.stderr)
sys.exit(1 if errors else 0)
