// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process tree cut out of the agent's window (model/cut.h) as a trace holds it: what a
 * dump holds, and what record --from-agent receives before the live records.
 */
#include "agent/agent.h"
#include "trace/window.h"

int agent_cut__emit(struct gctx_cut *c, const struct agent *a, const struct gctx_model *m)
{
	int ret = 0;

	for (__u32 i = 0; !ret && i < a->nglobals; i++) {
		c->records++;
		ret =
		    c->sink(c->sink_ctx, a->globals[i].type, a->globals[i].data, a->globals[i].len);
	}
	return ret ? ret : gctx_cut__emit(c, m, a->win);
}

void agent_cut__drops(const struct agent *a, const struct gctx_cut *c, struct gctx_rec_drops *d)
{
	const struct gctx_rec_drops *now = &a->drops, *was = &a->drops_dumped;

	for (int i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		d->drops[i] = now->drops[i] - was->drops[i];
	d->missed_stash = now->missed_stash - was->missed_stash;
	d->unfollowed = now->unfollowed - was->unfollowed;
	/* node-wide, as the metric: what the window forgot before this tree's oldest records */
	d->window_evicted = c->history_cut ? gctx_window__evicted(a->win) : 0;
	d->omitted_procs = c->omitted_procs;
	d->omitted_records = c->omitted_records;
}
