// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu's AMD half: /dev/kfd and the amdgpu render node, answered as one gfx90a (AMD
 * Instinct MI210) that Debian's real ROCr/libhsakmt (5.2) and libdrm_amdgpu accept, and the
 * KFD topology tree they read from sysfs (fakegpu -t DIR writes it). Nothing executes: queues,
 * doorbells and the signal event page are plain memory of the FUSE file, and no GPU ever writes
 * a signal, so a runtime that waits for the GPU waits until its own timeout.
 *
 * Layouts are those of <linux/kfd_ioctl.h> (KFD 1.11) and <drm/amdgpu_drm.h>
 * (shared/reference/gpu-facts.md §2); mmap offsets are ours: the KFD file holds the doorbell
 * pages, the signal event page and the MMIO remap page, the render file one range per buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define GPU_UAPI_NO_HELPERS
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#define FUSE_USE_VERSION 31
#include <fuse.h>

#include "fakegpu.h"
#include "gpu_uapi.h"

/* ---- the device: one consistent gfx90a (gpu-facts.md §2; amdgpu.ids names 740F rev 02) ---- */
#define GPU_NODE	 1 /* node 0 is the CPU */
#define GPU_ID		 FAKEGPU_KFD_GPU_ID
#define GPU_DEVICE_ID	 0x740f
#define GPU_PCI_REV	 0x02
#define GPU_GFX_VERSION	 90010 /* gfx90a */
#define GPU_FAMILY_AI	 141   /* AMDGPU_FAMILY_AI: gfx9 */
#define GPU_SE		 8
#define GPU_CU_PER_SE	 13 /* 104 CUs */
#define GPU_SIMD_PER_CU	 4
#define GPU_VRAM	 (64ULL << 30)
#define GPU_LOCATION_ID	 0x0300 /* PCI 0000:03:00.0 */
#define GPU_ENGINE_MHZ	 1700
#define GPU_MEM_MHZ	 1600
#define GPU_RENDER_MINOR 128
/* HSA_CAP_*: 64-bit doorbells (DOORBELL_TYPE 2 << 12) */
#define GPU_CAPABILITY (2U << 12)

/* ---- mmap offsets (ours; the real driver encodes a type and the gpu_id in them) ---- */
/* The process's doorbell pages (1024 64-bit doorbells) at offset 0: libhsakmt 5.2 maps them at
 * CREATE_QUEUE's doorbell_offset & ~(size - 1) and rings offset & (size - 1) */
#define KFD_DOORBELL_OFF  0ULL
#define KFD_DOORBELL_SIZE 0x2000ULL
#define KFD_EVENTS_OFF	  (2ULL << 30) /* KFD_SIGNAL_EVENT_LIMIT * 8 bytes */
#define KFD_EVENTS_LIMIT  4096
#define KFD_MMIO_OFF	  (3ULL << 30)
#define KFD_FILE_SIZE	  (4ULL << 30)
#define RENDER_BO_BASE	  (1ULL << 32)
#define RENDER_FILE_SIZE  (1ULL << 44)

#define KFD_MAX_QUEUES 1024
#define KFD_MAX_WAIT   256 /* events in one WAIT_EVENTS we look at */
#define PAGE	       4096ULL

/* ---- argument layouts beyond kfd_compat.h (KFD 1.11, <linux/kfd_ioctl.h>) ---- */
struct fk_clock_counters {
	__u64 gpu_clock_counter, cpu_clock_counter, system_clock_counter, system_clock_freq;
	__u32 gpu_id, pad;
};

struct fk_aperture {
	__u64 lds_base, lds_limit, scratch_base, scratch_limit, gpuvm_base, gpuvm_limit;
	__u32 gpu_id, pad;
};

struct fk_apertures_old { /* GET_PROCESS_APERTURES: NUM_OF_SUPPORTED_GPUS 7 */
	struct fk_aperture ap[7];
	__u32 num_of_nodes, pad;
};

struct fk_apertures_new {
	__u64 ptr;
	__u32 num_of_nodes, pad;
};

struct fk_create_event {
	__u64 event_page_offset;
	__u32 event_trigger_data, event_type, auto_reset, node_id, event_id, event_slot_index;
};

struct fk_event_id { /* destroy, set, reset */
	__u32 event_id, pad;
};

struct fk_wait_events {
	__u64 events_ptr;
	__u32 num_events, wait_for_all, timeout, wait_result;
};

#define FK_EVENT_DATA_SIZE   48 /* struct kfd_event_data */
#define FK_EVENT_DATA_ID     40 /* its event_id */
#define FK_WAIT_COMPLETE     0
#define FK_WAIT_TIMEOUT	     1
#define FK_EVENT_SIGNAL	     0
#define FK_EVENT_TIMEOUT_INF 0xffffffffU

struct fk_available_memory {
	__u64 available;
	__u32 gpu_id, pad;
};

struct fk_xnack {
	__s32 xnack_enabled;
};

_Static_assert(sizeof(struct fk_apertures_old) == 0x190, "GET_PROCESS_APERTURES args");
_Static_assert(sizeof(struct fk_create_event) == 0x20, "CREATE_EVENT args");
_Static_assert(sizeof(struct fk_wait_events) == 0x18, "WAIT_EVENTS args");
_Static_assert(sizeof(struct fk_clock_counters) == 0x28, "GET_CLOCK_COUNTERS args");

/* ---- per open file ---- */
struct kfd_mem {
	__u64 handle, size, offset;
	__u32 flags;
};

struct kfd_event {
	__u32 id;
	bool signaled, auto_reset;
};

struct amd_file {
	/* kfd */
	struct id_set queues;
	struct kfd_mem *mem;
	size_t nmem, capmem;
	__u32 next_mem;
	struct kfd_event *ev;
	size_t nev, capev;
	__u32 next_event;
	__s32 xnack;
	/* renderD128 */
	struct id_set ctxs;
	__u32 next_ctx;
	__u32 next_gem;
};

static pthread_cond_t event_cond = PTHREAD_COND_INITIALIZER;
static __u64 render_next_off = RENDER_BO_BASE; /* one offset range per buffer, never reused */
static __u64 vram_used;

static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, (*cap ? *cap * 2 : 16) * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

int amd_open(struct gfile *f)
{
	if (f->kind != DEV_KFD && f->kind != DEV_RENDER)
		return 0;
	f->amd = calloc(1, sizeof(*f->amd));
	return f->amd ? 0 : -ENOMEM;
}

void amd_release(struct gfile *f)
{
	struct amd_file *a = f->amd;
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nmem; i++)
		if (a->mem[i].flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
			vram_used -= a->mem[i].size;
	ids_free(&a->queues);
	ids_free(&a->ctxs);
	free(a->mem);
	free(a->ev);
	free(a);
	f->amd = NULL;
}

off_t amd_file_size(enum dev_kind kind)
{
	if (kind == DEV_KFD)
		return KFD_FILE_SIZE;
	if (kind == DEV_RENDER)
		return RENDER_FILE_SIZE;
	return 0;
}

/* ---- KFD: queues ---- */

static int kfd_create_queue(struct amd_file *a, struct kfd_ioctl_create_queue_args *q)
{
	__u32 id;

	if (q->gpu_id != GPU_ID)
		return -EINVAL;
	for (id = 0; id < KFD_MAX_QUEUES; id++)
		if (!ids_has(&a->queues, id))
			break;
	if (id == KFD_MAX_QUEUES)
		return -ENOSPC;
	if (ids_add(&a->queues, id))
		return -ENOMEM;
	q->queue_id = id;
	/* SOC15: the process's doorbell range, and this queue's 64-bit slot in it */
	q->doorbell_offset = KFD_DOORBELL_OFF | (__u64)id * 8;
	return 0;
}

/* ---- KFD: memory ---- */

static struct kfd_mem *mem_find(struct amd_file *a, __u64 handle)
{
	size_t i;

	for (i = 0; i < a->nmem; i++)
		if (a->mem[i].handle == handle)
			return &a->mem[i];
	return NULL;
}

static __u64 mem_offset(struct kfd_ioctl_alloc_memory_of_gpu_args *m)
{
	__u64 off;

	if (m->flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)
		return KFD_DOORBELL_OFF;
	if (m->flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
		return KFD_MMIO_OFF;
	if (m->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)
		return m->mmap_offset; /* the user address it came with */
	off = render_next_off;
	render_next_off += (m->size + PAGE - 1) & ~(PAGE - 1);
	return off;
}

static int kfd_alloc_memory(struct amd_file *a, struct kfd_ioctl_alloc_memory_of_gpu_args *m)
{
	bool vram = m->flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM;
	struct kfd_mem *e;

	if (m->gpu_id != GPU_ID || !m->size)
		return -EINVAL;
	if (vram && m->size > GPU_VRAM - vram_used)
		return -ENOMEM;
	if (!(m->flags & (KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
			  KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)) &&
	    render_next_off + m->size > RENDER_FILE_SIZE)
		return -ENOMEM;
	if (grow((void **)&a->mem, &a->capmem, a->nmem, sizeof(*a->mem)))
		return -ENOMEM;
	e = &a->mem[a->nmem++];
	e->handle = (__u64)GPU_ID << 32 | ++a->next_mem;
	e->size = m->size;
	e->flags = m->flags;
	e->offset = mem_offset(m);
	if (vram)
		vram_used += m->size;
	m->handle = e->handle;
	m->mmap_offset = e->offset;
	return 0;
}

static int kfd_free_memory(struct amd_file *a, __u64 handle)
{
	struct kfd_mem *e = mem_find(a, handle);

	if (!e)
		return -EINVAL;
	if (e->flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
		vram_used -= e->size;
	*e = a->mem[--a->nmem];
	return 0;
}

/* MAP/UNMAP: every listed device must be ours. */
static int kfd_map_memory(struct amd_file *a, struct call *cl,
			  struct kfd_ioctl_map_memory_to_gpu_args *m)
{
	__u32 ids[8];
	__u32 i;

	if (!mem_find(a, m->handle) || !m->n_devices || m->n_devices > 8)
		return -EINVAL;
	if (remote_read(cl->tid, m->device_ids_array_ptr, ids, m->n_devices * sizeof(ids[0])))
		return -EFAULT;
	for (i = 0; i < m->n_devices; i++)
		if (ids[i] != GPU_ID)
			return -EINVAL;
	m->n_success = m->n_devices;
	return 0;
}

/* ---- KFD: apertures and clocks ---- */

/* kfd_init_apertures_v9(): LDS and scratch in the non-canonical hole, GPUVM = the user VA */
static void aperture(struct fk_aperture *ap)
{
	memset(ap, 0, sizeof(*ap));
	ap->lds_base = 1ULL << 48;
	ap->lds_limit = ap->lds_base | 0xffffffffULL;
	ap->scratch_base = 2ULL << 48;
	ap->scratch_limit = ap->scratch_base | 0xffffffffULL;
	ap->gpuvm_base = 4 * PAGE; /* SVM_USER_BASE: after the CWSR TBA/TMA pages */
	ap->gpuvm_limit = (1ULL << 47) - 1;
	ap->gpu_id = GPU_ID;
}

static int kfd_apertures_new(struct call *cl, struct fk_apertures_new *n)
{
	struct fk_aperture ap;

	if (n->num_of_nodes) {
		aperture(&ap);
		if (remote_write(cl->tid, n->ptr, &ap, sizeof(ap)))
			return -EFAULT;
	}
	n->num_of_nodes = 1;
	return 0;
}

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Any gpu_id: an unknown one (the CPU node's 0) gets a GPU counter of 0, as in the kernel. */
static int kfd_clock_counters(struct fk_clock_counters *c)
{
	c->gpu_clock_counter = c->gpu_id == GPU_ID ? now_ns(CLOCK_MONOTONIC_RAW) / 10 : 0;
	c->cpu_clock_counter = now_ns(CLOCK_MONOTONIC_RAW);
	c->system_clock_counter = now_ns(CLOCK_MONOTONIC_RAW);
	c->system_clock_freq = 1000000000ULL;
	return 0;
}

/* ---- KFD: events ---- */

static struct kfd_event *event_find(struct amd_file *a, __u32 id)
{
	size_t i;

	for (i = 0; i < a->nev; i++)
		if (a->ev[i].id == id)
			return &a->ev[i];
	return NULL;
}

static int kfd_create_event(struct amd_file *a, struct fk_create_event *c)
{
	struct kfd_event *e;

	if (a->nev >= KFD_EVENTS_LIMIT)
		return -ENOSPC;
	if (grow((void **)&a->ev, &a->capev, a->nev, sizeof(*a->ev)))
		return -ENOMEM;
	e = &a->ev[a->nev++];
	e->id = ++a->next_event;
	e->auto_reset = c->auto_reset;
	e->signaled = false;
	c->event_id = e->id;
	c->event_trigger_data = e->id;
	/* signal events get a slot in the event page: the caller's own (an offset it passed in,
	 * a handle of its memory) or ours in the KFD file */
	if (c->event_type == FK_EVENT_SIGNAL) {
		c->event_slot_index = e->id % KFD_EVENTS_LIMIT;
		if (!c->event_page_offset)
			c->event_page_offset = KFD_EVENTS_OFF;
	}
	return 0;
}

static int kfd_destroy_event(struct amd_file *a, __u32 id)
{
	struct kfd_event *e = event_find(a, id);

	if (!e)
		return -EINVAL;
	*e = a->ev[--a->nev];
	return 0;
}

static int kfd_set_event(struct amd_file *a, __u32 id, bool on)
{
	struct kfd_event *e = event_find(a, id);

	if (!e)
		return -EINVAL;
	e->signaled = on;
	if (on)
		pthread_cond_broadcast(&event_cond);
	return 0;
}

/* Are the events signaled (any, or all)? Then consume the auto-reset ones. */
static bool events_ready(struct amd_file *a, const __u32 *ids, __u32 n, bool all)
{
	__u32 i, hit = 0;
	struct kfd_event *e;

	for (i = 0; i < n; i++) {
		e = event_find(a, ids[i]);
		hit += e && e->signaled;
	}
	if (!(all ? hit == n : hit > 0))
		return false;
	for (i = 0; i < n; i++) {
		e = event_find(a, ids[i]);
		if (e && e->signaled && e->auto_reset)
			e->signaled = false;
	}
	return true;
}

/*
 * Sleep on the events (fg_lock released meanwhile) until one is set by SET_EVENT, the
 * timeout passes, or the caller is gone. Nothing else sets them: no GPU raises interrupts.
 */
static int kfd_wait_events(struct gfile *f, struct call *cl, struct fk_wait_events *w)
{
	unsigned char data[FK_EVENT_DATA_SIZE];
	__u32 ids[KFD_MAX_WAIT], n = w->num_events, i;
	struct timespec until, step;
	__u64 deadline;

	if (!n || n > KFD_MAX_WAIT)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (remote_read(cl->tid, w->events_ptr + (__u64)i * sizeof(data), data,
				sizeof(data)))
			return -EFAULT;
		memcpy(&ids[i], data + FK_EVENT_DATA_ID, sizeof(ids[i]));
	}
	deadline = w->timeout == FK_EVENT_TIMEOUT_INF
		       ? ~0ULL
		       : now_ns(CLOCK_REALTIME) + (__u64)w->timeout * 1000000ULL;
	for (;;) {
		if (!f->amd)
			return -EBADF;
		if (events_ready(f->amd, ids, n, w->wait_for_all)) {
			w->wait_result = FK_WAIT_COMPLETE;
			return 0;
		}
		if (now_ns(CLOCK_REALTIME) >= deadline) {
			w->wait_result = FK_WAIT_TIMEOUT;
			return 0;
		}
		/* a signal (also the SIGKILL of an exit or a core dump) interrupts the ioctl: the
		 * kernel cannot finish a FUSE request we hold, so the task would hang */
		if (fuse_interrupted() || (kill(cl->tid, 0) && errno == ESRCH))
			return -EINTR;
		clock_gettime(CLOCK_REALTIME, &until);
		step = until;
		step.tv_nsec += 200000000L; /* look at the caller again in 200 ms */
		if (step.tv_nsec >= 1000000000L) {
			step.tv_sec++;
			step.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&event_cond, &fg_lock, &step);
	}
}

/* ---- KFD: dispatch ---- */

static int kfd_dispatch(struct gfile *f, struct call *cl, unsigned int nr, void *buf)
{
	struct amd_file *a = f->amd;
	struct fk_available_memory *avail = buf;
	struct fk_xnack *x = buf;

	switch (nr) {
	case 0x01: { /* GET_VERSION */
		struct kfd_ioctl_get_version_args *v = buf;

		v->major_version = FAKEGPU_KFD_MAJOR;
		v->minor_version = FAKEGPU_KFD_MINOR;
		return 0;
	}
	case 0x02:
		return kfd_create_queue(a, buf);
	case 0x03:
		return ids_del(&a->queues, ((struct kfd_ioctl_destroy_queue_args *)buf)->queue_id)
			   ? 0
			   : -EINVAL;
	case 0x04: /* SET_MEMORY_POLICY: {base, size, gpu_id, ...} */
	case 0x13: /* SET_TRAP_HANDLER: {tba, tma, gpu_id, pad} */
		return ((__u32 *)buf)[4] == GPU_ID ? 0 : -EINVAL;
	case 0x11: /* SET_SCRATCH_BACKING_VA: {va, gpu_id, pad} */
		return ((__u32 *)buf)[2] == GPU_ID ? 0 : -EINVAL;
	case 0x05:
		return kfd_clock_counters(buf);
	case 0x06: { /* GET_PROCESS_APERTURES */
		struct fk_apertures_old *o = buf;

		aperture(&o->ap[0]);
		o->num_of_nodes = 1;
		return 0;
	}
	case 0x07: /* UPDATE_QUEUE: {queue_id, ...} */
		return ids_has(&a->queues, *(__u32 *)buf) ? 0 : -EINVAL;
	case 0x08:
		return kfd_create_event(a, buf);
	case 0x09:
		return kfd_destroy_event(a, ((struct fk_event_id *)buf)->event_id);
	case 0x0a:
	case 0x0b:
		return kfd_set_event(a, ((struct fk_event_id *)buf)->event_id, nr == 0x0a);
	case 0x0c:
		return kfd_wait_events(f, cl, buf);
	case 0x12: /* GET_TILE_CONFIG: gfx9 has no tile mode tables; counts stay 0 */
		return 0;
	case 0x14:
		return kfd_apertures_new(cl, buf);
	case 0x15: /* ACQUIRE_VM */
		return 0;
	case 0x16:
		return kfd_alloc_memory(a, buf);
	case 0x17:
		return kfd_free_memory(a,
				       ((struct kfd_ioctl_free_memory_of_gpu_args *)buf)->handle);
	case 0x18:
	case 0x19:
		return kfd_map_memory(a, cl, buf);
	case 0x21: /* SET_XNACK_MODE: a negative value queries */
		if (x->xnack_enabled >= 0)
			a->xnack = x->xnack_enabled;
		x->xnack_enabled = a->xnack;
		return 0;
	case 0x23: /* AVAILABLE_MEMORY */
		if (avail->gpu_id != GPU_ID)
			return -EINVAL;
		avail->available = GPU_VRAM - vram_used;
		return 0;
	}
	return -EINVAL;
}

/* kfd_ioctl(): the nr range check comes first, then "only the opener may use this fd". */
int kfd_ioctl(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size)
{
	(void)size;
	if (nr < KFD_NR_FIRST || nr > KFD_NR_LAST)
		return -EINVAL;
	if (cl->tgid != f->tgid)
		return -EBADF;
	if (nr == KFD_NR_ACQUIRE_VM &&
	    !caller_fd_is(cl->tid, ((struct kfd_ioctl_acquire_vm_args *)buf)->drm_fd, DEV_RENDER))
		return -EINVAL;
	return kfd_dispatch(f, cl, nr, buf);
}

/* ---- amdgpu render node ---- */

static int amdgpu_ctx(struct amd_file *a, union amdgpu_ctx_args *c)
{
	__u32 id;

	switch (c->in.op) {
	case AMDGPU_CTX_OP_ALLOC_CTX:
		id = ++a->next_ctx;
		if (ids_add(&a->ctxs, id))
			return -ENOMEM;
		memset(c, 0, sizeof(*c));
		c->out.alloc.ctx_id = id;
		return 0;
	case AMDGPU_CTX_OP_FREE_CTX:
		return ids_del(&a->ctxs, c->in.ctx_id) ? 0 : -EINVAL;
	case AMDGPU_CTX_OP_QUERY_STATE:
	case AMDGPU_CTX_OP_QUERY_STATE2:
		if (!ids_has(&a->ctxs, c->in.ctx_id))
			return -EINVAL;
		memset(c, 0, sizeof(*c));
		return 0;
	}
	return -EINVAL;
}

/* DRM_IOCTL_VERSION: struct drm_version; the strings go to the caller's buffers. */
static int drm_version(struct call *cl, void *buf)
{
	static const char *const str[3] = {"amdgpu", "20150101", "AMD GPU"};
	__u64 *lenp, ptr, len;
	int *v = buf, i;

	v[0] = 3; /* the amdgpu KMS interface libdrm_amdgpu requires */
	v[1] = 49;
	v[2] = 0;
	for (i = 0; i < 3; i++) {
		lenp = (__u64 *)((char *)buf + 16 + i * 16);
		memcpy(&ptr, (char *)lenp + 8, sizeof(ptr));
		len = strlen(str[i]);
		if (ptr && *lenp && remote_write(cl->tid, ptr, str[i], *lenp < len ? *lenp : len))
			return -EFAULT;
		*lenp = len;
	}
	return 0;
}

/* drm_amdgpu_info_device (amdgpu_drm.h): the fields libdrm_amdgpu and ROCr read, by offset */
#define DI_DEVICE_ID	0
#define DI_CHIP_REV	4
#define DI_EXTERNAL_REV 8
#define DI_PCI_REV	12
#define DI_FAMILY	16
#define DI_NUM_SE	20
#define DI_SA_PER_SE	24
#define DI_COUNTER_KHZ	28
#define DI_ENGINE_KHZ	32 /* u64 */
#define DI_MEMORY_KHZ	40 /* u64 */
#define DI_CU_ACTIVE	48
#define DI_CU_BITMAP	56  /* u32[4][4] */
#define DI_VA_OFFSET	144 /* u64 */
#define DI_VA_MAX	152 /* u64 */
#define DI_VA_ALIGN	160
#define DI_PTE_FRAG	164
#define DI_GART_PAGE	168
#define DI_VRAM_TYPE	176
#define DI_VRAM_WIDTH	180
#define DI_WAVE_SIZE	240
#define DI_VGPRS	244
#define DI_CU_PER_SH	248
#define DI_TCC_BLOCKS	252
#define DI_HIGH_VA_OFF	336 /* u64 */
#define DI_HIGH_VA_MAX	344 /* u64 */
#define DI_SIZE		376

static void put32(unsigned char *b, size_t off, __u32 v)
{
	memcpy(b + off, &v, sizeof(v));
}

static void put64(unsigned char *b, size_t off, __u64 v)
{
	memcpy(b + off, &v, sizeof(v));
}

static void dev_info(unsigned char *b)
{
	int se;

	put32(b, DI_DEVICE_ID, GPU_DEVICE_ID);
	put32(b, DI_CHIP_REV, 1);
	put32(b, DI_EXTERNAL_REV, 0x3d);
	put32(b, DI_PCI_REV, GPU_PCI_REV);
	put32(b, DI_FAMILY, GPU_FAMILY_AI);
	put32(b, DI_NUM_SE, GPU_SE);
	put32(b, DI_SA_PER_SE, 1);
	put32(b, DI_COUNTER_KHZ, 100000);
	put64(b, DI_ENGINE_KHZ, GPU_ENGINE_MHZ * 1000ULL);
	put64(b, DI_MEMORY_KHZ, GPU_MEM_MHZ * 1000ULL);
	put32(b, DI_CU_ACTIVE, GPU_SE * GPU_CU_PER_SE);
	for (se = 0; se < 4; se++) /* [se][sh]; SEs 4-7 fold into the first 4 rows */
		put32(b, DI_CU_BITMAP + se * 16, (1U << GPU_CU_PER_SE) - 1);
	put64(b, DI_VA_OFFSET, 0x200000);
	put64(b, DI_VA_MAX, 1ULL << 47);
	put32(b, DI_VA_ALIGN, 4096);
	put32(b, DI_PTE_FRAG, 0x200000);
	put32(b, DI_GART_PAGE, 4096);
	put32(b, DI_VRAM_TYPE, 6); /* HBM */
	put32(b, DI_VRAM_WIDTH, 4096);
	put32(b, DI_WAVE_SIZE, 64);
	put32(b, DI_VGPRS, 512);
	put32(b, DI_CU_PER_SH, GPU_CU_PER_SE);
	put32(b, DI_TCC_BLOCKS, 16);
	put64(b, DI_HIGH_VA_OFF, 0xffff800000000000ULL);
	put64(b, DI_HIGH_VA_MAX, 0xffffffffffe00000ULL);
}

/* struct drm_amdgpu_info {return_pointer, return_size, query, ...}: answers go to the pointer */
#define INFO_ACCEL_WORKING 0x00
#define INFO_VRAM_GTT	   0x14
#define INFO_DEV_INFO	   0x16
#define INFO_MEMORY	   0x19

static int amdgpu_info(struct call *cl, const void *buf)
{
	unsigned char out[DI_SIZE] = {0};
	__u32 size, query;
	__u64 ptr;

	memcpy(&ptr, buf, 8);
	memcpy(&size, (const char *)buf + 8, 4);
	memcpy(&query, (const char *)buf + 12, 4);
	switch (query) {
	case INFO_ACCEL_WORKING:
		put32(out, 0, 1);
		break;
	case INFO_DEV_INFO:
		dev_info(out);
		break;
	case INFO_VRAM_GTT: /* {vram_size, vram_cpu_accessible_size, gtt_size} */
		put64(out, 0, GPU_VRAM);
		put64(out, 8, GPU_VRAM);
		put64(out, 16, 32ULL << 30);
		break;
	case INFO_MEMORY: /* heaps {total, usable, usage, max_allocation}: vram, visible, gtt */
		put64(out, 0, GPU_VRAM);
		put64(out, 8, GPU_VRAM);
		put64(out, 16, vram_used);
		put64(out, 24, GPU_VRAM);
		put64(out, 32, GPU_VRAM);
		put64(out, 40, GPU_VRAM);
		put64(out, 48, vram_used);
		put64(out, 56, GPU_VRAM);
		put64(out, 64, 32ULL << 30);
		put64(out, 72, 32ULL << 30);
		put64(out, 88, 32ULL << 30);
		break;
	default: /* firmware versions, registers, IP info, sensors: all zero */
		break;
	}
	if (size > sizeof(out))
		size = sizeof(out);
	return remote_write(cl->tid, ptr, out, size);
}

int render_ioctl(struct gfile *f, struct call *cl, unsigned int nr, void *buf, size_t size)
{
	union amdgpu_gem_create_args *gem = buf;
	struct amd_file *a = f->amd;

	(void)size;
	switch (nr) {
	case 0x00:
		return drm_version(cl, buf);
	case 0x05: /* GET_CLIENT (libdrm asks when the node is not a character device) */
		((int *)buf)[1] = 1; /* auth */
		return 0;
	case AMDGPU_NR_CTX:
		return amdgpu_ctx(a, buf);
	case AMDGPU_NR_INFO:
		return amdgpu_info(cl, buf);
	case AMDGPU_NR_GEM_CREATE:
		memset(gem, 0, sizeof(*gem));
		gem->out.handle = ++a->next_gem;
		return 0;
	}
	return -EINVAL;
}

/* ---- the KFD topology tree (sysfs: one "name value" line per property) ---- */

static int put_file(const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int put_file(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *fp;
	int bad;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "we");
	if (!fp) {
		fprintf(stderr, "fakegpu: %s: %s\n", path, strerror(errno));
		return -1;
	}
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	bad = ferror(fp);
	return fclose(fp) || bad ? -1 : 0;
}

static int mk(const char *dir, const char *sub, char *out)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, sub);
	if (mkdir(out, 0755) && errno != EEXIST) {
		fprintf(stderr, "fakegpu: mkdir %s: %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
}

/* caches/N/properties of the GPU: a 16 KiB L1 per CU, the 8 MiB L2 (ROCr requires some) */
static int put_gpu_caches(const char *caches)
{
	static const struct {
		int level, kib, line, assoc, type;
	} c[] = {{1, 16, 64, 4, 9}, {2, 8192, 128, 16, 9}}; /* type: DATA | HSACU */
	char leaf[PATH_MAX], num[16];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(num, sizeof(num), "%zu", i);
		if (mk(caches, num, leaf) ||
		    put_file(leaf, "properties",
			     "processor_id_low 2147487744\nlevel %d\nsize %d\ncache_line_size %d\n"
			     "cache_lines_per_tag 1\nassociation %d\nlatency 0\ntype %d\n",
			     c[i].level, c[i].kib, c[i].line, c[i].assoc, c[i].type))
			return -1;
	}
	return 0;
}

/* One node: nodes/N/{gpu_id,name,properties}, one memory bank, one IO link to @peer. */
static int put_node(const char *nodes, int n, __u32 gpu_id, const char *name, const char *props,
		    int heap, __u64 mem, int width, int mem_mhz, int peer)
{
	char nd[PATH_MAX], sub[PATH_MAX], leaf[PATH_MAX], num[16];

	snprintf(num, sizeof(num), "%d", n);
	if (mk(nodes, num, nd) || put_file(nd, "gpu_id", "%u\n", gpu_id) ||
	    put_file(nd, "name", "%s\n", name) || put_file(nd, "properties", "%s", props) ||
	    mk(nd, "caches", sub) || (gpu_id && put_gpu_caches(sub)) || mk(nd, "p2p_links", sub) ||
	    mk(nd, "mem_banks", sub) || mk(sub, "0", leaf) ||
	    put_file(leaf, "properties",
		     "heap_type %d\nsize_in_bytes %llu\nflags 0\nwidth %d\nmem_clk_max %d\n", heap,
		     (unsigned long long)mem, width, mem_mhz) ||
	    mk(nd, "io_links", sub) || mk(sub, "0", leaf))
		return -1;
	/* type 2: PCIe */
	return put_file(leaf, "properties",
			"type 2\nversion_major 0\nversion_minor 0\nnode_from %d\nnode_to %d\n"
			"weight 20\nmin_latency 0\nmax_latency 0\nmin_bandwidth 312\n"
			"max_bandwidth 64000\nrecommended_transfer_size 0\nflags 1\n",
			n, peer);
}

int kfd_topology_write(const char *dir)
{
	char nodes[PATH_MAX], props[2048];
	struct sysinfo si;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (sysinfo(&si))
		return -1;
	if ((mkdir(dir, 0755) && errno != EEXIST) || mk(dir, "nodes", nodes) ||
	    put_file(dir, "generation_id", "1\n") ||
	    put_file(dir, "system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0\n"))
		return -1;
	snprintf(props, sizeof(props),
		 "cpu_cores_count %ld\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\n"
		 "io_links_count 1\np2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 0\n"
		 "max_waves_per_simd 0\nlds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\n"
		 "wave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\n"
		 "cu_per_simd_array 0\nsimd_per_cu 0\nmax_slots_scratch_cu 0\n"
		 "gfx_target_version 0\nvendor_id 0\ndevice_id 0\nlocation_id 0\ndomain 0\n"
		 "drm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\nnum_sdma_xgmi_engines 0\n"
		 "num_sdma_queues_per_engine 0\nnum_cp_queues 0\nmax_engine_clk_ccompute 2000\n",
		 cpus > 0 ? cpus : 1);
	if (put_node(nodes, 0, 0, "", props, 0, (__u64)si.totalram * si.mem_unit, 72, 2400,
		     GPU_NODE))
		return -1;
	snprintf(props, sizeof(props),
		 "cpu_cores_count 0\nsimd_count %d\nmem_banks_count 1\ncaches_count 2\n"
		 "io_links_count 1\np2p_links_count 0\ncpu_core_id_base 0\n"
		 "simd_id_base 2147487744\nmax_waves_per_simd 8\nlds_size_in_kb 64\n"
		 "gds_size_in_kb 0\nnum_gws 64\nwave_front_size 64\narray_count %d\n"
		 "simd_arrays_per_engine 1\ncu_per_simd_array %d\nsimd_per_cu %d\n"
		 "max_slots_scratch_cu 32\ngfx_target_version %d\nvendor_id 4098\n"
		 "device_id %d\nlocation_id %d\ndomain 0\ndrm_render_minor %d\nhive_id 0\n"
		 "num_sdma_engines 2\nnum_sdma_xgmi_engines 3\nnum_sdma_queues_per_engine 8\n"
		 "num_cp_queues 24\nmax_engine_clk_fcompute %d\nlocal_mem_size 0\n"
		 "fw_version 70\ncapability %u\ndebug_prop 0\nsdma_fw_version 8\n"
		 "unique_id 1234567890\nnum_xcc 1\nmax_engine_clk_ccompute 2000\n",
		 GPU_SE * GPU_CU_PER_SE * GPU_SIMD_PER_CU, GPU_SE, GPU_CU_PER_SE, GPU_SIMD_PER_CU,
		 GPU_GFX_VERSION, GPU_DEVICE_ID, GPU_LOCATION_ID, GPU_RENDER_MINOR, GPU_ENGINE_MHZ,
		 GPU_CAPABILITY);
	return put_node(nodes, GPU_NODE, GPU_ID, "gfx90a", props, 1, GPU_VRAM, 4096, GPU_MEM_MHZ,
			0);
}
