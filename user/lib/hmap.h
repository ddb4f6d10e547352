/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small hash map: a key of two 64-bit words -> a u32 value. Open addressing with linear
 * probing, no deletion (callers overwrite a value instead). A zeroed struct gctx_hmap is an
 * empty map; callers embed it and release it with gctx_hmap__free().
 */
#ifndef __GPUCTX_HMAP_H
#define __GPUCTX_HMAP_H

#include <stdbool.h>
#include <linux/types.h>

struct gctx_hent {
	__u64 k1, k2;
	__u32 val;
	__u32 used;
};

struct gctx_hmap {
	struct gctx_hent *e;
	__u32 cap; /* power of two, or 0 */
	__u32 n;
};

/* The value of (k1, k2) in *val: true, or false when the key is absent. */
bool gctx_hmap__get(const struct gctx_hmap *h, __u64 k1, __u64 k2, __u32 *val);
/* Insert or overwrite (k1, k2) -> val. 0, or -ENOMEM (the map is unchanged). */
int gctx_hmap__put(struct gctx_hmap *h, __u64 k1, __u64 k2, __u32 val);
/* Release the entries; the map is empty again. */
/* Remove (k1, k2); false when it was not there. */
bool gctx_hmap__del(struct gctx_hmap *h, __u64 k1, __u64 k2);
void gctx_hmap__free(struct gctx_hmap *h);

#endif /* __GPUCTX_HMAP_H */
