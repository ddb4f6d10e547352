// SPDX-License-Identifier: GPL-2.0
/*
 * gpuctx API side: uprobes and uretprobes on the CUDA driver API (libcuda.so.1) and the HIP
 * runtime (libamdhip64.so). One generic entry program and one generic return program are
 * attached to every probed function; the attach cookie says which function it is and which
 * arguments to read (see GCTX_COOKIE_* in gpuctx_events.h).
 *
 * The ring buffer and the followed-process map are the ones of gpuctx.bpf.c (both declare them
 * in common.bpf.h): the collector reuses their fds before loading this object. The probe of a
 * Python child's exceptions is an object of its own (pyraise.bpf.c), loaded only when needed.
 */
#include "vmlinux.h"
#include "uprobe.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 api_drops = 0;  /* API records lost: ring buffer full */
__u64 api_missed = 0; /* returns whose entry was not stashed */

/* (tid << 32 | fn) -> the record being built between entry and return. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct gctx_ev_api);
} api_stash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gctx_ev_api);
} api_zero SEC(".maps");

/* Names of the functions probed for forked children alone (GCTX_*_OTHER), by the index in
 * their cookie: written by the collector before the probes that use them are attached. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GCTX_API_NAMES_MAX);
	__type(key, __u32);
	__type(value, char[GCTX_API_STR_LEN]);
} api_names SEC(".maps");

/* The in-flight key of a call: the thread, and the function (its name for GCTX_*_OTHER). */
static __always_inline __u64 stash_key(__u64 id, __u64 cookie)
{
	return (id << 32) | GCTX_COOKIE_FN(cookie) | (GCTX_COOKIE_NAME(cookie) << 16);
}

static __always_inline void emit(struct gctx_ev_api *src, bool urgent)
{
	struct gctx_ev_api *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&api_drops, 1);
		return;
	}
	__builtin_memcpy(e, src, sizeof(*e));
	submit(e, urgent);
}

static __always_inline int on_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 fn = GCTX_COOKIE_FN(cookie), str = GCTX_COOKIE_STR(cookie), zero = 0;
	struct gctx_ev_api *s;
	__u64 key;

	if (!is_followed(id >> 32))
		return 0;
	stack_on_api(ctx, fn, fn == GCTX_CU_INIT || fn == GCTX_HIP_INIT);
	s = bpf_map_lookup_elem(&api_zero, &zero);
	if (!s)
		return 0;
	s->hdr.type = GCTX_EV_API;
	s->hdr.tid = (__u32)id;
	s->hdr.tgid = id >> 32;
	s->hdr.cpu = bpf_get_smp_processor_id();
	s->hdr.ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(s->hdr.comm, sizeof(s->hdr.comm));
	s->fn = fn;
	s->flags = 0;
	s->ret = 0;
	s->dur_ns = 0;
	s->out = 0;
	s->ip = PT_REGS_IP(ctx);
	/* Every probe sits at a function's entry, past an endbr64 at most (uprobes.c), before
	 * any push: the return address, the call site, is at [sp]. Zeroed if unreadable. */
	bpf_probe_read_user(&s->caller, sizeof(s->caller), (void *)PT_REGS_SP(ctx));
	s->str[0] = 0;
	s->args[0] = PT_REGS_PARM1(ctx);
	s->args[1] = PT_REGS_PARM2(ctx);
	s->args[2] = PT_REGS_PARM3(ctx);
	s->args[3] = PT_REGS_PARM4(ctx);
	s->args[4] = PT_REGS_PARM5(ctx);
	s->args[5] = PT_REGS_PARM6(ctx);
	if (fn == GCTX_CU_OTHER || fn == GCTX_HIP_OTHER) {
		__u32 ni = GCTX_COOKIE_NAME(cookie);
		const char *name = bpf_map_lookup_elem(&api_names, &ni);

		if (name) {
			__builtin_memcpy(s->str, name, sizeof(s->str));
			s->flags |= GCTX_API_NAMED;
		}
	} else if (str >= 1 && str <= 6) {
		__u32 i = str - 1;

		barrier_var(i);
		if (i <= 5 &&
		    bpf_probe_read_user_str(s->str, sizeof(s->str), (void *)s->args[i]) > 0)
			s->flags |= GCTX_API_STR_OK;
	}
	if (cookie & GCTX_COOKIE_ENTRY_ONLY) {
		emit(s, false);
		return 0;
	}
	key = stash_key(id, cookie);
	if (bpf_map_update_elem(&api_stash, &key, s, BPF_ANY))
		__sync_fetch_and_add(&api_missed, 1);
	return 0;
}

static __always_inline int on_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 fn = GCTX_COOKIE_FN(cookie), out = GCTX_COOKIE_OUT(cookie);
	struct gctx_ev_api *s;
	__u64 key = stash_key(id, cookie);

	s = bpf_map_lookup_elem(&api_stash, &key);
	if (!s)
		return 0;
	s->ret = (__s32)PT_REGS_RC(ctx);
	s->dur_ns = bpf_ktime_get_ns() - s->hdr.ts_ns;
	s->flags |= GCTX_API_RETURNED;
	if (out >= 1 && out <= 6 && s->ret == 0) {
		__u32 i = out - 1;
		__u64 p;

		barrier_var(i);
		if (i > 5)
			goto done;
		p = s->args[i];
		if (p && bpf_probe_read_user(&s->out, sizeof(s->out), (void *)p) == 0)
			s->flags |= GCTX_API_OUT_OK;
	}
done:
	/* A cuGetProcAddress result may need a new probe: wake the collector now. */
	emit(s, fn == GCTX_CU_GET_PROC_ADDRESS);
	bpf_map_delete_elem(&api_stash, &key);
	return 0;
}

/* Attached one probe at a time (perf-event uprobes): the fallback. */
SEC("uprobe")
int BPF_KPROBE(api_enter)
{
	return on_enter(ctx);
}

SEC("uretprobe")
int BPF_KRETPROBE(api_return)
{
	return on_return(ctx);
}

/* Attached as one uprobe_multi link per library (Linux 6.6+): one link to release at the end
 * instead of one RCU grace period per probe. The collector sets their expected attach type. */
SEC("uprobe")
int BPF_KPROBE(api_enter_multi)
{
	return on_enter(ctx);
}

SEC("uretprobe")
int BPF_KRETPROBE(api_return_multi)
{
	return on_return(ctx);
}
