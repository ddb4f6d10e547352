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

/* Version 2: fields and record types added by the hardening, stacks, first-call and timeline
 * work. Version 3: the clock's error in the meta, cgroup and host records (issue 30). Version
 * 4: the exec record says whether its list of kept GPU fds is the kernel's whole answer, the
 * fork record the same of a child's GPU fds (GCTX_EV_FD_FORK), a close how many fds were left
 * on the file (a 56-byte fd record, of an earlier version-4 trace, reads as not counted); API
 * calls of functions probed for a forked child alone (GCTX_*_OTHER, named in the record) and
 * the flags of a hold record (issue 42). Versions 1 to 3 stay readable. */
#define GCTX_TRACE_VERSION     4
#define GCTX_TRACE_MIN_VERSION 1
#define GCTX_TRACE_MAX_RECORD  (1u << 20) /* a larger length is corruption */

struct gctx_trace_meta {
	__u64 start_wall_ns; /* CLOCK_REALTIME when recording started */
	__u64 start_mono_ns; /* CLOCK_MONOTONIC at the same instant (the clock of every ts_ns) */
	char hostname[64];
	char kernel[64];   /* uname -r */
	char version[32];  /* gpuctx version that wrote the file */
	char cmdline[512]; /* what was traced ("-- python train.py", "-p 1234", "-a") */
	/* Appended (timeline work): CLOCK_BOOTTIME at the same instant, so exports line up with
	 * other Perfetto traces; 0 in files written before it (the reader zero-fills). */
	__u64 start_boot_ns;
	/* Appended (version 3): how far this host's wall clock may be from true time when
	 * recording started, as the kernel's NTP state says (adjtimex): merged traces of several
	 * hosts are aligned by their wall clocks (trace/hosts.h). 0 in older files. */
	__u32 clock_state; /* GCTX_CLOCK_*: 0 unknown */
	__u32 pad;
	__u64 clock_esterror_us; /* estimated error */
	__u64 clock_maxerror_us; /* maximum error */
};

#define GCTX_CLOCK_UNKNOWN 0
#define GCTX_CLOCK_SYNCED  1 /* NTP says synchronised */
#define GCTX_CLOCK_UNSYNC  2 /* not synchronised: its wall clock may be off by any amount */

/* The meta of files written before start_boot_ns was appended: still accepted. */
#define GCTX_TRACE_META_MIN_LEN 688

struct gctx_trace_writer;
struct gctx_trace_reader;

/* Create (truncate) path, never through a symlink, mode 0600, and write the header. NULL on
 * error with *err = -errno. (gpuctx record writes through lib/outfile.h and __new_fd.) */
struct gctx_trace_writer *gctx_trace_writer__new(const char *path,
						 const struct gctx_trace_meta *meta, int *err);
/* The same on an open file, which the writer then owns (and closes, also on error). */
struct gctx_trace_writer *gctx_trace_writer__new_fd(int fd, const struct gctx_trace_meta *meta,
						    int *err);
/*
 * Buffer one record. 0 or -errno. A write error (disk full) is sticky: the file is cut back
 * to its last whole record, a GCTX_REC_WRITE_LOSS record says there (if there is room) when
 * and why writing stopped, and every record appended since is counted as lost.
 */
int gctx_trace_writer__append(struct gctx_trace_writer *w, __u32 type, const void *data, __u32 len);
/* After a write error, one more try to put a closing record in the file (the final loss
 * count, GCTX_REC_WRITE_LOSS, filled in by the writer; the end record); before, the same as
 * __append. */
int gctx_trace_writer__append_final(struct gctx_trace_writer *w, __u32 type, const void *data,
				    __u32 len);
int gctx_trace_writer__error(const struct gctx_trace_writer *w);      /* first error, or 0 */
__u64 gctx_trace_writer__lost(const struct gctx_trace_writer *w);     /* records not written */
__u64 gctx_trace_writer__error_ns(const struct gctx_trace_writer *w); /* when writing failed */
/* Push buffered records to the file (write(2)); the collector calls this every poll. */
int gctx_trace_writer__flush(struct gctx_trace_writer *w);
__u64 gctx_trace_writer__bytes(const struct gctx_trace_writer *w); /* file size so far */
__u64 gctx_trace_writer__records(const struct gctx_trace_writer *w);
/* Flush and close. Returns 0 or the first error seen. NULL is a no-op returning 0. */
int gctx_trace_writer__free(struct gctx_trace_writer *w);

/* Open and validate the header. NULL on error with a one-line reason in errbuf
 * ("cannot open x: No such file", "x: not a gpuctx trace (bad magic)", "x: unsupported
 * version 9", "x: corrupt header (checksum)", "x: truncated header"). */
struct gctx_trace_reader *gctx_trace_reader__open(const char *path, char *errbuf, size_t errlen);
const struct gctx_trace_meta *gctx_trace_reader__meta(const struct gctx_trace_reader *r);
/* Next record: 1 with type, data and len set (data valid until the next call), 0 at the end
 * of the file or at a truncated final record (see __truncated), -1 on a read error (reason
 * in __error). Corrupt data (a bad length or checksum, garbage after the end) is skipped up
 * to the next good record and counted (see __skipped): one bad byte never loses the rest. */
int gctx_trace_reader__next(struct gctx_trace_reader *r, __u32 *type, const void **data,
			    __u32 *len);
/* Bytes skipped as corrupt so far, and in how many spans. */
__u64 gctx_trace_reader__skipped(const struct gctx_trace_reader *r, __u32 *nspans);
/* One line for a warning ("F: 12 bytes skipped at offset 345 (corrupt data)"), "" if none. */
void gctx_trace_reader__describe_skips(const struct gctx_trace_reader *r, char *buf, size_t len);
bool gctx_trace_reader__truncated(const struct gctx_trace_reader *r); /* ended mid-record */
__u64 gctx_trace_reader__offset(const struct gctx_trace_reader *r);   /* bytes consumed */
const char *gctx_trace_reader__error(const struct gctx_trace_reader *r);
void gctx_trace_reader__free(struct gctx_trace_reader *r);

#endif /* __GPUCTX_TRACEFILE_H */
