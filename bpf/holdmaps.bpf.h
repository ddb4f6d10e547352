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

/* The hold, not yet resumed, of the process a SIGCONT is being sent to; else NULL. */
static __always_inline struct gctx_hold_val *
held_at_sigcont(struct trace_event_raw_signal_generate *ctx)
{
	struct gctx_hold_val *v;
	__u32 pid = ctx->pid;

	if (ctx->sig != 18) /* SIGCONT */
		return NULL;
	v = bpf_map_lookup_elem(&holds, &pid);
	return v && !v->resumed ? v : NULL;
}

/*
 * Is the current task another gpuctx run by root: its collector ("gpuctx...") or the releaser
 * of its holds ("gctx-resume", collect/hold.h)? Two of them (a node's agent, a user's record) hold
 * the same process at the same mapping, and the first done resumes it. Any process may take that
 * name; only root's counts, and what a false match costs is a re-stop that the hold's own end
 * undoes within its timeout.
 */
static __always_inline bool from_gpuctx_peer(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	char c[8];

	if (BPF_CORE_READ(t, cred, euid.val))
		return false;
	bpf_get_current_comm(c, sizeof(c));
	if (c[0] != 'g')
		return false;
	if (c[1] == 'c' && c[2] == 't' && c[3] == 'x' && c[4] == '-')
		return true;
	return c[1] == 'p' && c[2] == 'u' && c[3] == 'c' && c[4] == 't' && c[5] == 'x';
}

#endif /* __GPUCTX_HOLDMAPS_BPF_H */
