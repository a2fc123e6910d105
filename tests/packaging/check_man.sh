#!/bin/sh
# SPDX-License-Identifier: MIT
# check_man.sh SRC_ROOT BUILD_ROOT - the man pages (README, "Build, install"): `meson
# install` installs tracetool(1) and rec(3); both render without a warning
# (groff -man -ww); and they are in step with the program and the header:
# every command of `tracetool --help` has its entry in tracetool(1), every
# long option that `tracetool [COMMAND] --help` prints and every environment
# variable the analyzer reads (getenv in analyzer/*.c) appears in it, and
# every TRACE_* macro, rec_* function and REC_* name of the installed rec.h
# appears in rec(3), with its enums and struct.
. "$(dirname "$0")/pkg_common.sh"
src=$1
command -v groff >/dev/null || skip "groff is not installed (scripts/deps.sh installs groff-base)"
pkg_install "$2"
man1="$root/share/man/man1/tracetool.1" man3="$root/share/man/man3/rec.3"
tt="$root/bin/tracetool" rec_h="$root/include/rectrace/rec.h"
for f in "$man1" "$man3"; do [ -f "$f" ] || fail "$f not installed"; done

for f in "$man1" "$man3"; do
	for dev in "-z" "-Tutf8" "-Tascii"; do
		groff -man -ww $dev "$f" >/dev/null 2>"$tmp/warn" || fail "groff $dev failed on $f"
		[ ! -s "$tmp/warn" ] || { cat "$tmp/warn"; fail "groff -man -ww $dev warns on $(basename "$f")"; }
	done
	# The version is the project's, filled in by meson.
	grep -q '@VERSION@' "$f" && fail "$(basename "$f") has no version"
done

# Plain text, one line per paragraph (a long line length: no wrapping).
groff -man -Tascii -P-cbou -rLL=1000n "$man1" >"$tmp/tracetool.txt" 2>/dev/null
groff -man -Tascii -P-cbou -rLL=1000n "$man3" >"$tmp/rec.txt" 2>/dev/null
# A request glued to the text before it (finding F15: "lead to it..TP
# --samples") is printed as words instead of starting an entry.
for t in "$tmp/tracetool.txt" "$tmp/rec.txt"; do
	if grep -nE '\.(TP|PP|LP|IP|SH|SS|RS|RE|BR|BI|IR|RB|IB|B|I|nf|fi|br|sp|EX|EE)( |$)' "$t"; then
		fail "$(basename "$t" .txt): a roff request shows as text (not at the start of its line)"
	fi
done
missing=""
commands=$("$tt" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ -n "$commands" ] || fail "no commands in tracetool --help"
for cmd in $commands; do
	# Each command is a tagged entry: "       summary TRACE".
	grep -qE "^       $cmd( |\$)" "$tmp/tracetool.txt" || missing="$missing command:$cmd"
done
for cmd in "" $commands; do
	for opt in $("$tt" $cmd --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -qF -- "$opt" "$tmp/tracetool.txt" || missing="$missing ${cmd:-tracetool}:$opt"
	done
done
for var in $(cat "$src"/analyzer/*.c | grep -oE 'getenv\("[A-Z_]+"\)' | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
	grep -qw "$var" "$tmp/tracetool.txt" || missing="$missing env:$var"
done
[ -z "$missing" ] || fail "tracetool.1 lacks:$missing"

# Functions (rec_x followed by '('), types (struct/enum rec_x), macros and
# constants; not rec__* (called only by the macros) nor the C++ helper
# namespace rec_detail.
names=$( (grep -oE '\brec_[a-z][a-z0-9_]*\(' "$rec_h" | tr -d '('
	grep -oE '\b(struct|enum) rec_[a-z][a-z0-9_]*' "$rec_h" | sed 's/.* //'
	grep -oE '\b(TRACE_[A-Z0-9_]+|REC_[A-Z][A-Z0-9_]*)\b' "$rec_h" | grep -vx 'REC_H') | sort -u)
[ -n "$names" ] || fail "no names found in rec.h"
for n in $names; do
	grep -qw "$n" "$tmp/rec.txt" || missing="$missing $n"
done
[ -z "$missing" ] || fail "rec.3 lacks:$missing"
echo "1 passed, 0 failed"
