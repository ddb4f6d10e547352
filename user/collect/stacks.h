/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Resolution of the kernel's raw stacks (GCTX_EV_STACK) into GCTX_REC_STACK records while
 * recording: native frames unwound and symbolised (unwind.c) through the process's mappings,
 * Python frames decoded and spliced in. A process that exited before its stack was resolved
 * is resolved through the mappings last read for it, or for the parent it was forked from
 * (same address space until exec).
 */
#ifndef __GPUCTX_STACKS_H
#define __GPUCTX_STACKS_H

#include <linux/types.h>
#include "gpuctx_events.h"

struct gctx_maps;

struct gctx_stacks;

struct gctx_stacks *gctx_stacks__new(void);
void gctx_stacks__free(struct gctx_stacks *st);
/* Every record, in order (fork and exec keep the mapping fallbacks right). */
void gctx_stacks__on_record(struct gctx_stacks *st, __u32 type, const void *data, __u32 len);
/* A process likely to have stacks (it runs Python): keep its mappings at each library load. */
void gctx_stacks__watch(struct gctx_stacks *st, __u32 pid);
/* Resolve one raw stack. Returns a record to free() with its length in *outlen, or NULL. */
struct gctx_rec_stack *gctx_stacks__resolve(struct gctx_stacks *st, const void *data, __u32 len,
					    __u32 *outlen);
/* The executable mappings of pid (struct gctx_maps, unwind.h): read now, or the last ones read
 * for it or for the process it was forked from. NULL if none. Valid until the next call. */
const struct gctx_maps *gctx_stacks__maps(struct gctx_stacks *st, __u32 pid);
/* Counts for the GCTX_REC_STACK_DROPS record (lost is the kernel's, left 0). */
void gctx_stacks__stats(const struct gctx_stacks *st, struct gctx_rec_stack_drops *out);

#endif /* __GPUCTX_STACKS_H */
