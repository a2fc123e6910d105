# SPDX-License-Identifier: MIT
# bash completion for tracetool, installed as
# <bash-completion's completionsdir>/tracetool (bash-completion loads it on the
# first <Tab> after "tracetool"); or source it from ~/.bashrc.
#
# The commands, options and option values come from the tracetool being
# completed, run at each completion (a few milliseconds), so this file never
# falls behind the program: the commands from `tracetool --help`, the options
# from `tracetool COMMAND --help`, and the values of an option with a fixed
# set of them from the parser itself, which names them when it refuses a
# value (`tracetool export --format=%` says "... is not one of parquet|csv").
# Only --fail-on's pattern (KEY:+PCT) is written here.
# tests/packaging/check_completion.sh checks it against the real program.

_tracetool_commands()
{
	"$1" --help 2>/dev/null | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p'
}

# Long options of a command (or of tracetool itself, with no command), with
# their '=' when they take a value.
_tracetool_options()
{
	"$1" ${2:+"$2"} --help 2>/dev/null |
		sed -n 's/^ *\(-[^ ,], \)\{0,1\}\(--[a-z][a-z0-9-]*\(=\)\{0,1\}\).*/\2/p' | sort -u
}

# The values of option $3 of command $2: what the parser lists when it
# refuses one (options.h, tt_options_choice()); nothing for a free value (a
# regex, a time, a thread). No trace is named, so nothing is read.
_tracetool_values()
{
	"$1" "$2" "$3=%" 2>&1 >/dev/null |
		sed -n 's/.* is not one of \([a-z0-9][a-z0-9|]*\)$/\1/p' | tr '|' '\n'
}

_tracetool()
{
	local tt=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev="" opt="" cmd="" i w
	local -a words

	# "--format=cs": bash splits at '=' (COMP_WORDBREAKS) into --format, =, cs.
	if [ "$COMP_CWORD" -ge 2 ] && [ "${COMP_WORDS[COMP_CWORD-1]}" = "=" ]; then
		opt=${COMP_WORDS[COMP_CWORD-2]}
	elif [ "$cur" = "=" ] && [ "$COMP_CWORD" -ge 1 ]; then
		opt=${COMP_WORDS[COMP_CWORD-1]}
		cur=""
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
	fi
	[ "$COMP_CWORD" -ge 1 ] && prev=${COMP_WORDS[COMP_CWORD-1]}

	# The command is the first word after tracetool's own options.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case "$w" in
		-*) ;;
		*)
			cmd=$w
			break
			;;
		esac
	done

	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			mapfile -t words < <(_tracetool_options "$tt")
			mapfile -t COMPREPLY < <(compgen -W "${words[*]}" -- "$cur")
		else
			mapfile -t words < <(_tracetool_commands "$tt")
			mapfile -t COMPREPLY < <(compgen -W "${words[*]}" -- "$cur")
		fi
		return 0
	fi

	# record [-F HZ] [-o FILE] [--] CMD [ARG...]: a command, then its own
	# arguments (files), once past record's options.
	if [ "$cmd" = record ]; then
		local j at=0
		for ((j = i + 1; j < COMP_CWORD; j++)); do
			w=${COMP_WORDS[j]}
			if [ "$at" -gt 0 ]; then
				break
			elif [ "$w" = "--" ]; then
				at=$((j + 1))
			elif [ "$w" = "-F" ] || [ "$w" = "-o" ]; then
				j=$((j + 1))
			elif [[ $w != -* ]]; then
				at=$j
			fi
		done
		# The word being completed is CMD itself (not -o's or -F's value).
		[ "$at" -eq 0 ] && [ "$j" -eq "$COMP_CWORD" ] && [[ $cur != -* ]] && at=$COMP_CWORD
		if [ "$at" -gt 0 ]; then
			if [ "$at" -eq "$COMP_CWORD" ]; then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
				compopt -o filenames 2>/dev/null
			fi
			return 0
		fi
	fi

	# "--sort KEY" as well as "--sort=KEY".
	if [ -z "$opt" ] && [[ $prev == --?* ]] && [[ $prev != *=* ]] && [[ $cur != -* ]]; then
		mapfile -t words < <(_tracetool_values "$tt" "$cmd" "$prev")
		if [ ${#words[@]} -gt 0 ]; then
			mapfile -t COMPREPLY < <(compgen -W "${words[*]}" -- "$cur")
			return 0
		fi
	fi

	case "$opt" in
	--fail-on)
		mapfile -t COMPREPLY < <(compgen -W "total:+ mean:+ p50:+ p90:+ p99:+ calls:+" -- "$cur")
		compopt -o nospace 2>/dev/null
		return 0
		;;
	--output)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	"") ;;
	*) # a fixed set of values, or one nobody can guess: a regex, a time
		mapfile -t words < <(_tracetool_values "$tt" "$cmd" "$opt")
		[ ${#words[@]} -gt 0 ] && mapfile -t COMPREPLY < <(compgen -W "${words[*]}" -- "$cur")
		return 0
		;;
	esac

	case "$prev" in
	-o)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	-t | -f) return 0 ;;
	esac

	if [[ $cur == -* ]]; then
		mapfile -t words < <(_tracetool_options "$tt" "$cmd")
		mapfile -t COMPREPLY < <(compgen -W "${words[*]}" -- "$cur")
		# An option that takes a value: no space after its '='.
		[ ${#COMPREPLY[@]} -eq 1 ] && [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return 0
	fi
	# Trace files, and directories to reach them.
	mapfile -t COMPREPLY < <(compgen -f -X '!*.zst' -- "$cur"; compgen -d -- "$cur")
	compopt -o filenames 2>/dev/null
	return 0
}

complete -F _tracetool tracetool
