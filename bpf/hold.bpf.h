/* SPDX-License-Identifier: GPL-2.0 */
/*
 * First calls of a CUDA/HIP library found late. When a followed process maps a file named like
 * one (libcuda.so*, libamdhip64.so*) executable and that file is not probed yet, stop the
 * process (SIGSTOP, sent here, taken on the way back from mmap; only where no other process
 * would see the stop: hold_visible) and tell the collector at once;
 * the collector probes the file and resumes the process. Holding needs no kprobe: a syscall
 * tracepoint and bpf_send_signal().
 *
 * Never a stop that nothing ends: a hold is made only while the releaser (collect/hold.c, a
 * process of its own that outlives a SIGKILLed collector, named so that a kill aimed at gpuctx
 * misses it) has armed hold_ctl, and the releaser resumes every hold past its timeout and all
 * of them when the collector is gone. A signal that would end or stop both is seen by the
 * guard (bpf/guard.bpf.c) in its sender's syscall, which resumes every hold there.
 * Include after common.bpf.h.
 */
#ifndef __GPUCTX_HOLD_BPF_H
#define __GPUCTX_HOLD_BPF_H

#include "gpuctx_hold.h"
#include "holdmaps.bpf.h"

#define SIG_STOP 19
#define SIG_CONT 18

const volatile bool hold_on = false; /* holding wanted (record without --no-hold) */

__u64 apimap_lost = 0; /* API-library mappings not reported: ring buffer full */

/* Library files whose probes are live, or that are not CUDA/HIP libraries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GCTX_MAX_KNOWN_LIBS);
	__type(key, struct gctx_lib_key);
	__type(value, __u8);
} known_libs SEC(".maps");

/* A process of gpuctx's own executable (it forked and did not exec): never report or hold. */
static __always_inline bool is_self_exe(const struct gctx_hold_ctl *ctl)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct inode *inode = BPF_CORE_READ(t, mm, exe_file, f_inode);

	return ctl && ctl->self_ino && inode && BPF_CORE_READ(inode, i_ino) == ctl->self_ino &&
	       BPF_CORE_READ(inode, i_sb, s_dev) == ctl->self_dev;
}

static __always_inline bool has_prefix(const char *s, const char *p, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] != p[i])
			return false;
	return true;
}

/* As gctx_ldso_is_api_name(): libcuda.so[.*], libamdhip64.so[.*] */
static __always_inline bool is_api_name(const char *name)
{
	return (has_prefix(name, "libcuda.so", 10) && (name[10] == 0 || name[10] == '.')) ||
	       (has_prefix(name, "libamdhip64.so", 14) && (name[14] == 0 || name[14] == '.'));
}

/* The file name at dname (a dentry's) read into buf: is it a CUDA/HIP library's? */
static __always_inline bool api_name_at(const char *dname, char *buf, __u32 len)
{
	return bpf_probe_read_kernel_str(buf, len, dname) >= 0 && is_api_name(buf);
}

/*
 * A hold is a SIGSTOP, and a stop is not private: the parent hears of it (SIGCHLD with
 * CLD_STOPPED, wait with WUNTRACED or WSTOPPED; and of the continue, with WCONTINUED), a
 * tracer sees it, and wrappers and shells act on it: runuser, su and sudo stop themselves to
 * mirror it and stay stopped, a job-control shell reports the job Stopped. No stop the kernel
 * offers is invisible to the parent, so a process is held only where nobody but gpuctx can be
 * told: its parent is gpuctx, or a followed process that shows no sign of watching its
 * children's stops (stop_watched), and no tracer is attached to it. Anything else is not
 * held, and the window is reported (GCTX_APIMAP_WATCHED, GCTX_APIMAP_OUTSIDE).
 */
#define SIGCHLD_IDX    16 /* SIGCHLD - 1 */
#define K_SA_NOCLDSTOP 1
#define K_SA_SIGINFO   4
#define K_WUNTRACED    2 /* WSTOPPED for waitid */
#define K_WCONTINUED   8
#define NR_WAIT4       61
#define NR_WAITID      247

/* Followed processes (tgid) seen calling wait for stops or continues: a parent that once
 * asked may ask again while its child is held. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GCTX_MAX_STOP_WATCHERS);
	__type(key, __u32);
	__type(value, __u8);
} stop_watchers SEC(".maps");

static __always_inline void note_wait(unsigned long options)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 one = 1;

	if ((options & (K_WUNTRACED | K_WCONTINUED)) && is_followed(tgid))
		bpf_map_update_elem(&stop_watchers, &tgid, &one, BPF_ANY);
}

SEC("tp/syscalls/sys_enter_wait4")
int hold_wait4(struct gctx_tp_enter_wait4 *ctx)
{
	note_wait(ctx->options);
	return 0;
}

SEC("tp/syscalls/sys_enter_waitid")
int hold_waitid(struct gctx_tp_enter_waitid *ctx)
{
	note_wait(ctx->options);
	return 0;
}

/*
 * Would parent p see its child t stop? Yes when p: has waited for stops while followed (above)
 * or is in such a wait now (an old wait, from before gpuctx came); has SIGCHLD blocked (read by
 * signalfd or sigwaitinfo, whose siginfo says CLD_STOPPED) or caught with SA_SIGINFO without
 * SA_NOCLDSTOP; or does job control (t is in a process group of its own: a job-control shell
 * puts each job in one). A plain SIGCHLD handler is not a sign: every bash has one, and it
 * waits without WUNTRACED unless job control is on.
 */
static __always_inline bool stop_watched(struct task_struct *t, struct task_struct *p, bool fork)
{
	struct k_sigaction *sa = &p->sighand->action[SIGCHLD_IDX];
	unsigned long handler = (unsigned long)sa->sa.sa_handler, flags = sa->sa.sa_flags;
	__u32 ptgid = p->tgid;
	struct pt_regs *regs;
	__u64 nr, opts = 0;

	if (bpf_map_lookup_elem(&stop_watchers, &ptgid))
		return true;
	/* Not for a child held back from fork: its parent, the process that just forked it, is
	 * caught with SIGCHLD blocked by what blocks it for a moment (pthread_create and
	 * posix_spawn block every signal, a SIGCHLD handler runs with SIGCHLD blocked: a
	 * DataLoader's parent, every few epochs), and that child would go unprobed. */
	if (!fork &&
	    ((p->blocked.sig[0] | p->group_leader->blocked.sig[0]) & (1ull << SIGCHLD_IDX)))
		return true;
	if (handler > 1 && (flags & K_SA_SIGINFO) && !(flags & K_SA_NOCLDSTOP))
		return true;
	if (t->signal->pids[PIDTYPE_PGID] != p->signal->pids[PIDTYPE_PGID])
		return true;
	regs = (struct pt_regs *)bpf_task_pt_regs(p);
	if (!regs)
		return true;
	nr = regs->orig_ax;
	if (nr == NR_WAIT4)
		opts = regs->dx;
	else if (nr == NR_WAITID)
		opts = regs->r10;
	return opts & (K_WUNTRACED | K_WCONTINUED);
}

/* GCTX_APIMAP_HELD-able (0), or why not: the parent is outside the traced job (-p, --cgroup),
 * or someone would see the stop. */
static __always_inline __u32 hold_visible(bool fork)
{
	struct task_struct *t = bpf_get_current_task_btf(), *p = t->real_parent;
	__u32 ptgid = p->tgid;

	if (t->ptrace)
		return GCTX_APIMAP_WATCHED; /* a tracer sees every stop */
	if (ptgid == self_tgid)
		return 0; /* gpuctx waits for its command without WUNTRACED, no SIGCHLD handler */
	if (!follow_all && !bpf_map_lookup_elem(&followed, &ptgid))
		return GCTX_APIMAP_OUTSIDE;
	return stop_watched(t, p, fork) ? GCTX_APIMAP_WATCHED : 0;
}

/* Stop the current process (e's) until the collector has done what e asks, when holding is
 * on and nobody but gpuctx would see the stop; e->flags say what happened. */
static __always_inline void hold_current(struct gctx_ev_apimap *e, struct gctx_hold_ctl *ctl)
{
	__u32 tgid = e->hdr.tgid, flags;

	if (!hold_on || !ctl || !ctl->armed) {
		e->flags |= GCTX_APIMAP_NO_HOLD;
	} else if ((flags = hold_visible(e->flags & GCTX_APIMAP_FORK))) {
		e->flags |= flags; /* not held: GCTX_APIMAP_OUTSIDE or GCTX_APIMAP_WATCHED */
	} else {
		struct task_struct *t = bpf_get_current_task_btf();
		struct gctx_hold_val v = {
		    .since_ns = e->hdr.ts_ns,
		    .tid = e->hdr.tid,
		    .dev = e->dev,
		    .ino = e->ino,
		    .ptgid = BPF_CORE_READ(t, real_parent, tgid),
		};

		/* one hold per process: a second mapping racing the stop is reported unheld */
		flags = GCTX_APIMAP_FAILED;
		if (!bpf_map_update_elem(&holds, &tgid, &v, BPF_NOEXIST)) {
			if (!bpf_send_signal(SIG_STOP)) {
				flags = GCTX_APIMAP_HELD;
				ctl->last_hold_ns = e->hdr.ts_ns; /* the guard looks then */
			} else
				bpf_map_delete_elem(&holds, &tgid);
		}
		e->flags |= flags;
	}
}

/* A record of the current process, for the collector (NULL: gpuctx's own process, or the ring
 * is full, counted); *ctl: the hold control. */
static __always_inline struct gctx_ev_apimap *apimap_reserve(struct gctx_hold_ctl **ctl)
{
	struct gctx_ev_apimap *e;
	__u32 zero = 0;

	*ctl = bpf_map_lookup_elem(&hold_ctl, &zero);
	if (is_self_exe(*ctl))
		return NULL;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&apimap_lost, 1);
		return NULL;
	}
	fill_hdr(&e->hdr, GCTX_EV_APIMAP);
	e->flags = 0;
	return e;
}

/* An executable mapping of f, the file (dev, ino), by the current (followed) process; the
 * caller found it not in known_libs. */
static __noinline void watch_apimap(struct file *f, __u32 dev, __u64 ino)
{
	struct gctx_ev_apimap *e;
	struct gctx_hold_ctl *ctl;

	if (!f)
		return;
	e = apimap_reserve(&ctl);
	if (!e)
		return;
	if (!api_name_at((const char *)BPF_CORE_READ(f, f_path.dentry, d_name.name), e->name,
			 sizeof(e->name))) {
		bpf_ringbuf_discard(e, 0);
		return;
	}
	e->dev = dev;
	e->ino = ino;
	hold_current(e, ctl);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* The current process is a child forked without exec from one holding GPU state, back from
 * fork before its first user instruction: the collector attaches probes on every CUDA/HIP
 * function for it alone (a healthy process's calls pay nothing), then resumes it. */
static __noinline void watch_fork(void)
{
	struct gctx_ev_apimap *e;
	struct gctx_hold_ctl *ctl;

	e = apimap_reserve(&ctl);
	if (!e)
		return;
	e->dev = 0;
	e->ino = 0;
	__builtin_memset(e->name, 0, sizeof(e->name));
	e->flags = GCTX_APIMAP_FORK;
	hold_current(e, ctl);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * A SIGCONT to a held process: the releaser and the collector delete the hold before they
 * send theirs, so one that finds the hold still there comes from elsewhere (the job's own
 * shell, another tracer) and ended the hold early: say so, the collector reports the gap.
 * Another gpuctx's, where the guard runs, is answered there with a second stop instead.
 */
SEC("tp/signal/signal_generate")
int hold_sigcont(struct trace_event_raw_signal_generate *ctx)
{
	struct gctx_hold_val *v = held_at_sigcont(ctx);
	struct gctx_hold_ctl *ctl;
	__u32 zero = 0;

	if (!v)
		return 0;
	ctl = bpf_map_lookup_elem(&hold_ctl, &zero);
	if (ctl && ctl->restop && from_gpuctx_peer())
		return 0;
	v->resumed = GCTX_HOLD_RESUMED_ELSEWHERE;
	return 0;
}

/* The process is gone: nothing to resume. A hold resumed early stays until the collector has
 * read why (or the releaser's timeout): nobody sends it a SIGCONT. */
static __always_inline void hold_forget(__u32 tgid)
{
	struct gctx_hold_val *v = bpf_map_lookup_elem(&holds, &tgid);

	if (v && !v->resumed)
		bpf_map_delete_elem(&holds, &tgid);
	forget(&stop_watchers, &tgid);
}

#endif /* __GPUCTX_HOLD_BPF_H */
