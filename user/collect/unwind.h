/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Native frames of a captured stack (struct gctx_ev_stack): DWARF unwinding of the copied
 * user stack with elfutils' libdw (the binaries' .eh_frame / .debug_frame), frame-pointer
 * addresses as the fallback, and symbols (ELF symbol tables, DWARF lines, separate debug info
 * by build-id). Module files are found through the process's mappings (struct gctx_maps).
 */
#ifndef __GPUCTX_UNWIND_H
#define __GPUCTX_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gpuctx_events.h"

struct gctx_map {
	__u64 start, end, pgoff;
	char perms[5];
	char path[256];
};

/* Executable file mappings of one process, as read from /proc/PID/maps. */
struct gctx_maps {
	__u32 pid;
	struct gctx_map *v;
	__u32 n, cap;
};

/* Read /proc/PID/maps (file-backed executable mappings only). 0 or -errno. */
int gctx_maps__read(struct gctx_maps *m, __u32 pid);
void gctx_maps__clear(struct gctx_maps *m);

/* Open the file behind a mapping (map_files while alive, else by path): a regular file
 * only, never blocking. fd or -1. */
int gctx_map_open(const struct gctx_maps *maps, const struct gctx_map *mp);
/* Load bias of the ELF file fd mapped at mp (0 for ET_EXEC). */
bool gctx_map_bias(int fd, const struct gctx_map *mp, __u64 *bias, bool *is_exec);

/* Unwind and symbolise: up to max frames into out, innermost first. Returns the number of
 * frames; *how says "dwarf", "frame pointers" or why none. */
int gctx_unwind(const struct gctx_ev_stack *s, size_t len, const struct gctx_maps *maps,
		struct gctx_rec_frame *out, int max, const char **how);

/* A return address to its module, function and offset (from the function, or from the
 * module when unnamed; file and line when DWARF has them). 0, or -ENOENT when no mapped file
 * holds it (out then has only kind and addr). */
int gctx_unwind_symbolise(const struct gctx_maps *maps, __u64 addr, struct gctx_rec_frame *out);

/* Drop the symbolisation sessions kept between stacks (end of recording). */
void gctx_unwind_cache_clear(void);

#endif /* __GPUCTX_UNWIND_H */
