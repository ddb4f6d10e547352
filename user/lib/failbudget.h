/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A failure budget per user. A shared helper (the symboliser) that a hostile file can crash or
 * stall must stop serving the user whose files do that, not everyone: under -a and in the
 * agent one helper serves every user of the machine, for weeks. Each user (a key: a uid) may
 * fail so many times per window; past it, that user is refused until the window ends. A full
 * table recycles its stalest entry, which only gives that user a fresh budget.
 */
#ifndef __GPUCTX_FAILBUDGET_H
#define __GPUCTX_FAILBUDGET_H

#include <stdbool.h>
#include <linux/types.h>

#define GCTX_FAILBUDGET_USERS 64

struct gctx_failbudget {
	unsigned int max; /* failures allowed per window and user */
	__u64 window_ms;
	unsigned int n;
	struct {
		__u32 key;
		unsigned int fails;
		__u64 since_ms; /* the window's start */
	} e[GCTX_FAILBUDGET_USERS];
};

void gctx_failbudget_init(struct gctx_failbudget *b, unsigned int max, __u64 window_ms);
/* May key be served at now_ms? */
bool gctx_failbudget_ok(struct gctx_failbudget *b, __u32 key, __u64 now_ms);
/* key failed at now_ms; its failures in the window so far. */
unsigned int gctx_failbudget_fail(struct gctx_failbudget *b, __u32 key, __u64 now_ms);

#endif /* __GPUCTX_FAILBUDGET_H */
