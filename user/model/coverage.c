// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * API coverage: the windows in which a process's CUDA/HIP calls could not be seen
 * (GCTX_REC_API_GAP) and the holds that closed such a window (GCTX_REC_HOLD). A gap raises an
 * api-calls-unseen finding (findings.c), so that no verdict rests on a silent gap.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/grow.h"
#include "model/model_priv.h"

struct mdl_coverage {
	struct gctx_api_gap *gaps;
	__u32 ngaps, cap_gaps;
	struct gctx_rec_hold *holds;
	__u32 nholds, cap_holds;
};

static struct mdl_coverage *cov(struct gctx_model *m)
{
	if (!m->cov)
		m->cov = calloc(1, sizeof(*m->cov));
	return m->cov;
}

static int ev_gap(struct gctx_model *m, struct mdl_coverage *c, const struct gctx_rec_api_gap *r)
{
	struct proc_priv *p = r->pid ? mdl_proc_lookup(m, r->pid) : NULL;
	struct gctx_api_gap *g;

	if (gctx_grow(&c->gaps, &c->cap_gaps, c->ngaps + 1, sizeof(*c->gaps)))
		return -ENOMEM;
	g = &c->gaps[c->ngaps++];
	g->r = *r;
	g->has_proc = p != NULL;
	g->proc_idx = p ? p->pub.idx : 0;
	if (!p)
		return 0;
	p->pinned = true; /* the gap names its slot */
	p->pub.api_gaps++;
	if (mdl_unseen_raise(m, p, r))
		return -ENOMEM;
	g->finding_id = m->findings.n;
	return 0;
}

int mdl_coverage_feed(struct gctx_model *m, __u32 type, const void *rec)
{
	struct mdl_coverage *c = cov(m);

	if (!c)
		return -ENOMEM;
	if (type == GCTX_REC_API_GAP)
		return ev_gap(m, c, rec);
	if (gctx_grow(&c->holds, &c->cap_holds, c->nholds + 1, sizeof(*c->holds)))
		return -ENOMEM;
	c->holds[c->nholds++] = *(const struct gctx_rec_hold *)rec;
	return 0;
}

void mdl_coverage_free(struct gctx_model *m)
{
	if (!m->cov)
		return;
	free(m->cov->gaps);
	free(m->cov->holds);
	free(m->cov);
	m->cov = NULL;
}

__u32 gctx_model__ngaps(const struct gctx_model *m)
{
	return m && m->cov ? m->cov->ngaps : 0;
}

const struct gctx_api_gap *gctx_model__gap(const struct gctx_model *m, __u32 idx)
{
	return idx < gctx_model__ngaps(m) ? &m->cov->gaps[idx] : NULL;
}

__u32 gctx_model__nholds(const struct gctx_model *m)
{
	return m && m->cov ? m->cov->nholds : 0;
}

const struct gctx_rec_hold *gctx_model__hold(const struct gctx_model *m, __u32 idx)
{
	return idx < gctx_model__nholds(m) ? &m->cov->holds[idx] : NULL;
}

/* Gaps of process idx that began before 'before' (0: any). */
static __u32 gaps_of(const struct gctx_model *m, __u32 idx, __u64 before)
{
	__u32 n = 0;

	for (__u32 i = 0; i < gctx_model__ngaps(m); i++) {
		const struct gctx_api_gap *g = &m->cov->gaps[i];

		n += g->has_proc && g->proc_idx == idx && (!before || g->r.from_ns < before);
	}
	return n;
}

/* A process's own gaps, and those its ancestors had open when they forked its line: what
 * they did unseen (cuInit, a context) decides whether its own calls are inherited ones. */
__u32 gctx_model__api_unseen(const struct gctx_model *m, __u32 proc_idx)
{
	const struct gctx_proc *p = gctx_model__proc(m, proc_idx);
	__u32 n;

	if (!p || !gctx_model__ngaps(m))
		return 0;
	n = gaps_of(m, proc_idx, 0);
	for (int hops = 0; hops < 64 && p->parent_idx >= 0; hops++) {
		__u64 fork_ns = p->start_ns;

		p = gctx_model__proc(m, p->parent_idx);
		if (!p || !fork_ns)
			break;
		n += gaps_of(m, p->idx, fork_ns);
	}
	return n;
}

const char *gctx_gap_reason_name(__u32 reason)
{
	switch (reason) {
	case GCTX_GAP_NO_HOLD:
		return "no-hold";
	case GCTX_GAP_HOLD_TIMEOUT:
		return "hold-timeout";
	case GCTX_GAP_HOLD_FAILED:
		return "hold-failed";
	case GCTX_GAP_NOT_CANDIDATE:
		return "not-named-like-an-api-library";
	case GCTX_GAP_PROBE_FAILED:
		return "probe-failed";
	case GCTX_GAP_LOST:
		return "mapping-lost";
	case GCTX_GAP_OUTSIDE:
		return "not-held-attached";
	case GCTX_GAP_WATCHED:
		return "not-held-watched";
	case GCTX_GAP_HOLD_WAIT:
		return "hold-ended-parent-waited";
	case GCTX_GAP_HOLD_ABORT:
		return "hold-ended-gpuctx-signalled";
	default:
		return "?";
	}
}

/* Compaction (compact.c): gaps of kept processes, holds of kept processes' pids. */
void mdl_coverage_compact(struct gctx_model *m, const struct mdl_remap *r)
{
	struct mdl_coverage *c = m->cov;
	__u32 n = 0, v;

	if (!c)
		return;
	for (__u32 i = 0; i < c->ngaps; i++) {
		struct gctx_api_gap g = c->gaps[i];

		if (!g.has_proc || r->proc[g.proc_idx] == MDL_GONE)
			continue;
		g.proc_idx = r->proc[g.proc_idx];
		g.finding_id = mdl_re_id(r->finding, g.finding_id);
		c->gaps[n++] = g;
	}
	c->ngaps = n;
	n = 0;
	for (__u32 i = 0; i < c->nholds; i++)
		if (gctx_hmap__get(&r->pids, c->holds[i].pid, 0, &v))
			c->holds[n++] = c->holds[i];
	c->nholds = n;
}
