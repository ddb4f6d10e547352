// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu's NVIDIA RM (nvidiactl, nvidiaN): escapes, clients and their object trees
 * (shared/reference/gpu-facts.md §1.2-1.6). The syscall returns 0 and the verdict is the status
 * field in the parameters; RM clients belong to the nvidiactl open file that created them, so a
 * forked child using the inherited fd is accepted and a fresh open of nvidiactl is not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define GPU_UAPI_NO_HELPERS

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakegpu.h"
#include "gpu_uapi.h"

#define RM_CLIENT_BASE 0xc1d00000U /* like the RM's own client handles */
#define RM_HANDLE_BASE 0xcaf00000U /* like RM-generated object handles */

struct rm_object {
	__u32 handle;
	__u32 parent;
	__u32 cls;
};

/* An RM client: owned by the nvidiactl open file that allocated it. */
struct rm_client {
	__u32 handle;
	struct gfile *owner;
	struct rm_object *obj;
	size_t nobj, cap;
	struct rm_client *next;
};

/* Every client; the driver lock (fakegpu.c) is held around each entry point. */
static struct {
	struct rm_client *clients;
	__u32 next_client;
	__u32 next_handle;
} RM;

/* ---- RM object model ---- */

static struct rm_client *client_find(__u32 handle)
{
	struct rm_client *c;

	for (c = RM.clients; c; c = c->next)
		if (c->handle == handle)
			return c;
	return NULL;
}

/* The client, if it belongs to the open file @f (strict client validation). */
static struct rm_client *client_of(struct gfile *f, __u32 handle)
{
	struct rm_client *c = client_find(handle);

	return c && c->owner == f ? c : NULL;
}

static struct rm_object *obj_find(struct rm_client *c, __u32 handle)
{
	size_t i;

	for (i = 0; i < c->nobj; i++)
		if (c->obj[i].handle == handle)
			return &c->obj[i];
	return NULL;
}

static bool handle_used(struct rm_client *c, __u32 handle)
{
	return handle == c->handle || obj_find(c, handle);
}

static __u32 handle_gen(struct rm_client *c)
{
	__u32 h;

	do {
		h = RM_HANDLE_BASE + RM.next_handle++;
	} while (handle_used(c, h));
	return h;
}

static int obj_add(struct rm_client *c, __u32 handle, __u32 parent, __u32 cls)
{
	struct rm_object *o;

	if (c->nobj == c->cap) {
		o = realloc(c->obj, (c->cap ? c->cap * 2 : 16) * sizeof(*o));
		if (!o)
			return -ENOMEM;
		c->obj = o;
		c->cap = c->cap ? c->cap * 2 : 16;
	}
	c->obj[c->nobj++] = (struct rm_object){.handle = handle, .parent = parent, .cls = cls};
	return 0;
}

/* Free @handle and every object below it. */
static void obj_free_tree(struct rm_client *c, __u32 handle)
{
	size_t i = 0;

	while (i < c->nobj) {
		if (c->obj[i].parent == handle) {
			obj_free_tree(c, c->obj[i].handle);
			i = 0; /* the array was compacted under us */
			continue;
		}
		i++;
	}
	for (i = 0; i < c->nobj; i++) {
		if (c->obj[i].handle == handle) {
			c->obj[i] = c->obj[--c->nobj];
			return;
		}
	}
}

static struct rm_client *client_new(struct gfile *owner, __u32 handle)
{
	struct rm_client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->handle = handle;
	c->owner = owner;
	c->next = RM.clients;
	RM.clients = c;
	return c;
}

static void client_free(struct rm_client *victim)
{
	struct rm_client **pp;

	for (pp = &RM.clients; *pp; pp = &(*pp)->next) {
		if (*pp == victim) {
			*pp = victim->next;
			free(victim->obj);
			free(victim);
			return;
		}
	}
}

/* The last reference to the nvidiactl file is gone: free its clients, like nvidia_close. */
void nv_release(struct gfile *f)
{
	struct rm_client *c = RM.clients, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->owner == f)
			client_free(c);
	}
}

/* ---- NVIDIA RM escapes ---- */

static __u32 rm_alloc_client(struct gfile *f, __u32 *handle)
{
	__u32 h = *handle;

	if (!h) {
		do {
			h = RM_CLIENT_BASE + ++RM.next_client;
		} while (client_find(h));
	} else if (client_find(h)) {
		return NV_ERR_INVALID_OBJECT_HANDLE;
	}
	if (!client_new(f, h))
		return NV_ERR_INVALID_STATE;
	*handle = h;
	return NV_OK;
}

/* RM_ALLOC, NVOS21 or NVOS64: both start with hRoot, hObjectParent, hObjectNew, hClass. */
static __u32 rm_alloc(struct gfile *f, struct nvos21_params *p)
{
	struct rm_client *c;
	__u32 h;

	if (p->hClass == NV01_ROOT || p->hClass == NV01_ROOT_NON_PRIV ||
	    p->hClass == NV01_ROOT_CLIENT) {
		p->hClass = NV01_ROOT_CLIENT;
		return rm_alloc_client(f, &p->hObjectNew);
	}
	c = client_of(f, p->hRoot);
	if (!c)
		return NV_ERR_INVALID_CLIENT;
	if (p->hObjectParent != c->handle && !obj_find(c, p->hObjectParent))
		return NV_ERR_INVALID_OBJECT_PARENT;
	h = p->hObjectNew;
	if (!h)
		h = handle_gen(c);
	else if (handle_used(c, h))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	if (obj_add(c, h, p->hObjectParent, p->hClass))
		return NV_ERR_INVALID_STATE;
	p->hObjectNew = h;
	return NV_OK;
}

static __u32 rm_free(struct gfile *f, struct nvos00_params *p)
{
	struct rm_client *c = client_of(f, p->hRoot);

	if (!c)
		return NV_ERR_INVALID_CLIENT;
	if (p->hObjectOld == p->hRoot) {
		client_free(c);
		return NV_OK;
	}
	if (!obj_find(c, p->hObjectOld))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	obj_free_tree(c, p->hObjectOld);
	return NV_OK;
}

static __u32 rm_control(struct gfile *f, struct nvos54_params *p)
{
	struct rm_client *c = client_of(f, p->hClient);

	if (!c)
		return NV_ERR_INVALID_CLIENT;
	if (!handle_used(c, p->hObject))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	return NV_OK;
}

static __u32 rm_map_memory(struct gfile *f, struct nvos33_with_fd *p)
{
	struct rm_client *c = client_of(f, p->hClient);

	if (!c)
		return NV_ERR_INVALID_CLIENT;
	if (!obj_find(c, p->hMemory))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	return NV_OK;
}

/*
 * RM_ALLOC_MEMORY on nvidiaN. The real RM checks the client against the nvidiactl file linked
 * by REGISTER_FD; we cannot tell which nvidiactl that was, so any existing client will do once
 * the link is made.
 */
static __u32 rm_alloc_memory(struct gfile *f, struct nvos02_with_fd *p)
{
	struct rm_client *c = client_find(p->hRoot);
	__u32 h;

	if (!f->ctl_linked || !c)
		return NV_ERR_INVALID_CLIENT;
	if (p->hObjectParent != c->handle && !obj_find(c, p->hObjectParent))
		return NV_ERR_INVALID_OBJECT_PARENT;
	h = p->hObjectNew;
	if (!h)
		h = handle_gen(c);
	else if (handle_used(c, h))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	if (obj_add(c, h, p->hObjectParent, p->hClass))
		return NV_ERR_INVALID_STATE;
	p->hObjectNew = h;
	return NV_OK;
}

static void card_info(void *buf, size_t size)
{
	struct nv_card_info *ci = buf;

	memset(buf, 0, size);
	ci->valid = 1;
	ci->pci_bus = 0x1b;
	ci->pci_vendor_id = 0x10de;
	ci->pci_device_id = 0x2330; /* H100 SXM5 */
	ci->gpu_id = 0x100;
	ci->interrupt_line = 16;
	ci->reg_address = 0xfb000000;
	ci->reg_size = 16 << 20;
	ci->fb_address = 0x38000000000ULL;
	ci->fb_size = 80ULL << 30;
	ci->minor_number = 0;
}

/* The sizes nv_validate_ioctls() accepts for the escapes we implement; others are -EINVAL. */
bool nv_size_ok(unsigned int nr, size_t size)
{
	switch (nr) {
	case NV_ESC_RM_ALLOC:
		return size == sizeof(struct nvos21_params) || size == sizeof(struct nvos64_params);
	case NV_ESC_RM_FREE:
		return size == sizeof(struct nvos00_params);
	case NV_ESC_RM_CONTROL:
		return size == sizeof(struct nvos54_params);
	case NV_ESC_RM_ALLOC_MEMORY:
		return size == sizeof(struct nvos02_with_fd);
	case NV_ESC_RM_MAP_MEMORY:
		return size == sizeof(struct nvos33_with_fd);
	case NV_ESC_CARD_INFO:
		return size && size % sizeof(struct nv_card_info) == 0;
	case NV_ESC_REGISTER_FD:
		return size == sizeof(struct nv_register_fd);
	case NV_ESC_CHECK_VERSION_STR:
		return size == sizeof(struct nv_rm_api_version);
	case NV_ESC_IOCTL_XFER_CMD:
		return size == sizeof(struct nv_ioctl_xfer);
	}
	return false;
}

static int nv_register(struct gfile *f, struct call *cl, struct nv_register_fd *r)
{
	if (f->ctl_linked || !caller_fd_is(cl->tid, r->ctl_fd, DEV_NVIDIACTL))
		return -EINVAL;
	f->ctl_linked = true;
	return 0;
}

/* One RM escape with its parameters in @buf. Returns 0 or -errno; RM verdicts go in status. */
static int nv_escape(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size)
{
	bool ctl = f->kind == DEV_NVIDIACTL;
	__u32 *status = NULL;
	__u32 st = NV_OK;

	switch (nr) {
	case NV_ESC_CHECK_VERSION_STR:
		if (!ctl)
			return -EINVAL;
		((struct nv_rm_api_version *)buf)->reply = NV_RM_API_VERSION_REPLY_RECOGNIZED;
		return 0;
	case NV_ESC_CARD_INFO:
		if (!ctl)
			return -EINVAL;
		card_info(buf, size);
		return 0;
	case NV_ESC_REGISTER_FD:
		return nv_register(f, cl, buf);
	case NV_ESC_RM_ALLOC:
		if (!ctl)
			return -EINVAL;
		st = rm_alloc(f, buf);
		status = size == sizeof(struct nvos21_params)
			     ? &((struct nvos21_params *)buf)->status
			     : &((struct nvos64_params *)buf)->status;
		break;
	case NV_ESC_RM_FREE:
		if (!ctl)
			return -EINVAL;
		st = rm_free(f, buf);
		status = &((struct nvos00_params *)buf)->status;
		break;
	case NV_ESC_RM_CONTROL:
		if (!ctl)
			return -EINVAL;
		st = rm_control(f, buf);
		status = &((struct nvos54_params *)buf)->status;
		break;
	case NV_ESC_RM_MAP_MEMORY:
		if (!ctl)
			return -EINVAL;
		st = rm_map_memory(f, buf);
		status = &((struct nvos33_with_fd *)buf)->status;
		break;
	case NV_ESC_RM_ALLOC_MEMORY:
		if (ctl)
			return -EINVAL; /* NV_ACTUAL_DEVICE_ONLY */
		st = rm_alloc_memory(f, buf);
		status = &((struct nvos02_with_fd *)buf)->status;
		break;
	default:
		return -EINVAL;
	}
	*status = st;
	cl->status = st;
	return 0;
}

/* NV_ESC_IOCTL_XFER_CMD: the real escape's parameters live behind xfer.ptr. */
static int nv_xfer(struct gfile *f, struct call *cl, struct nv_ioctl_xfer *x)
{
	void *buf;
	int ret;

	if (x->size > NV_IOCTL_XFER_MAX_SIZE || x->cmd == NV_ESC_IOCTL_XFER_CMD ||
	    !nv_size_ok(x->cmd, x->size))
		return -EINVAL;
	buf = calloc(1, x->size);
	if (!buf)
		return -ENOMEM;
	ret = remote_read(cl->tid, x->ptr, buf, x->size);
	if (!ret)
		ret = nv_escape(f, cl, x->cmd, buf, x->size);
	if (!ret)
		ret = remote_write(cl->tid, x->ptr, buf, x->size);
	free(buf);
	return ret;
}

int nv_ioctl(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size)
{
	if (!nv_size_ok(nr, size))
		return -EINVAL;
	if (nr == NV_ESC_IOCTL_XFER_CMD)
		return nv_xfer(f, cl, buf);
	return nv_escape(f, cl, nr, buf, size);
}
