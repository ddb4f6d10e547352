# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh: jobs bigger than one host (issue 30). Job attribution from the cgroup a
# traced process runs in; traces of two hosts (two UTS namespaces with their own hostnames)
# merged into one report and one Perfetto trace with a machine per host.
CHECK_CLUSTER="python3 $top/tests/integration/check_cluster.py"

# job_cgroup NAME TOP PATH: the cgroup v2 directory TOP/PATH at the hierarchy's root, where a
# scheduler puts jobs (job attribution trusts no other place), TOP a name of ours (base: TOP,
# cg: the directory), or a SKIP line and 1 without a cgroup v2 hierarchy
job_cgroup() {
	local root
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ -z "$root" ]; then
		echo "SKIP $1: no cgroup v2 hierarchy mounted"
		return 1
	fi
	base=$root/$2
	cg=$base/$3
	mkdir -p "$cg"
}

# A cgroup v2 directory shaped as Slurm's (cgroup v1 layout: slurm_NODE/uid_N/job_N/step_N/task_N,
# at the hierarchy's root where slurmd puts it, NODE ours): a command moved into it before its
# exec is attributed to the job.
t_job_attr() {
	local name=job_attr rc=0 base cg
	job_cgroup $name slurm_gpuctxit$$ uid_0/job_4242/step_0/task_1 || return
	# (the shell that moved itself lives on a moment: gpuctx reads its cgroup at its exec)
	record "$name" -- sh -c "echo \$\$ >$cg/cgroup.procs &&
		exec sh -c 'sleep 0.5; exec $W/wl_fork_child_ioctl $MNT'" || rc=1
	"$G" report "$T/$name.gctx" >"$T/$name.txt" 2>>"$T/$name.err" || rc=1
	find "$base" -depth -type d -exec rmdir {} + 2>/dev/null
	[ $rc = 0 ] && { $CHECK_CLUSTER job_attr "$T/$name" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

# Children that move into a job's cgroup and exec a program that exits at once, each reaped by
# its parent outside the job before gpuctx reads /proc/PID/cgroup: the cgroup the kernel gave
# at exec (the exec record's cgroup id) attributes every one to the job, not to the parent's.
t_job_quick() {
	local name=job_quick rc=0 base cg
	job_cgroup $name gpuctxit$$_slurmstepd.scope job_4343/step_0/user/task_2 || return
	record "$name" -- sh -c "for i in \$(seq 30); do
		sh -c 'echo \$\$ >$cg/cgroup.procs && exec true'; done" || rc=1
	"$G" report "$T/$name.gctx" >"$T/$name.txt" 2>>"$T/$name.err" || rc=1
	find "$base" -depth -type d -exec rmdir {} + 2>/dev/null
	[ $rc = 0 ] && { $CHECK_CLUSTER job_quick "$T/$name" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

# host HOSTNAME TRACE CMD...: record CMD in a UTS namespace of its own named HOSTNAME
host_record() {
	local h=$1 out=$2
	shift 2
	unshare -u sh -c 'hostname "$1" && shift && exec "$@"' sh "$h" \
		"$G" record -q -o "$out" "${DEVS[@]}" -- "$@"
}

# Two hosts: a poison fork on nodea, a spawn (fork then exec) on nodeb. Merged, and given
# directly: one report naming the host of each incident, check failing on the job, one
# Perfetto trace with a machine per host. nodea's trace merged with itself: equal pids on
# two hosts stay two processes.
t_merge() {
	local name=merge rc=0 v
	if ! unshare -u true 2>/dev/null; then
		echo "SKIP $name: no UTS namespaces (unshare -u)"
		return
	fi
	host_record nodea "$T/$name.a.gctx" "$W/wl_fork_child_ioctl" "$MNT" >"$T/$name.out" \
		2>"$T/$name.err" || rc=1
	host_record nodeb "$T/$name.b.gctx" "$W/wl_fork_exec_own" "$MNT" >>"$T/$name.out" \
		2>>"$T/$name.err" || rc=1
	"$G" merge -o "$T/$name.gctx" "$T/$name.a.gctx" "$T/$name.b.gctx" 2>>"$T/$name.err" || rc=1
	"$G" report "$T/$name.gctx" >"$T/$name.txt" 2>>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	"$G" report --json "$T/$name.a.gctx" "$T/$name.b.gctx" >"$T/$name.direct.json" \
		2>>"$T/$name.err" || rc=1
	"$G" check "$T/$name.gctx" 2>"$T/$name.check"
	v=$?
	"$G" check "$T/$name.b.gctx" 2>/dev/null
	v="$v $?"
	"$G" report --fail-on error "$T/$name.a.gctx" "$T/$name.b.gctx" >/dev/null 2>&1
	v="$v $?"
	[ "$v" = "86 0 86" ] || { echo "check merged, check nodeb, report --fail-on: $v" >>"$T/$name.err"; rc=1; }
	"$G" export -q -f perfetto -o "$T/$name.pftrace" "$T/$name.gctx" 2>>"$T/$name.err" || rc=1
	"$G" export -q -f perfetto -o "$T/$name.self.pftrace" "$T/$name.a.gctx" "$T/$name.a.gctx" \
		2>>"$T/$name.err" || rc=1
	# Chrome JSON has no machines: refused with a reason, nothing written
	if "$G" export -q -f chrome -o "$T/$name.json.out" "$T/$name.gctx" 2>"$T/$name.chrome.err" ||
		[ -e "$T/$name.json.out" ] || ! grep -q "holds one host" "$T/$name.chrome.err"; then
		echo "chrome export of two hosts was not refused" >>"$T/$name.err"
		rc=1
	fi
	[ $rc = 0 ] && { $CHECK_CLUSTER merge "$T/$name" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

# The agent's DaemonSet: what the agent needs of the node (docs/cluster.md)
t_k8s_manifest() {
	local name=k8s_manifest
	python3 - "$top/deploy/kubernetes/gpuctx-agent.yaml" "$top/systemd/gpuctx-agent.service" \
		>"$T/$name.err" 2>&1 <<'EOF'
import sys
import yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ds = [d for d in docs if d["kind"] == "DaemonSet"]
assert len(ds) == 1, "one DaemonSet"
spec = ds[0]["spec"]["template"]["spec"]
assert spec["hostPID"] is True, "hostPID"
c = spec["containers"][0]
sc = c["securityContext"]
# not privileged (issue 43 item 11): root with the systemd unit's capabilities, nothing more
assert sc.get("privileged") is False and sc["allowPrivilegeEscalation"] is False, sc
assert sc["readOnlyRootFilesystem"] is True, sc
unit = [l for l in open(sys.argv[2]) if l.startswith("CapabilityBoundingSet=")]
want = sorted(x.replace("CAP_", "") for x in unit[-1].split("=", 1)[1].split())
assert sc["capabilities"]["drop"] == ["ALL"], sc["capabilities"]
assert sorted(sc["capabilities"]["add"]) == want, (sc["capabilities"]["add"], want)
assert c["command"][1] == "agent", "runs gpuctx agent"
vols = {v["name"]: v.get("hostPath", {}).get("path") for v in spec["volumes"]}
mounts = {m["mountPath"]: (vols[m["name"]], m.get("readOnly", False)) for m in c["volumeMounts"]}
for p in ("/sys/fs/cgroup", "/sys/kernel/btf", "/sys/kernel/tracing"):
    assert mounts.get(p) == (p, True), "%s mounted read-only from the host" % p
# no debugfs; writable host paths: the agent's own directory alone (its spool 0700 inside)
assert not any(h and h.startswith("/sys/kernel/debug") for h, _ in mounts.values()), mounts
assert [p for p, (h, ro) in mounts.items() if h and not ro] == ["/var/lib/gpuctx"], mounts
spool = c["command"][c["command"].index("--spool") + 1]
assert spool.startswith("/var/lib/gpuctx/") and spool != "/var/lib/gpuctx/", spool
sel = ds[0]["spec"]["selector"]["matchLabels"].items()
assert sel <= ds[0]["spec"]["template"]["metadata"]["labels"].items(), "selector matches"
EOF
	result $name $?
}

cluster_tests=(job_attr job_quick merge k8s_manifest)
