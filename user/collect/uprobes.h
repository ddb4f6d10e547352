/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * API probes: find the CUDA driver / HIP runtime libraries the followed processes use, attach
 * uprobes per library file (so every process mapping it is covered), and follow the addresses
 * cuGetProcAddress hands out.
 */
#ifndef __GPUCTX_UPROBES_H
#define __GPUCTX_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/types.h>
#include "collect/collector.h"

struct gctx_uprobes_opts {
	int events_fd;	       /* ring buffer shared with the kernel-side programs */
	int followed_fd;       /* followed-process map shared with them */
	int own_fd;	       /* gpuctx's own helper processes, never followed */
	int stk_state_fd;      /* stacks (bpf/stack.bpf.h): per-process state (-1: not shared) */
	int pyinfo_fd;	       /* the Python layouts, -1 = stacks off */
	__u32 task_fsbase_off; /* gctx_collector__task_fsbase_off(): the API object has no CO-RE */
	bool follow_all;
	__u32 self_tgid;
	bool launches; /* probe per-launch functions too */
	bool verbose;
	gctx_record_fn cb; /* receives GCTX_REC_PROBE records */
	void *cb_ctx;
	/* A library file looked at for the first time: ret is what add_lib returns (0 probed,
	 * -ENOENT not a CUDA/HIP library, other -errno). May be NULL. */
	void (*on_lib)(void *ctx, const char *path, dev_t dev, ino_t ino, int ret);
	void *on_lib_ctx;
};

struct gctx_uprobes;

struct gctx_uprobes *gctx_uprobes__new(const struct gctx_uprobes_opts *o, char *err, size_t errlen);
/* Probe a library file. 0 (also when already probed), or -errno; err says why. */
int gctx_uprobes__add_lib(struct gctx_uprobes *u, const char *path, char *err, size_t errlen);
/* Probe the library open at fd (a regular file, st its fstat; fd is the callee's from now on),
 * shown as shown. root ("/" or "/proc/PID/root") and inpath (absolute inside root) say where
 * it lives, for the trust check of pre-resolution (libfile.h). 0 or -errno as add_lib. */
int gctx_uprobes__add_lib_fd(struct gctx_uprobes *u, int fd, const struct stat *st,
			     const char *shown, const char *root, const char *inpath, char *err,
			     size_t errlen);
/* Probe the CUDA/HIP libraries installed in the usual places (ld.so search dirs). */
void gctx_uprobes__add_system_libs(struct gctx_uprobes *u);
/* Probe the CUDA/HIP libraries this process maps (through /proc/PID/root for containers). */
void gctx_uprobes__scan_pid(struct gctx_uprobes *u, __u32 pid);
/* React to a record from the ring buffer: library loads, execs, cuGetProcAddress results. */
void gctx_uprobes__on_record(struct gctx_uprobes *u, __u32 type, const void *data, __u32 len);
__u32 gctx_uprobes__nlibs(const struct gctx_uprobes *u);

/* For probes of one process alone (childprobe.h), from any thread. A probed library file, by
 * kernel dev_t and inode: the fd it was checked through, its size, the path handed to the
 * kernel. */
struct gctx_uprobes_lib {
	int fd; /* stays open as long as the probes (never closed before __free) */
	__u64 size;
	char at[32]; /* "/proc/self/fd/N" */
};
bool gctx_uprobes__lib(struct gctx_uprobes *u, __u32 kdev, __u64 ino, struct gctx_uprobes_lib *out);
/* Is the file offset (a probed address, past an endbr64) probed for every process already? */
bool gctx_uprobes__probed_at(struct gctx_uprobes *u, __u32 kdev, __u64 ino, __u64 off);
/* The uprobe_multi programs and the api_names map; -EOPNOTSUPP without uprobe_multi. */
struct gctx_uprobes_multi {
	int enter_fd, ret_fd; /* API entry and return */
	int names_fd;	      /* api_names */
};
int gctx_uprobes__multi_progs(const struct gctx_uprobes *u, struct gctx_uprobes_multi *out);
/* The uprobe_multi program of CPython's _PyErr_SetObject (bpf/pyraise.bpf.c), an object of its
 * own loaded the first time it is asked for (a few ms: the caller's held child waits). Its
 * fd, or -errno: no uprobe_multi, or the load failed (said once on stderr, never tried
 * again). From any thread. */
int gctx_uprobes__raise_prog(struct gctx_uprobes *u);
/* Load it now, on a thread of its own, so that a child held later does not wait for the
 * verifier (tens of ms on a busy machine): once a process has GPU state, the first child it
 * forks may need it. Once; no-op without uprobe_multi. */
void gctx_uprobes__raise_prepare(struct gctx_uprobes *u);
/* A uprobe_multi link (BPF_TRACE_UPROBE_MULTI, raw syscall: libbpf 1.1 has no wrapper) on cnt
 * offsets of path; ret: return probes; pid: that process's address space alone, 0 all. The
 * link fd, or -errno. */
int gctx_uprobe_multi_link(int prog_fd, const char *path, const __u64 *offs, const __u64 *cookies,
			   __u32 cnt, bool ret, __u32 pid);
void gctx_uprobes__drops(const struct gctx_uprobes *u, __u64 *drops, __u64 *missed);
/* At the end of a recording: say how many cuGetProcAddress addresses were refused. */
void gctx_uprobes__finish(struct gctx_uprobes *u);
void gctx_uprobes__free(struct gctx_uprobes *u);

#endif /* __GPUCTX_UPROBES_H */
