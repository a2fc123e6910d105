# SPDX-License-Identifier: MIT
# pkg_common.sh - sourced by the packaging tests (tests/packaging/check_*.sh):
# `meson install` of BUILD into a temporary DESTDIR, and the places things
# went. Sets tmp (removed at exit), root (DESTDIR + prefix), libdir and pc
# (librec.pc's directory). fail() prints the reason in meson's TAP-less
# format and exits 1; skip() exits 77 (meson's "skipped").
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$(basename "$0"): $*"; echo "0 passed, 1 failed"; exit 1; }
skip() { echo "$(basename "$0"): skipped: $*"; exit 77; }

pkg_install() { # BUILD_ROOT
	meson install -C "$1" --destdir "$tmp/root" --no-rebuild --quiet >/dev/null ||
		fail "meson install failed"
	prefix=$(meson introspect "$1" --buildoptions | python3 -c \
		'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
	root="$tmp/root$prefix"
	pc=$(find "$root" -name librec.pc | head -n 1)
	[ -n "$pc" ] || fail "librec.pc not installed"
	pc=$(dirname "$pc")
	libdir=$(dirname "$pc")
}
