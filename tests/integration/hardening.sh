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
SUITE=hardening
. "$top/tests/lib.sh"
[ "$(id -u)" = 0 ] || { echo "hardening: FAIL: needs root" >&2; exit 1; }

T=$(mktemp -d /tmp/gpuctx-hard.XXXXXX)
chmod 755 "$T"
CG_TOP=""
cleanup() {
	[ -n "$CG_TOP" ] && cg_remove "$CG_TOP"
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT

RESULT_LABEL=hard_ # result NAME RC [WHY]: "FAIL hard_NAME: WHY", then NAME.err's last lines
RESULT_WHY=1
RESULT_FILES=(err)
RESULT_TAIL=15

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

# A copy of the CUDA double anyone can map, in a directory of its own.
cuda_copy() { # DIR
	mkdir -p "$1" && cp "$D/libcuda.so.1" "$1/" && chmod 755 "$1" && chmod 644 "$1/libcuda.so.1"
}
need_double() {
	[ -e "$D/libcuda.so.1" ] && return 0
	echo "SKIP hard_$1: build/doubles/libcuda.so.1 was not built (CUDA headers missing)"
	return 1
}
# gap_of JSON LIB: the api-coverage gap reason of LIB in a report, or "held"/"none"
gap_of() {
	python3 - "$1" "$2" <<'PY'
import json, sys
cov = json.load(open(sys.argv[1])).get("api_coverage", {})
g = [x["reason"] for x in cov.get("gaps", []) if x.get("lib", "").endswith(sys.argv[2])]
h = [x for x in cov.get("holds", []) if x.get("lib", "").endswith(sys.argv[2])]
print(g[0] if g else "held" if h else "none")
PY
}

# 7a. record -- runuser -u nobody -- JOB: runuser waits for its child with WUNTRACED and stops
# itself when the child stops; a hold left it stopped for good. Now the job is not held (the
# window is reported) and the run ends with the job's status.
t_hold_runuser() {
	local name=hold_runuser rc=0 st g
	need_double $name || return
	cuda_copy "$T/ru"
	timeout 60 "$G" record -q -o "$T/$name.gctx" -- runuser -u nobody -- /usr/bin/python3 -c \
		"import ctypes; ctypes.CDLL('$T/ru/libcuda.so.1'); exit(7)" >/dev/null 2>"$T/$name.err"
	st=$?
	[ $st = 7 ] || { echo "record exited $st, not the job's 7 (124: hung, runuser stopped)" >>"$T/$name.err"; rc=1; }
	pkill -KILL -f "ctypes.CDLL('$T/ru/" 2>/dev/null
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	g=$(gap_of "$T/$name.json" libcuda.so.1 2>>"$T/$name.err")
	[ "$g" = not-held-watched ] || { echo "coverage of the library: $g, not not-held-watched" >>"$T/$name.err"; rc=1; }
	result $name $rc
}

# 7b. record -p an interactive shell: the job it starts must not be reported Stopped.
t_hold_shell() {
	local name=hold_shell rc=0
	need_double $name || return
	cuda_copy "$T/sh"
	python3 - "$G" "$T/$name.gctx" "$T/sh/libcuda.so.1" >"$T/$name.out" 2>"$T/$name.err" <<'PY' || rc=1
import os, pty, select, subprocess, sys, time
g, out, lib = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.environ["PS1"] = "PROMPT$ "
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def read_until(word, secs):
    buf, end = b"", time.time() + secs
    while time.time() < end and word not in buf:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return buf
read_until(b"PROMPT$ ", 10)
rec = subprocess.Popen([g, "record", "-q", "-o", out, "--hold-timeout", "2000", "-p", str(pid)],
                       stderr=subprocess.PIPE, text=True)
for line in rec.stderr:
    if "attached" in line:
        break
# the marker is computed: the terminal's echo of the command line does not contain it
os.write(fd, ("python3 -c \"import ctypes; ctypes.CDLL('%s')\"; echo job-$((40+2))-done-$?\n"
              % lib).encode())
buf = read_until(b"job-42-done-", 30)
os.kill(pid, 9)
os.waitpid(pid, 0)
rec.wait(timeout=30)
if b"Stopped" in buf or b"job-42-done-0" not in buf:
    sys.exit("the shell saw its job stop, or the job did not end: %r" % buf[-300:])
PY
	result $name $rc
}

# 7c. A parent waiting with WUNTRACED (as any wrapper may) never sees its child stop. (A
# parent that has not waited yet and shows no other sign is not known to: the child waits.)
t_hold_waiter() {
	local name=hold_waiter rc=0 g
	need_double $name || return
	cuda_copy "$T/wt"
	timeout 60 "$G" record -q -o "$T/$name.gctx" -- /usr/bin/python3 -c "
import ctypes, os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(0.3)
    ctypes.CDLL('$T/wt/libcuda.so.1')
    os._exit(0)
while True:
    _, st = os.waitpid(pid, os.WUNTRACED)
    if os.WIFSTOPPED(st):
        print('the parent saw its child stop', file=sys.stderr)
        os.kill(pid, 18)
        sys.exit(1)
    sys.exit(os.waitstatus_to_exitcode(st))" >/dev/null 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	g=$(gap_of "$T/$name.json" libcuda.so.1 2>>"$T/$name.err")
	[ "$g" = not-held-watched ] || { echo "coverage of the library: $g" >>"$T/$name.err"; rc=1; }
	result $name $rc
}

# A hold that lasts: record's job waits for NAME.go, then maps the CUDA double; sets rec, wl
# (the job) and rel (the releaser).
hold_victim() { # NAME DIR
	cuda_copy "$2"
	"$G" record -q -o "$T/$1.gctx" --hold-timeout 10000 -- /usr/bin/python3 -c "
import ctypes, os, time
open('$T/$1.pid', 'w').write(str(os.getpid()))
while not os.path.exists('$T/$1.go'):
    time.sleep(0.01)
ctypes.CDLL('$2/libcuda.so.1')
open('$T/$1.done', 'w').write('done')" >/dev/null 2>"$T/$1.err" &
	rec=$!
	for _ in $(seq 100); do [ -s "$T/$1.pid" ] && break; sleep 0.05; done
	wl=$(cat "$T/$1.pid" 2>/dev/null)
	sleep 0.3 # the releaser has started and armed holding
	rel=$(pgrep -P $rec -x gctx-resume)
}

held_then() { # NAME: wait until the workload is held; 0 if it was
	local state
	touch "$T/$1.go"
	for _ in $(seq 100); do
		state=$(awk '{print $3}' "/proc/$wl/stat" 2>/dev/null)
		[ "$state" = T ] && return 0
		sleep 0.05
	done
	echo "the workload was not held (state ${state:-gone})" >>"$T/$1.err"
	return 1
}

resumed_soon() { # NAME WHAT
	for _ in $(seq 20); do [ -e "$T/$1.done" ] && return 0; sleep 0.05; done
	echo "held pid $wl still stopped 1 s after $2" >>"$T/$1.err"
	kill -CONT "$wl" 2>/dev/null
	return 1
}

# 12. `pkill -9 gpuctx` (here: the same match, limited to this run's processes) while a
# process is held: what it kills must not include what resumes the hold.
t_hold_pkill() {
	local name=hold_pkill rc=0 rec wl rel victims
	need_double $name || return
	hold_victim $name "$T/pk"
	[ -n "$wl" ] || { kill -KILL $rec; result $name 1 "the workload never started"; return; }
	kill -STOP $rec # the collector cannot release: the hold lasts
	held_then $name || rc=1
	# pkill -9 gpuctx, and pkill -9 -f gpuctx, over this run's processes only
	victims="$rec $(pgrep -P $rec gpuctx | grep -vx "$wl") $(pgrep -f -P $rec gpuctx | grep -vx "$wl")"
	kill -KILL $victims 2>/dev/null
	wait $rec 2>/dev/null
	resumed_soon $name "gpuctx was killed (killed: $victims)" || rc=1
	result $name $rc
}

# 12. Whatever stops a process must guarantee it resumes: a held process whose collector cannot
# release it (stopped) and whose releaser is killed by pid resumes at once, from the kernel;
# the report says why the hold ended early. Then both killed by pid, in one kill.
t_hold_kill_releaser() {
	local name=hold_kill_releaser rc=0 rec wl rel g
	need_double $name || return
	hold_victim $name "$T/kr"
	[ -n "$wl" ] && [ -n "$rel" ] || { kill -KILL $rec; result $name 1 "no workload or releaser"; return; }
	kill -STOP $rec # the collector cannot release: only the releaser or the kernel can
	held_then $name || rc=1
	kill -KILL $rel
	resumed_soon $name "its releaser was killed, gpuctx stopped" || rc=1
	kill -CONT $rec
	wait $rec || { echo "record failed" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	g=$(gap_of "$T/$name.json" libcuda.so.1 2>>"$T/$name.err")
	[ "$g" = hold-ended-gpuctx-signalled ] || { echo "coverage of the library: $g" >>"$T/$name.err"; rc=1; }
	result $name $rc
}

t_hold_kill_both() {
	local name=hold_kill_both rc=0 rec wl rel
	need_double $name || return
	hold_victim $name "$T/kb"
	[ -n "$wl" ] && [ -n "$rel" ] || { kill -KILL $rec; result $name 1 "no workload or releaser"; return; }
	kill -STOP $rec
	held_then $name || rc=1
	kill -KILL $rec $rel
	wait $rec 2>/dev/null
	resumed_soon $name "gpuctx and its releaser were killed by pid" || rc=1
	result $name $rc
}

# The same through a pidfd (pidfd_send_signal, as systemd and newer kill(1) send signals).
t_hold_kill_pidfd() {
	local name=hold_kill_pidfd rc=0 rec wl rel
	need_double $name || return
	hold_victim $name "$T/kp"
	[ -n "$wl" ] && [ -n "$rel" ] || { kill -KILL $rec; result $name 1 "no workload or releaser"; return; }
	kill -STOP $rec
	held_then $name || rc=1
	/usr/bin/python3 -c "import os, signal; signal.pidfd_send_signal(os.pidfd_open($rel), 9)"
	resumed_soon $name "its releaser was killed through a pidfd, gpuctx stopped" || rc=1
	kill -KILL $rec
	wait $rec 2>/dev/null
	result $name $rc
}

# 7. A parent that starts waiting for stops (waitpid WUNTRACED) while its child is held never
# sees the stop: the child is resumed before the wait looks, and the report says so.
t_hold_wait_late() {
	local name=hold_wait_late rc=0 rec g
	need_double $name || return
	cuda_copy "$T/wl"
	"$G" record -q -o "$T/$name.gctx" --hold-timeout 10000 -- /usr/bin/python3 -c "
import ctypes, os, sys, time
open('$T/$name.pid', 'w').write(str(os.getpid()))
pid = os.fork()
if pid == 0:
    while not os.path.exists('$T/$name.go'):
        time.sleep(0.01)
    ctypes.CDLL('$T/wl/libcuda.so.1')
    os._exit(0)
while not os.path.exists('$T/$name.go'):
    time.sleep(0.01)
for _ in range(200):
    st = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()[0]
    if st == 'T':
        break
    time.sleep(0.01)
open('$T/$name.state', 'w').write(st)
_, st = os.waitpid(pid, os.WUNTRACED)
if os.WIFSTOPPED(st):
    print('the parent saw its child stop', file=sys.stderr)
    os.kill(pid, 18)
    sys.exit(1)
sys.exit(os.waitstatus_to_exitcode(st))" >/dev/null 2>"$T/$name.err" &
	rec=$!
	for _ in $(seq 100); do [ -s "$T/$name.pid" ] && break; sleep 0.05; done
	sleep 0.3
	kill -STOP $rec # the collector cannot release: the hold lasts until the parent waits
	touch "$T/$name.go"
	for _ in $(seq 100); do [ -s "$T/$name.state" ] && break; sleep 0.05; done
	sleep 0.5 # the parent's wait has returned, or hangs on a stopped child
	kill -CONT $rec
	wait $rec || { echo "record (the job) failed" >>"$T/$name.err"; rc=1; }
	[ "$(cat "$T/$name.state" 2>/dev/null)" = T ] || { echo "the child was not held" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	g=$(gap_of "$T/$name.json" libcuda.so.1 2>>"$T/$name.err")
	[ "$g" = hold-ended-parent-waited ] || { echo "coverage of the library: $g" >>"$T/$name.err"; rc=1; }
	result $name $rc
}

all_tests=(junit_output cgroup_deep hold_runuser hold_shell hold_waiter hold_pkill hold_kill_releaser
	hold_kill_both hold_kill_pidfd hold_wait_late)
[ $# -gt 0 ] && all_tests=("$@")
for t in "${all_tests[@]}"; do
	"t_$t"
done
suite_summary
