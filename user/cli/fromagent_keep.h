/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What of the agent's node-wide records a job's trace (record --from-agent) may carry. The
 * agent sends every library it probed and every device it knows, on behalf of every user of
 * the node; the job's user gets the trace. Kept: the libraries the job's processes mapped and
 * the devices they opened, and those root owns (system software, the node's devices). Left
 * out: another user's library path (/home/alice/venv/.../libcuda.so), counted.
 */
#ifndef __GPUCTX_FROMAGENT_KEEP_H
#define __GPUCTX_FROMAGENT_KEEP_H

#include <stdbool.h>
#include <linux/types.h>

struct fa_keep;

struct fa_keep *fa_keep__new(void);
void fa_keep__free(struct fa_keep *k);
/* Take one record of the stream: a node-wide one (probe, device) is held and true returned
 * (the caller writes nothing now); what the job's processes mapped and opened is noted. -1
 * out of memory. */
int fa_keep__take(struct fa_keep *k, __u32 type, const void *data, __u32 len);
/* The held records the job may see, in their order, to cb; returns how many were left out. */
__u32 fa_keep__flush(struct fa_keep *k,
		     void (*cb)(void *ctx, __u32 type, const void *data, __u32 len), void *ctx);

#endif /* __GPUCTX_FROMAGENT_KEEP_H */
