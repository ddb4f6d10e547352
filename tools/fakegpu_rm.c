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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fakegpu.h"
#include "gpu_uapi.h"

#define RM_CLIENT_BASE 0xc1d00000U	 /* like the RM's own client handles */
#define RM_HANDLE_BASE 0xcaf00000U	 /* like RM-generated object handles */
#define VA_BASE_INIT   0x7f0000000000ULL /* where GPU virtual ranges are handed out */

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
	__u64 memblock_size;
	__u64 vidmem_next; /* VID_HEAP_CONTROL: next free video memory offset */
	__u64 va_next;	   /* and GPU virtual address */
} RM = {
    .va_next = VA_BASE_INIT,
};

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
/* NV01_EVENT, NV01_EVENT_KERNEL_CALLBACK, NV01_EVENT_OS_EVENT, NV01_EVENT_KERNEL_CALLBACK_EX */
static bool event_class(__u32 cls)
{
	return cls == 0x05 || cls == 0x78 || cls == 0x79 || cls == 0x7e;
}

static __u32 rm_alloc(struct gfile *f, struct nvos21_params *p)
{
	struct rm_client *c;
	__u32 h;

	if (p->hClass == NV01_ROOT || p->hClass == NV01_ROOT_NON_PRIV ||
	    p->hClass == NV01_ROOT_CLIENT) {
		p->hClass = NV01_ROOT_CLIENT;
		return rm_alloc_client(f, &p->hObjectNew);
	}
	/* an event may be allocated on nvidiaN, for a client of the linked nvidiactl (as in
	 * rm_alloc_memory, any client once linked) */
	if (f->kind == DEV_NVIDIACTL)
		c = client_of(f, p->hRoot);
	else if (event_class(p->hClass) && f->ctl_linked)
		c = client_find(p->hRoot);
	else
		return NV_ERR_INVALID_CLASS;
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

/* The class of @handle in client @client, or 0 when there is no such object. */
__u32 rm_object_class(__u32 client, __u32 handle)
{
	struct rm_client *c = client_find(client);
	struct rm_object *o = c ? obj_find(c, handle) : NULL;

	if (c && handle == c->handle)
		return NV01_ROOT_CLIENT;
	return o ? o->cls : 0;
}

/*
 * RM_CONTROL: the command's parameters live behind p->params in the caller's memory; read them,
 * answer (fakegpu_rmctrl.c) and write them back, as the RM does for an answered command.
 */
static __u32 rm_control(struct gfile *f, struct call *cl, struct nvos54_params *p)
{
	struct rm_client *c = client_of(f, p->hClient);
	struct rm_ctrl x = {.tid = cl->tid, .f = f, .cmd = p->cmd, .size = p->paramsSize};
	struct rm_object *o;
	__u32 st;

	cl->ctrl_cmd = p->cmd;
	if (!c)
		return NV_ERR_INVALID_CLIENT;
	o = obj_find(c, p->hObject);
	if (!o && p->hObject != c->handle)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	x.cls = o ? o->cls : NV01_ROOT_CLIENT;
	x.client = c->handle;
	x.object = p->hObject;
	if (x.size > RM_CTRL_MAX_PARAMS || (x.size && !p->params))
		return NV_ERR_INVALID_PARAM_STRUCT;
	if (x.size) {
		x.p = calloc(1, x.size);
		if (!x.p)
			return NV_ERR_NO_MEMORY;
		if (remote_read(cl->tid, p->params, x.p, x.size)) {
			free(x.p);
			return NV_ERR_INVALID_ADDRESS;
		}
	}
	st = rm_ctrl(&x);
	if (st == NV_OK && x.size && remote_write(cl->tid, p->params, x.p, x.size))
		st = NV_ERR_INVALID_ADDRESS;
	free(x.p);
	return st;
}

/* The verdict on a call naming object @handle of client @client through the open file @f. */
static __u32 check_object(struct gfile *f, __u32 client, __u32 handle)
{
	struct rm_client *c = client_of(f, client);

	if (!c)
		return NV_ERR_INVALID_CLIENT;
	return obj_find(c, handle) ? NV_OK : NV_ERR_INVALID_OBJECT_HANDLE;
}

static __u32 rm_map_memory(struct gfile *f, struct nvos33_with_fd *p)
{
	return check_object(f, p->hClient, p->hMemory);
}

/* UPDATE_DEVICE_MAPPING_INFO: a CPU mapping of @hMemory moved (mremap); nothing to track. */
static __u32 rm_update_mapping(struct gfile *f, struct nvos56_params *p)
{
	return check_object(f, p->hClient, p->hMemory);
}

static __u32 rm_unmap_memory(struct gfile *f, struct nvos34_params *p)
{
	return check_object(f, p->hClient, p->hMemory);
}

#define VIDMEM_SIZE    (80ULL << 30)
#define ALIGN_UP(v, a) (((v) + (a)-1) & ~((a)-1))

/*
 * VID_HEAP_CONTROL ALLOC_SIZE: video memory (NV01_MEMORY_LOCAL_USER) or, with
 * NVOS32_ALLOC_FLAGS_VIRTUAL, a GPU virtual range (NV50_MEMORY_VIRTUAL), from bump allocators:
 * nothing is ever backed, offsets are only numbers.
 */
static __u32 heap_alloc(struct rm_client *c, struct nvos32_params *p)
{
	bool virt = p->flags & NVOS32_ALLOC_FLAGS_VIRTUAL;
	__u64 align = p->alignment > 0x1000 ? p->alignment : 0x1000, size, *next;
	__u32 h = p->hMemory;

	if (!p->size)
		return NV_ERR_INVALID_ARGUMENT;
	if (!(p->flags & NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED))
		h = handle_gen(c);
	else if (!h || handle_used(c, h))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	size = ALIGN_UP(p->size, 0x1000);
	next = virt ? &RM.va_next : &RM.vidmem_next;
	if (!(p->flags & NVOS32_ALLOC_FLAGS_FIXED_ADDRESS_ALLOCATE))
		p->offset = ALIGN_UP(*next, align);
	if (!virt && p->offset + size > VIDMEM_SIZE)
		return NV_ERR_NO_MEMORY;
	if (p->offset + size > *next)
		*next = p->offset + size;
	if (obj_add(c, h, p->hObjectParent, virt ? 0x50a0 : 0x40))
		return NV_ERR_NO_MEMORY;
	p->hMemory = h;
	p->size = size;
	p->limit = p->offset + size - 1;
	return NV_OK;
}

/*
 * RM_MAP_MEMORY_DMA: map memory into a GPU virtual address space (hDma: a virtual range or a
 * VA space). At the caller's offset (DMA_OFFSET_FIXED), else at a fresh one; nothing is
 * mapped for real.
 */
static __u32 rm_map_dma(struct gfile *f, struct nvos46_params *p)
{
	__u32 st = check_object(f, p->hClient, p->hDma);

	if (st == NV_OK)
		st = check_object(f, p->hClient, p->hMemory);
	if (st != NV_OK)
		return st;
	if (!(p->flags & NVOS46_FLAGS_DMA_OFFSET_FIXED)) {
		p->dmaOffset = ALIGN_UP(RM.va_next, 1ULL << 21);
		RM.va_next = p->dmaOffset + ALIGN_UP(p->length ? p->length : 1, 0x1000);
	}
	return NV_OK;
}

static __u32 rm_unmap_dma(struct gfile *f, struct nvos47_params *p)
{
	__u32 st = check_object(f, p->hClient, p->hDma);

	return st == NV_OK ? check_object(f, p->hClient, p->hMemory) : st;
}

/* RM_VID_HEAP_CONTROL (NVOS32): the heap functions libcuda uses. */
static __u32 rm_vid_heap(struct gfile *f, struct nvos32_params *p)
{
	struct rm_client *c = client_of(f, p->hRoot);
	__u64 used;
	__u32 st;

	if (!c)
		return NV_ERR_INVALID_CLIENT;
	if (!obj_find(c, p->hObjectParent))
		return NV_ERR_INVALID_OBJECT_PARENT;
	switch (p->function) {
	case NVOS32_FUNCTION_ALLOC_SIZE:
		st = heap_alloc(c, p);
		break;
	case NVOS32_FUNCTION_FREE: /* {owner @0x28; hMemory @0x2c; flags @0x30} */
		if (!obj_find(c, p->hMemory))
			return NV_ERR_INVALID_OBJECT_HANDLE;
		obj_free_tree(c, p->hMemory);
		st = NV_OK;
		break;
	case NVOS32_FUNCTION_INFO: /* {attr @0x28; offset @0x30; size @0x38; base @0x40} */
		used = RM.vidmem_next < VIDMEM_SIZE ? RM.vidmem_next : VIDMEM_SIZE;
		memcpy((__u8 *)p + 0x30, &used, sizeof(used));
		used = VIDMEM_SIZE - used;
		memcpy((__u8 *)p + 0x38, &used, sizeof(used));
		memset((__u8 *)p + 0x40, 0, 8);
		st = NV_OK;
		break;
	default:
		return NV_ERR_NOT_SUPPORTED;
	}
	used = RM.vidmem_next < VIDMEM_SIZE ? RM.vidmem_next : VIDMEM_SIZE;
	p->total = VIDMEM_SIZE;
	p->free = VIDMEM_SIZE - used;
	return st;
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
	ci->pci_bus = FAKEGPU_NV_PCI_BUS;
	ci->pci_vendor_id = 0x10de;
	ci->pci_device_id = FAKEGPU_NV_PCI_DEVICE;
	ci->gpu_id = FAKEGPU_NV_GPU_ID;
	ci->interrupt_line = 16;
	ci->reg_address = FAKEGPU_NV_BAR0_ADDR;
	ci->reg_size = FAKEGPU_NV_BAR0_SIZE;
	ci->fb_address = FAKEGPU_NV_BAR1_ADDR;
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
	case NV_ESC_RM_UNMAP_MEMORY:
		return size == sizeof(struct nvos34_params);
	case NV_ESC_RM_VID_HEAP_CONTROL:
		return size == sizeof(struct nvos32_params);
	case NV_ESC_RM_MAP_MEMORY_DMA:
		return size == sizeof(struct nvos46_params);
	case NV_ESC_ALLOC_OS_EVENT:
	case NV_ESC_FREE_OS_EVENT:
		return size == sizeof(struct nv_os_event);
	case NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO:
		return size == sizeof(struct nvos56_params);
	case NV_ESC_RM_UNMAP_MEMORY_DMA:
		return size == sizeof(struct nvos47_params);
	case NV_ESC_CARD_INFO:
		return size && size % sizeof(struct nv_card_info) == 0;
	case NV_ESC_REGISTER_FD:
		return size == sizeof(struct nv_register_fd);
	case NV_ESC_CHECK_VERSION_STR:
		return size == sizeof(struct nv_rm_api_version);
	case NV_ESC_IOCTL_XFER_CMD:
		return size == sizeof(struct nv_ioctl_xfer);
	case NV_ESC_SYS_PARAMS:
		return size == sizeof(struct nv_sys_params);
	case NV_ESC_ATTACH_GPUS_TO_FD:
		return size && size % sizeof(__u32) == 0;
	case NV_ESC_NUMA_INFO:
		return size == NV_NUMA_INFO_SIZE;
	}
	return false;
}

/* nv.c: the memblock size is set once; a different one later is -EBUSY. */
static int sys_params(struct nv_sys_params *p)
{
	if (!RM.memblock_size)
		RM.memblock_size = p->memblock_size;
	return RM.memblock_size == p->memblock_size ? 0 : -EBUSY;
}

/* nv.c: once per ctl fd, only ids of GPUs the driver has (ours is FAKEGPU_NV_GPU_ID). */
static int attach_gpus(struct gfile *f, const __u32 *ids, size_t size)
{
	size_t i;

	if (f->attached_gpus)
		return -EBUSY;
	for (i = 0; i < size / sizeof(*ids); i++)
		if (ids[i] != FAKEGPU_NV_GPU_ID)
			return -EINVAL;
	f->attached_gpus = size / sizeof(*ids);
	return 0;
}

/*
 * NV_ESC_NUMA_INFO on nvidiaN: {s32 nid; s32 status; u64 memblock_size; u64 numa_mem_addr;
 * u64 numa_mem_size; u8 use_auto_online; offline addresses}: an H100 on PCIe has no NUMA
 * memory (nid -1, NV_IOCTL_NUMA_STATUS_DISABLED 0, no offline addresses).
 */
static int numa_info(void *buf, size_t size)
{
	__s32 nid = -1;

	memset(buf, 0, size);
	memcpy(buf, &nid, sizeof(nid));
	memcpy((char *)buf + 8, &RM.memblock_size, sizeof(RM.memblock_size));
	return 0;
}

static int nv_register(struct gfile *f, struct call *cl, struct nv_register_fd *r)
{
	if (f->ctl_linked || !caller_fd_is(cl->tid, r->ctl_fd, DEV_NVIDIACTL))
		return -EINVAL;
	f->ctl_linked = true;
	return 0;
}

/* ALLOC_OS_EVENT / FREE_OS_EVENT: an event fd for a client (rm_alloc_os_event), on either
 * device; events never fire here. */
static __u32 os_event(struct nv_os_event *p)
{
	return client_find(p->hClient) ? NV_OK : NV_ERR_INVALID_CLIENT;
}

/* Escapes for nvidiaN (NV_ACTUAL_DEVICE_ONLY); every other one but REGISTER_FD and the OS events
 * is for nvidiactl only (NV_CTL_DEVICE_ONLY). */
static bool device_only(unsigned int nr)
{
	return nr == NV_ESC_RM_ALLOC_MEMORY || nr == NV_ESC_NUMA_INFO;
}

/* RM_ALLOC of an event class may go to either device (escape.c). */
static bool either_device(unsigned int nr, const void *buf)
{
	return nr == NV_ESC_RM_ALLOC && event_class(((const struct nvos21_params *)buf)->hClass);
}

/* Where the RM status lies in the parameters of escape @nr. */
static size_t status_offset(unsigned int nr, size_t size)
{
	switch (nr) {
	case NV_ESC_RM_ALLOC:
		return size == sizeof(struct nvos21_params)
			   ? offsetof(struct nvos21_params, status)
			   : offsetof(struct nvos64_params, status);
	case NV_ESC_RM_FREE:
		return offsetof(struct nvos00_params, status);
	case NV_ESC_RM_CONTROL:
		return offsetof(struct nvos54_params, status);
	case NV_ESC_RM_MAP_MEMORY:
		return offsetof(struct nvos33_with_fd, status);
	case NV_ESC_RM_UNMAP_MEMORY:
		return offsetof(struct nvos34_params, status);
	case NV_ESC_RM_VID_HEAP_CONTROL:
		return offsetof(struct nvos32_params, status);
	case NV_ESC_RM_MAP_MEMORY_DMA:
		return offsetof(struct nvos46_params, status);
	case NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO:
		return offsetof(struct nvos56_params, status);
	case NV_ESC_RM_UNMAP_MEMORY_DMA:
		return offsetof(struct nvos47_params, status);
	default: /* NV_ESC_RM_ALLOC_MEMORY */
		return offsetof(struct nvos02_with_fd, status);
	}
}

/* One RM escape with its parameters in @buf. Returns 0 or -errno; RM verdicts go in status. */
static int nv_escape(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size)
{
	__u32 st;

	if (nr == NV_ESC_REGISTER_FD)
		return nv_register(f, cl, buf);
	if (nr == NV_ESC_ALLOC_OS_EVENT || nr == NV_ESC_FREE_OS_EVENT) {
		st = os_event(buf);
		((struct nv_os_event *)buf)->Status = st;
		cl->status = st;
		return 0;
	}
	if (device_only(nr) == (f->kind == DEV_NVIDIACTL) && !either_device(nr, buf))
		return -EINVAL;
	switch (nr) {
	case NV_ESC_CHECK_VERSION_STR:
		((struct nv_rm_api_version *)buf)->reply = NV_RM_API_VERSION_REPLY_RECOGNIZED;
		return 0;
	case NV_ESC_CARD_INFO:
		card_info(buf, size);
		return 0;
	case NV_ESC_SYS_PARAMS:
		return sys_params(buf);
	case NV_ESC_ATTACH_GPUS_TO_FD:
		return attach_gpus(f, buf, size);
	case NV_ESC_NUMA_INFO:
		return numa_info(buf, size);
	case NV_ESC_RM_ALLOC:
		cl->rm_class = ((struct nvos21_params *)buf)->hClass;
		st = rm_alloc(f, buf);
		break;
	case NV_ESC_RM_FREE:
		st = rm_free(f, buf);
		break;
	case NV_ESC_RM_CONTROL:
		st = rm_control(f, cl, buf);
		break;
	case NV_ESC_RM_MAP_MEMORY:
		st = rm_map_memory(f, buf);
		break;
	case NV_ESC_RM_VID_HEAP_CONTROL:
		st = rm_vid_heap(f, buf);
		break;
	case NV_ESC_RM_MAP_MEMORY_DMA:
		st = rm_map_dma(f, buf);
		break;
	case NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO:
		st = rm_update_mapping(f, buf);
		break;
	case NV_ESC_RM_UNMAP_MEMORY_DMA:
		st = rm_unmap_dma(f, buf);
		break;
	case NV_ESC_RM_UNMAP_MEMORY:
		st = rm_unmap_memory(f, buf);
		break;
	case NV_ESC_RM_ALLOC_MEMORY:
		st = rm_alloc_memory(f, buf);
		break;
	default:
		return -EINVAL;
	}
	memcpy((__u8 *)buf + status_offset(nr, size), &st, sizeof(st));
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
