#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Self-check of the API test doubles (no tracer involved): mounts build/fakegpu, runs the api_*
# workloads on the doubles (and on NVIDIA's stub libcuda / Debian's real libamdhip64 where
# installed), and checks what the doubles do at the syscall level and in their ELF files.
# Usage: make all && tests/doubles/run.sh        (needs FUSE; strace for the syscall checks)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
W=build/workloads
D=build/doubles
CUDA_STUB=${CUDA_STUB:-/usr/local/cuda/lib64/stubs/libcuda.so}
SUITE=doubles
. "$top/tests/lib.sh"
RESULT_FILES=(out)
skip=0

ok() { pass=$((pass + 1)); echo "ok   $*"; }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }
sk() { skip=$((skip + 1)); echo "skip $*"; }

T=$(mktemp -d /tmp/gpuctx-doubles.XXXXXX)
MNT=$T/gpu
cleanup() {
	fakegpu_stop
	rm -rf "$T"
}
trap cleanup EXIT
fakegpu_up

# run NAME CMD...: run a workload, keep its output in $T/NAME.out
run() {
	local name=$1
	shift
	"$@" >"$T/$name.out" 2>&1
	result "$name" $?
}

# The pids strace saw, in order of appearance (first = the workload, later = its children).
pids() { awk '{print $1}' "$1" | awk '!seen[$0]++'; }

if [ -x "$D/libcuda.so.1" ] && [ -x "$W/api_cuda_fork" ]; then
	run cuda_fork env LD_LIBRARY_PATH=$D $W/api_cuda_fork "$MNT"
	run cuda_launch env LD_LIBRARY_PATH=$D $W/api_cuda_launch "$MNT"
	if grep -q "cuGetProcAddress .* (not an exported symbol)" "$T/cuda_fork.out" &&
		[ "$(grep -c "(not an exported symbol)" "$T/cuda_fork.out")" = 2 ]; then
		ok "cuGetProcAddress_v2(cuMemAlloc, cuCtxSetCurrent) != dlsym"
	else
		ko "cuGetProcAddress_v2(cuMemAlloc, cuCtxSetCurrent) != dlsym"
	fi
	if objdump -d $D/libcuda.so.1 | grep -A1 '<cuInit>:' | grep -q endbr64; then
		ok "cuInit starts with endbr64"
	else
		ko "cuInit starts with endbr64"
	fi
	if [ -e "$CUDA_STUB" ]; then
		mkdir -p "$T/stub" && ln -sf "$CUDA_STUB" "$T/stub/libcuda.so.1"
		run cuda_fork_stub env LD_LIBRARY_PATH=$T/stub $W/api_cuda_fork "$MNT" --stub
		run cuda_launch_stub env LD_LIBRARY_PATH=$T/stub $W/api_cuda_launch "$MNT" --stub
	else
		sk "cuda_fork_stub (no $CUDA_STUB)"
	fi
	if command -v strace >/dev/null; then
		LD_LIBRARY_PATH=$D strace -f -o "$T/cuda.st" -e trace=openat,ioctl,fcntl \
			$W/api_cuda_fork "$MNT" >/dev/null 2>&1
		parent=$(pids "$T/cuda.st" | head -1)
		child=$(pids "$T/cuda.st" | sed -n 2p)
		n_parent=$(grep -c "^$parent \+ioctl(" "$T/cuda.st")
		ctl=$(sed -n "s|^$parent \+openat(.*$MNT/nvidiactl\", O_RDWR) = \([0-9]*\)$|\1|p" "$T/cuda.st" | head -1)
		# libcuda 535: nvidiactl opened without O_CLOEXEC, then marked; the child's cuInit
		# starts again on the inherited nvidiactl fd (docs/gpu-validation.md)
		first=$(grep -m1 "^$child \+ioctl(" "$T/cuda.st")
		if [ -n "$child" ] && [ -n "$ctl" ] && [ "$n_parent" -gt 20 ] &&
			grep -q "^$parent \+fcntl($ctl, F_SETFD, FD_CLOEXEC) *= 0" "$T/cuda.st" &&
			[[ "$first" == *"ioctl($ctl, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x2b, 0x30)"* ]]; then
			ok "libcuda double: nvidiactl marked FD_CLOEXEC after its open; the child starts again on it"
		else
			ko "libcuda double: parent $n_parent ioctls, nvidiactl fd '$ctl', child's first ioctl '$first'"
		fi
	else
		sk "libcuda syscall check (no strace)"
	fi
else
	sk "CUDA (build/doubles/libcuda.so.1 or $W/api_cuda_fork missing)"
fi

if [ -x "$D/libamdhip64.so.5" ] && [ -x "$W/api_hip_fork" ]; then
	run hip_fork env LD_LIBRARY_PATH=$D $W/api_hip_fork "$MNT"
	run hip_fork_real $W/api_hip_fork "$MNT" --real
	if nm -D $D/libamdhip64.so.5 | grep -q ' T hipInit@@hip_4.2$'; then
		ok "hipInit@@hip_4.2 exported"
	else
		ko "hipInit@@hip_4.2 exported"
	fi
	if command -v strace >/dev/null; then
		LD_LIBRARY_PATH=$D strace -f -o "$T/hip.st" -e trace=openat,ioctl \
			$W/api_hip_fork "$MNT" >/dev/null 2>&1
		child=$(pids "$T/hip.st" | sed -n 2p)
		if [ -n "$child" ] && ! grep -qE "^$child +(ioctl\(|openat\(.*$MNT)" "$T/hip.st"; then
			ok "libamdhip64 double: the forked child reaches no driver file"
		else
			ko "libamdhip64 double: forked child ioctls or opens:"
			grep -E "^$child +(ioctl|openat)" "$T/hip.st" | sed 's/^/     | /'
		fi
	else
		sk "libamdhip64 syscall check (no strace)"
	fi
else
	sk "HIP (build/doubles/libamdhip64.so.5 or $W/api_hip_fork missing)"
fi

echo "doubles: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
