# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh: the diagnosis on real PyTorch DataLoader jobs (Debian's python3-torch,
# /usr/bin/python3) over the libcuda test double and the emulated driver, through
# `gpuctx check`: its exit status, its JUnit XML, and the report's verdict and incidents.

PYTORCH=/usr/bin/python3
DLJOB=$top/tests/workloads/dl_job.py
CHECK_DIAG="python3 $top/tests/integration/check_diag.py"

# diag NAME WANT_RC [check options] -- dl_job.py options
diag() {
	local name=$1 want=$2 rc opts=()
	shift 2
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	if ! "$PYTORCH" -c 'import torch' 2>/dev/null; then
		echo "SKIP $name: $PYTORCH has no torch (tools/install-deps.sh test installs python3-torch)"
		return
	fi
	if [ ! -e "$DOUBLES/libcuda.so.1" ]; then
		echo "SKIP $name: build/doubles/libcuda.so.1 was not built (CUDA headers missing)"
		return
	fi
	mkdir -p "$T/tmp.$name"
	TMPDIR=$T/tmp.$name GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES \
		"$G" check "${opts[@]}" --junit "$T/$name.xml" "${DEVS[@]}" \
		--libcuda "$DOUBLES/libcuda.so.1" -- "$PYTORCH" "$DLJOB" "$@" \
		>"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "gpuctx check exited $rc, expected $want" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	# without -o the trace was temporary: nothing of gpuctx's left behind. Python leaves two
	# things of its own when a worker is killed: multiprocessing's pymp-* directory, and
	# tempfile's probe of TMPDIR (an 8-character name holding "blat", or nothing yet, unlinked
	# right after it is written: a worker torch's shutdown kills in between leaves it; CI saw one).
	left=$(cd "$T/tmp.$name" && for f in $(ls -A); do
		case $f in pymp-*) continue ;; esac
		if [ ${#f} = 8 ] && [ -f "$f" ] && [ ! -L "$f" ]; then
			case $(head -c 5 "$f") in '' | blat) continue ;; esac
		fi
		echo "$f"
	done)
	if [ -n "$left" ]; then
		echo "check left files in TMPDIR: $left" >>"$T/$name.err"
		result "$name" 1
		return
	fi
	if [ -e "$T/$name.gctx" ]; then
		"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" &&
			"$G" report "$T/$name.gctx" >"$T/$name.txt" 2>>"$T/$name.err" ||
			{ result "$name" 1; return; }
	fi
	$CHECK_DIAG "$name" "$T/$name" >>"$T/$name.err" 2>&1
	result "$name" $?
}

# 4 fork workers x 3 epochs calling cuMemAlloc on the inherited context: one incident, exit 86.
t_dl_fork_touch() {
	local rc
	# --linger: the job goes on while the collector resolves its stacks (dl_where needs the
	# lines of long functions, read from the job's memory)
	diag dl_fork_touch 86 -o "$T/dl_fork_touch.gctx" -- --workers 4 --epochs 3 --touch --linger 2
	[ -e "$T/dl_fork_touch.gctx" ] || return
	# the same verdict from the trace: check TRACE, report --fail-on
	"$G" check "$T/dl_fork_touch.gctx" 2>"$T/dl_trace.err"
	rc=$?
	"$G" report --fail-on error --junit "$T/dl_trace.xml" "$T/dl_fork_touch.gctx" >/dev/null \
		2>>"$T/dl_trace.err"
	rc="$rc $?"
	"$G" report --fail-on never "$T/dl_fork_touch.gctx" >/dev/null 2>>"$T/dl_trace.err"
	rc="$rc $?"
	if [ "$rc" != "86 86 0" ] || ! grep -q 'failures="1"' "$T/dl_trace.xml"; then
		echo "check TRACE, report --fail-on error, --fail-on never exited $rc" >>"$T/dl_trace.err"
		result dl_trace 1
	else
		result dl_trace 0
	fi
}

# no incident: the command's own status, 128+N for a signal
t_dl_check_status() {
	local rc
	mkdir -p "$T/tmp.status"
	TMPDIR=$T/tmp.status "$G" check -- sh -c 'exit 7' >/dev/null 2>"$T/dl_check_status.err"
	rc=$?
	TMPDIR=$T/tmp.status "$G" check -- sh -c 'kill -SEGV $$' >/dev/null \
		2>>"$T/dl_check_status.err"
	rc="$rc $?"
	if [ "$rc" != "7 139" ] || [ -n "$(ls -A "$T/tmp.status")" ] ||
		! grep -q "NO PROBLEM FOUND" "$T/dl_check_status.err"; then
		echo "check exited $rc (want 7 139), or left files" >>"$T/dl_check_status.err"
		result dl_check_status 1
	else
		result dl_check_status 0
	fi
}

# bad input: one line, non-zero
t_dl_check_errors() {
	expect_error err_check_nothing "check needs" "$G" check
	expect_error err_check_fail_on "bad --fail-on" "$G" check --fail-on sometimes -- true
	expect_error err_report_fail_on "bad --fail-on" "$G" report --fail-on x "$T/none.gctx"
	expect_error err_check_trace "cannot open" "$G" check "$T/missing.gctx"
}
# the same workers never touching it: a warning, 0 by default and 86 with --fail-on warning.
t_dl_fork_idle() {
	diag dl_fork_idle 0 -o "$T/dl_fork_idle.gctx" -- --workers 2 --epochs 2
	diag dl_fork_idle_warn 86 --fail-on warning -- --workers 2 --epochs 1
}
# a worker killed by SIGSEGV after its inherited call (workers named pt_data_worker).
t_dl_segv() {
	diag dl_segv 86 -o "$T/dl_segv.gctx" -- --workers 2 --touch --rename --segv "$T/segv.once"
}
# spawn: clean, the workers make their own contexts; the job's own status (0) is check's.
t_dl_spawn() {
	diag dl_spawn 0 -o "$T/dl_spawn.gctx" -- --start spawn --workers 2 --epochs 2 --touch
	diag dl_spawn_tmp 0 -- --start spawn --workers 2
}
# spawn without the main guard: the workers re-run the script and exit 1.
t_dl_noguard() {
	diag dl_noguard 86 -o "$T/dl_noguard.gctx" -- --start spawn --workers 2 --no-guard
}
# a thread pool: no fork, nothing found; the command's status passes through.
t_dl_threads() {
	diag dl_threads 0 -o "$T/dl_threads.gctx" -- --threads --workers 4 --epochs 2 --touch
}

# the verdict says where (issue 11's stacks): the line of cuInit in the parent and of the
# worker's call on the inherited context, as check printed them for dl_fork_touch
t_dl_where() {
	local name=dl_where rc=0 init use fork
	init=$(grep -n 'cu.cuInit(0)' "$DLJOB" | head -1 | cut -d: -f1)
	use=$(grep -n 'on the inherited state: fails' "$DLJOB" | head -1 | cut -d: -f1)
	fork=$(grep -n 'for _ in dl:' "$DLJOB" | head -1 | cut -d: -f1)
	grep -E "Where: GPU initialised at [^ ]*dl_job.py:$init in cuda_init <- cuInit" \
		"$T/dl_fork_touch.err" >/dev/null || { echo "no init site at line $init" >"$T/$name.err"; rc=1; }
	grep -E "forked at [^ ]*dl_job.py:$fork in main <- [^ ]*torch/utils/data/dataloader.py:[0-9]+ in DataLoader.__iter__" \
		"$T/dl_fork_touch.err" >/dev/null || { echo "no fork site at line $fork" >>"$T/$name.err"; rc=1; }
	# torch's long functions too (line tables past the kernel's prefix): every Python frame
	# of the fork stacks has its line
	python3 - "$T/dl_fork_touch.json" >>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
st = [s for s in json.load(open(sys.argv[1]))["stacks"] if s["role"] == "fork"]
assert st, "no fork stack"
bad = [(f["file"], f["function"]) for s in st for f in s["frames"]
       if f["kind"] == "python" and not f["line"]]
assert not bad, "Python frames without a line: %s" % bad
PY
	grep -E "first used at [^ ]*dl_job.py:$use in Items.__getitem__" "$T/dl_fork_touch.err" \
		>/dev/null || { echo "no use site at line $use" >>"$T/$name.err"; rc=1; }
	"$G" report "$T/dl_fork_touch.gctx" 2>>"$T/$name.err" | head -40 >"$T/$name.report"
	grep -E "where: GPU initialised at [^ ]*dl_job.py:$init in cuda_init" "$T/$name.report" >/dev/null ||
		{ echo "report's first screen has no where line:" >>"$T/$name.err"
		  cat "$T/$name.report" >>"$T/$name.err"; rc=1; }
	result "$name" $rc
}

diag_tests=(dl_fork_touch dl_where dl_fork_idle dl_segv dl_spawn dl_noguard dl_threads dl_check_status dl_check_errors)
