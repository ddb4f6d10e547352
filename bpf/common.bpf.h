/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What gpuctx.bpf.c and api.bpf.c (and pyraise.bpf.c) share. The collector loads gpuctx.bpf.c
 * first and makes api.bpf.c reuse its ring buffer and followed-process map (bpf_map__reuse_fd;
 * pyraise.bpf.c reuses api.bpf.c's), which needs the objects to declare the maps identically:
 * they are declared here, once, with the knobs is_followed() and the wakeup decision read.
 * Include after gpuctx_events.h.
 */
#ifndef __GPUCTX_COMMON_BPF_H
#define __GPUCTX_COMMON_BPF_H

/* Knobs, set by the collector before load. */
const volatile bool follow_all = false;	     /* -a: every process */
const volatile __u32 self_tgid = 0;	     /* the collector itself, never followed */
const volatile __u64 wakeup_bytes = 1 << 20; /* wake the collector past this much unread data */

/* Every record, to the collector. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, GCTX_RING_DEFAULT); /* the collector may resize it (--ring-size) */
} events SEC(".maps");

/* tgid -> 1: processes being followed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} followed SEC(".maps");

/* tgid -> 1: gpuctx's own helper processes (children forked after load), never followed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} own_procs SEC(".maps");

static __always_inline bool is_own(__u32 tgid)
{
	return tgid == self_tgid || bpf_map_lookup_elem(&own_procs, &tgid) != NULL;
}

/* The common header of a kernel record, for the current thread. With kernel BTF the ids and
 * the comm are typed loads from the task (the NUL-padded name bpf_get_current_comm copies),
 * not helper calls: each call costs ~10-40 ns on a guest that returns through a mitigation
 * thunk, and the GPU-ioctl path already holds the task. An object loaded without kernel BTF
 * (GCTX_NO_CORE) uses the helpers. */
#ifndef GCTX_NO_CORE
static __always_inline void fill_hdr_task(struct gctx_ev_hdr *h, __u32 type, struct task_struct *t)
{
	const __u64 *comm = (const __u64 *)t->comm;

	h->type = type;
	h->tid = t->pid;
	h->tgid = t->tgid;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = bpf_ktime_get_ns();
	__builtin_memcpy(h->comm, &(__u64[2]){comm[0], comm[1]}, sizeof(h->comm));
}

static __always_inline void fill_hdr(struct gctx_ev_hdr *h, __u32 type)
{
	fill_hdr_task(h, type, bpf_get_current_task_btf());
}
#else
static __always_inline void fill_hdr(struct gctx_ev_hdr *h, __u32 type)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->type = type;
	h->tid = (__u32)id;
	h->tgid = id >> 32;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}
#endif

/* Most processes have no entry in the per-process maps a lineage event clears: a lookup
 * (no bucket lock) is cheaper than a delete of a missing key. */
static __always_inline void forget(void *map, __u32 *key)
{
	if (bpf_map_lookup_elem(map, key))
		bpf_map_delete_elem(map, key);
}

static __always_inline bool is_followed(__u32 tgid)
{
	/* gpuctx and its helpers are never in followed: only -a needs the own check */
	if (follow_all)
		return !is_own(tgid);
	return bpf_map_lookup_elem(&followed, &tgid) != NULL;
}

#endif /* __GPUCTX_COMMON_BPF_H */
