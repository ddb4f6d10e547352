#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion (completion/gpuctx.bash) offers the subcommands, each subcommand's
# options, the device kinds after --device PATH:, the values of -f and --fail-on, and trace
# files. Run as bash's programmable completion runs it: COMP_WORDS, COMP_CWORD, COMP_LINE and
# COMP_POINT set, the function called, COMPREPLY read.
# Usage: completion.sh COMPLETION_FILE DIR_OF_GPUCTX
set -u
. "$1"
export PATH=$2:$PATH
cd "$(mktemp -d /tmp/gpuctx-comp.XXXXXX)" || exit 1
trap 'rm -rf "$PWD"' EXIT
touch job.gctx other.gctx notes.txt
mkdir traces
bad=0

# complete LINE: COMPREPLY for the cursor at the end of "gpuctx LINE", as bash splits words
complete_line() {
	COMP_LINE="gpuctx $1"
	COMP_POINT=${#COMP_LINE}
	local IFS=$' \t\n'
	read -ra COMP_WORDS <<<"$COMP_LINE"
	[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_gpuctx
	printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# expect LINE WANT: the sorted candidates for LINE are exactly WANT
expect() {
	local got
	got=$(complete_line "$1")
	if [ "$got" = "$2" ]; then
		echo "ok   gpuctx $1<TAB> -> $got"
	else
		echo "FAIL gpuctx $1<TAB> -> '$got', expected '$2'"
		bad=1
	fi
}
# expect_has LINE WORD...: the candidates include each WORD
expect_has() {
	local line=$1 got w
	shift
	got=" $(complete_line "$line") "
	for w in "$@"; do
		if [[ $got != *" $w "* ]]; then
			echo "FAIL gpuctx $line<TAB> -> '$got' lacks $w"
			bad=1
			return
		fi
	done
	echo "ok   gpuctx $line<TAB> has $*"
}

expect_has "" record report check export version --help
expect "re" "record report"
expect "record --d" "--device --duration"
expect "record --no-" "--no-api --no-hold --no-stacks"
expect "check --fail" "--fail-on"
expect_has "check --l" --libcuda --libhip --launches
expect "check --fail-on " "error never warning"
expect "report --fail-on w" "warning"
expect "export -f " "chrome perfetto"
expect "record --device /dev/nvidia0:" "drm-render kfd nvidia nvidia-uvm nvidiactl"
expect "record --device /dev/nvidia0:nvidia-" "nvidia-uvm"
expect "report " "job.gctx other.gctx traces"
expect "check j" "job.gctx"
expect "export -o job.gctx o" "other.gctx"
expect_has "check -- tru" true
exit $bad
