// SPDX-License-Identifier: GPL-2.0
/*
 * gpuctx API side: uprobes and uretprobes on the CUDA driver API (libcuda.so.1) and the HIP
 * runtime (libamdhip64.so). One generic entry program and one generic return program are
 * attached to every probed function; the attach cookie says which function it is and which
 * arguments to read (see GCTX_COOKIE_* in gpuctx_events.h).
 *
 * The ring buffer and the followed-process map are the ones of gpuctx.bpf.c (both declare them
 * in common.bpf.h): the collector reuses their fds before loading this object.
 */
#include "vmlinux.h"

/* A uprobe's context is the user register frame, laid out as the x86-64 ptrace ABI fixes it
 * (struct user_regs_struct): reading it needs no CO-RE, so loading this object needs no second
 * parse of the kernel's BTF (tens of ms of every start). Declared after vmlinux.h, so without
 * its preserve_access_index. */
struct gctx_uregs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};
#define __PT_REGS_CAST(x) ((const struct gctx_uregs *)(x))

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gpuctx_events.h"
#define GCTX_NO_CORE /* no kernel BTF needed to load this object */
#include "common.bpf.h"
#define GCTX_STACK_NO_SIGNAL /* gpuctx.bpf.c has it */
#include "stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* libbpf 1.1 has no sixth-argument accessor; x86-64 passes it in r9. */
#ifndef PT_REGS_PARM6
#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->r9)
#endif

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

static __always_inline void submit(void *e, bool urgent)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (urgent || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
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

/* ---- Python exceptions of a forked child (issue 42) ---- */

/* CPython objects, the same in 3.10-3.13 (x86-64): ob_type at 8, PyTypeObject.tp_name at 24 and
 * tp_flags at 168, PyBaseExceptionObject.args at 24, a tuple's ob_size at 16 and items at 24,
 * a str's state word at 32 (compact bit 5, ascii bit 6). */
#define PY_OB_TYPE	     8
#define PY_TP_NAME	     24
#define PY_TP_FLAGS	     168
#define PY_EXC_ARGS	     24
#define PY_TUPLE_SIZE	     16
#define PY_TUPLE_ITEM0	     24
#define PY_STR_LENGTH	     16
#define PY_STR_STATE	     32
#define PY_TPF_TUPLE	     (1ul << 26)
#define PY_TPF_UNICODE	     (1ul << 28)
#define PY_TPF_BASE_EXC	     (1ul << 30)
#define PY_STR_COMPACT_ASCII (3u << 5)
#define PY_STR_COMPACT	     (1u << 5)

/* tgid -> exceptions counted (those kept and those past GCTX_PYEXC_KEEP). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} pyexc_count SEC(".maps");

static __always_inline __u64 py_word(__u64 addr)
{
	__u64 v = 0;

	if (addr)
		bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

static __always_inline __u64 py_type_flags(__u64 obj)
{
	return py_word(py_word(obj + PY_OB_TYPE) + PY_TP_FLAGS);
}

/* The message of value (an exception instance, its args tuple, or a str): args[0] when a
 * compact str. Where its data starts is the process's layout (pyinfo, with stacks), else the
 * probe's cookie: childprobe.c reads the interpreter's version from its file name (ASCII data
 * offset in bits 0-15, non-ASCII in 16-31). A non-ASCII one is sent as raw code units
 * (GCTX_PYEXC_MSG_RAW), for the collector to turn into UTF-8. */
static __always_inline void py_message(struct gctx_ev_pyexc *e, __u64 value, __u32 tgid,
				       __u64 cookie)
{
	struct gctx_py_layout *l = bpf_map_lookup_elem(&pyinfo, &tgid);
	__u64 flags = py_type_flags(value), ascii_off, compact_off, len = 0;
	__u32 state = 0, kind, n;

	ascii_off = l && l->supported ? l->str_ascii_data : cookie & 0xffff;
	compact_off = l && l->supported ? l->str_compact_data : (cookie >> 16) & 0xffff;
	if (!ascii_off || !value)
		return;
	if (flags & PY_TPF_BASE_EXC) {
		value = py_word(value + PY_EXC_ARGS);
		flags = py_type_flags(value);
	}
	if (flags & PY_TPF_TUPLE) {
		if ((__s64)py_word(value + PY_TUPLE_SIZE) < 1)
			return;
		value = py_word(value + PY_TUPLE_ITEM0);
		flags = py_type_flags(value);
	}
	if (!(flags & PY_TPF_UNICODE))
		return;
	bpf_probe_read_user(&state, sizeof(state), (void *)(value + PY_STR_STATE));
	if ((state & PY_STR_COMPACT_ASCII) == PY_STR_COMPACT_ASCII) {
		if (bpf_probe_read_user_str(e->msg, sizeof(e->msg), (void *)(value + ascii_off)) >
		    0)
			e->flags |= GCTX_PYEXC_MSG_OK;
		return;
	}
	kind = (state >> 2) & 7;
	if (!(state & PY_STR_COMPACT) || !compact_off || (kind != 1 && kind != 2 && kind != 4))
		return;
	bpf_probe_read_user(&len, sizeof(len), (void *)(value + PY_STR_LENGTH));
	/* whole characters that fit, one byte short of the buffer */
	n = (__s64)len < 0			? 0
	    : len > (sizeof(e->msg) - 1) / kind ? (sizeof(e->msg) - 1) / kind
						: len;
	n *= kind;
	if (n && n < sizeof(e->msg) &&
	    !bpf_probe_read_user(e->msg, n & (sizeof(e->msg) - 1), (void *)(value + compact_off)))
		e->flags |= GCTX_PYEXC_MSG_RAW | kind << 8 | n << 16;
}

/* Control flow, raised and caught all the time: not a failure, not counted. */
static __always_inline bool py_control_flow(const char *t)
{
	return (t[0] == 'S' && t[1] == 't' && t[2] == 'o' && t[3] == 'p' &&
		(t[4] == 'I' || t[4] == 'A')) ||
	       (t[0] == 'G' && t[1] == 'e' && t[2] == 'n' && t[3] == 'e' && t[4] == 'r' &&
		t[5] == 'a' && t[6] == 't' && t[7] == 'o' && t[8] == 'r' && t[9] == 'E');
}

/* _PyErr_SetObject(tstate, type, value): every exception CPython 3.10-3.13 sets, a raise
 * statement's and a C function's alike. Attached for one forked child at a time. */
SEC("uprobe")
int BPF_KPROBE(py_raise_multi)
{
	__u64 id = bpf_get_current_pid_tgid(), type = PT_REGS_PARM2(ctx);
	__u32 tgid = id >> 32, one = 1, *cnt, seq;
	struct gctx_ev_pyexc *e;
	char name[16] = {};

	if (!is_followed(tgid))
		return 0;
	if (bpf_probe_read_user_str(name, sizeof(name), (void *)py_word(type + PY_TP_NAME)) > 0 &&
	    py_control_flow(name))
		return 0;
	cnt = bpf_map_lookup_elem(&pyexc_count, &tgid);
	if (!cnt) {
		bpf_map_update_elem(&pyexc_count, &tgid, &one, BPF_NOEXIST);
		cnt = bpf_map_lookup_elem(&pyexc_count, &tgid);
		if (!cnt)
			return 0;
		seq = *cnt;
	} else {
		seq = __sync_add_and_fetch(cnt, 1);
	}
	if (seq > GCTX_PYEXC_KEEP && (seq & (seq - 1)))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&api_drops, 1); /* counted with the API records */
		return 0;
	}
	fill_hdr(&e->hdr, GCTX_EV_PYEXC);
	e->seq = seq;
	e->flags = 0;
	e->type[0] = 0;
	e->msg[0] = 0;
	if (seq > GCTX_PYEXC_KEEP) {
		e->flags = GCTX_PYEXC_COUNT;
		submit(e, false);
		return 0;
	}
	if (bpf_probe_read_user_str(e->type, sizeof(e->type), (void *)py_word(type + PY_TP_NAME)) >
	    0)
		e->flags |= GCTX_PYEXC_TYPE_OK;
	py_message(e, PT_REGS_PARM3(ctx), tgid, bpf_get_attach_cookie(ctx));
	submit(e, false);
	if (stacks_on)
		stack_emit(ctx, 1, GCTX_STACK_RAISE, 0, seq);
	return 0;
}
