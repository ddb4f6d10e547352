/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * trace/: the records stage. Record sizes and names (records.h) and the trace file (this
 * header). May include lib/ and include/ only.
 *
 * The trace file: a versioned header followed by framed, append-only records, so a file cut
 * short (collector killed with SIGKILL, disk full) is readable up to its last complete record.
 *
 * Layout (little-endian):
 *   header:  magic "GPUCTX\r\n" (8) | u16 version | u16 header_len | u32 header_crc |
 *            struct gctx_trace_meta (header_len - 16 bytes)
 *   record:  u32 len (payload bytes) | u32 type | payload | u32 crc32(type, payload)
 */
#ifndef __GPUCTX_TRACEFILE_H
#define __GPUCTX_TRACEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Version 2 (this release): fields and record types added by the hardening, stacks, first-call
 * and timeline work; all of them land as one version. Version 1 files stay readable. */
#define GCTX_TRACE_VERSION 2
#define GCTX_TRACE_MIN_VERSION 1
#define GCTX_TRACE_MAX_RECORD (1u << 20) /* a larger length is corruption */

struct gctx_trace_meta {
	__u64 start_wall_ns; /* CLOCK_REALTIME when recording started */
	__u64 start_mono_ns; /* CLOCK_MONOTONIC at the same instant (the clock of every ts_ns) */
	char hostname[64];
	char kernel[64];     /* uname -r */
	char version[32];    /* gpuctx version that wrote the file */
	char cmdline[512];   /* what was traced ("-- python train.py", "-p 1234", "-a") */
	/* Appended (timeline work): CLOCK_BOOTTIME at the same instant, so exports line up with
	 * other Perfetto traces; 0 in files written before it (the reader zero-fills). */
	__u64 start_boot_ns;
};

/* The meta of files written before start_boot_ns was appended: still accepted. */
#define GCTX_TRACE_META_MIN_LEN 688

struct gctx_trace_writer;
struct gctx_trace_reader;

/* Create (truncate) path and write the header. NULL on error with *err = -errno. */
struct gctx_trace_writer *gctx_trace_writer__new(const char *path,
						 const struct gctx_trace_meta *meta, int *err);
/* Buffer one record. 0 or -errno (a write error is sticky and returned again). */
int gctx_trace_writer__append(struct gctx_trace_writer *w, __u32 type, const void *data,
			      __u32 len);
/* Push buffered records to the file (write(2)); the collector calls this every poll. */
int gctx_trace_writer__flush(struct gctx_trace_writer *w);
__u64 gctx_trace_writer__bytes(const struct gctx_trace_writer *w);   /* file size so far */
__u64 gctx_trace_writer__records(const struct gctx_trace_writer *w);
/* Flush and close. Returns 0 or the first error seen. NULL is a no-op returning 0. */
int gctx_trace_writer__free(struct gctx_trace_writer *w);

/* Open and validate the header. NULL on error with a one-line reason in errbuf
 * ("cannot open x: No such file", "x: not a gpuctx trace (bad magic)", "x: unsupported
 * version 9", "x: corrupt header (checksum)", "x: truncated header"). */
struct gctx_trace_reader *gctx_trace_reader__open(const char *path, char *errbuf, size_t errlen);
const struct gctx_trace_meta *gctx_trace_reader__meta(const struct gctx_trace_reader *r);
/* Next record: 1 with type, data and len set (data valid until the next call), 0 at the end
 * of the file or at a truncated final record (see __truncated), -1 on a corrupt record in
 * the middle of the file (bad length or checksum; reason in __error). */
int gctx_trace_reader__next(struct gctx_trace_reader *r, __u32 *type, const void **data,
			    __u32 *len);
bool gctx_trace_reader__truncated(const struct gctx_trace_reader *r); /* ended mid-record */
__u64 gctx_trace_reader__offset(const struct gctx_trace_reader *r);  /* bytes consumed */
const char *gctx_trace_reader__error(const struct gctx_trace_reader *r);
void gctx_trace_reader__free(struct gctx_trace_reader *r);

#endif /* __GPUCTX_TRACEFILE_H */
