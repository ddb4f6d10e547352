/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The few facts gpuctx itself reads from a traced process's ELF files (its own process, not
 * the sandboxed symboliser): the GNU build-id, the load bias of a mapping, a section's
 * address. Read with bounded preads through struct gctx_elf_src (elfsyms.h), never mapped: a
 * file the user truncates under us gives a short read, never a SIGBUS. x86-64 ELF64
 * little-endian only; anything else, or any field out of the file, is "not found".
 */
#ifndef __GPUCTX_ELFPEEK_H
#define __GPUCTX_ELFPEEK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "lib/elfsyms.h"

/* The GNU build-id note (from the PT_NOTE segments), up to max bytes: its length, 0 if none
 * (or longer than max). */
int gctx_elfpeek_build_id(const struct gctx_elf_src *src, __u8 *out, size_t max);
/* Load bias of the file mapped at start from file offset pgoff: start minus the vaddr that
 * offset holds (0 for ET_EXEC, *is_exec set). False when no PT_LOAD holds pgoff. */
bool gctx_elfpeek_bias(const struct gctx_elf_src *src, __u64 pgoff, __u64 start, __u64 *bias,
		       bool *is_exec);
/* The lowest p_vaddr of an executable PT_LOAD: what the kernel adds the load bias to for a
 * process's start_code (/proc/PID/stat field 26). False if none. */
bool gctx_elfpeek_text_vaddr(const struct gctx_elf_src *src, __u64 *vaddr);
/* The section called name (its sh_addr, sh_offset, sh_size, sh_type). False if none. */
bool gctx_elfpeek_section(const struct gctx_elf_src *src, const char *name, __u64 *addr, __u64 *off,
			  __u64 *size, __u32 *type);
/* A source reading fd with pread (size from fstat), for the functions above. False if fd is
 * not a regular file. */
bool gctx_elfpeek_fd_src(int fd, struct gctx_elf_src *src);

#endif /* __GPUCTX_ELFPEEK_H */
