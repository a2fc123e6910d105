#!/bin/sh
# check_install.sh SRC_ROOT BUILD_ROOT - what README, "Build, install" promises:
# `meson install` puts rectrace/rec.h, librectrace.so, librectrace.a,
# librec.pc and tracetool in place, and none of the names GNU recutils'
# librec-dev and librec1 install (include/rec.h, librec.so*, librec.a: README
# "Build, install"); a program builds against them with pkg-config, shared
# and static, with #include <rec.h>; and librec works as a meson subproject
# with dependency('librec', fallback : ['librec', 'librec_dep']).
set -eu
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_install: $*"; echo "0 passed, 1 failed"; exit 1; }

meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c \
	'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
root="$tmp/root$prefix"
pc=$(find "$root" -name librec.pc | head -n 1)
[ -n "$pc" ] || fail "librec.pc not installed"
for f in include/rectrace/rec.h bin/tracetool; do [ -e "$root/$f" ] || fail "$f not installed"; done
libdir=$(dirname "$(dirname "$pc")")
[ -e "$libdir/librectrace.so" ] || fail "librectrace.so not installed"
[ -e "$libdir/librectrace.a" ] || fail "librectrace.a not installed"
# recutils' files (Debian 12: librec-dev 1.9-2, librec1 1.9-2).
for f in include/rec.h; do [ ! -e "$root/$f" ] || fail "$f installed: GNU recutils' librec-dev owns it"; done
for f in "$libdir"/librec.so* "$libdir/librec.a"; do
	[ ! -e "$f" ] || fail "$(basename "$f") installed: GNU recutils' librec1/librec-dev own that name"
done

cat > "$tmp/app.c" <<'C'
#include <rec.h>
#include <stdio.h>
static int twice(int v) { TRACE_SCOPE(); return 2 * v; }
int main(void) { int s = 0; for (int i = 0; i < 10; i++) s += twice(i); printf("%d\n", s); return rec_version() ? 0 : 1; }
C
export PKG_CONFIG_SYSROOT_DIR="$tmp/root" PKG_CONFIG_PATH="$(dirname "$pc")"
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc "$tmp/app.c" -o "$tmp/app" $(pkg-config --cflags --libs librec) || fail "cannot build with pkg-config"
[ "$(LD_LIBRARY_PATH="$libdir" REC_OUTPUT="$tmp/a.zst" "$tmp/app")" = 90 ] || fail "shared app"
# shellcheck disable=SC2046
$cc "$tmp/app.c" -o "$tmp/app_static" $(pkg-config --cflags librec) "$libdir/librectrace.a" \
	$(pkg-config --static --libs-only-l librec | sed 's/-lrectrace//') || fail "cannot link librectrace.a"
[ "$(REC_OUTPUT="$tmp/s.zst" "$tmp/app_static")" = 90 ] || fail "static app"
"$root/bin/tracetool" summary --format=csv "$tmp/s.zst" | grep -q '^twice,10,' || fail "static trace"
"$root/bin/tracetool" summary --format=csv "$tmp/a.zst" | grep -q '^twice,10,' || fail "shared trace"

mkdir -p "$tmp/user/subprojects"
ln -s "$src" "$tmp/user/subprojects/librec"
cp "$tmp/app.c" "$tmp/user/app.c"
cat > "$tmp/user/meson.build" <<'M'
project('user', 'c')
executable('app', 'app.c', dependencies : dependency('librec', fallback : ['librec', 'librec_dep']))
M
(cd "$tmp/user" && CC=$cc meson setup b >/dev/null && ninja -C b >/dev/null) ||
	fail "cannot build as a subproject"
[ "$(REC_OUTPUT="$tmp/u.zst" "$tmp/user/b/app")" = 90 ] || fail "subproject app"
echo "1 passed, 0 failed"
