#!/bin/sh
# SPDX-License-Identifier: MIT
# check_rpath.sh BUILD_ROOT - README "Finding librectrace.so": a program linked
# with $(pkg-config --cflags --libs librec) against a prefix the dynamic
# loader does not search does not start; following the README, it does:
# with -Wl,-rpath,$(pkg-config --variable=libdir librec), with
# LD_LIBRARY_PATH set to that directory, or linked with librectrace.a. The prefix
# is a DESTDIR install whose librec.pc says prefix=<that directory>, which is
# what `meson setup --prefix=<that directory>` would write.
. "$(dirname "$0")/pkg_common.sh"
pkg_install "$1"
sed -i "s|^prefix=.*|prefix=$root|" "$pc/librec.pc"
export PKG_CONFIG_PATH="$pc"
unset PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
[ "$(pkg-config --variable=libdir librec)" = "$libdir" ] || fail "pkg-config's libdir is not $libdir"
cat > "$tmp/app.c" <<'C'
#include <rec.h>
#include <stdio.h>
static int twice(int v) { TRACE_SCOPE(); return 2 * v; }
int main(void) { int s = 0; for (int i = 0; i < 10; i++) s += twice(i); printf("%d\n", s); return 0; }
C
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc "$tmp/app.c" $(pkg-config --cflags --libs librec) -o "$tmp/plain" || fail "cannot build with pkg-config"
# The problem the README answers (unless a librectrace.so.0 is installed system-wide).
if ! ldconfig -p 2>/dev/null | grep -q 'librectrace\.so\.0'; then
	REC_DISABLE=1 "$tmp/plain" >/dev/null 2>"$tmp/err" && fail "a program linked against a private prefix started without help"
	grep -q 'librectrace\.so' "$tmp/err" || fail "unexpected failure: $(cat "$tmp/err")"
fi
# Recipe 1: rpath.
# shellcheck disable=SC2046
$cc "$tmp/app.c" $(pkg-config --cflags --libs librec) \
	-Wl,-rpath,"$(pkg-config --variable=libdir librec)" -o "$tmp/rpath" || fail "cannot build with the rpath recipe"
[ "$(REC_OUTPUT="$tmp/r.zst" "$tmp/rpath")" = 90 ] || fail "the rpath recipe's program does not run"
"$root/bin/tracetool" summary --format=csv "$tmp/r.zst" | grep -q '^twice,10,' || fail "rpath: no trace"
# Recipe 2: LD_LIBRARY_PATH.
[ "$(LD_LIBRARY_PATH="$(pkg-config --variable=libdir librec)" REC_OUTPUT="$tmp/l.zst" "$tmp/plain")" = 90 ] ||
	fail "the LD_LIBRARY_PATH recipe's program does not run"
# Recipe 3: the static library.
# shellcheck disable=SC2046
$cc "$tmp/app.c" $(pkg-config --cflags librec) "$(pkg-config --variable=libdir librec)/librectrace.a" \
	-lpthread -o "$tmp/static" || fail "cannot build with the static recipe"
[ "$(REC_OUTPUT="$tmp/s.zst" "$tmp/static")" = 90 ] || fail "the static recipe's program does not run"
"$root/bin/tracetool" summary --format=csv "$tmp/s.zst" | grep -q '^twice,10,' || fail "static: no trace"
echo "1 passed, 0 failed"
