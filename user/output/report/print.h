/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Live one-line printing of kernel records and findings (`gpuctx record` while tracing), and
 * the small string formatters the text report shares with it. Every formatter escapes bytes
 * outside printable ASCII as \xNN (and a backslash as \\), so a line is always one line, and
 * always NUL-terminates dst when dstlen > 0, cutting only between whole escapes.
 */
#ifndef __GPUCTX_PRINT_H
#define __GPUCTX_PRINT_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "gpuctx_events.h"
#include "lib/esc.h"
#include "model/model.h"

/* One line for one kernel record (types FORK..FD_KEPT); time is relative to start_mono_ns.
 * Unknown types and records shorter than their struct print nothing. */
void gctx_print_event(FILE *out, __u32 type, const void *data, __u32 len, __u64 start_mono_ns);
/* "   0.004000 FINDING error inherited-gpu-use pid 1240: <detail>" */
void gctx_print_finding(FILE *out, const struct gctx_finding *f, __u64 start_mono_ns);

/* "O_RDWR|O_CLOEXEC" (kernel open flag values; unknown bits as |0x...). */
void gctx_format_open_flags(char *dst, size_t dstlen, __u32 flags);
/* Seconds since start with 6 decimals: "1.234567" ("-0.000100" for ts before start). */
void gctx_format_reltime(char *dst, size_t dstlen, __u64 ts_ns, __u64 start_ns);
/* "SIGSEGV", or "signal 77" when the name is unknown. */
void gctx_format_signal(char *dst, size_t dstlen, int sig);
/* "EBADF", or "errno 999" when the name is unknown. */
void gctx_format_errno(char *dst, size_t dstlen, int err);

#endif /* __GPUCTX_PRINT_H */
