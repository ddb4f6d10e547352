// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/maps text a traced process shapes (its paths), fed to the whole-line reader in
 * pieces of varying size, as read() may return it. Every mapping reported must be one whole
 * line of the input: its path ends where that line ends. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/procmaps.h"

static int on_map(void *ctx, const struct gctx_procmap *m)
{
	size_t *n = ctx;

	if (strlen(m->path) != m->path_len || m->end < m->start)
		abort();
	*n += m->path_len + (m->ino & 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gctx_procmaps_rd r;
	size_t n = 0, piece;

	if (!size)
		return 0;
	piece = 1 + data[0] % 64; /* the first byte sets how the rest is cut */
	data++;
	size--;
	gctx_procmaps_rd__init(&r);
	while (size) {
		size_t k = size < piece ? size : piece;

		gctx_procmaps_rd__feed(&r, (const char *)data, k, on_map, &n);
		data += k;
		size -= k;
	}
	gctx_procmaps_rd__end(&r);
	return 0;
}
