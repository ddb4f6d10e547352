/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Releasing the BPF programs off the exit path. Closing a BPF link waits for an RCU grace
 * period (tens of ms each here, one per link, serialised by the kernel for perf-event
 * tracepoints), so tearing a dozen links down used to cost more than the traced command.
 */
#ifndef __GPUCTX_DETACH_H
#define __GPUCTX_DETACH_H

/* Call once the trace is complete. Forks a child that inherits every open fd (the BPF links,
 * programs, maps), waits for the caller to exit, then closes them all concurrently in the
 * background. It is detached from the terminal and from stdin/stdout/stderr (a pipe reader
 * sees EOF when gpuctx exits). The caller then frees as usual: its closes only drop
 * references, and it returns at once. Nothing is recorded any more: programs not yet disabled
 * run until the child has closed them, with no reader. If fork fails, nothing happens and the
 * caller's frees wait as before. */
void gctx_detach_after_exit(void);

#endif /* __GPUCTX_DETACH_H */
