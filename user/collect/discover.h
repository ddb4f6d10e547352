/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What exists on the machine at start: device majors, processes, registered devices. */
#ifndef __GPUCTX_DISCOVER_H
#define __GPUCTX_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gpuctx_events.h"

struct gctx_pidset {
	__u32 *pids;
	__u32 n, cap;
};

int gctx_pidset__add(struct gctx_pidset *s, __u32 pid);
bool gctx_pidset__has(const struct gctx_pidset *s, __u32 pid);
void gctx_pidset__clear(struct gctx_pidset *s);

/* Dynamic char majors of nvidia-uvm and kfd from /proc/devices (0 when absent). */
void gctx_read_majors(__u32 *uvm_major, __u32 *kfd_major);
/* Parse "PATH:KIND" and stat PATH. 0, or -1 with a one-line reason in err. */
int gctx_parse_device(const char *arg, struct gctx_rec_device *out, char *err, size_t errlen);
/* Add every descendant of the processes in s (walks /proc once; parents before children). */
int gctx_add_descendants(struct gctx_pidset *s);
/* Walk bounds: sub-cgroups read at most, and heap for the paths waiting to be read (each
 * at most PATH_MAX long). */
#define GCTX_CGROUP_WALK_MAX   65536
#define GCTX_CGROUP_WALK_BYTES (16u << 20)
/* Add every process in the cgroup v2 directory dir and its sub-cgroups, walked without
 * recursion. 0, or -errno when dir's cgroup.procs cannot be read; *skipped counts the
 * sub-cgroups beyond the bounds (not read). */
int gctx_add_cgroup_procs(struct gctx_pidset *s, const char *dir, __u32 *skipped);
/* Add every process on the system. */
int gctx_add_all_procs(struct gctx_pidset *s);
/* Fill a present-at-attach record from /proc/PID. -errno when the process vanished. */
int gctx_proc_info(__u32 pid, struct gctx_rec_proc *out);
/* Call fn for every thread of pid other than the leader (/proc/PID/task). */
void gctx_proc_threads(__u32 pid, void (*fn)(void *ctx, __u32 pid, __u32 tid, const char *comm),
		       void *ctx);
/* The process exists and has not exited (a zombie has). */
bool gctx_proc_alive(__u32 pid);
/* Sort pids so that every parent comes before its children (by /proc ppid). */
void gctx_sort_parents_first(struct gctx_rec_proc *procs, __u32 n);
/* Path of /proc/PID/fd/FD into buf, "" on failure; *cloexec from fdinfo. */
void gctx_fd_info(__u32 pid, int fd, char *buf, size_t len, __u32 *cloexec);
/* The CUDA/HIP libraries pid has mapped, from /proc/PID/maps: 1 << GCTX_VENDOR_CUDA for a
 * libcuda.so*, 1 << GCTX_VENDOR_HIP for a libamdhip64.so*; 0 when none or unreadable. */
__u32 gctx_proc_api_libs(__u32 pid);
/* The GPU device nodes devdir holds (nvidiactl, kfd), one phrase each, into buf: "working"
 * when the node opens, "dead (REASON)" when it is a node with no driver behind it (ENXIO,
 * ENODEV, or EPERM/EACCES from a device cgroup), "absent". Opened and closed at once: a
 * working node is not used. */
void gctx_gpu_nodes_describe(const char *devdir, char *buf, size_t len);
/* CLOCK_MONOTONIC now, in ns. */
__u64 gctx_now_mono(void);

#endif /* __GPUCTX_DISCOVER_H */
