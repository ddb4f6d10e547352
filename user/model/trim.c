// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Trimming, the part of a compaction (compact.c) that bounds what a process accumulates while
 * it lives: a Python server churning thread pools for weeks, a CUDA process that allocates and
 * frees RM objects all the time, a shell that execs in a loop. Kept: live threads, the first
 * thread and the newest GCTX_KEEP_EXITED_THREADS exited ones; the first exec and the latest
 * GCTX_KEEP_EXECS - 1 (the current image, and what findings and reports name); live objects,
 * the newest GCTX_KEEP_DESTROYED_OBJS destroyed ones per file, and every object a kept record
 * names (the parent of a kept object, a kept context's kernel objects); the GPU files it closed
 * before the cut-off, unless a kept record names them. What goes is counted on its process or
 * file and in the model (gctx_model__trimmed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_priv.h"

/* ---- threads and execs ---- */

/* The first index from which p's exited threads are kept: the newest GCTX_KEEP_EXITED_THREADS. */
static __u32 exited_from(const struct gctx_proc *p)
{
	__u32 n = 0;

	for (__u32 i = p->nthreads; i-- > 0;)
		if (p->threads[i].exited && ++n > GCTX_KEEP_EXITED_THREADS)
			return i + 1;
	return 0;
}

static bool thread_kept(const struct gctx_proc *p, __u32 i, __u32 from)
{
	return !i || i >= from || !p->threads[i].exited;
}

bool mdl_trim_exec_kept(const struct gctx_proc *p, __u32 i)
{
	return !i || i + GCTX_KEEP_EXECS - 1 >= p->nexecs;
}

/* The kept processes' kept threads, (new proc, tid) -> new thread index: the latest thread of
 * a tid, as thread_add leaves it. */
int mdl_trim_plan_threads(const struct gctx_model *m, const struct mdl_remap *r,
			  struct gctx_hmap *thread_map)
{
	for (__u32 i = 0; i < r->old_nprocs; i++) {
		const struct gctx_proc *p = &P(m, i)->pub;
		__u32 from, n = 0;

		if (r->proc[i] == MDL_GONE)
			continue;
		from = exited_from(p);
		for (__u32 k = 0; k < p->nthreads; k++)
			if (thread_kept(p, k, from) &&
			    gctx_hmap__put(thread_map, r->proc[i], p->threads[k].tid, n++))
				return -ENOMEM;
	}
	return 0;
}

/* Give back the room of an array that shrank to n elements (a failure keeps it as it is). */
void mdl_shrink(void *pp, __u32 *cap, __u32 n, size_t elem)
{
	void *q;

	if (!n || *cap <= 2 * n + 4)
		return;
	q = realloc(*(void **)pp, n * elem);
	if (!q)
		return;
	*(void **)pp = q;
	*cap = n;
}

/* Before its strings and context ids are remapped: they are those of what stays. */
void mdl_trim_apply_proc(struct gctx_model *m, struct proc_priv *p)
{
	struct gctx_proc *pp = &p->pub;
	__u32 from = exited_from(pp), n = 0;

	for (__u32 i = 0; i < pp->nthreads; i++)
		if (thread_kept(pp, i, from))
			pp->threads[n++] = pp->threads[i];
	pp->nthreads_dropped += pp->nthreads - n;
	m->trim.threads += pp->nthreads - n;
	pp->nthreads = n;
	mdl_shrink(&pp->threads, &p->cap_threads, n, sizeof(*pp->threads));
	n = 0;
	for (__u32 i = 0; i < pp->nexecs; i++)
		if (mdl_trim_exec_kept(pp, i))
			pp->execs[n++] = pp->execs[i];
	pp->nexecs_dropped += pp->nexecs - n;
	m->trim.execs += pp->nexecs - n;
	pp->nexecs = n;
	mdl_shrink(&pp->execs, &p->cap_execs, n, sizeof(*pp->execs));
}

/* ---- files ---- */

/*
 * The files a compaction may leave out: closed before before_ns, held only by live kept
 * processes (an exited one keeps what it held, as before: a dump may show it), and named by
 * nothing kept (a fork with GPU state not yet judged, a kept context's kernel objects). A
 * process that opens and closes the GPU for each request (NVML per scrape) would otherwise keep
 * every description it ever had, with its objects. NULL when out of memory.
 */
__u8 *mdl_trim_plan_files(const struct gctx_model *m, const struct mdl_remap *r, __u64 before_ns)
{
	__u8 *drop = calloc(m->files.n ? m->files.n : 1, 1);

	if (!drop)
		return NULL;
	for (__u32 i = 0; i < m->files.n; i++) {
		const struct gctx_gpu_file *f = &F(m, i)->pub;

		drop[i] = f->closed && f->close_ns < before_ns;
		for (__u32 k = 0; drop[i] && k < f->nholders; k++) {
			const struct gctx_proc *p = &P(m, f->holders[k].proc_idx)->pub;

			drop[i] = r->proc[p->idx] == MDL_GONE || !p->exited;
		}
	}
	for (__u32 i = 0; i < r->old_nprocs; i++) {
		const struct proc_priv *p = P(m, i);

		if (r->proc[i] != MDL_GONE && p->fws_pending)
			drop[p->fws_file_idx] = 0;
	}
	for (__u32 i = 0; i < m->ctxs.n; i++) {
		const struct gctx_api_ctx *c = gctx_chunks__at(&m->ctxs, i);

		if (c->creator_idx >= r->old_nprocs || r->proc[c->creator_idx] == MDL_GONE)
			continue;
		for (__u32 k = 0; k < c->nkobjs; k++)
			drop[O(m, c->kobjs[k])->pub.file_id - 1] = 0;
	}
	return drop;
}

/* ---- objects ---- */

/* The first kept object from next along a chain whose entries below are known. */
static __u32 along(const __u32 *chain, int next)
{
	return next < 0 ? MDL_GONE : chain[next];
}

int mdl_trim_plan_objs(const struct gctx_model *m, struct mdl_remap *r)
{
	__u32 n = m->objs.n, next = 0;
	__u8 *need = calloc(n ? n : 1, 1);
	__u32 *ndead = calloc(m->files.n ? m->files.n : 1, sizeof(*ndead));
	int err = -ENOMEM;

	r->obj = mdl_gone_map(n);
	r->obj_sib = mdl_gone_map(n);
	r->obj_client = mdl_gone_map(n);
	r->obj_file = mdl_gone_map(n);
	if (!need || !ndead || !r->obj || !r->obj_sib || !r->obj_client || !r->obj_file)
		goto out;
	for (__u32 i = 0; i < m->ctxs.n; i++) {
		const struct gctx_api_ctx *c = gctx_chunks__at(&m->ctxs, i);

		for (__u32 k = 0; r->ctx[i] != MDL_GONE && k < c->nkobjs; k++)
			need[c->kobjs[k]] = 1;
	}
	/* newest first: a parent has a lower index than its children */
	for (__u32 i = n; i-- > 0;) {
		const struct gctx_gpu_obj *o = &O(m, i)->pub;
		__u32 f = o->file_id - 1;

		if (r->file[f] == MDL_GONE ||
		    (o->destroyed && !need[i] && ndead[f]++ >= GCTX_KEEP_DESTROYED_OBJS))
			continue;
		r->obj[i] = 0;
		if (o->parent_obj >= 0)
			need[o->parent_obj] = 1;
	}
	/* every link goes to a lower index: the chains fill oldest first */
	for (__u32 i = 0; i < n; i++) {
		const struct obj_priv *o = O(m, i);

		if (r->obj[i] != MDL_GONE)
			r->obj[i] = next++;
		r->obj_sib[i] =
		    r->obj[i] != MDL_GONE ? r->obj[i] : along(r->obj_sib, o->next_sibling);
		r->obj_client[i] =
		    r->obj[i] != MDL_GONE ? r->obj[i] : along(r->obj_client, o->next_in_client);
		r->obj_file[i] =
		    r->obj[i] != MDL_GONE ? r->obj[i] : along(r->obj_file, o->next_in_file);
	}
	err = 0;
out:
	free(need);
	free(ndead);
	return err;
}

static int relink(const __u32 *chain, int next)
{
	__u32 v = along(chain, next);

	return v == MDL_GONE ? -1 : (int)v;
}

/* After the files moved: the drops are counted on the file kept. */
void mdl_trim_apply_objs(struct gctx_model *m, const struct mdl_remap *r)
{
	for (__u32 i = 0; i < m->objs.n; i++) {
		struct obj_priv *o = O(m, i);
		__u32 f = mdl_re_id(r->file, o->pub.file_id);

		if (r->obj[i] == MDL_GONE) {
			if (f) {
				F(m, f - 1)->pub.nobjs_dropped++;
				m->trim.objs++;
			}
			continue;
		}
		o->pub.id = r->obj[i] + 1;
		o->pub.file_id = f;
		/* MDL_GONE: its creator was dropped (the file lives on in another process) */
		o->pub.creator_idx =
		    o->pub.creator_idx < r->old_nprocs ? r->proc[o->pub.creator_idx] : MDL_GONE;
		o->pub.parent_obj = relink(r->obj, o->pub.parent_obj);
		o->first_child = relink(r->obj_sib, o->first_child);
		o->next_sibling = relink(r->obj_sib, o->next_sibling);
		o->next_in_client = relink(r->obj_client, o->next_in_client);
		o->next_in_file = relink(r->obj_file, o->next_in_file);
	}
	mdl_chunks_squeeze(&m->objs, r->obj);
}

/* ---- the counts ---- */

const struct gctx_model_trim *gctx_model__trimmed(const struct gctx_model *m)
{
	static const struct gctx_model_trim none;

	return m ? &m->trim : &none;
}

__u64 gctx_model__nthreads(const struct gctx_model *m)
{
	return m ? m->nthreads : 0;
}

__u64 gctx_model__nexecs(const struct gctx_model *m)
{
	return m ? m->nexecs : 0;
}
