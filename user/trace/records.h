/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every reader of records needs to know about the record types of the wire format
 * (include/gpuctx_events.h): how many bytes a record must have to be read, the kernel event
 * types' names, and a union of all records to copy one into (records come unaligned from a
 * trace file, and are never trusted beyond their length).
 */
#ifndef __GPUCTX_RECORDS_H
#define __GPUCTX_RECORDS_H

#include <linux/types.h>
#include "gpuctx_events.h"

/* Any record: an aligned copy of gctx_record_min_len(type) bytes of one. */
union gctx_record {
	struct gctx_ev_hdr hdr; /* kernel records (types below GCTX_EV_KERNEL_MAX) */
	struct gctx_ev_fork fork;
	struct gctx_ev_exec exec;
	struct gctx_ev_exit exit;
	struct gctx_ev_open open;
	struct gctx_ev_ioctl ioctl;
	struct gctx_ev_mmap mmap;
	struct gctx_ev_fd fd;
	struct gctx_ev_api api;
	struct gctx_ev_libmap libmap;
	struct gctx_rec_proc proc;
	struct gctx_rec_file file;
	struct gctx_rec_device dev;
	struct gctx_rec_drops drops;
	struct gctx_rec_end end;
	struct gctx_rec_probe probe;
	struct gctx_rec_thread thread;
	struct gctx_rec_api_present apip;
	struct gctx_rec_write_loss wloss;
	struct gctx_ev_apimap apimap;
	struct gctx_ev_pyexc pyexc;
	struct gctx_rec_api_gap gap;
	struct gctx_rec_hold hold;
	struct gctx_rec_caller caller;
	struct gctx_rec_caller_drops caller_drops;
	struct gctx_rec_cgroup cgroup;
};

/* Bytes a record of this type must have: a shorter record is malformed. The size of its
 * struct, or of the struct's older version for a type that grew since (an API record of a
 * trace written before its caller field), or of the fixed part of an ioctl record (stored
 * packed, as the kernel sent it: trace/ring.h). 0 when the type is unknown. */
__u32 gctx_record_min_len(__u32 type);
/* Copy a record into *r: its struct's bytes, what an older, shorter version lacks zeroed, a
 * packed ioctl record put back in place. Returns the struct size, 0 when the type is unknown
 * or the record too short (or a packed ioctl record whose lengths do not add up). */
__u32 gctx_record_copy(union gctx_record *r, __u32 type, const void *data, __u32 len);

/* Name of a kernel event type, as the JSON report keys its counts: "fork", "exec", "exit",
 * "open", "ioctl", "mmap", "close", "fd_kept", "api", "libmap"; "vmas" (no count); NULL for
 * any other type. */
const char *gctx_ev_type_name(__u32 type);

#endif /* __GPUCTX_RECORDS_H */
