// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Chunked storage: stable addresses, O(1) index (interface in chunks.h). */
#include <stdlib.h>

#include "lib/chunks.h"

void *gctx_chunks__add(struct gctx_chunks *c)
{
	if (c->n == c->nchunks * GCTX_CHUNK_LEN) {
		char **nc = realloc(c->chunk, (c->nchunks + 1) * sizeof(*nc));

		if (!nc)
			return NULL;
		c->chunk = nc;
		nc[c->nchunks] = calloc(GCTX_CHUNK_LEN, c->elem);
		if (!nc[c->nchunks])
			return NULL;
		c->nchunks++;
	}
	return gctx_chunks__at(c, c->n++);
}

void gctx_chunks__free(struct gctx_chunks *c)
{
	__u32 i;

	for (i = 0; i < c->nchunks; i++)
		free(c->chunk[i]);
	free(c->chunk);
}
