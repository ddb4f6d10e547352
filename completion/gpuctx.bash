# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bash completion for gpuctx(8): subcommands, options, device kinds, trace files (*.gctx).
# The subcommands and options are read from the installed binary's own --help, so they never
# drift from it; device kinds, formats and severities are the values --help describes.

_gpuctx_kinds="nvidiactl nvidia nvidia-uvm kfd drm-render"

# $1: gpuctx binary, $2: subcommand -> its options, as its --help lists them
_gpuctx_opts()
{
	"$1" "$2" --help 2>/dev/null | awk '/^ +-/ {
		for (i = 1; i <= NF && $i ~ /^-/; i++) { sub(/,$/, "", $i); print $i }
	}'
}

# $1: gpuctx binary -> its subcommands (the "Commands:" section of gpuctx --help)
_gpuctx_cmds()
{
	"$1" --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
		on && /^  [a-z]/ { print $1 }'
}

# COMPREPLY from words that may contain ':', which bash splits words at by default
_gpuctx_reply()
{
	local cur=$1 w
	shift
	COMPREPLY=()
	for w in "$@"; do
		[[ $w == "$cur"* ]] || continue
		[[ $COMP_WORDBREAKS == *:* && $cur == *:* ]] && w=${w##*:}
		COMPREPLY+=("$w")
	done
}

# files (and directories) whose name matches the glob $2
_gpuctx_files()
{
	local IFS=$'\n'
	compopt -o filenames 2>/dev/null
	if [[ $2 == '*' ]]; then
		COMPREPLY=($(compgen -f -- "$1"))
	else
		COMPREPLY=($(compgen -f -X "!$2" -- "$1") $(compgen -d -- "$1"))
	fi
}

_gpuctx()
{
	local bin=${COMP_WORDS[0]} line=${COMP_LINE:0:COMP_POINT} cur prev cmd="" i
	local -a w
	# words split at blanks only, so that PATH:KIND stays one word
	read -ra w <<<"$line"
	if [[ $line == *[[:blank:]] || ${#w[@]} == 0 ]]; then
		cur=""
	else
		cur=${w[${#w[@]} - 1]}
		unset 'w[${#w[@]}-1]'
	fi
	prev=${w[${#w[@]} - 1]}
	[[ $bin == gpuctx || -x $bin ]] || bin=gpuctx

	for ((i = 1; i < ${#w[@]}; i++)); do
		if [[ -z $cmd && ${w[i]} != -* ]]; then
			cmd=${w[i]}
		elif [[ -n $cmd && ${w[i]} == -- ]]; then
			# the traced command: complete it as the shell would
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			elif ((i + 1 == ${#w[@]})); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				_gpuctx_files "$cur" '*'
			fi
			return 0
		fi
	done

	if [[ -z $cmd ]]; then
		_gpuctx_reply "$cur" $(_gpuctx_cmds "$bin") -h --help -V --version
		return 0
	fi

	case $prev in
	--device)
		if [[ $cur == *:* ]]; then
			local k kinds=()
			for k in $_gpuctx_kinds; do kinds+=("${cur%:*}:$k"); done
			_gpuctx_reply "$cur" "${kinds[@]}"
		else
			compopt -o filenames -o nospace 2>/dev/null
			local IFS=$'\n'
			COMPREPLY=($(compgen -f -- "${cur:-/dev/}"))
		fi
		return 0
		;;
	-f | --format)
		_gpuctx_reply "$cur" perfetto chrome
		return 0
		;;
	--fail-on)
		_gpuctx_reply "$cur" error warning never
		return 0
		;;
	-p | --pid)
		_gpuctx_reply "$cur" $(cd /proc && compgen -G '[0-9]*')
		return 0
		;;
	--cgroup)
		compopt -o filenames 2>/dev/null
		local IFS=$'\n'
		COMPREPLY=($(compgen -d -- "${cur:-/sys/fs/cgroup/}"))
		return 0
		;;
	--duration | --hold-timeout | --ring-size)
		return 0
		;;
	-o | --output)
		if [[ $cmd == export ]]; then
			_gpuctx_files "$cur" '*'
		else
			_gpuctx_files "$cur" '*.gctx'
		fi
		return 0
		;;
	--libcuda | --libhip)
		_gpuctx_files "$cur" '*.so*'
		return 0
		;;
	--perfetto | --chrome | --junit)
		_gpuctx_files "$cur" '*'
		return 0
		;;
	--html)
		_gpuctx_files "$cur" '*.html'
		return 0
		;;
	esac

	if [[ $cur == -* ]]; then
		local opts
		opts=$(_gpuctx_opts "$bin" "$cmd")
		# check takes record's options too
		[[ $cmd == check ]] && opts+=" $(_gpuctx_opts "$bin" record)"
		_gpuctx_reply "$cur" $opts --help
		return 0
	fi
	case $cmd in
	record) ;;
	version) ;;
	*) _gpuctx_files "$cur" '*.gctx' ;;
	esac
	return 0
}
complete -F _gpuctx gpuctx
