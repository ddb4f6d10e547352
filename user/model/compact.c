// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Compaction: a model that runs for weeks (gpuctx agent) drops what no live process needs,
 * GPU processes included, and gives the memory back: process slots, files, objects, contexts,
 * findings, allocations, the hash maps and the string pool are rebuilt at their new size.
 *
 * Kept: every live process, every process that exited at or after before_ns, every pinned one
 * and, until nothing changes, what a kept process names: its fork parent (so the lineage of a
 * live process is whole), the process its API state came from, the parent of a fork with GPU
 * state not yet judged, the process each of its GPU files came from and each such file's
 * opener. A file stays while a kept process held it (other holders go), an object with its
 * file, a context with its creator, a finding with its process, an API allocation with its
 * process until it is freed.
 *
 * Two phases: plan does every allocation (the index maps, the new hash maps, the new string
 * pool), apply moves and frees and cannot fail: out of memory leaves the model as it was.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_priv.h"

#define COMPACT_SLACK 4096 /* records a model may hold beyond the rule before it is compacted */

enum { BY_NONE, BY_PROC, BY_FILE, BY_OBJ, BY_FINDING, BY_MEM, BY_CLIENT };

/* The model's maps but holder_map and thread_map, and what their keys' first word, second
 * word and values index (BY_CLIENT: the newest object of a client that is kept). */
static const struct {
	size_t off;
	__u8 k1, k2, v;
} maps[] = {
    {offsetof(struct gctx_model, pid_map), BY_NONE, BY_NONE, BY_PROC},
    {offsetof(struct gctx_model, file_map), BY_NONE, BY_NONE, BY_FILE},
    {offsetof(struct gctx_model, finding_map), BY_PROC, BY_FILE, BY_FINDING},
    {offsetof(struct gctx_model, obj_map), BY_FILE, BY_NONE, BY_OBJ},
    {offsetof(struct gctx_model, client_map), BY_FILE, BY_NONE, BY_CLIENT},
    {offsetof(struct gctx_model, mem_map), BY_PROC, BY_NONE, BY_MEM},
    {offsetof(struct gctx_model, apierr_map), BY_PROC, BY_NONE, BY_FINDING},
};

#define NMAPS (sizeof(maps) / sizeof(maps[0]))

static struct gctx_hmap *model_map(struct gctx_model *m, __u32 i)
{
	return (struct gctx_hmap *)((char *)m + maps[i].off);
}

struct plan {
	struct mdl_remap r;
	__u32 **holder; /* per old file: old holder index -> new; NULL for a dropped file */
	struct gctx_hmap maps[NMAPS]; /* the new maps[] */
	struct gctx_hmap holder_map, thread_map;
	struct gctx_strpool *strs;
	__u8 *kept;
	__u32 *work, nwork;
	__u64 dropped;	     /* processes dropped that were not folded slots already */
	__u64 files_trimmed; /* closed files of live processes dropped (trim.c) */
};

void mdl_chunks_squeeze(struct gctx_chunks *c, const __u32 *map)
{
	__u32 n = 0, nch;

	for (__u32 i = 0; i < c->n; i++) {
		if (map[i] == MDL_GONE)
			continue;
		if (map[i] != i)
			memcpy(gctx_chunks__at(c, map[i]), gctx_chunks__at(c, i), c->elem);
		n = map[i] + 1;
	}
	nch = (n + GCTX_CHUNK_LEN - 1) >> GCTX_CHUNK_SHIFT;
	for (__u32 i = nch; i < c->nchunks; i++)
		free(c->chunk[i]);
	c->nchunks = nch;
	c->n = n;
	if (!nch) {
		free(c->chunk);
		c->chunk = NULL;
		return;
	}
	/* a new element comes zeroed (chunks.h) */
	memset(gctx_chunks__at(c, n - 1) + c->elem, 0,
	       (size_t)(nch * GCTX_CHUNK_LEN - n) * c->elem);
}

static bool re_ok(const __u32 *map, __u64 idx, __u32 *out)
{
	if (!map) {
		*out = (__u32)idx;
		return true;
	}
	*out = map[idx];
	return *out != MDL_GONE;
}

int mdl_map_remap(const struct gctx_hmap *from, struct gctx_hmap *to, const __u32 *m1,
		  const __u32 *m2, const __u32 *mv)
{
	for (__u32 i = 0; i < from->cap; i++) {
		const struct gctx_hent *e = &from->e[i];
		__u32 a, b, v;

		if (!e->used || !re_ok(m1, e->k1 & 0xffffffffu, &a) || !re_ok(m2, e->k2, &b) ||
		    !re_ok(mv, e->val, &v))
			continue;
		if (gctx_hmap__put(to, m1 ? (e->k1 & ~0xffffffffull) | a : e->k1, m2 ? b : e->k2,
				   v))
			return -ENOMEM;
	}
	return 0;
}

/* ---- plan ---- */

static void mark(struct plan *pl, __u32 idx)
{
	if (pl->kept[idx])
		return;
	pl->kept[idx] = 1;
	pl->work[pl->nwork++] = idx; /* each process once: work has room for all */
}

/* What p names, kept with it. */
static void mark_needs(const struct gctx_model *m, struct plan *pl, const struct proc_priv *p)
{
	if (p->pub.parent_idx >= 0)
		mark(pl, p->pub.parent_idx);
	for (int v = 0; v < 2; v++)
		if (p->api_src[v] && p->api_src[v] <= m->procs.n)
			mark(pl, p->api_src[v] - 1);
	if (p->fws_pending)
		mark(pl, p->fws_parent_idx);
	for (__u32 i = 0; i < p->nhrefs; i++) {
		const struct file_priv *f = F(m, p->hrefs[i].file_idx);

		mark(pl, f->pub.holders[p->hrefs[i].holder_idx].from_proc_idx);
		if (f->pub.opener_idx >= 0)
			mark(pl, f->pub.opener_idx);
	}
}

__u32 *mdl_gone_map(__u32 n)
{
	__u32 *map = malloc((n ? n : 1) * sizeof(*map));

	if (map)
		memset(map, 0xff, (n ? n : 1) * sizeof(*map));
	return map;
}

static int plan_procs(const struct gctx_model *m, struct plan *pl, __u64 before_ns,
		      const __u32 *pins, __u32 npins)
{
	__u32 n = m->procs.n, next = 0;

	pl->r.old_nprocs = n;
	pl->kept = calloc(n ? n : 1, 1);
	pl->work = malloc((n ? n : 1) * sizeof(*pl->work));
	pl->r.proc = mdl_gone_map(n);
	if (!pl->kept || !pl->work || !pl->r.proc)
		return -ENOMEM;
	for (__u32 i = 0; i < m->nfree; i++)
		pl->kept[m->free_procs[i]] = 2; /* a folded slot: neither kept nor counted */
	for (__u32 i = 0; i < n; i++) {
		const struct proc_priv *p = P(m, i);

		if (!pl->kept[i] && (!p->pub.exited || p->pub.exit_ns >= before_ns))
			mark(pl, i);
	}
	for (__u32 i = 0; i < npins; i++)
		if (pins[i] < n)
			mark(pl, pins[i]);
	while (pl->nwork)
		mark_needs(m, pl, P(m, pl->work[--pl->nwork]));
	for (__u32 i = 0; i < n; i++) {
		if (pl->kept[i] == 1) {
			pl->r.proc[i] = next++;
			if (gctx_hmap__put(&pl->r.pids, P(m, i)->pub.pid, 0, 1))
				return -ENOMEM;
		} else if (!pl->kept[i]) {
			pl->dropped++;
		}
	}
	pl->r.nprocs = next;
	return 0;
}

static int plan_files(const struct gctx_model *m, struct plan *pl, __u64 before_ns)
{
	__u32 n = m->files.n, next = 0;
	__u8 *drop = mdl_trim_plan_files(m, &pl->r, before_ns);

	pl->r.file = mdl_gone_map(n);
	pl->holder = calloc(n ? n : 1, sizeof(*pl->holder));
	if (!drop || !pl->r.file || !pl->holder) {
		free(drop);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_gpu_file *f = &F(m, i)->pub;
		__u32 nh = 0;

		for (__u32 k = 0; k < f->nholders; k++)
			nh += pl->r.proc[f->holders[k].proc_idx] != MDL_GONE;
		if (!nh)
			continue;
		if (drop[i]) { /* a live process's old closed file (trim.c) */
			pl->files_trimmed++;
			continue;
		}
		pl->holder[i] = mdl_gone_map(f->nholders);
		if (!pl->holder[i])
			return -ENOMEM;
		nh = 0;
		for (__u32 k = 0; k < f->nholders; k++)
			if (pl->r.proc[f->holders[k].proc_idx] != MDL_GONE)
				pl->holder[i][k] = nh++;
		pl->r.file[i] = next++;
	}
	free(drop);
	return 0;
}

/* Everything else through the index maps of what it belongs to. */
static int plan_rest(const struct gctx_model *m, struct plan *pl)
{
	struct mdl_remap *r = &pl->r;
	__u32 nf = 0, nc = 0, nm = 0;

	r->finding = mdl_gone_map(m->findings.n);
	r->ctx = mdl_gone_map(m->ctxs.n);
	r->mem = mdl_gone_map(m->mems.n);
	if (!r->finding || !r->ctx || !r->mem)
		return -ENOMEM;
	for (__u32 i = 0; i < m->findings.n; i++)
		if (r->proc[FIND(m, i)->proc_idx] != MDL_GONE)
			r->finding[i] = nf++;
	for (__u32 i = 0; i < m->ctxs.n; i++) {
		const struct gctx_api_ctx *c = gctx_chunks__at(&m->ctxs, i);

		if (c->creator_idx < m->procs.n && r->proc[c->creator_idx] != MDL_GONE)
			r->ctx[i] = nc++;
	}
	for (__u32 i = 0; i < m->mems.n; i++) {
		const struct gctx_api_mem *x = gctx_chunks__at(&m->mems, i);

		if (!x->freed && r->proc[x->proc_idx] != MDL_GONE)
			r->mem[i] = nm++;
	}
	return mdl_trim_plan_objs(m, r); /* after the contexts: it keeps their objects */
}

static int plan_holder_map(const struct gctx_model *m, struct plan *pl)
{
	for (__u32 i = 0; i < m->holder_map.cap; i++) {
		const struct gctx_hent *e = &m->holder_map.e[i];
		__u32 p, f, h;

		if (!e->used)
			continue;
		p = pl->r.proc[e->k1];
		f = pl->r.file[e->k2];
		if (p == MDL_GONE || f == MDL_GONE || (h = pl->holder[e->k2][e->val]) == MDL_GONE)
			continue;
		if (gctx_hmap__put(&pl->holder_map, p, f, h))
			return -ENOMEM;
	}
	return 0;
}

static bool intern(struct gctx_strpool *sp, const char *s, size_t n)
{
	return !n || gctx_strpool__add(sp, s, n);
}

/* The kept processes' strings, in a pool of their own. */
static int plan_strings(const struct gctx_model *m, struct plan *pl)
{
	pl->strs = gctx_strpool__new();
	if (!pl->strs)
		return -ENOMEM;
	for (__u32 i = 0; i < m->procs.n; i++) {
		const struct gctx_proc *p = &P(m, i)->pub;

		if (pl->r.proc[i] == MDL_GONE)
			continue;
		if (!intern(pl->strs, p->exe, strlen(p->exe)) ||
		    !intern(pl->strs, p->args, p->args_len) ||
		    !intern(pl->strs, p->cgroup, strlen(p->cgroup)))
			return -ENOMEM;
		for (__u32 k = 0; k < p->nexecs; k++)
			if (mdl_trim_exec_kept(p, k) &&
			    (!intern(pl->strs, p->execs[k].filename,
				     strlen(p->execs[k].filename)) ||
			     !intern(pl->strs, p->execs[k].args, p->execs[k].args_len)))
				return -ENOMEM;
	}
	return 0;
}

static int plan(const struct gctx_model *m, struct plan *pl, __u64 before_ns, const __u32 *pins,
		__u32 npins)
{
	const struct mdl_remap *r = &pl->r;

	if (plan_procs(m, pl, before_ns, pins, npins) || plan_files(m, pl, before_ns) ||
	    plan_rest(m, pl) || plan_holder_map(m, pl) || plan_strings(m, pl) ||
	    mdl_trim_plan_threads(m, r, &pl->thread_map))
		return -ENOMEM;
	for (__u32 i = 0; i < NMAPS; i++) {
		const __u32 *by[] = {NULL,	 r->proc, r->file,	r->obj,
				     r->finding, r->mem,  r->obj_client};

		if (mdl_map_remap(model_map((struct gctx_model *)m, i), &pl->maps[i],
				  by[maps[i].k1], by[maps[i].k2], by[maps[i].v]))
			return -ENOMEM;
	}
	return 0;
}

static void plan_free(struct plan *pl, __u32 nfiles)
{
	struct mdl_remap *r = &pl->r;

	for (__u32 i = 0; pl->holder && i < nfiles; i++)
		free(pl->holder[i]);
	free(pl->holder);
	free(r->proc);
	free(r->file);
	free(r->obj);
	free(r->obj_sib);
	free(r->obj_client);
	free(r->obj_file);
	free(r->finding);
	free(r->ctx);
	free(r->mem);
	free(r->site);
	gctx_hmap__free(&r->pids);
	for (__u32 i = 0; i < NMAPS; i++)
		gctx_hmap__free(&pl->maps[i]);
	gctx_hmap__free(&pl->holder_map);
	gctx_hmap__free(&pl->thread_map);
	gctx_strpool__free(pl->strs);
	free(pl->kept);
	free(pl->work);
}

/* ---- apply ---- */

static int re_int(const __u32 *map, int idx)
{
	return idx < 0 || map[idx] == MDL_GONE ? -1 : (int)map[idx];
}

static const char *restr(struct gctx_strpool *sp, const char *s, size_t n)
{
	return n ? gctx_strpool__get(sp, s, n) : "";
}

static void apply_proc(struct gctx_model *m, struct plan *pl, struct proc_priv *p)
{
	const struct mdl_remap *r = &pl->r;
	struct gctx_proc *pp = &p->pub;
	__u32 n = 0;

	mdl_trim_apply_proc(m, p);
	pp->idx = r->proc[pp->idx];
	pp->parent_idx = re_int(r->proc, pp->parent_idx);
	for (__u32 i = 0; i < pp->nchildren; i++)
		if (r->proc[pp->children[i]] != MDL_GONE)
			pp->children[n++] = r->proc[pp->children[i]];
	pp->nchildren = n;
	for (int v = 0; v < 2; v++) {
		p->api_src[v] = mdl_re_id(r->proc, p->api_src[v]);
		p->api_icc_id[v] = mdl_re_id(r->finding, p->api_icc_id[v]);
	}
	if (p->fws_pending) {
		p->fws_parent_idx = r->proc[p->fws_parent_idx];
		p->fws_file_idx = r->file[p->fws_file_idx];
	}
	n = 0;
	for (__u32 i = 0; i < p->nhrefs; i++) {
		struct href h = p->hrefs[i];

		if (r->file[h.file_idx] == MDL_GONE)
			continue; /* a closed file left out (trim.c) */
		h.holder_idx = pl->holder[h.file_idx][h.holder_idx];
		h.file_idx = r->file[h.file_idx];
		p->hrefs[n++] = h;
	}
	p->nhrefs = n;
	mdl_shrink(&p->hrefs, &p->cap_hrefs, n, sizeof(*p->hrefs));
	for (__u32 i = 0; i < p->nctxs; i++)
		p->ctxs[i] = mdl_re_id(r->ctx, p->ctxs[i]);
	for (__u32 i = 0; i < pp->nthreads; i++)
		for (__u32 k = 0; k < GCTX_CTX_STACK; k++)
			pp->threads[i].ctx_stack[k] =
			    mdl_re_id(r->ctx, pp->threads[i].ctx_stack[k]);
	pp->exe = restr(pl->strs, pp->exe, strlen(pp->exe));
	pp->args = restr(pl->strs, pp->args, pp->args_len);
	pp->cgroup = restr(pl->strs, pp->cgroup, strlen(pp->cgroup));
	for (__u32 i = 0; i < pp->nexecs; i++) {
		struct gctx_exec *x = &pp->execs[i];

		x->filename = restr(pl->strs, x->filename, strlen(x->filename));
		x->args = restr(pl->strs, x->args, x->args_len);
	}
}

static void apply_procs(struct gctx_model *m, struct plan *pl)
{
	for (__u32 i = 0; i < m->procs.n; i++) {
		struct proc_priv *p = P(m, i);

		if (pl->r.proc[i] != MDL_GONE) {
			apply_proc(m, pl, p);
			continue;
		}
		mdl_proc_free_arrays(p);
	}
	mdl_chunks_squeeze(&m->procs, pl->r.proc);
}

static void apply_files(struct gctx_model *m, struct plan *pl)
{
	const struct mdl_remap *r = &pl->r;

	for (__u32 i = 0; i < m->files.n; i++) {
		struct file_priv *f = F(m, i);
		struct gctx_gpu_file *fp = &f->pub;
		__u32 n = 0;

		if (r->file[i] == MDL_GONE) {
			free(fp->holders);
			continue;
		}
		fp->id = r->file[i] + 1;
		fp->opener_idx = re_int(r->proc, fp->opener_idx);
		f->first_obj = f->first_obj >= 0 && r->obj_file[f->first_obj] != MDL_GONE
				   ? (int)r->obj_file[f->first_obj]
				   : -1;
		f->nheld = 0;
		for (__u32 k = 0; k < fp->nholders; k++) {
			struct gctx_holder h = fp->holders[k];

			if (pl->holder[i][k] == MDL_GONE)
				continue;
			h.proc_idx = r->proc[h.proc_idx];
			h.from_proc_idx = r->proc[h.from_proc_idx] != MDL_GONE
					      ? r->proc[h.from_proc_idx]
					      : h.proc_idx;
			f->nheld += h.held;
			fp->holders[n++] = h;
		}
		fp->nholders = n;
	}
	mdl_chunks_squeeze(&m->files, r->file);
}

static void apply_findings(struct gctx_model *m, const struct mdl_remap *r)
{
	for (__u32 i = 0; i < m->findings.n; i++) {
		struct gctx_finding *f = FIND(m, i);

		if (r->finding[i] == MDL_GONE)
			continue;
		f->id = r->finding[i] + 1;
		f->proc_idx = r->proc[f->proc_idx];
		f->file_id = mdl_re_id(r->file, f->file_id);
		f->related_finding = mdl_re_id(r->finding, f->related_finding);
		f->ctx_id = mdl_re_id(r->ctx, f->ctx_id);
	}
	mdl_chunks_squeeze(&m->findings, r->finding);
}

static void apply_api(struct gctx_model *m, const struct mdl_remap *r)
{
	for (__u32 i = 0; i < m->ctxs.n; i++) {
		struct gctx_api_ctx *c = gctx_chunks__at(&m->ctxs, i);
		__u32 n = 0;

		if (r->ctx[i] == MDL_GONE) {
			free(c->kobjs);
			free(c->currents);
			continue;
		}
		c->id = r->ctx[i] + 1;
		c->creator_idx = r->proc[c->creator_idx];
		c->create_site = r->site ? mdl_re_id(r->site, c->create_site) : 0;
		for (__u32 k = 0; k < c->nkobjs; k++)
			if (r->obj[c->kobjs[k]] != MDL_GONE)
				c->kobjs[n++] = r->obj[c->kobjs[k]];
		c->nkobjs = n;
	}
	mdl_chunks_squeeze(&m->ctxs, r->ctx);
	for (__u32 i = 0; i < m->mems.n; i++) {
		struct gctx_api_mem *x = gctx_chunks__at(&m->mems, i);

		if (r->mem[i] == MDL_GONE) {
			/* a freed one of a process kept: what the process keeps is counted */
			m->trim.mems +=
			    x->proc_idx < r->old_nprocs && r->proc[x->proc_idx] != MDL_GONE;
			continue;
		}
		x->proc_idx = r->proc[x->proc_idx];
		x->ctx_id = mdl_re_id(r->ctx, x->ctx_id);
	}
	mdl_chunks_squeeze(&m->mems, r->mem);
}

static void swap_map(struct gctx_hmap *cur, struct gctx_hmap *next)
{
	gctx_hmap__free(cur);
	*cur = *next;
	memset(next, 0, sizeof(*next));
}

/* The fold queue keeps the processes still there; the free slots are gone. */
static void apply_fold(struct gctx_model *m, struct plan *pl)
{
	__u32 n = 0;

	for (__u32 i = m->exq_head; i < m->nexq; i++) {
		struct fold_ent e = m->exq[i];

		if (e.idx >= m->procs.n || pl->r.proc[e.idx] == MDL_GONE ||
		    P(m, e.idx)->gen != e.gen)
			continue;
		e.idx = pl->r.proc[e.idx];
		m->exq[n++] = e;
	}
	m->nexq = n;
	m->exq_head = 0;
	free(m->free_procs);
	m->free_procs = NULL;
	m->nfree = m->cap_free = 0;
	m->folded += pl->dropped;
	m->trim.files += pl->files_trimmed;
	m->compactions++;
}

static void apply(struct gctx_model *m, struct plan *pl)
{
	apply_fold(m, pl); /* before the slots move: it reads their generations */
	apply_procs(m, pl);
	apply_files(m, pl);
	mdl_trim_apply_objs(m, &pl->r);
	apply_findings(m, &pl->r);
	apply_api(m, &pl->r);
	mdl_callers_apply(m, &pl->r);
	mdl_stacks_compact(m, &pl->r);
	mdl_coverage_compact(m, &pl->r);
	mdl_pyexc_compact(m, &pl->r);
	for (__u32 i = 0; i < NMAPS; i++)
		swap_map(model_map(m, i), &pl->maps[i]);
	swap_map(&m->holder_map, &pl->holder_map);
	swap_map(&m->thread_map, &pl->thread_map);
	gctx_strpool__free(m->strs);
	m->strs = pl->strs;
	pl->strs = NULL;
	free(m->stack); /* scratch: grows again when needed */
	m->stack = NULL;
	m->cap_stack = 0;
}

/* Records the model holds, whatever their kind. */
static __u64 model_size(const struct gctx_model *m)
{
	return (__u64)m->procs.n + m->nthreads + m->nexecs + m->files.n + m->objs.n +
	       m->findings.n + m->ctxs.n + m->mems.n + gctx_strpool__count(m->strs) +
	       gctx_model__ncallsites(m) + gctx_model__nstacks(m) + gctx_model__ngaps(m) +
	       gctx_model__nholds(m);
}

bool gctx_model__compact_due(const struct gctx_model *m)
{
	__u64 size;

	if (!m)
		return false;
	size = model_size(m);
	return size > 2 * m->size_compacted + COMPACT_SLACK ||
	       m->procs.n > 2 * (m->procs.n - m->nfree) + COMPACT_SLACK;
}

int gctx_model__compact(struct gctx_model *m, __u64 before_ns, __u32 *pins, __u32 npins)
{
	struct plan pl = {};
	__u32 nfiles;

	if (!m)
		return -EINVAL;
	nfiles = m->files.n;
	if (plan(m, &pl, before_ns, pins, npins) || mdl_callers_plan(m, &pl.r)) {
		mdl_callers_abort(m);
		plan_free(&pl, nfiles);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < npins; i++)
		pins[i] = pins[i] < m->procs.n ? pl.r.proc[pins[i]] : MDL_GONE;
	apply(m, &pl);
	plan_free(&pl, nfiles);
	m->nthreads = m->nexecs = 0;
	for (__u32 i = 0; i < m->procs.n; i++) {
		m->nthreads += P(m, i)->pub.nthreads;
		m->nexecs += P(m, i)->pub.nexecs;
	}
	m->size_compacted = model_size(m);
	return 0;
}

__u32 gctx_model__nstrings(const struct gctx_model *m)
{
	return m ? gctx_strpool__count(m->strs) : 0;
}

__u64 gctx_model__compactions(const struct gctx_model *m)
{
	return m ? m->compactions : 0;
}
