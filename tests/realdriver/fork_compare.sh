#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The test doubles' fork behaviour against the real runtimes', over the emulated kernel driver
# (build/fakegpu): the same probe (forkprobe.c) under strace with the real libcuda 535
# (nv_fetch.sh, nv_ns.sh, nv_redirect.so) and with build/doubles/libcuda.so.1, then with
# Debian's real HIP runtime (amd_ns.sh) and with build/doubles/libamdhip64.so.5. For the child
# forked after initialisation: the result of each call, whether any ioctl reached the driver
# during it, on which file (inherited or its own); for both: how the device files are opened
# (O_CLOEXEC, fcntl F_SETFD). Fails when the double's summary (fork_summary.py) differs from
# the real runtime's. A real runtime that cannot be had (no network for libcuda1, no
# libamdhip64) is skipped, saying so. Needs root (mount namespaces) and strace.
# FORK_COMPARE_DOUBLES=DIR: the doubles to compare (default build/doubles).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
R=$top/build/realdriver
D=${FORK_COMPARE_DOUBLES:-$top/build/doubles}
P=$R/forkprobe
SUITE=fork_compare
. "$top/tests/lib.sh"
skip=0
ok() { pass=$((pass + 1)); echo "ok   fork_compare: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL fork_compare: $*"; }
sk() { skip=$((skip + 1)); echo "skip fork_compare: $*"; }

if [ "$(id -u)" != 0 ]; then
	echo "fork_compare: FAIL: needs root (mount namespaces)" >&2
	exit 1
fi
command -v strace >/dev/null || { echo "fork_compare: FAIL: no strace (make test-deps)" >&2; exit 1; }
for f in build/fakegpu "$P" "$R/nv_redirect.so"; do
	[ -x "$f" ] || { echo "fork_compare: FAIL: $f not built (make all)" >&2; exit 1; }
done

T=$(mktemp -d /tmp/gpuctx-forkcmp.XXXXXX)
MNT=$T/gpu
trap 'fakegpu_stop; rm -rf "$T"' EXIT

ST=(strace -f -qq -e trace=openat,open,ioctl,fcntl,write,close)

# summarise NAME CMD...: run the probe under strace, write $T/NAME.sum
summarise() {
	local name=$1
	shift
	if ! "$@" >"$T/$name.out" 2>"$T/$name.err" ||
		! python3 tests/realdriver/fork_summary.py "$T/$name.out" "$T/$name.st" \
			>"$T/$name.sum" 2>>"$T/$name.err"; then
		echo "     | $name: the probe failed:"
		sed 's/^/     | /' "$T/$name.out" "$T/$name.err" | tail -15
		return 1
	fi
}

# compare WHAT REAL DOUBLE
compare() {
	if diff -u "$T/$2.sum" "$T/$3.sum" >"$T/$1.diff"; then
		ok "$1: the double does in a forked child what the real runtime does"
		sed 's/^/     | /' "$T/$2.sum"
	else
		ko "$1: the double differs from the real runtime (- real, + double):"
		sed 's/^/     | /' "$T/$1.diff"
	fi
}

# CUDA: the real libcuda 535 and the double
lib=$(tests/realdriver/nv_fetch.sh "$R/nvidia")
rc=$?
if [ $rc = 77 ]; then
	sk "cuda: the real libcuda1 (Debian non-free) could not be fetched; see above"
elif [ $rc != 0 ] || [ -z "$lib" ]; then
	ko "cuda: nv_fetch.sh exited $rc"
elif [ ! -e "$D/libcuda.so.1" ]; then
	sk "cuda: $D/libcuda.so.1 was not built (CUDA headers missing)"
else
	lib=$(cd "$lib" && pwd)
	version=$(ls "$lib"/libcuda.so.5* | head -1)
	fakegpu_up -v -n "${version##*/libcuda.so.}"
	summarise cuda_real timeout 120 tests/realdriver/nv_ns.sh "$MNT" -- \
		env GPUCTX_FAKEGPU_DIR="$MNT" LD_LIBRARY_PATH="$lib" \
		"${ST[@]}" -o "$T/cuda_real.st" -E LD_PRELOAD="$R/nv_redirect.so" "$P" cuda &&
		summarise cuda_double env GPUCTX_FAKEGPU_DIR="$MNT" LD_LIBRARY_PATH="$D" \
			timeout 60 "${ST[@]}" -o "$T/cuda_double.st" "$P" cuda &&
		compare cuda cuda_real cuda_double || ko "cuda: a probe failed (above)"
	fakegpu_stop
fi

# HIP: Debian's real runtime (5.2) and the double
if ! ldconfig -p | grep -q 'libamdhip64.so.5 '; then
	sk "hip: the HIP runtime (libamdhip64-dev, make test-deps) is not installed"
elif [ ! -e "$D/libamdhip64.so.5" ]; then
	sk "hip: $D/libamdhip64.so.5 was not built (HIP headers missing)"
else
	fakegpu_up
	build/fakegpu -t "$T/topo" 2>>"$T/fakegpu.log"
	mkdir -p "$T/ns"
	summarise hip_real timeout 120 tests/realdriver/amd_ns.sh "$MNT" "$T/topo" "$T/ns" -- \
		"${ST[@]}" -o "$T/hip_real.st" "$P" hip &&
		summarise hip_double env GPUCTX_FAKEGPU_DIR="$MNT" LD_LIBRARY_PATH="$D" \
			timeout 60 "${ST[@]}" -o "$T/hip_double.st" "$P" hip &&
		compare hip hip_real hip_double || ko "hip: a probe failed (above)"
	fakegpu_stop
fi

echo "fork_compare: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
