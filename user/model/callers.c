// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model: the call site of each API call. Calls are counted per process image,
 * function and return address (struct gctx_callsite); the collector's GCTX_REC_CALLER records
 * say where each address is (module, function, offset).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "model/model_priv.h"

#define NO_PROC (1ull << 63) /* rec_map key of a record whose process is not known (yet) */

struct plist {
	__u32 *v;
	__u32 n, cap;
};

struct mdl_callers {
	struct gctx_chunks sites;  /* struct gctx_callsite */
	struct gctx_chunks recs;   /* struct gctx_rec_caller */
	struct gctx_hmap rec_map;  /* (image key, addr) -> recs index */
	struct gctx_hmap site_map; /* (image key | fn << 48, addr) -> sites index */
	struct plist *procs;	   /* call sites per process index */
	__u32 cap_procs;
	struct gctx_rec_caller_drops drops;
	bool has_drops;
	/* a compaction planned (compact.c): the new maps, and where each record goes */
	struct gctx_hmap next_rec_map, next_site_map;
	__u32 *rec_to;	 /* old record index -> new, MDL_GONE */
	__u32 *site_rec; /* old site index -> its record's new index, MDL_GONE none */
	struct plist *next_procs;
};

static struct mdl_callers *cl(struct gctx_model *m)
{
	if (!m->callers) {
		m->callers = calloc(1, sizeof(*m->callers));
		if (m->callers) {
			m->callers->sites.elem = sizeof(struct gctx_callsite);
			m->callers->recs.elem = sizeof(struct gctx_rec_caller);
		}
	}
	return m->callers;
}

void mdl_callers_free(struct gctx_model *m)
{
	struct mdl_callers *c = m->callers;

	if (!c)
		return;
	for (__u32 i = 0; i < c->cap_procs; i++)
		free(c->procs[i].v);
	free(c->procs);
	gctx_chunks__free(&c->sites);
	gctx_chunks__free(&c->recs);
	gctx_hmap__free(&c->rec_map);
	gctx_hmap__free(&c->site_map);
	mdl_callers_abort(m);
	free(c);
	m->callers = NULL;
}

/* A process image: the process and how many execs it had (an exec maps other code), those a
 * compaction left out included. */
static __u64 image_key(const struct proc_priv *p)
{
	return p->pub.idx | (__u64)((p->pub.nexecs + p->pub.nexecs_dropped) & 0xffff) << 32;
}

static const struct gctx_rec_caller *rec_find(const struct mdl_callers *c,
					      const struct proc_priv *p, __u64 addr)
{
	__u32 i;

	if (!gctx_hmap__get(&c->rec_map, image_key(p), addr, &i) &&
	    !gctx_hmap__get(&c->rec_map, NO_PROC | p->pub.pid, addr, &i))
		return NULL;
	return gctx_chunks__at(&c->recs, i);
}

static int feed_caller(struct gctx_model *m, struct mdl_callers *c, const struct gctx_rec_caller *r)
{
	struct proc_priv *p = mdl_proc_lookup(m, r->pid);
	struct gctx_rec_caller *n = gctx_chunks__add(&c->recs);
	__u64 key = p && !p->pub.exited ? image_key(p) : NO_PROC | r->pid;

	if (!n || gctx_hmap__put(&c->rec_map, key, r->frame.addr, c->recs.n - 1))
		return -ENOMEM;
	*n = *r;
	/* what the traced process wrote: always terminated for readers */
	n->frame.function[sizeof(n->frame.function) - 1] = '\0';
	n->frame.module[sizeof(n->frame.module) - 1] = '\0';
	n->frame.file[sizeof(n->frame.file) - 1] = '\0';
	/* written after the process's calls (it was gone before its mappings were read, the
	 * kernel sent them at its exit): its sites from that address get it now */
	if (p && p->pub.idx < c->cap_procs) {
		const struct plist *pl = &c->procs[p->pub.idx];

		for (__u32 i = 0; i < pl->n; i++) {
			struct gctx_callsite *s = gctx_chunks__at(&c->sites, pl->v[i]);

			if (!s->caller && s->addr == r->frame.addr)
				s->caller = n;
		}
	}
	return 0;
}

int mdl_callers_feed(struct gctx_model *m, __u32 type, const void *rec)
{
	struct mdl_callers *c = cl(m);

	if (!c)
		return -ENOMEM;
	if (type == GCTX_REC_CALLER_DROPS) {
		c->drops = *(const struct gctx_rec_caller_drops *)rec;
		c->has_drops = true;
		return 0;
	}
	return feed_caller(m, c, rec);
}

static struct gctx_callsite *site_new(struct mdl_callers *c, struct proc_priv *p, __u32 fn,
				      __u64 addr, __u64 ts, __u32 *idx)
{
	struct plist *pl;
	struct gctx_callsite *s;

	if (gctx_grow(&c->procs, &c->cap_procs, p->pub.idx + 1, sizeof(*c->procs)))
		return NULL;
	pl = &c->procs[p->pub.idx];
	if (gctx_grow(&pl->v, &pl->cap, pl->n + 1, sizeof(*pl->v)))
		return NULL;
	s = gctx_chunks__add(&c->sites);
	if (!s)
		return NULL;
	*idx = c->sites.n - 1;
	if (gctx_hmap__put(&c->site_map, image_key(p) | (__u64)fn << 48, addr, *idx)) {
		c->sites.n--; /* the zeroed element is reused by the next add */
		return NULL;
	}
	pl->v[pl->n++] = *idx;
	p->pinned = true; /* its call sites are indexed by its slot */
	s->proc_idx = p->pub.idx;
	s->fn = fn;
	s->addr = addr;
	s->first_ns = ts;
	return s;
}

int mdl_callers_api(struct gctx_model *m, const struct gctx_ev_api *ev, __u32 nctxs_before)
{
	struct mdl_callers *c = cl(m);
	struct proc_priv *p = mdl_proc_lookup(m, ev->hdr.tgid);
	struct gctx_callsite *s;
	__u64 addr = ev->caller;
	__u32 idx;

	if (!c)
		return -ENOMEM;
	if (!p || ev->fn == GCTX_API_NONE || ev->fn >= GCTX_API_MAX)
		return 0;
	if (gctx_hmap__get(&c->site_map, image_key(p) | (__u64)ev->fn << 48, addr, &idx)) {
		s = gctx_chunks__at(&c->sites, idx);
	} else {
		/* a process calling from everywhere (JIT code): the rest in one site per fn */
		if (p->pub.idx < c->cap_procs && c->procs[p->pub.idx].n >= GCTX_MAX_CALLSITES)
			addr = GCTX_CALLSITE_OTHER;
		if (!gctx_hmap__get(&c->site_map, image_key(p) | (__u64)ev->fn << 48, addr, &idx)) {
			s = site_new(c, p, ev->fn, addr, ev->hdr.ts_ns, &idx);
			if (!s)
				return -ENOMEM;
		}
		s = gctx_chunks__at(&c->sites, idx);
	}
	s->calls++;
	if (!s->caller && addr && addr != GCTX_CALLSITE_OTHER)
		s->caller = rec_find(c, p, addr);
	/* the contexts this call made */
	for (__u32 i = nctxs_before; i < m->ctxs.n; i++) {
		struct gctx_api_ctx *x = gctx_chunks__at(&m->ctxs, i);

		if (x->creator_idx == p->pub.idx && !x->create_site)
			x->create_site = idx + 1;
	}
	return 0;
}

__u32 gctx_model__ncallsites(const struct gctx_model *m)
{
	return m && m->callers ? m->callers->sites.n : 0;
}

const struct gctx_callsite *gctx_model__callsite(const struct gctx_model *m, __u32 idx)
{
	return idx < gctx_model__ncallsites(m) ? gctx_chunks__at(&m->callers->sites, idx) : NULL;
}

const __u32 *gctx_model__proc_callsites(const struct gctx_model *m, __u32 proc_idx, __u32 *n)
{
	*n = 0;
	if (!m || !m->callers || proc_idx >= m->callers->cap_procs)
		return NULL;
	*n = m->callers->procs[proc_idx].n;
	return m->callers->procs[proc_idx].v;
}

const struct gctx_rec_caller *gctx_model__caller(const struct gctx_model *m, __u32 proc_idx,
						 __u64 addr)
{
	if (!m || !m->callers || proc_idx >= m->procs.n || !addr)
		return NULL;
	return rec_find(m->callers, P(m, proc_idx), addr);
}

const struct gctx_rec_caller *gctx_model__caller_by_pid(const struct gctx_model *m, __u32 pid,
							__u64 addr)
{
	__u32 i;

	if (!m || !m->callers || !addr ||
	    !gctx_hmap__get(&m->callers->rec_map, NO_PROC | pid, addr, &i))
		return NULL;
	return gctx_chunks__at(&m->callers->recs, i);
}

const struct gctx_rec_caller_drops *gctx_model__caller_drops(const struct gctx_model *m)
{
	return m && m->callers && m->callers->has_drops ? &m->callers->drops : NULL;
}

/* ---- compaction (compact.c) ---- */

void mdl_callers_abort(struct gctx_model *m)
{
	struct mdl_callers *c = m->callers;

	if (!c)
		return;
	gctx_hmap__free(&c->next_rec_map);
	gctx_hmap__free(&c->next_site_map);
	free(c->rec_to);
	free(c->site_rec);
	free(c->next_procs);
	c->rec_to = c->site_rec = NULL;
	c->next_procs = NULL;
}

/* A rec_map key through the process map: NO_PROC keys stay while a kept process has the pid. */
static bool rec_key_kept(const struct mdl_remap *r, __u64 k1, __u64 *out)
{
	__u32 v;

	if (k1 & NO_PROC) {
		*out = k1;
		return gctx_hmap__get(&r->pids, k1 & 0xffffffffu, 0, &v);
	}
	if (r->proc[k1 & 0xffffffffu] == MDL_GONE)
		return false;
	*out = (k1 & ~0xffffffffull) | r->proc[k1 & 0xffffffffu];
	return true;
}

static int plan_sites(struct mdl_callers *c, struct mdl_remap *r, struct gctx_hmap *where)
{
	__u32 n = 0;

	for (__u32 i = 0; i < c->sites.n; i++) {
		const struct gctx_callsite *s = gctx_chunks__at(&c->sites, i);
		__u32 ri;

		if (r->proc[s->proc_idx] == MDL_GONE)
			continue;
		r->site[i] = n++;
		if (s->caller && gctx_hmap__get(where, (__u64)(uintptr_t)s->caller, 0, &ri)) {
			c->rec_to[ri] = 0; /* kept: numbered below */
			c->site_rec[i] = ri;
		}
	}
	return 0;
}

int mdl_callers_plan(struct gctx_model *m, struct mdl_remap *r)
{
	struct mdl_callers *c = m->callers;
	struct gctx_hmap where = {}; /* record address -> old index */
	__u32 n = 0;
	int err = -ENOMEM;

	if (!c)
		return 0;
	r->site = malloc((c->sites.n + 1) * sizeof(*r->site));
	c->rec_to = malloc((c->recs.n + 1) * sizeof(*c->rec_to));
	c->site_rec = malloc((c->sites.n + 1) * sizeof(*c->site_rec));
	c->next_procs = calloc(r->nprocs + 1, sizeof(*c->next_procs));
	if (!r->site || !c->rec_to || !c->site_rec || !c->next_procs)
		goto out;
	memset(r->site, 0xff, (c->sites.n + 1) * sizeof(*r->site));
	memset(c->rec_to, 0xff, (c->recs.n + 1) * sizeof(*c->rec_to));
	memset(c->site_rec, 0xff, (c->sites.n + 1) * sizeof(*c->site_rec));
	for (__u32 i = 0; i < c->recs.n; i++)
		if (gctx_hmap__put(&where, (__u64)(uintptr_t)gctx_chunks__at(&c->recs, i), 0, i))
			goto out;
	plan_sites(c, r, &where);
	for (__u32 i = 0; i < c->rec_map.cap; i++) {
		const struct gctx_hent *e = &c->rec_map.e[i];
		__u64 k1;

		if (e->used && rec_key_kept(r, e->k1, &k1))
			c->rec_to[e->val] = 0;
	}
	for (__u32 i = 0; i < c->recs.n; i++)
		if (c->rec_to[i] != MDL_GONE)
			c->rec_to[i] = n++;
	for (__u32 i = 0; i < c->sites.n; i++)
		if (c->site_rec[i] != MDL_GONE)
			c->site_rec[i] = c->rec_to[c->site_rec[i]];
	for (__u32 i = 0; i < c->rec_map.cap; i++) {
		const struct gctx_hent *e = &c->rec_map.e[i];
		__u64 k1;

		if (e->used && rec_key_kept(r, e->k1, &k1) &&
		    gctx_hmap__put(&c->next_rec_map, k1, e->k2, c->rec_to[e->val]))
			goto out;
	}
	err = mdl_map_remap(&c->site_map, &c->next_site_map, r->proc, NULL, r->site);
out:
	gctx_hmap__free(&where);
	return err;
}

void mdl_callers_apply(struct gctx_model *m, const struct mdl_remap *r)
{
	struct mdl_callers *c = m->callers;

	if (!c)
		return;
	mdl_chunks_squeeze(&c->recs, c->rec_to);
	for (__u32 i = 0; i < c->sites.n; i++) {
		struct gctx_callsite *s = gctx_chunks__at(&c->sites, i);

		if (r->site[i] == MDL_GONE)
			continue;
		s->proc_idx = r->proc[s->proc_idx];
		s->caller =
		    c->site_rec[i] != MDL_GONE ? gctx_chunks__at(&c->recs, c->site_rec[i]) : NULL;
	}
	mdl_chunks_squeeze(&c->sites, r->site);
	for (__u32 i = 0; i < c->cap_procs; i++) {
		struct plist *pl = &c->procs[i];

		if (i >= r->old_nprocs || r->proc[i] == MDL_GONE) {
			free(pl->v);
			continue;
		}
		for (__u32 k = 0; k < pl->n; k++)
			pl->v[k] = r->site[pl->v[k]];
		c->next_procs[r->proc[i]] = *pl;
	}
	free(c->procs);
	c->procs = c->next_procs;
	c->cap_procs = r->nprocs + 1;
	c->next_procs = NULL;
	gctx_hmap__free(&c->rec_map);
	gctx_hmap__free(&c->site_map);
	c->rec_map = c->next_rec_map;
	c->site_map = c->next_site_map;
	memset(&c->next_rec_map, 0, sizeof(c->next_rec_map));
	memset(&c->next_site_map, 0, sizeof(c->next_site_map));
	mdl_callers_abort(m); /* the plan's arrays */
}
