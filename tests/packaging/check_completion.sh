#!/bin/bash
# SPDX-License-Identifier: MIT
# check_completion.sh BUILD_ROOT - bash completion (README, "Build, install"): `meson
# install` installs it where bash-completion looks (its completionsdir, or
# <datadir>/bash-completion/completions) under the name "tracetool"; sourced
# into bash, it completes every command that `tracetool --help` lists, every
# long option that `tracetool COMMAND --help` prints, trace files, and the
# values of every option of every command that takes a fixed set of them:
# exactly the values its parser names when it refuses one ("is not one of
# a|b|c", the list it matches against: options.h), each of which the parser
# then takes. So the completion cannot drift from the option tables.
. "$(dirname "$0")/pkg_common.sh"
pkg_install "$1"
comp=$(find "$root" -path '*bash-completion/completions/tracetool' | head -n 1)
[ -n "$comp" ] || fail "no bash-completion/completions/tracetool installed"
tt="$root/bin/tracetool"

# complete WORD...: what <Tab> offers after these words (the last is the
# word being completed), one per line, as bash's programmable completion
# would call _tracetool.
cat >"$tmp/run.bash" <<'B'
source "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_tracetool
printf '%s\n' "${COMPREPLY[@]}"
B
complete() { bash "$tmp/run.bash" "$comp" "$@" | sort; }

bash -c "source '$comp' && complete -p tracetool" | grep -q '_tracetool' ||
	fail "sourcing the file does not register a completion for tracetool"
commands=$("$tt" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' | sort)
[ -n "$commands" ] || fail "no commands in tracetool --help"
[ "$(complete "$tt" "")" = "$commands" ] || fail "commands offered: $(complete "$tt" "" | tr '\n' ' ')"
[ "$(complete "$tt" -q "")" = "$commands" ] || fail "commands after -q: $(complete "$tt" -q "" | tr '\n' ' ')"
[ "$(complete "$tt" su)" = "summary" ] || fail "'su' does not complete to summary"
for cmd in $commands; do
	complete "$tt" "$cmd" -- >"$tmp/offered"
	for opt in $("$tt" "$cmd" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -qE -- "^$opt=?\$" "$tmp/offered" || fail "$cmd: $opt not offered ($(tr '\n' ' ' <"$tmp/offered"))"
	done
done
[ "$(complete "$tt" summary --format = "" | tr '\n' ' ')" = "csv json table " ] ||
	fail "summary --format= offers: $(complete "$tt" summary --format = "" | tr '\n' ' ')"
[ "$(complete "$tt" summary --format = c)" = "csv" ] || fail "--format=c does not complete to csv"
[ "$(complete "$tt" info --format=j)" = "json" ] || fail "info --format=j does not complete to json"
[ "$(complete "$tt" summary --sort = s)" = "self" ] || fail "--sort=s does not complete to self"
[ "$(complete "$tt" export --format = "" | tr '\n' ' ')" = "csv parquet " ] ||
	fail "export --format= offers: $(complete "$tt" export --format = "" | tr '\n' ' ')"
[ "$(complete "$tt" summary --sort = p | tr '\n' ' ')" = "p50 p90 p99 " ] ||
	fail "--sort=p offers: $(complete "$tt" summary --sort = p | tr '\n' ' ')"
[ "$(complete "$tt" flame --format "" | tr '\n' ' ')" = "folded svg " ] ||
	fail "flame --format <Tab> offers: $(complete "$tt" flame --format "" | tr '\n' ' ')"
# Every option of every command that takes a value: its choices, if any.
nr_choice_opts=0
for cmd in $commands; do
	for opt in $("$tt" "$cmd" --help | grep -oE -- '--[a-z][a-z0-9-]*=' | tr -d = | sort -u); do
		values=$("$tt" "$cmd" "$opt=%" 2>&1 >/dev/null |
			sed -n "s/^tracetool $cmd: $opt: '%' is not one of \([a-z0-9|]*\)\$/\1/p" | tr '|' '\n' | sort)
		[ -n "$values" ] || continue
		nr_choice_opts=$((nr_choice_opts + 1))
		[ "$(complete "$tt" "$cmd" "$opt" = "")" = "$values" ] ||
			fail "$cmd $opt= offers $(complete "$tt" "$cmd" "$opt" = "" | tr '\n' ' '), the parser takes $(echo $values)"
		for v in $values; do
			"$tt" "$cmd" "$opt=$v" 2>&1 | grep -q -- "$opt: '$v'" && fail "$cmd $opt=$v refused"
		done
	done
done
# --format of 9 commands, --sort of 5, flame's --weight.
[ "$nr_choice_opts" -ge 15 ] || fail "only $nr_choice_opts options with a fixed set of values"
# record: after its options (and "--"), a command, then that command's files.
[ "$(complete "$tt" record -F 99 -- printen)" = "printenv" ] ||
	fail "record -- printen offers: $(complete "$tt" record -F 99 -- printen | tr '\n' ' ')"
[ "$(complete "$tt" record -o x.zst printen)" = "printenv" ] ||
	fail "record CMD offers: $(complete "$tt" record -o x.zst printen | tr '\n' ' ')"
mkdir -p "$tmp/t/sub"
touch "$tmp/t/a.zst" "$tmp/t/b.txt"
[ "$(complete "$tt" summary "$tmp/t/" | tr '\n' ' ')" = "$tmp/t/a.zst $tmp/t/sub " ] ||
	fail "trace files offered: $(complete "$tt" summary "$tmp/t/" | tr '\n' ' ')"
[ -z "$(complete "$tt" summary --function = "")" ] || fail "something offered for a regex"
[ "$(complete "$tt" record -- ls "$tmp/t/b" | tr '\n' ' ')" = "$tmp/t/b.txt " ] ||
	fail "record's command's files: $(complete "$tt" record -- ls "$tmp/t/b" | tr '\n' ' ')"
echo "1 passed, 0 failed"
