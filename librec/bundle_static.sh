#!/bin/sh
# SPDX-License-Identifier: MIT
# bundle_static.sh OUT.a MAP LD OBJCOPY AR ZSTD.a KEEP PARTS.a... - builds the
# installed librectrace.a: one relocatable object that holds librec, format/ and
# the members of zstd's static library that they use, with every symbol
# local except those librec.map exports and those listed in KEEP (one name a
# line, # comments; "-" for none: the exec family's copies, rec(3) "Exec").
# So a program that links librectrace.a
# and defines its own ZSTD_* (or recfmt_*, or rec__* internals) neither
# clashes with librec's nor receives librec's calls (docs/DESIGN.md,
# "librec's dependencies are its own"). Undefined references (libc,
# pthread) stay global: the program's link resolves them. LD, OBJCOPY and
# AR are the host machine's binutils, which librec/meson.build finds (in a
# cross build: the cross file's, never the build machine's).
set -eu
out=$1 map=$2 ld=$3 objcopy=$4 ar=$5 zstd=$6 keep=$7
shift 7
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names in librec.map's global: lists (every version node).
sed -e 's,/\*.*\*/,,' -e '/^[[:space:]]*\*/d' -e '/^\/\*/d' "$map" |
	awk '/global:/ { on = 1; next } /local:|}/ { on = 0 } on { gsub(/[[:space:];]/, ""); if ($0 != "") print }' \
	>"$tmp/keep"
[ -s "$tmp/keep" ] || { echo "bundle_static.sh: no global symbols in $map" >&2; exit 1; }
if [ "$keep" != - ]; then
	sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$keep" >>"$tmp/keep"
fi

"$ld" -r -o "$tmp/all.o" --whole-archive "$@" --no-whole-archive "$zstd"
"$objcopy" --keep-global-symbols="$tmp/keep" "$tmp/all.o" "$tmp/librec.o"
rm -f "$out"
"$ar" rcs "$out" "$tmp/librec.o"
