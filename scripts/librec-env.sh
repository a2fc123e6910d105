#!/bin/sh
# librec-env.sh [LIBREC_DIR] — check that librec reads its environment in one place: no librec/*.c
# but config.c and env.c calls getenv() or secure_getenv() (comments stripped), no file but
# config.c names a variable as a string of its own ("REC_OUTPUT"), and every variable of
# config.c's table env_vars[] is documented in rec(3) (librec/rec.3.in, ENVIRONMENT).
# Prints each breach; exit 1 if there is one. tests/meson.build runs it (suite librec).
dir=${1:-$(dirname "$0")/../librec}
exec python3 - "$dir" <<'PY'
import os, re, sys
d = sys.argv[1]
comments = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
bad = 0
table = []
for f in sorted(os.listdir(d)):
    if not f.endswith('.c'):
        continue
    with open(os.path.join(d, f)) as fh:
        t = comments.sub(' ', fh.read())
    if f not in ('config.c', 'env.c') and re.search(r'\b(secure_)?getenv\s*\(', t):
        print('%s: reads the environment (only config.c may, through its table)' % f)
        bad = 1
    names = re.findall(r'"(REC_[A-Z0-9_]+)"', t)
    if f == 'config.c':
        table = names
    elif names:
        print('%s: names %s (config.c\'s table owns the variables)' % (f, ' '.join(sorted(set(names)))))
        bad = 1
if not table:
    print('config.c: no table of REC_* variables found')
    bad = 1
with open(os.path.join(d, 'rec.3.in')) as fh:
    man = fh.read()
env = man[man.find('.SH ENVIRONMENT'):]
env = env[:env.find('\n.SH ', 1)]
for n in table:
    if not re.search(r'\b%s\b' % n, env):
        print('rec.3.in: %s is read (config.c) but not in ENVIRONMENT' % n)
        bad = 1
print('%d REC_* variables, read in config.c only' % len(table) if not bad else 'FAILED')
sys.exit(bad)
PY
