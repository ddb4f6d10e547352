/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's spool directory: where dumps go, how they are named so that a person finds the
 * job (time, job, root command, incident kind), and the cap on their number and size. The
 * agent deletes only files named as its dumps: over the cap, the oldest of the owner (a user,
 * a Slurm job, a pod, a unit) with the most, so that one owner's crashes never push another's
 * dumps out; and one owner's repeats of the same kind of failure are folded (spool_same).
 */
#ifndef __GPUCTX_SPOOL_H
#define __GPUCTX_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define SPOOL_NAME_LEN 160
#define SPOOL_JOB_LEN  48

/* Create dir (0700) when missing and open it. It must be a directory of root's that nobody
 * else may write to (not a symlink). The fd, or -1 with a one-line reason in err. */
int spool_open(const char *dir, char *err, size_t errlen);
/* The same for any of the agent's directories (what: "run directory", for the messages). */
int spool_root_dir(const char *dir, const char *what, char *err, size_t errlen);

/* The job of a live process, short, for a file name: "slurm-42.0", "k8s-8f3c2a1b",
 * "nginx.service", "uid1000" (anything under a user's user-1000.slice: their session, their
 * own units); "" when none. */
void spool_job_of(__u32 pid, char *job, size_t len);
/* The same from a cgroup path (a process's in a trace); "" for none. */
void spool_job_label(const char *cgroup, char *job, size_t len);
/* Whose a job's dumps are, for the shares: a Slurm job with all its steps ("slurm-42"), else
 * the job as it is ("" too: every dump without a job is one owner's). */
void spool_owner(const char *job, char *owner, size_t len);
/* The job a dump's name holds (spool_name; "" for none). false when it is not a dump's. */
bool spool_name_job(const char *name, char *job, size_t len);

/* "20261128T101500Z-slurm-42.0-python3-1234-poison-fork.gctx" (UTC; job left out when "";
 * a '-' of the command becomes '_', so that the job is read back from the name). */
void spool_name(char *buf, size_t len, __u64 wall_ns, const char *job, const char *comm, __u32 pid,
		const char *kind);
/* A name spool_name makes. */
bool spool_is_dump(const char *name);

/* One owner's dumps of one kind of failure: at most SPOOL_SAME_MAX new ones in
 * SPOOL_SAME_WINDOW_NS, the rest folded (not written, counted): a job crashing in a loop
 * leaves a few dumps, not a spool full of the same. */
#define SPOOL_SAME_MAX	     5
#define SPOOL_SAME_WINDOW_NS (600 * 1000000000ull)
#define SPOOL_SAME_SLOTS     256
struct spool_same {
	struct {
		char owner[48];
		char kind[32];
		__u64 since;
		__u32 n;
		bool told; /* its first fold was said */
	} v[SPOOL_SAME_SLOTS];
	__u64 folded;
};
/* Whether a new dump of owner's kind may be written now: 1, else 0 (folded, counted), or -1
 * for the first one folded in the window (to be said). */
int spool_same_allow(struct spool_same *s, const char *owner, const char *kind, __u64 now);

struct spool_usage {
	__u64 bytes;
	__u32 files;
};
void spool_usage(int dirfd, struct spool_usage *u);
/* Delete dumps until at most max_files remain and they take at most max_bytes: each time the
 * oldest of the owner with the largest share (of the files when there are too many, else of
 * the bytes); keep (the dump just written) is never deleted. */
void spool_prune(int dirfd, __u64 max_bytes, __u32 max_files, const char *keep);

/* ---- spool_sync.c: a dump's fsync, rename, log line and the cap, off the event loop ---- */
struct gctx_outfile;
struct spool_sync;
typedef void (*spool_sync_log_fn)(void *ctx, const char *line);

/* A thread (without one, each push is done at once). Lines are logged from that thread. */
struct spool_sync *spool_sync__new(__u64 max_bytes, __u32 max_files, spool_sync_log_fn log,
				   void *ctx);
/* Takes out (written, not committed): commits it into spool_fd as name, logs line, prunes
 * the spool keeping it. first: a new dump (counted), not a rewrite. Waits when the queue is
 * full. 0, or -ENOMEM (out freed, its temporary file removed). */
int spool_sync__push(struct spool_sync *s, struct gctx_outfile *out, int spool_fd, const char *name,
		     const char *line, bool first);
/* Wait until everything pushed is done. */
void spool_sync__drain(struct spool_sync *s);
/* Dumps now in place, and commits that failed. */
void spool_sync__counts(struct spool_sync *s, __u64 *dumps, __u64 *errors);
/* Pushes done so far (landed or failed): cheap, for the loop to see that something changed. */
__u64 spool_sync__finished(struct spool_sync *s);
/* Finish what is queued, then stop the thread. */
void spool_sync__free(struct spool_sync *s);

#endif /* __GPUCTX_SPOOL_H */
