// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline of the API-level contexts (CUDA driver API, HIP runtime), the second context source:
 * a track per context with its lifetime, the API allocations counter, and the API call slices,
 * put on the context the call made or the thread's current one, else on the thread.
 */
#include <stdio.h>

#include "decode/api.h"
#include "model/model.h"
#include "output/timeline/timeline_priv.h"
#include "trace/records.h"

/* ---- API-level contexts (CUDA driver API, HIP runtime): the second context source ---- */

static void trk_actx(struct exporter *x, __u32 ci, struct gctx_tl_track *t)
{
	const struct gctx_api_ctx *c = gctx_model__ctx(x->m, ci);

	memset(t, 0, sizeof(*t));
	t->uuid = UUID(U_ACTX, ci + 1);
	t->parent = UUID(U_PROC, c->creator_idx + 1);
	t->kind = GCTX_TL_GPU;
	t->pid = gctx_model__proc(x->m, c->creator_idx)->pid;
	t->lane = x->ctxs[ci].lane;
}

static void actx_new(struct exporter *x, __u32 ci)
{
	const struct gctx_api_ctx *c = gctx_model__ctx(x->m, ci);
	const char *api = c->vendor == GCTX_VENDOR_HIP ? "HIP" : "CUDA";
	struct gctx_tl_track t;
	struct xproc *xp;
	char name[96], hbuf[24], dev[24];
	struct args a;

	if (gctx_grow(&x->ctxs, &x->cap_ctxs, ci + 1, sizeof(*x->ctxs)) ||
	    !tl_xp(x, c->creator_idx)) {
		nomem(x);
		return;
	}
	tl_proc_describe(x, c->creator_idx, 0);
	xp = &x->procs[c->creator_idx];
	if (gctx_grow(&xp->actx, &xp->cap_actx, xp->nactx + 1, sizeof(*xp->actx))) {
		nomem(x);
		return;
	}
	xp->actx[xp->nactx++] = ci;
	x->ctxs[ci].described = x->ctxs[ci].open = true;
	x->ctxs[ci].lane = ++x->lanes;
	x->ctxs[ci].cursor = c->create_ns;
	snprintf(hbuf, sizeof(hbuf), "0x%llx", (unsigned long long)c->handle);
	dev[0] = '\0';
	if (c->device >= 0)
		snprintf(dev, sizeof(dev), ", device %d", c->device);
	snprintf(name, sizeof(name), "%s %scontext %s%s", api,
		 c->primary ? "primary " : (c->green ? "green " : ""), hbuf, dev);
	trk_actx(x, ci, &t);
	{
		char tname[104];

		snprintf(tname, sizeof(tname), "ctx %s", name);
		t.name = tname;
		tl_describe(x, &t, c->create_ns);
	}
	a.n = 0;
	tl_arg_str(&a, "api", api);
	tl_arg_str(&a, "handle", hbuf);
	tl_arg_bool(&a, "primary", c->primary);
	if (c->green)
		tl_arg_bool(&a, "green", true);
	tl_arg_s64(&a, "device", c->device);
	tl_arg_u64(&a, "context_id", c->id);
	tl_arg_str(&a, "created_by", gctx_api_fn_name(c->create_fn));
	tl_arg_u64(&a, "creator_pid", gctx_model__proc(x->m, c->creator_idx)->pid);
	tl_arg_u64(&a, "creator_tid", c->creator_tid);
	tl_arg_u64(&a, "kernel_objects", c->nkobjs);
	tl_emit(x, 'B', &t, c->create_ns, name, "gpu-context", &a, 0, 0);
}

void tl_actxs_new(struct exporter *x)
{
	__u32 n = gctx_model__nctxs(x->m);

	while (x->ctxs_seen < n && !x->err)
		actx_new(x, x->ctxs_seen++);
}

/* End the open API contexts of process pi that are gone (destroyed, replaced by an exec), or
 * all of them (the process ended) when ts is not 0. */
void tl_actxs_sync(struct exporter *x, __u32 pi, __u64 ts)
{
	const struct gctx_proc *p = gctx_model__proc(x->m, pi);
	struct xproc *xp = &x->procs[pi];
	__u64 exec_ns = p->nexecs ? p->execs[p->nexecs - 1].ts_ns : 0;
	struct gctx_tl_track t;
	struct args a;
	__u32 i = 0;

	while (i < xp->nactx) {
		__u32 ci = xp->actx[i];
		const struct gctx_api_ctx *c = gctx_model__ctx(x->m, ci);
		struct xctx *xc = &x->ctxs[ci];
		__u64 end;

		a.n = 0;
		if (c->destroyed) {
			end = c->destroy_ns;
		} else if (exec_ns > c->create_ns) {
			end = exec_ns;
			tl_arg_bool(&a, "dropped_by_exec", true);
		} else if (ts) {
			end = ts;
			tl_arg_bool(&a, p->exited ? "ended_with_process" : "alive_at_end", true);
		} else {
			i++;
			continue;
		}
		tl_arg_u64(&a, "allocations", c->nallocs);
		tl_arg_u64(&a, "bytes_allocated", c->mem_total);
		tl_arg_u64(&a, "launches", c->launches);
		trk_actx(x, ci, &t);
		xc->cursor = max64(end, xc->cursor);
		tl_emit(x, 'E', &t, xc->cursor, NULL, NULL, &a, 0, 0);
		xc->open = false;
		xp->actx[i] = xp->actx[--xp->nactx];
	}
}

/* API allocations the model added: count them for their process. */
void tl_mems_new(struct exporter *x)
{
	__u32 n = gctx_model__nmems(x->m);

	while (x->mems_seen < n && !x->err) {
		const struct gctx_api_mem *mm = gctx_model__mem(x->m, x->mems_seen);
		struct xproc *xp = tl_xp(x, mm->proc_idx);

		if (!xp || gctx_hmap__put(&x->mem_map, mm->proc_idx, mm->ptr, x->mems_seen)) {
			nomem(x);
			return;
		}
		x->mems_seen++;
		tl_proc_describe(x, mm->proc_idx, 0);
		xp->mem_api += mm->size;
		tl_counter(x, mm->proc_idx, CTR_MEM_API, mm->alloc_ns, (__s64)xp->mem_api);
	}
}

static void mem_freed(struct exporter *x, __u32 pi, __u64 ptr)
{
	struct xproc *xp = &x->procs[pi];
	const struct gctx_api_mem *mm;
	__u32 mi;

	if (!gctx_hmap__get(&x->mem_map, pi, ptr, &mi) || mi == ~0u)
		return;
	mm = gctx_model__mem(x->m, mi);
	if (!mm->freed)
		return;
	gctx_hmap__put(&x->mem_map, pi, ptr, ~0u); /* counted out; the entry exists: cannot fail */
	xp->mem_api -= mm->size < xp->mem_api ? mm->size : xp->mem_api;
	tl_counter(x, pi, CTR_MEM_API, mm->free_ns, (__s64)xp->mem_api);
}

/* ---- record handlers (after the model took the record) ---- */

void tl_on_api(struct exporter *x, const struct gctx_ev_api *ev, __u32 ctxs_before)
{
	const struct gctx_proc *p;
	const struct gctx_thread *th;
	struct gctx_tl_track t;
	char hbuf[24], sym[GCTX_API_STR_LEN + 1], where[512], name[GCTX_API_STR_LEN];
	const struct gctx_rec_caller *caller;
	const char *rn;
	__u64 start = ev->hdr.ts_ns, end = gctx_ts_add(ev->hdr.ts_ns, ev->dur_ns), flow = 0,
	      *cursor = NULL;
	__u32 i, icc = x->icc_ctx;
	int pi, ti, on = -1;
	struct args a;

	x->icc_ctx = 0;
	pi = tl_event_proc(x, &ev->hdr);
	if (pi < 0 || ev->fn == GCTX_API_NONE || ev->fn >= GCTX_API_MAX)
		return;
	tl_actxs_new(x);
	tl_mems_new(x);
	if (ev->fn == GCTX_CU_MEM_FREE || ev->fn == GCTX_HIP_FREE)
		mem_freed(x, pi, ev->args[0]);
	tl_actxs_sync(x, pi, 0);
	p = gctx_model__proc(x->m, pi);
	ti = tl_thread_index(x, pi, ev->hdr.tid);
	if (ti < 0)
		return;
	th = &p->threads[ti];

	/* on the context the call made, else the thread's current one if this process made it
	 * and it is still open, else on the thread */
	for (i = ctxs_before; i < gctx_model__nctxs(x->m); i++)
		if (gctx_model__ctx(x->m, i)->creator_idx == (__u32)pi)
			on = (int)i;
	if (on < 0 && th->ctx_depth) {
		__u32 id = th->ctx_stack[th->ctx_depth - 1];

		if (id && id - 1 < x->cap_ctxs && x->ctxs[id - 1].open &&
		    gctx_model__ctx(x->m, id - 1)->creator_idx == (__u32)pi)
			on = (int)id - 1;
	}
	if (icc && icc - 1 < x->cap_ctxs && x->ctxs[icc - 1].described) {
		/* the first call of a forked child into the parent's driver state */
		trk_actx(x, icc - 1, &t);
		start = max64(start, gctx_model__ctx(x->m, icc - 1)->create_ns);
		flow = tl_new_flow(x);
		a.n = 0;
		tl_arg_u64(&a, "user_pid", p->pid);
		tl_arg_str(&a, "how", "inherited");
		{
			char name[64];

			snprintf(name, sizeof(name), "used by %u (inherited)", p->pid);
			tl_emit(x, 'I', &t, start, name, "gpu-use", &a, flow, 0);
		}
	}
	if (on >= 0) {
		trk_actx(x, on, &t);
		cursor = &x->ctxs[on].cursor;
		start = max64(start, *cursor);
	} else {
		tl_trk_thread(x, pi, ti, &t);
		if (x->s->ops->process_is_main_thread && th->tid == p->pid)
			tl_trk_proc(x, pi, &t); /* the main thread's track is the process's */
		start = max64(start, x->procs[pi].th[ti].begin_ts);
	}
	end = max64(end, start);
	if (cursor)
		*cursor = end;

	a.n = 0;
	tl_arg_u64(&a, "tid", ev->hdr.tid);
	if (ev->flags & GCTX_API_RETURNED) {
		tl_arg_s64(&a, "ret", ev->ret);
		rn = gctx_api_result_name(ev->fn, ev->ret);
		if (rn)
			tl_arg_str(&a, "result", rn);
		if (ev->ret)
			tl_arg_bool(&a, "failed", true);
	} else {
		tl_arg_bool(&a, "returned", false);
	}
	if (ev->flags & GCTX_API_OUT_OK) {
		snprintf(hbuf, sizeof(hbuf), "0x%llx", (unsigned long long)ev->out);
		tl_arg_str(&a, "out", hbuf);
	}
	if (ev->flags & GCTX_API_STR_OK) {
		gctx_copy_str(sym, sizeof(sym), ev->str, sizeof(ev->str));
		tl_arg_str(&a, "symbol", sym);
	}
	if (gctx_api_size_arg(ev->fn) >= 0)
		tl_arg_u64(&a, "size", ev->args[gctx_api_size_arg(ev->fn)]);
	caller = gctx_model__caller(x->m, pi, ev->caller);
	if (!caller && x->stk_m) /* its record comes later in the trace */
		caller = gctx_model__caller_by_pid(x->stk_m, ev->hdr.tgid, ev->caller);
	if (caller && !(caller->flags & (GCTX_CALLER_NO_MAPS | GCTX_CALLER_NO_MODULE))) {
		gctx_frame_format(&caller->frame, where, sizeof(where));
		tl_arg_str(&a, "caller", where); /* "func+0x2a (module)" */
	}
	if (start != ev->hdr.ts_ns || end != gctx_ts_add(ev->hdr.ts_ns, ev->dur_ns)) {
		/* moved to nest on a busy track: the times it really took */
		tl_arg_u64(&a, "start_ns", ev->hdr.ts_ns);
		tl_arg_u64(&a, "dur_ns", ev->dur_ns);
	}
	/* cuInit/hipInit as the GPU initialisation, a forked child's first call as its use */
	tl_stack_add(x, &a, 1u << GCTX_STACK_INIT | 1u << GCTX_STACK_USE, p->pid, ev->fn,
		     ev->hdr.ts_ns, gctx_ts_add(ev->hdr.ts_ns, ev->dur_ns));
	tl_slice(x, &t, start, end, gctx_api_ev_name(ev, name, sizeof(name)), "api", &a, flow);
}
