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

/* key's entry with its window brought up to now_ms; a new one (or the stalest recycled) if
 * key has none. */
static unsigned int entry(struct gctx_failbudget *b, __u32 key, __u64 now_ms)
{
	unsigned int i, stalest = 0;

	for (i = 0; i < b->n; i++) {
		if (b->e[i].key == key)
			break;
		if (b->e[i].since_ms < b->e[stalest].since_ms)
			stalest = i;
	}
	if (i == b->n) {
		if (b->n < GCTX_FAILBUDGET_USERS)
			b->n++;
		else
			i = stalest;
		b->e[i].key = key;
		b->e[i].fails = 0;
		b->e[i].since_ms = now_ms;
	}
	/* a clock that went back (or a window over) starts a new window */
	if (now_ms < b->e[i].since_ms || now_ms - b->e[i].since_ms >= b->window_ms) {
		b->e[i].fails = 0;
		b->e[i].since_ms = now_ms;
	}
	return i;
}

bool gctx_failbudget_ok(struct gctx_failbudget *b, __u32 key, __u64 now_ms)
{
	for (unsigned int i = 0; i < b->n; i++)
		if (b->e[i].key == key)
			return b->e[entry(b, key, now_ms)].fails < b->max;
	return b->max > 0;
}

unsigned int gctx_failbudget_fail(struct gctx_failbudget *b, __u32 key, __u64 now_ms)
{
	unsigned int i = entry(b, key, now_ms);

	if (b->e[i].fails < ~0u)
		b->e[i].fails++;
	return b->e[i].fails;
}
