/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call stacks at the rare events that decide a diagnosis (issue 11): a process's first GPU
 * open, a fork by a process that holds GPU state, the first use of an inherited GPU file, a
 * fatal signal in a process with inherited state. Never on the hot path: the hooks cost one
 * hash lookup per GPU ioctl/mmap (the per-process state) and nothing for non-GPU calls.
 *
 * Each capture sends one GCTX_EV_STACK: the user registers, a frame-pointer walk, a copy of the
 * top of the user stack (user space unwinds it with the binaries' CFI), and the Python frame
 * chain of the current thread when the collector has told us where the interpreter lives.
 * The process's executable mappings go right before it (vmas.bpf.h).
 * Include from gpuctx.bpf.c after common.bpf.h.
 */
#ifndef __GPUCTX_STACK_BPF_H
#define __GPUCTX_STACK_BPF_H

#define STK_HOLDS	 GCTX_STK_HOLDS /* the process opened or inherited a GPU file */
#define STK_INHERITED	 0x2		/* it got GPU files through fork */
#define STK_INIT_DONE	 0x4
#define STK_CRASH_DONE	 0x8
#define STK_API_USE_DONE 0x10 /* an API call in a process with inherited state */
/* Send the process's mappings when it exits: its API call sites (and stacks that went
 * without them) are symbolised from /proc/PID/maps, which a process that exits before the
 * collector gets to it no longer has. */
#define STK_MAPS_AT_EXIT 0x20
/* A child forked without exec (not CLONE_VM) from a process with STK_HOLDS: held on its way
 * back from fork until its own API probes are attached (hold.bpf.h, watch_fork). */
#define STK_FORK_HOLD 0x40
/* It holds GPU fds (opened, found at a fork or exec, or at attach): its forks read the child's
 * (bpf/gpuctx.bpf.c on_fork); gone when an exec closed them all. Set with --no-stacks too. */
#define STK_GPU_FDS GCTX_STK_GPU_FDS

#define SIGILL	4
#define SIGABRT 6
#define SIGBUS	7
#define SIGFPE	8
#define SIGSEGV 11

const volatile bool stacks_on = true; /* --no-stacks turns capture off */

#ifndef GCTX_NO_CORE
#include "vmas.bpf.h"
#else
/* The uprobe objects (api.bpf.c, pyraise.bpf.c) need no kernel BTF at load: no mappings walk
 * (their stacks are taken in a live process; the collector reads its /proc maps), and the fs
 * base read at the offset the main object found (task_offsets). */
const volatile __u32 task_fsbase_off = 0;

static __always_inline int vmas_emit(void)
{
	return 0;
}
#endif

__u64 stack_lost = 0; /* stacks not emitted: ring buffer full */

/* tgid -> STK_* */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} stk_state SEC(".maps");

struct stk_file_key {
	__u32 tgid;
	__u32 pad;
	__u64 file;
};

/* (tgid, struct file) seen by this process: opened by it, or an inherited one already used. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stk_file_key);
	__type(value, __u8);
} stk_files SEC(".maps");

/* tgid -> interpreter layout, written by the collector (user/collect/pyprobe.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct gctx_py_layout);
} pyinfo SEC(".maps");

#ifndef GCTX_NO_CORE
/* Interpreter executables the collector has read (user/collect/pyprobe.c), once per file:
 * a process exec'ing one gets its pyinfo here, at exec, not when the collector gets to its
 * exec record (late on a busy machine, after a short script's first GPU call). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct gctx_py_exe_key);
	__type(value, struct gctx_py_layout);
} pyexe SEC(".maps");
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gctx_ev_stack);
} stk_scratch SEC(".maps");

/*
 * The walks' changing state (pointers read from the process, the frame count) lives in map
 * memory: py_state and the record's npy. Kept in a struct on the stack, each value the
 * verifier could tell apart (0, or a number read) made it check a callback, and everything
 * after its loop, once more; in a map value every value is just a number and one pass
 * covers them all. That was most of gpuctx's load time.
 */
struct py_state {
	__u64 interp, t, ts, fsbase; /* finding the thread state (ts_find_cb) */
	__u64 frame;		     /* the next frame to read (py_frame_cb) */
	__u32 fault;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_state);
} py_scratch SEC(".maps");

struct py_walk {
	struct gctx_ev_stack *s;
	const struct gctx_py_layout *l;
	struct py_state *st;
};

static __always_inline __u64 rd_ptr(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* Copy a str object's data (at most cap bytes; the tail when tail is set). */
static __always_inline __u16 py_str(const struct gctx_py_layout *l, __u64 str, char *dst, __u32 cap,
				    __u8 *kind_out, bool tail, bool *cut)
{
	__u64 len = 0, off;
	__u32 state = 0, kind, n;

	*kind_out = 0;
	if (!str || bpf_probe_read_user(&len, sizeof(len), (void *)(str + 16)) ||
	    bpf_probe_read_user(&state, sizeof(state), (void *)(str + 32)))
		return 0;
	kind = (state >> 2) & 7;
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4) || len > (1 << 20))
		return 0; /* not compact: never the case for code object names */
	off = (state & 0x40) ? l->str_ascii_data : l->str_compact_data;
	len *= kind;
	n = len > cap ? cap : len;
	if (tail && len > cap) {
		off += len - cap;
		*cut = true;
	}
	barrier_var(n);
	if (n == 0 || n > GCTX_PY_FILE_LEN)
		return 0;
	if (bpf_probe_read_user(dst, n, (void *)(str + off)))
		return 0;
	*kind_out = kind;
	return n;
}

static long py_frame_cb(__u32 i, struct py_walk *w)
{
	const struct gctx_py_layout *l = w->l;
	struct gctx_py_frame *f;
	__u64 code, instr = 0, lt, lt_size = 0;
	__u8 owner = 0, is_entry = 0;
	bool cut = false;
	struct py_state *st = w->st;
	__u32 n = w->s->npy;
	__u64 frame = st->frame;

	if (!frame)
		return 1;
	if (n >= GCTX_STACK_MAX_PY) {
		w->s->py_status = GCTX_PY_TRUNCATED;
		return 1;
	}
	code = rd_ptr(frame + l->frame_code);
	if (l->frame_owner >= 0)
		bpf_probe_read_user(&owner, 1, (void *)(frame + l->frame_owner));
	if (l->frame_is_entry >= 0)
		bpf_probe_read_user(&is_entry, 1, (void *)(frame + l->frame_is_entry));
	if (l->code_adaptive) {
		instr = rd_ptr(frame + l->frame_instr);
	} else {
		__s32 lasti = -1;

		bpf_probe_read_user(&lasti, sizeof(lasti), (void *)(frame + l->frame_instr));
		instr = (__u64)(__s64)lasti;
	}
	st->frame = rd_ptr(frame + l->frame_back);
	/* C-stack shim (3.12+: owner 3): marks where one C-level eval call began. */
	if (l->frame_owner >= 0 && owner == 3) {
		if (n > 0 && n <= GCTX_STACK_MAX_PY)
			w->s->py[(n - 1) & 31].flags |= GCTX_PYF_ENTRY;
		return 0;
	}
	if (!code) {
		st->fault = 1;
		return 1;
	}
	if (n >= GCTX_STACK_MAX_PY)
		return 1;
	f = &w->s->py[n];
	f->code = code;
	f->flags = 0;
	if (l->code_adaptive) {
		__u64 base = code + l->code_adaptive;

		f->instr = instr >= base && instr - base < (1 << 24) ? (instr - base) / 2 : -1;
	} else {
		f->instr = (__s32)instr;
		f->flags |= GCTX_PYF_LASTI;
	}
	if (is_entry)
		f->flags |= GCTX_PYF_ENTRY;
	f->firstlineno = 0;
	bpf_probe_read_user(&f->firstlineno, sizeof(f->firstlineno),
			    (void *)(code + l->code_firstlineno));
	f->file_len = py_str(l, rd_ptr(code + l->code_filename), f->file, GCTX_PY_FILE_LEN,
			     &f->file_kind, true, &cut);
	if (cut)
		f->flags |= GCTX_PYF_FILE_CUT;
	cut = false;
	f->name_len = py_str(l, rd_ptr(code + l->code_name), f->name, GCTX_PY_NAME_LEN,
			     &f->name_kind, false, &cut);
	/* co_linetable is a bytes object: size at 16, data at 32. */
	f->lt_len = 0;
	lt = rd_ptr(code + l->code_linetable);
	if (lt && !bpf_probe_read_user(&lt_size, sizeof(lt_size), (void *)(lt + 16))) {
		__u32 lt_len = lt_size > GCTX_PY_LT_LEN ? GCTX_PY_LT_LEN : lt_size;

		if (lt_size > GCTX_PY_LT_LEN)
			f->flags |= GCTX_PYF_LT_CUT;
		barrier_var(lt_len);
		if (lt_len > 0 && lt_len <= GCTX_PY_LT_LEN &&
		    !bpf_probe_read_user(f->lt, lt_len, (void *)(lt + 32)))
			f->lt_len = lt_len;
	}
	w->s->npy = n + 1;
	return 0;
}

/* Finding this OS thread's PyThreadState in the interpreters' thread lists, one thread per
 * step (a callback: verified once, where nested loops were unrolled in every program). */
struct ts_find {
	const struct gctx_py_layout *l;
	struct py_state *st;
};

#define TS_FIND_STEPS (4 * 65) /* 4 interpreters, 64 threads each */

static long ts_find_cb(__u32 i, struct ts_find *f)
{
	const struct gctx_py_layout *l = f->l;
	struct py_state *st = f->st;
	__u64 t = st->t, interp = st->interp;

	if (!t) {
		if (!interp)
			return 1;
		st->t = rd_ptr(interp + l->interp_tstate);
		st->interp = rd_ptr(interp + l->interp_next);
		return 0;
	}
	if (rd_ptr(t + l->tstate_thread_id) == st->fsbase) {
		st->ts = t;
		return 1;
	}
	st->t = rd_ptr(t + l->tstate_next);
	return 0;
}

/* The current thread's Python frames, if this process runs a known interpreter. */
static __always_inline void py_walk(struct gctx_ev_stack *s, __u32 tgid)
{
	const struct gctx_py_layout *l = bpf_map_lookup_elem(&pyinfo, &tgid);
#ifndef GCTX_NO_CORE
	struct task_struct *task = bpf_get_current_task_btf();
#else
	__u64 task = bpf_get_current_task();
#endif
	struct py_walk w = {};
	struct ts_find f = {};
	struct py_state *st;
	__u32 zero = 0;
	__u64 ts, frame;

	if (!l)
		return;
	st = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!st)
		return;
	s->py_version = l->version;
	if (!l->supported) {
		s->py_status = GCTX_PY_UNSUPPORTED;
		return;
	}
	/* Find this OS thread's PyThreadState: thread_id is pthread_self(), the fs base. That
	 * also holds while the thread has released the GIL, and in a raw fork() child. */
	f.l = l;
	f.st = st;
#ifndef GCTX_NO_CORE
	st->fsbase = task->thread.fsbase;
#else
	if (!task_fsbase_off || bpf_probe_read_kernel(&st->fsbase, sizeof(st->fsbase),
						      (void *)(task + task_fsbase_off)))
		st->fsbase = 0;
#endif
	st->interp = rd_ptr(l->runtime + l->interp_head);
	st->t = 0;
	st->ts = 0;
	st->fault = 0;
	bpf_loop(TS_FIND_STEPS, ts_find_cb, &f, 0);
	ts = st->ts;
	if (!ts) {
		s->py_status = GCTX_PY_NO_THREAD;
		return;
	}
	frame = rd_ptr(ts + l->tstate_frame);
	if (l->cframe_frame >= 0 && frame)
		frame = rd_ptr(frame + l->cframe_frame);
	st->frame = frame;
	w.s = s;
	w.l = l;
	w.st = st;
	s->py_status = GCTX_PY_OK;
	bpf_loop(GCTX_STACK_MAX_PY + 8, py_frame_cb, &w, 0);
	if (st->fault && !s->npy)
		s->py_status = GCTX_PY_FAULT;
}

static __always_inline __u32 *stk_get(__u32 tgid)
{
	return bpf_map_lookup_elem(&stk_state, &tgid);
}

static __always_inline void stk_set(__u32 tgid, __u32 bits)
{
	__u32 *st = stk_get(tgid), v = bits;

	if (st)
		__sync_fetch_and_or(st, bits);
	else
		bpf_map_update_elem(&stk_state, &tgid, &v, BPF_ANY);
}

/* Capture the current thread's user stack and emit it. ctx: the program's context, for
 * bpf_get_stack; uregs: the user registers (pt_regs at syscall entry or at the probe). */
/* A global function: the verifier checks it once per program, on its own, where a static
 * one was checked again for every distinct state of its callers (a few times per program:
 * most of gpuctx's load time). ctx is the program's context (bpf_get_stack); the user
 * registers are ctx itself for a uprobe (regs_in_ctx), else the task's saved ones. */
#define __arg_ctx __attribute__((btf_decl_tag("arg:ctx")))

__noinline int stack_emit(void *ctx __arg_ctx, __u32 regs_in_ctx, __u32 role, __u32 trigger,
			  __u64 key)
{
	__u32 zero = 0, len, tgid = bpf_get_current_pid_tgid() >> 32;
	struct gctx_ev_stack *s = bpf_map_lookup_elem(&stk_scratch, &zero);
#ifndef GCTX_NO_CORE
	struct pt_regs r = {};
#else
	struct gctx_uregs r = {}; /* the same x86-64 frame, read without CO-RE (uprobe.bpf.h) */
#endif
	bool vmas_ok;
	long n;

	if (!s)
		return 0;
	vmas_ok = vmas_emit();
	if (!vmas_ok)
		stk_set(tgid, STK_MAPS_AT_EXIT);
	fill_hdr(&s->hdr, GCTX_EV_STACK);
	s->role = role;
	s->trigger = trigger;
	s->key = key;
	s->flags = vmas_ok ? GCTX_STK_VMAS : GCTX_STK_NO_VMAS;
	s->py_status = GCTX_PY_NONE;
	s->py_version = 0;
	s->npy = 0;
	if (!bpf_probe_read_kernel(
		&r, sizeof(r),
		regs_in_ctx ? ctx : (void *)bpf_task_pt_regs(bpf_get_current_task_btf())))
		s->flags |= GCTX_STK_REGS_OK;
	s->regs[0] = r.ax;
	s->regs[1] = r.dx;
	s->regs[2] = r.cx;
	s->regs[3] = r.bx;
	s->regs[4] = r.si;
	s->regs[5] = r.di;
	s->regs[6] = r.bp;
	s->regs[7] = r.sp;
	s->regs[8] = r.r8;
	s->regs[9] = r.r9;
	s->regs[10] = r.r10;
	s->regs[11] = r.r11;
	s->regs[12] = r.r12;
	s->regs[13] = r.r13;
	s->regs[14] = r.r14;
	s->regs[15] = r.r15;
	s->regs[16] = r.ip;
	n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	s->nips = n > 0 ? (__u64)n / 8 : 0;
	/* A read that crosses the end of the stack VMA fails whole: retry up to the page end. */
	len = GCTX_STACK_BYTES;
	if (bpf_probe_read_user(s->stack, len, (void *)r.sp)) {
		len = 4096 + (4096 - (r.sp & 4095));
		if (len > GCTX_STACK_BYTES)
			len = GCTX_STACK_BYTES;
		barrier_var(len);
		if (len == 0 || len > GCTX_STACK_BYTES ||
		    bpf_probe_read_user(s->stack, len, (void *)r.sp)) {
			len = 4096 - (r.sp & 4095);
			barrier_var(len);
			if (len == 0 || len > GCTX_STACK_BYTES ||
			    bpf_probe_read_user(s->stack, len, (void *)r.sp))
				len = 0;
		}
		s->flags |= GCTX_STK_COPY_CUT;
	}
	s->stack_len = len;
	py_walk(s, tgid);
	len += GCTX_EV_STACK_HDR_LEN;
	if (len > sizeof(*s))
		len = sizeof(*s);
	barrier_var(len);
	if (len < GCTX_EV_STACK_HDR_LEN || len > sizeof(*s) ||
	    bpf_ringbuf_output(&events, s, len, BPF_RB_FORCE_WAKEUP))
		__sync_fetch_and_add(&stack_lost, 1);
	return 0;
}

/* A GPU device file was opened (sys_exit_open*): the first one is the process's GPU init. */
static __always_inline void stack_on_open(void *ctx, __u64 file, __s32 fd)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, *st;
	struct stk_file_key k = {.tgid = tgid, .file = file};
	__u8 one = 1;

	st = stk_get(tgid);
	if (!stacks_on) {
		/* no stack, but whether it holds GPU state: its forked children are probed */
		if (!st || !(*st & STK_HOLDS))
			stk_set(tgid, STK_HOLDS);
		return;
	}
	bpf_map_update_elem(&stk_files, &k, &one, BPF_ANY);
	if (st && (*st & STK_INIT_DONE))
		return;
	stk_set(tgid, STK_HOLDS | STK_INIT_DONE);
	stack_emit(ctx, 0, GCTX_STACK_INIT, fd, file);
}

/* GPU ioctl/mmap entry: the first use of each inherited file by this process. */
static __always_inline void stack_on_use(void *ctx, __u64 file, __s32 fd)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, *st;
	struct stk_file_key k = {.tgid = tgid, .file = file};
	__u8 one = 1;

	if (!stacks_on)
		return;
	st = stk_get(tgid);
	if (!st || !(*st & STK_INHERITED))
		return;
	if (bpf_map_lookup_elem(&stk_files, &k))
		return;
	bpf_map_update_elem(&stk_files, &k, &one, BPF_ANY);
	stack_emit(ctx, 0, GCTX_STACK_USE, fd, file);
}

/* A process (not a thread) was forked: in the parent's context. */
/* share_mm: the child shares the parent's address space (CLONE_VM: vfork, posix_spawn), which
 * execs or exits before the parent runs again; fork_hold: hold such a child (not sharing). */
static __always_inline void stack_on_fork(void *ctx, __u32 ptgid, __u32 ctgid, bool share_mm,
					  bool fork_hold)
{
	__u32 *st, bits;
	struct gctx_py_layout *l;

	if (ctgid == ptgid)
		return;
	st = stk_get(ptgid);
	if (st && (*st & STK_HOLDS)) {
		bits = STK_HOLDS | STK_INHERITED | (fork_hold && !share_mm ? STK_FORK_HOLD : 0);
		bpf_map_update_elem(&stk_state, &ctgid, &bits, BPF_ANY);
		if (stacks_on)
			stack_emit(ctx, 0, GCTX_STACK_FORK, ctgid, 0);
	}
	if (!stacks_on)
		return;
	/* The child runs the same interpreter at the same addresses until it execs. */
	l = bpf_map_lookup_elem(&pyinfo, &ptgid);
	if (l)
		bpf_map_update_elem(&pyinfo, &ctgid, l, BPF_ANY);
}

/* clear: more STK_* bits the exec ends */
static __always_inline void stack_on_exec(__u32 tgid, __u32 clear)
{
	__u32 *st = stk_get(tgid);

	if (st)
		__sync_fetch_and_and(st, ~(STK_INIT_DONE | clear));
	forget(&pyinfo, &tgid);
}

#ifndef GCTX_NO_CORE
/* After stack_on_exec: the new image is a known interpreter executable. The kernel set
 * start_code to the load bias plus the lowest executable segment's vaddr before this
 * tracepoint, so the per-file offset places _PyRuntime. */
static __always_inline void stack_py_exec(struct task_struct *task, __u32 tgid)
{
	struct gctx_py_exe_key k = {};
	const struct gctx_py_layout *x;
	struct gctx_py_layout l;
	struct mm_struct *mm;
	struct inode *ino;

	if (!stacks_on)
		return;
	mm = BPF_CORE_READ(task, mm);
	ino = mm ? BPF_CORE_READ(mm, exe_file, f_inode) : NULL;
	if (!ino)
		return;
	k.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	k.ino = BPF_CORE_READ(ino, i_ino);
	x = bpf_map_lookup_elem(&pyexe, &k);
	if (!x)
		return;
	__builtin_memcpy(&l, x, sizeof(l));
	l.runtime += BPF_CORE_READ(mm, start_code);
	bpf_map_update_elem(&pyinfo, &tgid, &l, BPF_ANY);
}
#endif

/* The last thread of a process is exiting, its address space still there: its mappings
 * for what the collector could not symbolise while it lived (before its exit record). */
static __always_inline void stack_exit_maps(__u32 tgid)
{
	__u32 *st = stk_get(tgid);

	if (st && (*st & STK_MAPS_AT_EXIT))
		vmas_emit();
}

static __always_inline void stack_on_exit(__u32 tgid)
{
	forget(&stk_state, &tgid);
	forget(&pyinfo, &tgid);
}

/* CUDA/HIP API entry (api.bpf.c; regs = the probe's pt_regs): cuInit/hipInit is the process's
 * GPU initialisation when it comes first; any call in a process that inherited GPU state
 * through fork is its first inherited use (the real libcuda fails such calls in user space,
 * with no ioctl to catch). */
static __always_inline void stack_on_api(struct pt_regs *regs, __u32 fn, bool is_init)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, *st;

	st = stk_get(tgid);
	if (!st || !(*st & STK_MAPS_AT_EXIT)) {
		stk_set(tgid, STK_MAPS_AT_EXIT); /* its call sites, even with --no-stacks */
		st = stk_get(tgid);
	}
	if (!stacks_on)
		return;
	/* cuInit in a forked child is a use of the parent's state, not an initialisation */
	if (is_init && !(st && (*st & STK_INHERITED))) {
		if (st && (*st & STK_INIT_DONE))
			return;
		stk_set(tgid, STK_HOLDS | STK_INIT_DONE);
		stack_emit(regs, 1, GCTX_STACK_INIT, fn, 0);
		return;
	}
	if (!st || !(*st & STK_INHERITED) || (*st & STK_API_USE_DONE))
		return;
	__sync_fetch_and_or(st, STK_API_USE_DONE);
	stack_emit(regs, 1, GCTX_STACK_USE, fn, 0);
}

#ifndef GCTX_STACK_NO_SIGNAL
/* Synchronous fatal faults and aborts of a process that carries inherited GPU state; the
 * first delivery has the faulting registers (a handler that re-raises comes second). */
SEC("tp/signal/signal_deliver")
int stack_signal(struct trace_event_raw_signal_deliver *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, *st;
	int sig = ctx->sig;

	if (!stacks_on)
		return 0;
	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGABRT)
		return 0;
	st = stk_get(tgid);
	if (!st || !(*st & STK_INHERITED) || (*st & STK_CRASH_DONE))
		return 0;
	__sync_fetch_and_or(st, STK_CRASH_DONE);
	stack_emit(ctx, 0, GCTX_STACK_CRASH, sig, 0);
	return 0;
}
#endif

#endif /* __GPUCTX_STACK_BPF_H */
