# SPDX-License-Identifier: GPL-2.0
# API coverage (issue 12): the first CUDA/HIP calls of a library found late are seen, and where
# they could not be, the report says so. Sourced by run.sh (uses its record/result/$T/$W/$MNT);
# each test records only its own command or pid, so system-wide runs beside it do not matter.
D=$DOUBLES
CCHECK="python3 $top/tests/integration/check_coverage.py"

# cov_check NAME [check args...]: record exit status already in rc; run the coverage checks.
cov_check() {
	local name=$1 rc=$2
	shift 2
	if [ "$rc" != 0 ]; then
		echo "workload or report exited $rc" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	$CCHECK "$name" "$T/$name.json" "$@" >"$T/$name.chk" 2>&1
	rc=$?
	# the failed assertion last, where result() shows it
	[ $rc = 0 ] || { cat "$T/$name.chk"; grep -m1 "check failed" "$T/$name.chk"; } >>"$T/$name.err"
	result "$name" $rc
}

need_cuda_double() {
	[ -e "$D/libcuda.so.1" ] && [ -e "$W/api_cuda_fork" ] && return 0
	echo "SKIP $1: build/doubles/libcuda.so.1 was not built (CUDA headers missing)"
	return 1
}

# A program linked against libcuda.so.1 that only LD_LIBRARY_PATH finds: no --libcuda.
t_cov_ld_library_path() {
	local name=cov_ld_library_path
	need_cuda_double $name || return
	mkdir -p "$T/llp" && cp "$D/libcuda.so.1" "$T/llp/"
	LD_LIBRARY_PATH=$T/llp record $name -- "$W/api_cuda_fork" "$MNT"
	cov_check $name $? --lib "$T/llp/libcuda.so.1" --predicted
}

# The same found through the executable's DT_RUNPATH, with $ORIGIN.
t_cov_runpath() {
	local name=cov_runpath
	need_cuda_double $name || return
	mkdir -p "$T/rp/bin" "$T/rp/lib" && cp "$D/libcuda.so.1" "$T/rp/lib/"
	if ! cc -D_GNU_SOURCE -Iinclude -Iuser -I/usr/local/cuda/include \
		tests/workloads/api_cuda_fork.c -L/usr/local/cuda/lib64/stubs -lcuda -lpthread \
		-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib' -o "$T/rp/bin/api_cuda_fork" \
		2>"$T/$name.err"; then
		result $name 1
		return
	fi
	if ! readelf -d "$T/rp/bin/api_cuda_fork" | grep -q 'RUNPATH.*\$ORIGIN/../lib'; then
		echo "the test binary has no DT_RUNPATH" >>"$T/$name.err"
		result $name 1
		return
	fi
	record $name -- "$T/rp/bin/api_cuda_fork" "$MNT"
	cov_check $name $? --lib "$T/rp/lib/libcuda.so.1" --predicted
}

# python_cuda FILE LIB: Python loads LIB by absolute path (a path nobody could predict) and
# calls cuInit at once, makes a context, then forks a child that makes it current: refused
# (CUDA_ERROR_NOT_INITIALIZED, no ioctl), as by the real libcuda.
python_cuda() {
	cat >"$1" <<EOS
import ctypes, os
os.environ["GPUCTX_FAKEGPU_DIR"] = "$MNT"
lib = ctypes.CDLL("$2")
assert lib.cuInit(0) == 0
ctx = ctypes.c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
pid = os.fork()
if pid == 0:
    os._exit(0 if lib.cuCtxSetCurrent(ctx) == 3 else 1)
_, st = os.waitpid(pid, 0)
exit(os.waitstatus_to_exitcode(st))
EOS
}

t_cov_ctypes_fork() {
	local name=cov_ctypes_fork
	need_cuda_double $name || return
	mkdir -p "$T/py" && cp "$D/libcuda.so.1" "$T/py/"
	python_cuda "$T/$name.py" "$T/py/libcuda.so.1"
	record $name -- /usr/bin/python3 "$T/$name.py"
	cov_check $name $? --lib "$T/py/libcuda.so.1" --held
}

# Under a shell, the hold (a stop and a continue) must not change the job: the shell waits on,
# and its command's status comes through.
t_cov_shell_parent() {
	local name=cov_shell_parent rc
	need_cuda_double $name || return
	mkdir -p "$T/sh" && cp "$D/libcuda.so.1" "$T/sh/"
	python_cuda "$T/$name.py" "$T/sh/libcuda.so.1"
	record $name -- sh -c "/usr/bin/python3 $T/$name.py; echo python-exited-\$?"
	rc=$?
	if [ $rc = 0 ] && ! grep -q "^python-exited-0$" "$T/$name.out"; then
		echo "the shell did not see its command end normally" >>"$T/$name.err"
		rc=1
	fi
	cov_check $name $rc --lib "$T/sh/libcuda.so.1" --held
}

# NVIDIA's stub libcuda made visible through the command's LD_LIBRARY_PATH: probed, and every
# call's CUDA_ERROR_STUB_LIBRARY seen (run.sh's api_cuda_stub does the same with --libcuda).
t_cov_stub_llp() {
	local name=cov_stub_llp stub=/usr/local/cuda/lib64/stubs/libcuda.so rc
	need_cuda_double $name || return
	[ -e "$stub" ] || { echo "SKIP $name: no $stub"; return; }
	mkdir -p "$T/stubllp" && ln -sf "$stub" "$T/stubllp/libcuda.so.1"
	LD_LIBRARY_PATH=$T/stubllp record $name -- "$W/api_cuda_fork" "$MNT" --stub
	rc=$?
	[ $rc = 0 ] && { $CHECK api_cuda_stub "$T/$name.json" >>"$T/$name.err" 2>&1; rc=$?; }
	result $name $rc
}

# A PyTorch trainer that initialises CUDA from a private copy of libcuda, then a fork-context
# DataLoader whose two workers touch CUDA: both inherited-context-calls must be there.
t_cov_dataloader() {
	local name=cov_dataloader
	need_cuda_double $name || return
	if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
		echo "SKIP $name: no torch for /usr/bin/python3"
		return
	fi
	mkdir -p "$T/dl" && cp "$D/libcuda.so.1" "$T/dl/"
	cat >"$T/$name.py" <<EOS
import ctypes, os
os.environ["GPUCTX_FAKEGPU_DIR"] = "$MNT"
import torch
from torch.utils.data import DataLoader, Dataset

lib = ctypes.CDLL("$T/dl/libcuda.so.1")
assert lib.cuInit(0) == 0
ctx = ctypes.c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0


class Touch(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torch.tensor([lib.cuCtxSetCurrent(ctx)])


loader = DataLoader(Touch(), batch_size=1, num_workers=2, multiprocessing_context="fork")
codes = [int(b) for batch in loader for b in batch]
exit(0 if codes == [3, 3] else 1)
EOS
	record $name -- /usr/bin/python3 "$T/$name.py"
	cov_check $name $? --lib "$T/dl/libcuda.so.1" --held --icc 2
}

# --no-hold: the same run must say that the first calls could not be seen.
t_cov_no_hold() {
	local name=cov_no_hold rc
	need_cuda_double $name || return
	mkdir -p "$T/nh" && cp "$D/libcuda.so.1" "$T/nh/"
	python_cuda "$T/$name.py" "$T/nh/libcuda.so.1"
	record $name --no-hold -- /usr/bin/python3 "$T/$name.py"
	rc=$?
	if [ $rc = 0 ] && ! "$G" report "$T/$name.gctx" | grep -q "^API coverage: INCOMPLETE"; then
		echo "the text report does not say the API trace is incomplete" >>"$T/$name.err"
		rc=1
	fi
	cov_check $name $rc --lib "$T/nh/libcuda.so.1" --gap no-hold
}

# attach_run NAME WLPID: record -p WLPID once it said "ready", let it go ($T/NAME.go), wait for
# both, write $T/NAME.json. Returns non-zero when any of it failed.
attach_run() {
	local name=$1 wl=$2 rc=0 rec
	for _ in $(seq 100); do grep -q ready "$T/$name.wl" && break; sleep 0.05; done
	"$G" record -q -o "$T/$name.gctx" -p "$wl" >"$T/$name.out" 2>"$T/$name.err" &
	rec=$!
	for _ in $(seq 200); do grep -q attached "$T/$name.err" && break; sleep 0.05; done
	touch "$T/$name.go"
	wait "$wl" || rc=1
	wait "$rec" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	return $rc
}

# -p: a running process whose environment points LD_LIBRARY_PATH at a private directory
# loads libcuda.so.1 by name after gpuctx attached: probed from /proc/PID/environ beforehand.
t_cov_attach_env() {
	local name=cov_attach_env rc=0
	need_cuda_double $name || return
	mkdir -p "$T/att" && cp "$D/libcuda.so.1" "$T/att/"
	LD_LIBRARY_PATH=$T/att GPUCTX_FAKEGPU_DIR=$MNT /usr/bin/python3 -c '
import ctypes, os, sys, time
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
exit(ctypes.CDLL("libcuda.so.1").cuInit(0))' "$T/$name.go" >"$T/$name.wl" 2>&1 &
	local wl=$!
	attach_run $name $wl || rc=1
	cov_check $name $rc --lib "$T/att/libcuda.so.1" --predicted --pid "$wl" --calls 1
}

# -p: the attached process itself is not held (its parent, outside the job, would see the
# stop): its late library is a reported gap. Its forked child is held as usual.
t_cov_attach_outside() {
	local name=cov_attach_outside rc=0
	need_cuda_double $name || return
	mkdir -p "$T/ao1" "$T/ao2" && cp "$D/libcuda.so.1" "$T/ao1/" && cp "$D/libcuda.so.1" "$T/ao2/"
	GPUCTX_FAKEGPU_DIR=$MNT /usr/bin/python3 -c '
import ctypes, os, sys, time
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
ctypes.CDLL(sys.argv[2])
time.sleep(0.3)
pid = os.fork()
if pid == 0:
    os._exit(ctypes.CDLL(sys.argv[3]).cuInit(0))
os.waitpid(pid, 0)' "$T/$name.go" "$T/ao1/libcuda.so.1" "$T/ao2/libcuda.so.1" >"$T/$name.wl" 2>&1 &
	local wl=$!
	attach_run $name $wl || rc=1
	cov_check $name $rc --lib "$T/ao1/libcuda.so.1" --pid "$wl" --gap not-held-attached \
		--held-child "$T/ao2/libcuda.so.1"
}

# HIP: a wheel-style bundled libamdhip64 loaded by absolute path, hipInit at once.
t_cov_hip_ctypes() {
	local name=cov_hip_ctypes
	if [ ! -e "$D/libamdhip64.so.5" ]; then
		echo "SKIP $name: build/doubles/libamdhip64.so.5 was not built (HIP headers missing)"
		return
	fi
	mkdir -p "$T/torch/lib" && cp "$D/libamdhip64.so.5" "$T/torch/lib/"
	GPUCTX_FAKEGPU_DIR=$MNT record $name -- /usr/bin/python3 -c "
import ctypes
exit(0 if ctypes.CDLL('$T/torch/lib/libamdhip64.so.5').hipInit(0) in (0, 3) else 1)"
	cov_check $name $? --lib "$T/torch/lib/libamdhip64.so.5" --held --calls 1
}

# A CUDA library under another name is only recognised by its exports once mapped: it is
# probed then, and the window before is reported.
t_cov_renamed() {
	local name=cov_renamed
	need_cuda_double $name || return
	mkdir -p "$T/rn" && cp "$D/libcuda.so.1" "$T/rn/libgpuwrap.so"
	GPUCTX_FAKEGPU_DIR=$MNT record $name -- /usr/bin/python3 -c "
import ctypes, time
lib = ctypes.CDLL('$T/rn/libgpuwrap.so')
time.sleep(0.5)
exit(lib.cuInit(0))"
	cov_check $name $? --lib "$T/rn/libgpuwrap.so" --gap not-named-like-an-api-library \
		--calls 1
}

# gpuctx SIGKILLed while a process loads a library from a fresh path every few ms: that
# process must not be left stopped (state T), and must run to its end.
t_cov_hold_sigkill() {
	local name=cov_hold_sigkill rc=0 pid state
	need_cuda_double $name || return
	mkdir -p "$T/k"
	cat >"$T/$name.py" <<EOS
import ctypes, os, shutil, time
open("$T/$name.pid", "w").write(str(os.getpid()))
end = time.time() + 4
i = 0
while time.time() < end:
    d = "$T/k/%d" % i
    os.mkdir(d)
    shutil.copy("$D/libcuda.so.1", d)
    ctypes.CDLL(d + "/libcuda.so.1")
    i += 1
    time.sleep(0.005)
open("$T/$name.done.tmp", "w").write(str(i))
os.replace("$T/$name.done.tmp", "$T/$name.done") # never read half-written
EOS
	"$G" record -q -o "$T/$name.gctx" -- /usr/bin/python3 "$T/$name.py" >/dev/null \
		2>"$T/$name.err" &
	local rec=$!
	# killed while the workload loads libraries, however long a loaded machine takes to start
	for _ in $(seq 200); do [ -s "$T/$name.pid" ] && break; sleep 0.1; done
	sleep 0.5
	local releaser
	releaser=$(pgrep -P $rec -x gctx-resume)
	kill -KILL $rec
	wait $rec 2>/dev/null
	pid=$(cat "$T/$name.pid" 2>/dev/null)
	[ -n "$pid" ] || { echo "the workload never started" >>"$T/$name.err"; rc=1; }
	# the releaser resumes every hold within its orphan sweep (1 s)
	for _ in $(seq 100); do
		[ -e "$T/$name.done" ] && break
		state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
		sleep 0.1
	done
	if [ ! -e "$T/$name.done" ]; then
		echo "pid $pid did not finish after gpuctx was killed (state ${state:-gone})" \
			>>"$T/$name.err"
		kill -CONT "$pid" 2>/dev/null
		kill -KILL "$pid" 2>/dev/null
		rc=1
	elif [ -z "$releaser" ]; then
		echo "no releaser ran beside gpuctx" >>"$T/$name.err"
		rc=1
	elif [ "$(cat "$T/$name.done")" -lt 20 ]; then
		echo "only $(cat "$T/$name.done") libraries loaded: the workload was held back" \
			>>"$T/$name.err"
		rc=1
	fi
	# the releaser exits a second after gpuctx's death (later on a busy machine)
	for _ in $(seq 50); do
		[ -z "$(awk '$3 != "Z"' "/proc/$releaser/stat" 2>/dev/null)" ] && break
		sleep 0.1
	done
	if [ $rc = 0 ] && [ -n "$(awk '$3 != "Z"' "/proc/$releaser/stat" 2>/dev/null)" ]; then
		echo "the releaser ($releaser) is still running" >>"$T/$name.err"
		rc=1
	fi
	result $name $rc
}

# Two gpuctx hold one process at one mapping (a node's agent or a `record -a`, beside a user's
# record of the job): the first whose probes are in resumes it. The other must still have it
# held until its own probes are in: both traces see the first calls, neither has a gap.
t_cov_two_tracers() {
	cov_tracers cov_two_tracers 1
}

# Three: the first's SIGCONT finds the two others' guards under one signal lock, and the
# second's stop takes the one deferred signal of that CPU: the third must still keep its hold.
t_cov_three_tracers() {
	cov_tracers cov_three_tracers 2
}

# cov_tracers NAME N: N `record -a` and a record of the job hold it at its mapping
cov_tracers() {
	local name=$1 n=$2 rc bg=() pid i all
	need_cuda_double $name || return
	mkdir -p "$T/$name.lib" && cp "$D/libcuda.so.1" "$T/$name.lib/"
	python_cuda "$T/$name.py" "$T/$name.lib/libcuda.so.1"
	for i in $(seq "$n"); do
		all=$name-all${i#1}
		"$G" record -a -q -o "$T/$all.gctx" "${DEVS[@]}" >"$T/$all.out" 2>"$T/$all.err" &
		bg+=($!)
		for _ in $(seq 300); do
			grep -qs "attached to" "$T/$all.err" && break
			sleep 0.05
		done
	done
	record $name -- /usr/bin/python3 "$T/$name.py"
	rc=$?
	kill -INT "${bg[@]}"
	wait "${bg[@]}"
	cov_check $name $rc --lib "$T/$name.lib/libcuda.so.1" --held
	pid=$(python3 -c '
import json, sys
print(json.load(open(sys.argv[1]))["api_coverage"]["holds"][0]["pid"])' "$T/$name.json" 2>/dev/null)
	for i in $(seq "$n"); do
		all=$name-all${i#1}
		if ! "$G" report --json "$T/$all.gctx" >"$T/$all.json" 2>>"$T/$all.err" ||
			[ -z "$pid" ]; then
			result $all 1
			continue
		fi
		# each system-wide trace: the same process, held by it too, no gap
		cov_check $all 0 --lib "$T/$name.lib/libcuda.so.1" --held --tree "$pid"
	done
}

t_cov_errors() {
	expect_error err_hold_timeout "bad --hold-timeout" "$G" record -o "$T/e.gctx" \
		--hold-timeout 0 -- true
	expect_error err_hold_timeout_text "bad --hold-timeout" "$G" record -o "$T/e.gctx" \
		--hold-timeout 5ms -- true
}

all_tests+=(cov_ld_library_path cov_stub_llp cov_runpath cov_ctypes_fork cov_shell_parent cov_dataloader cov_no_hold
	cov_attach_env cov_attach_outside
	cov_hip_ctypes cov_renamed cov_hold_sigkill cov_two_tracers cov_three_tracers cov_errors)
