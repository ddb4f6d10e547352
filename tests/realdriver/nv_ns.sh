#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# nv_ns.sh MNT -- CMD...: run CMD in a private mount namespace where the real NVIDIA user-mode
# driver finds the emulated kernel driver (build/fakegpu mounted on MNT). Inside, a tmpfs covers
# /dev: it holds the few standard nodes and real character devices /dev/nvidiactl (195:255) and
# /dev/nvidia0 (195:0), so stat() answers as libcuda expects, and whatever libcuda creates there
# as root (it mknods /dev/nvidiactl when it finds none) goes with the namespace. The opens of
# those nodes reach fakegpu's files through nv_redirect.so (LD_PRELOAD, set in CMD's
# environment by the caller). The host's /dev, /sys and /proc are not touched. Needs root.
set -eu
if [ $# -lt 3 ] || [ "$2" != -- ]; then
	echo "usage: nv_ns.sh MNT -- CMD..." >&2
	exit 2
fi
mnt=$1
shift 2
[ -e "$mnt/nvidiactl" ] || { echo "nv_ns.sh: no fakegpu on $mnt" >&2; exit 2; }
exec unshare --mount --propagation private -- /bin/bash -c '
set -eu
# never in the host namespace: the mounts below would cover the host /dev
[ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] || exit 1
mount -t tmpfs -o mode=755,size=1m gpuctx-nv-dev /dev
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/zero c 1 5
mknod -m 666 /dev/full c 1 7
mknod -m 666 /dev/random c 1 8
mknod -m 666 /dev/urandom c 1 9
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mkdir /dev/shm
mount -t tmpfs -o mode=1777 gpuctx-nv-shm /dev/shm
mknod -m 666 /dev/nvidiactl c 195 255
mknod -m 666 /dev/nvidia0 c 195 0
exec "$@"
' nv_ns "$@"
