/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames captured by the kernel (struct gctx_py_frame) to file, function and line:
 * PEP 393 strings to UTF-8 and CPython line tables (3.10 byte pairs, 3.11+ location entries).
 * Pure C; every input byte is untrusted (it came from the traced process's memory).
 */
#ifndef __GPUCTX_PYSTACK_H
#define __GPUCTX_PYSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gpuctx_events.h"

/* Line of instruction index instr (code units) in a 3.10 co_linetable. -1 no line, -2 beyond
 * the bytes given. */
int gctx_py310_line(const __u8 *lt, size_t len, int firstlineno, int instr);
/* Same for a 3.11+ co_linetable (Objects/locations.md). */
int gctx_py311_line(const __u8 *lt, size_t len, int firstlineno, int instr);
/* PEP 393 data of kind 1, 2 or 4 bytes per character to UTF-8; control characters become
 * '?'. Returns the bytes written (out is always terminated). */
size_t gctx_py_str_utf8(const void *raw, size_t len, unsigned kind, char *out, size_t outlen);
/* One captured frame to a resolved frame (kind, function, file, line). */
void gctx_py_frame_resolve(const struct gctx_py_frame *f, struct gctx_rec_frame *out);

/*
 * The whole line table of a frame whose captured prefix ends before its instruction, read by
 * the collector from the process (collect/pymem.c). These check what was read: the process
 * may have changed or freed the code object since, or lie.
 */
#define GCTX_PY_BYTES_SIZE 16	 /* PyBytesObject ob_size (x86-64 default builds, 3.10-3.13) */
#define GCTX_PY_BYTES_DATA 32	 /* ob_sval */
#define GCTX_PY_LT_MAX	   65536 /* longest table read (stdlib's longest: 5.7 KB) */

/* Line of f's instruction in lt, f's line table or a longer one its prefix was cut from:
 * the results of gctx_py311_line. */
int gctx_py_frame_line(const struct gctx_py_frame *f, const __u8 *lt, size_t len);
/* True when f's line lies past the prefix of its line table the kernel captured. */
bool gctx_py_frame_line_cut(const struct gctx_py_frame *f);
/* Address of co_linetable from the first bytes of f's code object (len read from f->code),
 * 0 when they cannot be f's code object (co_firstlineno differs, implausible pointer). */
__u64 gctx_py_code_linetable(const struct gctx_py_layout *l, const struct gctx_py_frame *f,
			     const __u8 *code, size_t len);
/* Size of a line table from its PyBytesObject header (GCTX_PY_BYTES_DATA bytes), 0 when it is
 * not a bytes object longer than GCTX_PY_LT_LEN and at most GCTX_PY_LT_MAX bytes. */
size_t gctx_py_table_size(const __u8 *hdr, size_t len);
/* True when lt (len bytes) starts with the whole prefix the kernel captured for f and is
 * longer: the same table (its start is fixed when the code object is created). */
bool gctx_py_table_extends(const struct gctx_py_frame *f, const __u8 *lt, size_t len);
/* Splice Python frames into native ones, innermost first: each native eval-loop frame
 * (_PyEval_EvalFrameDefault) is replaced by the Python frames it ran, up to the next frame
 * marked GCTX_PYF_ENTRY (pyflags[i]); Python frames left over go after the native ones.
 * Returns the frames written to out (at most max). */
int gctx_py_splice(const struct gctx_rec_frame *native, int nn, const struct gctx_rec_frame *py,
		   const __u8 *pyflags, int np, struct gctx_rec_frame *out, int max);
/* Structure layout of CPython 3.minor (x86-64, default build; 3.10 to 3.13, measured in
 * shared/reference/stacks.md). False, with l->supported = 0, for any other version. */
bool gctx_py_layout_for(unsigned minor, struct gctx_py_layout *l);
/* "3.12" for a PY_VERSION_HEX. */
void gctx_py_version_str(__u32 hex, char *out, size_t len);

#endif /* __GPUCTX_PYSTACK_H */
