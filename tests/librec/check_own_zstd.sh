#!/bin/sh
# SPDX-License-Identifier: MIT
# check_own_zstd.sh LIBREC_SO LIBREC_A PROG_SHARED PROG_STATIC PROG_PLAIN PROG_NESTED
#                   PRELOAD_SO TRACETOOL
# Issue 11, item 7: librec's calls into zstd never bind to a host's ZSTD_*.
# prog_own_zstd (whole-program mode, -rdynamic, its own ZSTD_* aborting
# when anyone but main calls them) traces with librectrace.so, with librectrace.a,
# and unlinked under LD_PRELOAD=librectrace.so; a librectrace.so program traces with
# an aborting zstd preloaded. Every trace must be intact and name the
# host's ZSTD_isError exactly once (main's own call). And neither library
# leaves a zstd symbol for a host to interpose: librectrace.so has no undefined
# ZSTD_* and librectrace.a defines only librec.map's names (and the exec
# family's copies, librec/static_exec.keep) globally.
set -eu
so=$1 a=$2 shared=$3 static=$4 plain=$5 nested=$6 preload=$7 tracetool=$8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_own_zstd: $*"; echo "0 passed, 1 failed"; exit 1; }

undef=$(nm -D --undefined-only "$so" | grep -i zstd || true)
[ -z "$undef" ] || fail "librectrace.so leaves zstd symbols to the host: $undef"
globals=$(nm -g --defined-only "$a" | awk 'NF == 3 { print $3 }' | LC_ALL=C sort -u | tr '\n' ' ')
want="__cyg_profile_func_enter __cyg_profile_func_exit rec__annot rec__disabled rec__enter rec__exit rec__message rec__prod rec_flush rec_snapshot rec_start rec_stop rec_strerror rec_thread_name rec_version "
# and the exec family's and _exit's copies (librec/static_exec.keep), where librectrace.so has its own
case $(uname -m) in
x86_64 | aarch64)
	want="_Exit __cyg_profile_func_enter __cyg_profile_func_exit _exit execl execle execlp execv execve execveat execvp execvpe fexecve rec__annot rec__disabled rec__enter rec__exit rec__message rec__prod rec_flush rec_snapshot rec_start rec_stop rec_strerror rec_thread_name rec_version "
	;;
esac
[ "$globals" = "$want" ] || fail "librectrace.a defines globally: $globals"

run() { # NAME [VAR=VALUE...] PROG ARGS: trace to $tmp/NAME.zst, check it
	name=$1; shift
	env REC_OUTPUT="$tmp/$name.zst" REC_FLUSH_MS=5 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		fail "$name: exit $? ($(cat "$tmp/$name.err"))"
	"$tracetool" check "$tmp/$name.zst" >/dev/null 2>&1 || fail "$name: trace damaged"
}
for v in shared static plain; do
	eval prog=\$$v
	if [ $v = plain ]; then
		run $v LD_PRELOAD="$so" "$prog" 300
	else
		run $v "$prog" 300
	fi
	[ "$(cat "$tmp/$v.out")" = "host zstd calls: 1" ] || fail "$v: $(cat "$tmp/$v.out")"
	"$tracetool" summary --format=csv "$tmp/$v.zst" >"$tmp/$v.csv"
	grep -q '^ZSTD_isError,1,' "$tmp/$v.csv" || fail "$v: host's ZSTD_isError not traced once"
	grep -q '^leaf,' "$tmp/$v.csv" || fail "$v: leaf not traced"
	[ "$(grep -c '^ZSTD_' "$tmp/$v.csv")" = 1 ] || fail "$v: other host ZSTD_* traced"
done
run preload LD_PRELOAD="$preload" "$nested"
"$tracetool" summary --format=csv "$tmp/preload.zst" | grep -q '^outer,4000,' ||
	fail "preload: outer not traced 4000 times"
echo "1 passed, 0 failed"
