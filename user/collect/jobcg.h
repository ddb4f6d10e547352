/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cgroup of a followed process, read from /proc/PID/cgroup for job attribution
 * (model/jobattr.h). Read when a process is found at attach and when one execs: a job
 * scheduler moves a task into its job's cgroup between fork and exec.
 */
#ifndef __GPUCTX_JOBCG_H
#define __GPUCTX_JOBCG_H

#include <stddef.h>
#include <linux/types.h>

/* The path of /proc/PID/cgroup that names a job (gctx_job_cgroup_pick) into path. 0, or
 * -errno (the process is gone, no /proc). Non-blocking: procfs only. */
int gctx_proc_cgroup(__u32 pid, char *path, size_t size);

/* A cgroup v2 directory (--cgroup DIR) as /proc/PID/cgroup names it: its path below the
 * cgroup2 mount it is in ("/slurm_gpuctx/job_1/step_0"). 0, or -ENOENT (not under a cgroup2
 * mount: path is then ""). */
int gctx_cgroup_rel(const char *dir, char *path, size_t size);

/* Cgroup v2 ids, as an exec record carries them (the kernel's view at exec: right for a
 * process that exited before its /proc was read), to their paths below the cgroup2 mount in the
 * form /proc/PID/cgroup's "0::" line gives ("/a/b", "/" for the root). The latest ids are kept:
 * a node's jobs are few, its execs many. */
struct gctx_cgpaths;

struct gctx_cgpaths *gctx_cgpaths__new(void); /* NULL without a cgroup2 mount or memory */
/* 0 with path filled; -ENOENT for id 0, a cgroup removed since, or no cgroup2 hierarchy; -errno
 * when the kernel does not give a cgroup by its id (no CAP_DAC_READ_SEARCH). c may be NULL. */
int gctx_cgpaths__path(struct gctx_cgpaths *c, __u64 id, char *path, size_t size);
void gctx_cgpaths__free(struct gctx_cgpaths *c);

#endif /* __GPUCTX_JOBCG_H */
