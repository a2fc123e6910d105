#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deb.sh [--test] [OUTDIR] - README "Debian packages": builds rec's binary
# packages (librectrace0, librectrace-dev, tracetool) from debian/ with
# `dpkg-buildpackage -us -uc -b` in a copy of the tree, checks them with
# lintian (no error allowed), and leaves the .deb files in OUTDIR (default
# build-deb/). Installs what it needs with apt-get (scripts/deps.sh).
#
# --test: then installs them with `dpkg -i` beside GNU recutils' librec-dev
# (the two share no file, so dpkg refuses nothing), builds the example
# pipeline against them with pkg-config (shared and static), CMake and meson,
# runs it and reads its trace with the installed tracetool; the bash
# completion and the manual pages are where bash and man look. Whatever it
# installed for the test it removes at exit. Needs root (dpkg -i).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deps.sh"
test_it=""
if [ "${1:-}" = "--test" ]; then test_it=1; shift; fi
out=$(mkdir -p "${1:-$top/build-deb}" && cd "${1:-$top/build-deb}" && pwd)
fail() { echo "deb.sh: $*" >&2; [ -z "$test_it" ] || echo "0 passed, 1 failed"; exit 1; }

echo "deb.sh: dependencies"
# debhelper, dpkg-dev, fakeroot: dpkg-buildpackage; lintian: the packages'
# checks; cmake: the --test's find_package(librec) build (deps.sh has it).
rec_install_deps debhelper dpkg-dev fakeroot lintian

# The version is written in meson.build; debian/changelog must say the same.
meson_version=$(sed -n "s/^  version : '\([^']*\)',\$/\1/p" "$top/meson.build")
deb_version=$(cd "$top" && dpkg-parsechangelog -S Version)
[ "$meson_version" = "$deb_version" ] ||
	fail "debian/changelog says $deb_version, meson.build $meson_version: add a changelog entry (dch -v $meson_version)"

tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
mkdir "$tmp/src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$tmp/src"
else
	tar -C "$top" --exclude='./build*' --exclude=./.cache -cf - . | tar -xf - -C "$tmp/src"
fi
echo "deb.sh: dpkg-buildpackage -us -uc -b (log: $out/build.log)"
(cd "$tmp/src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log" >&2; fail "dpkg-buildpackage failed"; }
changes=$(ls "$tmp"/rectrace_*.changes)
echo "deb.sh: lintian"
lintian --fail-on error "$changes" 2>&1 | grep -v 'running with root privileges' || true
lintian --fail-on error "$changes" >/dev/null 2>&1 || fail "lintian reports errors"
rm -f "$out"/*.deb
cp "$tmp"/*.deb "$out"/
debs=()
for p in librectrace0 librectrace-dev tracetool; do debs+=("$(ls "$out/${p}_${deb_version}_"*.deb)"); done
printf 'deb.sh: built %s\n' "${debs[@]}"
[ -n "$test_it" ] || exit 0

# --- the test: install beside recutils' librec-dev, use as a user would. ---
[ "$(id -u)" -eq 0 ] || fail "--test installs packages: run it as root"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
ours=(librectrace0 librectrace-dev tracetool)
for p in "${ours[@]}"; do installed "$p" && fail "$p is already installed: remove it first (dpkg --purge $p)"; done
theirs=()
for p in librec-dev librec1; do installed "$p" || theirs+=("$p"); done
cleanup() {
	dpkg --purge "${ours[@]}" >/dev/null 2>&1 || true
	[ ${#theirs[@]} -eq 0 ] || dpkg --purge librec-dev "${theirs[@]}" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
rec_install_deps librec-dev cmake
echo "deb.sh: dpkg -i beside GNU recutils' librec-dev $(dpkg-query -W -f='${Version}' librec-dev)"
dpkg -i "${debs[@]}" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i failed"; }
common=$(comm -12 <(dpkg -L librec-dev librec1 | sort -u) <(dpkg -L "${ours[@]}" | sort -u) |
	while read -r f; do [ -d "$f" ] || echo "$f"; done)
[ -z "$common" ] || fail "files in common with recutils: $common"

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ "$(pkg-config --modversion librec)" = "$deb_version" ] || fail "pkg-config librec: $(pkg-config --modversion librec)"
flags=$(pkg-config --cflags --libs librec | xargs)
[ "$flags" = "-I/usr/include/rectrace -lrectrace" ] || fail "pkg-config --cflags --libs librec: $flags"
cc=${CC:-cc}
# trace_ok PROGRAM NAME: runs the example, and the installed tracetool reads
# the trace: the producer made 20000 items, each processed once.
trace_ok() {
	rm -f "$tmp/$2.zst"
	# Blocking mode: exact counts on a loaded machine too (no drops).
	REC_OVERFLOW=block REC_OUTPUT="$tmp/$2.zst" "$1" >/dev/null || fail "$2: the example failed"
	tracetool summary --format=csv "$tmp/$2.zst" >"$tmp/$2.csv" || fail "$2: tracetool summary failed"
	grep -q '^produce,20000,' "$tmp/$2.csv" && grep -q '^process,20000,' "$tmp/$2.csv" ||
		{ cat "$tmp/$2.csv" >&2; fail "$2: the trace does not have 20000 produce and process calls"; }
	echo "deb.sh: $2: built, ran, traced"
}
# shellcheck disable=SC2046
$cc "$top/examples/pipeline.c" $(pkg-config --cflags --libs librec) -o "$tmp/shared" || fail "pkg-config build"
readelf -d "$tmp/shared" | grep -q 'NEEDED.*\[librectrace\.so\.0\]' || fail "the example does not need librectrace.so.0"
trace_ok "$tmp/shared" pkg-config
# shellcheck disable=SC2046
$cc -static-libgcc "$top/examples/pipeline.c" $(pkg-config --cflags librec) \
	"/usr/lib/$multiarch/librectrace.a" -lpthread -o "$tmp/static" || fail "static build"
readelf -d "$tmp/static" | grep -q 'librec' && fail "the static example needs a librec library"
trace_ok "$tmp/static" static
$cc -I/usr/include/rectrace "$top/examples/pipeline.c" -lrectrace -o "$tmp/plain" || fail "build with -lrectrace"
trace_ok "$tmp/plain" lrectrace
mkdir -p "$tmp/cm" "$tmp/ms"
cp "$top/examples/pipeline.c" "$tmp/cm/" && cp "$top/examples/pipeline.c" "$tmp/ms/"
printf '%s\n' 'cmake_minimum_required(VERSION 3.13)' 'project(user C)' 'find_package(librec 0.1 REQUIRED)' \
	'add_executable(pipeline pipeline.c)' 'target_link_libraries(pipeline PRIVATE librec::librec)' >"$tmp/cm/CMakeLists.txt"
(cmake -S "$tmp/cm" -B "$tmp/cm/b" && cmake --build "$tmp/cm/b") >"$tmp/cmake.log" 2>&1 ||
	{ cat "$tmp/cmake.log" >&2; fail "find_package(librec) build"; }
trace_ok "$tmp/cm/b/pipeline" cmake
printf '%s\n' "project('user', 'c')" "executable('pipeline', 'pipeline.c', dependencies : dependency('librec'))" \
	>"$tmp/ms/meson.build"
(cd "$tmp/ms" && meson setup b && ninja -C b) >"$tmp/meson.log" 2>&1 || { cat "$tmp/meson.log" >&2; fail "meson build"; }
trace_ok "$tmp/ms/b/pipeline" meson
# recutils' own header and library still work beside ours.
printf '%s\n' '#include <rec.h>' 'int main(void) { rec_init(); rec_fini(); return 0; }' >"$tmp/recutils.c"
$cc "$tmp/recutils.c" -lrec -o "$tmp/recutils" && "$tmp/recutils" || fail "recutils' rec.h and -lrec no longer work"
# tracetool's completion and manual pages, where bash-completion and man look.
bash -c '. /usr/share/bash-completion/completions/tracetool && complete -p tracetool' >/dev/null ||
	fail "no bash completion for tracetool"
for m in man1/tracetool.1.gz man3/rec.3.gz; do [ -f "/usr/share/man/$m" ] || fail "no $m"; done
tracetool --version | grep -q "$deb_version" || fail "tracetool --version: $(tracetool --version)"
# tracetool record preloads librectrace.so.0: the package recommends
# librectrace0 (apt installs it with tracetool), and the installed tracetool
# finds the installed library (F19, check4).
dpkg-deb -f "$(ls "$out/tracetool_${deb_version}_"*.deb)" Recommends | grep -q 'librectrace0' ||
	fail "the tracetool package does not recommend librectrace0 (tracetool record needs it)"
(cd "$tmp" && REC_OVERFLOW=block tracetool record -o "$tmp/record.zst" -- "$tmp/plain") >"$tmp/record.log" 2>&1 ||
	{ cat "$tmp/record.log" >&2; fail "tracetool record of the example failed"; }
grep -q 'cannot be preloaded' "$tmp/record.log" && { cat "$tmp/record.log" >&2; fail "tracetool record: librec not preloaded"; }
tracetool info "$tmp/record.zst" | grep -q '^stack samples: ' || fail "tracetool record: no sampling in $tmp/record.zst"
# The packaged tracetool's live view, on a finished recording: one table, exit 0.
tracetool top "$tmp/cmake.zst" | grep -q '^the recording ended cleanly: ' || fail "tracetool top"
echo "deb.sh: the packages install beside librec-dev and build, run and trace the example"
echo "1 passed, 0 failed"
