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
# Every case also checks that the parent's own cuDeviceGetCount calls were not recorded: the
# per-child probes are not in a healthy process's address space.
# Sourced by run.sh (uses its record/result/$T/$W/$MNT/$DOUBLES).

childprobe_tests=(fork_query_count fork_query_errname fork_query_lookup fork_query_none
	fork_query_nostacks)

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
