#!/bin/sh
# SPDX-License-Identifier: MIT
# check_cmake.sh BUILD_ROOT - README "Build, install": after `meson install`,
# a CMake project finds librec with find_package(librec 0.1), links
# librec::librec and librec::librec_static, and its programs trace (the
# installed tracetool reads what they wrote, with exact calls). The version
# file accepts 0.1 and refuses a newer major version.
. "$(dirname "$0")/pkg_common.sh"
command -v cmake >/dev/null || skip "cmake is not installed (scripts/deps.sh installs it)"
pkg_install "$1"
[ -f "$libdir/cmake/librec/librecConfig.cmake" ] || fail "librecConfig.cmake not installed"
[ -f "$libdir/cmake/librec/librecConfigVersion.cmake" ] || fail "librecConfigVersion.cmake not installed"

mkdir -p "$tmp/proj"
cat > "$tmp/proj/app.c" <<'C'
#include <rec.h>
#include <stdio.h>
static int twice(int v) { TRACE_SCOPE(); return 2 * v; }
int main(void)
{
	int s = 0;
	for (int i = 0; i < 10; i++)
		s += twice(i);
	printf("%d %d\n", s, REC_VERSION_NUMBER == rec_version());
	return 0;
}
C
cat > "$tmp/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
project(user C)
find_package(librec 0.1 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE librec::librec)
add_executable(app_static app.c)
target_link_libraries(app_static PRIVATE librec::librec_static)
message(STATUS "librec version ${librec_VERSION}")
CM
log="$tmp/cmake.log"
cmake -S "$tmp/proj" -B "$tmp/proj/b" -DCMAKE_PREFIX_PATH="$root" >"$log" 2>&1 ||
	{ cat "$log"; fail "find_package(librec 0.1) failed"; }
grep -q "librec version $(meson introspect "$1" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')" "$log" ||
	{ cat "$log"; fail "librec_VERSION is not the project's version"; }
cmake --build "$tmp/proj/b" >"$log" 2>&1 || { cat "$log"; fail "the CMake project does not build"; }

# The build tree's rpath (CMake's default) finds the installed librectrace.so.
out=$(env -u LD_LIBRARY_PATH REC_OUTPUT="$tmp/shared.zst" "$tmp/proj/b/app") || fail "app does not start"
[ "$out" = "90 1" ] || fail "app printed '$out', not '90 1'"
out=$(REC_OUTPUT="$tmp/static.zst" "$tmp/proj/b/app_static") || fail "app_static does not start"
[ "$out" = "90 1" ] || fail "app_static printed '$out'"
readelf -d "$tmp/proj/b/app_static" | grep -qE 'librec(trace)?\.so|libzstd' && fail "app_static needs librectrace.so or libzstd"
for t in shared static; do
	"$root/bin/tracetool" summary --format=csv "$tmp/$t.zst" | grep -q '^twice,10,' ||
		fail "the $t app's trace has no 'twice' with 10 calls"
done

# A newer major version than installed is refused, by the version file.
sed -i 's/find_package(librec 0.1 REQUIRED)/find_package(librec 99.0 REQUIRED)/' "$tmp/proj/CMakeLists.txt"
rm -rf "$tmp/proj/b"
if cmake -S "$tmp/proj" -B "$tmp/proj/b" -DCMAKE_PREFIX_PATH="$root" >"$log" 2>&1; then
	fail "find_package(librec 99.0) accepted version 0.x"
fi
grep -q 'compatible' "$log" && grep -q 'version: 0\.' "$log" || { cat "$log"; fail "no version mismatch reported"; }
echo "1 passed, 0 failed"
