#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# amd_ns.sh MNT TOPO SCRATCH -- CMD...: run CMD in a private mount namespace in which
# /dev/kfd and /dev/dri/renderD128 are fakegpu's files under MNT, and the KFD topology
# (/sys/devices/virtual/kfd/kfd/topology) is the directory TOPO (written by fakegpu -t). The
# host's /dev and /sys are untouched: inside the namespace a tmpfs covers /dev (the host's
# entries come back as symlinks into a bind of it under SCRATCH, an empty directory) and
# another covers /sys/devices/virtual (its entries bound back). Everything goes with the
# namespace when CMD exits. Needs root.
set -eu
if [ $# -lt 5 ] || [ "$4" != -- ]; then
	echo "usage: amd_ns.sh MNT TOPO SCRATCH -- CMD..." >&2
	exit 2
fi
mnt=$1 topo=$2 scratch=$3
shift 4
exec unshare --mount --propagation private -- /bin/bash -c '
set -eu
mnt=$1 topo=$2 s=$3
shift 3
mount -t tmpfs -o mode=700 gpuctx-ns "$s"
mkdir "$s/dev" "$s/virt"
mount --rbind /dev "$s/dev"
mount -t tmpfs -o mode=755 gpuctx-dev /dev
for e in "$s"/dev/* "$s"/dev/.[!.]*; do
	[ -e "$e" ] || [ -L "$e" ] || continue
	ln -s "$e" "/dev/${e##*/}"
done
touch /dev/kfd
mkdir /dev/dri
touch /dev/dri/renderD128
mount --bind "$mnt/kfd" /dev/kfd
mount --bind "$mnt/renderD128" /dev/dri/renderD128
v=/sys/devices/virtual
mount --rbind "$v" "$s/virt"
mount -t tmpfs -o mode=755 gpuctx-sysvirt "$v"
for e in "$s"/virt/*; do
	mkdir "$v/${e##*/}"
	mount --rbind "$e" "$v/${e##*/}"
done
mkdir -p "$v/kfd/kfd/topology"
mount --bind "$topo" "$v/kfd/kfd/topology"
exec "$@"
' amd_ns "$mnt" "$topo" "$scratch" "$@"
