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
# libhsakmt reads each CPU node'"'"'s caches from /sys/devices/system/cpu/cpuN/cache and gives up
# on the node ("Fail to get cache info for node 0": no GPU then) where a VM'"'"'s kernel has none:
# there, each cpuN becomes a tmpfs with its entries bound back and a cache/ of the sizes
# /proc/cpuinfo gives (level 1 data and instruction, a level 2 of "cache size").
c=/sys/devices/system/cpu
if [ ! -d "$c/cpu0/cache" ]; then
	l2=$(awk -F": *" '"'"'/^cache size/ { sub(/ KB/, "K", $2); print $2; exit }'"'"' /proc/cpuinfo)
	mkdir "$s/cpu"
	for d in "$c"/cpu[0-9]*; do
		n=${d##*/cpu}
		mkdir "$s/cpu/$n"
		mount --rbind "$d" "$s/cpu/$n"
		mount -t tmpfs -o mode=755 gpuctx-cpu "$d"
		for e in "$s/cpu/$n"/*; do
			if [ -L "$e" ]; then
				ln -s "$(readlink "$e")" "$d/${e##*/}"
			elif [ -d "$e" ]; then
				mkdir "$d/${e##*/}"
				mount --rbind "$e" "$d/${e##*/}"
			else
				touch "$d/${e##*/}"
				mount --bind "$e" "$d/${e##*/}"
			fi
		done
		i=0
		for k in "1 Data 32K" "1 Instruction 32K" "2 Unified ${l2:-512K}"; do
			read -r lv ty sz <<<"$k"
			x=$d/cache/index$i
			mkdir -p "$x"
			echo "$lv" >"$x/level"
			echo "$ty" >"$x/type"
			echo "$sz" >"$x/size"
			echo 64 >"$x/coherency_line_size"
			echo 8 >"$x/ways_of_associativity"
			echo 1 >"$x/physical_line_partition"
			echo "$n" >"$x/shared_cpu_list"
			printf "%x\n" $((1 << n)) >"$x/shared_cpu_map"
			i=$((i + 1))
		done
	done
fi
exec "$@"
' amd_ns "$mnt" "$topo" "$scratch" "$@"
