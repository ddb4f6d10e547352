// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A failure budget per user (see failbudget.h). */
#include <string.h>
#include "lib/failbudget.h"

void gctx_failbudget_init(struct gctx_failbudget *b, unsigned int max, __u64 window_ms)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
	b->window_ms = window_ms;
}

static int find(const struct gctx_failbudget *b, __u32 key)
{
	for (unsigned int i = 0; i < b->n; i++)
		if (b->e[i].key == key)
			return (int)i;
	return -1;
}

/* Entry i with its window brought up to now_ms: a clock that went back, or a window over,
 * starts a new one. */
static unsigned int refresh(struct gctx_failbudget *b, unsigned int i, __u64 now_ms)
{
	if (now_ms < b->e[i].since_ms || now_ms - b->e[i].since_ms >= b->window_ms) {
		b->e[i].fails = 0;
		b->e[i].since_ms = now_ms;
	}
	return i;
}

bool gctx_failbudget_ok(struct gctx_failbudget *b, __u32 key, __u64 now_ms)
{
	int i = find(b, key);

	return i < 0 ? b->max > 0 : b->e[refresh(b, i, now_ms)].fails < b->max;
}

unsigned int gctx_failbudget_fail(struct gctx_failbudget *b, __u32 key, __u64 now_ms)
{
	int i = find(b, key);

	if (i < 0) {
		/* a new entry, or the stalest recycled */
		i = 0;
		if (b->n < GCTX_FAILBUDGET_USERS)
			i = (int)b->n++;
		else
			for (unsigned int j = 1; j < b->n; j++)
				if (b->e[j].since_ms < b->e[i].since_ms)
					i = (int)j;
		b->e[i].key = key;
		b->e[i].fails = 0;
		b->e[i].since_ms = now_ms;
	}
	refresh(b, (unsigned int)i, now_ms);
	if (b->e[i].fails < ~0u)
		b->e[i].fails++;
	return b->e[i].fails;
}
