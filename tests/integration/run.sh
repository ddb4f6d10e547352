#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Integration tests: load the real BPF programs, run C workloads on the emulated driver
# (build/fakegpu), and check what `gpuctx report --json` says about them.
# Needs root and a kernel with BTF. Usage: tests/integration/run.sh [TEST...]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
G=$top/build/gpuctx
W=$top/build/workloads
CHECK="python3 $top/tests/integration/check.py"

if [ "$(id -u)" != 0 ]; then
	echo "integration: FAIL: these tests load BPF programs and need root" >&2
	exit 1
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "integration: FAIL: kernel has no BTF (/sys/kernel/btf/vmlinux)" >&2
	exit 1
fi

SUITE=integration
. "$top/tests/lib.sh"
T=$(mktemp -d /tmp/gpuctx-it.XXXXXX)
. "$top/tests/integration/libs.sh"
MNT=$T/gpu
cleanup() {
	fakegpu_stop
	# GPUCTX_IT_KEEP=1 keeps the traces and logs for a look after a failure
	keep_or_remove GPUCTX_IT_KEEP "$T" "$DOUBLES"
}
trap cleanup EXIT
fakegpu_up # on $MNT; DEVS names its nodes to gpuctx

# record NAME [gpuctx record options...] -- CMD...: trace into $T/NAME.gctx, JSON in $T/NAME.json
record() {
	local name=$1
	shift
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || return 99
	return $rc
}

# Scenario: record a workload, then run its checks.
scenario() {
	local name=$1 wl=$2
	shift 2
	record "$name" -- "$W/$wl" "$MNT" "$@"
	local rc=$?
	if [ $rc != 0 ]; then
		echo "workload or report exited $rc" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	$CHECK "$name" "$T/$name.json" >>"$T/$name.err" 2>&1
	result "$name" $?
}

t_fork_child_ioctl() { scenario fork_child_ioctl wl_fork_child_ioctl; }
t_fork_exec_own() { scenario fork_exec_own wl_fork_exec_own; }
t_thread() { scenario thread wl_thread; }
t_double_fork() { scenario double_fork wl_double_fork; }
t_exec_leak() { scenario exec_leak wl_exec_leak; }
t_segv() { scenario segv wl_segv; }
t_kfd() { scenario kfd wl_kfd; }
t_fdpass() { scenario fdpass wl_fdpass; }
t_fork_storm() { scenario fork_storm wl_fork_storm 500; }
t_nongpu() { scenario nongpu wl_nongpu; }
t_demo() { scenario demo wl_demo; }

# -p attach to a process that already holds GPU files and forks afterwards.
t_attach() {
	local name=attach rc
	"$W/wl_attach" "$MNT" >"$T/attach.wl" 2>&1 &
	local wl=$!
	for _ in $(seq 100); do grep -q ready "$T/attach.wl" && break; sleep 0.05; done
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -p "$wl" >"$T/$name.out" 2>"$T/$name.err" &
	local rec=$!
	for _ in $(seq 200); do grep -q attached "$T/$name.err" && break; sleep 0.05; done
	kill -USR1 "$wl"
	wait "$wl"
	rc=$?
	wait "$rec"
	[ $rc = 0 ] && rc=$?
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { $CHECK attach "$T/$name.json" --pid "$wl" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

# API probes: test-double libcuda/libamdhip64 over the emulated driver, NVIDIA's real stub
# libcuda, and Debian's real HIP runtime. Built only where the headers exist: say so if not.
api_scenario() {
	local name=$1 need=$2
	shift 2
	if [ ! -e "$need" ]; then
		echo "SKIP $name: $need was not built (CUDA/HIP headers missing)"
		return
	fi
	record "$name" "$@"
	local rc=$?
	if [ $rc != 0 ]; then
		echo "workload or report exited $rc" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	$CHECK "$name" "$T/$name.json" >>"$T/$name.err" 2>&1
	result "$name" $?
}

t_api_cuda() {
	LD_LIBRARY_PATH=$DOUBLES api_scenario api_cuda "$W/api_cuda_fork" \
		--libcuda "$DOUBLES/libcuda.so.1" -- "$W/api_cuda_fork" "$MNT"
}

# The same with one perf-event uprobe per function, as on kernels without uprobe_multi.
t_api_cuda_single() {
	GPUCTX_NO_UPROBE_MULTI=1 LD_LIBRARY_PATH=$DOUBLES api_scenario api_cuda_single \
		"$W/api_cuda_fork" --libcuda "$DOUBLES/libcuda.so.1" -- \
		"$W/api_cuda_fork" "$MNT"
}

t_api_cuda_stub() {
	local stub=/usr/local/cuda/lib64/stubs/libcuda.so
	mkdir -p "$T/stub" && ln -sf "$stub" "$T/stub/libcuda.so.1"
	LD_LIBRARY_PATH=$T/stub api_scenario api_cuda_stub "$W/api_cuda_fork" \
		--libcuda "$stub" -- "$W/api_cuda_fork" "$MNT" --stub
}

t_api_hip() {
	LD_LIBRARY_PATH=$DOUBLES api_scenario api_hip "$W/api_hip_fork" \
		--libhip "$DOUBLES/libamdhip64.so.5" -- "$W/api_hip_fork" "$MNT"
}

# A library only visible in the process's own mount namespace (a container): found through
# /proc/PID/maps and /proc/PID/root when the process maps it, before its first CUDA call.
t_api_container() {
	local name=api_container
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/doubles/libcuda.so.1 was not built (CUDA headers missing)"
		return
	fi
	mkdir -p "$T/nslib"
	cat >"$T/ns.sh" <<EOS
#!/bin/sh
mount -t tmpfs none "$T/nslib" && cp "$DOUBLES/libcuda.so.1" "$T/nslib/" || exit 1
exec python3 -c '
import ctypes, os, time
os.environ["GPUCTX_FAKEGPU_DIR"] = "$MNT"
lib = ctypes.CDLL("$T/nslib/libcuda.so.1")  # like "import torch"
time.sleep(0.5)                            # the job starts
exit(lib.cuInit(0))                        # first CUDA use
'
EOS
	chmod +x "$T/ns.sh"
	api_scenario "$name" "$T/ns.sh" -- unshare -m --propagation private "$T/ns.sh"
}

# Debian's libamdhip64 is found where it is installed, without --libhip.
t_api_hip_real() {
	api_scenario api_hip_real "$W/api_hip_fork" -- "$W/api_hip_fork" "$MNT" --real
}

# -p on a process whose threads already exist: they are recorded as present.
t_attach_threads() {
	local name=attach_threads rc=0
	python3 -c 'import threading, time
ts = [threading.Thread(target=time.sleep, args=(4,)) for _ in range(3)]
[t.start() for t in ts]
print("ready", flush=True)
time.sleep(4)' >"$T/$name.wl" 2>&1 &
	local wl=$!
	for _ in $(seq 100); do grep -q ready "$T/$name.wl" && break; sleep 0.05; done
	"$G" record -q -o "$T/$name.gctx" -p "$wl" --duration 1 >"$T/$name.out" 2>"$T/$name.err" ||
		rc=1
	wait "$wl"
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { $CHECK attach_threads "$T/$name.json" --pid "$wl" >>"$T/$name.err" 2>&1 ||
		rc=1; }
	result "$name" $rc
}

# --cgroup: a process already in a cgroup v2 directory, which forks after attach.
t_cgroup() {
	local name=cgroup rc=0 root cg
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ -z "$root" ]; then
		echo "SKIP cgroup: no cgroup v2 hierarchy mounted"
		return
	fi
	cg=$root/gpuctx-it.$$
	mkdir -p "$cg"
	"$W/wl_attach" "$MNT" >"$T/cgroup.wl" 2>&1 &
	local wl=$!
	for _ in $(seq 100); do grep -q ready "$T/cgroup.wl" && break; sleep 0.05; done
	echo "$wl" >"$cg/cgroup.procs"
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" --cgroup "$cg" >"$T/$name.out" 2>"$T/$name.err" &
	local rec=$!
	for _ in $(seq 200); do grep -q attached "$T/$name.err" && break; sleep 0.05; done
	kill -USR1 "$wl"
	wait "$wl" || rc=1
	sleep 0.2
	kill -INT "$rec"
	wait "$rec"
	echo "$(cat "$cg/cgroup.procs" 2>/dev/null)" | while read -r p; do
		[ -n "$p" ] && echo "$p" >"$root/cgroup.procs"
	done
	rmdir "$cg" 2>/dev/null
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { $CHECK attach "$T/$name.json" --pid "$wl" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

# -a: the whole system, with a workload started after attach.
t_all() {
	local name=all rc=0 g
	# the workload starts once gpuctx says it is attached (attach to every process can take
	# seconds on a loaded machine)
	"$G" record -q -a -o "$T/$name.gctx" "${DEVS[@]}" --duration 4 >"$T/$name.out" \
		2>"$T/$name.err" &
	g=$!
	for _ in $(seq 300); do
		grep -q "attached to" "$T/$name.err" 2>/dev/null && break
		kill -0 "$g" 2>/dev/null || break
		sleep 0.1
	done
	"$W/wl_fork_child_ioctl" "$MNT" >"$T/all.wl" 2>&1 &
	local wl=$!
	wait $wl
	wait "$g" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	# by pid: another wl_fork_child_ioctl may run on the machine (a benchmark, a second run)
	[ $rc = 0 ] && { $CHECK fork_child_ioctl "$T/$name.json" --pid $wl >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

# record --perfetto/--chrome: timelines written at the end hold what the report says.
t_record_export() {
	local name=record_export rc=0
	record "$name" --perfetto "$T/$name.pftrace" --chrome "$T/$name.tl.json" -- \
		"$W/wl_segv" "$MNT" || rc=1
	[ $rc = 0 ] && { python3 "$top/tests/export/check_export.py" check \
		--perfetto "$T/$name.pftrace" --chrome "$T/$name.tl.json" --report "$T/$name.json" \
		--proto "$top/tests/export/gpuctx_trace.proto" >>"$T/$name.err" 2>&1 || rc=1; }
	result "$name" $rc
}

# The traced command's exit status is gpuctx's.
t_exit_status() {
	local rc
	"$G" record -q -o "$T/st.gctx" -- sh -c 'exit 7' >/dev/null 2>"$T/exit_status.err"
	rc=$?
	[ $rc = 7 ] || { echo "expected exit 7, got $rc" >>"$T/exit_status.err"; result exit_status 1; return; }
	"$G" record -q -o "$T/st2.gctx" -- sh -c 'kill -SEGV $$' >/dev/null 2>>"$T/exit_status.err"
	rc=$?
	[ $rc = 139 ] || { echo "expected exit 139, got $rc" >>"$T/exit_status.err"; result exit_status 1; return; }
	result exit_status 0
}

# Hardening (issue 9): one test per defect, in their own script; listed there.
t_security() {
	"$top/tests/integration/security.sh" >"$T/security.out" 2>&1
	local rc=$?
	grep -E '^(ok|FAIL|SKIP) ' "$T/security.out" | sed 's/^/  /'
	cp "$T/security.out" "$T/security.err"
	result security $rc
}

# gpuctx returns once the trace is complete and releases its BPF links afterwards, in a
# detached child (collect/detach.c): the status and the output come back at once (a pipe reader
# is not held open), the trace is whole, and the child then exits (its last close frees the
# programs).
t_release() {
	local name=release rc=0 out p
	# fd 3 too: a pipe the caller hands down must not wait for the release either
	out=$("$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -- sh -c 'echo hello; exit 7' \
		2>"$T/$name.err" 3>&1)
	rc=$?
	if [ $rc != 7 ] || [ "$out" != hello ]; then
		echo "expected exit 7 and 'hello', got $rc and '$out'" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	rc=0
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); m=r["meta"]; sys.exit(0 if m["clean_end"] and m["exit_status"] == 7 << 8 else 1)' \
		"$T/$name.json" 2>>"$T/$name.err" || { echo "trace not complete" >>"$T/$name.err"; rc=1; }
	for _ in $(seq 300); do
		for p in $(pgrep -x gpuctx-release); do
			[ "$(readlink "/proc/$p/exe")" = "$G" ] && { sleep 0.1; continue 2; }
		done
		break
	done
	for p in $(pgrep -x gpuctx-release); do
		[ "$(readlink "/proc/$p/exe")" = "$G" ] || continue
		echo "release child $p still alive after 30 s" >>"$T/$name.err"
		rc=1
	done
	result "$name" $rc
}

# open, mmap and ioctl on a registered file, as decided at syscall exit from the saved
# registers: the open flags, the mapping and the ioctl of an NVIDIA type are recorded; an ioctl
# of another type on the same GPU fd is not (docs/not-recorded.md).
t_syscall_args() {
	local name=syscall_args rc=0 f="$T/regfile"
	head -c 8192 /dev/zero >"$f"
	"$G" record -q -o "$T/$name.gctx" --device "$f:nvidiactl" -- /usr/bin/python3 -c '
import fcntl, mmap, os, sys, termios
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CLOEXEC)
m = mmap.mmap(fd, 4096, offset=4096)
m.close()
for cmd in (0x4600, termios.TCGETS):  # _IO("F", 0), then a terminal ioctl
    try:
        fcntl.ioctl(fd, cmd, bytes(64))
    except OSError:
        pass
os.close(fd)' "$f" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { python3 - "$T/$name.json" "$f" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, os, sys
r = json.load(open(sys.argv[1]))
files = [g for g in r["gpu_files"] if g["device"] == sys.argv[2]]
assert len(files) == 1, files
g = files[0]
assert g["open_flags"] & 3 == os.O_RDWR and g["cloexec"], g
assert g["mmaps"] == 1, g
assert g["ioctls"] == 1, ("the 'F' ioctl only", g)
PY
	}
	result "$name" $rc
}

# NVIDIA parameters read once, at exit (the driver copies the struct back), decode as before:
# the demo's RM calls show class, client, parent and the new handle, UVM its handles; the
# caller's version string, which the driver overwrites, is still read at entry.
t_params_capture() {
	local name=params_capture rc=0
	"$G" record -o "$T/$name.gctx" "${DEVS[@]}" -- "$W/wl_demo" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err" || rc=1
	grep -v '^\[pid' "$T/$name.out" >"$T/$name.ev"
	grep -Eq ' CHECK_VERSION_STR cmd=[a-z]+ version="[0-9.]+" reply=recognized' "$T/$name.ev" ||
		{ echo "no caller version on CHECK_VERSION_STR" >>"$T/$name.err"; rc=1; }
	[ "$(grep -Ec ' RM_ALLOC class=[A-Z0-9_]+\(0x[0-9a-f]+\) client=0x[0-9a-f]{8} parent=0x[0-9a-f]{8} new=0x[0-9a-f]{8} -> NV_OK' \
		"$T/$name.ev")" -ge 8 ] || { echo "RM_ALLOC not decoded" >>"$T/$name.err"; rc=1; }
	grep -Eq ' UVM_REGISTER_GPU_VASPACE uuid=GPU-[0-9a-f-]+ rmCtrlFd=[0-9]+ hClient=0x[0-9a-f]+ hVaSpace=0x[0-9a-f]+ -> NV_OK' \
		"$T/$name.ev" || { echo "UVM_REGISTER_GPU_VASPACE not decoded" >>"$T/$name.err"; rc=1; }
	result "$name" $rc
}

# The collector reads the ring buffer itself (user/collect/ringread.c): 300,000 GPU ioctls are
# 33 MB of records through the 8 MiB ring, which wraps about four times. Every call is recorded
# and attributed to its file, or counted as lost.
t_ring_wrap() {
	local name=ring_wrap rc=0 f="$T/regfile_wrap" n=300000
	head -c 4096 /dev/zero >"$f"
	"$G" record -q -o "$T/$name.gctx" --device "$f:nvidiactl" -- "$W/wl_ioctl_burst" "$f" $n \
		>"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && python3 - "$T/$name.json" $n >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
d, n = json.load(open(sys.argv[1])), int(sys.argv[2])
rec, lost = d["events"]["ioctl"], d["drops"]["ioctl"]
files = [g["ioctls"] for g in d["gpu_files"]]
assert rec + lost == n, f"{rec} recorded + {lost} lost != {n} calls"
assert files == [rec], f"ioctls per GPU file {files}, recorded {rec}"
assert rec >= 100000, f"only {rec} recorded: the ring did not wrap"
PY
	result "$name" $rc
}

# --ring-size: a 256K ring takes the same burst with every call recorded or counted lost, and
# wakes the collector at a quarter full (kept at the default's 1 MiB, about half the calls
# were lost: checked); an overflow says which --ring-size to try. check passes it on.
t_ring_size() {
	local name=ring_size rc=0 f="$T/regfile_rs" n=300000
	head -c 4096 /dev/zero >"$f"
	"$G" record -q --ring-size 256K -o "$T/$name.gctx" --device "$f:nvidiactl" -- \
		"$W/wl_ioctl_burst" "$f" $n >"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && python3 - "$T/$name.json" $n "$T/$name.err" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
d, n = json.load(open(sys.argv[1])), int(sys.argv[2])
rec, lost = d["events"]["ioctl"], d["drops"]["ioctl"]
assert rec + lost == n, f"{rec} recorded + {lost} lost != {n} calls"
assert rec >= 0.7 * n, f"only {rec} of {n} recorded with a 256K ring"
hint = "the 256K ring buffer overflowed: rerun with a larger --ring-size (such as 1M)"
said = hint in open(sys.argv[3]).read()
assert said == (lost > 0), f"{lost} lost, overflow hint printed: {said}"
PY
	"$G" check --ring-size 1M -- true >>"$T/$name.out" 2>>"$T/$name.err" ||
		{ echo "check --ring-size 1M -- true failed" >>"$T/$name.err"; rc=1; }
	result "$name" $rc
}

# Each GPU ioctl record names its thread as it is then called (every record reads the comm
# itself, not through the helper): two names, two calls under each.
t_ioctl_comm() {
	local name=ioctl_comm rc=0 f="$T/regfile_comm"
	head -c 8192 /dev/zero >"$f"
	"$G" record -o "$T/$name.gctx" --device "$f:nvidiactl" -- /usr/bin/python3 -c '
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
for name in (b"first-name", b"second-name-15c"):
    with open("/proc/self/comm", "wb") as f:
        f.write(name)
    for _ in range(2):
        try:
            fcntl.ioctl(fd, 0x4600, bytes(8))
        except OSError:
            pass' "$f" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	[ "$(grep -Ec ' first-name +ioctl +nvidiactl ' "$T/$name.out")" = 2 ] &&
		[ "$(grep -Ec ' second-name-15c +ioctl +nvidiactl ' "$T/$name.out")" = 2 ] ||
		{ echo "the ioctl records do not carry the names" >>"$T/$name.err"; rc=1; }
	result "$name" $rc
}

# open(2), openat2(2) and openat(2) of a GPU file are each recorded with their flags: one
# program serves the three tracepoints and tells them apart by the syscall number.
t_open_syscalls() {
	local name=open_syscalls rc=0 f="$T/regfile_open"
	head -c 8192 /dev/zero >"$f"
	"$G" record -q -o "$T/$name.gctx" --device "$f:nvidiactl" -- /usr/bin/python3 -c '
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
p = sys.argv[1].encode()
assert libc.syscall(2, p, os.O_RDWR | os.O_CLOEXEC) >= 0                  # open
how = struct.pack("QQQ", os.O_WRONLY, 0, 0)
assert libc.syscall(437, -100, p, how, len(how)) >= 0                     # openat2
os.open(sys.argv[1], os.O_RDONLY)                                         # openat (+O_CLOEXEC)
' "$f" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	python3 - "$T/$name.json" "$f" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, os, sys
files = json.load(open(sys.argv[1]))["gpu_files"]
got = sorted((f["open_flags"] & 3, f["cloexec"], f["device"]) for f in files)
want = sorted([(os.O_RDWR, True, sys.argv[2]), (os.O_WRONLY, False, sys.argv[2]),
               (os.O_RDONLY, True, sys.argv[2])])
assert got == want, f"opens recorded {got}, expected {want}"
PY
	result "$name" $rc
}

# A thread's in-flight ioctl lives in the ioctl_slots entry at tid % 4096 while it holds it, or
# in task storage when another thread holds that entry: a thread whose id shares the main
# thread's entry (the main thread holding it) is recorded call for call, as the main thread is.
t_ioctl_slot_shared() {
	local name=ioctl_slot_shared rc=0 f="$T/regfile_slot"
	head -c 4096 /dev/zero >"$f"
	"$G" record -o "$T/$name.gctx" --device "$f:nvidiactl" -- /usr/bin/python3 -c '
import fcntl, os, sys, threading
fd = os.open(sys.argv[1], os.O_RDWR)
def calls(nr, n):
    for _ in range(n):
        try:
            fcntl.ioctl(fd, (ord("F") << 8) | nr)
        except OSError:
            pass
main = threading.get_native_id()
calls(1, 5)                       # the main thread takes its entry
got = []
def other():
    tid = threading.get_native_id()
    if tid % 4096 == main % 4096:
        got.append(tid)
        calls(2, 7)               # the same entry, held: task storage
for _ in range(40000):
    t = threading.Thread(target=other)
    t.start()
    t.join()
    if got:
        break
assert got, "no thread id shared the main thread entry"
calls(1, 3)
open(sys.argv[2], "w").write(f"{main} {got[0]}")
' "$f" "$T/$name.tids" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	python3 - "$T/$name.out" "$T/$name.tids" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import re, sys
lines = open(sys.argv[1]).read().splitlines()
main, other = [int(x) for x in open(sys.argv[2]).read().split()]
n = {}
for l in lines:
    m = re.search(r" \d+/(\d+) .* ioctl +nvidiactl fd=\d+ ioctl\(type=0x46 nr=0x(\d+) ", l)
    if m:
        k = (int(m[1]), int(m[2], 16))
        n[k] = n.get(k, 0) + 1
want = {(main, 1): 8, (other, 2): 7}
assert n == want, f"ioctls by (tid, nr) {n}, expected {want}"
PY
	result "$name" $rc
}

# GPU fds open at exec are found by scanning the new program's fd table: fds in the table's
# first, second and fourth bitmap words are each reported, closed and O_CLOEXEC ones are not.
t_exec_fd_scan() {
	local name=exec_fd_scan rc=0 f="$T/regfile_exec"
	head -c 4096 /dev/zero >"$f"
	"$G" record -q -o "$T/$name.gctx" --device "$f:nvidiactl" -- /usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)       # O_CLOEXEC, as Python opens: closed by exec
for n in (5, 70, 200, 300):
    os.dup2(fd, n)                         # inheritable: kept across exec
os.close(300)
os.execv("/bin/true", ["true"])
' "$f" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
files = json.load(open(sys.argv[1]))["gpu_files"]
kept = [h["fds"] for f in files for h in f["holders_detail"] if h["kept_across_exec"]]
assert kept == [[5, 70, 200]], f"fds kept across exec {kept}, expected [[5, 70, 200]]"
PY
	result "$name" $rc
}

# A process storm maps the same library (libc) in every process: the kernel reports it until
# the collector has looked at it once (known_libs), then no more to processes with no GPU
# state. The storm's trace keeps one exec record per process.
t_lib_once() {
	local name=lib_once rc=0
	# the first process alone, then time for the collector to look at libc once
	"$G" record -q -o "$T/$name.gctx" -- \
		sh -c '/bin/true; sleep 0.5; for i in $(seq 300); do /bin/true; done' \
		>"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
ev = json.load(open(sys.argv[1]))["events"]
assert ev["exec"] >= 301, f"{ev['exec']} exec records for 301 processes"
assert 1 <= ev["libmap"] <= 30, f"{ev['libmap']} library mappings reported for 301 processes"
PY
	result "$name" $rc
}

# New libraries in one process (as `import torch` maps ~300 files, in a process with ~1,700
# mappings) cost a few reads of its maps, not one each: the collector's reads of a big maps
# file were most of its work while torch was imported (docs/performance.md). The collector
# reads one process's maps for a library at most once per 50 ms (libwatch.c, REREAD_MS), so
# libraries mapped over B ms cost at most 2 + B / 49 ms reads, however its turns fall. Paced
# 12 ms apart, each library lands in a turn of its own (10 ms): one read each before. One
# process (/usr/bin/python3, no pyenv shims), every library reported.
t_lib_maps_once() {
	local name=lib_maps_once rc=0 d="$T/lib_maps_once"
	mkdir -p "$d" && for i in $(seq 40); do
		cp "$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')" "$d/libz$i.so"
	done
	"$G" record -v -o "$T/$name.gctx" -- /usr/bin/python3 -c '
import ctypes, os, sys, time
for i in range(1, 41):
    ctypes.CDLL(os.path.join(sys.argv[1], "libz%d.so" % i))
    time.sleep(0.012)
print("end", time.clock_gettime_ns(time.CLOCK_MONOTONIC), flush=True)
time.sleep(0.5)
' "$d" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	python3 - "$T/$name.json" "$T/$name.err" "$T/$name.out" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, re, sys
d = json.load(open(sys.argv[1]))
ev = d["events"]
assert ev["libmap"] >= 40, f"{ev['libmap']} library mappings for 40 new libraries"
m = re.search(r"gpuctx: (\d+) maps reads for new libraries", open(sys.argv[2]).read())
assert m, "no count of maps reads"
reads = int(m.group(1))
end = int(re.search(r"^end (\d+)$", open(sys.argv[3]).read(), re.M).group(1))
py = [p for p in d["processes"] if p["execs"] and p["execs"][-1]["filename"] == "/usr/bin/python3"]
assert len(py) == 1, f"{len(py)} python processes"
span = end - py[0]["execs"][-1]["ts_ns"]  # its first mapping to its last, and more
bound = 2 + span // 49_000_000
assert reads <= bound, f"{reads} maps reads for 40 libraries mapped over {span / 1e6:.0f} ms (at most {bound})"
print(f"{reads} maps reads, at most {bound} over {span / 1e6:.0f} ms")
PY
	result "$name" $rc
}

# A file the collector has looked at once under another name (not an API library) is known
# by its inode. When an API library's name comes to that inode (here a hard link; an inode
# number reused after a delete is the same to the kernel), its mapping is new again: held.
t_lib_seen_renamed() {
	local name=lib_seen_renamed rc=0 d="$T/lib_seen_renamed"
	mkdir -p "$d" && cp "$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')" "$d/libfoo.so"
	"$G" record -q -o "$T/$name.gctx" -- python3 -c '
import ctypes, os, subprocess, sys, time
d = sys.argv[1]
ctypes.CDLL(os.path.join(d, "libfoo.so"))
time.sleep(0.5)  # the collector marks the file as seen
os.link(os.path.join(d, "libfoo.so"), os.path.join(d, "libcuda.so.1"))
subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                os.path.join(d, "libcuda.so.1")], check=True)
' "$d" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
holds = json.load(open(sys.argv[1]))["api_coverage"]["holds"]
assert any(h["lib"].endswith("/libcuda.so.1") for h in holds), f"holds {holds}"
PY
	result "$name" $rc
}

# Start-up is mostly the verifier's work (docs/architecture.md), and that count depends on the
# kernel build as well as on the code: one object (888f482) cost 24,426 instructions on
# 6.18.44-fc-v782 and 48,154 on fc-v1300. So the budget is relative: the objects of the last
# commit that changed bench/LOAD-BUDGET.md, built from git here, against this tree's, both
# loaded on this kernel; this tree may cost 5% more. More than that lands with an entry in
# LOAD-BUDGET.md saying what grew and why (its commit is then the base). The Python exception
# probe's object (pyraise), loaded while a forked child is held, is held to it too where the
# base has it.
t_load_budget() {
	local name=load_budget rc=0 base d o objs=(gpuctx api)
	base=$(git -C "$top" log -1 --format=%H -- bench/LOAD-BUDGET.md 2>/dev/null)
	if [ -z "$base" ]; then
		echo "SKIP $name: no git history of bench/LOAD-BUDGET.md to build the base from"
		return
	fi
	d=$(mktemp -d "$T/$name.XXXXXX")
	{ git -C "$top" archive "$base" | tar -x -C "$d"; } 2>"$T/$name.err"
	[ -e "$d/bpf/pyraise.bpf.c" ] && objs+=(pyraise)
	if [ ! -e "$d/Makefile" ] || ! make -s -C "$d" $(printf '.output/%s.bpf.o ' "${objs[@]}") \
		>/dev/null 2>>"$T/$name.err"; then
		echo "cannot build the base $base" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	echo "base: $base" >"$T/$name.out"
	for o in "${objs[@]}"; do
		"$top/build/bench/load_cost" --against "$d/.output/$o.bpf.o" "$top/.output/$o.bpf.o" \
			>"$T/$name.$o" 2>>"$T/$name.err" && continue
		cat "$T/$name.$o" >>"$T/$name.out"
		rc=1
	done
	rm -rf "$d"
	result "$name" $rc
}

# Bad input: one line on stderr, non-zero exit, no crash.
expect_error() {
	local name=$1 pattern=$2
	shift 2
	"$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	if [ $rc = 0 ] || [ $rc -ge 128 ]; then
		echo "expected a clean failure, got exit $rc" >>"$T/$name.err"
		result "$name" 1
	elif [ "$(wc -l <"$T/$name.err")" != 1 ] || ! grep -q -- "$pattern" "$T/$name.err"; then
		echo "expected one line matching '$pattern'" >>"$T/$name.err"
		result "$name" 1
	else
		result "$name" 0
	fi
}

t_errors() {
	expect_error err_device_kind "unknown kind" "$G" record -o "$T/e.gctx" --device "$MNT/kfd:gpu" -- true
	expect_error err_device_path "cannot stat" "$G" record -o "$T/e.gctx" --device /nonexistent:kfd -- true
	expect_error err_no_pid "no such process" "$G" record -o "$T/e.gctx" -p 999999
	expect_error err_no_target "nothing to trace" "$G" record -o "$T/e.gctx"
	expect_error err_ring_size "bad --ring-size" "$G" record --ring-size 3M -o "$T/e.gctx" -- true
	expect_error err_missing_trace "cannot open" "$G" report "$T/missing.gctx"
	head -c 100 /dev/urandom >"$T/garbage.gctx"
	expect_error err_garbage_trace "not a gpuctx trace" "$G" report "$T/garbage.gctx"
	# (a corrupt record in the middle is skipped, not fatal: security.sh, test corrupt)
	expect_error err_unknown_cmd "unknown command" "$G" frobnicate
	# a copy in a 0755 directory of its own: nobody may not reach the checkout's
	local nb
	nb=$(mktemp -d /tmp/gpuctx-nobody.XXXXXX)
	chmod 755 "$nb" && install -m 0755 "$G" "$nb/gpuctx"
	expect_error err_not_root "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$nb/gpuctx" record -o /tmp/gpuctx-nobody.$$.gctx -- true
	rm -rf "$nb"
	[ -e /tmp/gpuctx-nobody.$$.gctx ] && { echo "a failed record left its trace file" >>"$T/err_not_root.err"; result err_not_root_file 1; }
	# in a PID namespace of its own (a container without the host's pids) the pids it would
	# hand the kernel are not the kernel's: refused, before anything is loaded or held
	if unshare -p -f --mount-proc true 2>/dev/null; then
		expect_error err_pid_ns "PID namespace of its own" unshare -p -f --mount-proc \
			"$G" record -o "$T/pidns.gctx" -- true
		[ -e "$T/pidns.gctx" ] && { echo "left a trace file" >>"$T/err_pid_ns.err"; result err_pid_ns_file 1; }
	else
		echo "SKIP err_pid_ns: no PID namespaces (unshare -p)"
	fi
}

# A collector killed with SIGKILL leaves a trace readable up to its last complete record, in
# the temporary file that would have been renamed to the output (.NAME.XXXXXX beside it).
t_sigkill() {
	local name=sigkill rc=0
	"$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -- sh -c 'while :; do /bin/true; done' \
		>/dev/null 2>"$T/$name.err" &
	local rec=$! part
	# killed once records are on disk, however long a loaded machine takes to start gpuctx
	for _ in $(seq 200); do
		part=$(ls "$T/.$name.gctx."* 2>/dev/null | head -1)
		[ -n "$part" ] && [ "$(stat -c %s "$part")" -gt 16384 ] && break
		sleep 0.1
	done
	kill -KILL "$rec"
	wait "$rec" 2>/dev/null
	pkill -f 'while :; do /bin/true; done'
	part=$(ls "$T/.$name.gctx."* 2>/dev/null | head -1)
	[ -n "$part" ] || { echo "no partial trace .$name.gctx.* left" >>"$T/$name.err"; result "$name" 1; return; }
	"$G" report --json "$part" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { $CHECK sigkill "$T/$name.json" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

# A dead GPU device node (issue 26): /dev/nvidiactl as libcuda leaves it when run as root
# without the module, a node no driver answers (ENXIO). In a private mount namespace whose /dev
# is a tmpfs copy holding such a node (the host's /dev is not touched, and what it holds does
# not matter): the demo says the node is dead and runs over the emulated driver, gpuctx -v says
# what it saw, and the security tests that failed beside such a node pass. A node that opens
# (a /dev/null under the name) is said to be a working driver, and the demo still never sends
# its synthetic calls to it.
t_dead_node() {
	local name=dead_node rc=0 major=195 d="$T/devnodes"
	# 195 when no driver has it here, else a major of the local range (240-254) nobody has
	while awk -v m=$major '/^Character/ {c=1} /^Block/ {c=0} c && $1 == m {f=1} END {exit !f}' \
		/proc/devices; do
		major=$((major == 195 ? 240 : major + 1))
	done
	cat >"$T/deadns.sh" <<EOS
#!/bin/bash
set -e
d=\$(mktemp -d "$T/dev.XXXXXX")
mount -t tmpfs -o mode=755 none "\$d"
for n in null zero full random urandom tty ptmx fuse; do
	[ -e /dev/\$n ] && cp -a /dev/\$n "\$d/"
done
mknod "\$d/nvidiactl" c $major 255
ln -s /proc/self/fd "\$d/fd"
mkdir "\$d/shm" "\$d/pts"
mount --bind /dev/shm "\$d/shm"
mount --bind /dev/pts "\$d/pts"
mount --bind "\$d" /dev
exec "\$@"
EOS
	chmod +x "$T/deadns.sh"
	unshare -m --propagation private "$T/deadns.sh" env GPUCTX_DEMO_OUT="$T/$name.gctx" \
		"$top/tools/demo.sh" >"$T/$name.out" 2>"$T/$name.err" || rc=1
	grep -q "^demo: /dev/nvidiactl: a dead device node (open: No such device or address)" \
		"$T/$name.out" || { echo "the demo did not say the node is dead" >>"$T/$name.err"; rc=1; }
	grep -q "^demo: tracing the demo workload over the emulated driver" "$T/$name.out" &&
		grep -q "^Verdict: POISON FORK" "$T/$name.out" ||
		{ echo "the demo did not run over the emulated driver" >>"$T/$name.err"; rc=1; }
	unshare -m --propagation private "$T/deadns.sh" "$G" record -v -q -o "$T/$name.2.gctx" -- \
		true >/dev/null 2>"$T/$name.v" || rc=1
	grep -q "GPU device nodes: /dev/nvidiactl dead (open: No such device or address)" \
		"$T/$name.v" || { echo "gpuctx -v did not say the node is dead" >>"$T/$name.err"; rc=1; }
	unshare -m --propagation private "$T/deadns.sh" "$top/tests/integration/security.sh" \
		demo_kill root_exec >>"$T/$name.err" 2>&1 || rc=1
	# a node that opens, under the name: a working driver, and still the emulated one is used
	mkdir -p "$d" && cp -a /dev/null "$d/nvidiactl"
	GPUCTX_DEMO_DEVDIR=$d GPUCTX_DEMO_OUT="$T/$name.3.gctx" "$top/tools/demo.sh" \
		>"$T/$name.3.out" 2>>"$T/$name.err" || rc=1
	grep -q "^demo: $d/nvidiactl: a working GPU driver (it opens); the demo's synthetic GPU calls go to the emulated driver" \
		"$T/$name.3.out" && grep -q "^Verdict: POISON FORK" "$T/$name.3.out" ||
		{ echo "working node: not said, or not run over the emulated driver" >>"$T/$name.err"; rc=1; }
	rm -rf "$d"
	result "$name" $rc
}

# Tests pass from any checkout (issue 26): a copy of this one (build/, tests/, tools/) under a
# 0700 directory and private (a umask 077 clone in a mktemp -d or root's home), in a
# group-writable one (a umask 002 clone), and owned by another user (a home directory), each
# runs the tests whose libraries gpuctx must trust (the CUDA/HIP doubles, the resolver's
# root-only library, issue 33's private one), the error paths run as nobody, the attach and the
# diagnosis. GPUCTX_NO_NESTED: inside such a copy, not again.
t_any_checkout() {
	local name=any_checkout rc=0 where dst
	if [ -n "${GPUCTX_NO_NESTED:-}" ]; then
		echo "SKIP $name: already in a copy"
		return
	fi
	for where in 0700 group-writable other-user; do
		case $where in
		0700) dst=$T/co700/gpuctx ;;
		group-writable) dst=$T/cogw/gpuctx ;;
		other-user) dst=$T/home/u/gpuctx ;;
		esac
		mkdir -p "$dst"
		tar -C "$top" --exclude=./.output --exclude=./.git -cf - build tests tools |
			tar -C "$dst" -xf -
		case $where in
		0700) chmod -R go-rwx "$dst" ;;
		group-writable) chmod 775 "$T/cogw" && chmod -R g+w "$dst" ;;
		other-user) chmod 755 "$T/home" && chown -R 65534:65534 "$T/home/u" ;;
		esac
		GPUCTX_NO_NESTED=1 "$dst/tests/integration/run.sh" errors api_cuda api_hip \
			attach_cuda_both dl_fork_touch >"$T/$name.$where" 2>&1 ||
			{ echo "from a $where checkout:" >>"$T/$name.err"; rc=1; }
		"$dst/tests/integration/security.sh" root_exec preresolve_private \
			>>"$T/$name.$where" 2>&1 ||
			{ echo "security.sh from a $where checkout:" >>"$T/$name.err"; rc=1; }
		# a trusted library nobody may read, under a directory nobody may enter (the private
		# checkout's own double), is pre-resolved all the same (issue 33)
		[ $where = 0700 ] && [ -e "$dst/build/doubles/libcuda.so.1" ] && {
			LD_LIBRARY_PATH=$dst/build/doubles "$G" record -q -o "$T/$name.pre.gctx" \
				"${DEVS[@]}" --libcuda "$dst/build/doubles/libcuda.so.1" -- \
				"$W/api_cuda_fork" "$MNT" >/dev/null 2>>"$T/$name.err" &&
				"$G" report --json "$T/$name.pre.gctx" >"$T/$name.pre.json" &&
				python3 -c 'import json, sys
how = [p["how"] for p in json.load(open(sys.argv[1]))["probes"]]
assert "cuGetProcAddress" in how and "not-pre-resolved" not in how, how' \
					"$T/$name.pre.json" 2>>"$T/$name.err" ||
				{ echo "the 0700 checkout's libcuda was not pre-resolved" >>"$T/$name.err"; rc=1; }
		}
		grep -E '^ *(FAIL|SKIP)' "$T/$name.$where" | sed "s|^|$where: |" >>"$T/$name.err"
		rm -rf "$dst"
	done
	result "$name" $rc
}

# the diagnosis on PyTorch DataLoader jobs: diagnosis.sh
. "$top/tests/integration/diagnosis.sh"

. "$top/tests/integration/stacks.sh"

. "$top/tests/integration/attach.sh"

. "$top/tests/integration/execfds.sh"

. "$top/tests/integration/cluster.sh"

# the real HIP runtime on the emulated driver
. "$top/tests/realdriver/amd.sh"

. "$top/tests/integration/agent.sh"
. "$top/tests/integration/agent_output.sh"

all_tests=(fork_child_ioctl fork_exec_own thread double_fork exec_leak segv kfd fdpass attach
	attach_threads	fork_storm nongpu demo cgroup all record_export exit_status release syscall_args params_capture ioctl_comm open_syscalls exec_fd_scan lib_once lib_maps_once lib_seen_renamed ioctl_slot_shared ring_wrap ring_size load_budget errors sigkill api_cuda api_cuda_single api_cuda_stub api_hip
	api_hip_real real_amd real_amd_exec api_container security dead_node any_checkout "${diag_tests[@]}" "${attach_tests[@]}"
	"${execfd_tests[@]}"
	stacks_c stacks_c_fp stacks_gone_c stacks_gone_crash stacks_cxx stacks_inline stacks_py stacks_py_crash stacks_py_cuda stacks_py_cudause stacks_py_unknown
	stacks_py_long stacks_py_long_parent stacks_py_long_gone stacks_py_late
	stacks_dataloader stacks_timeline api_caller api_caller_gone
	api_caller_gone_nostacks "${cluster_tests[@]}" "${agent_tests[@]}"
	"${agent_output_tests[@]}")
. "$top/tests/integration/childprobe.sh"
all_tests+=("${childprobe_tests[@]}")
. "$top/tests/integration/api_coverage.sh"
. "$top/tests/integration/callers.sh"
. "$top/tests/integration/sandbox.sh"
[ $# -gt 0 ] && all_tests=("$@")
for t in "${all_tests[@]}"; do
	"t_$t"
done
suite_summary
