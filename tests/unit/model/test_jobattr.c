// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of job attribution from cgroup paths, on the shapes Slurm (cgroup v1 and v2),
 * the kubelet (systemd and cgroupfs drivers; containerd, cri-o, docker) and systemd write,
 * and on /proc/PID/cgroup as the kernel prints it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "model/jobattr.h"
#include "builders.h"

#define CTR  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID  "8f3c2a1b-4d5e-4f60-9a7b-1c2d3e4f5a6b"
#define UID_ "8f3c2a1b_4d5e_4f60_9a7b_1c2d3e4f5a6b"

static void test_slurm_v2(void **state)
{
	struct gctx_job_attr a;
	char buf[128];

	(void)state;
	assert_int_equal(
	    gctx_job_attr_parse("/system.slice/slurmstepd.scope/job_123/step_0/user/task_0", &a),
	    GCTX_JOB_SLURM);
	assert_string_equal(a.id, "123");
	assert_string_equal(a.step, "0");
	assert_string_equal(a.task, "0");
	gctx_job_attr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "slurm job 123 step 0 task 0");
	/* the batch script's step, and slurmstepd itself (no task) */
	gctx_job_attr_parse("/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0", &a);
	assert_string_equal(a.step, "batch");
	gctx_job_attr_parse("/system.slice/slurmstepd.scope/job_77/step_extern/slurm", &a);
	assert_int_equal(a.kind, GCTX_JOB_SLURM);
	assert_string_equal(a.step, "extern");
	assert_string_equal(a.task, "");
	/* --enable-multiple-slurmd: NODE_slurmstepd.scope */
	gctx_job_attr_parse("/system.slice/node7_slurmstepd.scope/job_9/step_3/user/task_12", &a);
	assert_string_equal(a.id, "9");
	assert_string_equal(a.task, "12");
	/* the job's own cgroup, before any step */
	gctx_job_attr_parse("/system.slice/slurmstepd.scope/job_5", &a);
	assert_int_equal(a.kind, GCTX_JOB_SLURM);
	assert_string_equal(a.step, "");
}

static void test_slurm_v1(void **state)
{
	struct gctx_job_attr a;

	(void)state;
	assert_int_equal(gctx_job_attr_parse("/slurm/uid_1000/job_4242/step_1/task_3", &a),
			 GCTX_JOB_SLURM);
	assert_string_equal(a.id, "4242");
	assert_string_equal(a.step, "1");
	assert_string_equal(a.task, "3");
	gctx_job_attr_parse("/slurm_node12/uid_0/job_8/step_batch", &a);
	assert_string_equal(a.id, "8");
	assert_string_equal(a.step, "batch");
	/* job_N outside any Slurm directory is somebody else's name */
	assert_int_equal(gctx_job_attr_parse("/user.slice/job_12/step_0", &a), GCTX_JOB_NONE);
	assert_int_equal(gctx_job_attr_parse("/slurm/uid_0/job_12x/step_0", &a), GCTX_JOB_NONE);
}

static void test_k8s_systemd_driver(void **state)
{
	struct gctx_job_attr a;
	char buf[160];

	(void)state;
	assert_int_equal(gctx_job_attr_parse("/kubepods.slice/kubepods-burstable.slice/"
					     "kubepods-burstable-pod" UID_ ".slice/"
					     "cri-containerd-" CTR ".scope",
					     &a),
			 GCTX_JOB_K8S);
	assert_string_equal(a.id, UID);
	assert_string_equal(a.container, CTR);
	assert_string_equal(a.runtime, "containerd");
	assert_string_equal(a.qos, "burstable");
	gctx_job_attr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "k8s pod " UID " container 0123456789ab (containerd)");

	/* guaranteed pods have no QoS slice; cri-o names its scopes crio- */
	gctx_job_attr_parse("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" CTR ".scope", &a);
	assert_int_equal(a.kind, GCTX_JOB_K8S);
	assert_string_equal(a.id, UID);
	assert_string_equal(a.runtime, "cri-o");
	assert_string_equal(a.qos, "guaranteed");
	gctx_job_attr_parse("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
			    ".slice/crio-conmon-" CTR ".scope",
			    &a);
	assert_string_equal(a.container, CTR);
	assert_string_equal(a.qos, "besteffort");
	/* the pod's slice itself (the pause process's parent): pod, no container */
	gctx_job_attr_parse(
	    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice", &a);
	assert_int_equal(a.kind, GCTX_JOB_K8S);
	assert_string_equal(a.container, "");
	/* kind: the kubelet inside a docker container */
	gctx_job_attr_parse("/system.slice/docker-" CTR
			    ".scope/kubelet.slice/kubelet-kubepods.slice/"
			    "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_
			    ".slice/cri-containerd-" CTR ".scope",
			    &a);
	assert_int_equal(a.kind, GCTX_JOB_K8S);
	assert_string_equal(a.id, UID);
}

static void test_k8s_cgroupfs_driver(void **state)
{
	struct gctx_job_attr a;

	(void)state;
	assert_int_equal(gctx_job_attr_parse("/kubepods/burstable/pod" UID "/" CTR, &a),
			 GCTX_JOB_K8S);
	assert_string_equal(a.id, UID);
	assert_string_equal(a.container, CTR);
	assert_string_equal(a.runtime, "");
	assert_string_equal(a.qos, "burstable");
	gctx_job_attr_parse("/kubepods/pod" UID "/" CTR, &a);
	assert_string_equal(a.qos, "guaranteed");
	assert_string_equal(a.container, CTR);
	/* kubepods with no pod below it: not a pod */
	assert_int_equal(gctx_job_attr_parse("/kubepods/burstable", &a), GCTX_JOB_NONE);
	assert_string_equal(a.qos, "");
}

static void test_systemd_and_none(void **state)
{
	struct gctx_job_attr a;
	char buf[128];

	(void)state;
	assert_int_equal(gctx_job_attr_parse("/system.slice/nginx.service", &a), GCTX_JOB_SYSTEMD);
	assert_string_equal(a.id, "nginx.service");
	gctx_job_attr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "systemd unit nginx.service");
	/* the innermost unit wins */
	gctx_job_attr_parse("/user.slice/user-1000.slice/user@1000.service/app.slice/"
			    "app-train-1234.scope",
			    &a);
	assert_string_equal(a.id, "app-train-1234.scope");
	gctx_job_attr_parse("/user.slice/user-1000.slice/session-3.scope", &a);
	assert_string_equal(a.id, "session-3.scope");
	/* a standalone docker container: its scope, with the container id */
	gctx_job_attr_parse("/system.slice/docker-" CTR ".scope", &a);
	assert_int_equal(a.kind, GCTX_JOB_SYSTEMD);
	assert_string_equal(a.container, CTR);
	assert_string_equal(a.runtime, "docker");
	/* a unit name with characters we would not print is not shown */
	assert_int_equal(gctx_job_attr_parse("/system.slice/a\033[2Jb.service", &a), GCTX_JOB_NONE);
	assert_int_equal(gctx_job_attr_parse("/", &a), GCTX_JOB_NONE);
	assert_int_equal(gctx_job_attr_parse("", &a), GCTX_JOB_NONE);
	assert_int_equal(gctx_job_attr_parse(NULL, &a), GCTX_JOB_NONE);
	assert_int_equal(gctx_job_attr_parse("/user.slice/user-1000.slice", &a), GCTX_JOB_NONE);
	gctx_job_attr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* Issue 43 item 9: a user's own cgroup tree (systemd delegates user@UID.service to them) may
 * hold any names; only where slurmd and the kubelet put jobs names a job. */
static void test_anchored_to_the_schedulers_place(void **state)
{
	static const char *const not_jobs[] = {
	    "/user.slice/user-1000.slice/user@1000.service/app.slice/slurm/job_4242/step_0",
	    "/user.slice/user-1000.slice/user@1000.service/slurm/uid_0/job_4242/step_0/task_0",
	    "/user.slice/user-1000.slice/user@1000.service/system.slice/slurmstepd.scope/"
	    "job_4242/step_0/user/task_0",
	    "/user.slice/user-1000.slice/user@1000.service/slurmstepd.scope/job_4242/step_0",
	    "/system.slice/other.service/slurmstepd.scope/job_4242/step_0",
	    "/system.slice/slurmstepd.scope/x/job_4242/step_0",
	    "/slurm/uid_0/x/job_4242/step_0",
	    "/user.slice/user-1000.slice/user@1000.service/kubepods/pod" UID "/" CTR,
	    "/user.slice/user-1000.slice/user@1000.service/kubepods.slice/kubepods-pod" UID_
	    ".slice/cri-containerd-" CTR ".scope",
	    "/kubepods/burstable/x/pod" UID "/" CTR,
	};
	struct gctx_job_attr a;

	(void)state;
	for (size_t i = 0; i < sizeof(not_jobs) / sizeof(not_jobs[0]); i++) {
		enum gctx_job_kind k = gctx_job_attr_parse(not_jobs[i], &a);

		if (k == GCTX_JOB_SLURM || k == GCTX_JOB_K8S)
			fail_msg("%s: attributed to %s job %s", not_jobs[i], gctx_job_kind_name(k),
				 a.id);
	}
	/* the user's unit is still what systemd says it is */
	gctx_job_attr_parse("/user.slice/user-1000.slice/user@1000.service/app.slice/slurm/"
			    "job_4242/step_0",
			    &a);
	assert_int_equal(a.kind, GCTX_JOB_SYSTEMD);
	assert_string_equal(a.id, "user@1000.service");
	/* gpuctx's own step cgroup (slurm_gpuctx_CLUSTER/job_N/step_M: no uid_N) and the
	 * kubelet under kind */
	assert_int_equal(gctx_job_attr_parse("/slurm_gpuctx_c1/job_9/step_batch", &a),
			 GCTX_JOB_SLURM);
	assert_string_equal(a.id, "9");
	assert_string_equal(a.step, "batch");
	assert_int_equal(gctx_job_attr_parse("/slurmstepd.scope/job_3/step_1/user/task_2", &a),
			 GCTX_JOB_SLURM);
	assert_string_equal(a.task, "2");
	assert_int_equal(gctx_job_attr_parse("/kubelet.slice/kubelet-kubepods.slice/"
					     "kubelet-kubepods-besteffort.slice/"
					     "kubelet-kubepods-besteffort-pod" UID_ ".slice",
					     &a),
			 GCTX_JOB_K8S);
	assert_string_equal(a.id, UID);
	assert_string_equal(a.qos, "besteffort");
}

static void test_proc_cgroup_pick(void **state)
{
	/* cgroup v2 only */
	static const char v2[] = "0::/system.slice/slurmstepd.scope/job_1/step_0/user/task_0\n";
	/* hybrid: v1 controllers hold Slurm's groups, the unified hierarchy does not */
	static const char v1[] = "12:memory:/slurm/uid_0/job_2/step_0/task_1\n"
				 "11:freezer:/slurm/uid_0/job_2/step_0\n"
				 "1:name=systemd:/system.slice/slurmd.service\n"
				 "0::/system.slice/slurmd.service\n";
	static const char none[] = "4:memory:/\n0::/\n";
	char path[256];
	struct gctx_job_attr a;

	(void)state;
	assert_int_equal(gctx_job_cgroup_pick(v2, strlen(v2), path, sizeof(path)),
			 strlen("/system.slice/slurmstepd.scope/job_1/step_0/user/task_0"));
	assert_string_equal(path, "/system.slice/slurmstepd.scope/job_1/step_0/user/task_0");
	gctx_job_cgroup_pick(v1, strlen(v1), path, sizeof(path));
	assert_string_equal(path, "/slurm/uid_0/job_2/step_0/task_1");
	gctx_job_attr_parse(path, &a);
	assert_string_equal(a.task, "1");
	/* nothing attributed: the v2 path still */
	gctx_job_cgroup_pick(none, strlen(none), path, sizeof(path));
	assert_string_equal(path, "/");
	/* garbage and a cut buffer: no crash, a bounded copy */
	assert_int_equal(gctx_job_cgroup_pick("no colons here", 14, path, sizeof(path)), 0);
	assert_int_equal(gctx_job_cgroup_pick(v2, strlen(v2), path, 8), 7);
	assert_string_equal(path, "/system");
}

static struct gctx_rec_cgroup cg_rec(__u32 pid, const char *path)
{
	struct gctx_rec_cgroup r = {.pid = pid};

	snprintf(r.path, sizeof(r.path), "%s", path);
	return r;
}

/* The model gives a process the cgroup of its record, and its children theirs from the fork:
 * slurmstepd's task moved into its task cgroup before exec is the job, its later children too,
 * while slurmstepd stays outside. */
static void test_model_inherits(void **state)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_ev_fork f1 = ev_fork(100, 200, 10, "slurmstepd", false);
	struct gctx_ev_exec x = ev_exec(200, 20, "python3", "/usr/bin/python3", "python3", 8);
	struct gctx_ev_fork f2 = ev_fork(200, 300, 30, "python3", false);
	struct gctx_rec_cgroup c1 =
	    cg_rec(100, "/system.slice/slurmstepd.scope/job_5/step_0/slurm");
	struct gctx_rec_cgroup c2 =
	    cg_rec(200, "/system.slice/slurmstepd.scope/job_5/step_0/user/task_1");
	struct gctx_rec_cgroup stray = cg_rec(999, "/kubepods/pod" UID "/" CTR);
	struct gctx_job_attr a;

	(void)state;
	assert_non_null(m);
	feed(m, GCTX_EV_FORK, &f1, sizeof(f1));
	feed(m, GCTX_REC_CGROUP, &c1, sizeof(c1));
	assert_string_equal(gctx_model__proc_by_pid(m, 200)->cgroup, ""); /* forked before */
	feed(m, GCTX_EV_EXEC, &x, sizeof(x));
	feed(m, GCTX_REC_CGROUP, &c2, sizeof(c2));
	feed(m, GCTX_REC_CGROUP, &stray, sizeof(stray)); /* a pid never seen: ignored */
	feed(m, GCTX_EV_FORK, &f2, sizeof(f2));
	gctx_job_attr_parse(gctx_model__proc_by_pid(m, 300)->cgroup, &a);
	assert_int_equal(a.kind, GCTX_JOB_SLURM);
	assert_string_equal(a.task, "1");
	gctx_job_attr_parse(gctx_model__proc_by_pid(m, 100)->cgroup, &a);
	assert_string_equal(a.step, "0");
	assert_string_equal(a.task, "");
	assert_null(gctx_model__proc_by_pid(m, 999));
	/* a short record is malformed, not read past its end */
	assert_int_equal(gctx_model__feed(m, GCTX_REC_CGROUP, &c2, 8), -EINVAL);
	gctx_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slurm_v2),
	    cmocka_unit_test(test_slurm_v1),
	    cmocka_unit_test(test_k8s_systemd_driver),
	    cmocka_unit_test(test_k8s_cgroupfs_driver),
	    cmocka_unit_test(test_systemd_and_none),
	    cmocka_unit_test(test_proc_cgroup_pick),
	    cmocka_unit_test(test_model_inherits),
	    cmocka_unit_test(test_anchored_to_the_schedulers_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
