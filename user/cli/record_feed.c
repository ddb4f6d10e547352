// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx record, each record's way: to the trace file, the live lines, the model and the
 * agent's hooks, then to the collectors that act on what they see (stacks, call sites, API
 * probes, library watch) and the cgroup a new process runs in. The records each of those
 * makes come back here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collect/callers.h"
#include "collect/discover.h"
#include "collect/jobcg.h"
#include "collect/libwatch.h"
#include "collect/pyprobe.h"
#include "collect/stacks.h"
#include "collect/uprobes.h"
#include "model/jobattr.h"
#include "model/model.h"
#include "output/report/print.h"
#include "trace/tracefile.h"
#include "cli/cli.h"
#include "cli/record.h"

/* Stacks: what needs the process alive is done as each raw kernel stack arrives; a thread
 * unwinds them, and the main loop writes their records (record_next_stacks). */
static void record_stack_hook(struct record_state *st, __u32 type, const void *data, __u32 len)
{
	gctx_stacks__on_record(st->stacks, type, data, len);
	gctx_pyprobe__on_record(st->pyprobe, type, data, len);
	if (type == GCTX_EV_STACK)
		gctx_stacks__accept(st->stacks, data, len);
}

int record_feed(void *ctx, __u32 type, const void *data, __u32 len)
{
	struct record_state *st = ctx;
	int ret;

	st->records++;
	/* a call site is written before the first API record that names it */
	gctx_callers__on_record(st->callers, type, data, len);
	/* the drop counts are a closing record: after a write error they still get a try; a raw
	 * stack (user registers, 8 KiB of the user's stack, interpreter strings: under -a other
	 * users' memory) stays in memory until resolved: only its GCTX_REC_STACK is written */
	if (type == GCTX_EV_STACK || !st->w)
		ret = 0;
	else if (type == GCTX_REC_DROPS)
		ret = gctx_trace_writer__append_final(st->w, type, data, len);
	else
		ret = gctx_trace_writer__append(st->w, type, data, len);
	if (ret && !st->write_err)
		st->write_err = ret;
	if (!st->env->quiet)
		gctx_print_event(stdout, type, data, len, st->start_mono);
	gctx_model__feed(st->model, type, data, len);
	if (st->env->hooks)
		st->env->hooks->on_record(st->env->hooks->ctx, st->model, type, data, len);
	record_stack_hook(st, type, data, len);
	if (st->uprobes)
		gctx_uprobes__on_record(st->uprobes, type, data, len);
	gctx_libwatch__on_record(st->libwatch, type, data, len);
	if (type == GCTX_EV_EXEC && len >= GCTX_EV_EXEC_V3_LEN) {
		const struct gctx_ev_exec *e = data;

		record_note_cgroup(st, e->hdr.tgid, len >= sizeof(*e) ? e->cgroup_id : 0);
	}
	return 0;
}

/* The cgroup of pid, recorded when it is not the one the model already gives the process
 * (its parent's): one record per job root, not one per exec. cgid: the cgroup v2 id the
 * kernel gave at exec (0 unknown). When its path names a job it is the answer, and right for a
 * process that exited before we got here; else /proc/PID/cgroup (v1 job hierarchies). */
void record_note_cgroup(struct record_state *st, __u32 pid, __u64 cgid)
{
	const struct gctx_proc *p = gctx_model__proc_by_pid(st->model, pid);
	struct gctx_rec_cgroup r = {.pid = pid, .ts_ns = gctx_now_mono()};
	struct gctx_job_attr a;

	if (!p)
		return;
	if ((gctx_cgpaths__path(st->cgpaths, cgid, r.path, sizeof(r.path)) ||
	     gctx_job_attr_parse(r.path, &a) == GCTX_JOB_NONE) &&
	    gctx_proc_cgroup(pid, r.path, sizeof(r.path)) &&
	    /* gone before we read it: under --cgroup it was followed for exec'ing in there */
	    (!st->cgroup_rel[0] ||
	     snprintf(r.path, sizeof(r.path), "%s", st->cgroup_rel) >= (int)sizeof(r.path)))
		return;
	if (!strncmp(p->cgroup, r.path, sizeof(r.path)))
		return;
	record_feed(st, GCTX_REC_CGROUP, &r, sizeof(r));
}

/* Write the oldest resolved stack. false when none is ready. */
static bool record_next_stack(struct record_state *st)
{
	struct gctx_rec_stack *r;
	__u32 rlen = 0;

	r = gctx_stacks__next(st->stacks, &rlen);
	if (!r)
		return false;
	record_feed(st, GCTX_REC_STACK, r, rlen);
	free(r);
	return true;
}

/* The stacks the unwinding thread has resolved so far (all of them after a flush). */
void record_next_stacks(struct record_state *st)
{
	while (record_next_stack(st))
		;
}

void record_watch_python(void *ctx, __u32 pid)
{
	struct record_state *st = ctx;

	gctx_stacks__watch(st->stacks, pid);
	/* a Python process that goes on to initialise CUDA and fork (a DataLoader) needs the
	 * Python exception probe for its children: loaded meanwhile, not while one is held */
	gctx_uprobes__raise_prepare(st->uprobes);
}

void record_on_finding(const struct gctx_finding *f, void *ctx)
{
	struct record_state *st = ctx;

	if (st->env->hooks)
		st->env->hooks->on_finding(st->env->hooks->ctx, st->model, f);
	if (st->env->silent)
		return;
	gctx_print_finding(st->env->quiet ? stderr : stdout, f, st->start_mono);
}
