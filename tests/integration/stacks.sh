# SPDX-License-Identifier: GPL-2.0
# Stacks at rare events (issue 11), sourced by run.sh: the report names the function, file and
# line where the GPU was initialised, where the fork happened, where the child used the
# inherited state and where it crashed, for C (with and without frame pointers) and for every
# CPython on the machine.

# stack_scenario NAME KIND SOURCE MODE -- CMD...
stack_scenario() {
	local name=$1 kind=$2 src=$3 mode=$4
	shift 5
	record "$name" -- "$@"
	local rc=$?
	if [ $rc != 0 ]; then
		echo "workload or report exited $rc" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	python3 "$top/tests/integration/check_stacks.py" "$kind" "$T/$name.json" "$src" $mode \
		>>"$T/$name.err" 2>&1
	result "$name" $?
}

t_stacks_c() {
	stack_scenario stacks_c c "$top/tests/workloads/wl_blame.c" crash -- \
		"$W/wl_blame" "$MNT" crash
}

t_stacks_c_fp() {
	stack_scenario stacks_c_fp c "$top/tests/workloads/wl_blame.c" crash -- \
		"$W/wl_blame_fp" "$MNT" crash
}

# stopped_c NAME MODE: wl_blame (MODE crash: the child dies by SIGSEGV right after its GPU use)
# with the collector stopped (SIGSTOP) from the workload's start for 1 s: every process has
# taken its stacks and exited before the collector reads anything, and the report still names
# the native functions (the kernel sends the mappings with each stack).
stopped_c() {
	local name=$1 mode=$2
	stack_scenario "$name" c "$top/tests/workloads/wl_blame.c" "$mode" -- \
		sh -c 'kill -STOP $PPID; (sleep 1; kill -CONT $PPID) & exec "$@"' sh \
		"$W/wl_blame" "$MNT" $mode
}

t_stacks_gone_c() { stopped_c stacks_gone_c ""; }
t_stacks_gone_crash() { stopped_c stacks_gone_crash crash; }

# C++ (g++ -O2) over the CUDA double: the sites name the methods demangled.
t_stacks_cxx() {
	if [ ! -e "$W/wl_blame_cxx" ] || [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP stacks_cxx: build/workloads/wl_blame_cxx or the libcuda double was not built"
		return
	fi
	LD_LIBRARY_PATH=$DOUBLES stack_scenario stacks_cxx cxx \
		"$top/tests/workloads/wl_blame_cxx.cc" "" -- "$W/wl_blame_cxx" "$MNT"
}

# A static function that calls ioctl, inlined into its caller: both frames, with their lines.
t_stacks_inline() {
	stack_scenario stacks_inline inline "$top/tests/workloads/wl_inline.c" "" -- \
		"$W/wl_inline" "$MNT"
}

# Every CPython here: Debian's /usr/bin/python3 and pyenv's 3.10-3.13.
py_interpreters() {
	echo /usr/bin/python3
	local root
	root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	for v in 3.10 3.11 3.12 3.13; do
		ls -d "$root"/versions/$v.*/bin/python$v 2>/dev/null | tail -1
	done
}

# A collector far behind (stopped) while a Python job runs whole: the kernel places the
# interpreter at exec for an executable the collector has read once (here at a first run, as
# the node's agent does), so the sites still have their Python lines. Before, the process's
# Python frames came only once the collector got to its exec: a short script's GPU calls
# on a busy machine had native frames only.
t_stacks_py_late() {
	local name=stacks_py_late bg wl rc=0 py=/usr/bin/python3
	"$G" record -a -q -o "$T/$name.gctx" "${DEVS[@]}" >"$T/$name.out" 2>"$T/$name.err" &
	bg=$!
	for _ in $(seq 300); do
		grep -qs "attached to" "$T/$name.err" && break
		sleep 0.05
	done
	$py -c 'import time; time.sleep(0.3)'
	sleep 0.5
	kill -STOP $bg
	"$py" "$top/tests/workloads/blame.py" "$MNT" >>"$T/$name.out" 2>&1 || rc=1
	kill -CONT $bg
	sleep 0.5
	kill -INT $bg
	wait $bg || rc=1
	if [ $rc != 0 ] || ! "$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err"; then
		echo "workload, record or report failed" >>"$T/$name.err"
		result $name 1
		return
	fi
	python3 "$top/tests/integration/check_stacks.py" py "$T/$name.json" \
		"$top/tests/workloads/blame.py" >>"$T/$name.err" 2>&1
	result $name $?
}

t_stacks_py() {
	local py n
	for py in $(py_interpreters); do
		n=stacks_py_$(basename "$py" | tr . _)_$(echo "$py" | cksum | cut -c1-4)
		stack_scenario "$n" py "$top/tests/workloads/blame.py" "" -- \
			"$py" "$top/tests/workloads/blame.py" "$MNT"
	done
}

t_stacks_py_crash() {
	stack_scenario stacks_py_crash py "$top/tests/workloads/blame.py" crash -- \
		/usr/bin/python3 "$top/tests/workloads/blame.py" "$MNT" crash
}

# cuInit (through ctypes and the CUDA double) opens the device: the init site is still
# the Python line that called cuInit.
t_stacks_py_cuda() {
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP stacks_py_cuda: build/doubles/libcuda.so.1 was not built"
		return
	fi
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES stack_scenario stacks_py_cuda \
		py "$top/tests/workloads/blame.py" cuda -- \
		/usr/bin/python3 "$top/tests/workloads/blame.py" "$MNT" cuda
}

# The child's use is a CUDA call that never reaches the driver (the API probe takes the stack).
t_stacks_py_cudause() {
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP stacks_py_cudause: build/doubles/libcuda.so.1 was not built"
		return
	fi
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES stack_scenario \
		stacks_py_cudause py "$top/tests/workloads/blame.py" cudause -- \
		/usr/bin/python3 "$top/tests/workloads/blame.py" "$MNT" cudause
}

# An interpreter whose layout gpuctx does not know (3.9): a note, native frames, no crash.
t_stacks_py_unknown() {
	local root py
	root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	py=$(ls -d "$root"/versions/3.9.*/bin/python3.9 2>/dev/null | tail -1)
	if [ -z "$py" ]; then
		echo "SKIP stacks_py_unknown: no CPython 3.9 under $root"
		return
	fi
	stack_scenario stacks_py_unknown py "$top/tests/workloads/blame.py" unknown -- \
		"$py" "$top/tests/workloads/blame.py" "$MNT"
}

# Sites at the end of long functions (line tables longer than the 384 bytes the kernel copies):
# the collector reads the rest from the process's memory. The program stays a while after its
# child exits, as a job does: the child's use is read through the parent's memory.
t_stacks_py_long() {
	local py n mode=""
	[ -e "$DOUBLES/libcuda.so.1" ] && mode=cuda
	for py in $(py_interpreters); do
		n=stacks_py_long_$(basename "$py" | tr . _)_$(echo "$py" | cksum | cut -c1-4)
		GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES stack_scenario "$n" py \
			"$T/$n.py" "$mode" -- "$py" "$top/tests/workloads/blame_long.py" "$MNT" \
			"$T/$n.py" $mode --linger 2
	done
}

# long_stopped NAME WAIT LINGER MODE: blame_long.py with the collector stopped (SIGSTOP) from
# before the GPU is touched until WAIT: "reaped" (the child is gone, the parent stays LINGER
# seconds) or "exit" (the program has exited too). Then check_stacks.py MODE.
long_stopped() {
	local name=$1 wait=$2 linger=$3 mode=$4 rc=0 rec wl sync=$T/$1.sync
	mkdir -p "$sync"
	"$G" record -v -o "$T/$name.gctx" "${DEVS[@]}" -- /usr/bin/python3 \
		"$top/tests/workloads/blame_long.py" "$MNT" "$T/$name.py" --sync "$sync" \
		--linger "$linger" >"$T/$name.out" 2>"$T/$name.log" &
	rec=$!
	# the collector has told the kernel where the interpreter is: stop it
	for _ in $(seq 200); do grep -q 'runs Python' "$T/$name.log" && break; sleep 0.05; done
	wl=$(sed -n 's/^gpuctx: pid \([0-9]*\) runs Python.*/\1/p' "$T/$name.log" | head -1)
	kill -STOP "$rec"
	touch "$sync/go"
	for _ in $(seq 400); do
		if [ "$wait" = reaped ]; then
			[ -e "$sync/reaped" ] && break
		else # a zombie: the stopped collector has not reaped it
			[ "$(cut -d' ' -f3 "/proc/$wl/stat" 2>/dev/null)" = Z ] && break
		fi
		sleep 0.05
	done
	kill -CONT "$rec"
	wait "$rec" || rc=1
	[ -n "$wl" ] || { echo "no 'runs Python' line from record -v" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { python3 "$top/tests/integration/check_stacks.py" py "$T/$name.json" \
		"$T/$name.py" $mode >>"$T/$name.err" 2>&1 || rc=1; }
	result "$name" $rc
}

# The child exited before its use was resolved: its lines come from the parent's memory.
t_stacks_py_long_parent() { long_stopped stacks_py_long_parent reaped 3 ""; }

# Everything exited before the collector resolved the stacks: no line, and a note says why.
t_stacks_py_long_gone() { long_stopped stacks_py_long_gone exit 0 gone; }

# The real thing: a torch DataLoader forks its workers after the "model" initialised CUDA.
t_stacks_dataloader() {
	if [ ! -e "$DOUBLES/libcuda.so.1" ] || ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
		echo "SKIP stacks_dataloader: needs build/doubles/libcuda.so.1 and torch for /usr/bin/python3"
		return
	fi
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES stack_scenario stacks_dataloader \
		py "$top/tests/workloads/blame_dataloader.py" dataloader -- \
		/usr/bin/python3 "$top/tests/workloads/blame_dataloader.py" "$MNT"
}

# The timeline carries the sites: Chrome JSON args and Perfetto debug annotations of the
# finding instants.
t_stacks_timeline() {
	local name=stacks_timeline rc=0
	record "$name" -- /usr/bin/python3 "$top/tests/workloads/blame.py" "$MNT" || rc=1
	[ $rc = 0 ] && { "$G" export -q -f chrome -o "$T/$name.chrome.json" "$T/$name.gctx" \
		2>>"$T/$name.err" || rc=1; }
	[ $rc = 0 ] && { "$G" export -q -f perfetto -o "$T/$name.pftrace" "$T/$name.gctx" \
		2>>"$T/$name.err" || rc=1; }
	[ $rc = 0 ] && { python3 - "$T/$name.chrome.json" "$T/$name.pftrace" >>"$T/$name.err" 2>&1 <<'PY' || rc=1; }
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
use = [e for e in ev if e.get("cat") == "finding" and "inherited-gpu-use" in e.get("name", "")]
assert use, "no inherited-gpu-use instant"
a = use[0]["args"]
for k, fn in (("init_site", "init_gpu"), ("fork_site", "start_worker"), ("use_site", "worker_loop")):
    assert "blame.py:" in a.get(k, "") and fn in a[k], (k, a.get(k))
assert "in main" in a.get("init_stack", ""), a.get("init_stack")
# Perfetto: the same text as debug annotations (strings are stored verbatim in the proto)
raw = open(sys.argv[2], "rb").read()
assert b"init_site" in raw and b"in init_gpu" in raw, "no init_site annotation in the pftrace"
PY
	result "$name" $rc
}
