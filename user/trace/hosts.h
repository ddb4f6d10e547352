/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Traces of several hosts (issue 30). `gpuctx merge` writes one trace holding each host's
 * records after a GCTX_REC_HOST record that carries the host's own meta; every reader takes
 * such a file, or several traces, apart into one trace per host (the model and the exporter
 * then see one host at a time: equal pids of two hosts never meet).
 *
 * Clocks: each host's records are in its own CLOCK_MONOTONIC. They are put on one clock, the
 * job's (the CLOCK_MONOTONIC of the host that booted first), through each host's wall-clock
 * anchor (start_wall_ns at start_mono_ns): as close as the hosts' wall clocks agree, which their
 * NTP state bounds (meta clock_*). A header's clocks are input like the rest: crafted ones
 * overflow nothing, offsets saturate at INT64_MAX and times at 0 and UINT64_MAX, and a host
 * placed only so is flagged GCTX_CLK_APART (its clock looks off).
 */
#ifndef __GPUCTX_HOSTS_H
#define __GPUCTX_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "trace/tracefile.h"

/* GCTX_REC_HOST payload: the host's meta as its own trace held it. */
struct gctx_rec_host {
	__u32 index; /* 0, 1, ... in the merged file */
	__u32 pad;
	struct gctx_trace_meta meta;
};

#define GCTX_REC_HOST_MIN_LEN (8 + GCTX_TRACE_META_MIN_LEN)

/* One host's trace. */
struct gctx_host_file {
	struct gctx_trace_meta meta;
	char path[4096];    /* what to read it from: the trace, or /proc/self/fd/N */
	const char *source; /* the trace file it is in */
	char label[80];	    /* the hostname, "#2" appended when two hosts share it */
	int fd;		    /* the memory file of a host taken out of a merged trace, or -1 */
	__u64 end_mono_ns;  /* GCTX_REC_END's time, 0 when none (set by the caller) */
};

/* Every host of the traces paths[0..npaths), in order. A trace of one host is read where it
 * is; a merged trace's hosts are copied into memory files. 0, or -1 with a one-line reason in
 * err (nothing to free then). */
int gctx_hosts__open(char *const *paths, int npaths, struct gctx_host_file **hosts, __u32 *n,
		     char *err, size_t errlen);
void gctx_hosts__free(struct gctx_host_file *hosts, __u32 n);

/* Append host h to a merged trace being written: its GCTX_REC_HOST record, then its records.
 * Returns the records copied, or -1 with err (a read or write error). */
long long gctx_hosts__append(struct gctx_trace_writer *w, __u32 index,
			     const struct gctx_host_file *h, char *err, size_t errlen);

/* ---- clocks ---- */

#define GCTX_CLK_UNSYNC	     0x1  /* the host's NTP says its clock is not synchronised */
#define GCTX_CLK_NO_ESTIMATE 0x2  /* no error estimate (an older trace, no adjtimex) */
#define GCTX_CLK_APART	     0x4  /* its recording does not overlap any other host's */
#define GCTX_CLK_LARGE_ERROR 0x8  /* NTP's maximum error is over GCTX_CLK_LARGE_US */
#define GCTX_CLK_REFERENCE   0x10 /* the host whose clock is the job's */
#define GCTX_CLK_LARGE_US    100000

struct gctx_host_clock {
	__s64 offset_ns; /* add to the host's CLOCK_MONOTONIC to get the job's clock */
	__u64 start_ns;	 /* its recording on the job's clock */
	__u64 end_ns;	 /* (start_ns when the end is unknown) */
	__u64 error_us;	 /* at most this far from the reference host, ~0ull when unknown */
	__u32 flags;	 /* GCTX_CLK_* */
};

/* The clocks of n hosts (metas[i], with end_mono[i] its recording's end or 0): out[i] for
 * each; returns the reference host's index. */
__u32 gctx_hosts__align(const struct gctx_trace_meta *const *metas, const __u64 *end_mono, __u32 n,
			struct gctx_host_clock *out);

/* The shift that moves host m's BOOTTIME onto the reference host r's, given m's offset_ns from
 * gctx_hosts__align: gctx_export_host.boot_shift_ns. Saturated at +-INT64_MAX. */
__s64 gctx_hosts__boot_shift(const struct gctx_trace_meta *m, const struct gctx_trace_meta *r,
			     __s64 offset_ns);
/* a and b booted within 2 s of each other by their wall clocks: one boot of one host when their
 * hostnames agree (an agent's dumps given together, not a job's hosts). */
bool gctx_hosts__same_boot(const struct gctx_trace_meta *a, const struct gctx_trace_meta *b);

#endif /* __GPUCTX_HOSTS_H */
