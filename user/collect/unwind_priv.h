/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The libdw side of unwind.h (unwind.c), run only in the sandboxed symboliser process
 * (symsrv.c): libdw maps and parses the ELF and DWARF of files the traced user controls, and
 * a truncated file (SIGBUS), a crafted one (a crash, a loop) or a huge one must not take
 * gpuctx down. Function names come back as the files have them, demangled by the caller.
 */
#ifndef __GPUCTX_UNWIND_PRIV_H
#define __GPUCTX_UNWIND_PRIV_H

#include "collect/unwind.h"
#include "lib/demangle.h"

#define UW_NAME_MAX (GCTX_DEMANGLE_MAX_IN + 1) /* a raw (mangled) name, terminated */

/* The file of maps->v[idx], opened by gpuctx (gctx_map_open) and passed in: fd or -errno. */
typedef int (*uw_open_fn)(__u32 idx);

/* gctx_unwind() in the symboliser: names[i] gets frame i's raw function name ("" if none). */
int uw_unwind(const struct gctx_ev_stack *s, size_t len, const struct gctx_maps *maps,
	      uw_open_fn open, struct gctx_rec_frame *out, char (*names)[UW_NAME_MAX], int max,
	      const char **how);
/* gctx_unwind_symbolise() in the symboliser, the raw name in name. */
int uw_symbolise(const struct gctx_maps *maps, uw_open_fn open, __u64 addr,
		 struct gctx_rec_frame *out, char *name);
/* gctx_unwind_note() of the last uw_unwind(). */
const char *uw_note(void);
/* A frame in no module libdw has (its file changed, unreadable, or no symboliser): the
 * mapping's file and the offset in it. */
void uw_frame_from_maps(const struct gctx_maps *maps, struct gctx_rec_frame *f);

#endif /* __GPUCTX_UNWIND_PRIV_H */
