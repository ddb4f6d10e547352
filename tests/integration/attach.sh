# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh: `gpuctx check -p` attached mid-job (issue 26). tests/workloads/attach_job.py
# initialises CUDA or HIP through the test doubles over the emulated driver, forks workers before
# the attach (alive, sharing its GPU files) and after it; each worker's first call fails on the
# inherited state. The answer must be the one a trace from the start gives: one poison-fork
# error, exit 86, all the workers in it; a spawn job (fork + exec) is clean, exit 0.

ATTACH_JOB=$top/tests/workloads/attach_job.py

# attach_diag NAME API START BEFORE AFTER WANT_RC
attach_diag() {
	local name=$1 api=$2 start=$3 before=$4 after=$5 want=$6 lib wl chk rc=0
	lib=$DOUBLES/$([ "$api" = cuda ] && echo libcuda.so.1 || echo libamdhip64.so.5)
	if [ ! -e "$lib" ]; then
		echo "SKIP $name: $lib was not built (CUDA/HIP headers missing)"
		return
	fi
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES python3 "$ATTACH_JOB" \
		--api "$api" --start "$start" --before "$before" --after "$after" \
		>"$T/$name.wl" 2>&1 &
	wl=$!
	for _ in $(seq 200); do grep -q ready "$T/$name.wl" && break; sleep 0.05; done
	"$G" check -o "$T/$name.gctx" --junit "$T/$name.xml" "${DEVS[@]}" \
		"--lib$([ "$api" = cuda ] && echo cuda || echo hip)" "$lib" -p "$wl" \
		>"$T/$name.out" 2>"$T/$name.err" &
	chk=$!
	for _ in $(seq 300); do grep -qs attached "$T/$name.err" && break; sleep 0.05; done
	kill -USR1 "$wl"
	wait "$wl" || { echo "the job failed: $(cat "$T/$name.wl")" >>"$T/$name.err"; rc=1; }
	wait "$chk"
	local got=$?
	[ "$got" = "$want" ] || { echo "gpuctx check -p exited $got, expected $want" >>"$T/$name.err"; rc=1; }
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && python3 - "$T/$name.json" "$T/$name.wl" "$api" "$start" "$wl" \
		>>"$T/$name.err" 2>&1 <<'PY' || rc=1
import json, sys
d = json.load(open(sys.argv[1]))
api, start, job = sys.argv[3], sys.argv[4], int(sys.argv[5])
workers = next(l.split()[1:] for l in open(sys.argv[2]) if l.startswith("workers"))
I = d["incidents"]
if start == "spawn":
    assert I == [], I
    assert d["summary"]["verdict"].startswith("NO PROBLEM FOUND"), d["summary"]
else:
    assert len(I) == 1, I
    i = I[0]
    assert i["kind"] == "poison-fork" and i["severity"] == "error", i
    assert i["pid"] == job and i["api"] == api.upper(), i
    assert sorted(i["pids"]) == sorted(int(w) for w in workers), (i["pids"], workers)
    assert i["used"] == len(workers), i
    assert "before attach" in i["summary"], i
    assert "not caused by a fork" not in i["fix"], i
    assert not [f for f in d["findings"] if f["kind"] == "api-error"], d["findings"]
PY
	result "$name" $rc
}

t_attach_cuda_after() { attach_diag attach_cuda_after cuda fork 0 3 86; }
t_attach_cuda_before() { attach_diag attach_cuda_before cuda fork 3 0 86; }
t_attach_cuda_both() { attach_diag attach_cuda_both cuda fork 2 2 86; }
t_attach_cuda_spawn() { attach_diag attach_cuda_spawn cuda spawn 1 2 0; }
t_attach_hip_after() { attach_diag attach_hip_after hip fork 0 3 86; }
t_attach_hip_before() { attach_diag attach_hip_before hip fork 3 0 86; }
t_attach_hip_spawn() { attach_diag attach_hip_spawn hip spawn 1 2 0; }

attach_tests=(attach_cuda_after attach_cuda_before attach_cuda_both attach_cuda_spawn
	attach_hip_after attach_hip_before attach_hip_spawn)
