/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A tracepoint program's context struct against the kernel's format file of its tracepoint. */
#ifndef __GPUCTX_TPFORMAT_H
#define __GPUCTX_TPFORMAT_H

#include <stddef.h>

/* One member of a context struct, as its BTF says: name, byte offset, size. */
struct gctx_tp_member {
	const char *name;
	unsigned int off, size;
};

/* Does every named member read a field of that name, offset and size in the format text
 * (/sys/kernel/tracing/events/CAT/NAME/format)? Padding (names starting "__pad") and
 * zero-sized members are skipped; "ent" (vmlinux.h's struct trace_entry) must span exactly
 * the common_* fields. 0, or -1 with the first difference in err. */
int gctx_tpformat__match(const char *format, const struct gctx_tp_member *m, size_t n, char *err,
			 size_t errlen);

/* Read the format file of CAT/NAME from tracefs into buf (NUL-terminated). 0 or -errno. */
int gctx_tpformat__read(const char *cat, const char *name, char *buf, size_t len);

#endif /* __GPUCTX_TPFORMAT_H */
