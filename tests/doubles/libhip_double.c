// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libhip_double: a test double of the HIP runtime (libamdhip64.so.5) that drives the emulated
 * GPU driver (tools/fakegpu.c) instead of an AMD GPU, so that gpuctx's uprobes on the HIP API
 * can be tested on a machine without one.
 *
 *   build/doubles/libamdhip64.so.5    SONAME libamdhip64.so.5, symbols versioned hip_4.2
 *                                     (tests/doubles/hip.map) like the real 5.2 library; use with
 *   LD_LIBRARY_PATH=build/doubles GPUCTX_FAKEGPU_DIR=/mnt/fakegpu ./program
 *
 * Prototypes come from /usr/include/hip/hip_runtime_api.h (-D__HIP_PLATFORM_AMD__). No exported
 * function calls another exported one, so one API call fires exactly one uprobe.
 *
 * What reaches the driver (device files under $GPUCTX_FAKEGPU_DIR, default /dev):
 *  - initialisation (hipInit, or implicitly the first call that needs the GPU, as the real
 *    runtime does): open kfd (O_RDWR|O_CLOEXEC), AMDKFD_IOC_GET_VERSION, open renderD128 (then
 *    dri/renderD128) O_RDWR|O_CLOEXEC, AMDKFD_IOC_ACQUIRE_VM(render fd, gpu_id) (gpu-facts 2.1).
 *    Missing files: hipErrorInvalidDevice (101), and hipGetDeviceCount hipErrorNoDevice (100),
 *    the codes the real runtime gives without a GPU (gpu-facts 4.2).
 *  - a context (the device's primary context, created on first use, or hipCtxCreate):
 *    AMDKFD_IOC_CREATE_QUEUE, then DRM_IOCTL_AMDGPU_CTX(ALLOC_CTX) on the render node. Destroying
 *    it (hipCtxDestroy, hipDeviceReset) frees its memory, then DESTROY_QUEUE, then FREE_CTX.
 *    hipDevicePrimaryCtxRelease only drops the retain count: the primary context lives until
 *    hipDeviceReset or exit, as in the real runtime.
 *  - hipMalloc / hipMallocManaged: AMDKFD_IOC_ALLOC_MEMORY_OF_GPU (VRAM resp. GTT) and
 *    MAP_MEMORY_TO_GPU; hipFree: UNMAP_MEMORY_FROM_GPU and FREE_MEMORY_OF_GPU.
 *  - launches only count: no ioctl.
 *
 * Fork, as Debian's real HIP runtime 5.2 does it (measured over the emulated driver,
 * tests/realdriver/fork_compare.sh, docs/gpu-validation.md): the child answers from the state
 * it inherited and issues no ioctl and no open; libhsakmt, which marks itself forked in a
 * pthread_atfork handler, refuses new device memory in user space. The double, once its
 * pthread_atfork child handler has seen an initialised parent:
 *  - hipInit, hipGetDeviceCount, hipSetDevice, hipGetDevice, hipCtxSet/Get/Push/Pop,
 *    hipDevicePrimaryCtxRelease, hipDriverGetVersion, hipGetErrorName: hipSuccess from the
 *    inherited state;
 *  - hipMalloc / hipMallocManaged: hipErrorOutOfMemory (2), as the real child's (the real one
 *    can still carve a small block from a parent's partly used 2 MiB one: not modelled);
 *  - what would need a new queue or the kernel (hipCtxCreate, hipDevicePrimaryCtxRetain of a
 *    context without a queue, hipCtxDestroy, hipDeviceReset): hipErrorInvalidContext (201);
 *    hipFree: hipErrorInvalidValue (1); launches: hipErrorLaunchFailure (719). The real
 *    runtime's codes there were not seen (it waits for a GPU in those calls over fakegpu).
 * None of them reaches the driver. A child forked before initialisation is an ordinary process.
 *
 * Set GPUCTX_DOUBLE_LOG=1 to log each call to stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#define GPU_UAPI_NO_HELPERS

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gpu_uapi.h"

#ifndef KFD_IOC_ALLOC_MEM_FLAGS_VRAM
#define KFD_IOC_ALLOC_MEM_FLAGS_VRAM (1 << 0)
#endif
#ifndef KFD_IOC_QUEUE_TYPE_COMPUTE
#define KFD_IOC_QUEUE_TYPE_COMPUTE 0x0
#endif

#define DBL_NDEV	1
#define DBL_STACK_DEPTH 64
#define DBL_VA_BASE	0x7e0000000000ULL
#define DBL_VA_ALIGN	(2ULL << 20)
#define DBL_RING_BASE	0x7d0000000000ULL     /* queue ring buffers, 64 KiB apart */
#define DBL_CTX_MAGIC	0x6874786470696864ULL /* "dhipdxth" */

struct dbl_mem {
	__u64 va;
	size_t size;
	__u64 handle; /* KFD buffer handle */
	struct dbl_mem *next;
};

struct ihipCtx_t {
	__u64 magic;
	int dev;
	bool primary;
	bool active;	   /* queue and amdgpu context exist */
	unsigned int refs; /* primary: hipDevicePrimaryCtxRetain count */
	__u32 queue_id;
	__u32 amdgpu_ctx;
	struct dbl_mem *mem;
	unsigned long launches;
	struct ihipCtx_t *next; /* live hipCtxCreate contexts */
};

static struct {
	pthread_mutex_t lock;
	bool inited;
	bool forked; /* a child forked after a successful initialisation */
	int kfd_fd, drm_fd;
	__u32 gpu_id;
	struct ihipCtx_t primary[DBL_NDEV];
	struct ihipCtx_t *ctxs;
	__u64 next_va;
	__u64 next_ring;
	unsigned long launches;
	int log;
} G = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .kfd_fd = -1,
    .drm_fd = -1,
    .next_va = DBL_VA_BASE,
    .next_ring = DBL_RING_BASE,
};

static __thread struct {
	int dev;
	hipCtx_t stack[DBL_STACK_DEPTH];
	int depth;
} T;

static __attribute__((format(printf, 1, 2))) void dlog(const char *fmt, ...)
{
	va_list ap;

	if (G.log <= 0)
		return;
	fprintf(stderr, "[libhip-double pid %d] ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static hipError_t ret_log(const char *fn, hipError_t r)
{
	dlog("%s -> %d", fn, (int)r);
	return r;
}
#define RET(r) return ret_log(__func__, (r))

/* ---- fork ---- */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&G.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&G.lock);
}

static void atfork_child(void)
{
	pthread_mutex_init(&G.lock, NULL);
	if (G.inited)
		G.forked =
		    true; /* state (and fds) inherited, no re-initialisation: gpu-facts 2.5 */
}

static __attribute__((constructor)) void dbl_init(void)
{
	const char *v = getenv("GPUCTX_DOUBLE_LOG");

	int i;

	G.log = v && *v && strcmp(v, "0") ? 1 : 0;
	for (i = 0; i < DBL_NDEV; i++) {
		G.primary[i].magic = DBL_CTX_MAGIC;
		G.primary[i].dev = i;
		G.primary[i].primary = true;
	}
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static __attribute__((destructor)) void dbl_fini(void)
{
	if (G.inited && !G.forked)
		dlog("exit: %lu launches counted", G.launches);
}

/* ---- emulated-driver calls ---- */

static const char *dev_dir(void)
{
	const char *d = getenv("GPUCTX_FAKEGPU_DIR");

	return d && *d ? d : "/dev";
}

static int dev_open(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dev_dir(), name);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* ioctl() retried on EINTR; 0 or -errno. */
static int xioctl(int fd, unsigned long cmd, void *arg, const char *what)
{
	int r;

	do {
		r = ioctl(fd, cmd, arg);
	} while (r < 0 && errno == EINTR);
	r = r < 0 ? -errno : 0;
	dlog("  %s on fd %d -> %d%s%s", what, fd, r, r ? " " : "", r ? strerror(-r) : "");
	return r;
}

static void close_fds(void)
{
	if (G.drm_fd >= 0)
		close(G.drm_fd);
	if (G.kfd_fd >= 0)
		close(G.kfd_fd);
	G.kfd_fd = G.drm_fd = -1;
}

static hipError_t driver_open(void)
{
	struct kfd_ioctl_get_version_args ver = {0};
	struct kfd_ioctl_acquire_vm_args vm;

	G.kfd_fd = dev_open("kfd");
	if (G.kfd_fd < 0)
		return hipErrorInvalidDevice;
	if (xioctl(G.kfd_fd, AMDKFD_IOC_GET_VERSION, &ver, "KFD GET_VERSION"))
		goto fail;
	G.drm_fd = dev_open("renderD128");
	if (G.drm_fd < 0)
		G.drm_fd = dev_open("dri/renderD128");
	if (G.drm_fd < 0)
		goto fail;
	G.gpu_id = FAKEGPU_KFD_GPU_ID;
	vm.drm_fd = (__u32)G.drm_fd;
	vm.gpu_id = G.gpu_id;
	if (xioctl(G.kfd_fd, AMDKFD_IOC_ACQUIRE_VM, &vm, "KFD ACQUIRE_VM"))
		goto fail;
	dlog("  KFD %u.%u, gpu_id 0x%x", ver.major_version, ver.minor_version, G.gpu_id);
	return hipSuccess;
fail:
	close_fds();
	return hipErrorInvalidDevice;
}

/* The runtime initialises itself on first use; in a forked child the state is inherited. */
static hipError_t ensure_init(void)
{
	hipError_t r = hipSuccess;

	if (G.inited)
		return hipSuccess;
	pthread_mutex_lock(&G.lock);
	if (!G.inited) {
		r = driver_open();
		if (!r)
			G.inited = true;
	}
	pthread_mutex_unlock(&G.lock);
	return r;
}

/* ---- contexts (under G.lock) ---- */

static bool ctx_valid(hipCtx_t c)
{
	struct ihipCtx_t *it;
	int i;

	if (!c)
		return false;
	for (i = 0; i < DBL_NDEV; i++)
		if (c == &G.primary[i])
			return true; /* a device's context always exists as a handle */
	for (it = G.ctxs; it; it = it->next)
		if (it == c)
			return c->magic == DBL_CTX_MAGIC;
	return false;
}

/* CREATE_QUEUE, then the amdgpu context; in a forked child neither. */
static hipError_t ctx_hw_create(struct ihipCtx_t *c)
{
	struct kfd_ioctl_create_queue_args q;
	union amdgpu_ctx_args a;
	struct kfd_ioctl_destroy_queue_args d;

	if (G.forked)
		return hipErrorInvalidContext; /* libhsakmt refuses in user space */
	memset(&q, 0, sizeof(q));
	q.ring_base_address = G.next_ring; /* never dereferenced by the emulated driver */
	q.ring_size = 4096;
	q.gpu_id = G.gpu_id;
	q.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE;
	q.queue_percentage = KFD_MAX_QUEUE_PERCENTAGE;
	q.queue_priority = 7;
	if (xioctl(G.kfd_fd, AMDKFD_IOC_CREATE_QUEUE, &q, "KFD CREATE_QUEUE"))
		return hipErrorInvalidContext;
	memset(&a, 0, sizeof(a));
	a.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
	a.in.priority = AMDGPU_CTX_PRIORITY_NORMAL;
	if (xioctl(G.drm_fd, AMDGPU_IOCTL_CTX, &a, "AMDGPU_CTX ALLOC_CTX")) {
		d.queue_id = q.queue_id;
		d.pad = 0;
		xioctl(G.kfd_fd, AMDKFD_IOC_DESTROY_QUEUE, &d, "KFD DESTROY_QUEUE");
		return hipErrorInvalidContext;
	}
	G.next_ring += 64 << 10;
	c->queue_id = q.queue_id;
	c->amdgpu_ctx = a.out.alloc.ctx_id;
	c->active = true;
	dlog("  context %p: queue %u, amdgpu ctx %u", (void *)c, c->queue_id, c->amdgpu_ctx);
	return hipSuccess;
}

static int mem_release(struct dbl_mem *m)
{
	struct kfd_ioctl_unmap_memory_from_gpu_args um;
	struct kfd_ioctl_free_memory_of_gpu_args fr;
	__u32 gpu = G.gpu_id;
	int r;

	memset(&um, 0, sizeof(um));
	um.handle = m->handle;
	um.device_ids_array_ptr = (__u64)(uintptr_t)&gpu;
	um.n_devices = 1;
	r = xioctl(G.kfd_fd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &um, "KFD UNMAP_MEMORY_FROM_GPU");
	if (r == -EBADF)
		return r;
	fr.handle = m->handle;
	return xioctl(G.kfd_fd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &fr, "KFD FREE_MEMORY_OF_GPU");
}

/* Free memory, DESTROY_QUEUE, FREE_CTX; nothing in a forked child. */
static hipError_t ctx_hw_destroy(struct ihipCtx_t *c)
{
	struct kfd_ioctl_destroy_queue_args d = {.queue_id = c->queue_id};
	union amdgpu_ctx_args a;
	struct dbl_mem *m;

	if (G.forked)
		return hipErrorInvalidContext;
	while ((m = c->mem)) {
		if (mem_release(m) == -EBADF)
			return hipErrorInvalidContext;
		c->mem = m->next;
		free(m);
	}
	if (!c->active)
		return hipSuccess;
	if (xioctl(G.kfd_fd, AMDKFD_IOC_DESTROY_QUEUE, &d, "KFD DESTROY_QUEUE") == -EBADF)
		return hipErrorInvalidContext;
	memset(&a, 0, sizeof(a));
	a.in.op = AMDGPU_CTX_OP_FREE_CTX;
	a.in.ctx_id = c->amdgpu_ctx;
	xioctl(G.drm_fd, AMDGPU_IOCTL_CTX, &a, "AMDGPU_CTX FREE_CTX");
	c->active = false;
	return hipSuccess;
}

static void stack_forget(hipCtx_t c)
{
	int i, j = 0;

	for (i = 0; i < T.depth; i++)
		if (T.stack[i] != c)
			T.stack[j++] = T.stack[i];
	T.depth = j;
}

/*
 * The context GPU work goes to: the top of the thread's stack, else the current device's
 * primary context. @activate: create its queue if it has none yet.
 */
static hipError_t work_ctx(struct ihipCtx_t **out, bool activate)
{
	struct ihipCtx_t *c = T.depth ? T.stack[T.depth - 1] : &G.primary[T.dev];
	hipError_t r = hipSuccess;

	pthread_mutex_lock(&G.lock);
	if (!ctx_valid(c)) {
		r = hipErrorInvalidContext;
	} else if (!c->active && activate) {
		r = ctx_hw_create(c);
	}
	pthread_mutex_unlock(&G.lock);
	if (!r)
		*out = c;
	return r;
}

/* ---- exported API ---- */

hipError_t hipInit(unsigned int flags)
{
	dlog("hipInit(%u)", flags);
	if (flags)
		RET(hipErrorInvalidValue);
	RET(ensure_init());
}

hipError_t hipDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		RET(hipErrorInvalidValue);
	*driverVersion = HIP_VERSION;
	RET(hipSuccess);
}

hipError_t hipGetDeviceCount(int *count)
{
	if (!count)
		RET(hipErrorInvalidValue);
	if (ensure_init()) {
		*count = 0;
		RET(hipErrorNoDevice);
	}
	*count = DBL_NDEV;
	RET(hipSuccess);
}

hipError_t hipSetDevice(int deviceId)
{
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (deviceId < 0 || deviceId >= DBL_NDEV)
		RET(hipErrorInvalidDevice);
	T.dev = deviceId;
	RET(hipSuccess);
}

hipError_t hipGetDevice(int *deviceId)
{
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (!deviceId)
		RET(hipErrorInvalidValue);
	*deviceId = T.dev;
	RET(hipSuccess);
}

hipError_t hipDevicePrimaryCtxRetain(hipCtx_t *pctx, hipDevice_t dev)
{
	struct ihipCtx_t *c;
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (!pctx)
		RET(hipErrorInvalidValue);
	if (dev < 0 || dev >= DBL_NDEV)
		RET(hipErrorInvalidDevice);
	c = &G.primary[dev];
	pthread_mutex_lock(&G.lock);
	if (!c->active)
		r = ctx_hw_create(c);
	if (!r)
		c->refs++;
	pthread_mutex_unlock(&G.lock);
	if (!r)
		*pctx = c;
	RET(r);
}

hipError_t hipDevicePrimaryCtxRelease(hipDevice_t dev)
{
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (dev < 0 || dev >= DBL_NDEV)
		RET(hipErrorInvalidDevice);
	pthread_mutex_lock(&G.lock);
	if (G.primary[dev].refs)
		G.primary[dev].refs--;
	pthread_mutex_unlock(&G.lock);
	RET(hipSuccess);
}

hipError_t hipCtxCreate(hipCtx_t *ctx, unsigned int flags, hipDevice_t device)
{
	struct ihipCtx_t *c;
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (!ctx)
		RET(hipErrorInvalidValue);
	if (device < 0 || device >= DBL_NDEV)
		RET(hipErrorInvalidDevice);
	if (T.depth == DBL_STACK_DEPTH)
		RET(hipErrorOutOfMemory);
	c = calloc(1, sizeof(*c));
	if (!c)
		RET(hipErrorOutOfMemory);
	c->magic = DBL_CTX_MAGIC;
	c->dev = device;
	pthread_mutex_lock(&G.lock);
	r = ctx_hw_create(c);
	if (r) {
		pthread_mutex_unlock(&G.lock);
		free(c);
		RET(r);
	}
	c->next = G.ctxs;
	G.ctxs = c;
	pthread_mutex_unlock(&G.lock);
	T.stack[T.depth++] = c; /* the new context becomes current */
	*ctx = c;
	RET(hipSuccess);
}

hipError_t hipCtxDestroy(hipCtx_t ctx)
{
	struct ihipCtx_t **pp;
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	pthread_mutex_lock(&G.lock);
	if (!ctx_valid(ctx) || ctx->primary) {
		pthread_mutex_unlock(&G.lock);
		RET(hipErrorInvalidContext);
	}
	r = ctx_hw_destroy(ctx);
	if (r) {
		pthread_mutex_unlock(&G.lock);
		RET(r);
	}
	for (pp = &G.ctxs; *pp; pp = &(*pp)->next) {
		if (*pp == ctx) {
			*pp = ctx->next;
			break;
		}
	}
	ctx->magic = 0;
	pthread_mutex_unlock(&G.lock);
	stack_forget(ctx);
	free(ctx);
	RET(hipSuccess);
}

hipError_t hipCtxSetCurrent(hipCtx_t ctx)
{
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (!ctx) {
		if (T.depth)
			T.depth--;
		RET(hipSuccess);
	}
	pthread_mutex_lock(&G.lock);
	r = ctx_valid(ctx) ? hipSuccess : hipErrorInvalidContext;
	pthread_mutex_unlock(&G.lock);
	if (r)
		RET(r);
	if (T.depth)
		T.stack[T.depth - 1] = ctx;
	else
		T.stack[T.depth++] = ctx;
	T.dev = ctx->dev;
	RET(hipSuccess);
}

hipError_t hipCtxGetCurrent(hipCtx_t *ctx)
{
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (!ctx)
		RET(hipErrorInvalidValue);
	*ctx = T.depth ? T.stack[T.depth - 1] : &G.primary[T.dev];
	RET(hipSuccess);
}

hipError_t hipCtxPushCurrent(hipCtx_t ctx)
{
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	pthread_mutex_lock(&G.lock);
	r = ctx_valid(ctx) ? hipSuccess : hipErrorInvalidContext;
	pthread_mutex_unlock(&G.lock);
	if (r)
		RET(r);
	if (T.depth == DBL_STACK_DEPTH)
		RET(hipErrorOutOfMemory);
	T.stack[T.depth++] = ctx;
	T.dev = ctx->dev;
	RET(hipSuccess);
}

hipError_t hipCtxPopCurrent(hipCtx_t *ctx)
{
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	if (!T.depth)
		RET(hipErrorInvalidContext);
	T.depth--;
	if (ctx)
		*ctx = T.stack[T.depth];
	RET(hipSuccess);
}

static hipError_t mem_alloc(void **ptr, size_t size, bool managed)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args al;
	struct kfd_ioctl_map_memory_to_gpu_args mp;
	struct kfd_ioctl_free_memory_of_gpu_args fr;
	struct ihipCtx_t *c;
	struct dbl_mem *m;
	__u32 gpu = G.gpu_id;
	__u64 span;
	hipError_t r = ensure_init();

	if (r)
		return r;
	if (!ptr)
		return hipErrorInvalidValue;
	if (!size) {
		*ptr = NULL;
		return hipSuccess;
	}
	if (G.forked)
		return hipErrorOutOfMemory; /* libhsakmt refuses new memory, no ioctl */
	r = work_ctx(&c, true);
	if (r)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m)
		return hipErrorOutOfMemory;
	span = (size + DBL_VA_ALIGN - 1) & ~(DBL_VA_ALIGN - 1);
	pthread_mutex_lock(&G.lock);
	memset(&al, 0, sizeof(al));
	al.va_addr = G.next_va;
	al.size = size;
	al.gpu_id = G.gpu_id;
	al.flags = (managed ? KFD_IOC_ALLOC_MEM_FLAGS_GTT : KFD_IOC_ALLOC_MEM_FLAGS_VRAM) |
		   KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	if (xioctl(G.kfd_fd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &al, "KFD ALLOC_MEMORY_OF_GPU"))
		goto fail;
	memset(&mp, 0, sizeof(mp));
	mp.handle = al.handle;
	mp.device_ids_array_ptr = (__u64)(uintptr_t)&gpu;
	mp.n_devices = 1;
	if (xioctl(G.kfd_fd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mp, "KFD MAP_MEMORY_TO_GPU")) {
		fr.handle = al.handle;
		xioctl(G.kfd_fd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &fr, "KFD FREE_MEMORY_OF_GPU");
		goto fail;
	}
	m->va = G.next_va;
	m->size = size;
	m->handle = al.handle;
	G.next_va += span;
	m->next = c->mem;
	c->mem = m;
	pthread_mutex_unlock(&G.lock);
	*ptr = (void *)(uintptr_t)m->va;
	return hipSuccess;
fail:
	pthread_mutex_unlock(&G.lock);
	free(m);
	return hipErrorOutOfMemory;
}

hipError_t hipMalloc(void **ptr, size_t size)
{
	RET(mem_alloc(ptr, size, false));
}

hipError_t hipMallocManaged(void **dev_ptr, size_t size, unsigned int flags)
{
	RET(mem_alloc(dev_ptr, size, true));
}

/* hipFree's work on one context: 1 freed, 0 not found there, -EBADF refused by the driver. */
static int ctx_mem_free(struct ihipCtx_t *c, __u64 va)
{
	struct dbl_mem **pp, *m;

	for (pp = &c->mem; *pp; pp = &(*pp)->next) {
		if ((*pp)->va != va)
			continue;
		m = *pp;
		if (mem_release(m) == -EBADF)
			return -EBADF;
		*pp = m->next;
		free(m);
		return 1;
	}
	return 0;
}

hipError_t hipFree(void *ptr)
{
	struct ihipCtx_t *c;
	hipError_t r = ensure_init();
	int i, found = 0;

	if (r)
		RET(r);
	if (!ptr)
		RET(hipSuccess);
	if (G.forked)
		RET(hipErrorInvalidValue);
	pthread_mutex_lock(&G.lock);
	for (i = 0; !found && i < DBL_NDEV; i++)
		found = ctx_mem_free(&G.primary[i], (__u64)(uintptr_t)ptr);
	for (c = G.ctxs; !found && c; c = c->next)
		found = ctx_mem_free(c, (__u64)(uintptr_t)ptr);
	pthread_mutex_unlock(&G.lock);
	RET(found == 1 ? hipSuccess : hipErrorInvalidValue);
}

hipError_t hipDeviceReset(void)
{
	struct ihipCtx_t *c;
	hipError_t r = ensure_init();

	if (r)
		RET(r);
	c = &G.primary[T.dev];
	pthread_mutex_lock(&G.lock);
	r = ctx_hw_destroy(c);
	if (!r)
		c->refs = 0;
	pthread_mutex_unlock(&G.lock);
	RET(r);
}

static hipError_t launch(const void *what, hipError_t invalid)
{
	struct ihipCtx_t *c;
	hipError_t r = ensure_init();

	if (r)
		return r;
	if (!what)
		return invalid;
	r = work_ctx(&c, true);
	if (r)
		return r;
	if (G.forked)
		return hipErrorLaunchFailure; /* no syscall: the queue mappings are gone */
	__atomic_fetch_add(&c->launches, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&G.launches, 1, __ATOMIC_RELAXED);
	return hipSuccess;
}

hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			   void **args, size_t sharedMemBytes, hipStream_t stream)
{
	return launch(function_address, hipErrorInvalidDeviceFunction);
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
				 unsigned int gridDimZ, unsigned int blockDimX,
				 unsigned int blockDimY, unsigned int blockDimZ,
				 unsigned int sharedMemBytes, hipStream_t stream,
				 void **kernelParams, void **extra)
{
	return launch(f, hipErrorInvalidResourceHandle);
}

const char *hipGetErrorName(hipError_t hip_error)
{
	switch (hip_error) {
	case hipSuccess:
		return "hipSuccess";
	case hipErrorInvalidValue:
		return "hipErrorInvalidValue";
	case hipErrorOutOfMemory:
		return "hipErrorOutOfMemory";
	case hipErrorNotInitialized:
		return "hipErrorNotInitialized";
	case hipErrorInvalidDeviceFunction:
		return "hipErrorInvalidDeviceFunction";
	case hipErrorNoDevice:
		return "hipErrorNoDevice";
	case hipErrorInvalidDevice:
		return "hipErrorInvalidDevice";
	case hipErrorInvalidContext:
		return "hipErrorInvalidContext";
	case hipErrorInvalidResourceHandle:
		return "hipErrorInvalidResourceHandle";
	case hipErrorLaunchFailure:
		return "hipErrorLaunchFailure";
	case hipErrorNotSupported:
		return "hipErrorNotSupported";
	default:
		return "hipErrorUnknown";
	}
}
