// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The (k1, k2) -> u32 hash map (interface in hmap.h). */
#include <errno.h>
#include <stdlib.h>

#include "lib/hmap.h"

static __u64 hmix(__u64 a, __u64 b)
{
	__u64 h = a * 0x9e3779b97f4a7c15ULL;

	h ^= b + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* The entry of (k1, k2), or the free slot where it goes; cap must not be 0. */
static struct gctx_hent *hmap_slot(const struct gctx_hmap *h, __u64 k1, __u64 k2)
{
	__u32 mask = h->cap - 1;
	__u32 i = (__u32)hmix(k1, k2) & mask;

	while (h->e[i].used && (h->e[i].k1 != k1 || h->e[i].k2 != k2))
		i = (i + 1) & mask;
	return &h->e[i];
}

/* The entry of (k1, k2), NULL when absent. */
static struct gctx_hent *hmap_find(const struct gctx_hmap *h, __u64 k1, __u64 k2)
{
	struct gctx_hent *e;

	if (!h->cap)
		return NULL;
	e = hmap_slot(h, k1, k2);
	return e->used ? e : NULL;
}

bool gctx_hmap__get(const struct gctx_hmap *h, __u64 k1, __u64 k2, __u32 *val)
{
	struct gctx_hent *e = hmap_find(h, k1, k2);

	if (!e)
		return false;
	*val = e->val;
	return true;
}

int gctx_hmap__put(struct gctx_hmap *h, __u64 k1, __u64 k2, __u32 val)
{
	struct gctx_hent *e;

	if ((h->n + 1) * 2 > h->cap) {
		struct gctx_hmap nh = {.cap = h->cap ? h->cap * 2 : 64};
		__u32 i;

		nh.e = calloc(nh.cap, sizeof(*nh.e));
		if (!nh.e)
			return -ENOMEM;
		for (i = 0; i < h->cap; i++) {
			if (!h->e[i].used)
				continue;
			*hmap_slot(&nh, h->e[i].k1, h->e[i].k2) = h->e[i];
		}
		nh.n = h->n;
		free(h->e);
		*h = nh;
	}
	e = hmap_slot(h, k1, k2);
	if (!e->used) {
		e->used = 1;
		e->k1 = k1;
		e->k2 = k2;
		h->n++;
	}
	e->val = val;
	return 0;
}

/* Linear probing without tombstones: the entries after the hole that probed past it move
 * back, so a long-running map (the agent's) does not fill with dead slots. */
bool gctx_hmap__del(struct gctx_hmap *h, __u64 k1, __u64 k2)
{
	struct gctx_hent *e = hmap_find(h, k1, k2);
	__u32 mask, i, j;

	if (!e)
		return false;
	mask = h->cap - 1;
	i = (__u32)(e - h->e);
	for (j = (i + 1) & mask; h->e[j].used; j = (j + 1) & mask) {
		__u32 home = (__u32)hmix(h->e[j].k1, h->e[j].k2) & mask;

		/* j's entry may fill the hole at i when its home is not in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			h->e[i] = h->e[j];
			i = j;
		}
	}
	h->e[i].used = 0;
	h->n--;
	return true;
}

void gctx_hmap__free(struct gctx_hmap *h)
{
	free(h->e);
	h->e = NULL;
	h->cap = 0;
	h->n = 0;
}
