// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Interned strings with stable addresses (interface in strpool.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/crc32.h"
#include "lib/strpool.h"

#define BLOCK_SIZE (64 * 1024) /* strings are carved from blocks of this size */

struct block {
	struct block *next;
	size_t used, size;
	char data[];
};

struct slot {
	const char *s; /* NULL: empty */
	__u32 len;
	__u32 hash;
};

struct gctx_strpool {
	struct block *blocks; /* newest first; only the newest has room */
	struct slot *slots;   /* open addressing, linear probing, at most 3/4 full */
	__u32 nslots, count;
	size_t bytes;
};

struct gctx_strpool *gctx_strpool__new(void)
{
	return calloc(1, sizeof(struct gctx_strpool));
}

void gctx_strpool__free(struct gctx_strpool *sp)
{
	struct block *b, *next;

	if (!sp)
		return;
	for (b = sp->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(sp->slots);
	free(sp);
}

/* Room for n bytes: the newest block, or a new one (a string longer than a block gets a block
 * of its own, kept behind the newest so the newest's free room is not lost). */
static char *carve(struct gctx_strpool *sp, size_t n)
{
	struct block *b = sp->blocks;

	if (!b || b->size - b->used < n) {
		size_t size = n > BLOCK_SIZE ? n : BLOCK_SIZE;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		sp->bytes += sizeof(*b) + size;
		if (size > BLOCK_SIZE && sp->blocks) {
			b->next = sp->blocks->next;
			sp->blocks->next = b;
		} else {
			b->next = sp->blocks;
			sp->blocks = b;
		}
	}
	b->used += n;
	return b->data + b->used - n;
}

static int rehash(struct gctx_strpool *sp)
{
	__u32 n = sp->nslots ? sp->nslots * 2 : 256, i, j;
	struct slot *ns = calloc(n, sizeof(*ns));

	if (!ns)
		return -1;
	for (i = 0; i < sp->nslots; i++) {
		if (!sp->slots[i].s)
			continue;
		for (j = sp->slots[i].hash & (n - 1); ns[j].s; j = (j + 1) & (n - 1))
			;
		ns[j] = sp->slots[i];
	}
	sp->bytes += ((size_t)n - sp->nslots) * sizeof(*ns);
	free(sp->slots);
	sp->slots = ns;
	sp->nslots = n;
	return 0;
}

/* The slot of the n bytes at s (hash), or the empty slot where they would go. */
static __u32 find(const struct gctx_strpool *sp, const char *s, size_t n, __u32 hash)
{
	__u32 i;

	for (i = hash & (sp->nslots - 1); sp->slots[i].s; i = (i + 1) & (sp->nslots - 1)) {
		const struct slot *e = &sp->slots[i];

		if (e->hash == hash && e->len == n && !memcmp(e->s, s, n))
			break;
	}
	return i;
}

const char *gctx_strpool__add(struct gctx_strpool *sp, const char *s, size_t n)
{
	__u32 hash, i;
	char *copy;

	if (n > UINT32_MAX - 1)
		return NULL;
	if ((__u64)(sp->count + 1) * 4 > (__u64)sp->nslots * 3 && rehash(sp))
		return NULL;
	hash = gctx_crc32(0, s, n);
	i = find(sp, s, n, hash);
	if (sp->slots[i].s)
		return sp->slots[i].s;
	copy = carve(sp, n + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, n);
	copy[n] = 0;
	sp->slots[i] = (struct slot){.s = copy, .len = n, .hash = hash};
	sp->count++;
	return copy;
}

const char *gctx_strpool__get(const struct gctx_strpool *sp, const char *s, size_t n)
{
	if (!sp->nslots || n > UINT32_MAX - 1)
		return NULL;
	return sp->slots[find(sp, s, n, gctx_crc32(0, s, n))].s;
}

__u32 gctx_strpool__count(const struct gctx_strpool *sp)
{
	return sp->count;
}

size_t gctx_strpool__bytes(const struct gctx_strpool *sp)
{
	return sp->bytes;
}
