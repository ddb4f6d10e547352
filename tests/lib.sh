# SPDX-License-Identifier: GPL-2.0
# Sourced by the test suites (integration with hardening and security, export, html, doubles,
# realdriver/nvidia, fork_compare and numba, slurm) after they set top: what they share. The
# suite sets SUITE (its name in its lines), T (its scratch directory) and MNT (where the emulated
# driver goes) before calling these.
#
# The emulated driver, build/fakegpu, on $MNT:
#   fakegpu_start [OPTION...]  starts it in the background (FAKE), its log in $T/fakegpu.log;
#                              0 once its nodes are there, 1 after 5 s
#   fakegpu_up [OPTION...]     the same, or "SUITE: FAIL: fakegpu did not mount" and exit 1
#   fakegpu_stop               for the suite's cleanup: stops it and unmounts $MNT (fusermount3
#                              first, for a suite not run as root)
#   DEVS                       gpuctx's --device options for its five nodes
# The tally, in pass, fail and failed:
#   result NAME RC [WHY]       "ok   NAME" or "FAIL NAME" (RESULT_LABEL before NAME; when
#                              RESULT_WHY is set, ": WHY" after it); after a FAIL the last
#                              RESULT_TAIL lines of each $T/NAME.SUFFIX that is
#                              not empty, for SUFFIX in RESULT_FILES; after an ok the lines of
#                              $T/NAME.err that match RESULT_OK_GREP (an ERE), when it is set
#   suite_summary              "SUITE: N passed, M failed[: NAME...]"; true when none failed
#                              (the suite's last command: its exit status)
#   keep_or_remove VAR PATH... removes the PATHs, unless $VAR is set: then says $T is kept (the
#                              traces and logs, for a look after a failure)
# Set RESULT_* after sourcing this.

FAKE=

fakegpu_start() {
	mkdir -p "$MNT"
	"$top/build/fakegpu" "$@" "$MNT" 2>"$T/fakegpu.log" &
	FAKE=$!
	DEVS=(--device "$MNT/nvidiactl:nvidiactl" --device "$MNT/nvidia0:nvidia"
		--device "$MNT/nvidia-uvm:nvidia-uvm" --device "$MNT/kfd:kfd"
		--device "$MNT/renderD128:drm-render")
	for _ in $(seq 100); do
		[ -e "$MNT/nvidiactl" ] && return 0
		sleep 0.05
	done
	return 1
}

fakegpu_up() {
	fakegpu_start "$@" && return 0
	echo "$SUITE: FAIL: fakegpu did not mount" >&2
	exit 1
}

fakegpu_stop() {
	[ -n "$FAKE" ] || return 0
	kill "$FAKE" 2>/dev/null
	wait "$FAKE" 2>/dev/null
	FAKE=
	mountpoint -q "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT"; }
}

keep_or_remove() {
	local var=$1
	shift
	if [ -n "${!var:-}" ]; then
		echo "$SUITE: kept $T" >&2
		return 0
	fi
	rm -rf "$@"
}

pass=0
fail=0
failed=()
RESULT_LABEL=
RESULT_FILES=(out err)
RESULT_TAIL=20
RESULT_OK_GREP=
RESULT_WHY=

result() {
	local name=$1 rc=$2 why=${3:-} f
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		echo "ok   $RESULT_LABEL$name"
		[ -z "$RESULT_OK_GREP" ] || grep -hE "$RESULT_OK_GREP" "$T/$name.err" | sed 's/^/     | /'
		return 0
	fi
	fail=$((fail + 1))
	failed+=("$name")
	echo "FAIL $RESULT_LABEL$name${RESULT_WHY:+: $why}"
	for f in "${RESULT_FILES[@]}"; do
		[ -s "$T/$name.$f" ] && sed 's/^/     | /' "$T/$name.$f" | tail -"$RESULT_TAIL"
	done
	return 0
}

suite_summary() {
	echo "$SUITE: $pass passed, $fail failed${failed:+: ${failed[*]}}"
	[ "$fail" = 0 ]
}
