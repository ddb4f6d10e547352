/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Chunked storage: a growable table of fixed-size chunks, so an element never moves once added
 * and a pointer to it stays valid until the array is freed; O(1) index. A zeroed struct
 * gctx_chunks with elem set to the element size is an empty array; callers embed it and release
 * it with gctx_chunks__free().
 */
#ifndef __GPUCTX_CHUNKS_H
#define __GPUCTX_CHUNKS_H

#include <stddef.h>
#include <linux/types.h>

#define GCTX_CHUNK_SHIFT 8
#define GCTX_CHUNK_LEN	 (1u << GCTX_CHUNK_SHIFT)

struct gctx_chunks {
	char **chunk;
	__u32 nchunks;
	__u32 n;
	size_t elem;
};

/* Element i (< c->n). */
static inline void *gctx_chunks__at(const struct gctx_chunks *c, __u32 i)
{
	return c->chunk[i >> GCTX_CHUNK_SHIFT] + (size_t)(i & (GCTX_CHUNK_LEN - 1)) * c->elem;
}

/* A zeroed new element at index c->n - 1, or NULL. */
void *gctx_chunks__add(struct gctx_chunks *c);
/* Release the chunks (the elements' own allocations are the caller's). */
void gctx_chunks__free(struct gctx_chunks *c);

#endif /* __GPUCTX_CHUNKS_H */
