#!/bin/sh
# SPDX-License-Identifier: MIT
# check_subproject.sh SRC_ROOT - README, "Build, install, use as a
# subproject": as a meson subproject, librec
# builds and links with libzstd and the C library alone. A project using
# dependency('librec', fallback : ['librec', 'librec_dep']) is configured
# with a pkg-config search path that holds libzstd.pc and nothing else (no
# libelf, no criterion): it must configure, build, run and trace, librectrace.so
# must need only libzstd and the C library, and tracetool must not be built.
# With -Dlibrec:tracetool=enabled (full pkg-config path) tracetool is a
# target of the subproject.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_subproject: $*"; echo "0 passed, 1 failed"; exit 1; }

zstd_pc=$(pkg-config --variable=pcfiledir libzstd)/libzstd.pc
[ -f "$zstd_pc" ] || fail "libzstd.pc not found"
mkdir -p "$tmp/pc" "$tmp/user/subprojects"
cp "$zstd_pc" "$tmp/pc/"
ln -s "$src" "$tmp/user/subprojects/librec"
cat > "$tmp/user/app.c" <<'C'
#include <rec.h>
#include <stdio.h>
static int twice(int v) { TRACE_SCOPE(); return 2 * v; }
int main(void) { int s = 0; for (int i = 0; i < 10; i++) s += twice(i); printf("%d\n", s); return 0; }
C
cat > "$tmp/user/meson.build" <<'M'
project('user', 'c')
librec = dependency('librec', fallback : ['librec', 'librec_dep'])
executable('app', 'app.c', dependencies : librec)
M
log="$tmp/setup.log"
(cd "$tmp/user" && PKG_CONFIG_LIBDIR="$tmp/pc" PKG_CONFIG_PATH= meson setup b >"$log" 2>&1) ||
	{ cat "$log"; fail "the subproject does not configure with only libzstd.pc"; }
grep -qi 'libelf' "$log" && { cat "$log"; fail "libelf was looked up"; }
grep -qi 'criterion' "$log" && { cat "$log"; fail "criterion was looked up"; }
grep -q 'stdc++' "$log" && { cat "$log"; fail "libstdc++ was looked up"; }
ninja -C "$tmp/user/b" >"$log" 2>&1 || { cat "$log"; fail "the subproject does not build"; }
[ ! -e "$tmp/user/b/subprojects/librec/analyzer/tracetool" ] || fail "tracetool was built"
[ ! -e "$tmp/user/b/subprojects/librec/examples/pipeline" ] || fail "the examples were built"

so=$(find "$tmp/user/b/subprojects/librec" -name 'librectrace.so*' -type f | head -n 1)
[ -n "$so" ] || fail "librectrace.so not built"
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
	case "$lib" in
	libzstd.so.* | libc.so.* | libpthread.so.* | ld-linux*) ;;
	*) fail "librectrace.so needs $lib (needs: $needed)" ;;
	esac
done
out=$(REC_OUTPUT="$tmp/u.zst" "$tmp/user/b/app") || fail "app does not start"
[ "$out" = 90 ] || fail "app printed '$out'"
[ -s "$tmp/u.zst" ] || fail "app wrote no trace"

# Asked for, tracetool is part of the subproject (configured, not built here).
(cd "$tmp/user" && meson setup b2 -Dlibrec:tracetool=enabled >"$log" 2>&1) ||
	{ cat "$log"; fail "-Dlibrec:tracetool=enabled does not configure"; }
meson introspect "$tmp/user/b2" --targets | python3 -c '
import json, sys
names = [t["name"] for t in json.load(sys.stdin)]
sys.exit(0 if "tracetool" in names else 1)' || fail "-Dlibrec:tracetool=enabled has no tracetool target"
echo "1 passed, 0 failed"
