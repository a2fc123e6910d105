#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/cross-arm64.sh [--smoke] - rec on 64-bit ARM, from an x86-64 Debian
# host (README, "ARM64"): installs the cross toolchain, qemu-user and the
# arm64 libraries, cross-builds the tree with cross/aarch64-linux-gnu.ini,
# runs librec's and format/'s test suites (and whole-program mode's) under
# qemu-aarch64-static, then has tracetool built for this machine read ARM64
# recordings: check passes, counts are exact, functions are named from the
# ARM64 binary. Correctness only: qemu's timings say nothing about ARM64.
#   --smoke   a few tests (the clock, the ring, crash, flight mode, hooks)
#             and the tracetool check: .ci/run's pass, a few minutes.
# BUILD_DIR (default build-cross-arm64) is the cross build, NATIVE_BUILD_DIR
# (default build-cross-arm64-native) the x86-64 tracetool's; REC_ARM64_CACHE
# (default ~/.cache/rec/arm64) keeps the unpacked arm64 Criterion.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
smoke=0
case "${1:-}" in
--smoke) smoke=1 ;;
"") ;;
*) echo "usage: $0 [--smoke]" >&2; exit 2 ;;
esac
build=${BUILD_DIR:-$top/build-cross-arm64}
native=${NATIVE_BUILD_DIR:-$top/build-cross-arm64-native}
cache=${REC_ARM64_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rec/arm64}
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

# --- 1. Packages. The cross compiler, qemu-user, and the arm64 libraries
# the tree links (Debian multiarch). apt-get --no-remove: never remove a
# package of this machine's own architecture to make room. Criterion's
# arm64 package cannot sit beside the amd64 one (its libnanomsg5 is not
# Multi-Arch: same), so it is unpacked into the cache instead, with its
# nanomsg; its other dependencies are ordinary multiarch packages.
. "$top/scripts/deps.sh"
rec_install_deps # the build machine's own: meson, ninja, libzstd-dev, ...
extract=(libcriterion3 libcriterion-dev libnanomsg5)
want=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static
	libc6-dev:arm64 libzstd-dev:arm64 libelf-dev:arm64 libstdc++6:arm64)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	$sudo dpkg --add-architecture arm64
	$sudo apt-get update -qq
fi
for dep in $(apt-cache depends --no-recommends --no-suggests libcriterion3:arm64 |
	awk '/Depends:/ { print $2 }'); do
	case " ${extract[*]} " in *" ${dep%%:*} "*) ;; *) want+=("$dep") ;; esac
done
missing=()
for pkg in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "Installing: ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		--no-remove "${missing[@]}" >/dev/null
fi
sysroot=$cache/root
lib=$sysroot/usr/lib/aarch64-linux-gnu
if [ ! -e "$lib/libcriterion.so" ]; then
	rm -rf "$cache"
	mkdir -p "$cache/debs"
	(cd "$cache/debs" && apt-get download "${extract[@]/%/:arm64}" >/dev/null 2>&1) || {
		echo "cross-arm64.sh: apt-get download ${extract[*]} (arm64) failed" >&2
		exit 1
	}
	for deb in "$cache"/debs/*.deb; do dpkg -x "$deb" "$sysroot"; done
fi
# Criterion's headers are the build machine's (the same package, amd64);
# DT_RPATH, not RUNPATH, so that libcriterion finds its libnanomsg too.
mkdir -p "$cache/pkgconfig"
cat >"$cache/pkgconfig/criterion.pc" <<EOF
libdir=$lib
Name: criterion
Description: Criterion for arm64, unpacked by scripts/cross-arm64.sh
Version: $(dpkg-deb -f "$cache"/debs/libcriterion-dev_*.deb Version | cut -d- -f1)
Libs: -L\${libdir} -lcriterion -Wl,-rpath,\${libdir} -Wl,--disable-new-dtags
Cflags: -I$sysroot/usr/include
EOF
cat >"$cache/local.ini" <<EOF
[built-in options]
pkg_config_path = '$cache/pkgconfig'
EOF

# --- 2. The cross build, and tracetool for this machine.
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$top" --cross-file "$top/cross/aarch64-linux-gnu.ini" \
		--cross-file "$cache/local.ini" --werror -Dbench=false >/dev/null
fi
if [ ! -f "$native/build.ninja" ]; then
	meson setup "$native" "$top" -Dtests=false -Dbench=false >/dev/null
fi
ninja -C "$native" analyzer/tracetool >/dev/null
tracetool=$native/analyzer/tracetool
smoke_tests=(fast_clock ring crash_plain flight_stress recorder_static instrument_walkers)
if [ $smoke -eq 1 ]; then
	targets=(examples/hotspot examples/pipeline tests/librec/test_fast_clock tests/librec/test_ring
		tests/librec/crash_plain tests/librec/prog_crash tests/librec/flight_stress
		tests/librec/test_recorder_static tests/instrument/prog_minns analyzer/tracetool)
	ninja -C "$build" "${targets[@]}"
else
	ninja -C "$build"
fi

# --- 3. Under qemu. Test programs start others (Criterion re-executes
# itself for each test, drivers run prog_*): without binfmt_misc the kernel
# cannot exec an ARM64 file. Where this machine has no aarch64 entry, one
# is registered in a user and mount namespace of our own (Linux >= 6.7),
# so that nothing outside this script changes.
ulimit -c 0 # no core files of the crash tests
in_arm64() {
	if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] &&
		grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64; then
		"$@"
		return
	fi
	unshare --user --map-root-user --mount sh -c '
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc &&
		printf "%s" ":qemu-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:$(command -v qemu-aarch64-static):F" \
			>/proc/sys/fs/binfmt_misc/register || {
			echo "cross-arm64.sh: cannot register qemu-aarch64 with binfmt_misc in a user namespace (Linux >= 6.7 allows it; or install binfmt-support)" >&2
			exit 1
		}
		exec "$@"' sh "$@"
}
# Not run under qemu: valgrind's and the install and own-zstd checks run
# this machine's tools on ARM64 files (valgrind; a compiler and linker for
# the consumers they build); honest counts page faults after the first
# probe, which qemu-user 7.2 makes by ignoring MADV_POPULATE_WRITE (its
# madvise passes MADV_DONTNEED only); counters needs perf_event_open, which
# qemu-user lacks (ENOSYS: librec's one line per counter and the recording
# without them are checked by stress_counters); librec_no_call_cycle reads
# the sources, whatever the build; sample (REC_SAMPLE) needs perf_event_open,
# seccomp and the threads' CPU clocks of a real kernel, which qemu-user
# emulates without (ENOSYS, the emulator's own CPU time): its ARM64 code is
# built here, its samples are checked on hardware.
skip=(valgrind_no_leaks install_and_subproject own_zstd honest honest_static counters
	counters_instrument librec_no_call_cycle sample)
tests=()
if [ $smoke -eq 1 ]; then
	tests=("${smoke_tests[@]}")
else
	while read -r name; do
		case " ${skip[*]} " in *" ${name##* / } "*) continue ;; esac
		tests+=("${name##* / }")
	done < <(meson test -C "$build" --list --suite format --suite librec --suite instrument 2>/dev/null)
fi
# The ring's cross-thread test: 200 000 records instead of 2 000 000 under emulation.
export RING_STREAM_RECORDS=200000
in_arm64 meson test -C "$build" --no-rebuild --print-errorlogs --timeout-multiplier 4 "${tests[@]}"

# --- 4. tracetool (x86-64) on ARM64 recordings: whole-program mode (names
# from the ARM64 binary), and threads with scopes, with each clock.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "cross-arm64.sh: $*" >&2; exit 1; }
for clock in tsc monotonic; do
	REC_CLOCK=$clock REC_OUTPUT=$out/hotspot.zst in_arm64 "$build/examples/hotspot" 3
	"$tracetool" check "$out/hotspot.zst" >/dev/null || fail "check: hotspot ($clock)"
	kind=$("$tracetool" info --format=json "$out/hotspot.zst" | sed -n 's/.*"clock": *"\([a-z]*\)".*/\1/p')
	[ "$kind" = "$clock" ] || fail "hotspot with REC_CLOCK=$clock recorded clock '$kind'"
	"$tracetool" summary --format=csv "$out/hotspot.zst" >"$out/hotspot.csv"
	for row in main,1 wrapper_a,3 wrapper_b,3 func_a,3 func_b,3; do
		awk -F, -v f="${row%,*}" -v n="${row#*,}" '$1 == f && $2 == n { ok = 1 } END { exit !ok }' \
			"$out/hotspot.csv" || fail "hotspot ($clock): no row ${row%,*} with ${row#*,} calls"
	done
	REC_CLOCK=$clock REC_OUTPUT=$out/pipeline.zst in_arm64 "$build/examples/pipeline" >/dev/null
	"$tracetool" check "$out/pipeline.zst" >/dev/null || fail "check: pipeline ($clock)"
done
echo "cross-arm64.sh: ARM64 tests passed under qemu; tracetool (x86-64) read the ARM64 recordings"
