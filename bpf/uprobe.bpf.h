/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the uprobe objects (api.bpf.c, and pyraise.bpf.c, loaded at the first Python child that
 * needs it) share: the context read without CO-RE, the includes in the order that needs, and
 * the submit with the collector's wakeup decision. Include right after vmlinux.h.
 */
#ifndef __GPUCTX_UPROBE_BPF_H
#define __GPUCTX_UPROBE_BPF_H

/* A uprobe's context is the user register frame, laid out as the x86-64 ptrace ABI fixes it
 * (struct user_regs_struct): reading it needs no CO-RE, so loading these objects needs no
 * second parse of the kernel's BTF (tens of ms of every start). Declared after vmlinux.h, so
 * without its preserve_access_index. */
struct gctx_uregs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};
#define __PT_REGS_CAST(x) ((const struct gctx_uregs *)(x))

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gpuctx_events.h"
#define GCTX_NO_CORE /* no kernel BTF needed to load these objects */
#include "common.bpf.h"
#define GCTX_STACK_NO_SIGNAL /* gpuctx.bpf.c has it */
#include "stack.bpf.h"

/* libbpf 1.1 has no sixth-argument accessor; x86-64 passes it in r9. */
#ifndef PT_REGS_PARM6
#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->r9)
#endif

static __always_inline void submit(void *e, bool urgent)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (urgent || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

#endif /* __GPUCTX_UPROBE_BPF_H */
