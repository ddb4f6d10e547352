/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records as the kernel sends them on the ring buffer, put back into their structs.
 * The kernel shortens an ioctl record to the bytes it used (the fixed part, then the len
 * bytes captured at entry, then the bytes read at exit, packed); everything else travels as
 * its struct. The trace file stores an ioctl record as it came (a third of the bytes to
 * checksum and write for a call without parameters); gctx_record_copy expands it for every
 * reader. Traces written before hold the full struct, which needs no expanding.
 */
#ifndef __GPUCTX_RING_H
#define __GPUCTX_RING_H

#include <stddef.h>
#include <linux/types.h>
#include "gpuctx_events.h"
#include "trace/records.h"

/* Bytes of struct gctx_ev_ioctl before in[]: always sent. */
#define GCTX_RING_IOCTL_FIXED offsetof(struct gctx_ev_ioctl, in)

/* The record of @type as the trace stores it. Returns @data itself when it needs no change,
 * else @buf filled from it; *out_len is the length to store. A shortened ioctl record whose
 * lengths do not add up is returned unchanged (the model then rejects it as too short). */
const void *gctx_ring__expand(__u32 type, const void *data, __u32 len, union gctx_record *buf,
			      __u32 *out_len);

#endif /* __GPUCTX_RING_H */
