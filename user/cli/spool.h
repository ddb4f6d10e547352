/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's spool directory: where dumps go, how they are named so that a person finds the
 * job (time, job, root command, incident kind), and the cap on their number and size. The
 * agent deletes only files named as its dumps, oldest first.
 */
#ifndef __GPUCTX_SPOOL_H
#define __GPUCTX_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define SPOOL_NAME_LEN 160
#define SPOOL_JOB_LEN 48

/* Create dir (0700) when missing and open it. It must be a directory of root's that nobody
 * else may write to (not a symlink). The fd, or -1 with a one-line reason in err. */
int spool_open(const char *dir, char *err, size_t errlen);

/* The job of a live process, short, for a file name: "slurm-42.0", "k8s-8f3c2a1b",
 * "nginx.service"; "" when none. */
void spool_job_of(__u32 pid, char *job, size_t len);
/* The same from a cgroup path (a process's in a trace): "slurm-42.0", "k8s-8f3c2a1b", a
 * systemd unit; "" for none. */
void spool_job_label(const char *cgroup, char *job, size_t len);

/* "20261128T101500Z-slurm-42.0-python3-1234-poison-fork.gctx" (UTC; job left out when ""). */
void spool_name(char *buf, size_t len, __u64 wall_ns, const char *job, const char *comm,
		__u32 pid, const char *kind);
/* A name spool_name makes. */
bool spool_is_dump(const char *name);

struct spool_usage {
	__u64 bytes;
	__u32 files;
};
void spool_usage(int dirfd, struct spool_usage *u);
/* Delete the oldest dumps until at most max_files remain and they take at most max_bytes;
 * keep (the dump just written) is never deleted. */
void spool_prune(int dirfd, __u64 max_bytes, __u32 max_files, const char *keep);

#endif /* __GPUCTX_SPOOL_H */
