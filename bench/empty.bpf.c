// SPDX-License-Identifier: GPL-2.0
/*
 * Empty programs on the attach points gpuctx uses: what the kernel mechanism costs by itself,
 * the floor every gpuctx ratio is compared with. bench/empty_loader.c loads one group:
 *  - ioctl: syscalls:sys_enter_ioctl + sys_exit_ioctl (classic tracepoints, as gpuctx);
 *  - sched: tp_btf sched_process_fork/exec/exit (as gpuctx's lineage programs);
 *  - all: every tracepoint gpuctx attaches, and only those: sched, the ioctl entry and exit,
 *    the exits of open, openat, openat2 and mmap, the entry of close, and signal_generate and
 *    signal_deliver. The floor for process churn under gpuctx, since a starting process opens,
 *    maps and closes its libraries and every system call takes the slow path;
 *  - uprobe / uprobe-ret: an entry probe, or an entry + return probe, attached by the loader.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "../bpf/tpctx.bpf.h" /* the syscalls:* records as their format files lay them out */
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp/syscalls/sys_enter_ioctl")
int empty_ioctl_enter(struct gctx_tp_enter_ioctl *ctx)
{
	return 0;
}

SEC("tp/syscalls/sys_exit_ioctl")
int empty_ioctl_exit(struct gctx_tp_sys_exit *ctx)
{
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(empty_fork, struct task_struct *parent, struct task_struct *child)
{
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(empty_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(empty_exit, struct task_struct *p)
{
	return 0;
}

#define EMPTY_SYSCALL(name)                                                                        \
	SEC("tp/syscalls/sys_" #name)                                                              \
	int empty_##name(void *ctx)                                                                \
	{                                                                                          \
		return 0;                                                                          \
	}

EMPTY_SYSCALL(exit_openat)
EMPTY_SYSCALL(exit_open)
EMPTY_SYSCALL(exit_openat2)
EMPTY_SYSCALL(exit_mmap)
EMPTY_SYSCALL(enter_close)

SEC("tp/signal/signal_generate")
int empty_signal_generate(void *ctx)
{
	return 0;
}

SEC("tp/signal/signal_deliver")
int empty_signal_deliver(void *ctx)
{
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(empty_uprobe)
{
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(empty_uretprobe)
{
	return 0;
}
