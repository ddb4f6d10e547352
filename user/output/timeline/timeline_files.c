// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Timeline of the GPU files processes hold ("holders"): a track per holding with a slice per
 * holding period named by how the process got the file, the live-files counter, the flows of
 * inheritance and of a first use by a process that did not open the file, the mmap instants, and
 * the handlers of open, close, fds kept across exec and files present at attach.
 */
#include <stdio.h>

#include "lib/errcode.h"
#include "decode/decode.h"
#include "model/model.h"
#include "output/report/print.h"
#include "output/timeline/timeline_priv.h"
#include "trace/records.h"

/* ---- holders: a process's holding of a GPU file description ---- */

static void holder_describe(struct exporter *x, __u32 fi, __u32 hi)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	const struct gctx_holder *h = &f->holders[hi];
	struct xholder *xh = &x->files[fi].h[hi];
	struct gctx_tl_track t;
	char name[64];

	if (gctx_hmap__put(&x->holder_map, h->proc_idx, fi, hi)) {
		nomem(x);
		return;
	}
	tl_proc_describe(x, h->proc_idx, 0);
	xh->described = true;
	xh->lane = ++x->lanes;
	tl_trk_holder(x, fi, hi, &t);
	snprintf(name, sizeof(name), "file #%u %s", f->id, gctx_dev_kind_name(f->kind));
	t.name = name;
	tl_describe(x, &t, h->since_ns ? h->since_ns : x->now);
}

void tl_live_files(struct exporter *x, __u32 pi, int delta, __u64 ts)
{
	struct xproc *xp = &x->procs[pi];

	xp->live_files += delta;
	tl_counter(x, pi, CTR_FILES, ts, xp->live_files);
}

/* Make the holding slice of holder hi of file fi match the model: begin or end it. */
void tl_holder_sync(struct exporter *x, __u32 fi, __u32 hi, __u64 flow_in)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	const struct gctx_holder *h = &f->holders[hi];
	struct xholder *xh = &x->files[fi].h[hi];
	struct xproc *xp = tl_xp(x, h->proc_idx);
	struct gctx_tl_track t;
	char name[64], addr[24], flags[64], path[GCTX_PATH_LEN];
	__u32 fds[8], i;
	struct args a;
	__u64 ts;

	if (!xp || !xh->described || xh->open == h->held)
		return;
	tl_trk_holder(x, fi, hi, &t);
	if (!h->held) {
		ts = max64(h->until_ns ? h->until_ns : x->now, xh->cursor);
		xh->cursor = ts;
		xh->open = false;
		tl_emit(x, 'E', &t, ts, NULL, NULL, NULL, 0, 0);
		for (i = 0; i < xp->nheld; i++) {
			if (xp->held[i].file_idx == fi && xp->held[i].holder_idx == hi) {
				xp->held[i] = xp->held[--xp->nheld];
				break;
			}
		}
		tl_live_files(x, h->proc_idx, -1, ts);
		if (f->closed)
			tl_file_objs_sync(x, fi);
		return;
	}

	if (gctx_grow(&xp->held, &xp->cap_held, xp->nheld + 1, sizeof(*xp->held))) {
		nomem(x);
		return;
	}
	xp->held[xp->nheld].file_idx = fi;
	xp->held[xp->nheld].holder_idx = hi;
	xp->nheld++;
	ts = max64(h->since_ns && !xh->cursor ? h->since_ns : x->now, xh->cursor);
	ts = max64(ts, xp->begin_ts);
	xh->cursor = ts;
	xh->open = true;
	if (h->how == GCTX_HOLD_INHERITED)
		snprintf(name, sizeof(name), "inherited from %u",
			 gctx_model__proc(x->m, h->from_proc_idx)->pid);
	else
		snprintf(name, sizeof(name), "%s", gctx_hold_how_name(h->how));
	a.n = 0;
	tl_arg_u64(&a, "file_id", f->id);
	tl_arg_str(&a, "kind", gctx_dev_kind_name(f->kind));
	gctx_copy_str(path, sizeof(path), f->path, sizeof(f->path));
	if (path[0])
		tl_arg_str(&a, "path", path);
	tl_arg_str(&a, "how", gctx_hold_how_name(h->how));
	if (h->how == GCTX_HOLD_INHERITED)
		tl_arg_u64(&a, "from_pid", gctx_model__proc(x->m, h->from_proc_idx)->pid);
	if (f->opener_pid)
		tl_arg_u64(&a, "opener_pid", f->opener_pid);
	for (i = 0; i < h->nfds && i < 8; i++)
		fds[i] = (__u32)h->fds[i];
	if (h->nfds)
		tl_arg_u32v(&a, "fds", fds, h->nfds);
	if (f->open_ns || f->present_at_attach) {
		gctx_format_open_flags(flags, sizeof(flags), f->open_flags);
		tl_arg_str(&a, "open_flags", flags);
	}
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->file);
	tl_arg_str(&a, "file", addr);
	if (h->how == GCTX_HOLD_OPENED) /* the GPU initialisation, when it is the first open */
		tl_stack_add(x, &a, 1u << GCTX_STACK_INIT, gctx_model__proc(x->m, h->proc_idx)->pid,
			     f->file, h->since_ns ? h->since_ns : ts, ts);
	tl_emit(x, 'B', &t, ts, name, "gpu-file", &a, 0, flow_in);
	tl_live_files(x, h->proc_idx, 1, ts);
}

/* Describe and begin the holders the model added to file fi; flows for inheritance. */
void tl_holders_new(struct exporter *x, __u32 fi)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	struct xfile *xf = tl_xf(x, fi);
	__u32 hi, from;

	if (!xf || gctx_grow(&xf->h, &xf->cap_h, f->nholders, sizeof(*xf->h))) {
		nomem(x);
		return;
	}
	for (hi = xf->nh; hi < f->nholders && !x->err; hi++) {
		const struct gctx_holder *h = &f->holders[hi];
		__u64 flow = 0;

		holder_describe(x, fi, hi);
		if (h->how == GCTX_HOLD_INHERITED && h->held &&
		    gctx_hmap__get(&x->holder_map, h->from_proc_idx, fi, &from) &&
		    xf->h[from].described) {
			struct gctx_tl_track t;
			struct args a;
			char name[48];
			__u64 ts = h->since_ns ? h->since_ns : x->now;

			tl_trk_holder(x, fi, from, &t);
			flow = tl_new_flow(x);
			snprintf(name, sizeof(name), "inherited by %u",
				 gctx_model__proc(x->m, h->proc_idx)->pid);
			a.n = 0;
			tl_arg_u64(&a, "child_pid", gctx_model__proc(x->m, h->proc_idx)->pid);
			tl_arg_u64(&a, "file_id", f->id);
			tl_emit(x, 'I', &t, ts, name, "inherit", &a, flow, 0);
		}
		xf->nh = hi + 1;
		tl_holder_sync(x, fi, hi, flow);
	}
}

/* Holder of file fi by process pi after a use: describe/begin it; its index or -1. */
int tl_holder_of(struct exporter *x, __u32 pi, __u32 fi)
{
	__u32 hi;

	tl_holders_new(x, fi);
	if (x->err || !gctx_hmap__get(&x->holder_map, pi, fi, &hi))
		return -1;
	tl_holder_sync(x, fi, hi, 0);
	return (int)hi;
}

/* Sync every holding of process pi (after exec, exit, close). */
void tl_proc_holders_sync(struct exporter *x, __u32 pi)
{
	struct xproc *xp = &x->procs[pi];
	__u32 i = 0;

	while (i < xp->nheld) {
		struct href r = xp->held[i];

		tl_holder_sync(x, r.file_idx, r.holder_idx, 0); /* may remove entry i */
		if (i < xp->nheld && xp->held[i].file_idx == r.file_idx &&
		    xp->held[i].holder_idx == r.holder_idx)
			i++;
	}
}

static void file_holders_sync(struct exporter *x, __u32 fi)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	__u32 hi;

	tl_holders_new(x, fi);
	for (hi = 0; hi < x->files[fi].nh && hi < f->nholders; hi++)
		tl_holder_sync(x, fi, hi, 0);
	tl_file_objs_sync(x, fi);
}

/* ---- record handlers (after the model took the record) ---- */

/* First use of a file by a process that did not open it: a flow from the context it used, or
 * from the opener's track, to this use. Returns the flow id or 0. */
__u64 tl_use_flow(struct exporter *x, __u32 pi, __u32 fi, __u32 hi, int ctx, __u64 ts)
{
	const struct gctx_gpu_file *f = gctx_model__file(x->m, fi);
	const struct gctx_holder *h = &f->holders[hi];
	struct xholder *xh = &x->files[fi].h[hi];
	struct gctx_tl_track t;
	struct args a;
	char name[64];
	__u32 ohi;
	__u64 flow;

	if (xh->used)
		return 0;
	xh->used = true;
	if (h->how == GCTX_HOLD_OPENED || h->how == GCTX_HOLD_PRESENT)
		return 0;
	if (ctx >= 0 && x->objs[ctx].proc_idx != pi) {
		tl_trk_obj(x, ctx, &t);
		ts = max64(ts, gctx_model__obj(x->m, x->objs[ctx].obj_idx)->create_ns);
	} else if (f->opener_idx >= 0 && (__u32)f->opener_idx != pi &&
		   gctx_hmap__get(&x->holder_map, f->opener_idx, fi, &ohi) &&
		   x->files[fi].h[ohi].described) {
		tl_trk_holder(x, fi, ohi, &t);
		ts = max64(ts, f->holders[ohi].since_ns);
	} else {
		return 0;
	}
	flow = tl_new_flow(x);
	snprintf(name, sizeof(name), "used by %u (%s)", gctx_model__proc(x->m, pi)->pid,
		 gctx_hold_how_name(h->how));
	a.n = 0;
	tl_arg_u64(&a, "user_pid", gctx_model__proc(x->m, pi)->pid);
	tl_arg_str(&a, "how", gctx_hold_how_name(h->how));
	tl_arg_u64(&a, "file_id", f->id);
	tl_emit(x, 'I', &t, ts, name, "gpu-use", &a, flow, 0);
	return flow;
}

void tl_on_mmap(struct exporter *x, const struct gctx_ev_mmap *ev)
{
	struct gctx_tl_track t;
	struct xholder *xh;
	char off[24], ret[24], err[32];
	int pi, fi, hi;
	struct args a;
	__u64 flow, ts;

	pi = tl_event_proc(x, &ev->hdr);
	fi = tl_file_index(x->m, ev->file);
	if (pi < 0 || fi < 0)
		return;
	hi = tl_holder_of(x, pi, fi);
	if (hi < 0)
		return;
	flow = tl_use_flow(x, pi, fi, hi, -1, ev->hdr.ts_ns);
	xh = &x->files[fi].h[hi];
	tl_trk_holder(x, fi, hi, &t);
	ts = max64(ev->hdr.ts_ns, xh->cursor);
	xh->cursor = ts;
	a.n = 0;
	tl_arg_u64(&a, "tid", ev->hdr.tid);
	tl_arg_s64(&a, "fd", ev->fd);
	tl_arg_u64(&a, "len", ev->len);
	snprintf(off, sizeof(off), "0x%llx", (unsigned long long)ev->off);
	tl_arg_str(&a, "offset", off);
	tl_arg_u64(&a, "prot", ev->prot);
	tl_arg_u64(&a, "flags", ev->flags);
	if (ev->ret < 0) {
		gctx_format_errno(err, sizeof(err), gctx_ret_errno(ev->ret));
		tl_arg_str(&a, "errno", err);
		tl_arg_bool(&a, "failed", true);
	} else {
		snprintf(ret, sizeof(ret), "0x%llx", (unsigned long long)ev->ret);
		tl_arg_str(&a, "addr", ret);
	}
	tl_arg_u64(&a, "file_id", (__u32)fi + 1);
	tl_stack_add(x, &a, 1u << GCTX_STACK_USE, ev->hdr.tgid, ev->file, ev->hdr.ts_ns,
		     ev->hdr.ts_ns);
	tl_emit(x, 'I', &t, ts, "mmap", "mmap", &a, 0, flow);
}

void tl_on_open(struct exporter *x, const struct gctx_ev_open *ev, int old_fi)
{
	int pi = tl_event_proc(x, &ev->hdr), fi;

	if (old_fi >= 0 && (__u32)old_fi < x->nfiles) /* a missed close: the old one is gone */
		file_holders_sync(x, old_fi);
	fi = tl_file_index(x->m, ev->file);
	if (pi < 0 || fi < 0)
		return;
	tl_holders_new(x, fi);
	tl_objs_new(x);
}

void tl_on_close(struct exporter *x, const struct gctx_ev_fd *ev)
{
	int pi = tl_proc_index(x->m, ev->hdr.tgid), fi = tl_file_index(x->m, ev->file);
	__u32 hi;

	if (pi < 0 || fi < 0 || (__u32)pi >= x->nprocs || (__u32)fi >= x->nfiles)
		return;
	if (gctx_hmap__get(&x->holder_map, pi, fi, &hi))
		tl_holder_sync(x, fi, hi, 0);
}

void tl_on_fd_kept(struct exporter *x, const struct gctx_ev_fd *ev)
{
	int pi = tl_event_proc(x, &ev->hdr);
	struct xproc *xp;

	if (pi < 0)
		return;
	xp = &x->procs[pi];
	if (gctx_grow(&xp->kept, &xp->cap_kept, xp->nkept + 1, sizeof(*xp->kept))) {
		nomem(x);
		return;
	}
	xp->kept[xp->nkept++] = ev->file;
}

void tl_on_file_present(struct exporter *x, const struct gctx_rec_file *r, __u32 files_before)
{
	int pi = tl_proc_index(x->m, r->pid), fi;

	if (pi < 0 || !tl_xp(x, pi))
		return;
	tl_proc_describe(x, pi, 0);
	if (r->file)
		fi = tl_file_index(x->m, r->file);
	else
		fi = gctx_model__nfiles(x->m) > files_before ? (int)gctx_model__nfiles(x->m) - 1
							     : -1;
	if (fi >= 0)
		tl_holder_of(x, pi, fi);
}
