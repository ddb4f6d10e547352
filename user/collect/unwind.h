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
#include "collect/modfiles.h"

/* Unwind and symbolise: up to max frames into out, innermost first. Returns the number of
 * frames; *how says "dwarf", "frame pointers" or why none. */
int gctx_unwind(const struct gctx_ev_stack *s, size_t len, const struct gctx_maps *maps,
		struct gctx_rec_frame *out, int max, const char **how);

/* A return address to its module, function and offset (from the function, or from the
 * module when unnamed; file and line when DWARF has them). 0, or -ENOENT when no mapped file
 * holds it (out then has only kind and addr). */
int gctx_unwind_symbolise(const struct gctx_maps *maps, __u64 addr, struct gctx_rec_frame *out);

/* Drop the symbolisation sessions and the kept module files (end of recording). */
void gctx_unwind_cache_clear(void);

/* What the last gctx_unwind() could not symbolise ("<module> changed since the process mapped
 * it: no symbols"), "" if nothing. */
const char *gctx_unwind_note(void);

/* The sessions and the note are shared state: whoever calls the functions above while
 * another thread may do so holds this lock around the calls (and the note's reading). */
void gctx_unwind_lock(void);
void gctx_unwind_unlock(void);

#endif /* __GPUCTX_UNWIND_H */
