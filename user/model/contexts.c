// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model: API contexts and device allocations as the application sees them, from
 * the CUDA driver API / HIP runtime call records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/api.h"
#include "lib/grow.h"
#include "lib/tsmath.h"
#include "model/model_priv.h"

/* ---- API contexts (CUDA driver API / HIP runtime uprobes) ---- */

#define API_JOIN_SLACK_NS (5 * 1000000000ULL) /* record-order slack of the kernel-object join */
#define CU_NOT_FOUND	  500		      /* CUDA_ERROR_NOT_FOUND */

/*
 * A context the process can no longer use: destroyed, or made by the program an exec replaced
 * (an exec drops all driver state, so the new program's contexts are new ones).
 */
bool mdl_ctx_gone(const struct proc_priv *p, const struct gctx_api_ctx *c)
{
	const struct gctx_proc *pp = &p->pub;

	return c->destroyed || (pp->nexecs && c->create_ns < pp->execs[pp->nexecs - 1].ts_ns);
}

static struct gctx_api_ctx *ctx_find(const struct gctx_model *m, const struct proc_priv *p,
				     __u32 vendor, __u64 handle, int primary_dev)
{
	/* newest first: a reused handle means the newest context */
	for (__u32 i = p->nctxs; i-- > 0;) {
		struct gctx_api_ctx *c = CTX(m, p->ctxs[i]);

		if (mdl_ctx_gone(p, c) || c->vendor != vendor)
			continue;
		if (primary_dev >= 0 ? (c->primary && c->device == primary_dev)
				     : (handle && c->handle == handle))
			return c;
	}
	return NULL;
}

static struct gctx_api_ctx *ctx_new(struct gctx_model *m, struct proc_priv *p,
				    const struct gctx_ev_api *ev, __u64 handle, bool primary)
{
	struct gctx_api_ctx *c;

	if (gctx_grow(&p->ctxs, &p->cap_ctxs, p->nctxs + 1, sizeof(*p->ctxs)))
		return NULL;
	c = gctx_chunks__add(&m->ctxs);
	if (!c)
		return NULL;
	c->id = m->ctxs.n;
	c->handle = handle;
	c->vendor = gctx_api_vendor(ev->fn);
	c->primary = primary;
	c->green = ev->fn == GCTX_CU_GREEN_CTX_CREATE;
	c->device = -1;
	if (gctx_api_device_arg(ev->fn) >= 0)
		c->device = (int)ev->args[gctx_api_device_arg(ev->fn)];
	c->creator_idx = p->pub.idx;
	c->creator_tid = ev->hdr.tid;
	c->create_fn = ev->fn;
	c->create_ns = ev->hdr.ts_ns;
	p->ctxs[p->nctxs++] = c->id;

	/*
	 * The kernel-level objects this process created during the call. Objects are in record
	 * order, which is syscall-exit order, not entry order: an object of another process or
	 * thread may be listed after ours with an earlier entry time, so only an earlier object of
	 * the calling thread itself (whose ioctls all ended before the call began) ends the walk,
	 * or one older than any ioctl plausibly blocks.
	 */
	for (__u32 i = m->objs.n; i-- > 0;) {
		struct gctx_gpu_obj *o = &O(m, i)->pub;

		if (o->create_ns < ev->hdr.ts_ns) {
			if ((o->creator_idx == p->pub.idx && o->creator_tid == ev->hdr.tid) ||
			    gctx_ts_add(o->create_ns, API_JOIN_SLACK_NS) < ev->hdr.ts_ns)
				break;
			continue;
		}
		if (o->creator_idx != p->pub.idx ||
		    o->create_ns > gctx_ts_add(ev->hdr.ts_ns, ev->dur_ns))
			continue;
		__u32 *k = realloc(c->kobjs, (c->nkobjs + 1) * sizeof(*k));

		if (!k)
			break;
		c->kobjs = k;
		c->kobjs[c->nkobjs++] = i;
	}
	return c;
}

/*
 * A thread made c current. Kept: its first time and its latest GCTX_CUR_LATEST (the oldest of
 * those is replaced), for the first GCTX_CUR_TIDS threads; the others are counted. A server
 * that switches contexts on every request for weeks holds a few entries per thread, not one
 * per call.
 */
static void ctx_made_current(struct gctx_model *m, struct gctx_api_ctx *c, __u32 tid, __u32 fn,
			     __u64 ts)
{
	struct gctx_ctx_current now = {tid, fn, ts};
	__u32 n = 0, oldest = 0;

	for (__u32 i = 0; i < c->ncurrents; i++) {
		if (c->currents[i].tid != tid || !n++)
			continue; /* its first stays */
		if (n == 2 || c->currents[i].ts_ns < c->currents[oldest].ts_ns)
			oldest = i;
	}
	if (n > GCTX_CUR_LATEST) {
		c->currents[oldest] = now;
	} else if ((n || c->ncurrent_tids < GCTX_CUR_TIDS) &&
		   !gctx_grow(&c->currents, &c->cap_currents, c->ncurrents + 1,
			      sizeof(*c->currents))) {
		c->currents[c->ncurrents++] = now;
		c->ncurrent_tids += !n;
		return;
	}
	c->ncurrents_dropped++;
	m->trim.currents++;
}

static __u32 thread_ctx(const struct gctx_thread *t)
{
	return t && t->ctx_depth ? t->ctx_stack[t->ctx_depth - 1] : 0;
}

static void thread_set_ctx(struct gctx_thread *t, __u32 id, bool push)
{
	if (!t)
		return;
	if (push || !t->ctx_depth) {
		if (t->ctx_depth == GCTX_CTX_STACK) {
			memmove(t->ctx_stack, t->ctx_stack + 1,
				(GCTX_CTX_STACK - 1) * sizeof(t->ctx_stack[0]));
			t->ctx_depth--;
		}
		t->ctx_stack[t->ctx_depth++] = id;
	} else {
		t->ctx_stack[t->ctx_depth - 1] = id;
	}
}

/* The context an allocation or launch of this thread goes to. */
static struct gctx_api_ctx *ctx_current(struct gctx_model *m, struct proc_priv *p,
					struct gctx_thread *t, const struct gctx_ev_api *ev)
{
	struct gctx_api_ctx *c = CTX(m, thread_ctx(t));

	if (c && !mdl_ctx_gone(p, c) && c->vendor == gctx_api_vendor(ev->fn))
		return c;
	if (gctx_api_vendor(ev->fn) == GCTX_VENDOR_HIP) {
		/* HIP works on the current device's primary context, made on first use */
		c = ctx_find(m, p, GCTX_VENDOR_HIP, 0, p->hip_device);
		if (!c) {
			c = ctx_new(m, p, ev, 0, true);
			if (c)
				c->device = p->hip_device;
		}
		return c;
	}
	return NULL;
}

/* ---- allocations and the call records ---- */

static int mem_alloc(struct gctx_model *m, struct proc_priv *p, struct gctx_api_ctx *c,
		     const struct gctx_ev_api *ev)
{
	struct gctx_api_mem *mm = gctx_chunks__add(&m->mems);
	int size_arg = gctx_api_size_arg(ev->fn);

	if (!mm || gctx_hmap__put(&m->mem_map, p->pub.idx, ev->out, m->mems.n - 1))
		return -ENOMEM;
	mm->proc_idx = p->pub.idx;
	mm->ctx_id = c ? c->id : 0;
	mm->fn = ev->fn;
	mm->ptr = ev->out;
	mm->size = size_arg >= 0 ? ev->args[size_arg] : 0;
	mm->alloc_ns = ev->hdr.ts_ns;
	if (c) {
		c->mem_live += mm->size;
		c->mem_total += mm->size;
		c->nallocs++;
	}
	return 0;
}

static void mem_free(struct gctx_model *m, struct proc_priv *p, const struct gctx_ev_api *ev)
{
	struct gctx_api_mem *mm;
	__u32 idx;

	if (!gctx_hmap__get(&m->mem_map, p->pub.idx, ev->args[0], &idx))
		return;
	mm = gctx_chunks__at(&m->mems, idx);
	if (mm->freed)
		return;
	mm->freed = true;
	mm->free_ns = ev->hdr.ts_ns;
	if (CTX(m, mm->ctx_id) && CTX(m, mm->ctx_id)->mem_live >= mm->size)
		CTX(m, mm->ctx_id)->mem_live -= mm->size;
}

static void ctx_destroy(struct gctx_api_ctx *c, __u64 ts)
{
	if (!c || c->destroyed)
		return;
	c->destroyed = true;
	c->destroy_ns = ts;
}

/* A GPU file of vendor v's driver (enum gctx_api_vendor)? */
static bool vendor_kind(__u32 v, __u32 kind)
{
	if (v == GCTX_VENDOR_CUDA)
		return kind == GCTX_DEV_NVIDIACTL || kind == GCTX_DEV_NVIDIA ||
		       kind == GCTX_DEV_NVIDIA_UVM;
	return kind == GCTX_DEV_KFD || kind == GCTX_DEV_DRM_RENDER;
}

/* Whose GPU state of vendor v p holds now, by its GPU files: -1 none; p itself when it holds
 * a file it opened (or held first at attach); else the process it carries the state of,
 * having inherited the file through fork without exec (that process's own source when known,
 * else the file's opener). Seen without the init that made the state: opened before attach,
 * or by a library whose calls were not probed. */
static int held_gpu_src(struct gctx_model *m, const struct proc_priv *p, __u32 v)
{
	int own = -1;

	for (__u32 i = 0; i < p->nhrefs; i++) {
		const struct file_priv *f = F(m, p->hrefs[i].file_idx);
		const struct gctx_holder *h = &f->pub.holders[p->hrefs[i].holder_idx];
		__u32 from;

		if (!h->held || !vendor_kind(v, f->pub.kind))
			continue;
		if (h->how != GCTX_HOLD_INHERITED || h->kept_across_exec) {
			own = p->pub.idx;
			continue;
		}
		from = f->pub.opener_idx >= 0 ? (__u32)f->pub.opener_idx : h->from_proc_idx;
		if (P(m, h->from_proc_idx)->api_src[v])
			from = P(m, h->from_proc_idx)->api_src[v] - 1;
		if (from != p->pub.idx)
			return from;
	}
	return own;
}

/* At attach: a process with a CUDA/HIP library mapped and GPU files of that vendor held had
 * initialised it before attach, itself or, holding them inherited, the process it was forked
 * from. With the library mapped but no such file, it was loaded and not initialised. */
int mdl_ev_api_present(struct gctx_model *m, const struct gctx_rec_api_present *r)
{
	struct proc_priv *p = mdl_proc_lookup(m, r->pid);

	for (__u32 v = 0; p && v < 2; v++) {
		int src;

		if (!(r->vendors & (1u << v)) || p->api_src[v])
			continue;
		src = held_gpu_src(m, p, v);
		if (src >= 0)
			p->api_src[v] = src + 1;
	}
	return 0;
}

int mdl_ev_api(struct gctx_model *m, const struct gctx_ev_api *ev)
{
	bool returned = ev->flags & GCTX_API_RETURNED;
	bool ok = returned && ev->ret == 0;
	__u64 out = (ev->flags & GCTX_API_OUT_OK) ? ev->out : 0;
	__u32 v = gctx_api_vendor(ev->fn);
	struct gctx_api_ctx *c;
	struct gctx_thread *t;
	struct proc_priv *p;
	int err;

	if (ev->fn == GCTX_API_NONE || ev->fn >= GCTX_API_MAX)
		return 0;
	p = mdl_proc_for_event(m, &ev->hdr, false);
	if (!p)
		return -ENOMEM;
	t = mdl_thread_live(m, p, ev->hdr.tid, ev->hdr.comm);
	p->api_calls++;
	if (ev->fn == GCTX_CU_GET_PROC_ADDRESS && returned && ev->ret == CU_NOT_FOUND) {
		/* the runtime probing for optional symbols: normal, counted, not an error */
		m->procaddr_not_found++;
		return 0;
	}
	if (!p->api_src[v] && returned && ev->ret != 0) {
		/* a failed call in a child that carries another process's GPU state through its
		 * files, that process's init unseen (before attach): inherited use */
		int src = held_gpu_src(m, p, v);

		if (src >= 0 && (__u32)src != p->pub.idx)
			p->api_src[v] = src + 1;
	}
	if (p->api_src[v] && p->api_src[v] != p->pub.idx + 1) {
		if (p->api_icc_id[v]) {
			struct gctx_finding *fd = FIND(m, p->api_icc_id[v] - 1);

			fd->uses++; /* later calls are counted, the first refused one kept */
			mdl_icc_refused(fd, ev);
		} else {
			err = mdl_icc_raise(m, p, ev, v);
			if (err)
				return err;
		}
	} else if (returned && ev->ret != 0) {
		/* an inherited call's failure is told by its inherited-context-call finding */
		err = mdl_apierr_count(m, p, ev);
		if (err)
			return err;
	}

	switch (ev->fn) {
	case GCTX_CU_INIT:
	case GCTX_HIP_INIT:
		if (ok)
			p->api_src[v] = p->pub.idx + 1;
		break;
	case GCTX_HIP_SET_DEVICE:
		if (ok)
			p->hip_device = (int)ev->args[0];
		break;
	case GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN:
	case GCTX_HIP_DEVICE_PRIMARY_CTX_RETAIN:
		if (!ok)
			break;
		c = ctx_find(m, p, v, 0, (int)ev->args[1]);
		if (!c)
			c = ctx_new(m, p, ev, out, true);
		if (!c)
			return -ENOMEM;
		if (!c->handle)
			c->handle = out;
		c->refs++;
		break;
	case GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE:
	case GCTX_HIP_DEVICE_PRIMARY_CTX_RELEASE:
		c = ok ? ctx_find(m, p, v, 0, (int)ev->args[0]) : NULL;
		if (c && c->refs && !--c->refs)
			ctx_destroy(c, ev->hdr.ts_ns);
		break;
	case GCTX_CU_DEVICE_PRIMARY_CTX_RESET:
		if (ok)
			ctx_destroy(ctx_find(m, p, v, 0, (int)ev->args[0]), ev->hdr.ts_ns);
		break;
	case GCTX_HIP_DEVICE_RESET:
		if (ok)
			ctx_destroy(ctx_find(m, p, v, 0, p->hip_device), ev->hdr.ts_ns);
		break;
	case GCTX_CU_CTX_CREATE:
	case GCTX_CU_CTX_CREATE_V3:
	case GCTX_CU_CTX_CREATE_V4:
	case GCTX_HIP_CTX_CREATE:
	case GCTX_CU_GREEN_CTX_CREATE:
		if (!ok || !out)
			break;
		c = ctx_new(m, p, ev, out, false);
		if (!c)
			return -ENOMEM;
		if (ev->fn != GCTX_CU_GREEN_CTX_CREATE) { /* a created context is pushed */
			thread_set_ctx(t, c->id, true);
			ctx_made_current(m, c, ev->hdr.tid, ev->fn, ev->hdr.ts_ns);
		}
		break;
	case GCTX_CU_CTX_DESTROY:
	case GCTX_HIP_CTX_DESTROY:
		if (ok)
			ctx_destroy(ctx_find(m, p, v, ev->args[0], -1), ev->hdr.ts_ns);
		break;
	case GCTX_CU_CTX_SET_CURRENT:
	case GCTX_HIP_CTX_SET_CURRENT:
	case GCTX_CU_CTX_PUSH_CURRENT:
	case GCTX_HIP_CTX_PUSH_CURRENT:
		if (!ok)
			break;
		c = ctx_find(m, p, v, ev->args[0], -1);
		thread_set_ctx(t, c ? c->id : 0,
			       ev->fn == GCTX_CU_CTX_PUSH_CURRENT ||
				   ev->fn == GCTX_HIP_CTX_PUSH_CURRENT);
		if (c)
			ctx_made_current(m, c, ev->hdr.tid, ev->fn, ev->hdr.ts_ns);
		break;
	case GCTX_CU_CTX_POP_CURRENT:
	case GCTX_HIP_CTX_POP_CURRENT:
		if (ok && t && t->ctx_depth)
			t->ctx_depth--;
		break;
	case GCTX_CU_MEM_FREE:
	case GCTX_HIP_FREE:
		if (ok)
			mem_free(m, p, ev);
		break;
	case GCTX_CU_LAUNCH_KERNEL:
	case GCTX_CU_LAUNCH_KERNEL_EX:
	case GCTX_CU_GRAPH_LAUNCH:
	case GCTX_HIP_LAUNCH_KERNEL:
	case GCTX_HIP_MODULE_LAUNCH_KERNEL:
		c = ctx_current(m, p, t, ev);
		if (c)
			c->launches++;
		break;
	default:
		/* the allocations (cuMemAlloc*, cuMemCreate, hipMalloc*): the calls with a size
		 * argument */
		if (gctx_api_size_arg(ev->fn) >= 0 && ok && out)
			return mem_alloc(m, p, ctx_current(m, p, t, ev), ev);
		break;
	}
	return 0;
}
