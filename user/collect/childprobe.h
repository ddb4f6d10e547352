/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probes for one process alone: a child forked without exec from a process holding GPU state
 * (bpf/hold.bpf.h holds it on its way back from fork). The real libcuda refuses every call in
 * such a child in user space, before any ioctl, and the HIP runtime answers it from the
 * parent's state: only its calls show that it used what it inherited. Every exported CUDA
 * driver (cu*) and HIP runtime (hip*) function of the API libraries it maps gets an entry and
 * a return probe, as two uprobe_multi links per library filtered to the child's address
 * space: a healthy process's calls never hit them. Its links are closed at its exec or exit
 * (or, should that record be lost, when it is found gone). Thread-safe: attach runs on the
 * ring's look ahead thread too.
 */
#ifndef __GPUCTX_CHILDPROBE_H
#define __GPUCTX_CHILDPROBE_H

#include <linux/types.h>
#include "collect/uprobes.h"

#define GCTX_CHILDPROBE_MAX_LIVE 64   /* children with probes at once; more are counted */
#define GCTX_CHILDPROBE_MAX_FNS	 2048 /* functions probed per library; more are counted */

struct gctx_childprobe;

struct gctx_childprobe_stats {
	__u64 children;	    /* children given their probes */
	__u64 not_probed;   /* children not given them: over GCTX_CHILDPROBE_MAX_LIVE, or failed */
	__u64 fns_over_cap; /* exported functions left out: over GCTX_CHILDPROBE_MAX_FNS */
	__u64 attach_ns;    /* time spent attaching, all children */
	__u64 reaped;	    /* children found gone whose exit was not seen: links closed then */
};

/* NULL when there is no uprobe_multi here (kernel before 6.6): children get no probes. */
struct gctx_childprobe *gctx_childprobe__new(struct gctx_uprobes *u, bool verbose);
/* Attach pid's probes on the API libraries it maps. The number of functions probed (0: it
 * maps none that gpuctx probes), or -errno. */
int gctx_childprobe__attach(struct gctx_childprobe *c, __u32 pid);
/* pid exec'd or exited: its probes go. */
void gctx_childprobe__forget(struct gctx_childprobe *c, __u32 pid);
void gctx_childprobe__stats(struct gctx_childprobe *c, struct gctx_childprobe_stats *s);
void gctx_childprobe__free(struct gctx_childprobe *c);

#endif /* __GPUCTX_CHILDPROBE_H */
