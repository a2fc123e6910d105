# SPDX-License-Identifier: MIT
# bash completion for tracetool, installed as
# <bash-completion's completionsdir>/tracetool (bash-completion loads it on the
# first <Tab> after "tracetool"); or source it from ~/.bashrc.
#
# The commands and options come from the tracetool being completed
# (`tracetool --help`, `tracetool COMMAND --help`, run at each completion:
# a few milliseconds), so this file never falls behind the program. Only the values of a few options
# (--format, --sort, --weight, --fail-on) are listed here.
# tests/packaging/check_completion.sh checks it against the real --help.

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

	case "$opt" in
	--format)
		case "$cmd" in
		info) words=(table json) ;;
		flame) words=(folded svg) ;;
		*) words=(table csv json) ;;
		esac
		mapfile -t COMPREPLY < <(compgen -W "${words[*]}" -- "$cur")
		return 0
		;;
	--sort)
		mapfile -t COMPREPLY < <(compgen -W "total self calls mean max name" -- "$cur")
		return 0
		;;
	--weight)
		mapfile -t COMPREPLY < <(compgen -W "self calls" -- "$cur")
		return 0
		;;
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
	*) return 0 ;; # a value nobody can guess: a regex, a time, a thread
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
