#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Hardening, second round (issue 27): holds, output files and the cgroup walk, one test per
# defect, each failing on fc0e731 (GPUCTX=that build shows it). Acts as the traced user
# (setpriv, runuser) or as a careless root. Scratch files and a scratch cgroup only.
# Needs root. Usage: tests/integration/hardening.sh [TEST...]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
G=${GPUCTX:-$top/build/gpuctx}
D=$top/build/doubles
[ "$(id -u)" = 0 ] || { echo "hardening: FAIL: needs root" >&2; exit 1; }

T=$(mktemp -d /tmp/gpuctx-hard.XXXXXX)
chmod 755 "$T"
CG_TOP=""
cleanup() {
	[ -n "$CG_TOP" ] && cg_remove "$CG_TOP"
	rm -rf "$T"
}
trap cleanup EXIT

pass=0
fail=0
failed=()
result() { # NAME RC [why]
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
		echo "ok   hard_$1"
	else
		fail=$((fail + 1))
		failed+=("$1")
		echo "FAIL hard_$1: ${3:-}"
		[ -s "$T/$1.err" ] && sed 's/^/     | /' "$T/$1.err" | tail -15
	fi
}

# A small trace to run check and export on.
small_trace() {
	[ -s "$T/small.gctx" ] || "$G" record -q -o "$T/small.gctx" -- true >/dev/null 2>&1
}

# 9. check --junit follows the rules of every output: a device node, a FIFO or a symlink at
# the path is refused before anything runs, and left as it was.
t_junit_output() {
	local name=junit_output rc=0 what st
	small_trace
	mknod "$T/jnode" c 1 3 # a scratch /dev/null
	mkfifo "$T/jfifo"
	echo "root's file" >"$T/jtarget"
	ln -s "$T/jtarget" "$T/jlink.xml"
	for what in jnode jfifo jlink.xml; do
		timeout 20 "$G" check --junit "$T/$what" "$T/small.gctx" >/dev/null 2>>"$T/$name.err"
		st=$?
		[ $st = 2 ] || { echo "check --junit $what: exit $st, not 2" >>"$T/$name.err"; rc=1; }
	done
	timeout 20 "$G" check --junit "$T/jnode" -- true >/dev/null 2>>"$T/$name.err"
	[ -c "$T/jnode" ] || { echo "the device node was replaced" >>"$T/$name.err"; rc=1; }
	[ -p "$T/jfifo" ] || { echo "the FIFO was replaced" >>"$T/$name.err"; rc=1; }
	[ -L "$T/jlink.xml" ] && [ "$(cat "$T/jtarget")" = "root's file" ] ||
		{ echo "the symlink or its target changed" >>"$T/$name.err"; rc=1; }
	grep -q "refusing to write $T/jnode: it is a device" "$T/$name.err" ||
		{ echo "no one-line refusal" >>"$T/$name.err"; rc=1; }
	# a regular file is still replaced, as a private file (0600 like every output)
	echo old >"$T/ok.xml"
	"$G" check --junit "$T/ok.xml" "$T/small.gctx" >/dev/null 2>>"$T/$name.err"
	grep -q "<testsuites" "$T/ok.xml" || { echo "no JUnit written" >>"$T/$name.err"; rc=1; }
	[ "$(stat -c %a "$T/ok.xml")" = 600 ] || { echo "mode $(stat -c %a "$T/ok.xml")" >>"$T/$name.err"; rc=1; }
	ls -a "$T" | grep -q '^\.ok\.xml\.' && { echo "temporary file left" >>"$T/$name.err"; rc=1; }
	result $name $rc "check --junit wrote over what is not a regular file"
}

# cg_remove DIR: remove a cgroup tree, deepest first, without recursion limits
cg_remove() {
	python3 - "$1" <<'PY'
import os, sys
top = sys.argv[1]
if not os.path.isdir(top):
    sys.exit(0)
os.chdir(top)
depth = 0
while True:   # down the single chain the test built
    subs = [d for d in os.listdir(".") if os.path.isdir(d)]
    if not subs:
        break
    os.chdir(subs[0]); depth += 1
for _ in range(depth):
    here = os.path.basename(os.getcwd())
    os.chdir(".."); os.rmdir(here)
os.chdir("/"); os.rmdir(top)
PY
}

# 11. --cgroup over a deeply nested subtree (a delegated cgroup lets a user build one): 400
# levels, then 20 with 200-byte names (paths past PATH_MAX). gpuctx runs with a 1 MiB stack,
# where 400 levels of the old recursion crash it (8 MiB takes ~2,000 levels, which take
# minutes to build and remove). No crash; a process 200 deep is followed; the cgroups past
# the bounds are reported.
t_cgroup_deep() {
	local name=cgroup_deep rc=0 root sl st
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$root" ] || { echo "SKIP hard_$name: no cgroup v2 hierarchy mounted"; return; }
	CG_TOP=$root/gpuctx-deep.$$
	python3 -c 'import time; time.sleep(60)' &
	sl=$!
	python3 - "$CG_TOP" $sl <<'PY' 2>"$T/$name.err" || { kill $sl; result $name 1 "cannot build the tree"; return; }
import os, sys
os.mkdir(sys.argv[1])
os.chdir(sys.argv[1])
for i in range(420):
    n = "c" if i < 400 else "l" * 200
    os.mkdir(n)
    os.chdir(n)
    if i == 199:
        open("cgroup.procs", "w").write(sys.argv[2])
PY
	(ulimit -s 1024 && exec timeout 60 "$G" record -q -o "$T/$name.gctx" --cgroup "$CG_TOP" \
		--duration 0.5) >/dev/null 2>>"$T/$name.err"
	st=$?
	kill $sl 2>/dev/null || { wait $sl; echo "the sleeper died early: status $?" >>"$T/$name.err"; }
	wait $sl 2>/dev/null
	[ $st = 0 ] || { echo "record exited $st (139: SIGSEGV, the recursion)" >>"$T/$name.err"; rc=1; }
	grep -q "cgroups under $CG_TOP not read" "$T/$name.err" ||
		{ echo "the cgroups left out were not reported" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" 2>>"$T/$name.err" | python3 -c '
import json, sys
pids = [p["pid"] for p in json.load(sys.stdin)["processes"]]
sys.exit(0 if int(sys.argv[1]) in pids else 1)' $sl ||
		{ echo "the process 200 cgroups deep ($sl) was not followed" >>"$T/$name.err"; rc=1; }
	cg_remove "$CG_TOP" && CG_TOP=""
	result $name $rc
}

all_tests=(junit_output cgroup_deep)
[ $# -gt 0 ] && all_tests=("$@")
for t in "${all_tests[@]}"; do
	"t_$t"
done
echo "hardening: $pass passed, $fail failed${failed:+: ${failed[*]}}"
[ $fail = 0 ]
