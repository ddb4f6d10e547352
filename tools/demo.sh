#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The bundled demo: a trainer that initialises the GPU and forks DataLoader-style workers.
# Traced over the real driver when this machine has /dev/nvidiactl or /dev/kfd, otherwise over
# the emulated driver (build/fakegpu, a test fixture). Prints the report.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
G=$top/build/gpuctx
out=${GPUCTX_DEMO_OUT:-$top/demo.gctx}
if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root (gpuctx loads BPF programs)" >&2
	exit 1
fi
if [ -e /dev/nvidiactl ] || [ -e /dev/kfd ]; then
	echo "demo: real GPU driver found: tracing the demo workload on /dev"
	"$G" record -o "$out" -- "$top/build/workloads/wl_demo" /dev || true
else
	tmp=$(mktemp -d /tmp/gpuctx-demo.XXXXXX)
	mkdir "$tmp/gpu"
	"$top/build/fakegpu" "$tmp/gpu" &
	fake=$!
	trap 'kill $fake 2>/dev/null; wait $fake 2>/dev/null; rm -rf "$tmp"' EXIT
	for _ in $(seq 100); do [ -e "$tmp/gpu/nvidiactl" ] && break; sleep 0.05; done
	echo "demo: no GPU driver here: tracing the demo workload over the emulated driver"
	"$G" record -o "$out" \
		--device "$tmp/gpu/nvidiactl:nvidiactl" --device "$tmp/gpu/nvidia0:nvidia" \
		--device "$tmp/gpu/nvidia-uvm:nvidia-uvm" --device "$tmp/gpu/kfd:kfd" \
		--device "$tmp/gpu/renderD128:drm-render" \
		-- "$top/build/workloads/wl_demo" "$tmp/gpu" || true
fi
echo
echo "demo: gpuctx report $out"
echo
"$G" report "$out"
