/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Job attribution: which batch job, pod or service a process belongs to, read from its cgroup
 * path alone (the path is what a traced process's job scheduler gave it; the process itself
 * cannot choose it without the scheduler's rights). Pure string work, no I/O.
 *
 * Shapes understood (docs/cluster.md has examples of each):
 *   Slurm, cgroup v2: /system.slice/slurmstepd.scope/job_123/step_0/user/task_0
 *   Slurm, cgroup v1: /slurm/uid_1000/job_123/step_0/task_0 (also slurm_NODE/)
 *   Kubernetes, systemd driver: /kubepods.slice/kubepods-burstable.slice/
 *       kubepods-burstable-pod<uid, '-' as '_'>.slice/cri-containerd-<id>.scope (crio-<id>,
 *       docker-<id>)
 *   Kubernetes, cgroupfs driver: /kubepods/burstable/pod<uid>/<id>
 *   systemd: the innermost .service or .scope (/system.slice/nginx.service)
 * Slurm's and the kubelet's shapes count only at the hierarchy's root, where only root makes
 * cgroups: below a user's delegated user@UID.service the same names are the user's own.
 */
#ifndef __GPUCTX_JOBATTR_H
#define __GPUCTX_JOBATTR_H

#include <stddef.h>

enum gctx_job_kind {
	GCTX_JOB_NONE = 0,
	GCTX_JOB_SLURM,	  /* id = job id, step = step id (0, batch, extern, interactive) */
	GCTX_JOB_K8S,	  /* id = pod uid (with dashes), container = container id */
	GCTX_JOB_SYSTEMD, /* id = unit name */
};

struct gctx_job_attr {
	enum gctx_job_kind kind;
	char id[128];
	char step[32];	    /* Slurm step */
	char task[16];	    /* Slurm task (cgroup v2 task_N, v1 task_N) */
	char container[72]; /* Kubernetes or standalone container id */
	char runtime[16];   /* "containerd", "cri-o", "docker", "" (cgroupfs: unknown) */
	char qos[16];	    /* Kubernetes QoS class: guaranteed, burstable, besteffort */
};

/* Attribute one cgroup path (v2, or one v1 hierarchy's). Always fills a (kind NONE when
 * nothing is recognised); returns a->kind. */
enum gctx_job_kind gctx_job_attr_parse(const char *path, struct gctx_job_attr *a);

/* The contents of /proc/PID/cgroup ("0::/path" for v2, "N:controllers:/path" lines for v1):
 * copies the path that names the job into path (the v2 one, else the first v1 line that is
 * attributed, else the v2 or first path) and returns its length; 0 when there is none. */
size_t gctx_job_cgroup_pick(const char *text, size_t len, char *path, size_t size);

/* One line for people: "slurm job 123 step 0 task 1", "k8s pod 8f3c... container 0123abcd"
 * (container ids cut to 12), "systemd unit nginx.service", "" for none. */
void gctx_job_attr_format(const struct gctx_job_attr *a, char *buf, size_t size);
const char *gctx_job_kind_name(enum gctx_job_kind k); /* "slurm", "k8s", "systemd", "none" */

#endif /* __GPUCTX_JOBATTR_H */
