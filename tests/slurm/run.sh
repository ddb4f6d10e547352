#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Slurm SPANK plugin (build/gpuctx_spank.so) on a real Slurm: munged, slurmctld and slurmd
# started on this machine for localhost, configured in a private directory removed after,
# with the plugin in their plugstack.conf. Jobs run the C workloads over the emulated driver:
#   fork   srun -n2 --gpuctx=check: two tasks whose children use the parent's GPU fd (a poison
#          fork each): srun exits 86, the verdict is in the step's stderr, one trace
#   spawn  srun -n2 --gpuctx=check: two tasks whose children exec and open their own: exit 0
#   record srun --gpuctx=record:DIR: the trace lands in DIR, srun's status is the job's
#   batch  sbatch with #SBATCH --gpuctx=record: the batch step's trace; an srun --gpuctx=check
#          inside it, from another directory, fails with 86 and its verdict in the job's output
#   agent  `gpuctx agent` runs on the node: the fork and spawn steps give the same exit statuses,
#          verdicts and traces, each taken from the agent (record --from-agent --cgroup of the
#          step's cgroup, empty when it asks): inside the step, the only gpuctx record of this
#          build is that client and it holds no BPF program (the agent's are the only ones);
#          an agent that answers but serves nothing: the plugin's own tracer takes the step
# and every step had exactly one tracer (slurmd's log names one per step), whose trace names the
# job (its cgroup: job attribution). Steps submitted by a user who is not root (issue 43; the
# user gpuctxslurm, made for the run and removed after when it was not there):
#   user_check  srun --gpuctx=check: 86 on a poison fork; the trace is the user's, they read it
#   user_dirs   record:DIR into a directory the user cannot write (given directly, or through
#               a symlink of theirs) with a root file planted at the step's trace name: no
#               file made there, the planted one intact, the reason in slurmd's log
#   user_swap_link, user_swap_fifo  the user replaces the step's trace by a symlink to a
#               root-only trace (a password in its command line) or by a FIFO while the step
#               runs: root's check reads the file the tracer wrote (the step's real verdict),
#               prints nothing of the root-only trace and is never blocked; srun, which reads
#               the path as the user, fails closed (exit 1, "no verdict")
#   user_agent  the agent serves the user's step after root loaded a libcuda in another user's
#               directory: the user's trace names no library their step did not map but root's
#   user_untraced  a tracer that cannot start: the step passes untraced, no empty trace is left
#   user_check_timeout  plugstack.conf's check-timeout=2 and a check that hangs: the node's
#               check and srun's are killed past 2 s, srun fails closed (exit 1, "no verdict")
# Needs root, Debian's slurm-wlm, libslurm-dev and munge (make test installs them:
# tools/install-deps.sh test); skipped without them when run by hand.
# Usage: tests/slurm/run.sh [TEST...]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
G=$top/build/gpuctx
W=$top/build/workloads
SO=$top/build/gpuctx_spank.so
SUITE=slurm
. "$top/tests/lib.sh"

for b in slurmctld slurmd munged srun; do
	if ! command -v $b >/dev/null && [ ! -x /usr/sbin/$b ]; then
		echo "slurm: SKIP: $b not installed (tools/install-deps.sh slurm)"
		exit 0
	fi
done
if [ ! -e /usr/include/slurm/spank.h ]; then
	echo "slurm: SKIP: no libslurm-dev: the plugin is not built (tools/install-deps.sh slurm)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "slurm: FAIL: needs root" >&2; exit 1; }
[ -e "$SO" ] || { echo "slurm: FAIL: $SO missing (make all with libslurm-dev)" >&2; exit 1; }
[ -x "$G" ] || { echo "slurm: FAIL: build/gpuctx missing (make all)" >&2; exit 1; }

T=$(mktemp -d /tmp/gpuctx-slurm.XXXXXX)
chmod 755 "$T"
MNT=$T/gpu
mkdir -p "$MNT" "$T/state" "$T/spool" "$T/work" "$T/traces" "$T/munge"
PIDS=()
MADE_USER=0
TU=gpuctxslurm # the submitter who is not root
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	fakegpu_stop # after its clients
	[ "$MADE_USER" = 1 ] && userdel "$TU" 2>/dev/null
	[ -n "${KEEP:-}" ] && { echo "slurm: kept $T"; return; }
	rm -rf "$T"
}
trap cleanup EXIT

fakegpu_up

# munge: a key of our own, its socket in $T (reached by the user's srun too)
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 755 "$T/munge"
chmod 400 "$T/munge/munge.key"
/usr/sbin/munged -f -F --socket="$T/munge/sock" --key-file="$T/munge/munge.key" \
	--pid-file="$T/munge/pid" --log-file="$T/munge/log" --seed-file="$T/munge/seed" &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$T/munge/sock" ] && break; sleep 0.05; done

NODE=$(hostname -s)
CLUSTER=gpuctx$$ # job ids start at 1 in every test cluster: its name keeps our cgroups apart
PORT0=$((17000 + $$ % 2000))
DEVOPTS=""
for d in nvidiactl:nvidiactl nvidia0:nvidia nvidia-uvm:nvidia-uvm; do
	DEVOPTS="$DEVOPTS record-opt=--device record-opt=$MNT/${d%%:*}:${d#*:}"
done
# the plugin asks the test's agent (t_agent), never one the node runs in /run/gpuctx
AGENT_RUN=$T/agent.run
echo "required $SO gpuctx=$G$DEVOPTS run-dir=$AGENT_RUN" >"$T/plugstack.conf"
cat >"$T/slurm.conf" <<EOF
ClusterName=$CLUSTER
SlurmctldHost=$NODE
SlurmctldPort=$PORT0
SlurmdPort=$((PORT0 + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
PlugStackConfig=$T/plugstack.conf
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$T/slurm.conf
/usr/sbin/slurmctld -D -i -f "$T/slurm.conf" >"$T/slurmctld.out" 2>&1 &
PIDS+=($!)
/usr/sbin/slurmd -D -N "$NODE" -f "$T/slurm.conf" >"$T/slurmd.out" 2>&1 &
PIDS+=($!)
up=0
for _ in $(seq 200); do
	sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && { up=1; break; }
	sleep 0.1
done
if [ $up = 0 ]; then
	echo "slurm: FAIL: the node did not come up" >&2
	tail -5 "$T/slurmctld.log" "$T/slurmd.log" >&2
	exit 1
fi

# the submitter who is not root, and their submit directory
if ! id -u "$TU" >/dev/null 2>&1; then
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$TU" ||
		{ echo "slurm: FAIL: cannot make the user $TU" >&2; exit 1; }
	MADE_USER=1
fi
TUID=$(id -u "$TU")
as_user() { setpriv --reuid="$TUID" --regid="$(id -g "$TU")" --init-groups env HOME=/ "$@"; }
UW=$T/uwork
mkdir -p "$UW"
chown "$TU:" "$UW"

RESULT_FILES=(out err why)

why() { echo "$2" >>"$T/$1.why"; }

# The job id and step of the newest job; the traces of job $1 step $2 in dir $3.
newest_job() { squeue -h -t all -o %i 2>/dev/null | sort -n | tail -1; }
traces() { ls "$3"/gpuctx-"$1"."$2"-*.gctx 2>/dev/null; }
# how many tracers slurmd's log says started for job $1 step $2
tracers() { grep -c "gpuctx: tracer pid [0-9]* follows .* for job $1 step $2 " "$T/slurmd.log"; }

# step_checks NAME JOB STEP DIR WANT_ERRORS: one trace of the step, one tracer, its report
step_checks() {
	local name=$1 job=$2 step=$3 dir=$4 want=$5 t n
	t=$(traces "$job" "$step" "$dir")
	n=$(echo "$t" | grep -c .)
	[ "$n" = 1 ] || { why "$name" "want one trace of $job.$step in $dir, got $n: $t"; return 1; }
	[ "$(tracers "$job" "$step")" = 1 ] ||
		{ why "$name" "slurmd's log has $(tracers "$job" "$step") tracers for $job.$step"; return 1; }
	"$G" report --json "$t" >"$T/$name.json" 2>>"$T/$name.err" || return 1
	python3 - "$T/$name.json" "$job" "$step" "$want" "$NODE" >>"$T/$name.why" 2>&1 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
job, step, want, node = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
wl = [p for p in r["processes"] if p["comm"].startswith("wl_")]
errs = [i for i in r["incidents"] if i["severity"] == "error"]
ok = True
def bad(msg):
    global ok
    ok = False
    print(msg)
if r["meta"]["hostname"] != node:
    bad("hostname %r" % r["meta"]["hostname"])
if len(wl) < 2:
    bad("want the two tasks' workloads, got %r" % [p["comm"] for p in r["processes"]])
for p in wl:
    j = p["job"]
    if not j or j["kind"] != "slurm" or j["id"] != job or j["step"] != step:
        bad("pid %d: job %r" % (p["pid"], j))
if (len(errs) > 0) != (want > 0):
    bad("error incidents: %r" % [i["kind"] for i in errs])
sys.exit(0 if ok else 1)
EOF
}

# srun -n2 --gpuctx=check [WRAPPER] WORKLOAD: exit status, the verdict on stderr, the step's
# trace (the job in LAST_JOB)
t_check() {
	local name=$1 wl=$2 want_rc=$3 wrap=${4:-} rc=0 job
	(cd "$T/work" && srun -n2 --gpuctx=check $wrap "$W/$wl" "$MNT" >"$T/$name.out" 2>"$T/$name.err")
	local got=$?
	[ "$got" = "$want_rc" ] || { why "$name" "srun exited $got, want $want_rc"; rc=1; }
	job=$(newest_job)
	if [ "$want_rc" = 86 ]; then
		grep -q "^gpuctx check: POISON FORK" "$T/$name.err" ||
			{ why "$name" "no verdict in the step's stderr"; rc=1; }
	else
		grep -q "^gpuctx check: NO PROBLEM FOUND" "$T/$name.err" ||
			{ why "$name" "no verdict in the step's stderr"; rc=1; }
	fi
	[ $rc = 0 ] && { step_checks "$name" "$job" 0 "$T/work" $([ "$want_rc" = 86 ] && echo 1 || echo 0) || rc=1; }
	LAST_JOB=$job
	[ -z "$wrap" ] && result "$name" $rc
	return $rc
}

t_fork() { t_check fork wl_fork_child_ioctl 86; }
t_spawn() { t_check spawn wl_fork_exec_own 0; }

# record:DIR: the trace in DIR, the job's own exit status (a poison fork does not fail it)
t_record() {
	local name=record rc=0 job
	(cd "$T/work" && srun -n1 --gpuctx=record:"$T/traces" "$W/wl_fork_child_ioctl" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err") || { why $name "srun failed: $?"; rc=1; }
	job=$(newest_job)
	grep -q "^gpuctx check" "$T/$name.err" && { why $name "record printed a verdict"; rc=1; }
	[ $rc = 0 ] && { step_checks $name "$job" 0 "$T/traces" 1 || rc=1; }
	result $name $rc
}

# #SBATCH --gpuctx=record: the batch step traced into the submit directory
t_batch() {
	local name=batch rc=0 job
	cat >"$T/work/job.sh" <<EOF
#!/bin/sh
#SBATCH --gpuctx=record
#SBATCH -o $T/work/batch.out
$W/wl_fork_exec_own $MNT
# a checked step inside, from another directory: its verdict and exit 86 here
cd /
srun -n1 --gpuctx=check $W/wl_fork_child_ioctl $MNT >/dev/null
echo "srun exit \$?"
EOF
	job=$(cd "$T/work" && sbatch --parsable job.sh 2>"$T/$name.err")
	[ -n "$job" ] || { why $name "sbatch failed"; result $name 1; return; }
	for _ in $(seq 300); do
		squeue -h -j "$job" 2>/dev/null | grep -q . || break
		sleep 0.1
	done
	# the plugin writes the trace as the batch step ends
	for _ in $(seq 100); do traces "$job" batch "$T/work" | grep -q . && break; sleep 0.1; done
	step_checks $name "$job" batch "$T/work" 0 || rc=1
	grep -q "^srun exit 86$" "$T/work/batch.out" && grep -q "^gpuctx check: POISON FORK" \
		"$T/work/batch.out" || { why $name "the checked step inside: $(cat "$T/work/batch.out")"; rc=1; }
	[ $rc = 0 ] && { step_checks $name "$job" 0 "$T/work" 1 || rc=1; }
	result $name $rc
}

# A node where `gpuctx agent` runs: the plugin takes each step from it, no second tracer.
t_agent() {
	local name=agent rc=0 apid job f n p
	"$G" agent --run-dir "$AGENT_RUN" --spool "$T/agent.spool" ${DEVOPTS//record-opt=/} >"$T/agent.log" 2>&1 &
	apid=$!
	PIDS+=($apid)
	for _ in $(seq 300); do grep -qs "attached to" "$T/agent.log" && break; sleep 0.05; done
	grep -qs "attached to" "$T/agent.log" ||
		{ why $name "the agent did not start: $(cat "$T/agent.log")"; result $name 1; return; }
	# inside each task: this build's gpuctx processes and the BPF programs each holds
	cat >"$T/work/probe.sh" <<'EOF'
#!/bin/sh
for p in /proc/[0-9]*; do
	a=$(cat $p/cmdline 2>/dev/null | tr '\0' ' ')
	case "$a" in
	"$PROBE_G record"* | "$PROBE_G agent"*)
		echo "${p#/proc/} $(ls -l $p/fd 2>/dev/null | grep -c 'anon_inode:bpf-prog') $a" ;;
	esac
done >"$PROBE_OUT.$SLURM_PROCID"
exec "$@"
EOF
	chmod 755 "$T/work/probe.sh"
	export PROBE_G=$G PROBE_OUT=$T/agent.procs
	for f in fork:wl_fork_child_ioctl:86 spawn:wl_fork_exec_own:0; do
		n=agent_${f%%:*}
		t_check $n "$(echo $f | cut -d: -f2)" "${f##*:}" "$T/work/probe.sh" ||
			{ why $name "$n: $(cat "$T/$n.why" 2>/dev/null)"; rc=1; }
		job=$LAST_JOB
		grep -q "gpuctx: tracer pid [0-9]* follows .* for job $job step 0 .*(from the agent)" \
			"$T/slurmd.log" || { why $name "$n: slurmd's log: the agent did not serve $job"; rc=1; }
		for p in 0 1; do
			# the agent holds programs; the one gpuctx record is its client, holding none
			awk -v a="$apid" '$1 == a && $2 > 0 { ok = 1 } END { exit !ok }' "$PROBE_OUT.$p" &&
				[ "$(grep -c " $G record" "$PROBE_OUT.$p")" = 1 ] &&
				grep " $G record" "$PROBE_OUT.$p" | grep -q "^[0-9]* 0 $G record .*--from-agent" ||
				{ why $name "$n task $p: $(cat "$PROBE_OUT.$p")"; rc=1; }
		done
	done
	kill "$apid"
	wait "$apid" 2>/dev/null
	# an agent that answers but serves nothing: the plugin's own tracer takes the step (the
	# request read first: the client has begun the trace file, which the plugin empties again)
	python3 - "$T/fake.ready" "$AGENT_RUN/agent.sock" <<'EOF' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[2])
os.chmod(sys.argv[2], 0o600)
s.listen(8)
open(sys.argv[1], "w").close()
while True:
    c = s.accept()[0]
    c.recv(4096)
    time.sleep(0.2)
    c.close()
EOF
	apid=$!
	PIDS+=($apid)
	for _ in $(seq 100); do [ -e "$T/fake.ready" ] && break; sleep 0.05; done
	t_check agent_fallback wl_fork_child_ioctl 86 "$T/work/probe.sh" ||
		{ why $name "agent_fallback: $(cat "$T/agent_fallback.why" 2>/dev/null)"; rc=1; }
	kill "$apid"
	wait "$apid" 2>/dev/null
	rm -f "$AGENT_RUN/agent.sock"
	grep -q "gpuctx: the agent did not serve step 0 .*: a tracer of its own follows it" "$T/slurmd.log" &&
		grep -q "gpuctx: tracer pid [0-9]* follows .* for job $LAST_JOB step 0 .*gctx$" "$T/slurmd.log" &&
		grep " $G record" "$PROBE_OUT.0" | grep -vq -- "--from-agent" ||
		{ why $name "agent_fallback: no tracer of the plugin's own took job $LAST_JOB"; rc=1; }
	result $name $rc
}

# srun --gpuctx=check by a user: a poison fork fails the step (86), the trace is theirs
t_user_check() {
	local name=user_check rc=0 job t got
	(cd "$UW" && as_user srun -n2 --gpuctx=check "$W/wl_fork_child_ioctl" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err")
	got=$?
	[ $got = 86 ] || { why $name "srun exited $got, want 86"; rc=1; }
	grep -q "^gpuctx check: POISON FORK" "$T/$name.err" ||
		{ why $name "no verdict in the step's stderr"; rc=1; }
	job=$(newest_job)
	t=$(traces "$job" 0 "$UW")
	[ -n "$t" ] && [ "$(stat -c %U "$t")" = "$TU" ] ||
		{ why $name "the trace is not the user's: $(ls -l "$UW")"; rc=1; }
	as_user "$G" report "$t" >/dev/null 2>>"$T/$name.err" ||
		{ why $name "the user cannot read their own trace"; rc=1; }
	[ $rc = 0 ] && { step_checks $name "$job" 0 "$UW" 1 || rc=1; }
	result $name $rc
}

# record:DIR into root's directory (directly, or through the user's symlink to it), a root file
# planted at the name the step's trace would have: nothing made, nothing replaced
t_user_dirs() {
	local name=user_dirs rc=0 next d=$T/rootdir dir
	mkdir -p "$d"
	chmod 755 "$d"
	ln -sfn "$d" "$UW/link"
	# root's file at the step's name; then none (the user may not create one there either)
	for dir in "$d" "$d" "$UW/link"; do
		next=$(($(newest_job) + 1))
		[ -e "$d/planted" ] || { echo precious >"$d/gpuctx-$next.0-$NODE.gctx"; : >"$d/planted"; }
		(cd "$UW" && as_user srun -n1 --gpuctx=record:"$dir" "$W/wl_fork_exec_own" "$MNT" \
			>>"$T/$name.out" 2>>"$T/$name.err") || { why $name "srun failed: $?"; rc=1; }
		[ "$(newest_job)" = "$next" ] || why $name "the job was $(newest_job), not $next"
		if [ -e "$d/gpuctx-$next.0-$NODE.gctx" ]; then
			[ "$(cat "$d/gpuctx-$next.0-$NODE.gctx")" = precious ] ||
				{ why $name "$dir: root replaced the file planted at the trace's name"; rc=1; }
			rm -f "$d/gpuctx-$next.0-$NODE.gctx"
		fi
		grep -q "\[$next.0\] gpuctx: cannot create the trace in $dir as uid $TUID: .*: step 0 untraced" \
			"$T/slurmd.log" || { why $name "$dir: slurmd's log does not say why"; rc=1; }
	done
	rm -f "$d/planted"
	[ -z "$(ls -A "$d")" ] || { why $name "made in root's directory: $(ls -la "$d")"; rc=1; }
	result $name $rc
}

# A root-only trace whose command line holds a password, in root's 0700 directory.
secret_trace() {
	[ -s "$T/secret/s.gctx" ] && return
	mkdir -p "$T/secret"
	chmod 700 "$T/secret"
	# shellcheck disable=SC2086
	"$G" record -q ${DEVOPTS//record-opt=/} -o "$T/secret/s.gctx" -- "$W/wl_fork_child_ioctl" \
		"$MNT" password=hunter2 >/dev/null 2>&1
	chmod 600 "$T/secret/s.gctx"
}

# As the user: wait for the step's trace in DIR and put a symlink to the secret or a FIFO there.
swapper() { # DIR link|fifo
	as_user python3 - "$1" "$2" "$T/secret/s.gctx" <<'EOF' &
import glob, os, sys, time
d, mode, secret = sys.argv[1:4]
end = time.time() + 120
while time.time() < end:
    for f in glob.glob(d + "/gpuctx-*.gctx"):
        if os.path.islink(f) or not os.path.isfile(f):
            continue
        os.rename(f, f + ".moved")
        if mode == "link":
            os.symlink(secret, f)
        else:
            os.mkfifo(f)
        sys.exit(0)
    time.sleep(0.0005)
sys.exit(1)
EOF
	SWAPPER=$!
}

# The user swaps the step's trace for a symlink to root's secret trace, or for a FIFO, while the
# step runs: root's verdict is the step's own, nothing of the secret shows, nothing blocks
t_user_swap() {
	local mode=$1 name=user_swap_$1 rc=0 d=$UW/swap_$1 got f
	secret_trace
	mkdir -p "$d"
	chown "$TU:" "$d"
	swapper "$d" "$mode"
	(cd "$d" && as_user timeout -k 10 90 srun -n1 --gpuctx=check sh -c \
		"$W/wl_fork_exec_own $MNT && sleep 1" >"$T/$name.out" 2>"$T/$name.err")
	got=$?
	wait "$SWAPPER" || { why $name "the swapper found no trace to swap"; rc=1; }
	[ $got = 124 ] && { why $name "the step never ended (root blocked on the $mode)"; rc=1; }
	if grep -q hunter2 "$T/$name.out" "$T/$name.err"; then
		why $name "root printed the root-only trace into the user's step"
		rc=1
	fi
	grep -q "^gpuctx check: NO PROBLEM FOUND" "$T/$name.err" ||
		{ why $name "no verdict of the step's own trace"; rc=1; }
	# srun's own check reads the path as the user: no verdict there is no pass
	[ $got = 1 ] && grep -q "^gpuctx: job [0-9]* step 0: no verdict (gpuctx: .*): exit 1$" \
		"$T/$name.err" || { why $name "srun exited $got without failing closed"; rc=1; }
	for f in "$d"/gpuctx-*.gctx; do [ -p "$f" ] && timeout 2 sh -c ": >'$f'"; done
	result $name $rc
}
t_user_swap_link() { t_user_swap link; }
t_user_swap_fifo() { t_user_swap fifo; }

# The agent serves a user's step: its node-wide records (a libcuda root loaded from another
# user's directory) stay out of the user's trace
t_user_agent() {
	local name=user_agent rc=0 apid job t got a=$T/alice
	mkdir -p "$a"
	install -m 0644 "$top/build/doubles/libcuda.so.1" "$a/libcuda.so.1"
	chown -R 65534:65534 "$a"
	# shellcheck disable=SC2086
	"$G" agent --run-dir "$AGENT_RUN" --spool "$T/uagent.spool" ${DEVOPTS//record-opt=/} \
		>"$T/uagent.log" 2>&1 &
	apid=$!
	PIDS+=($apid)
	for _ in $(seq 300); do grep -qs "attached to" "$T/uagent.log" && break; sleep 0.05; done
	/usr/bin/python3 -c "import ctypes, time; ctypes.CDLL('$a/libcuda.so.1'); time.sleep(1)" \
		>/dev/null 2>&1
	(cd "$UW" && as_user srun -n2 --gpuctx=check "$W/wl_fork_child_ioctl" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err")
	got=$?
	kill "$apid"
	wait "$apid" 2>/dev/null
	[ $got = 86 ] || { why $name "srun exited $got, want 86"; rc=1; }
	job=$(newest_job)
	grep -q "gpuctx: tracer pid [0-9]* follows .* for job $job step 0 .*(from the agent)" \
		"$T/slurmd.log" || { why $name "the agent did not serve $job"; rc=1; }
	t=$(traces "$job" 0 "$UW")
	as_user "$G" report --json "$t" >"$T/$name.json" 2>>"$T/$name.err" ||
		{ why $name "the user cannot read their trace"; rc=1; }
	if grep -q "$a" "$T/$name.json"; then
		why $name "the user's trace names $a: $(grep "$a" "$T/$name.json" | sort -u | head -3)"
		rc=1
	fi
	result $name $rc
}

# A tracer that cannot start (plugstack.conf's gpuctx= a program that fails, for one step): the
# step runs untraced and passes, the empty trace the plugin made for it is gone again (no trace
# that stands for a step nobody traced, which srun's check would fail on), slurmd's log says why
t_user_untraced() {
	local name=user_untraced rc=0 got job d=$UW/untraced
	mkdir -p "$d"
	chown "$TU:" "$d"
	printf '#!/bin/sh\necho "gpuctx: broken on purpose" >&2\nexit 1\n' >"$T/broken-gpuctx"
	chmod 755 "$T/broken-gpuctx"
	cp "$T/plugstack.conf" "$T/plugstack.conf.good"
	sed -i "s|gpuctx=$G |gpuctx=$T/broken-gpuctx |" "$T/plugstack.conf"
	(cd "$d" && as_user srun -n1 --gpuctx=check "$W/wl_fork_exec_own" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err")
	got=$?
	cp "$T/plugstack.conf.good" "$T/plugstack.conf"
	job=$(newest_job)
	[ $got = 0 ] || { why $name "srun exited $got, want 0 (the job's own)"; rc=1; }
	[ -z "$(ls -A "$d")" ] || { why $name "left in the user's directory: $(ls -la "$d")"; rc=1; }
	grep -q "\[$job.0\] gpuctx: the tracer did not attach (gpuctx: broken on purpose): step 0 untraced" \
		"$T/slurmd.log" || { why $name "slurmd's log does not say why"; rc=1; }
	grep -q "gpuctx: no trace of job $job step 0" "$T/$name.err" ||
		{ why $name "srun does not say it found no trace"; rc=1; }
	result $name $rc
}

# A check that never ends (plugstack.conf's gpuctx= a program whose check hangs, for one step,
# with check-timeout=2): the node's check and srun's are killed past 2 s, the step fails closed
# (srun exits 1, "no verdict" from the node and from srun), nothing of the checks is left, and
# srun is done in seconds, not the 300 s of the default
t_user_check_timeout() {
	local name=user_check_timeout rc=0 got job d=$UW/timeout t0 secs p
	mkdir -p "$d"
	chown "$TU:" "$d"
	cat >"$T/hang-gpuctx" <<EOF
#!/bin/sh
[ "\$1" = check ] || exec $G "\$@"
echo \$\$ >>$T/hang.pids
exec sleep 600
EOF
	chmod 755 "$T/hang-gpuctx"
	: >"$T/hang.pids"
	chmod 666 "$T/hang.pids"
	cp "$T/plugstack.conf" "$T/plugstack.conf.good"
	sed -i "s|gpuctx=$G |gpuctx=$T/hang-gpuctx check-timeout=2 |" "$T/plugstack.conf"
	t0=$(date +%s)
	(cd "$d" && as_user timeout -k 10 120 srun -n1 --gpuctx=check "$W/wl_fork_exec_own" "$MNT" \
		>"$T/$name.out" 2>"$T/$name.err")
	got=$?
	secs=$(($(date +%s) - t0))
	cp "$T/plugstack.conf.good" "$T/plugstack.conf"
	job=$(newest_job)
	[ $got = 1 ] || { why $name "srun exited $got, want 1 (no verdict is no pass)"; rc=1; }
	[ $secs -le 60 ] || { why $name "srun took $secs s"; rc=1; }
	grep -q "^gpuctx: no verdict: the check of .*gpuctx-$job.0-$NODE.gctx took over 2 s$" \
		"$T/$name.err" || { why $name "the node's check did not say it was cut off"; rc=1; }
	grep -q "^gpuctx: job $job step 0: no verdict (the check took too long): exit 1$" \
		"$T/$name.err" || { why $name "srun's check did not fail closed"; rc=1; }
	grep -q "\[$job.0\] error: gpuctx: check of .* killed after 2 s" "$T/slurmd.log" ||
		{ why $name "slurmd's log does not say the check was killed"; rc=1; }
	[ "$(grep -c . "$T/hang.pids")" = 2 ] ||
		{ why $name "want 2 checks (the node's, srun's), ran: $(cat "$T/hang.pids")"; rc=1; }
	for p in $(cat "$T/hang.pids"); do
		kill -0 "$p" 2>/dev/null && { why $name "check $p still runs"; kill -KILL "$p"; rc=1; }
	done
	result $name $rc
}

all_tests=(fork spawn record batch agent user_check user_dirs user_swap_link user_swap_fifo
	user_agent user_untraced user_check_timeout)
[ $# -gt 0 ] && all_tests=("$@")
for t in "${all_tests[@]}"; do
	"t_$t"
done
# nothing of ours is left in the cgroup hierarchy
root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$root" ] && [ -e "$root/slurm_gpuctx_$CLUSTER" ]; then
	why cgroups "left behind: $(find "$root/slurm_gpuctx_$CLUSTER" -type d)"
	result cgroups 1
fi
suite_summary
