#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian 12 packages gpuctx needs to build and test; a no-op when all are present.
# Usage: tools/install-deps.sh [build|test|bench|slurm]
set -eu
what=${1:-build}
pkgs="make gcc g++ clang llvm libbpf-dev bpftool libelf-dev libdw-dev liblzma-dev libbz2-dev zlib1g-dev libzstd-dev pkg-config"
pkgs="$pkgs libfuse3-dev fuse3"
case "$what" in
# test: slurm-wlm, libslurm-dev and munge too, so that make test builds the Slurm plugin and runs
# tests/slurm/run.sh on a real Slurm (it runs as root and handles users' paths: not a test to skip)
test) pkgs="$pkgs libcmocka-dev clang-format python3 dpkg-dev man-db protobuf-compiler libamdhip64-dev libclang-rt-14-dev python3-torch chromium python3-numba strace slurm-wlm libslurm-dev munge" ;;
bench) pkgs="$pkgs bpftrace strace python3 binutils" ;;
# the Slurm plugin (built with libslurm-dev) and its test on a real Slurm (tests/slurm/run.sh)
slurm) pkgs="$pkgs slurm-wlm libslurm-dev munge python3" ;;
esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
	{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $missing >/dev/null; }
