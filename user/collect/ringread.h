/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __GPUCTX_RINGREAD_H
#define __GPUCTX_RINGREAD_H

#include <stdbool.h>
#include <stddef.h>

/* Reader of the BPF ring buffer that publishes its position once per batch, not per record. */
struct gctx_ringread;

/* Called for each record; a negative return stops the batch (the record counts as read). */
typedef int (*gctx_ringread_fn)(void *ctx, void *data, size_t size);

struct gctx_ringread *gctx_ringread__new(int map_fd, gctx_ringread_fn fn, void *ctx);
/* Waits up to timeout_ms for a wakeup, then reads what is there: records read or -errno. */
int gctx_ringread__poll(struct gctx_ringread *r, int timeout_ms);
/* Does the early callback want this record? Cheap: asked of every record in the main loop. */
typedef bool (*gctx_ringread_want_fn)(const void *data, size_t size);
/* fn sees each wanted record once before its turn, on a thread of its own (while the main
 * loop handles the records in front of it): for what must not wait behind them. It gets a
 * copy; its return is ignored; the record is still handed to the main callback in its turn.
 * A wanted record the look ahead has not reached when the main loop does is the main loop's
 * alone: fn never sees it. Without a thread (-errno), the main loop looks ahead between slow
 * records as before. */
int gctx_ringread__set_early(struct gctx_ringread *r, gctx_ringread_want_fn want,
			     gctx_ringread_fn fn, void *ctx);
/* Ends the look ahead (before what fn uses is freed); no-op when none runs. */
void gctx_ringread__stop_early(struct gctx_ringread *r);
/* Reads what is there without waiting: records read, or the callback's negative return. */
int gctx_ringread__consume(struct gctx_ringread *r);
void gctx_ringread__free(struct gctx_ringread *r);

#endif
