#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare-profilers.sh [BUILD_DIR] - the README's whole-program comparison:
# examples/hotspot.c profiled by rec (-finstrument-functions + librec), gprof
# (-pg) and uftrace (-pg), with what each reports for func_a/func_b/wrappers
# and each one's overhead on the run time: the median of RUNS runs of each
# build, interleaved, against the uninstrumented build measured in the same
# loop (wall and CPU time). Installs gprof (binutils) and uftrace with apt-get if missing.
# Environment: ROUNDS (hotspot's argument, default 200), RUNS (default 7),
# CC (default cc).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rec_install_deps binutils uftrace
build=$(realpath "${1:-build}")
cc=${CC:-cc}
rounds=${ROUNDS:-200}
runs=${RUNS:-7}
[ -x "$build/analyzer/tracetool" ] || { meson setup "$build" >/dev/null && ninja -C "$build" >/dev/null; }
ninja -C "$build" >/dev/null
work=$(mktemp -d /tmp/rec-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=examples/hotspot.c
"$cc" -O2 "$src" -o "$work/plain"
"$cc" -O2 -finstrument-functions "$src" -o "$work/rec" -L"$build/librec" -lrectrace \
	-Wl,-rpath,"$build/librec"
"$cc" -O2 -pg "$src" -o "$work/pg"

# Wall and CPU (user + sys of the process and its children: rec's writer
# thread, uftrace's recorder) time per run; the four builds interleaved.
python3 - "$work" "$rounds" "$runs" <<'PY'
import os, resource, statistics, subprocess, sys, time
work, rounds, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmds = {
    "plain": [f"{work}/plain", rounds],
    "rec": ["env", f"REC_OUTPUT={work}/trace.zst", f"{work}/rec", rounds],
    "gprof": ["sh", "-c", f"cd '{work}' && ./pg {rounds}"],
    "uftrace": ["uftrace", "record", "-d", f"{work}/uftrace.data", f"{work}/pg", rounds],
}
wall = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}
for _ in range(runs):
    for name, cmd in cmds.items():
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        t1 = time.monotonic()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall[name].append(t1 - t0)
        cpu[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
bw, bc = statistics.median(wall["plain"]), statistics.median(cpu["plain"])
print(f"== hotspot {rounds} rounds; median of {runs} interleaved runs each; overhead = time / uninstrumented")
print(f"{'':8} {'wall s':>8} {'wall x':>7} {'cpu s':>8} {'cpu x':>7}")
for name in cmds:
    w, c = statistics.median(wall[name]), statistics.median(cpu[name])
    print(f"{name:8} {w:8.3f} {w / bw:7.3f} {c:8.3f} {c / bc:7.3f}")
PY
echo
echo "== rec: tracetool summary"
"$build/analyzer/tracetool" summary "$work/trace.zst" | head -20
echo
echo "== gprof -b -p (flat profile)"
gprof -b -p "$work/pg" "$work/gmon.out" | head -12
echo
echo "== uftrace report"
uftrace report -d "$work/uftrace.data" | head -12
