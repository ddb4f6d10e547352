/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A pool of interned strings with stable addresses: an equal string added again returns the
 * first copy. The model keeps every exec's filename and argv here rather than inline in
 * fixed-size arrays: a storm of processes running the same command stores it once.
 * Unlike strtab.h (bounded, ids, an arena that moves as it grows, for the exporter), the pool
 * has no bound and its copies never move: the model holds pointers into it. A model that runs
 * for weeks (the agent's) bounds it by building a new pool with the strings it still uses
 * (model/compact.c) and freeing the old one.
 */
#ifndef __GPUCTX_STRPOOL_H
#define __GPUCTX_STRPOOL_H

#include <stddef.h>
#include <linux/types.h>

struct gctx_strpool;

/* NULL when out of memory. */
struct gctx_strpool *gctx_strpool__new(void);
void gctx_strpool__free(struct gctx_strpool *sp);
/*
 * The pool's copy of the n bytes at s (which may hold NULs), followed by a NUL; valid until
 * the pool is freed. NULL when out of memory.
 */
const char *gctx_strpool__add(struct gctx_strpool *sp, const char *s, size_t n);
/* The pool's copy of the n bytes at s, NULL when it has none (never allocates). */
const char *gctx_strpool__get(const struct gctx_strpool *sp, const char *s, size_t n);
/* Distinct strings held, and the bytes the pool has allocated for them and its index. */
__u32 gctx_strpool__count(const struct gctx_strpool *sp);
size_t gctx_strpool__bytes(const struct gctx_strpool *sp);

#endif /* __GPUCTX_STRPOOL_H */
