# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh: jobs bigger than one host (issue 30). Job attribution from the cgroup a
# traced process runs in; traces of two hosts (two UTS namespaces with their own hostnames)
# merged into one report and one Perfetto trace with a machine per host.
CHECK_CLUSTER="python3 $top/tests/integration/check_cluster.py"

# A cgroup v2 directory shaped as Slurm's (cgroup v1 layout: slurm/uid_N/job_N/step_N/task_N)
# under a private prefix: a command moved into it before its exec is attributed to the job.
t_job_attr() {
	local name=job_attr rc=0 root base cg
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ -z "$root" ]; then
		echo "SKIP $name: no cgroup v2 hierarchy mounted"
		return
	fi
	base=$root/gpuctx-it.$$
	cg=$base/slurm/uid_0/job_4242/step_0/task_1
	mkdir -p "$cg"
	record "$name" -- sh -c "echo \$\$ >$cg/cgroup.procs && exec $W/wl_fork_child_ioctl $MNT" ||
		rc=1
	"$G" report "$T/$name.gctx" >"$T/$name.txt" 2>>"$T/$name.err" || rc=1
	find "$base" -depth -type d -exec rmdir {} + 2>/dev/null
	[ $rc = 0 ] && { $CHECK_CLUSTER job_attr "$T/$name" >>"$T/$name.err" 2>&1; rc=$?; }
	result "$name" $rc
}

cluster_tests=(job_attr)
