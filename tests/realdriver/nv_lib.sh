# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by the real-libcuda tests (nvidia.sh, numba.sh) after setting top and R: the real
# libcuda 535 fetched by nv_fetch.sh into $R/nvidia. Sets lib (its directory, absolute) and
# version (from its file name); exits 0 saying "skip TEST: ..." when it cannot be fetched.
# nv_lib TEST
nv_lib() {
	local rc so
	lib=$("$top/tests/realdriver/nv_fetch.sh" "$R/nvidia")
	rc=$?
	if [ $rc = 77 ]; then
		echo "skip $1: the real libcuda1 (Debian non-free) could not be fetched; see above"
		exit 0
	elif [ $rc != 0 ] || [ -z "$lib" ]; then
		echo "$1: FAIL: nv_fetch.sh exited $rc" >&2
		exit 1
	fi
	lib=$(cd "$lib" && pwd)
	so=$(ls "$lib"/libcuda.so.5* | head -1)
	version=${so##*/libcuda.so.}
}
