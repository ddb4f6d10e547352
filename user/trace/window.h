/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The flight recorder's window (gpuctx agent): the most recent records, bounded by bytes and
 * by age. Pushing a record evicts the oldest ones past either bound; what was evicted is
 * counted. Records are copied in as they came (type, bytes, length) and read back in order.
 */
#ifndef __GPUCTX_WINDOW_H
#define __GPUCTX_WINDOW_H

#include <stdbool.h>
#include <linux/types.h>

struct gctx_window;

/* max_bytes: the records' bytes kept at most (each costs 16 bytes more, rounded to 8);
 * max_age_ns: a record older than this (by the now given to push) is evicted, 0 = no limit.
 * NULL when out of memory or max_bytes is under 64 KiB. */
struct gctx_window *gctx_window__new(__u64 max_bytes, __u64 max_age_ns);
void gctx_window__free(struct gctx_window *w);

/* Keep a copy of one record taken at now_ns (CLOCK_MONOTONIC). 0, or -E2BIG for a record that
 * could never fit (it is counted as evicted). */
int gctx_window__push(struct gctx_window *w, __u64 now_ns, __u32 type, const void *data, __u32 len);
/* Evict what is older than the age bound at now_ns (push does this too). */
void gctx_window__expire(struct gctx_window *w, __u64 now_ns);

/* Each record kept, oldest first; stop early when cb returns non-zero (returned). */
typedef int (*gctx_window_cb)(void *ctx, __u64 ts_ns, __u32 type, const void *data, __u32 len);
int gctx_window__foreach(const struct gctx_window *w, gctx_window_cb cb, void *ctx);
/* The same for the records taken at from_ns or later only, without walking most of those
 * before (an index point every 1,024 records). */
int gctx_window__foreach_from(const struct gctx_window *w, __u64 from_ns, gctx_window_cb cb,
			      void *ctx);

__u64 gctx_window__bytes(const struct gctx_window *w);	   /* bytes in use */
__u64 gctx_window__records(const struct gctx_window *w);   /* records kept */
__u64 gctx_window__evicted(const struct gctx_window *w);   /* records evicted so far */
__u64 gctx_window__oldest_ns(const struct gctx_window *w); /* 0 when empty */

/* The processes a record concerns, for cutting one process tree out of a window: up to two
 * pids (a fork names its parent and its child) in pids; 0 when the record concerns no process
 * (a device registration, a probe, closing counts). Never reads past len. */
__u32 gctx_record_pids(__u32 type, const void *data, __u32 len, __u32 pids[2]);

#endif /* __GPUCTX_WINDOW_H */
