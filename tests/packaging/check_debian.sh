#!/bin/bash
# SPDX-License-Identifier: MIT
# check_debian.sh SRC_ROOT BUILD_ROOT - the fast half of README "Debian
# packages" (scripts/deb.sh --test builds and installs the packages): every
# file `meson install` puts in the prefix goes into exactly one package of
# debian/*.install, each pattern there matches a file, none of them is a
# name GNU recutils' librec-dev or librec1 install, the runtime package is
# named after librectrace.so's soname, and debian/changelog's version is
# meson.build's.
. "$(dirname "$0")/pkg_common.sh"
src=$1
pkg_install "$2"
# Debian 12, librec-dev 1.9-2 and librec1 1.9-2 (dpkg -c), less directories
# and /usr/share/doc/<package>/.
recutils=(usr/include/rec.h usr/lib/MA/librec.a usr/lib/MA/librec.so usr/lib/MA/librec.so.1
	usr/lib/MA/librec.so.1.0.0)
# The installed files, as the package's paths: <prefix>/x -> usr/x, the
# multiarch directory as MA.
ma=$(basename "$libdir")
(cd "$root" && find . \( -type f -o -type l \) | sed 's|^\./|usr/|' | sort) >"$tmp/files"
[ -s "$tmp/files" ] || fail "meson install installed nothing"
patterns=()
owners=()
for f in "$src"/debian/*.install; do
	while read -r p; do
		[ -n "$p" ] || continue
		patterns+=("$p")
		owners+=("$(basename "$f" .install)")
	done <"$f"
done
[ ${#patterns[@]} -gt 0 ] || fail "no debian/*.install"
declare -A used
while read -r f; do
	n=0 who=""
	for i in "${!patterns[@]}"; do
		p=${patterns[$i]}
		# shellcheck disable=SC2053
		if [[ $p == */ && $f == $p* ]] || [[ $f == $p ]]; then
			n=$((n + 1)) who="$who ${owners[$i]}"
			used[$i]=1
		fi
	done
	[ $n -eq 1 ] || fail "$f is in $n packages ($who ) of debian/*.install"
	for r in "${recutils[@]}"; do
		[ "${f/\/$ma\//\/MA\/}" != "$r" ] || fail "$f is installed, and GNU recutils installs it too"
	done
	case "$(basename "$f")" in librec.so* | librec.a) fail "$f is a GNU recutils library name" ;; esac
done <"$tmp/files"
for i in "${!patterns[@]}"; do
	[ -n "${used[$i]:-}" ] || fail "${owners[$i]}.install: ${patterns[$i]} matches no installed file"
done

soname=$(readelf -d "$libdir/librectrace.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "librectrace.so.0" ] || [ "${soname#librectrace.so.}" != "$soname" ] ||
	fail "librectrace.so's soname is '$soname'"
runtime="librectrace${soname#librectrace.so.}"
grep -qx "Package: $runtime" "$src/debian/control" || fail "debian/control has no package $runtime (soname $soname)"
[ -f "$src/debian/$runtime.install" ] || fail "no debian/$runtime.install"

version=$(meson introspect "$2" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
first=$(head -n 1 "$src/debian/changelog")
[ "$first" != "${first#rectrace ($version) }" ] ||
	fail "debian/changelog starts with '$first', not version $version: add an entry"
echo "1 passed, 0 failed"
