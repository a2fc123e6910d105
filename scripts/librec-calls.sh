#!/bin/sh
# librec-calls.sh [LIBREC_DIR] — print the file-level call graph among librec/*.c built from the
# rec__* functions each file defines (non-static definitions at column 0) and the other files that
# name them (calls or function pointers; comments and strings are stripped first), then every
# call cycle among the files.  Exit 1 if there is a cycle, 0 if the graph is acyclic.
# The rule (docs/DESIGN.md): no call cycle among librec's files; tests/meson.build runs this.
dir=${1:-$(dirname "$0")/../librec}
exec python3 - "$dir" <<'PY'
import os, re, sys
d = sys.argv[1]
files = sorted(f for f in os.listdir(d) if f.endswith('.c'))
strip = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
text, owner = {}, {}
defn = re.compile(r'^(?!static\b)[A-Za-z_][^;\n]*?\b(rec__\w+)\s*\([^;]*?$', re.M)
for f in files:
    with open(os.path.join(d, f)) as fh:
        t = strip.sub(lambda m: ' ' if m.group(0)[0] == '/' else '""', fh.read())
    text[f] = t
    for m in defn.finditer(t):
        owner.setdefault(m.group(1), f)
ident = re.compile(r'\brec__\w+\b')
edges = {f: {} for f in files}
for f in files:
    for name in ident.findall(text[f]):
        g = owner.get(name)
        if g and g != f:
            edges[f].setdefault(g, set()).add(name)
for f in files:
    for g in sorted(edges[f]):
        print('%s -> %s: %s' % (f, g, ' '.join(sorted(edges[f][g]))))
# Strongly connected components (Tarjan); each with more than one file is a cycle.
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: sccs.append(sorted(c))
sys.setrecursionlimit(10000)
for f in files:
    if f not in index: visit(f)
for c in sccs:
    # Print one concrete cycle through the component as well as its members.
    print('CYCLE among: %s' % ' '.join(c))
    for a in c:
        for b in c:
            if b in edges[a]:
                print('  %s -> %s: %s' % (a, b, ' '.join(sorted(edges[a][b]))))
print('%d cycle(s)' % len(sccs))
sys.exit(1 if sccs else 0)
PY
