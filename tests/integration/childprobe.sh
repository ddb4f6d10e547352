# SPDX-License-Identifier: GPL-2.0
# Issue 42: "used" means attempted. A child forked without exec from a process holding GPU
# state is held on its way back from fork and given probes on every CUDA/HIP function for it
# alone; its calls that the libcuda double refuses in user space, with no ioctl (as the real
# libcuda does), make the poison fork an error that names the call and its result.
#   fork_query_count    the child's only call, cuDeviceGetCount, is refused: error, check 86
#   fork_query_errname  cuGetErrorName works, then cuDeviceGetCount is refused: both named
#   fork_query_lookup   cuGetErrorName only: a call, so a use (error)
#   fork_query_none     the child calls nothing: a warning, "none used it", check 0
#   fork_query_nostacks the same as count with --no-stacks
#   pyexc_*             a Python child (tests/workloads/pyexc_job.py) that raises in Python:
#                       PyTorch's RuntimeError before any driver call (torch: an error naming
#                       the exception and its file:line, on pyenv 3.11, Debian's 3.11 and pyenv
#                       3.10/3.12/3.13), Numba's CudaDriverError after a refused
#                       cuDeviceGetCount (numba), or a KeyError only (noise: a warning)
#   fork_query_hip      the HIP double: the child's only call, hipGetDeviceCount, is answered
#                       from the parent's state with no ioctl (as the real HIP runtime does):
#                       an error naming it and its result
#   agent_pyexc         the node's agent dumps the PyTorch-style poison fork (the child only
#                       raises, no driver call): the error incident quotes what it raised
#   fork_blocked_output record's live output goes to a pipe nobody reads (`gpuctx record |
#                       less`, not scrolled): its main loop is blocked on it when the child
#                       forks, and the child must still get its probes before it runs (the
#                       ring's look ahead thread acts on it), not be let go unseen by the
#                       hold's timeout
# Every case also checks that the parent's own cuDeviceGetCount calls were not recorded: the
# per-child probes are not in a healthy process's address space.
# Sourced by run.sh (uses its record/result/$T/$W/$MNT/$DOUBLES).

childprobe_tests=(fork_query_count fork_query_errname fork_query_lookup fork_query_none
	fork_query_nostacks pyexc_torch pyexc_numba pyexc_noise pyexc_torch_debian pyexc_torch_310
	pyexc_torch_312 pyexc_torch_313 pyexc_torch_nostacks pyexc_latin1 pyexc_emoji_nostacks
	fork_query_hip fork_blocked_output agent_pyexc)

t_fork_query_count() { fork_query_case fork_query_count count 86; }
t_fork_query_errname() { fork_query_case fork_query_errname errname 86; }
t_fork_query_lookup() { fork_query_case fork_query_lookup lookup 86; }
t_fork_query_none() { fork_query_case fork_query_none none 0; }
t_fork_query_nostacks() { fork_query_case fork_query_nostacks count 86 --no-stacks; }

# fork_query_case NAME MODE CHECK-STATUS [RECORD-OPTION...]
fork_query_case() {
	local name=$1 mode=$2 want=$3 rc
	shift 3
	if [ ! -e "$W/api_cuda_fork_query" ] || [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/workloads/api_cuda_fork_query was not built (no CUDA headers)"
		return
	fi
	LD_LIBRARY_PATH=$DOUBLES record "$name" --libcuda "$DOUBLES/libcuda.so.1" "$@" -- \
		"$W/api_cuda_fork_query" "$MNT" "$mode"
	rc=$?
	if [ $rc = 0 ]; then
		LD_LIBRARY_PATH=$DOUBLES "$G" check "${DEVS[@]}" --libcuda "$DOUBLES/libcuda.so.1" \
			"$@" -- "$W/api_cuda_fork_query" "$MNT" "$mode" >"$T/$name.check" 2>&1
		local st=$?
		if [ $st != "$want" ]; then
			echo "gpuctx check exited $st, expected $want" >>"$T/$name.err"
			sed 's/^/check: /' "$T/$name.check" >>"$T/$name.err"
			rc=1
		fi
	else
		echo "workload or report exited $rc" >>"$T/$name.err"
	fi
	[ $rc = 0 ] && { python3 "$top/tests/integration/check_childprobe.py" "$mode" \
		"$T/$name.json" "$T/$name.check" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

t_pyexc_torch() { pyexc_case pyexc_torch torch 86 "$(command -v python3)"; }
t_pyexc_numba() { pyexc_case pyexc_numba numba 86 "$(command -v python3)"; }
t_pyexc_noise() { pyexc_case pyexc_noise noise 0 "$(command -v python3)"; }
t_pyexc_torch_debian() { pyexc_case pyexc_torch_debian torch 86 /usr/bin/python3; }
t_pyexc_torch_310() { pyexc_case pyexc_torch_310 torch 86 "$(pyenv_python 3.10)"; }
t_pyexc_torch_312() { pyexc_case pyexc_torch_312 torch 86 "$(pyenv_python 3.12)"; }
t_pyexc_torch_313() { pyexc_case pyexc_torch_313 torch 86 "$(pyenv_python 3.13)"; }
# --no-stacks: the message is still read (the interpreter's layout from its file, by the probe's
# cookie), the site is not; non-ASCII messages come out as UTF-8, with and without stacks
t_pyexc_torch_nostacks() { pyexc_case pyexc_torch_nostacks torch 86 "$(command -v python3)" --no-stacks; }
t_pyexc_latin1() { pyexc_case pyexc_latin1 latin1 86 "$(pyenv_python 3.12)"; }
t_pyexc_emoji_nostacks() { pyexc_case pyexc_emoji_nostacks emoji 86 /usr/bin/python3 --no-stacks; }

pyenv_python() {
	local root
	root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	ls -d "$root"/versions/"$1".*/bin/python"$1" 2>/dev/null | tail -1
}

# pyexc_case NAME MODE CHECK-STATUS PYTHON [CHECK-OPTION...]
pyexc_case() {
	local name=$1 mode=$2 want=$3 py=$4 rc st site=
	shift 4
	[[ " $* " == *" --no-stacks "* ]] && site=-nosite
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/doubles/libcuda.so.1 was not built (no CUDA headers)"
		return
	fi
	if [ -z "$py" ] || [ ! -x "$py" ]; then
		echo "SKIP $name: no such Python (pyenv)"
		return
	fi
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES "$G" check -o "$T/$name.gctx" \
		"${DEVS[@]}" --libcuda "$DOUBLES/libcuda.so.1" "$@" -- \
		"$py" "$top/tests/workloads/pyexc_job.py" "$MNT" "$mode" >"$T/$name.check" 2>&1
	st=$?
	rc=0
	if [ $st != "$want" ]; then
		echo "gpuctx check exited $st, expected $want" >>"$T/$name.err"
		sed 's/^/check: /' "$T/$name.check" >>"$T/$name.err"
		rc=1
	fi
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { python3 "$top/tests/integration/check_childprobe.py" "py-$mode$site" \
		"$T/$name.json" "$T/$name.check" \
		"$top/tests/workloads/pyexc_job.py" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

t_fork_query_hip() {
	local name=fork_query_hip rc st
	if [ ! -e "$DOUBLES/libamdhip64.so.5" ]; then
		echo "SKIP $name: build/doubles/libamdhip64.so.5 was not built (no HIP headers)"
		return
	fi
	cat >"$T/$name.py" <<'EOS'
import ctypes, os, sys
hip = ctypes.CDLL("libamdhip64.so.5")
assert hip.hipInit(0) == 0
n = ctypes.c_int(-1)
for _ in range(3):
    assert hip.hipGetDeviceCount(ctypes.byref(n)) == 0  # the parent's: not probed
pid = os.fork()
if pid == 0:
    os._exit(hip.hipGetDeviceCount(ctypes.byref(n)))
_, st = os.waitpid(pid, 0)
print("child", pid, "hipGetDeviceCount", os.WEXITSTATUS(st), flush=True)
EOS
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES "$G" check -o "$T/$name.gctx" \
		"${DEVS[@]}" --libhip "$DOUBLES/libamdhip64.so.5" -- \
		python3 "$T/$name.py" >"$T/$name.check" 2>&1
	st=$?
	rc=0
	if [ $st != 86 ]; then
		echo "gpuctx check exited $st, expected 86" >>"$T/$name.err"
		sed 's/^/check: /' "$T/$name.check" >>"$T/$name.err"
		rc=1
	fi
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { python3 - "$T/$name.json" "$T/$name.check" >>"$T/$name.err" 2>&1 <<'EOS'
import json, re, sys
rep, out = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
m = re.search(r"^child (\d+) hipGetDeviceCount (\d+)$", out, re.M)
assert m, out
child, code = int(m.group(1)), int(m.group(2))
inc = [i for i in rep["incidents"] if i["kind"] == "poison-fork" and child in i["pids"]]
assert len(inc) == 1 and inc[0]["severity"] == "error", rep["incidents"]
icc = [f for f in rep["findings"]
       if f["kind"] == "inherited-context-call" and f["pid"] == child]
assert len(icc) == 1 and icc[0]["call"] == "hipGetDeviceCount" and icc[0]["api_ret"] == code, icc
assert inc[0]["first_use"].startswith("hipGetDeviceCount -> "), inc
assert inc[0]["api"] == "HIP" or "HIP" in inc[0]["summary"], inc
parent = [p for p in rep["processes"] if p["pid"] == inc[0]["pid"]][0]
assert parent["api_calls"] == 1, parent  # hipInit only: its hipGetDeviceCount not probed
EOS
		rc=$?; }
	result "$name" $rc
}

t_fork_blocked_output() {
	local name=fork_blocked_output rc
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/doubles/libcuda.so.1 was not built (no CUDA headers)"
		return
	fi
	cat >"$T/$name.py" <<EOS
import ctypes, os
os.environ["GPUCTX_FAKEGPU_DIR"] = "$MNT"
lib = ctypes.CDLL("$DOUBLES/libcuda.so.1")
assert lib.cuInit(0) == 0
ctx = ctypes.c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
p = ctypes.c_uint64()
for _ in range(2000):  # live lines: far more than a pipe holds
    assert lib.cuMemAlloc_v2(ctypes.byref(p), 4096) == 0
    assert lib.cuMemFree_v2(p) == 0
pid = os.fork()
if pid == 0:
    n = ctypes.c_int()
    os._exit(0 if lib.cuDeviceGetCount(ctypes.byref(n)) == 3 else 1)
_, st = os.waitpid(pid, 0)
open("$T/$name.done", "w").close()
exit(os.waitstatus_to_exitcode(st))
EOS
	# the reader drains the pipe only once the job's child has ended
	"$G" record -o "$T/$name.gctx" "${DEVS[@]}" --libcuda "$DOUBLES/libcuda.so.1" -- \
		/usr/bin/python3 "$T/$name.py" 2>"$T/$name.err" |
		{
			for _ in $(seq 300); do
				[ -e "$T/$name.done" ] && break
				sleep 0.1
			done
			cat >"$T/$name.out"
		}
	rc=${PIPESTATUS[0]}
	if [ ! -e "$T/$name.done" ]; then
		echo "the job did not end within 30 s" >>"$T/$name.err"
		rc=1
	elif [ "$(wc -l <"$T/$name.out")" -lt 4000 ]; then
		echo "fewer live lines than the test needs to fill the pipe" >>"$T/$name.err"
		rc=1
	elif [ $rc = 0 ]; then
		"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" &&
			"$G" report "$T/$name.gctx" >"$T/$name.report" 2>>"$T/$name.err" &&
			python3 "$top/tests/integration/check_childprobe.py" blocked "$T/$name.json" \
				"$T/$name.report" >>"$T/$name.err" 2>&1
		rc=$?
	else
		echo "record or the job exited $rc" >>"$T/$name.err"
	fi
	result "$name" $rc
}

t_agent_pyexc() {
	local name=agent_pyexc rc=0 job d
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/doubles/libcuda.so.1 was not built (no CUDA headers)"
		return
	fi
	agent_start $name --grace 0.5 || { result $name 1; return; }
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES /usr/bin/python3 \
		"$top/tests/workloads/pyexc_job.py" "$MNT" torch >"$T/$name.wl" 2>&1 &
	job=$!
	wait $job || { echo "the job exited $?" >>"$T/$name.err"; rc=1; }
	agent_wait_dump "$T/$name.spool" $job || { echo "no dump for $job" >>"$T/$name.err"; rc=1; }
	kill -TERM $AGENT_PID
	wait $AGENT_PID
	d=$T/$name.spool/$(agent_dumps "$T/$name.spool" $job | head -1)
	if [ $rc = 0 ]; then
		"$G" report --json "$d" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
		grep -q "poison-fork: .*$(basename "$d").*raised RuntimeError: Cannot re-initialize CUDA in forked subprocess" \
			"$T/$name.out" || { echo "no incident line quoting it" >>"$T/$name.err"; rc=1; }
	fi
	[ $rc = 0 ] && python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1]))
inc = [i for i in d["incidents"] if i["kind"] == "poison-fork"]
assert len(inc) == 1 and inc[0]["severity"] == "error", d["incidents"]
assert inc[0]["raised"].startswith(
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess"), inc[0]
PY
	result $name $rc
}
