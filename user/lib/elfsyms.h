/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Exported functions of a library file (.dynsym), read from a file a traced process may have
 * crafted: every header field is checked against the file before it is used (sizes, entry
 * sizes, offsets, string indices), reads are bounded, and nothing is mapped (a file truncated
 * under us cannot fault). No BPF: fuzzed and unit tested on memory buffers.
 */
#ifndef __GPUCTX_ELFSYMS_H
#define __GPUCTX_ELFSYMS_H

#include <stddef.h>
#include <linux/types.h>

/* Where the bytes come from: read len bytes at off into dst; 0 or -errno (short: -EIO). */
struct gctx_elf_src {
	int (*read)(void *ctx, void *dst, size_t len, __u64 off);
	void *ctx;
	__u64 size; /* file size */
};

/* Called for each defined function symbol with a nonzero address: its name and the file
 * offset of its first byte (through the PT_LOAD headers). */
typedef void (*gctx_elf_sym_fn)(void *ctx, const char *name, __u64 file_off);

/* Walk .dynsym (x86-64 ELF64 little-endian only). Returns the number of function symbols
 * reported, or -1 with a one-line reason in err. */
int gctx_elf_dynsyms(const struct gctx_elf_src *src, gctx_elf_sym_fn fn, void *ctx, char *err,
		     size_t errlen);
/* Every function entry a library's own tables name: .dynsym, .symtab when present, and the
 * function starts of .eh_frame_hdr (which a stripped library keeps: its unwinder needs them;
 * those come with an empty name). Same validation; returns the count or -1. */
int gctx_elf_funcs(const struct gctx_elf_src *src, gctx_elf_sym_fn fn, void *ctx, char *err,
		   size_t errlen);
int gctx_elf_funcs_fd(int fd, __u64 size, gctx_elf_sym_fn fn, void *ctx, char *err, size_t errlen);
int gctx_elf_funcs_mem(const void *buf, size_t len, gctx_elf_sym_fn fn, void *ctx, char *err,
		       size_t errlen);
/* The same over a file descriptor (pread) or a memory buffer. */
int gctx_elf_dynsyms_fd(int fd, __u64 size, gctx_elf_sym_fn fn, void *ctx, char *err,
			size_t errlen);
int gctx_elf_dynsyms_mem(const void *buf, size_t len, gctx_elf_sym_fn fn, void *ctx, char *err,
			 size_t errlen);

#endif /* __GPUCTX_ELFSYMS_H */
