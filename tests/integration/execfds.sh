# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh: whether a GPU fd survives exec is the kernel's answer, not the open flags'
# (issue 42). nvidiactl is opened without O_CLOEXEC, as libcuda does, and its fd is then marked
# (fcntl, ioctl FIOCLEX), copied (dup2, F_DUPFD_CLOEXEC) or closed in the child (close_range)
# before a fork + exec: tests/workloads/wl_exec_fds.c, exec_fds.py.

# exec_fds NAME WANT_RC KEPT_FD CMD...: `gpuctx check --fail-on warning` exits WANT_RC; the
# fd-across-exec findings name KEPT_FD ("-": there are none); the workload's child saw as many
# nvidiactl fds after its exec as the trace says it kept.
exec_fds() {
	local name=$1 want=$2 fd=$3 rc=0 got
	shift 3
	"$G" check --fail-on warning -o "$T/$name.gctx" "${DEVS[@]}" -- "$@" \
		>"$T/$name.out" 2>"$T/$name.err"
	got=$?
	[ "$got" = "$want" ] || { echo "gpuctx check exited $got, expected $want" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && python3 - "$T/$name.json" "$fd" "$T/$name.out" "$T/$name.err" \
		>>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, re, sys
d = json.load(open(sys.argv[1]))
fd = sys.argv[2]
out = open(sys.argv[3]).read() + open(sys.argv[4]).read()
f = [x for x in d["findings"] if x["kind"] == "gpu-fd-across-exec"]
assert not [x for x in d["findings"] if x["severity"] == "error"], d["findings"]
seen = [int(n) for n in re.findall(r"(?:kept|gpu fds?) (\d+)", out)]
assert seen, f"the workload's children said nothing of their fds: {out}"
if fd == "-":
    assert not f, f
    assert d["incidents"] == [], d["incidents"]
    assert d["summary"]["verdict"].startswith("NO PROBLEM FOUND"), d["summary"]
    assert "NO PROBLEM FOUND" in out, out
    assert set(seen) <= {0, -1}, f"a child held a GPU fd after exec: {seen}"
else:
    assert f, d["findings"]
    assert all(f"(fd {fd}," in x["detail"] for x in f), [x["detail"] for x in f]
    assert seen and seen[0] == 1, seen
    kept = [h for g in d["gpu_files"] for h in g["holders_detail"] if h["kept_across_exec"]]
    assert kept and all(h["fds"] == [int(fd)] for h in kept), kept
PY
	result "$name" $rc
}

t_execfd_setfd() { exec_fds execfd_setfd 0 - "$W/wl_exec_fds" "$MNT" setfd; }
t_execfd_closerange() { exec_fds execfd_closerange 0 - "$W/wl_exec_fds" "$MNT" closerange; }
t_execfd_rangecloexec() { exec_fds execfd_rangecloexec 0 - "$W/wl_exec_fds" "$MNT" rangecloexec; }
t_execfd_dup2() { exec_fds execfd_dup2 86 9 "$W/wl_exec_fds" "$MNT" dup2; }
t_execfd_dupfdcloexec() { exec_fds execfd_dupfdcloexec 0 - "$W/wl_exec_fds" "$MNT" dupfdcloexec; }
t_execfd_fioclex() { exec_fds execfd_fioclex 0 - "$W/wl_exec_fds" "$MNT" fioclex; }
t_execfd_leak() { exec_fds execfd_leak 86 3 "$W/wl_exec_fds" "$MNT" leak; }
# Python's subprocess and multiprocessing "spawn" close the inherited fds before exec
t_execfd_python() {
	exec_fds execfd_python 0 - python3 "$top/tests/workloads/exec_fds.py" "$MNT"
}

# The fork of a process holding GPU fds: the child's GPU files are read from its fd table.
# fork_fds NAME WANT_RC WANT_USED MODE: `gpuctx check` exits WANT_RC; WANT_USED 1: the child's
# use of the parent's file (its only copy, from F_DUPFD) is an inherited use, 0: the child
# inherited no GPU state (the parent closed it with close_range or dup2 before the fork).
fork_fds() {
	local name=$1 want=$2 used=$3 mode=$4 rc=0 got
	"$G" check -o "$T/$name.gctx" "${DEVS[@]}" -- "$W/wl_exec_fds" "$MNT" "$mode" \
		>"$T/$name.out" 2>"$T/$name.err"
	got=$?
	[ "$got" = "$want" ] || { echo "gpuctx check exited $got, expected $want" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && python3 - "$T/$name.json" "$used" "$T/$name.out" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, re, sys
d = json.load(open(sys.argv[1]))
used = sys.argv[2] == "1"
seen = re.findall(r"child: gpu fds (\d+) \(fd (\d+)\)", open(sys.argv[3]).read())
assert len(seen) == 1 and int(seen[0][0]) == (1 if used else 0), seen
fd = int(seen[0][1])
procs = d["processes"]
parent = next(p for p in procs if "wl_exec_fds" in p["comm"] and p["children"])
child = [p for p in procs if p["pid"] in parent["children"]]
assert len(child) == 1, child
child = child[0]
held = [h for g in d["gpu_files"] for h in g["holders_detail"] if h["pid"] == child["pid"]]
kinds = {f["kind"] for f in d["findings"]}
if used:
    assert [h["fds"] for h in held] == [[fd]], held
    assert held[0]["how"] == "inherited" and held[0]["from_pid"] == parent["pid"], held
    u = [f for f in d["findings"] if f["kind"] == "inherited-gpu-use"]
    assert len(u) == 1 and u[0]["pid"] == child["pid"], d["findings"]
    assert u[0]["opener_pid"] == parent["pid"], u
else:
    assert held == [], held
    assert not kinds, d["findings"]
    assert d["summary"]["verdict"].startswith("NO PROBLEM FOUND"), d["summary"]
PY
	result "$name" $rc
}

t_forkfd_closerange() { fork_fds forkfd_closerange 0 0 fork-closerange; }
t_forkfd_dup2over() { fork_fds forkfd_dup2over 0 0 fork-dup2over; }
t_forkfd_dupuse() { fork_fds forkfd_dupuse 86 1 fork-dupuse; }

# close(fd 3) while an F_DUPFD_CLOEXEC copy is open: the file stays held (the kernel counted
# the fds left), so its client lives until the RM_FREE after the child's exec, not until the
# close before the fork.
t_execfd_dupclose() {
	local name=execfd_dupclose rc=0
	record "$name" -- "$W/wl_exec_fds" "$MNT" dupfdcloexec || rc=1
	[ $rc = 0 ] && python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1]))
procs = {p["pid"]: p for p in d["processes"]}
top = next(p for p in procs.values() if p["comm"] == "wl_exec_fds" and p["children"])
child = procs[top["children"][0]]
client = [o for o in d["gpu_objects"] if o["kind"] == "rm-client"]
assert len(client) == 1, client
assert child["execs"], child
assert client[0]["destroy_ns"] > child["execs"][0]["ts_ns"], (client, child["execs"])
f = [g for g in d["gpu_files"] if g["kind"] == "nvidiactl"]
assert len(f) == 1 and f[0]["close_ns"] > child["execs"][0]["ts_ns"], f
PY
	result "$name" $rc
}

execfd_tests=(execfd_setfd execfd_closerange execfd_rangecloexec execfd_dup2 execfd_dupfdcloexec
	execfd_fioclex execfd_leak execfd_python execfd_dupclose forkfd_closerange forkfd_dup2over forkfd_dupuse)
