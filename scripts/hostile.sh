#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/hostile.sh [BUILD_DIR] - the full hostile-files sweep (issue 12,
# docs/TESTING.md): every tracetool command variant on every file of
# tests/analyzer/gen_hostile.c, fuzz/regression/ and tests/golden/v1/, also
# on the large ones (10^5 threads, millions of events), of which the suite's
# smoke run (test analyzer_hostile) takes a sample. HOSTILE_BIG=1 adds the
# 157 M-event file (150 threads 2^20 deep); JOBS=N runs N at a time
# (default 2). A build with sanitizers (scripts/sanitize.sh address, its
# build-san-address/) is run without the memory limit ASan cannot live with.
# Exits 1 on any failure, printing each.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
tt=$build/analyzer/tracetool
gen=$build/tests/analyzer/gen_hostile
[ -x "$tt" ] && [ -x "$gen" ] ||
	{ echo "hostile: build first: meson setup $build && ninja -C $build" >&2; exit 2; }
# "sanitized": no ulimit -v (ASan reserves terabytes of address space).
san=$(python3 -c 'import json, sys
o = {x["name"]: x["value"] for x in json.load(open(sys.argv[1]))}
print("sanitized" if o.get("b_sanitize", "none") not in ("none", [], "") else "")' \
	"$build/meson-info/intro-buildoptions.json")
# shellcheck disable=SC2086 # $san: empty or one word
exec python3 "$top/tests/analyzer/check_hostile.py" "$tt" "$gen" "$top" $san \
	--full --jobs "${JOBS:-2}"
