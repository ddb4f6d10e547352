// SPDX-License-Identifier: GPL-2.0
/*
 * Python exceptions of a forked child (issue 42): the probe of CPython's _PyErr_SetObject,
 * attached for a child forked without exec from a process holding GPU state that maps an
 * interpreter (user/collect/childprobe.c). An object of its own, loaded the first time a child
 * needs it: its stack capture (stack_emit) is a third of what the verifier checks in the API
 * object, and most recordings never have such a child (bench/LOAD-BUDGET.md).
 *
 * Every map it shares with api.bpf.c (the ring buffer, the followed processes, the Python
 * layouts, the stack state and scratch) is that object's, by fd; pyexc_count is its own.
 */
#include "vmlinux.h"
#include "uprobe.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 pyexc_drops = 0; /* exceptions lost: ring buffer full (counted with the API records) */

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
 * statement's and a C function's alike. Attached for one forked child at a time, as a
 * uprobe_multi link (the collector sets the expected attach type). */
SEC("uprobe")
int BPF_KPROBE(py_raise)
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
		__sync_fetch_and_add(&pyexc_drops, 1);
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
