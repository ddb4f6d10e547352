#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The bundled demo: a trainer that initialises the GPU and forks DataLoader-style workers.
# Its GPU calls are synthetic, so it always runs over the emulated driver (build/fakegpu, a test
# fixture), never a real one. It says what GPU device nodes this machine has: a working driver
# (the node opens) or a dead node (one with no driver behind it: ENXIO, ENODEV, or EPERM from a
# device cgroup), which libcuda leaves behind when run as root without the module. Prints the
# report, and writes it as an HTML page beside the trace (demo.html). GPUCTX_DEMO_DEVDIR: where
# to look for the nodes (default /dev).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
G=$top/build/gpuctx
out=${GPUCTX_DEMO_OUT:-$top/demo.gctx}
html=${out%.gctx}.html
devdir=${GPUCTX_DEMO_DEVDIR:-/dev}
if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root (gpuctx loads BPF programs)" >&2
	exit 1
fi

# What a GPU device node is: "working", "dead (why)", or "" when there is none.
node_state() {
	local err
	[ -e "$1" ] || [ -L "$1" ] || return 0
	[ -c "$1" ] || { echo "dead (not a character device)"; return; }
	if err=$( (exec 3<>"$1") 2>&1); then
		echo working
	else
		echo "dead (open: ${err##*: })"
	fi
}
for n in nvidiactl kfd; do
	s=$(node_state "$devdir/$n")
	case $s in
	working) echo "demo: $devdir/$n: a working GPU driver (it opens); the demo's synthetic" \
		"GPU calls go to the emulated driver, never to it" ;;
	dead*) echo "demo: $devdir/$n: a dead device node ${s#dead }: no GPU driver behind it" ;;
	esac
done

tmp=$(mktemp -d /tmp/gpuctx-demo.XXXXXX)
mkdir "$tmp/gpu"
"$top/build/fakegpu" "$tmp/gpu" &
fake=$!
trap 'kill $fake 2>/dev/null; wait $fake 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -e "$tmp/gpu/nvidiactl" ] && break; sleep 0.05; done
echo "demo: tracing the demo workload over the emulated driver"
"$G" record -o "$out" \
	--device "$tmp/gpu/nvidiactl:nvidiactl" --device "$tmp/gpu/nvidia0:nvidia" \
	--device "$tmp/gpu/nvidia-uvm:nvidia-uvm" --device "$tmp/gpu/kfd:kfd" \
	--device "$tmp/gpu/renderD128:drm-render" \
	-- "$top/build/workloads/wl_demo" "$tmp/gpu" || true
echo
echo "demo: gpuctx report $out"
echo
"$G" report --html "$html" "$out"
echo
echo "demo: the same as one HTML page (verdict, process tree, timeline; opens offline): $html"
