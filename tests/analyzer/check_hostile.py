#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_hostile.py - tracetool on hostile files (issue 12; docs/ANALYZER.md, "Hostile files").

Runs every command variant on every hostile trace (gen_hostile.c's, the
concatenated and empty-frame ones made here, fuzz/regression/, the golden
traces) and on inputs that are not regular files, each under a time limit
and (unless the build has sanitizers) `ulimit -v 2000000`, and checks:
exit 0 or 1 only; stderr lines all name the file, exit 1 with exactly one
line that is not a warning; stdout valid UTF-8, valid JSON (json.loads) or
CSV (csv module, every row as wide as the header) as asked, and no control
character but the line feed in table output or on stderr. Then the exact
findings: unique chrome tids, names replaced by U+FFFD as docs/ANALYZER.md
says, a quoted counter header, concatenated recordings refused, -o never
the input, /dev/full is exit 1, memory bounded.

    check_hostile.py TRACETOOL GEN_HOSTILE SOURCE_ROOT [sanitized] [--full] [--jobs N]

By default (the suite's smoke run, test analyzer_hostile) every variant runs
on every file but the LARGE ones (10^5 threads, millions of events), which
get a sample of the variants (each command, option and format at least
once; fewer per file under the sanitizers); every finding is checked.
--full (scripts/hostile.sh, with HOSTILE_BIG=1 also the 157 M-event file)
runs every variant on every file.
Runs go N at a time (default 2: this machine's cores); the order of the
checks and their results do not depend on N.
"""
import argparse
import concurrent.futures
import csv
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser(description="tracetool on hostile files")
ap.add_argument("tracetool")
ap.add_argument("gen_hostile")
ap.add_argument("source_root")
ap.add_argument("sanitized", nargs="?", choices=["sanitized"])
ap.add_argument("--full", action="store_true", help="every variant on every file")
ap.add_argument("--jobs", type=int, default=2, help="tracetool runs at a time")
ARGS = ap.parse_args()
TT, GEN, SRC = ARGS.tracetool, ARGS.gen_hostile, ARGS.source_root
SANITIZED = ARGS.sanitized == "sanitized"
TIME_LIMIT_S = 300 if SANITIZED else 60
MEM_LIMIT_KB = 2000000
failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what, file=sys.stderr)


# The limit is set by a shell that then execs tracetool: runs start from
# several threads, where a preexec_fn is not safe. ASan reserves terabytes
# of address space, so a sanitized build runs without it.
LIMIT = [] if SANITIZED else ["/bin/sh", "-c", 'ulimit -v %d && exec "$@"' % MEM_LIMIT_KB,
                              "ulimit"]


def run(args, stdout=None):
    """tracetool ARGS, its output (unless stdout is given) and stderr in files:
    a pipe would make its time limit depend on this process reading it, and
    json.loads of a large document holds the interpreter for seconds."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            p = subprocess.run(LIMIT + [TT] + args, stdout=stdout or out, stderr=err,
                               timeout=TIME_LIMIT_S)
        except subprocess.TimeoutExpired:
            fail("%s: no answer in %d s" % (" ".join(args), TIME_LIMIT_S))
            return None
        out.seek(0)
        err.seek(0)
        p.stdout = None if stdout else out.read()
        p.stderr = err.read()
    return p


def terminal_safe(text):
    """No control character but the line feed (C0, DEL, C1)."""
    return not any((ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0 for c in text)


VARIANTS = [
    (["summary"], "table"),
    (["summary", "--format=csv"], "csv"),
    (["summary", "--format=json"], "json"),
    (["summary", "--format=csv", "--by-thread"], "csv"),
    (["summary", "--format=json", "--by-thread", "--sort=name"], "json"),
    (["summary", "--interval=1ms", "--format=csv"], "csv"),
    (["summary", "--interval=1ms", "--format=json"], "json"),
    (["summary", "--interval=1ms"], "table"),
    (["summary", "--by-thread"], "table"),
    (["histogram"], "table"),
    (["histogram", "--format=csv", "--by-thread"], "csv"),
    (["histogram", "--format=json"], "json"),
    (["chrome"], "json"),
    (["info"], "table"),
    (["info", "--format=json"], "json"),
    (["check"], "table"),
    (["values"], "table"),
    (["values", "--format=csv"], "csv"),
    (["values", "--format=json"], "json"),
    (["flows"], "table"),
    (["flows", "--format=csv"], "csv"),
    (["flows", "--format=json"], "json"),
    (["summary", "--format=csv", "--arg=bytes"], "csv"),
]
# Several TRACE files (tracetool(1)): the file and a copy of it (the same
# file twice is refused, checked below).
# Small outputs only: this script already holds every file's results (8 GB
# at its peak); chrome's JSON of the deep files given twice took gigabytes
# more in json.loads (tests/analyzer/test_multi.c covers chrome's pairs).
MULTI_VARIANTS = [
    (["summary", "--format=csv", "--by-process"], "csv"),
    (["tree", "--format=csv", "--by-process"], "csv"),
]


def check_output(label, path, p, kind, also=None):
    """also: another path the stderr lines may name (a pair's copy)."""
    if p.returncode not in (0, 1):
        fail("%s: exit %d" % (label, p.returncode))
        return None
    try:
        err = p.stderr.decode("utf-8")
    except UnicodeDecodeError:
        fail("%s: stderr is not UTF-8" % label)
        return None
    lines = err.splitlines()
    prefix = "tracetool: %s: " % path
    if not terminal_safe(err):
        fail("%s: control character on stderr: %r" % (label, err))
    prefixes = (prefix,) + (("tracetool: %s: " % also,) if also else ())
    for line in lines:
        if not line.startswith(prefixes):
            fail("%s: stderr line does not name the file: %r" % (label, line))
    errors = [l for l in lines if not l.startswith(tuple(x + "warning: " for x in prefixes))]
    if p.returncode == 1 and len(errors) != 1:
        fail("%s: exit 1 with %d error lines: %r" % (label, len(errors), err))
    if p.returncode == 0 and errors:
        fail("%s: exit 0 with error lines: %r" % (label, err))
    if p.returncode != 0:
        return None
    try:
        out = p.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        fail("%s: stdout is not UTF-8: %s" % (label, e))
        return None
    if kind == "json" and len(out) > LARGE_JSON_BYTES and not ARGS.full:
        # The smoke run's cheaper check of a huge chrome document (a deep
        # file's is 0.5 GB, half a minute in json.loads; --full parses it):
        # the object's frame, some scope events (complete ones, pairs where
        # ends tie), and every B event closed by an E event.
        head = '{"traceEvents":['
        n_x = out.count('"ph":"X"')
        n_b, n_e = out.count('"ph":"B"'), out.count('"ph":"E"')
        if not out.startswith(head) or not out.rstrip().endswith("}") or n_x + n_b == 0 \
                or n_b != n_e:
            fail("%s: %d bytes of chrome JSON, %d X, %d B and %d E events"
                 % (label, len(out), n_x, n_b, n_e))
        return None
    if kind == "json":
        try:
            return json.loads(out)
        except ValueError as e:
            fail("%s: invalid JSON: %s" % (label, e))
    elif kind == "csv":
        rows = list(csv.reader(io.StringIO(out, newline=""), strict=True))
        if not rows:
            fail("%s: empty CSV" % label)
        for r in rows[1:]:
            if len(r) != len(rows[0]):
                fail("%s: CSV row of %d fields under a header of %d: %r"
                     % (label, len(r), len(rows[0]), r))
                break
        return rows
    elif not terminal_safe(out):
        fail("%s: control character in table output" % label)
    return out


# The large files of the smoke run (10^5 threads, millions of events) and
# the variants it runs on them: each command, each option (--by-thread,
# --interval) and each format at least once; the findings below read only
# the chrome of threads_100k. The other variants run on every other file,
# and on these too with --full.
LARGE = {"threads_100k.zst", "deep_6x2e19.zst", "deep_40_closed.zst",
         "threads_deep_past_depth_limit", "deep_150x2e20.zst"}
LARGE_VARIANTS = {"summary", "summary --format=csv --by-thread",
                  "summary --interval=1ms --format=json", "histogram --format=csv --by-thread",
                  "chrome", "info --format=json", "check"}

# Under the sanitizers a run costs ~10x more (chrome of a deep file: 20 s):
# the sample is split among the large files, each variant of the list above
# on one of them, the commands the 10^5-thread finding is about on it.
LARGE_VARIANTS_SANITIZED = {
    "threads_100k.zst": {"summary", "chrome", "check"},
    "deep_6x2e19.zst": {"summary", "chrome"},
    "deep_40_closed.zst": {"summary --format=csv --by-thread", "check"},
    "threads_deep_past_depth_limit": {"histogram --format=csv --by-thread", "info --format=json",
                                      "summary --interval=1ms --format=json"},
    "deep_150x2e20.zst": {"summary", "check"},
}

# Chrome output above this size is checked in the smoke run without json.loads.
LARGE_JSON_BYTES = 64 << 20


def variants_for(path):
    name = os.path.basename(path)
    if SANITIZED and ARGS.full and "threads_100k" in name:
        # 10^5 threads under ASan: the commands the finding was about.
        return [v for v in VARIANTS if " ".join(v[0]) in ("summary", "chrome", "check")]
    if ARGS.full or name not in LARGE:
        return VARIANTS
    sample = LARGE_VARIANTS_SANITIZED[name] if SANITIZED else LARGE_VARIANTS
    return [v for v in VARIANTS if " ".join(v[0]) in sample]


def pairs_for(path):
    """The several-files variants: path given twice (its pair of 10^5
    threads takes minutes and finds nothing new; the other large files
    pair only with --full)."""
    name = os.path.basename(path)
    if "threads_100k" in name or (name in LARGE and not ARGS.full):
        return []
    return MULTI_VARIANTS


PAIR_DIR = []


def copy_of(path):
    """A copy of path in the pairs' directory (another inode, the same bytes)."""
    dst = os.path.join(PAIR_DIR[0], "copy-" + os.path.basename(path))
    if not os.path.exists(dst):
        with open(path, "rb") as f, open(dst, "wb") as g:
            g.write(f.read())
    return dst


def submit_variants(pool, path, variants, pairs=()):
    """Start each variant on path, and each pair variant on path and its
    copy; collect() checks them in this order."""
    copy = copy_of(path) if pairs else None
    return ([(args, kind, False, pool.submit(run, args + [path])) for args, kind in variants] +
            [(args, kind, copy, pool.submit(run, args + [path, copy])) for args, kind in pairs])


def collect(path, started, keep):
    """Check each run on path; keep the outputs only if a finding reads them
    (never those of a pair)."""
    results = {}
    for args, kind, pair, fut in started:
        p = fut.result()
        if p is not None:
            name = os.path.basename(path)
            label = "%s %s" % (" ".join(args), "%s %s" % (name, name) if pair else name)
            doc = check_output(label, path, p, kind, pair or None)
            if pair:
                continue
            if not keep:
                p.stdout, doc = None, None
            results[" ".join(args)] = (p, doc)
    return results


def main():
    tmp = tempfile.mkdtemp(prefix="hostile-")
    try:
        return check_all(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # F29 (check4): it was left in /tmp


def check_all(tmp):
    PAIR_DIR.append(os.path.join(tmp, "pairs"))
    os.mkdir(PAIR_DIR[0])
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    subprocess.run([GEN, tmp, "big" if os.environ.get("HOSTILE_BIG") else "small", fifo],
                   check=True)
    evil = os.path.join(tmp, "evil_names.zst")
    cat2 = os.path.join(tmp, "concatenated.zst")
    with open(cat2, "wb") as f:
        for _ in range(2):
            with open(evil, "rb") as g:
                f.write(g.read())
    empty = os.path.join(tmp, "empty_zstd_frame.zst")
    with open(empty, "wb") as f:
        with open(evil, "rb") as g:
            f.write(g.read())
        # A zstd frame with no content (zstd -c < /dev/null).
        f.write(bytes.fromhex("28b52ffd240001000099e9d851"))

    files = sorted(os.path.join(tmp, n) for n in os.listdir(tmp) if n.endswith(".zst"))
    reg = os.path.join(SRC, "fuzz", "regression")
    files += sorted(os.path.join(reg, n) for n in os.listdir(reg))
    gold = os.path.join(SRC, "tests", "golden", "v1")
    files += sorted(os.path.join(gold, n) for n in os.listdir(gold) if n.endswith(".zst"))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, ARGS.jobs))
    # The largest first, so that the pool is not left waiting on one run.
    order = sorted(files, key=lambda f: -os.stat(f).st_size)
    started = {path: submit_variants(pool, path, variants_for(path), pairs_for(path))
               for path in order}
    # Not regular files: refused at once, one line, exit 1.
    special = [(path, submit_variants(pool, path, VARIANTS))
               for path in [fifo, "/dev/zero", "/dev/urandom", tmp]]
    # Depth limits depend only on the file, not on the number of walkers.
    deep = os.path.join(tmp, "deep_40_closed.zst")
    walker_runs = []
    for walkers in ["1", "2", "3"]:
        env = dict(os.environ, TRACETOOL_THREADS=walkers)
        walker_runs.append(pool.submit(
            subprocess.run, [TT, "summary", "--format=csv", deep], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, timeout=TIME_LIMIT_S))
    keep = {evil, cat2, empty} | {os.path.join(tmp, n + ".zst") for n in [
        "evil_annotations",
        "tid_serial_clash", "tid_reused_999", "threads_2000", "threads_100k", "module_devices",
        "interval_long_activation"]}
    res = {}
    n_runs = 0
    for path in files:
        res[path] = collect(path, started[path], path in keep)
        n_runs += len(started[path])
    for path, st in special:
        for args, kind, _, fut in st:
            p = fut.result()
            n_runs += 1
            if p is not None:
                check_output("%s %s" % (" ".join(args), path), path, p, kind)
                if p.returncode != 1:
                    fail("%s %s: exit %d, not 1" % (" ".join(args), path, p.returncode))

    # Chrome: every thread its own tid.
    for name in ["tid_serial_clash", "tid_reused_999", "threads_2000", "threads_100k"]:
        path = os.path.join(tmp, name + ".zst")
        p, doc = res[path]["chrome"]
        if p.returncode != 0 or doc is None:
            fail("chrome %s: exit %d" % (name, p.returncode))
            continue
        tids = [e["tid"] for e in doc["traceEvents"]
                if e["ph"] == "M" and e["name"] == "thread_name"]
        want = {"tid_serial_clash": 2, "tid_reused_999": 999, "threads_2000": 2000,
                "threads_100k": 100000}[name]
        if len(tids) != want or len(set(tids)) != want:
            fail("chrome %s: %d threads, %d distinct tids" % (name, len(tids), len(set(tids))))
    p, doc = res[os.path.join(tmp, "tid_serial_clash.zst")]["chrome"]
    if doc is not None:
        tids = sorted(e["tid"] for e in doc["traceEvents"] if e.get("name") == "thread_name")
        # The OS tid, then 2^22 (above every Linux tid) + the serial, 2.
        if tids != [2, 4194306]:
            fail("chrome tid_serial_clash: tids %r, not [2, 4194306]" % tids)

    # Depth limits depend only on the file, not on the number of walkers.
    outs = [f.result().stdout for f in walker_runs]
    rows = list(csv.reader(io.StringIO(outs[0].decode())))
    calls = sum(int(r[1]) for r in rows[1:])
    errors = sum(int(r[10]) for r in rows[1:])
    if outs[1] != outs[0] or outs[2] != outs[0]:
        fail("deep_40_closed: summary differs between 1, 2 and 3 walkers")
    if calls + errors != 40 * ((1 << 16) + 100) or errors == 0 or calls < 40 * (1 << 16):
        fail("deep_40_closed: %d calls, %d errors" % (calls, errors))

    # Names: U+FFFD for each ill-formed byte and control character, "_" for
    # a line break (LF, CR: tracetool(1)'s rule for tree paths, in every view).
    expect = {
        "bad\ufffd\ufffd", "lone\ufffd\ufffd", "over\ufffd\ufffd", "over3\ufffd\ufffd\ufffd",
        "surr\ufffd\ufffd\ufffd", "big\ufffd\ufffd\ufffd\ufffd", "cut\ufffd\ufffd",
        "\ufffd[31mred\ufffd[0m", "csi\ufffd31m", 'q"uo"te', "com,ma", "new_line",
        "cr_lf", "tab\ufffdbed", "back\\slash", "del\ufffd",
        "ok \u00e9t\u00e9 \u20ac \U0001f525",
    }
    p, doc = res[evil]["summary --format=json"]
    if doc is not None:
        got = {r["function"] for r in doc["functions"]}
        if got != expect:
            fail("evil names in summary json: %r" % sorted(got ^ expect))
    p, doc = res[evil]["info --format=json"]
    if doc is not None:
        got = {t["name"] for t in doc["threads"]}
        if got != expect:
            fail("evil thread names in info json: %r" % sorted(got ^ expect))
    p, rows = res[evil]["summary --format=csv"]
    if rows is not None:
        for h in ["a,b_total", "a,b_mean", 'q"x_total', "\ufffd[2Jclear_mean"]:
            if h not in rows[0]:
                fail("summary csv header has no field %r: %r" % (h, rows[0]))
        got = {r[0] for r in rows[1:]}
        if got != expect:
            fail("evil names in summary csv: %r" % sorted(got ^ expect))
    p, doc = res[evil]["chrome"]
    if doc is not None:
        got = {e["name"] for e in doc["traceEvents"] if e["ph"] in ("X", "B")}
        if got != expect:
            fail("evil names in chrome: %r" % sorted(got ^ expect))

    # Annotations with the evil names (gen_hostile.c evil_annotations): shown
    # as the scope names are, non-finite values null in JSON, the 20000
    # unfinished flows of the first name counted.
    ann = os.path.join(tmp, "evil_annotations.zst")
    p, doc = res[ann]["values --format=json"]
    if doc is not None:
        got = {t["track"] for t in doc["tracks"]}
        if got != expect | {"track#268435455"}:
            fail("evil track names in values json: %r" % sorted(got ^ (expect | {"track#268435455"})))
    p, doc = res[ann]["flows --format=json"]
    if doc is not None:
        got = {f["flow"]: (f["count"], f["unfinished"], f["orphan_ends"]) for f in doc["flows"]}
        want = {n: (2, 20000 if n == "bad\ufffd\ufffd" else 0, 2) for n in expect}
        if got != want:
            fail("evil flows: %r" % sorted(set(got.items()) ^ set(want.items())))

    # Concatenated recordings: refused with one clear line, by check too.
    for cmd in ["check", "summary", "info"]:
        p = res[cat2][cmd][0]
        if p.returncode != 1 or b"2 recordings concatenated" not in p.stderr:
            fail("%s of two concatenated recordings: exit %d, %r" % (cmd, p.returncode, p.stderr))
    p = res[empty]["check"][0]
    if p.returncode != 1:
        fail("check of a trace with an empty zstd frame: exit %d" % p.returncode)

    # A module path naming a device or a FIFO: not opened, one warning.
    p = res[os.path.join(tmp, "module_devices.zst")]["summary"][0]
    if p.returncode != 0 or b"/dev/zero: not a regular file" not in p.stderr \
            or b"fifo: not a regular file" not in p.stderr:
        fail("module paths to devices: exit %d, %r" % (p.returncode, p.stderr))

    # --interval on one activation spanning a day: refused, not 86 M rows.
    p = res[os.path.join(tmp, "interval_long_activation.zst")]["summary --interval=1ms --format=csv"][0]
    if p.returncode != 1 or b"--interval: more than" not in p.stderr:
        fail("interval over a day at 1ms: exit %d, %r" % (p.returncode, p.stderr))

    # The same file given twice (issue 26): refused, exit 2, one line, by
    # every command that takes several files; diff compares it with itself.
    for args in [["summary"], ["histogram"], ["tree"], ["flame"], ["chrome"], ["values"],
                 ["flows"], ["info"], ["check"], ["export", "-o", os.path.join(tmp, "x")],
                 ["perfetto", "-o", os.path.join(tmp, "x.pftrace")]]:
        p = run(args + [evil, os.path.join(tmp, ".", "evil_names.zst")])
        if p is not None and (p.returncode != 2 or len(p.stderr.splitlines()) != 1
                              or b"the same file as" not in p.stderr or p.stdout):
            fail("%s of one file twice: exit %d, %r" % (" ".join(args), p.returncode, p.stderr))
    p = run(["diff", evil, evil])
    if p is not None and p.returncode != 0:
        fail("diff of a file with itself: exit %d, %r" % (p.returncode, p.stderr))

    # -o never the input: same path, another path, a hard and a symbolic link.
    trace = os.path.join(tmp, "o_input.zst")
    with open(trace, "wb") as f, open(evil, "rb") as g:
        f.write(g.read())
    before = open(trace, "rb").read()
    os.link(trace, os.path.join(tmp, "o_hard.zst"))
    os.symlink(trace, os.path.join(tmp, "o_soft.zst"))
    for out in [trace, os.path.join(tmp, ".", "o_input.zst"), os.path.join(tmp, "o_hard.zst"),
                os.path.join(tmp, "o_soft.zst")]:
        p = run(["chrome", trace, "-o", out])
        if p is None:
            continue
        if p.returncode != 2 or b"refusing to overwrite" not in p.stderr \
                or len(p.stderr.splitlines()) != 1:
            fail("chrome -o %s: exit %d, %r" % (out, p.returncode, p.stderr))
    if open(trace, "rb").read() != before:
        fail("chrome -o changed its input")
    out = os.path.join(tmp, "o_out.json")
    p = run(["chrome", trace, "-o", out])
    if p is None or p.returncode != 0:
        fail("chrome -o to a new file failed")
    else:
        json.loads(open(out, "rb").read().decode("utf-8"))

    # Output lost: exit 1 with one line, for every command.
    if os.path.exists("/dev/full"):
        def to_full(args):
            with open("/dev/full", "wb") as full:
                return run(args + [evil], stdout=full)
        fulls = [(args, pool.submit(to_full, args)) for args, kind in VARIANTS]
        for args, fut in fulls:
            p = fut.result()
            n_runs += 1
            if p is not None and (p.returncode != 1 or len(p.stderr.splitlines()) != 1):
                fail("%s > /dev/full: exit %d, %r" % (" ".join(args), p.returncode, p.stderr))
    pool.shutdown()

    print("%s: %d files, %d variants, %d runs checked; %d failures"
          % ("full" if ARGS.full else "smoke (scripts/hostile.sh runs all)", len(files),
             len(VARIANTS), n_runs, len(failures)))
    return 1 if failures else 0


sys.exit(main())
