#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The HTML page (gpuctx report --html, gpuctx check --html) as a person would see it: record
# workloads over the emulated driver (build/fakegpu), write their pages, and open each in real
# headless Chromium (tests/html/check_page.py, over the DevTools protocol): the demo's page, a
# merged trace of two hosts, a big trace (10,000 processes of a fork storm beside the demo),
# and a hostile one (a program named and called with markup, quotes, script, javascript: and
# bidi controls); and the rules of every output file for --html. Screenshots are kept in
# $GPUCTX_HTML_SHOTS when set.
# Needs root (recording) and Debian's chromium (tools/install-deps.sh test); without chromium
# the pages are still written and checked, and the browser's part is skipped with the reason.
# Usage: tests/html/run.sh [TEST...]
#   TEST: demo merged big hostile output_rules
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
G=$top/build/gpuctx
W=$top/build/workloads
HERE=$top/tests/html
SUITE=html
. "$top/tests/lib.sh"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}

[ -n "$CHROMIUM" ] ||
	echo "html: no chromium (Debian package chromium: tools/install-deps.sh test): the pages are checked, not opened"
if [ "$(id -u)" != 0 ]; then
	echo "html: FAIL: these tests record workloads and need root" >&2
	exit 1
fi
[ -x "$G" ] || { echo "html: FAIL: build/gpuctx missing (make all)" >&2; exit 1; }

T=$(mktemp -d /tmp/gpuctx-html.XXXXXX)
SHOTS=${GPUCTX_HTML_SHOTS:-$T}
mkdir -p "$SHOTS"
MNT=$T/gpu
cleanup() {
	fakegpu_stop
	keep_or_remove GPUCTX_IT_KEEP "$T"
}
trap cleanup EXIT
fakegpu_up # on $MNT; DEVS names its nodes to gpuctx

RESULT_FILES=(err)
RESULT_TAIL=30
# after an ok, what it measured: the page's size and time, Chromium's load
RESULT_OK_GREP='^(report --html|page )'

# page NAME MAX_MS TRACE...: NAME.html from `report --html` in at most MAX_MS milliseconds,
# and NAME.json
page() {
	local name=$1 max=$2 t0 ms
	shift 2
	t0=$(date +%s%N)
	"$G" report --html "$T/$name.html" "$@" >/dev/null 2>>"$T/$name.err" || return 1
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "report --html: $ms ms, $(stat -c %s "$T/$name.html") bytes" >>"$T/$name.err"
	[ "$ms" -le "$max" ] || { echo "report --html took $ms ms (limit $max)" >>"$T/$name.err"; return 1; }
	"$G" report --json "$@" >"$T/$name.json" 2>>"$T/$name.err" || return 1
}

# browse NAME [check_page options]: open NAME.html in Chromium
browse() {
	local name=$1
	shift
	if [ -z "$CHROMIUM" ]; then
		echo "SKIP $name in Chromium: no chromium"
		return 0
	fi
	python3 "$HERE/check_page.py" "$CHROMIUM" "$T/$name.html" "$T/$name.json" \
		"$SHOTS/$name.png" "$@" >>"$T/$name.err" 2>&1
}

# The demo: its page in well under a second; check --html writes the same page and fails
# the job; the page in Chromium.
t_demo() {
	local name=demo rc=0 v
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -- "$W/wl_demo" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err"
	page $name 500 "$T/$name.gctx" || rc=1
	"$G" check --html "$T/$name.check.html" --junit "$T/$name.xml" "$T/$name.gctx" \
		2>>"$T/$name.out"
	v=$?
	[ "$v" = 86 ] || { echo "check --html: exit $v, want 86" >>"$T/$name.err"; rc=1; }
	cmp -s "$T/$name.html" "$T/$name.check.html" ||
		{ echo "check --html and report --html differ" >>"$T/$name.err"; rc=1; }
	[ $rc = 0 ] && { browse $name || rc=1; }
	result $name $rc
}

# Two hosts (UTS namespaces), merged: side by side, each with its verdict.
t_merged() {
	local name=merged rc=0 h wl
	if ! unshare -u true 2>/dev/null; then
		echo "SKIP $name: no UTS namespaces (unshare -u)"
		return
	fi
	for h in nodea nodeb; do
		wl=wl_fork_child_ioctl
		[ $h = nodeb ] && wl=wl_fork_exec_own
		unshare -u sh -c 'hostname "$1" && shift && exec "$@"' sh $h \
			"$G" record -q -o "$T/$name.$h.gctx" "${DEVS[@]}" -- "$W/$wl" "$MNT" \
			>>"$T/$name.out" 2>>"$T/$name.err" || rc=1
	done
	"$G" merge -o "$T/$name.gctx" "$T/$name.nodea.gctx" "$T/$name.nodeb.gctx" \
		2>>"$T/$name.err" || rc=1
	page $name 500 "$T/$name.gctx" || rc=1
	grep -q '<h2 class="hostname">nodeb</h2>' "$T/$name.html" ||
		{ echo "no section for nodeb" >>"$T/$name.err"; rc=1; }
	[ $rc = 0 ] && { browse $name || rc=1; }
	result $name $rc
}

# 10,000 processes of a fork storm, then the demo, in one trace: the page stays small and
# readable, the demo's incident in it, the rest folded and counted.
t_big() {
	local name=big rc=0 n
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -- sh -c \
		'"$1/wl_fork_storm" "$2" 10000 && "$1/wl_demo" "$2"' sh "$W" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err" || rc=1
	page $name 1000 "$T/$name.gctx" || rc=1
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"]))' \
		"$T/$name.json")
	[ "${n:-0}" -ge 10000 ] || { echo "only $n processes in the trace" >>"$T/$name.err"; rc=1; }
	[ "$(stat -c %s "$T/$name.html")" -le 1000000 ] ||
		{ echo "page over 1 MB" >>"$T/$name.err"; rc=1; }
	grep -q "folded: no GPU state" "$T/$name.html" ||
		{ echo "no folded count" >>"$T/$name.err"; rc=1; }
	[ $rc = 0 ] && { browse $name --max-load-ms 5000 || rc=1; }
	result $name $rc
}

# The traced program chose its name and its arguments: markup, quotes, script, a javascript:
# URL, bidi controls. Nothing of it becomes an element, an attribute or a script.
t_hostile() {
	local name=hostile rc=0 exe
	exe="$T/<img src=x onerror=alert(1)>\"'<b>"$'\u202e'"gpj"
	ln -s "$W/wl_demo" "$exe"
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -- "$exe" "$MNT" \
		'</script><script>alert(2)</script>' 'javascript:alert(3)' '"><svg onload=alert(4)>' \
		>"$T/$name.out" 2>"$T/$name.err"
	page $name 500 "$T/$name.gctx" || rc=1
	[ $rc = 0 ] && { browse $name --hostile || rc=1; }
	result $name $rc
}

# --html follows the rules of every output: a device node, a FIFO or a symlink at the path
# is refused before anything runs, and left as it was; a regular file is replaced, 0600.
t_output_rules() {
	local name=output_rules rc=0 what st cmd
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -- true >/dev/null 2>>"$T/$name.err"
	mknod "$T/hnode" c 1 3 # a scratch /dev/null
	mkfifo "$T/hfifo"
	echo "root's file" >"$T/htarget"
	ln -s "$T/htarget" "$T/hlink.html"
	for what in hnode hfifo hlink.html; do
		for cmd in check report; do
			timeout 20 "$G" $cmd --html "$T/$what" "$T/$name.gctx" >/dev/null \
				2>>"$T/$name.err"
			st=$?
			[ $st = 2 ] || { echo "$cmd --html $what: exit $st, not 2" >>"$T/$name.err"; rc=1; }
		done
	done
	timeout 20 "$G" check --html "$T/hnode" -- true >/dev/null 2>>"$T/$name.err"
	[ -c "$T/hnode" ] || { echo "the device node was replaced" >>"$T/$name.err"; rc=1; }
	[ -p "$T/hfifo" ] || { echo "the FIFO was replaced" >>"$T/$name.err"; rc=1; }
	[ -L "$T/hlink.html" ] && [ "$(cat "$T/htarget")" = "root's file" ] ||
		{ echo "the symlink or its target changed" >>"$T/$name.err"; rc=1; }
	grep -q "refusing to write $T/hnode: it is a device" "$T/$name.err" ||
		{ echo "no one-line refusal" >>"$T/$name.err"; rc=1; }
	echo old >"$T/ok.html"
	"$G" check --html "$T/ok.html" "$T/$name.gctx" >/dev/null 2>>"$T/$name.err"
	grep -q "NO PROBLEM FOUND" "$T/ok.html" || { echo "no page written" >>"$T/$name.err"; rc=1; }
	[ "$(stat -c %a "$T/ok.html")" = 600 ] || { echo "mode $(stat -c %a "$T/ok.html")" >>"$T/$name.err"; rc=1; }
	ls -a "$T" | grep -q '^\.ok\.html\.' && { echo "temporary file left" >>"$T/$name.err"; rc=1; }
	result $name $rc
}

all=(demo merged big hostile output_rules)
[ $# -gt 0 ] && all=("$@")
for t in "${all[@]}"; do
	"t_$t"
done
suite_summary
