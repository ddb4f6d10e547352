// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline of the GPU contexts and objects decoded from ioctls: a track per kernel-level context
 * (RM client, RM channel group, UVM space, KFD process, DRM context) nested under its file or RM
 * client, with its lifetime; the GPU-memory counter of sized allocations; the ioctl slices, put
 * on the context they address (when the process made it) or on the file's track.
 * API-level contexts (CUDA, HIP) are in timeline_api.c.
 */
#include <stdio.h>
#include <string.h>

#include "decode/decode.h"
#include "model/model.h"
#include "output/report/print.h"
#include "output/timeline/timeline_priv.h"
#include "trace/records.h"

#define FAM_RM 0xffffu /* RM handles share one namespace per client */

/* ---- GPU objects ---- */

static bool kind_is_rm(__u32 k)
{
	return k >= GCTX_OBJ_RM_CLIENT && k <= GCTX_OBJ_RM_OTHER;
}

static bool file_is_rm(__u32 dev_kind)
{
	return dev_kind == GCTX_DEV_NVIDIACTL || dev_kind == GCTX_DEV_NVIDIA;
}

/*
 * The GPU contexts that get a track of their own. Today they are the kernel-level objects
 * decoded from ioctls; an API-level source (CUDA/HIP contexts from uprobes) adds its kinds
 * here and its records in export_record(), and gets the same tracks, flows and counters.
 */
static bool obj_is_context(const struct gctx_gpu_obj *o)
{
	switch (o->kind) {
	case GCTX_OBJ_RM_CLIENT:
	case GCTX_OBJ_RM_CHANNEL_GROUP:
	case GCTX_OBJ_UVM_SPACE:
	case GCTX_OBJ_KFD_PROCESS:
	case GCTX_OBJ_DRM_CTX:
		return true;
	default:
		return false;
	}
}

/* Objects whose destruction takes nothing else with it. */
static bool obj_is_leaf(__u32 kind)
{
	return kind != GCTX_OBJ_RM_CLIENT && kind != GCTX_OBJ_RM_CHANNEL_GROUP &&
	       !(kind_is_rm(kind) && kind != GCTX_OBJ_RM_MEMORY);
}

static void obj_key(__u32 fi, __u32 fam, __u64 client, __u64 handle, __u64 *k1, __u64 *k2)
{
	*k1 = ((__u64)fam << 32) | fi;
	*k2 = fam == FAM_RM ? (client << 32) | (handle & 0xffffffffULL) : handle;
}

static void obj_key_of(const struct gctx_gpu_obj *o, __u64 *k1, __u64 *k2)
{
	__u32 fam = kind_is_rm(o->kind) ? FAM_RM : o->kind;

	obj_key(o->file_id - 1, fam, o->client, o->handle, k1, k2);
}

static void obj_name(const struct gctx_gpu_obj *o, char *buf, size_t len)
{
	const char *cls = o->cls ? gctx_nv_class_name(o->cls) : NULL;

	if (kind_is_rm(o->kind) || o->kind == GCTX_OBJ_DRM_CTX)
		snprintf(buf, len, "%s 0x%llx%s%s%s", gctx_obj_kind_name(o->kind),
			 (unsigned long long)o->handle, cls ? " (" : "", cls ? cls : "",
			 cls ? ")" : "");
	else
		snprintf(buf, len, "%s (file #%u)", gctx_obj_kind_name(o->kind), o->file_id);
}

void tl_obj_end(struct exporter *x, __u32 xi, __u64 ts, bool at_end)
{
	struct xobj *o = &x->objs[xi];
	const struct gctx_gpu_obj *mo = gctx_model__obj(x->m, o->obj_idx);
	struct xfile *xf = &x->files[o->file_idx];
	struct gctx_tl_track t;
	struct args a;

	if (!o->open)
		return;
	o->open = false;
	/* swap-remove from the file's live list */
	xf->live[o->pos] = xf->live[--xf->nlive];
	x->objs[xf->live[o->pos]].pos = o->pos;
	if (o->ctx) {
		tl_trk_obj(x, xi, &t);
		a.n = 0;
		if (at_end)
			tl_arg_bool(&a, "alive_at_end", true);
		ts = max64(ts, o->cursor);
		o->cursor = ts;
		tl_emit(x, 'E', &t, ts, NULL, NULL, &a, 0, 0);
	}
	if (mo->size && o->proc_idx < x->nprocs) {
		struct xproc *xp = &x->procs[o->proc_idx];

		xp->mem -= mo->size < xp->mem ? mo->size : xp->mem;
		tl_counter(x, o->proc_idx, CTR_MEM, ts, (__s64)xp->mem);
	}
}

/* End the tracked objects of file fi that the model has destroyed. */
void tl_file_objs_sync(struct exporter *x, __u32 fi)
{
	struct xfile *xf = &x->files[fi];
	__u32 i = 0;

	while (i < xf->nlive) {
		__u32 xi = xf->live[i];
		const struct gctx_gpu_obj *mo = gctx_model__obj(x->m, x->objs[xi].obj_idx);

		if (mo->destroyed)
			tl_obj_end(x, xi, mo->destroy_ns, false); /* swaps another one into i */
		else
			i++;
	}
}

/* A new model object: follow it if it is a context or has a size. */
static void obj_new(struct exporter *x, __u32 oi)
{
	const struct gctx_gpu_obj *o = gctx_model__obj(x->m, oi);
	__u32 fi = o->file_id - 1, xi, hi, pxi;
	struct gctx_tl_track t;
	struct xfile *xf;
	struct xobj *xo;
	struct args a;
	__u64 k1, k2;
	char name[96], hbuf[24];

	obj_key_of(o, &k1, &k2);
	/* a new object with the handle of a live one replaced it */
	if (gctx_hmap__get(&x->obj_map, k1, k2, &pxi) && x->objs[pxi].open &&
	    gctx_model__obj(x->m, x->objs[pxi].obj_idx)->destroyed)
		tl_obj_end(x, pxi, gctx_model__obj(x->m, x->objs[pxi].obj_idx)->destroy_ns, false);
	if (!obj_is_context(o) && !o->size)
		return;
	xf = tl_xf(x, fi);
	if (!xf || !tl_xp(x, o->creator_idx) ||
	    gctx_grow(&x->objs, &x->cap_objs, x->nobjs + 1, sizeof(*x->objs)) ||
	    gctx_grow(&xf->live, &xf->cap_live, xf->nlive + 1, sizeof(*xf->live)) ||
	    gctx_hmap__put(&x->obj_map, k1, k2, x->nobjs)) {
		nomem(x);
		return;
	}
	xi = x->nobjs++;
	xo = &x->objs[xi];
	xo->obj_idx = oi;
	xo->file_idx = fi;
	xo->proc_idx = o->creator_idx;
	xo->ctx = obj_is_context(o);
	xo->open = true;
	xo->pos = xf->nlive;
	xf->live[xf->nlive++] = xi;
	tl_proc_describe(x, o->creator_idx, 0);

	if (xo->ctx) {
		/* nested under its RM client's track, else under the creator's file track */
		xo->parent_uuid = UUID(U_PROC, o->creator_idx + 1);
		if (o->parent_obj >= 0 && o->kind != GCTX_OBJ_RM_CLIENT) {
			const struct gctx_gpu_obj *par = gctx_model__obj(x->m, o->parent_obj);
			__u64 c1, c2;

			obj_key(fi, FAM_RM, o->client, o->client, &c1, &c2);
			if (par && gctx_hmap__get(&x->obj_map, c1, c2, &pxi) && x->objs[pxi].open &&
			    x->objs[pxi].ctx && x->objs[pxi].proc_idx == o->creator_idx)
				xo->parent_uuid = UUID(U_OBJ, pxi + 1);
		}
		if (xo->parent_uuid == UUID(U_PROC, o->creator_idx + 1) &&
		    gctx_hmap__get(&x->holder_map, o->creator_idx, fi, &hi) &&
		    x->files[fi].h[hi].described) {
			tl_trk_holder(x, fi, hi, &t);
			xo->parent_uuid = t.uuid;
		}
		xo->lane = ++x->lanes;
		xo->cursor = o->create_ns;
		tl_trk_obj(x, xi, &t);
		obj_name(o, name + 4, sizeof(name) - 4);
		memcpy(name, "ctx ", 4);
		t.name = name;
		tl_describe(x, &t, o->create_ns);
		a.n = 0;
		tl_arg_str(&a, "kind", gctx_obj_kind_name(o->kind));
		snprintf(hbuf, sizeof(hbuf), "0x%llx", (unsigned long long)o->handle);
		tl_arg_str(&a, "handle", hbuf);
		if (o->cls) {
			const char *cn = gctx_nv_class_name(o->cls);

			tl_arg_u64(&a, "class", o->cls);
			if (cn)
				tl_arg_str(&a, "class_name", cn);
		}
		tl_arg_u64(&a, "file_id", o->file_id);
		tl_arg_u64(&a, "object_id", o->id);
		tl_arg_u64(&a, "creator_pid", gctx_model__proc(x->m, o->creator_idx)->pid);
		tl_arg_u64(&a, "creator_tid", o->creator_tid);
		tl_emit(x, 'B', &t, o->create_ns, name + 4, "gpu-context", &a, 0, 0);
	}
	if (o->size) {
		struct xproc *xp = &x->procs[o->creator_idx];

		xp->mem += o->size;
		tl_counter(x, o->creator_idx, CTR_MEM, o->create_ns, (__s64)xp->mem);
	}
	if (o->destroyed) /* gone in the record that made it */
		tl_obj_end(x, xi, o->destroy_ns, false);
}

void tl_objs_new(struct exporter *x)
{
	__u32 n = gctx_model__nobjs(x->m);

	while (x->objs_seen < n && !x->err)
		obj_new(x, x->objs_seen++);
}

/* After a destroying ioctl: end what it destroyed, looking at the whole file only when the
 * destroyed object may have taken others with it. */
static void objs_destroyed(struct exporter *x, __u32 fi, const struct gctx_ioctl_desc *d,
			   __u32 dev_kind)
{
	bool rm = file_is_rm(dev_kind) || kind_is_rm(d->obj_kind);
	__u64 client = d->client, k1, k2;
	__u32 xi;

	if (rm && (d->obj_kind == GCTX_OBJ_RM_CLIENT || !client))
		client = d->handle;
	obj_key(fi, rm ? FAM_RM : d->obj_kind, client, d->handle, &k1, &k2);
	if (gctx_hmap__get(&x->obj_map, k1, k2, &xi)) {
		const struct gctx_gpu_obj *o = gctx_model__obj(x->m, x->objs[xi].obj_idx);

		if (o->destroyed && obj_is_leaf(o->kind)) {
			tl_obj_end(x, xi, o->destroy_ns, false);
			return;
		}
	}
	tl_file_objs_sync(x, fi);
}

/* The live context an ioctl on file fi addresses, made before this record; or -1. */
static int ctx_for(struct exporter *x, __u32 fi, __u32 dev_kind, const struct gctx_ioctl_desc *d,
		   __u32 objs_before)
{
	__u64 keys[3][2];
	__u32 n = 0, i, xi;

	if (file_is_rm(dev_kind)) {
		__u64 c = d->client;

		if (!c)
			return -1;
		if (d->handle)
			obj_key(fi, FAM_RM, c, d->handle, &keys[n][0], &keys[n][1]), n++;
		if (d->parent)
			obj_key(fi, FAM_RM, c, d->parent, &keys[n][0], &keys[n][1]), n++;
		obj_key(fi, FAM_RM, c, c, &keys[n][0], &keys[n][1]), n++;
	} else if (dev_kind == GCTX_DEV_NVIDIA_UVM) {
		obj_key(fi, GCTX_OBJ_UVM_SPACE, 0, 0, &keys[n][0], &keys[n][1]), n++;
	} else if (dev_kind == GCTX_DEV_KFD) {
		obj_key(fi, GCTX_OBJ_KFD_PROCESS, 0, 0, &keys[n][0], &keys[n][1]), n++;
	} else if (dev_kind == GCTX_DEV_DRM_RENDER && !strncmp(d->name, "AMDGPU_CTX", 10)) {
		obj_key(fi, GCTX_OBJ_DRM_CTX, 0, d->handle, &keys[n][0], &keys[n][1]), n++;
	}
	for (i = 0; i < n; i++) {
		if (!gctx_hmap__get(&x->obj_map, keys[i][0], keys[i][1], &xi))
			continue;
		if (x->objs[xi].ctx && x->objs[xi].open && x->objs[xi].obj_idx < objs_before)
			return (int)xi;
	}
	return -1;
}

/* ---- record handlers (after the model took the record) ---- */

void tl_on_ioctl(struct exporter *x, const struct gctx_ev_ioctl *ev, __u32 objs_before)
{
	struct gctx_ioctl_desc d;
	struct gctx_tl_track t;
	char cmd[16], status[48], err[32];
	__u64 start = ev->hdr.ts_ns, end = gctx_ts_add(ev->hdr.ts_ns, ev->dur_ns), flow, *cursor;
	int pi, fi, hi, ctx;
	struct args a;

	pi = tl_event_proc(x, &ev->hdr);
	fi = tl_file_index(x->m, ev->file);
	if (pi < 0 || fi < 0)
		return;
	hi = tl_holder_of(x, pi, fi);
	if (hi < 0)
		return;
	gctx_decode_ioctl(ev, &d);
	tl_objs_new(x);
	if (d.op == GCTX_OP_DESTROY)
		objs_destroyed(x, fi, &d, ev->kind);
	ctx = ctx_for(x, fi, ev->kind, &d, objs_before);
	flow = tl_use_flow(x, pi, fi, hi, ctx, start);

	/* on the context it addresses when this process made that context, else on the file */
	if (ctx >= 0 && x->objs[ctx].proc_idx == (__u32)pi) {
		tl_trk_obj(x, ctx, &t);
		cursor = &x->objs[ctx].cursor;
	} else {
		struct xholder *xh = &x->files[fi].h[hi];

		if (!xh->open) /* an fd the model saw closed is in use again */
			tl_holder_sync(x, fi, hi, 0);
		tl_trk_holder(x, fi, hi, &t);
		cursor = &xh->cursor;
	}
	start = max64(start, *cursor);
	end = max64(end, start);
	*cursor = end;

	a.n = 0;
	tl_arg_u64(&a, "tid", ev->hdr.tid);
	tl_arg_s64(&a, "fd", ev->fd);
	tl_arg_s64(&a, "ret", ev->ret);
	if (d.has_status) {
		snprintf(status, sizeof(status), "%s", d.status_name);
		tl_arg_str(&a, "status", status);
	}
	if (d.err) {
		gctx_format_errno(err, sizeof(err), d.err);
		tl_arg_str(&a, "errno", err);
	}
	if (d.failed)
		tl_arg_bool(&a, "failed", true);
	if (d.detail[0])
		tl_arg_strn(&a, "args", d.detail, sizeof(d.detail));
	snprintf(cmd, sizeof(cmd), "0x%08x", ev->cmd);
	tl_arg_str(&a, "cmd", cmd);
	if (start != ev->hdr.ts_ns || end != gctx_ts_add(ev->hdr.ts_ns, ev->dur_ns)) {
		/* moved to nest on a busy track: the times it really took */
		tl_arg_u64(&a, "start_ns", ev->hdr.ts_ns);
		tl_arg_u64(&a, "dur_ns", ev->dur_ns);
	}
	tl_arg_u64(&a, "file_id", (__u32)fi + 1);
	tl_stack_add(x, &a, 1u << GCTX_STACK_USE, ev->hdr.tgid, ev->file, ev->hdr.ts_ns,
		     gctx_ts_add(ev->hdr.ts_ns, ev->dur_ns));
	tl_slice(x, &t, start, end, d.name, "ioctl", &a, flow);
	tl_rate_add(x, pi, ev->hdr.ts_ns);
}
