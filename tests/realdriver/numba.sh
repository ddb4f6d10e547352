#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A real client no one here wrote: Numba's CUDA binding (Debian's python3-numba, run by
# /usr/bin/python3) over the real libcuda 535 (nv_fetch.sh) over the emulated kernel driver,
# through the realdriver harness (fakegpu -v -n VERSION, nv_ns.sh, nv_redirect.so,
# NUMBA_CUDA_DRIVER). The job is tests/workloads/nb_job.py: the parent initialises CUDA, then
#   nb_fork          a fork worker asks again: libcuda refuses it (CUDA_ERROR_NOT_INITIALIZED,
#                    no ioctl) and Numba raises CudaDriverError('CUDA initialized before
#                    forking'): one poison-fork error naming the refused call, its result and
#                    the exception; gpuctx check exits 86
#   nb_spawn, nb_forkserver, nb_subprocess (subprocess.run /bin/true), nb_pool_spawn (a spawn
#                    pool whose initializer initialises CUDA in each worker): NO PROBLEM FOUND,
#                    exit 0
#   nb_pool_cpu      a fork pool doing CPU work only: no error, exit 0
#   nb_attach_fork, nb_attach_spawn   the same through gpuctx check -p attached mid-job
#   nb_agent         through gpuctx agent: the fork job dumped with that error, the spawn job
#                    not; record --from-agent of a fork job gives the error too
# Usage: tests/realdriver/numba.sh [CASE...]. Needs root and BTF; skips (exit 0, saying why)
# when libcuda1 cannot be fetched or python3-numba is not installed (make test-deps).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
G=$top/build/gpuctx
R=$top/build/realdriver
PY=/usr/bin/python3
JOB=$top/tests/workloads/nb_job.py
SUITE=numba
. "$top/tests/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "numba: FAIL: needs root (BPF, mount namespaces)" >&2
	exit 1
fi
for f in "$G" build/fakegpu "$R/nv_redirect.so"; do
	[ -x "$f" ] || { echo "numba: FAIL: $f not built (make all)" >&2; exit 1; }
done
if ! $PY -c "import numba.cuda" 2>/dev/null; then
	echo "skip numba: python3-numba is not installed for $PY (make test-deps)"
	exit 0
fi
. tests/realdriver/nv_lib.sh
nv_lib numba

T=$(mktemp -d /tmp/gpuctx-nb.XXXXXX)
MNT=$T/gpu
AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill -TERM "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	fakegpu_stop
	keep_or_remove GPUCTX_NB_KEEP "$T"
}
trap cleanup EXIT
fakegpu_up -v -n "$version"

# the real driver's nodes only
DEVS=(--device "$MNT/nvidiactl:nvidiactl" --device "$MNT/nvidia0:nvidia"
	--device "$MNT/nvidia-uvm:nvidia-uvm")
# the job's command line, in the harness's namespace, with the real libcuda
JOBCMD=(tests/realdriver/nv_ns.sh "$MNT" -- env GPUCTX_FAKEGPU_DIR="$MNT"
	NUMBA_CUDA_DRIVER="$lib/libcuda.so.1" LD_PRELOAD="$R/nv_redirect.so" "$PY" "$JOB")

RESULT_LABEL="numba: "
RESULT_FILES=(wl out err)
RESULT_TAIL=25

# verdict NAME REPORT.json MODE WL: the report says what MODE's job should get (check_numba.py)
verdict() {
	$PY tests/realdriver/check_numba.py "$2" "$3" "$4" >>"$T/$1.err" 2>&1
}

# nb_case NAME MODE WANT_RC: gpuctx check -- the job from its start (the job's stderr, with its
# tracebacks, goes to the .wl file too; check's own lines to .err)
nb_case() {
	local name=$1 mode=$2 want=$3 rc=0 got
	timeout 300 "$G" check -o "$T/$name.gctx" "${DEVS[@]}" -- \
		sh -c 'exec "$@" 2>>"$0"' "$T/$name.wl" "${JOBCMD[@]}" "$mode" \
		>>"$T/$name.wl" 2>"$T/$name.err"
	got=$?
	[ "$got" = "$want" ] || { echo "gpuctx check exited $got, expected $want" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { verdict "$name" "$T/$name.json" "$mode" "$T/$name.wl" || rc=1; }
	result "$name" $rc
}

# job_ready NAME MODE: the job started with --wait in the background (JOB_PID), once ready
job_ready() {
	"${JOBCMD[@]}" "$2" --wait >"$T/$1.wl" 2>&1 &
	JOB_PID=$!
	for _ in $(seq 600); do grep -q '^ready' "$T/$1.wl" && return 0; sleep 0.05; done
	echo "the job did not get ready" >>"$T/$1.err"
	return 1
}

# nb_attach NAME MODE WANT_RC: gpuctx check -p attached to the job after its cuInit
nb_attach() {
	local name=$1 mode=$2 want=$3 rc=0 chk got
	job_ready "$name" "$mode" || { result "$name" 1; return; }
	"$G" check -o "$T/$name.gctx" "${DEVS[@]}" --libcuda "$lib/libcuda.so.1" -p "$JOB_PID" \
		>"$T/$name.out" 2>"$T/$name.err" &
	chk=$!
	for _ in $(seq 600); do grep -qs attached "$T/$name.err" && break; sleep 0.05; done
	kill -USR1 "$JOB_PID"
	wait "$JOB_PID" || { echo "the job exited $?" >>"$T/$name.err"; rc=1; }
	wait "$chk"
	got=$?
	[ "$got" = "$want" ] || { echo "gpuctx check -p exited $got, expected $want" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { verdict "$name" "$T/$name.json" "$mode" "$T/$name.wl" || rc=1; }
	result "$name" $rc
}

# the dumps of pid $2 in spool $1
dumps() { ls "$1" 2>/dev/null | grep -E "^[0-9]{8}T[0-9]{6}Z-.*-$2-[a-z-]+\.gctx$"; }

# nb_agent: gpuctx agent started before the jobs; record --from-agent of an attached job
nb_agent() {
	local name=nb_agent rc=0 fj sj d rp
	# a run directory of its own: it runs beside the node's agent, if any
	mkdir -p -m 700 "$T/$name.run"
	"$G" agent --run-dir "$T/$name.run" --spool "$T/$name.spool" --grace 1 "${DEVS[@]}" \
		--libcuda "$lib/libcuda.so.1" \
		>"$T/$name.out" 2>"$T/$name.err" &
	AGENT=$!
	for _ in $(seq 600); do grep -qs "attached to" "$T/$name.err" && break; sleep 0.05; done
	# a fork job run to its end: one dump, with the poison-fork error
	"${JOBCMD[@]}" fork >"$T/$name.fork.wl" 2>&1 &
	fj=$!
	wait $fj || { echo "the fork job exited $?" >>"$T/$name.err"; rc=1; }
	for _ in $(seq 600); do [ -n "$(dumps "$T/$name.spool" $fj)" ] && break; sleep 0.05; done
	d=$(dumps "$T/$name.spool" $fj | head -1)
	if [ -z "$d" ]; then
		echo "no dump for the fork job $fj" >>"$T/$name.err"
		rc=1
	else
		"$G" report --json "$T/$name.spool/$d" >"$T/$name.fork.json" 2>>"$T/$name.err" &&
			verdict $name "$T/$name.fork.json" fork "$T/$name.fork.wl" || rc=1
	fi
	# a spawn job: no dump
	"${JOBCMD[@]}" spawn >"$T/$name.spawn.wl" 2>&1 &
	sj=$!
	wait $sj || { echo "the spawn job exited $?" >>"$T/$name.err"; rc=1; }
	sleep 2.5
	[ -z "$(dumps "$T/$name.spool" $sj)" ] ||
		{ echo "the spawn job was dumped: $(dumps "$T/$name.spool" $sj)" >>"$T/$name.err"; rc=1; }
	# record --from-agent of a fork job, asked for after its cuInit
	if job_ready $name.fa fork; then
		"$G" record --from-agent --run-dir "$T/$name.run" --duration 120 -q \
			-o "$T/$name.fa.gctx" -p $JOB_PID \
			>/dev/null 2>"$T/$name.fa.err" &
		rp=$!
		for _ in $(seq 600); do grep -qs attached "$T/$name.fa.err" && break; sleep 0.05; done
		kill -USR1 $JOB_PID
		wait $JOB_PID || { echo "the --from-agent job exited $?" >>"$T/$name.err"; rc=1; }
		wait $rp || { echo "record --from-agent exited $?: $(cat "$T/$name.fa.err")" >>"$T/$name.err"; rc=1; }
		"$G" report --json "$T/$name.fa.gctx" >"$T/$name.fa.json" 2>>"$T/$name.err" &&
			verdict $name "$T/$name.fa.json" fork "$T/$name.fa.wl" || rc=1
	else
		rc=1
	fi
	kill -TERM $AGENT
	wait $AGENT || { echo "the agent exited $? on SIGTERM" >>"$T/$name.err"; rc=1; }
	AGENT=
	result $name $rc
}

t_nb_fork() { nb_case nb_fork fork 86; }
t_nb_spawn() { nb_case nb_spawn spawn 0; }
t_nb_forkserver() { nb_case nb_forkserver forkserver 0; }
t_nb_subprocess() { nb_case nb_subprocess subprocess 0; }
t_nb_pool_spawn() { nb_case nb_pool_spawn pool-spawn 0; }
t_nb_pool_cpu() { nb_case nb_pool_cpu pool-cpu 0; }
t_nb_attach_fork() { nb_attach nb_attach_fork fork 86; }
t_nb_attach_spawn() { nb_attach nb_attach_spawn spawn 0; }
t_nb_agent() { nb_agent; }

tests=(nb_fork nb_spawn nb_forkserver nb_subprocess nb_pool_spawn nb_pool_cpu nb_attach_fork
	nb_attach_spawn nb_agent)
[ $# -gt 0 ] && tests=("$@")
for t in "${tests[@]}"; do
	"t_$t"
done
suite_summary
