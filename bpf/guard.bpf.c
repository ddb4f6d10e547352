// SPDX-License-Identifier: GPL-2.0
/*
 * The guard of holds (bpf/hold.bpf.h makes them, collect/hold.c releases them). A hold is a
 * SIGSTOP, so two things outside gpuctx's control can turn it into harm, and both are seen
 * here, in the syscall of the process that causes them, where a signal can still be sent:
 *
 *  - a signal that ends the collector or ends or stops the releaser (kill(2) and its kin, as
 *    from `kill -9 PID`, pkill, a pidfd): every hold is resumed and holding is disarmed before
 *    the signal is delivered, so no stop outlives gpuctx however it dies;
 *  - a held process's parent starting to wait for its children's stops (wait4 with WUNTRACED,
 *    waitid with WSTOPPED or WCONTINUED): the child is resumed before the wait looks, so the
 *    parent is never told of a stop it did not cause.
 *
 * A hold resumed here keeps its entry, marked with why; the collector reports the gap and sends
 * no second SIGCONT. Resuming another process needs bpf_send_signal_task() (Linux 6.13): where
 * this object does not load, the collector says so and holds keep only the releaser.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gpuctx_hold.h"
#include "holdmaps.bpf.h"
#include "tpctx.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define SIG_KILL     9
#define SIG_CONT     18
#define SIG_STOP     19
#define K_WUNTRACED  2 /* WSTOPPED for waitid */
#define K_WCONTINUED 8
#define K_EBUSY	     16

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern struct task_struct *bpf_task_from_vpid(s32 vpid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				u64 value) __ksym;

/* How long after the latest hold one may still be live: the hold timeout and a margin (set
 * by the collector). */
const volatile __u64 hold_live_ns = 60ull * 1000000000ull;

__u64 guard_resumed = 0; /* holds resumed here */
__u64 guard_failed = 0;	 /* holds whose SIGCONT could not be sent */

struct resume_ctx {
	__u32 ptgid; /* only the children of this process; 0: every hold */
	__u32 why;   /* GCTX_HOLD_RESUMED_* */
};

static long resume_one(struct bpf_map *map, __u32 *key, struct gctx_hold_val *v,
		       struct resume_ctx *rc)
{
	struct task_struct *t;

	if (v->resumed || (rc->ptgid && v->ptgid != rc->ptgid))
		return 0;
	/* marked first: the SIGCONT below does not run hold.bpf.h's signal program (no BPF
	 * program runs inside another on the same CPU) */
	v->resumed = rc->why;
	t = bpf_task_from_pid(*key);
	if (!t)
		return 0;
	if (bpf_send_signal_task(t, SIG_CONT, PIDTYPE_TGID, 0))
		__sync_fetch_and_add(&guard_failed, 1);
	else
		__sync_fetch_and_add(&guard_resumed, 1);
	bpf_task_release(t);
	return 0;
}

/* The control entry once gpuctx has set the guard up, or NULL. */
static __always_inline struct gctx_hold_ctl *guard_ctl(void)
{
	__u32 zero = 0;
	struct gctx_hold_ctl *ctl = bpf_map_lookup_elem(&hold_ctl, &zero);

	return ctl && ctl->collector ? ctl : NULL;
}

/* Would sig, sent to t, end it (or stop it, when stops counts)? Its own handlers (the
 * collector's SIGTERM and SIGINT, the releaser's SIGTERM) end holds themselves; ignored
 * signals do nothing. */
static __always_inline bool ends(struct task_struct *t, __u32 sig, bool stops)
{
	struct sighand_struct *sh;
	unsigned long handler = 0;

	if (sig == SIG_KILL || sig == SIG_STOP)
		return sig == SIG_KILL || stops;
	if (sig < 1 || sig > 64)
		return false;
	sh = BPF_CORE_READ(t, sighand);
	if (!sh ||
	    bpf_core_read(&handler, sizeof(handler), &sh->action[(sig - 1) & 63].sa.sa_handler))
		return true;
	if (handler)
		return false; /* caught, or ignored */
	/* the default action: ignore SIGCHLD, SIGCONT, SIGURG, SIGWINCH; stop on SIGTSTP,
	 * SIGTTIN, SIGTTOU; end on the others */
	if (sig == 17 || sig == SIG_CONT || sig == 23 || sig == 28)
		return false;
	return stops || (sig != 20 && sig != 21 && sig != 22);
}

static void trip(struct gctx_hold_ctl *ctl, __u32 sig)
{
	struct resume_ctx rc = {.ptgid = 0, .why = GCTX_HOLD_RESUMED_ABORT};

	ctl->armed = 0;
	ctl->tripped = sig;
	bpf_for_each_map_elem(&holds, resume_one, &rc, 0);
}

/* Is tgid (init namespace) the collector or the releaser, and would sig end it? A stopped
 * collector is no harm (the releaser's timeout resumes its holds); a stopped releaser is. */
static __always_inline bool hits(struct gctx_hold_ctl *ctl, __u32 tgid, __u32 sig)
{
	struct task_struct *t;
	bool ret;

	if (!tgid || (tgid != ctl->collector && tgid != ctl->releaser))
		return false;
	t = bpf_task_from_pid(tgid);
	if (!t)
		return false;
	ret = ends(t, sig, tgid == ctl->releaser);
	bpf_task_release(t);
	return ret;
}

/* The process group (struct pid) of tgid, or NULL. */
static __always_inline void *pgrp_of(__u32 tgid)
{
	struct task_struct *t = bpf_task_from_pid(tgid);
	void *pg;

	if (!t)
		return NULL;
	pg = BPF_CORE_READ(t, signal, pids[PIDTYPE_PGID]);
	bpf_task_release(t);
	return pg;
}

/* A kill(2) target, as the sender names it in its own pid namespace: a process (> 0), its own
 * process group (0), a process group (< -1), or every process (-1). */
static __always_inline void check_kill(long pid, __u32 sig, bool thread)
{
	struct gctx_hold_ctl *ctl;
	struct task_struct *t;
	void *pg = NULL;
	__u32 tgid = 0;

	/* any time, not only while a hold lives: a releaser stopped or gone would leave the
	 * next hold without its timeout */
	if (!sig)
		return;
	ctl = guard_ctl();
	if (!ctl)
		return;
	if (pid == -1 && !thread) {
		if (hits(ctl, ctl->releaser, sig) || hits(ctl, ctl->collector, sig))
			trip(ctl, sig);
		return;
	}
	if (pid > 0) {
		t = bpf_task_from_vpid(pid);
		if (!t)
			return;
		tgid = t->tgid;
		bpf_task_release(t);
		if (hits(ctl, tgid, sig))
			trip(ctl, sig);
		return;
	}
	if (thread)
		return;
	if (pid == 0) {
		pg = BPF_CORE_READ(bpf_get_current_task_btf(), signal, pids[PIDTYPE_PGID]);
	} else {
		/* the group's leader names it; a group whose leader is gone is missed */
		t = bpf_task_from_vpid(-pid);
		if (!t)
			return;
		pg = BPF_CORE_READ(t, signal, pids[PIDTYPE_PGID]);
		bpf_task_release(t);
	}
	if (!pg)
		return;
	if ((pg == pgrp_of(ctl->releaser) && hits(ctl, ctl->releaser, sig)) ||
	    (pg == pgrp_of(ctl->collector) && hits(ctl, ctl->collector, sig)))
		trip(ctl, sig);
}

SEC("tp/syscalls/sys_enter_kill")
int guard_kill(struct gctx_tp_enter_kill *ctx)
{
	check_kill((int)ctx->pid, (__u32)ctx->sig, false);
	return 0;
}

SEC("tp/syscalls/sys_enter_rt_sigqueueinfo")
int guard_sigqueue(struct gctx_tp_enter_kill *ctx)
{
	check_kill((int)ctx->pid, (__u32)ctx->sig, false);
	return 0;
}

SEC("tp/syscalls/sys_enter_tkill")
int guard_tkill(struct gctx_tp_enter_kill *ctx)
{
	check_kill((int)ctx->pid, (__u32)ctx->sig, true);
	return 0;
}

SEC("tp/syscalls/sys_enter_tgkill")
int guard_tgkill(struct gctx_tp_enter_tgkill *ctx)
{
	check_kill((int)ctx->pid, (__u32)ctx->sig, true);
	return 0;
}

SEC("tp/syscalls/sys_enter_rt_tgsigqueueinfo")
int guard_tgsigqueue(struct gctx_tp_enter_tgkill *ctx)
{
	check_kill((int)ctx->pid, (__u32)ctx->sig, true);
	return 0;
}

/* pidfd_send_signal(2): the pidfd's inode holds the struct pid of the process it names. */
SEC("tp/syscalls/sys_enter_pidfd_send_signal")
int guard_pidfd(struct gctx_tp_enter_pidfd_send_signal *ctx)
{
	struct task_struct *cur = bpf_get_current_task_btf(), *t;
	struct gctx_hold_ctl *ctl;
	struct file **fds, *f = NULL;
	unsigned int fd = ctx->pidfd, max;
	__u32 sig = ctx->sig, tgids[2];
	void *pid;

	if (!sig)
		return 0;
	ctl = guard_ctl();
	if (!ctl)
		return 0;
	max = BPF_CORE_READ(cur, files, fdt, max_fds);
	fds = BPF_CORE_READ(cur, files, fdt, fd);
	if (fd >= max || !fds || bpf_core_read(&f, sizeof(f), &fds[fd & 0xfffff]) || !f)
		return 0;
	pid = BPF_CORE_READ(f, f_inode, i_private); /* pidfs keeps the struct pid there */
	tgids[0] = ctl->releaser;
	tgids[1] = ctl->collector;
	for (int i = 0; i < 2; i++) {
		bool hit;

		t = tgids[i] ? bpf_task_from_pid(tgids[i]) : NULL;
		if (!t)
			continue;
		hit =
		    BPF_CORE_READ(t, thread_pid) == pid && ends(t, sig, tgids[i] == ctl->releaser);
		bpf_task_release(t);
		if (hit) {
			trip(ctl, sig);
			break;
		}
	}
	return 0;
}

/* A parent starting to wait for stops: resume its held children before the wait looks. */
static __always_inline void check_wait(unsigned long options)
{
	struct resume_ctx rc = {.why = GCTX_HOLD_RESUMED_WAIT};
	struct gctx_hold_ctl *ctl;

	if (!(options & (K_WUNTRACED | K_WCONTINUED)))
		return;
	/* no hold can be live long after the latest was made: the releaser's timeout ends it */
	ctl = guard_ctl();
	if (!ctl || !ctl->last_hold_ns || bpf_ktime_get_ns() - ctl->last_hold_ns > hold_live_ns)
		return;
	rc.ptgid = bpf_get_current_pid_tgid() >> 32;
	bpf_for_each_map_elem(&holds, resume_one, &rc, 0);
}

SEC("tp/syscalls/sys_enter_wait4")
int guard_wait4(struct gctx_tp_enter_wait4 *ctx)
{
	check_wait(ctx->options);
	return 0;
}

SEC("tp/syscalls/sys_enter_waitid")
int guard_waitid(struct gctx_tp_enter_waitid *ctx)
{
	check_wait(ctx->options);
	return 0;
}

__u64 guard_restops = 0;       /* holds stopped again after another gpuctx's SIGCONT */
__u64 guard_restop_failed = 0; /* ... and those that could not be: resumed, a gap */

/*
 * Two gpuctx (a node's agent beside a user's record) hold the same process at the same
 * mapping; the first whose probes are in resumes it while ours may not be. Its SIGCONT is
 * answered with a SIGSTOP, sent once the signal lock is dropped (the helper defers it while
 * interrupts are off), so the process stays held until we resume it too. A SIGCONT from
 * anyone else (the job's shell) ends the hold as before (hold.bpf.h marks it).
 */
SEC("tp/signal/signal_generate")
int guard_peer_cont(struct trace_event_raw_signal_generate *ctx)
{
	struct gctx_hold_val *v = held_at_sigcont(ctx);
	struct gctx_hold_ctl *ctl;
	struct task_struct *t;
	long ret;

	if (!v)
		return 0;
	ctl = guard_ctl();
	if (!ctl || !ctl->restop || !from_gpuctx_peer())
		return 0;
	/* stamped before the stop is queued, under the target's signal lock: a release that
	 * sends its SIGCONT after this takes that lock after us, sees the stamp, and looks
	 * again for a stop that landed after its SIGCONT (collect/hold.c resume()) */
	ctl->last_restop_ns = bpf_ktime_get_ns();
	t = bpf_task_from_pid(ctx->pid);
	ret = t ? bpf_send_signal_task(t, SIG_STOP, PIDTYPE_TGID, 0) : -1;
	/* -EBUSY: this CPU's one deferred signal is taken, under the same signal lock (the
	 * deferral runs once interrupts are back on): by a third gpuctx's guard answering this
	 * SIGCONT with the same stop, which holds the process for us too */
	if (!ret || ret == -K_EBUSY) {
		__sync_fetch_and_add(&v->restops, 1);
		__sync_fetch_and_add(&guard_restops, 1);
	} else {
		v->resumed = GCTX_HOLD_RESUMED_ELSEWHERE;
		__sync_fetch_and_add(&guard_restop_failed, 1);
	}
	if (t)
		bpf_task_release(t);
	return 0;
}
