// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folding: a model that runs for weeks (gpuctx agent) forgets exited process subtrees that
 * never touched GPU state, and reuses their slots. Exits are queued in the order they come;
 * a queued process is folded once it exited long enough ago and has no child left, and its
 * parent follows when that was its last child. Nothing else refers to such a process: holders,
 * inherited API state, contexts, objects and findings all belong to processes with GPU state,
 * and the agent's dumps find exited members of a tree from the window's fork records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "model/model_priv.h"

#define EXQ_COMPACT 4096 /* consumed queue entries moved out at once */

/* Anything but lineage: GPU files, uses, API calls or state, a record naming its slot. */
static bool touched_gpu(const struct proc_priv *p)
{
	return p->nhrefs || p->pub.nioctls || p->pub.nmmaps || p->api_calls || p->api_src[0] ||
	       p->api_src[1] || p->nctxs || p->fws_pending || p->pinned;
}

struct proc_priv *mdl_proc_slot(struct gctx_model *m)
{
	struct proc_priv *p;
	__u32 idx, gen;

	if (!m->nfree) {
		p = gctx_chunks__add(&m->procs);
		if (p)
			p->pub.idx = m->procs.n - 1;
		return p;
	}
	idx = m->free_procs[--m->nfree];
	p = P(m, idx);
	gen = p->gen;
	memset(p, 0, sizeof(*p));
	p->pub.idx = idx;
	p->gen = gen;
	return p;
}

void mdl_fold_note_exit(struct gctx_model *m, struct proc_priv *p)
{
	if (!m->fold_on || touched_gpu(p))
		return;
	if (gctx_grow(&m->exq, &m->cap_exq, m->nexq + 1, sizeof(*m->exq)))
		return; /* out of memory: this one is kept, nothing is wrong */
	m->exq[m->nexq++] = (struct fold_ent){p->pub.idx, p->gen};
}

static bool foldable(const struct proc_priv *p, __u64 before_ns)
{
	return p->pub.exited && p->pub.nchildren == p->gone_children &&
	       p->pub.exit_ns < before_ns && !touched_gpu(p) && p->pub.pid;
}

static void unlink_child(struct proc_priv *par, __u32 idx)
{
	struct gctx_proc *pp = &par->pub;

	for (__u32 i = 0; i < pp->nchildren; i++) {
		if (pp->children[i] != idx)
			continue;
		memmove(&pp->children[i], &pp->children[i + 1],
			(pp->nchildren - i - 1) * sizeof(*pp->children));
		pp->nchildren--;
		return;
	}
}

/* A child of par was folded: it leaves par's children with the others at the end of this
 * fold (one pass over them: a driver with 100,000 children folds thousands a second, and
 * taking each out of the array on its own moved the whole array each time). */
static void child_gone(struct gctx_model *m, struct proc_priv *par, __u32 idx)
{
	if (!par->gone_children) {
		if (gctx_grow(&m->fold_dirty, &m->cap_fold_dirty, m->nfold_dirty + 1,
			      sizeof(*m->fold_dirty))) {
			unlink_child(par, idx); /* out of memory: the slow way */
			return;
		}
		m->fold_dirty[m->nfold_dirty++] = par->pub.idx;
	}
	par->gone_children++;
}

/* The folded children leave their parents' lists; no slot was reused meanwhile. */
static void unlink_gone(struct gctx_model *m)
{
	for (__u32 i = 0; i < m->nfold_dirty; i++) {
		struct proc_priv *par = P(m, m->fold_dirty[i]);
		struct gctx_proc *pp = &par->pub;
		__u32 n = 0;

		if (par->folded || !par->gone_children)
			continue; /* folded itself since: its list went with it */
		for (__u32 k = 0; k < pp->nchildren; k++)
			if (!P(m, pp->children[k])->folded)
				pp->children[n++] = pp->children[k];
		pp->nchildren = n;
		par->gone_children = 0;
	}
	m->nfold_dirty = 0;
}

/* Forget p; its slot goes to the free list. False when the free list cannot grow. */
static bool fold_one(struct gctx_model *m, struct proc_priv *p)
{
	struct gctx_proc *pp = &p->pub;
	__u32 idx = pp->idx, gen = p->gen, cur;

	if (gctx_grow(&m->free_procs, &m->cap_free, m->nfree + 1, sizeof(*m->free_procs)))
		return false;
	if (pp->parent_idx >= 0)
		child_gone(m, P(m, pp->parent_idx), idx);
	for (__u32 i = 0; i < pp->nthreads; i++)
		gctx_hmap__del(&m->thread_map, idx, pp->threads[i].tid);
	if (gctx_hmap__get(&m->pid_map, pp->pid, 0, &cur) && cur == idx)
		gctx_hmap__del(&m->pid_map, pp->pid, 0);
	m->nthreads -= pp->nthreads;
	m->nexecs -= pp->nexecs;
	free(pp->execs);
	free(pp->threads);
	free(pp->children);
	free(p->hrefs);
	free(p->kept);
	free(p->ctxs);
	memset(p, 0, sizeof(*p));
	pp->idx = idx;
	pp->parent_idx = -1;
	pp->exited = true;
	pp->exit_code = -1;
	pp->exe = pp->args = pp->cgroup = "";
	p->gen = gen + 1; /* queue entries of the old process no longer match */
	p->folded = true; /* until the slot is taken again (mdl_proc_slot) */
	m->free_procs[m->nfree++] = idx;
	m->folded++;
	return true;
}

__u32 gctx_model__fold(struct gctx_model *m, __u64 before_ns)
{
	__u32 n = 0;

	if (!m)
		return 0;
	m->fold_on = true;
	for (; m->exq_head < m->nexq; m->exq_head++) {
		const struct fold_ent *e = &m->exq[m->exq_head];
		struct proc_priv *p = P(m, e->idx);

		if (p->gen != e->gen)
			continue; /* folded with its last child already */
		if (p->pub.exit_ns >= before_ns)
			break; /* the rest exited later */
		/* it, then each ancestor it was the last child of */
		while (foldable(p, before_ns)) {
			int up = p->pub.parent_idx;

			if (!fold_one(m, p)) {
				unlink_gone(m);
				return n;
			}
			n++;
			if (up < 0)
				break;
			p = P(m, up);
		}
	}
	unlink_gone(m);
	if (m->exq_head && (m->exq_head >= EXQ_COMPACT || m->exq_head == m->nexq)) {
		memmove(m->exq, m->exq + m->exq_head, (m->nexq - m->exq_head) * sizeof(*m->exq));
		m->nexq -= m->exq_head;
		m->exq_head = 0;
	}
	return n;
}

__u64 gctx_model__folded(const struct gctx_model *m)
{
	return m ? m->folded : 0;
}

bool gctx_model__touched_gpu(const struct gctx_model *m, __u32 idx)
{
	return m && idx < m->procs.n && touched_gpu(P(m, idx));
}

__u32 gctx_model__nlive_slots(const struct gctx_model *m)
{
	return m ? m->procs.n - m->nfree : 0;
}

void mdl_fold_free(struct gctx_model *m)
{
	free(m->exq);
	free(m->free_procs);
	free(m->fold_dirty);
}
