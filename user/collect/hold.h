/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Holds: a followed process that maps a CUDA/HIP library not probed yet is stopped by the BPF
 * program (bpf/hold.bpf.h) until the collector has probed the library. This object owns the
 * releaser, a process of its own that resumes every hold past its timeout, and every hold
 * at all once the collector is gone, even after a SIGKILL: no traced process is left stopped.
 */
#ifndef __GPUCTX_HOLD_COLLECT_H
#define __GPUCTX_HOLD_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct gctx_hold;

/* The releaser's name (comm and command line): nothing a kill aimed at gpuctx matches. */
#define GCTX_RELEASER_NAME "gctx-resume"

/* Is a hold made at since_ns (CLOCK_MONOTONIC, as the BPF program stamps it) past limit_ns at
 * now_ns? One made after now_ns was read is not: the difference is negative, not huge. */
static inline bool gctx_hold_expired(__u64 now_ns, __u64 since_ns, __u64 limit_ns)
{
	return (__s64)(now_ns - since_ns) >= (__s64)limit_ns;
}

/* Start the releaser over the holds and hold_ctl maps, then arm holding. NULL + err on
 * failure (holding then stays disarmed: mappings are reported, nobody is stopped). */
struct gctx_hold *gctx_hold__new(int holds_fd, int ctl_fd, __u32 timeout_ms, char *err,
				 size_t errlen);
/* Tell the BPF side which executable is gpuctx's: its own children are never held. */
int gctx_hold__set_self(int ctl_fd);
/* The library that held tgid since since_ns is probed: resume it. 1 resumed here, 0 it was
 * no longer held (the timeout resumed it first), else 1 + GCTX_HOLD_RESUMED_* (it was resumed
 * before: by a SIGCONT from elsewhere, for its waiting parent, or when gpuctx was signalled),
 * -errno. */
int gctx_hold__release(struct gctx_hold *h, __u32 tgid, __u64 since_ns);
/* Why holds are not guarded in the kernel (bpf/guard.bpf.c did not load), or NULL. */
const char *gctx_hold__unguarded(const struct gctx_hold *h);
/* The signal sent to gpuctx or its releaser that ended every hold and disarmed holding, or 0. */
int gctx_hold__tripped(const struct gctx_hold *h);
/* Call after the BPF programs are detached: disarm, resume whatever is left, stop the
 * releaser. NULL is fine. */
void gctx_hold__free(struct gctx_hold *h);

#endif /* __GPUCTX_HOLD_COLLECT_H */
