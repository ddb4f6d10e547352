// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which processes the pictures show: every incident's source, its first members and those
 * that crashed, then the processes with GPU state, each with its ancestors, up to
 * HTML_MAX_ROWS; the rest folded and counted under the shown process they descend from. A
 * trace of 10,000 processes that never touched the GPU gives a few rows, not 10,000.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/html/html_priv.h"

struct walk {
	const struct gctx_model *m;
	struct html_sel *s;
	__u32 nshown;
};

/* Show idx and its ancestors; false once the budget is spent (ancestors still go in, so a
 * shown process always hangs from its real parent). */
static bool show(struct walk *w, __u32 idx, bool force)
{
	if (w->s->flag[idx] & SEL_SHOWN)
		return true;
	if (!force && w->nshown >= HTML_MAX_ROWS)
		return false;
	for (__s64 i = idx; i >= 0 && (__u32)i < w->s->nprocs;) {
		const struct gctx_proc *p = gctx_model__proc(w->m, i);

		if (w->s->flag[i] & SEL_SHOWN)
			break;
		w->s->flag[i] |= SEL_SHOWN;
		w->nshown++;
		i = p ? p->parent_idx : -1;
	}
	return true;
}

static void pick(struct walk *w, const struct gctx_analysis *an)
{
	struct html_sel *s = w->s;
	__u32 ni = gctx_analysis__nincidents(an);

	/* the first incidents' sources, whatever the budget; then their members */
	for (__u32 i = 0; i < ni; i++)
		show(w, gctx_analysis__incident(an, i)->src_idx, i < HTML_MAX_INCIDENTS);
	/* then each incident's members that crashed, then its first ones, within the budget */
	for (__u32 i = 0; i < ni; i++) {
		const struct gctx_incident *in = gctx_analysis__incident(an, i);

		for (int crashed = 1; crashed >= 0; crashed--) {
			for (__u32 k = 0; k < in->npids; k++) {
				__u32 idx = in->members[k];
				bool crash;

				if (idx >= s->nprocs)
					continue;
				crash = s->flag[idx] & SEL_CRASH;
				if (crash != crashed)
					continue;
				if ((!crash && k >= HTML_MAX_MEMBERS) || !show(w, idx, false))
					s->nfolded_inc++;
			}
		}
	}
	/* an incident's members past its first ones stay folded: the incident says how many */
	for (__u32 i = 0; i < s->nprocs && w->nshown < HTML_MAX_ROWS; i++)
		if ((s->flag[i] & (SEL_GPU | SEL_INC)) == SEL_GPU)
			show(w, i, false);
}

static void flags(struct html_sel *s, const struct gctx_model *m, const struct gctx_analysis *an)
{
	for (__u32 i = 0; i < s->nprocs; i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);

		if (!p || !p->pid)
			continue; /* a folded slot (agent) */
		if (gctx_model__has_gpu_state(m, i))
			s->flag[i] |= SEL_GPU;
		if (p->signal)
			s->flag[i] |= SEL_CRASH;
	}
	for (__u32 i = 0; i < gctx_analysis__nincidents(an); i++) {
		const struct gctx_incident *in = gctx_analysis__incident(an, i);

		if (in->src_idx < s->nprocs) {
			s->flag[in->src_idx] |= SEL_INC | SEL_SRC;
			if (!s->inc[in->src_idx])
				s->inc[in->src_idx] = in->id;
		}
		for (__u32 k = 0; k < in->npids; k++) {
			__u32 idx = in->members[k];

			if (idx >= s->nprocs)
				continue;
			s->flag[idx] |= SEL_INC;
			if (!s->inc[idx])
				s->inc[idx] = in->id;
		}
	}
}

/* Preorder of the whole forest (explicit stack: a fork chain may be 10,000 deep), then the
 * size of each subtree, then the rows. */
static int rows(struct html_sel *s, const struct gctx_model *m)
{
	__u32 n = s->nprocs, norder = 0, sp;
	__u32 *order = malloc((n + 1) * sizeof(*order)), *depth = malloc((n + 1) * sizeof(*depth));
	__u32 *size = calloc(n + 1, sizeof(*size)), *stack = malloc((n + 1) * sizeof(*stack));
	__u8 *seen = calloc(n + 1, 1);
	int ret = -ENOMEM;

	s->rows = malloc((n + 1) * sizeof(*s->rows));
	if (!order || !depth || !size || !stack || !seen || !s->rows)
		goto out;
	for (__u32 r = 0; r < n; r++) {
		const struct gctx_proc *rp = gctx_model__proc(m, r), *pp = NULL;

		if (rp && rp->parent_idx >= 0 && (__u32)rp->parent_idx < n)
			pp = gctx_model__proc(m, rp->parent_idx);
		if (seen[r] || !rp || !rp->pid || (pp && pp->pid))
			continue; /* not a root: reached from its parent */
		sp = 0;
		stack[sp++] = r;
		seen[r] = 1;
		depth[r] = 0;
		while (sp) {
			__u32 i = stack[--sp];
			const struct gctx_proc *p = gctx_model__proc(m, i);

			order[norder++] = i;
			/* children pushed last-first: visited in fork order */
			for (__u32 k = p->nchildren; k-- > 0;) {
				__u32 c = p->children[k];

				if (c >= n || seen[c])
					continue;
				seen[c] = 1;
				depth[c] = depth[i] + 1;
				stack[sp++] = c;
			}
		}
	}
	/* processes a root walk missed (a parent index pointing forward): roots of their own */
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_proc *p = gctx_model__proc(m, i);

		if (!seen[i] && p && p->pid) {
			seen[i] = 1;
			depth[i] = 0;
			order[norder++] = i;
		}
	}
	for (__u32 k = norder; k-- > 0;) {
		__u32 i = order[k];
		const struct gctx_proc *p = gctx_model__proc(m, i);

		size[i] += 1;
		if (depth[i] && p->parent_idx >= 0 && (__u32)p->parent_idx < n)
			size[p->parent_idx] += size[i];
	}
	for (__u32 k = 0; k < norder; k++) {
		__u32 i = order[k];
		const struct gctx_proc *p = gctx_model__proc(m, i);
		struct html_row *row;

		if (!(s->flag[i] & SEL_SHOWN)) {
			if (!depth[i])
				s->nfolded_top += size[i];
			continue;
		}
		row = &s->rows[s->nrows++];
		row->idx = i;
		row->depth = depth[i];
		row->folded = 0;
		for (__u32 c = 0; c < p->nchildren; c++) {
			__u32 ci = p->children[c];

			if (ci < n && depth[ci] == depth[i] + 1 && !(s->flag[ci] & SEL_SHOWN))
				row->folded += size[ci];
		}
		s->nfolded += row->folded;
	}
	s->nfolded += s->nfolded_top;
	ret = 0;
out:
	free(order);
	free(depth);
	free(size);
	free(stack);
	free(seen);
	return ret;
}

int html_sel__build(struct html_sel *s, const struct gctx_model *m, const struct gctx_analysis *an)
{
	struct walk w = {.m = m, .s = s};

	memset(s, 0, sizeof(*s));
	s->nprocs = gctx_model__nprocs(m);
	s->flag = calloc(s->nprocs + 1, 1);
	s->inc = calloc(s->nprocs + 1, sizeof(*s->inc));
	if (!s->flag || !s->inc) {
		html_sel__free(s);
		return -ENOMEM;
	}
	flags(s, m, an);
	pick(&w, an);
	if (rows(s, m)) {
		html_sel__free(s);
		return -ENOMEM;
	}
	return 0;
}

void html_sel__free(struct html_sel *s)
{
	free(s->flag);
	free(s->inc);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}
