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

#include <stdbool.h>
#include <linux/types.h>
#include "gpuctx_events.h"

struct gctx_maps;

struct gctx_stacks;

struct gctx_stacks *gctx_stacks__new(void);
void gctx_stacks__free(struct gctx_stacks *st);
/* Every record, in order (fork and exec keep the mapping fallbacks right). */
void gctx_stacks__on_record(struct gctx_stacks *st, __u32 type, const void *data, __u32 len);
/* A process likely to have stacks (it runs Python): keep its mappings as it loads libraries. */
void gctx_stacks__watch(struct gctx_stacks *st, __u32 pid);
/*
 * Resolution in two steps, so that a slow unwinding (libdw's first look at an address space
 * takes from 0.1 s to seconds) neither stalls the ring buffer nor makes later stacks miss
 * their processes: accept() does at once what needs the process alive (Python frames, the
 * lines read from its memory, its mappings) and queues the stack for a thread that unwinds
 * and symbolises; next() returns a resolved record (free() it; length in *outlen) or NULL
 * when none is ready yet; flush() waits until every accepted stack is resolved (then next()
 * returns the rest). Stacks come back in the order accepted. A stack of a process that was
 * gone before its mappings were read is held (with those accepted after it) until its exit
 * record, right before which the kernel sends the mappings it had (tick() lets it go).
 */
/* Now and then (each poll, after the records read): let held stacks go, and read again the
 * mappings of the processes that loaded libraries. */
void gctx_stacks__tick(struct gctx_stacks *st);
int gctx_stacks__accept(struct gctx_stacks *st, const void *data, __u32 len);
struct gctx_rec_stack *gctx_stacks__next(struct gctx_stacks *st, __u32 *outlen);
void gctx_stacks__flush(struct gctx_stacks *st);
/* The executable mappings of pid (struct gctx_maps, unwind.h): read now (*fresh, when not
 * NULL), or the last ones known for it or for the process it was forked from. NULL if none.
 * Valid until the next call. */
const struct gctx_maps *gctx_stacks__maps(struct gctx_stacks *st, __u32 pid, bool *fresh);
/* pid's exit record came (after the mappings the kernel sends at exit when asked), or it is
 * not known here. */
bool gctx_stacks__gone(struct gctx_stacks *st, __u32 pid);
/* Raw stacks accepted so far, and of those how many are done: returned by next() or given
 * up. A stack accepted before a moment is in the records once done reaches accepted as it
 * was then (they are done in the order accepted). */
struct gctx_stack_progress {
	__u64 accepted, done;
};
void gctx_stacks__progress(struct gctx_stacks *st, struct gctx_stack_progress *out);
/* Counts for the GCTX_REC_STACK_DROPS record (lost is the kernel's, left 0). */
void gctx_stacks__stats(const struct gctx_stacks *st, struct gctx_rec_stack_drops *out);

#endif /* __GPUCTX_STACKS_H */
