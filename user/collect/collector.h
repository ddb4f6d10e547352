/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collect/: the live side (needs libbpf and root): the collector (this header) loads and
 * attaches the BPF programs and drains their ring buffer; discover.c finds what exists at start;
 * uprobes.c probes CUDA/HIP libraries. May include every pure stage; never cli/.
 */
#ifndef __GPUCTX_COLLECTOR_H
#define __GPUCTX_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "gpuctx_events.h"

/* Called for each record drained from the ring buffer. Non-zero stops the drain. */
typedef int (*gctx_record_fn)(void *ctx, __u32 type, const void *data, __u32 len);

#define GCTX_RING_MIN (256u << 10)
#define GCTX_RING_MAX (1u << 30)

/* Unread bytes past which a BPF program wakes the collector (else it polls every 10 ms): a
 * quarter of the ring, at most 1 MiB. Both BPF objects get it (rodata wakeup_bytes). */
static inline __u64 gctx_ring_wakeup_bytes(__u32 ring_bytes)
{
	return ring_bytes / 4 < (1u << 20) ? ring_bytes / 4 : 1u << 20;
}

/* --ring-size SIZE[K|M|G]: a power of two in [GCTX_RING_MIN, GCTX_RING_MAX] in *out: 0, or -1
 * when it is not one. */
int gctx_ring_size_parse(const char *arg, __u32 *out);
/* A ring size as --ring-size takes it (256K, 8M, 1G), in buf. */
const char *gctx_ring_size_str(__u64 bytes, char *buf, size_t len);

struct gctx_collector_opts {
	bool follow_all;		    /* -a */
	const char *cgroup;		    /* --cgroup DIR, or NULL */
	const struct gctx_rec_device *devs; /* --device registrations */
	__u32 ndevs;
	__u32 uvm_major, kfd_major; /* from /proc/devices, 0 when absent */
	__u32 self_tgid;
	bool verbose;	  /* libbpf debug output */
	bool track_libs;  /* report executable mappings (for API probes) */
	bool no_stacks;	  /* no stacks at rare events (--no-stacks) */
	bool hold;	  /* hold a process mapping an unprobed API library */
	__u32 ring_bytes; /* --ring-size: a power of two, 0 = GCTX_RING_DEFAULT */
	gctx_record_fn cb;
	void *cb_ctx;
};

/* One GPU fd found by the attach-time task/file iterator. */
struct gctx_found_file {
	__u32 tgid;
	__s32 fd;
	__u64 file;
	__u32 kind;
	__u32 f_flags;
};

struct gctx_collector;

/* Open, configure, load and attach. NULL with a one-line reason in err on failure. */
struct gctx_collector *gctx_collector__new(const struct gctx_collector_opts *o, char *err,
					   size_t errlen);
int gctx_collector__follow(struct gctx_collector *c, __u32 tgid);
/* fn sees each ring record want() picks once before its turn, on a thread of its own
 * (collect/ringread.h); stop_early ends that before what fn uses is freed. */
void gctx_collector__set_early(struct gctx_collector *c, bool (*want)(const void *, size_t),
			       int (*fn)(void *, void *, size_t), void *ctx);
void gctx_collector__stop_early(struct gctx_collector *c);
/* tgid held GPU files at attach: its children forked without exec are probed (childprobe.h). */
int gctx_collector__holds_gpu(struct gctx_collector *c, __u32 tgid);
/* Wait up to timeout_ms, then drain everything ready. Returns records or -errno. */
int gctx_collector__poll(struct gctx_collector *c, int timeout_ms);
/* Walk every followed process's GPU fds (BPF task/file iterator). -EOPNOTSUPP when this
 * kernel cannot load the iterator. Returns the number found. */
int gctx_collector__scan_files(struct gctx_collector *c,
			       void (*fn)(void *ctx, const struct gctx_found_file *f), void *ctx);
void gctx_collector__drops(const struct gctx_collector *c, struct gctx_rec_drops *out);
/* API-library mappings the kernel could not report (ring buffer full). */
__u64 gctx_collector__apimap_lost(const struct gctx_collector *c);
const char *gctx_collector__features(const struct gctx_collector *c);
/* Stacks the kernel could not emit (ring buffer full). */
__u64 gctx_collector__stack_lost(const struct gctx_collector *c);
/* Stacks sent without their mappings (ring buffer full, address space locked). */
__u64 gctx_collector__vmas_lost(const struct gctx_collector *c);
/* fd of a kernel-side map ("events", "followed"), to share it with other BPF objects. */
/* Where task_struct keeps the fs base (found by CO-RE at load), 0 unknown. */
__u32 gctx_collector__task_fsbase_off(const struct gctx_collector *c);
int gctx_collector__map_fd(const struct gctx_collector *c, const char *name);
void gctx_collector__free(struct gctx_collector *c);

struct bpf_object;
/* Every tp/CAT/NAME program of a loaded object against its tracepoint's format file
 * (collect/tpformat.c): 0, or -1 with the first mismatch in err. */
int gctx_check_tracepoints(const struct bpf_object *obj, char *err, size_t errlen);

#endif /* __GPUCTX_COLLECTOR_H */
