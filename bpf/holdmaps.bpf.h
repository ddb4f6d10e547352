/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two hold maps, declared once: bpf/hold.bpf.h makes holds in them, bpf/guard.bpf.c ends
 * holds through them after reusing the gpuctx object's (bpf_map__reuse_fd needs identical
 * declarations). Include after gpuctx_hold.h.
 */
#ifndef __GPUCTX_HOLDMAPS_BPF_H
#define __GPUCTX_HOLDMAPS_BPF_H

/* tgid -> hold: processes stopped until their library is probed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GCTX_MAX_HOLDS);
	__type(key, __u32);
	__type(value, struct gctx_hold_val);
} holds SEC(".maps");

/* [0]: armed while a releaser runs (no hold is made without one), gpuctx's executable, the
 * pids the guard watches. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gctx_hold_ctl);
} hold_ctl SEC(".maps");

#endif /* __GPUCTX_HOLDMAPS_BPF_H */
