# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/integration/run.sh: Debian's real HIP runtime (libamdhip64 5.2 with ROCr
# and libhsakmt) on the emulated kernel driver. The runtime runs in a private mount namespace
# (tests/realdriver/amd_ns.sh) where fakegpu's files are /dev/kfd and /dev/dri/renderD128 and
# fakegpu's KFD topology is in sysfs; gpuctx runs outside it, unmodified, finding the files by
# --device. Facts: docs/gpu-validation.md, "Real user-mode driver, emulated kernel driver".

# real_amd: hipInit, the device, hipMalloc, a forked child; every ioctl named, the child
# diagnosed as a poison fork with its real error code, nothing left on the host.
t_real_amd() {
	local name=real_amd rc=0 wl=$W/amd_hip
	if [ ! -e "$wl" ] || ! ldconfig -p | grep -q 'libamdhip64.so.5 '; then
		echo "SKIP $name: the HIP runtime (libamdhip64-dev, make test-deps) is not installed"
		return
	fi
	local had
	had=$(ls -d /dev/kfd /dev/dri/renderD128 /sys/devices/virtual/kfd 2>/dev/null)
	mkdir -p "$T/$name.ns"
	"$top/build/fakegpu" -t "$T/$name.topo" 2>"$T/$name.err" || rc=1
	[ $rc = 0 ] && {
		timeout 120 "$G" record -o "$T/$name.gctx" "${DEVS[@]}" -- \
			"$top/tests/realdriver/amd_ns.sh" "$MNT" "$T/$name.topo" "$T/$name.ns" -- \
			"$wl" >"$T/$name.out" 2>>"$T/$name.err" || rc=1
	}
	[ $rc = 0 ] && { "$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1; }
	[ $rc = 0 ] && { "$G" export -q -f chrome -o "$T/$name.timeline.json" "$T/$name.gctx" \
		2>>"$T/$name.err" || rc=1; }
	# $T/$name.out: gpuctx's live stream and the workload's own lines
	[ $rc = 0 ] && { python3 "$top/tests/realdriver/check_amd.py" "$T/$name.json" \
		"$T/$name.timeline.json" "$T/$name.out" >>"$T/$name.err" 2>&1 || rc=1; }
	# nothing left on the host: no device node, no mount, nothing under the scratch dir
	if [ "$(ls -d /dev/kfd /dev/dri/renderD128 /sys/devices/virtual/kfd 2>/dev/null)" != "$had" ] ||
		grep -qE "gpuctx-(ns|dev|sysvirt)|$T/$name" /proc/self/mountinfo ||
		[ -n "$(ls -A "$T/$name.ns")" ]; then
		echo "the run left a device node or a mount on the host" >>"$T/$name.err"
		rc=1
	fi
	result "$name" $rc
}

# real_amd_exec: the same parent, then a child that execs /bin/true (a subprocess): the real
# runtime's files are O_CLOEXEC, so gpuctx check finds nothing, exit 0.
t_real_amd_exec() {
	local name=real_amd_exec rc=0 got wl=$W/amd_hip
	if [ ! -e "$wl" ] || ! ldconfig -p | grep -q 'libamdhip64.so.5 '; then
		echo "SKIP $name: the HIP runtime (libamdhip64-dev, make test-deps) is not installed"
		return
	fi
	mkdir -p "$T/$name.ns"
	"$top/build/fakegpu" -t "$T/$name.topo" 2>"$T/$name.err" || rc=1
	if [ $rc = 0 ]; then
		timeout 120 "$G" check -o "$T/$name.gctx" "${DEVS[@]}" -- \
			"$top/tests/realdriver/amd_ns.sh" "$MNT" "$T/$name.topo" "$T/$name.ns" -- \
			"$wl" --exec >"$T/$name.out" 2>>"$T/$name.err"
		got=$?
		[ $got = 0 ] || { echo "gpuctx check exited $got, expected 0" >>"$T/$name.err"; rc=1; }
		grep -q "amd_hip: ok" "$T/$name.out" || rc=1
		"$G" report "$T/$name.gctx" 2>>"$T/$name.err" | grep -q "^Verdict: NO PROBLEM FOUND" ||
			{ echo "the verdict is not NO PROBLEM FOUND" >>"$T/$name.err"; rc=1; }
	fi
	result "$name" $rc
}
