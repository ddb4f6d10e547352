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
# Every case also checks that the parent's own cuDeviceGetCount calls were not recorded: the
# per-child probes are not in a healthy process's address space.
# Sourced by run.sh (uses its record/result/$T/$W/$MNT/$DOUBLES).

childprobe_tests=(fork_query_count fork_query_errname fork_query_lookup fork_query_none
	fork_query_nostacks pyexc_torch pyexc_numba pyexc_noise pyexc_torch_debian pyexc_torch_310
	pyexc_torch_312 pyexc_torch_313)

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

pyenv_python() {
	local root
	root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	ls -d "$root"/versions/"$1".*/bin/python"$1" 2>/dev/null | tail -1
}

# pyexc_case NAME MODE CHECK-STATUS PYTHON
pyexc_case() {
	local name=$1 mode=$2 want=$3 py=$4 rc st
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/doubles/libcuda.so.1 was not built (no CUDA headers)"
		return
	fi
	if [ -z "$py" ] || [ ! -x "$py" ]; then
		echo "SKIP $name: no such Python (pyenv)"
		return
	fi
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES "$G" check -o "$T/$name.gctx" \
		"${DEVS[@]}" --libcuda "$DOUBLES/libcuda.so.1" -- \
		"$py" "$top/tests/workloads/pyexc_job.py" "$MNT" "$mode" >"$T/$name.check" 2>&1
	st=$?
	rc=0
	if [ $st != "$want" ]; then
		echo "gpuctx check exited $st, expected $want" >>"$T/$name.err"
		sed 's/^/check: /' "$T/$name.check" >>"$T/$name.err"
		rc=1
	fi
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { python3 "$top/tests/integration/check_childprobe.py" "py-$mode" \
		"$T/$name.json" "$T/$name.check" \
		"$top/tests/workloads/pyexc_job.py" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}
