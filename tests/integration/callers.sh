# SPDX-License-Identifier: GPL-2.0
# The caller of each API call (issue 11): cuInit called by a library (as cuML or torch do) and
# again by the program; the report and its JSON name each call site's file and function.
# api_caller_gone: the same when the process has exited before gpuctx read its mappings
# (gpuctx is stopped while it runs): they come from the kernel at its exit; and so with
# --no-stacks (api_caller_gone_nostacks).
# Sourced by run.sh (uses its record/result/$T/$W/$MNT).

t_api_caller() {
	callers_case api_caller "" "$W/api_cuda_caller" "$MNT"
}

t_api_caller_gone() {
	# $PPID of the shell is gpuctx: stopped before the workload starts, resumed after its end
	callers_case api_caller_gone "" sh -c 'kill -STOP $PPID; "$0" "$1"; kill -CONT $PPID' \
		"$W/api_cuda_caller" "$MNT"
}

t_api_caller_gone_nostacks() {
	callers_case api_caller_gone_nostacks --no-stacks \
		sh -c 'kill -STOP $PPID; "$0" "$1"; kill -CONT $PPID' "$W/api_cuda_caller" "$MNT"
}

# callers_case NAME RECORD-OPTION CMD...
callers_case() {
	local name=$1 opt=$2 rc
	shift 2
	if [ ! -e "$W/api_cuda_caller" ] || [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/workloads/api_cuda_caller was not built (CUDA headers missing)"
		return
	fi
	LD_LIBRARY_PATH=$DOUBLES record "$name" \
		--libcuda "$DOUBLES/libcuda.so.1" ${opt:+"$opt"} -- "$@"
	rc=$?
	if [ $rc = 0 ]; then
		"$G" report "$T/$name.gctx" >"$T/$name.txt" 2>>"$T/$name.err" || rc=1
		"$G" export -q -f chrome -o "$T/$name.chrome.json" "$T/$name.gctx" \
			>>"$T/$name.err" 2>&1 ||
			rc=1
	fi
	if [ $rc != 0 ]; then
		echo "workload, report or export exited $rc" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	python3 "$top/tests/integration/check_callers.py" "$T/$name.json" "$T/$name.txt" \
		"$T/$name.chrome.json" >>"$T/$name.err" 2>&1
	result "$name" $?
}
