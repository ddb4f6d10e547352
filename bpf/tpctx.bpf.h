/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records of the syscalls:* tracepoints the programs read, as the kernel's format files
 * (/sys/kernel/tracing/events/syscalls/NAME/format) lay them out. vmlinux.h's
 * trace_event_raw_sys_enter/sys_exit are raw_syscalls' records (a long id at 8), not these (an
 * int __syscall_nr at 8, then padding whose content is not defined). Members carry the format's
 * field names: the collector compares every tracepoint program's context struct with the
 * format file before it attaches (user/collect/tpformat.c) and refuses a mismatch.
 */
#ifndef __GPUCTX_TPCTX_BPF_H
#define __GPUCTX_TPCTX_BPF_H

#define GCTX_TP_COMMON                                                                             \
	unsigned short common_type;                                                                \
	unsigned char common_flags;                                                                \
	unsigned char common_preempt_count;                                                        \
	int common_pid;                                                                            \
	int __syscall_nr;                                                                          \
	int __pad_nr

/* syscalls:sys_exit_* */
struct gctx_tp_sys_exit {
	GCTX_TP_COMMON;
	long ret;
};

/* syscalls:sys_enter_ioctl */
struct gctx_tp_enter_ioctl {
	GCTX_TP_COMMON;
	unsigned long fd; /* unsigned int in the format, 8 bytes wide */
	unsigned long cmd;
	unsigned long arg;
};

/* syscalls:sys_enter_close */
struct gctx_tp_enter_close {
	GCTX_TP_COMMON;
	unsigned long fd;
};

/* syscalls:sys_enter_wait4 */
struct gctx_tp_enter_wait4 {
	GCTX_TP_COMMON;
	unsigned long upid; /* pid_t in the format, 8 bytes wide */
	unsigned long stat_addr;
	unsigned long options; /* int in the format, 8 bytes wide */
	unsigned long ru;
};

/* syscalls:sys_enter_waitid */
struct gctx_tp_enter_waitid {
	GCTX_TP_COMMON;
	unsigned long which;
	unsigned long upid;
	unsigned long infop;
	unsigned long options;
	unsigned long ru;
};

/* syscalls:sys_enter_kill, sys_enter_tkill, sys_enter_rt_sigqueueinfo */
struct gctx_tp_enter_kill {
	GCTX_TP_COMMON;
	unsigned long pid; /* pid_t in the format, 8 bytes wide */
	unsigned long sig; /* int in the format, 8 bytes wide */
};

/* syscalls:sys_enter_tgkill, sys_enter_rt_tgsigqueueinfo */
struct gctx_tp_enter_tgkill {
	GCTX_TP_COMMON;
	unsigned long tgid;
	unsigned long pid;
	unsigned long sig;
};

/* syscalls:sys_enter_pidfd_send_signal */
struct gctx_tp_enter_pidfd_send_signal {
	GCTX_TP_COMMON;
	unsigned long pidfd;
	unsigned long sig;
};

#endif /* __GPUCTX_TPCTX_BPF_H */
