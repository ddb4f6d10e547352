// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The string table (strtab.h): open addressing over FNV-1a hashes, strings in one arena. */
#include <stdlib.h>
#include <string.h>

#include "lib/strtab.h"

struct slot {
	__u64 hash;
	__u32 off, len;
	__u32 id; /* 0: empty */
};

struct gctx_strtab {
	struct slot *slots;
	__u32 cap; /* power of two, twice max_entries at least */
	__u32 n, max_entries, max_len;
	char *arena;
	size_t used, arena_cap;
};

static __u64 fnv1a(const char *s, size_t n)
{
	__u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

struct gctx_strtab *gctx_strtab__new(__u32 max_entries, __u32 max_len)
{
	struct gctx_strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max_entries = max_entries;
	t->max_len = max_len;
	t->cap = 16;
	while (t->cap < 2 * max_entries)
		t->cap *= 2;
	return t;
}

void gctx_strtab__free(struct gctx_strtab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t->arena);
	free(t);
}

void gctx_strtab__clear(struct gctx_strtab *t)
{
	if (t->slots)
		memset(t->slots, 0, t->cap * sizeof(*t->slots));
	t->n = 0;
	t->used = 0;
}

__u32 gctx_strtab__count(const struct gctx_strtab *t)
{
	return t->n;
}

__u32 gctx_strtab__intern(struct gctx_strtab *t, const char *s, size_t n, bool *added)
{
	__u64 h = fnv1a(s, n);
	__u32 i, mask = t->cap - 1;
	struct slot *sl;

	*added = false;
	if (n > t->max_len)
		return 0;
	if (!t->slots && !(t->slots = calloc(t->cap, sizeof(*t->slots))))
		return 0;
	for (i = (__u32)h & mask;; i = (i + 1) & mask) {
		sl = &t->slots[i];
		if (!sl->id)
			break;
		if (sl->hash == h && sl->len == n && !memcmp(t->arena + sl->off, s, n))
			return sl->id;
	}
	if (t->n >= t->max_entries)
		return 0;
	if (t->used + n > t->arena_cap) {
		size_t ncap = t->arena_cap ? t->arena_cap : 4096;
		char *na;

		while (ncap < t->used + n)
			ncap *= 2;
		na = realloc(t->arena, ncap);
		if (!na)
			return 0;
		t->arena = na;
		t->arena_cap = ncap;
	}
	memcpy(t->arena + t->used, s, n);
	sl->hash = h;
	sl->off = (__u32)t->used;
	sl->len = (__u32)n;
	sl->id = ++t->n;
	t->used += n;
	*added = true;
	return sl->id;
}
