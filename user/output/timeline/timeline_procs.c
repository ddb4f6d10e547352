// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline of processes and threads: the process track with its life slice (argv, exit status),
 * exec instants and renames, a track and life slice per thread, fork and clone flows, and the
 * end of a process (which closes what it still holds). Also the record handlers of fork, exec,
 * exit and processes present at attach.
 */
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "output/report/print.h"
#include "output/timeline/timeline_priv.h"
#include "trace/records.h"

#define CHAIN_MAX 64 /* parents walked to find a forked child's argv */

/* ---- processes and threads ---- */

/* argv of p at time ts: its own (exec or attach), else its fork parent's at the fork. */
static const char *proc_argv(const struct gctx_model *m, const struct gctx_proc *p, __u64 ts,
			     __u32 *len)
{
	int depth;
	__u32 i;

	for (depth = 0; p && depth < CHAIN_MAX; depth++) {
		for (i = p->nexecs; i > 0; i--) {
			if (p->execs[i - 1].ts_ns <= ts) {
				*len = p->execs[i - 1].args_len;
				return p->execs[i - 1].args;
			}
		}
		if (p->args_len) {
			*len = p->args_len;
			return p->args;
		}
		if (p->parent_idx < 0 || !p->start_ns)
			break;
		ts = p->start_ns;
		p = gctx_model__proc(m, p->parent_idx);
	}
	*len = 0;
	return NULL;
}

static void proc_cmdline(struct exporter *x, __u32 pi, __u64 ts)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	const char *argv;
	__u32 len;

	if (p->nexecs) {
		argv = p->execs[p->nexecs - 1].args;
		len = p->execs[p->nexecs - 1].args_len;
	} else {
		argv = p->args;
		len = p->args_len;
	}
	if (!len)
		return;
	x->procs[pi].cmdline_done = true;
	x->s->ops->cmdline(x->s, ts, p->pid, p->ppid, argv, len);
}

/* Describe thread ti of process pi and begin its life slice; flow_in ends a clone flow. */
static void thread_describe(struct exporter *x, __u32 pi, __u32 ti, __u64 flow_in)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	const struct gctx_thread *th = &p->threads[ti];
	struct xproc *xp = &x->procs[pi];
	struct xthread *xt = &xp->th[ti];
	struct gctx_tl_track t;
	struct args a;
	char name[32];

	xt->begin_ts = max64(th->start_ns ? th->start_ns : x->now, xp->begin_ts);
	if (gctx_hmap__put(&x->thread_map, pi, th->tid, ti))
		nomem(x);
	tl_trk_thread(x, pi, ti, &t);
	gctx_name_thread(xt->name, sizeof(xt->name), th);
	t.name = xt->name;
	tl_describe(x, &t, xt->begin_ts);
	xt->described = true;
	if (th->tid == p->pid)
		return; /* the main thread's life is the process's, on the process track */
	snprintf(name, sizeof(name), "thread %u", th->tid);
	a.n = 0;
	tl_arg_u64(&a, "tid", th->tid);
	if (!th->start_ns)
		tl_arg_bool(&a, "started_before_trace", true);
	tl_emit(x, 'B', &t, xt->begin_ts, name, "thread", &a, 0, flow_in);
	xt->open = true;
}

static void thread_end(struct exporter *x, __u32 pi, __u32 ti, __u64 ts)
{
	struct xthread *xt = &x->procs[pi].th[ti];
	struct gctx_tl_track t;
	struct args a;

	if (!xt->open)
		return;
	tl_trk_thread(x, pi, ti, &t);
	a.n = 0;
	tl_arg_str(&a, "comm", xt->name); /* its last name */
	tl_emit(x, 'E', &t, max64(ts, xt->begin_ts), NULL, NULL, &a, 0, 0);
	xt->open = false;
}

/* Describe the threads the model added, up to index limit (exclusive); the one at index
 * flow_ti gets the clone flow flow_in. */
static void threads_upto(struct exporter *x, __u32 pi, __u32 limit, int flow_ti, __u64 flow_in)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	__u32 i;

	if (limit > p->nthreads)
		limit = p->nthreads;
	if (limit <= xp->nth)
		return;
	if (gctx_grow(&xp->th, &xp->cap_th, p->nthreads, sizeof(*xp->th))) {
		nomem(x);
		return;
	}
	for (i = xp->nth; i < limit; i++)
		thread_describe(x, pi, i, (int)i == flow_ti ? flow_in : 0);
	xp->nth = limit;
}

/* Describe the threads the model added since the last call; end those that exited. */
static void threads_sync(struct exporter *x, __u32 pi, bool exits)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	__u32 i;

	threads_upto(x, pi, p->nthreads, -1, 0);
	if (!exits)
		return;
	for (i = 0; i < xp->nth; i++)
		if (p->threads[i].exited)
			thread_end(x, pi, i, p->threads[i].exit_ns);
}

/* Index of the newest thread tid of process pi, or -1. */
int tl_thread_index(struct exporter *x, __u32 pi, __u32 tid)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	__u32 i, ti;

	for (i = p->nthreads; i > x->procs[pi].nth; i--) /* not described yet: the newest */
		if (p->threads[i - 1].tid == tid)
			return (int)i - 1;
	if (gctx_hmap__get(&x->thread_map, pi, tid, &ti))
		return (int)ti;
	return -1;
}

/* A process that took a new name (exec, prctl, or one learnt late): tell the sink. */
static void proc_rename_check(struct exporter *x, __u32 pi, __u64 ts)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	struct gctx_tl_track t;
	char name[GCTX_NAME_LEN];

	gctx_name_proc(name, sizeof(name), p);
	if (!xp->described || !strcmp(xp->name, name))
		return;
	memcpy(xp->name, name, sizeof(name));
	tl_trk_proc(x, pi, &t);
	t.name = xp->name;
	x->s->ops->rename(x->s, &t, max64(ts, xp->begin_ts));
}

static void thread_rename_check(struct exporter *x, __u32 pi, __u32 ti, __u64 ts)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	struct xthread *xt;
	struct gctx_tl_track t;
	char name[GCTX_NAME_LEN];

	if (ti >= xp->nth || !xp->th[ti].described)
		return;
	xt = &xp->th[ti];
	gctx_name_thread(name, sizeof(name), &p->threads[ti]);
	if (!strcmp(xt->name, name))
		return;
	memcpy(xt->name, name, sizeof(name));
	tl_trk_thread(x, pi, ti, &t);
	t.name = xt->name;
	x->s->ops->rename(x->s, &t, max64(ts, xt->begin_ts));
}

/* A thread or process that took a new name (exec, prctl): tell the sink. */
static void rename_check(struct exporter *x, __u32 pi, __u32 tid, __u64 ts)
{
	int ti = tl_thread_index(x, pi, tid);

	proc_rename_check(x, pi, ts);
	if (ti >= 0)
		thread_rename_check(x, pi, (__u32)ti, ts);
}

/* The process track and its life slice, once; flow_in ends a fork flow at the life slice. */
void tl_proc_describe(struct exporter *x, __u32 pi, __u64 flow_in)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = tl_xp(x, pi);
	struct gctx_tl_track t;
	const char *argv;
	struct args a;
	char name[32];
	__u32 len;
	__u64 ts;

	if (!xp || xp->described)
		return;
	if (p->start_ns && !p->present_at_attach)
		ts = p->start_ns; /* fork */
	else if (p->start_ns)
		ts = max64(p->start_ns, x->meta.start_mono_ns); /* started before the trace */
	else
		ts = x->now;
	xp->described = true;
	xp->begin_ts = ts;
	gctx_name_proc(xp->name, sizeof(xp->name), p);
	tl_trk_proc(x, pi, &t);
	t.name = xp->name;
	tl_describe(x, &t, ts);
	proc_cmdline(x, pi, ts);

	snprintf(name, sizeof(name), "process %u", p->pid);
	a.n = 0;
	tl_arg_u64(&a, "pid", p->pid);
	if (p->ppid)
		tl_arg_u64(&a, "ppid", p->ppid);
	argv = proc_argv(x->m, p, ts, &len);
	if (argv)
		tl_arg_strv(&a, "argv", argv, len);
	if (p->exe[0])
		tl_arg_strn(&a, "exe", p->exe, GCTX_PATH_LEN);
	if (p->present_at_attach)
		tl_arg_bool(&a, "present_at_attach", true);
	if (p->start_ns)
		tl_arg_u64(&a, "start_ns", p->start_ns);
	else
		tl_arg_bool(&a, "started_before_trace", true);
	tl_emit(x, 'B', &t, ts, name, "process", &a, 0, flow_in);
	xp->open = true;
	threads_sync(x, pi, false);
}

/* ---- process end ---- */

void tl_proc_end(struct exporter *x, __u32 pi, __u64 ts, bool at_end)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	struct gctx_tl_track t;
	char sig[32];
	struct args a;
	__u32 i;

	if (!xp->open)
		return;
	ts = max64(ts, xp->begin_ts);
	tl_findings_flush(x, pi);
	tl_proc_holders_sync(x, pi);
	if (at_end) {
		/* still running at the end of the trace: close what it holds at the end */
		while (xp->nheld) {
			struct href r = xp->held[xp->nheld - 1];
			struct xholder *xh = &x->files[r.file_idx].h[r.holder_idx];

			tl_trk_holder(x, r.file_idx, r.holder_idx, &t);
			xh->cursor = max64(ts, xh->cursor);
			tl_emit(x, 'E', &t, xh->cursor, NULL, NULL, NULL, 0, 0);
			xh->open = false;
			xp->nheld--;
			tl_live_files(x, pi, -1, ts);
		}
	}
	tl_actxs_sync(x, pi, max64(ts, xp->begin_ts));
	if (xp->mem_api) { /* what it allocated through the API went with it */
		xp->mem_api = 0;
		tl_counter(x, pi, CTR_MEM_API, ts, 0);
	}
	threads_sync(x, pi, true);
	for (i = 0; i < xp->nth; i++) {
		thread_rename_check(x, pi, i, ts);
		thread_end(x, pi, i, ts);
	}
	xp->end_ts = ts;
	tl_rate_flush(x, pi, 0, true);
	proc_rename_check(x, pi, ts);
	a.n = 0;
	tl_arg_str(&a, "comm", xp->name); /* its last name (output/names.h) */
	if (at_end) {
		tl_arg_bool(&a, "running_at_end", true);
	} else if (p->signal) {
		gctx_format_signal(sig, sizeof(sig), p->signal);
		tl_arg_str(&a, "signal", sig);
		if (p->core_dumped)
			tl_arg_bool(&a, "core_dumped", true);
	} else if (p->exit_code >= 0) {
		tl_arg_s64(&a, "exit_code", p->exit_code);
	} else {
		tl_arg_bool(&a, "exit_not_seen", true);
	}
	tl_trk_proc(x, pi, &t);
	tl_emit(x, 'E', &t, ts, NULL, NULL, &a, 0, 0);
	xp->open = false;
	t.name = xp->name;
	x->s->ops->process_end(x->s, &t, ts);
}

/* ---- record handlers (after the model took the record) ---- */

/* The process of a kernel record: described, its threads and name in sync. */
int tl_event_proc(struct exporter *x, const struct gctx_ev_hdr *hdr)
{
	int pi = tl_proc_index(x->m, hdr->tgid);

	if (pi < 0 || !tl_xp(x, pi))
		return -1;
	tl_proc_describe(x, pi, 0);
	threads_sync(x, pi, false);
	rename_check(x, pi, hdr->tid, hdr->ts_ns);
	return pi;
}

void tl_on_fork(struct exporter *x, const struct gctx_ev_fork *ev, int old_pi)
{
	bool thread = (ev->flags & GCTX_FORK_THREAD) || ev->child_tgid == ev->hdr.tgid;
	const struct gctx_proc *par;
	struct gctx_tl_track t;
	struct xproc *xp;
	char name[48];
	struct args a;
	int pi, ci = -1, ti, nti = -1;
	__u64 flow = 0;
	__u32 i;

	if (old_pi >= 0 && gctx_model__proc(x->m, old_pi)->exited && tl_xp(x, old_pi))
		tl_proc_end(x, old_pi, ev->hdr.ts_ns, false); /* its exit was missed */
	pi = tl_proc_index(x->m, ev->hdr.tgid);
	if (pi < 0 || !tl_xp(x, pi))
		return;
	tl_proc_describe(x, pi, 0);
	par = gctx_model__proc(x->m, pi);
	xp = &x->procs[pi];
	ti = tl_thread_index(x, pi, ev->hdr.tid);
	if (ti >= 0)
		threads_upto(x, pi, ti + 1, -1, 0); /* the forking thread, before the new one */
	rename_check(x, pi, ev->hdr.tid, ev->hdr.ts_ns);
	if (thread) {
		nti = tl_thread_index(x, pi, ev->child_tid);
		if (nti < 0 || (__u32)nti < xp->nth) /* described already */
			ti = -1;
	} else {
		threads_sync(x, pi, false);
		ci = tl_proc_index(x->m, ev->child_tgid);
		if (ci < 0 || ci == pi || !tl_xp(x, ci))
			return;
		xp = &x->procs[pi];
		if (x->procs[ci].described)
			ti = -1;
	}
	if (ti >= 0 && (__u32)ti < xp->nth) {
		tl_trk_thread(x, pi, ti, &t);
		flow = tl_new_flow(x);
		a.n = 0;
		if (thread) {
			snprintf(name, sizeof(name), "clone thread %u", ev->child_tid);
			tl_arg_u64(&a, "child_tid", ev->child_tid);
		} else {
			snprintf(name, sizeof(name), "fork %u", ev->child_tgid);
			tl_arg_u64(&a, "child_pid", ev->child_tgid);
			tl_stack_add(x, &a, 1u << GCTX_STACK_FORK, ev->hdr.tgid, ev->child_tgid,
				     ev->hdr.ts_ns, ev->hdr.ts_ns);
		}
		tl_emit(x, 'I', &t, ev->hdr.ts_ns, name, "fork", &a, flow, 0);
	}
	if (thread) {
		threads_upto(x, pi, par->nthreads, nti, flow);
		return;
	}
	tl_proc_describe(x, ci, flow);
	/* the child holds what the parent held: inheritance flows file -> file */
	for (i = 0; i < x->procs[pi].nheld && !x->err; i++)
		tl_holders_new(x, x->procs[pi].held[i].file_idx);
}

void tl_on_exec(struct exporter *x, const struct gctx_ev_exec *ev)
{
	const struct gctx_proc *p;
	const struct gctx_exec *e;
	struct gctx_tl_track t;
	struct xproc *xp;
	char name[GCTX_PATH_LEN + 8], file[GCTX_PATH_LEN];
	const char *base;
	struct args a;
	int pi, fi;
	__u32 i;

	pi = tl_event_proc(x, &ev->hdr);
	if (pi < 0)
		return;
	p = gctx_model__proc(x->m, pi);
	xp = &x->procs[pi];
	threads_sync(x, pi, true);
	tl_proc_holders_sync(x, pi);
	for (i = 0; i < xp->nkept && !x->err; i++) {
		fi = tl_file_index(x->m, xp->kept[i]);
		if (fi >= 0)
			tl_holder_of(x, pi, fi);
	}
	xp->nkept = 0;
	tl_actxs_sync(x, pi, 0);
	if (!p->nexecs)
		return;
	e = &p->execs[p->nexecs - 1];
	gctx_copy_str(file, sizeof(file), e->filename, GCTX_PATH_LEN);
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	snprintf(name, sizeof(name), "exec %s", base);
	tl_trk_proc(x, pi, &t);
	a.n = 0;
	tl_arg_str(&a, "filename", file);
	tl_arg_strv(&a, "argv", e->args, e->args_len);
	tl_arg_strn(&a, "comm", p->comm, sizeof(p->comm));
	if (e->old_tid != ev->hdr.tid)
		tl_arg_u64(&a, "old_tid", e->old_tid);
	tl_emit(x, 'I', &t, ev->hdr.ts_ns, name, "exec", &a, 0, 0);
	x->s->ops->cmdline(x->s, ev->hdr.ts_ns, p->pid, p->ppid, e->args, e->args_len);
	xp->cmdline_done = true;
	rename_check(x, pi, ev->hdr.tid, ev->hdr.ts_ns);
}

void tl_on_thread_exit(struct exporter *x, const struct gctx_ev_exit *ev)
{
	int pi = tl_event_proc(x, &ev->hdr);

	if (pi < 0)
		return;
	threads_sync(x, pi, true);
	if (gctx_model__proc(x->m, pi)->exited)
		tl_proc_end(x, pi, ev->hdr.ts_ns, false);
}

void tl_on_proc_present(struct exporter *x, const struct gctx_rec_proc *r)
{
	int pi = tl_proc_index(x->m, r->pid);

	if (pi < 0 || !tl_xp(x, pi))
		return;
	if (!x->procs[pi].described)
		tl_proc_describe(x, pi, 0);
	else if (!x->procs[pi].cmdline_done)
		proc_cmdline(x, pi, x->now);
}
