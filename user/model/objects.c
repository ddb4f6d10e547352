// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lineage model: the driver objects decoded from ioctls (RM clients and their object
 * trees, DRM and KFD objects), per GPU file.
 */
#include <errno.h>

#include "lib/grow.h"
#include "model/model_priv.h"

/* ---- objects ---- */

#define OBJ_FAM_RM 0xffffu /* RM objects share one handle namespace per client */

static bool obj_kind_is_rm(__u32 k)
{
	return k >= GCTX_OBJ_RM_CLIENT && k <= GCTX_OBJ_RM_OTHER;
}

static bool obj_kind_is_kfd(__u32 k)
{
	return k == GCTX_OBJ_KFD_QUEUE || k == GCTX_OBJ_KFD_MEMORY;
}

static bool file_is_rm(const struct file_priv *f)
{
	return f->pub.kind == GCTX_DEV_NVIDIACTL || f->pub.kind == GCTX_DEV_NVIDIA;
}

/*
 * Handle namespaces: RM handles are 32-bit and scoped by client; any other handle is scoped by
 * its file and its object kind (a DRM context id and a GEM handle may be equal).
 */
static void obj_key(const struct file_priv *f, __u32 fam, __u64 client, __u64 handle, __u64 *k1,
		    __u64 *k2)
{
	*k1 = ((__u64)fam << 32) | fidx(f);
	*k2 = fam == OBJ_FAM_RM ? (client << 32) | (handle & 0xffffffffULL) : handle;
}

static struct obj_priv *obj_live(const struct gctx_model *m, const struct file_priv *f, __u32 fam,
				 __u64 client, __u64 handle)
{
	__u64 k1, k2;
	__u32 oi;

	obj_key(f, fam, client, handle, &k1, &k2);
	if (!gctx_hmap__get(&m->obj_map, k1, k2, &oi) || O(m, oi)->pub.destroyed)
		return NULL;
	return O(m, oi);
}

struct obj_priv *mdl_obj_add(struct gctx_model *m, struct file_priv *f, __u32 fam,
			     const struct gctx_ioctl_desc *d, __u64 client,
			     struct proc_priv *creator, __u32 tid, __u64 ts)
{
	enum gctx_obj_kind kind = d->obj_kind;
	struct obj_priv *o, *par = NULL, *old;
	__u64 k1, k2;
	__u32 oi;

	old = obj_live(m, f, fam, client, d->handle);
	if (old) { /* same handle alive on this file: the new object replaces it */
		old->pub.destroyed = true;
		old->pub.destroy_ns = ts;
	}
	if (obj_kind_is_kfd(kind)) {
		par = obj_live(m, f, GCTX_OBJ_KFD_PROCESS, 0, 0);
	} else if (fam == OBJ_FAM_RM && kind != GCTX_OBJ_RM_CLIENT) {
		if (d->parent != d->handle)
			par = obj_live(m, f, fam, client, d->parent);
		if (!par && client != d->handle)
			par = obj_live(m, f, fam, client, client);
	} else if (fam != OBJ_FAM_RM && d->parent && d->parent != d->handle) {
		par = obj_live(m, f, fam, 0, d->parent);
	}

	o = gctx_chunks__add(&m->objs);
	if (!o)
		return NULL;
	oi = m->objs.n - 1;
	o->pub.id = m->objs.n;
	o->pub.kind = kind;
	o->pub.cls = d->obj_class;
	o->pub.handle = d->handle;
	o->pub.parent = d->parent;
	o->pub.client = client;
	o->pub.size = d->size;
	o->pub.file_id = f->pub.id;
	o->pub.creator_idx = creator->pub.idx;
	o->pub.creator_tid = tid;
	o->pub.create_ns = ts;
	o->pub.parent_obj = par ? (int)(par->pub.id - 1) : -1;
	o->first_child = -1;
	o->next_sibling = -1;
	o->next_in_client = -1;
	if (par) {
		o->next_sibling = par->first_child;
		par->first_child = oi;
	}
	o->next_in_file = f->first_obj;
	f->first_obj = oi;

	obj_key(f, fam, client, d->handle, &k1, &k2);
	if (gctx_hmap__put(&m->obj_map, k1, k2, oi))
		return NULL;
	if (fam == OBJ_FAM_RM && kind != GCTX_OBJ_RM_CLIENT) {
		__u32 head;

		if (gctx_hmap__get(&m->client_map, fidx(f), client, &head))
			o->next_in_client = head;
		if (gctx_hmap__put(&m->client_map, fidx(f), client, oi))
			return NULL;
	}
	return o;
}

/* Destroy o and every live descendant. */
static int obj_destroy_tree(struct gctx_model *m, struct obj_priv *o, __u64 ts)
{
	__u32 sp = 0;
	int c;

	if (gctx_grow(&m->stack, &m->cap_stack, 1, sizeof(*m->stack)))
		return -ENOMEM;
	m->stack[sp++] = o->pub.id - 1;
	while (sp) {
		struct obj_priv *cur = O(m, m->stack[--sp]);

		if (cur->pub.destroyed && cur != o)
			continue;
		cur->pub.destroyed = true;
		cur->pub.destroy_ns = ts;
		for (c = cur->first_child; c >= 0; c = O(m, c)->next_sibling) {
			if (O(m, c)->pub.destroyed)
				continue;
			if (gctx_grow(&m->stack, &m->cap_stack, sp + 1, sizeof(*m->stack)))
				return -ENOMEM;
			m->stack[sp++] = c;
		}
	}
	return 0;
}

int mdl_objs_apply(struct gctx_model *m, struct file_priv *f, struct proc_priv *p, __u32 tid,
		   __u64 ts, const struct gctx_ioctl_desc *d)
{
	bool rm = file_is_rm(f) || obj_kind_is_rm(d->obj_kind);
	__u32 fam = rm ? OBJ_FAM_RM : d->obj_kind;
	__u64 client = d->client, handle = d->handle;
	struct obj_priv *o;
	int err;

	if (d->op == GCTX_OP_CREATE) {
		if (rm && (d->obj_kind == GCTX_OBJ_RM_CLIENT || !client))
			client = handle;
		return mdl_obj_add(m, f, fam, d, client, p, tid, ts) ? 0 : -ENOMEM;
	}
	if (d->op != GCTX_OP_DESTROY)
		return 0;

	o = obj_live(m, f, fam, client, handle);
	if (o) {
		err = obj_destroy_tree(m, o, ts);
		if (err)
			return err;
	}
	if (rm && (d->obj_kind == GCTX_OBJ_RM_CLIENT || (client && handle == client))) {
		__u32 head;
		int i;

		/* freeing a client frees all its objects, even those whose parent we missed */
		if (gctx_hmap__get(&m->client_map, fidx(f), client, &head)) {
			for (i = head; i >= 0; i = O(m, i)->next_in_client) {
				if (!O(m, i)->pub.destroyed) {
					O(m, i)->pub.destroyed = true;
					O(m, i)->pub.destroy_ns = ts;
				}
			}
		}
	}
	return 0;
}
