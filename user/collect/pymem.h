/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python lines past the captured prefix of a line table: the kernel copies the first
 * GCTX_PY_LT_LEN bytes of each frame's co_linetable; when the frame's instruction lies
 * further, the collector reads the whole table from the process's memory (process_vm_readv
 * of resident pages only, in a reader thread with a deadline: never blocking on the
 * process) while the stack is resolved, usually milliseconds after it was taken. What is read is
 * trusted only when it starts with the captured prefix. Tables read are kept per (pid, code
 * object).
 */
#ifndef __GPUCTX_PYMEM_H
#define __GPUCTX_PYMEM_H

#include <linux/types.h>
#include "gpuctx_events.h"

struct gctx_pymem;

struct gctx_pymem *gctx_pymem__new(void);
void gctx_pymem__free(struct gctx_pymem *m);
/* Fill in out[i].line for the np Python frames of s (resolved into out by
 * gctx_py_frame_resolve) whose line lies past their table's prefix, reading the table from
 * pids[0] (s's process) or, when that fails, from pids[1..npids): the processes it was
 * forked from, whose memory it shared. Returns how many of those lines stay unknown. */
int gctx_pymem__fill_lines(struct gctx_pymem *m, const struct gctx_ev_stack *s, int np,
			   const __u32 *pids, int npids, struct gctx_rec_frame *out);

#endif /* __GPUCTX_PYMEM_H */
