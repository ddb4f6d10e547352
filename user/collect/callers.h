/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The call site of each API call: the kernel reads the return address of every probed call
 * (struct gctx_ev_api.caller); here each distinct address is symbolised once per address space
 * (a forked child shares its parent's until exec) into a GCTX_REC_CALLER record, written once
 * per process and address, before the first API record that names it; or, when the process
 * was gone before its mappings were read, after its exit record (the kernel sends its
 * mappings then: bpf/stack.bpf.h STK_MAPS_AT_EXIT), and readers attach it late. At most
 * GCTX_CALLER_MAX_SITES addresses are symbolised per address space; calls from the others are
 * counted (GCTX_REC_CALLER_DROPS).
 */
#ifndef __GPUCTX_CALLERS_H
#define __GPUCTX_CALLERS_H

#include <stdbool.h>
#include <linux/types.h>
#include "gpuctx_events.h"
#include "collect/collector.h"
#include "collect/stacks.h"

struct gctx_callers;

/* Mappings come from stacks (shared with the stack resolution), or from a private
 * gctx_stacks when it is NULL (--no-stacks). cb receives the GCTX_REC_CALLER records. */
struct gctx_callers *gctx_callers__new(struct gctx_stacks *stacks, gctx_record_fn cb, void *cb_ctx);
void gctx_callers__free(struct gctx_callers *c);
/* Every record, in order, before it is written: an API record may emit a caller record. */
void gctx_callers__on_record(struct gctx_callers *c, __u32 type, const void *data, __u32 len);
/* After the records of a poll: write the call sites held for their process's exit mappings
 * once it exited (all: every one, with what is known). */
void gctx_callers__tick(struct gctx_callers *c, bool all);
void gctx_callers__stats(const struct gctx_callers *c, struct gctx_rec_caller_drops *out);

#endif /* __GPUCTX_CALLERS_H */
