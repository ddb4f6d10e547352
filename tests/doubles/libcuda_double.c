// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuda_double: a test double of the CUDA driver library (libcuda.so.1) that drives the
 * emulated GPU driver (tools/fakegpu.c) instead of a GPU, so that gpuctx's uprobes on the CUDA
 * driver API can be tested on a machine without one.
 *
 *   build/doubles/libcuda.so.1        SONAME libcuda.so.1, built by the "API test doubles"
 *                                     section of the Makefile; use with
 *   LD_LIBRARY_PATH=build/doubles GPUCTX_FAKEGPU_DIR=/mnt/fakegpu ./program
 *
 * Every exported function has the prototype <cuda.h> (CUDA 13) gives it; the legacy names that
 * cuda.h hides behind macros (cuCtxCreate -> cuCtxCreate_v4, cuMemAlloc -> cuMemAlloc_v2, ...)
 * are exported as well, with the legacy prototypes cuda.h declares for them in its internal
 * section (the stub libcuda.so exports them too: `nm -D .../stubs/libcuda.so`).
 * No exported function calls another exported one, so one API call fires exactly one uprobe.
 *
 * What reaches the driver (device files under $GPUCTX_FAKEGPU_DIR, default /dev):
 *  - cuInit: open nvidiactl O_RDWR, then fcntl(F_SETFD, FD_CLOEXEC) (as libcuda 535 does);
 *    nvidia0 and nvidia-uvm O_RDWR|O_CLOEXEC; CHECK_VERSION_STR and CARD_INFO on nvidiactl;
 *    RM_ALLOC client, device (NV01_DEVICE_0) and subdevice; REGISTER_FD on nvidia0;
 *    UVM_INITIALIZE. Missing files: CUDA_ERROR_NO_DEVICE (100).
 *  - a context (primary, created or green): RM_ALLOC KEPLER_CHANNEL_GROUP_A under the device,
 *    FERMI_CONTEXT_SHARE_A and HOPPER_CHANNEL_GPFIFO_A under the channel group,
 *    HOPPER_COMPUTE_A under the channel (gpu-facts 1.4). Destroying it RM_FREEs its memory,
 *    then compute, channel, ctxshare and channel group.
 *  - cuMemAlloc*, cuMemAllocAsync, cuMemCreate: RM_ALLOC NV01_MEMORY_LOCAL_USER (vidmem) on
 *    nvidiactl; cuMemAllocManaged: RM_ALLOC_MEMORY (NVOS02) NV01_MEMORY_SYSTEM on nvidia0.
 *    Device pointers are 0x7f0000000000 + offset (legacy 32-bit API: 0x20000000 + offset).
 *    cuMemFree: RM_FREE of the memory object.
 *  - launches (cuLaunchKernel*, cuGraphLaunch*) only count: no ioctl.
 * The current context is per thread (a push/pop stack, as in the real driver).
 *
 * Fork, as the real libcuda 535 does it (measured over the emulated driver, tests/realdriver/
 * fork_compare.sh, docs/gpu-validation.md): a process whose pid is not the one that ran cuInit
 * is a forked child. There, every call but cuInit, cuDriverGetVersion, cuGetErrorName and
 * cuGetProcAddress(_v2) returns CUDA_ERROR_NOT_INITIALIZED (3) in user space, with no ioctl,
 * until the child calls cuInit. cuInit then initialises again over the inherited files: a new
 * RM client, device and subdevice on the parent's nvidiactl fd, UVM_PAGEABLE_MEM_ACCESS on the
 * parent's nvidia-uvm fd (neither is opened again), a new nvidia0 fd. The parent's contexts
 * are not the child's: after that cuInit they are unknown handles (CUDA_ERROR_INVALID_CONTEXT;
 * what the real driver answers there was not seen, it cannot make a context without a GPU).
 * A child forked before cuInit is an ordinary process.
 *
 * cuGetProcAddress(_v2) resolves names by version like the real one (cudaTypedefs.h) and
 * returns the exported function for every exported name, except two: "cuMemAlloc" at version
 * >= 3020 and "cuCtxSetCurrent" resolve to static, non-exported implementations
 * (cu_mem_alloc_internal, cu_ctx_set_current_internal). cudart 12/13 fetches every driver entry
 * point through cuGetProcAddress_v2 (gpu-facts 3.2), and whether the real driver hands out the
 * exported addresses is unverified (gpu-facts 6.1), so a tracer that only uprobes exported
 * symbols must miss those two calls here; gpuctx must follow the returned pointers.
 *
 * Set GPUCTX_DOUBLE_LOG=1 to log each call to stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define GPU_UAPI_NO_HELPERS

#include <cuda.h>

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

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) || defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "build the double with the legacy default stream: the _ptsz entry points are explicit"
#endif

/* ---- the legacy names cuda.h maps to versioned ones, with cuda.h's internal prototypes ---- */

#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuMemAlloc
#undef cuMemFree
#undef cuGetProcAddress

typedef unsigned int CUdeviceptr_v1;

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
				unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxDestroy(CUcontext ctx);
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx);
CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize);
CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags);

/* The per-thread-default-stream variants: same prototypes as the legacy-stream ones. */
__typeof__(cuLaunchKernel) cuLaunchKernel_ptsz;
__typeof__(cuLaunchKernelEx) cuLaunchKernelEx_ptsz;
__typeof__(cuGraphLaunch) cuGraphLaunch_ptsz;
__typeof__(cuMemAllocAsync) cuMemAllocAsync_ptsz;

/* ---- model ---- */

#ifndef NV01_MEMORY_LOCAL_USER
#define NV01_MEMORY_LOCAL_USER 0x40
#endif

#define DBL_MAX_DEVICES	 8
#define DBL_STACK_DEPTH	 64
#define DBL_DPTR_BASE	 0x7f0000000000ULL
#define DBL_DPTR_V1_BASE 0x20000000ULL
#define DBL_DPTR_ALIGN	 (2ULL << 20)
#define DBL_CTX_MAGIC	 0x63747864626c6375ULL /* "ucldbxtc" */

enum mem_kind { MEM_DEVICE, MEM_MANAGED, MEM_ASYNC, MEM_HANDLE, MEM_LEGACY };

struct dbl_mem {
	CUdeviceptr dptr; /* 0 for cuMemCreate handles */
	size_t size;
	__u32 handle; /* RM memory object */
	__u32 parent;
	bool on_dev_fd; /* allocated with RM_ALLOC_MEMORY on nvidia0 */
	struct dbl_mem *next;
};

struct CUctx_st {
	__u64 magic;
	int dev;
	bool primary;
	bool green;
	bool active;	   /* RM objects exist */
	unsigned int refs; /* primary: retain count */
	__u32 tsg, ctxshare, channel, compute;
	struct dbl_mem *mem;
	unsigned long launches;
	struct CUctx_st *next; /* live non-primary contexts */
};

static struct {
	pthread_mutex_t lock;
	bool inited;
	pid_t init_pid; /* the process that ran cuInit: any other one is a forked child */
	int ctl_fd, dev_fd, uvm_fd;
	__u32 client, device, subdevice;
	int ndev;
	struct CUctx_st primary[DBL_MAX_DEVICES];
	struct CUctx_st *ctxs;
	CUdeviceptr next_dptr, next_dptr_v1;
	unsigned long launches;
	int log;
} G = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .ctl_fd = -1,
    .dev_fd = -1,
    .uvm_fd = -1,
    .next_dptr = DBL_DPTR_BASE,
    .next_dptr_v1 = DBL_DPTR_V1_BASE,
};

/* The calling thread's context stack; the top is the current context. */
static __thread struct {
	CUcontext stack[DBL_STACK_DEPTH];
	int depth;
} T;

static __attribute__((format(printf, 1, 2))) void dlog(const char *fmt, ...)
{
	va_list ap;

	if (G.log <= 0)
		return;
	fprintf(stderr, "[libcuda-double pid %d] ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static CUresult ret_log(const char *fn, CUresult r)
{
	dlog("%s -> %d", fn, (int)r);
	return r;
}
#define RET(r) return ret_log(__func__, (r))

/* ---- fork handling ---- */

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
}

/* Initialised by another process: this one was forked from it (no exec). */
static bool forked(void)
{
	return G.inited && G.init_pid != getpid();
}

static __attribute__((constructor)) void dbl_init(void)
{
	const char *v = getenv("GPUCTX_DOUBLE_LOG");

	G.log = v && *v && strcmp(v, "0") ? 1 : 0;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* 0 when the driver may be used; else the error every call returns. No syscall. */
static CUresult state_check(void)
{
	if (!G.inited || forked())
		return CUDA_ERROR_NOT_INITIALIZED;
	return CUDA_SUCCESS;
}

/* ---- emulated-driver calls ---- */

static const char *dev_dir(void)
{
	const char *d = getenv("GPUCTX_FAKEGPU_DIR");

	return d && *d ? d : "/dev";
}

static int dev_open(const char *name, int flags)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dev_dir(), name);
	return open(path, O_RDWR | flags);
}

/* libcuda 535 opens nvidiactl without O_CLOEXEC and sets the flag just after. */
static int ctl_open(void)
{
	int fd = dev_open("nvidiactl", 0);

	if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int r;

	do {
		r = ioctl(fd, cmd, arg);
	} while (r < 0 && errno == EINTR);
	return r;
}

/* RM_ALLOC (NVOS64) on nvidiactl; returns the RM status, or NV_ERR_INVALID_STATE. */
static __u32 rm_alloc(__u32 parent, __u32 cls, __u32 *handle)
{
	struct nvos64_params p = {
	    .hRoot = cls == NV01_ROOT_CLIENT ? 0 : G.client,
	    .hObjectParent = cls == NV01_ROOT_CLIENT ? 0 : parent,
	    .hClass = cls,
	};

	if (xioctl(G.ctl_fd, NV_IOCTL_RM_ALLOC, &p) < 0)
		return NV_ERR_INVALID_STATE;
	dlog("  RM_ALLOC %s(0x%x) parent 0x%x -> 0x%x status 0x%x", nv_class_name(cls), cls, parent,
	     p.hObjectNew, p.status);
	if (p.status == NV_OK)
		*handle = p.hObjectNew;
	return p.status;
}

static __u32 rm_free(__u32 parent, __u32 handle)
{
	struct nvos00_params p = {.hRoot = G.client, .hObjectParent = parent, .hObjectOld = handle};

	if (!handle)
		return NV_OK;
	if (xioctl(G.ctl_fd, NV_IOCTL_RM_FREE, &p) < 0)
		return NV_ERR_INVALID_STATE;
	dlog("  RM_FREE 0x%x -> status 0x%x", handle, p.status);
	return p.status;
}

/* RM_ALLOC_MEMORY (NVOS02) on nvidia0: system memory the process could mmap through dev_fd. */
static __u32 rm_alloc_memory(__u32 cls, size_t size, __u32 *handle)
{
	struct nvos02_with_fd p = {
	    .hRoot = G.client,
	    .hObjectParent = G.device,
	    .hClass = cls,
	    .limit = size ? size - 1 : 0,
	    .fd = G.dev_fd,
	};

	if (xioctl(G.dev_fd, NV_IOCTL_RM_ALLOC_MEMORY, &p) < 0)
		return NV_ERR_INVALID_STATE;
	dlog("  RM_ALLOC_MEMORY class 0x%x size %zu -> 0x%x status 0x%x", cls, size, p.hObjectNew,
	     p.status);
	if (p.status == NV_OK)
		*handle = p.hObjectNew;
	return p.status;
}

static void close_fds(void)
{
	if (G.uvm_fd >= 0)
		close(G.uvm_fd);
	if (G.dev_fd >= 0)
		close(G.dev_fd);
	if (G.ctl_fd >= 0)
		close(G.ctl_fd);
	G.ctl_fd = G.dev_fd = G.uvm_fd = -1;
}

/* cuInit's driver work, under the lock. */
static CUresult driver_open(void)
{
	struct nv_rm_api_version ver = {.cmd = NV_RM_API_VERSION_CMD_RELAXED};
	struct nv_card_info cards[DBL_MAX_DEVICES];
	struct nv_register_fd reg;
	struct uvm_initialize_params uvm = {.flags = 0};
	int i;

	G.ctl_fd = ctl_open();
	if (G.ctl_fd < 0)
		return CUDA_ERROR_NO_DEVICE;
	strcpy(ver.versionString, "595.45.04");
	if (xioctl(G.ctl_fd, NV_IOCTL_CHECK_VERSION_STR, &ver) < 0 ||
	    ver.reply != NV_RM_API_VERSION_REPLY_RECOGNIZED)
		goto fail_sys;
	memset(cards, 0, sizeof(cards));
	if (xioctl(G.ctl_fd, _IOWR(NV_IOCTL_MAGIC, NV_ESC_CARD_INFO, cards), cards) < 0)
		goto fail_sys;
	G.ndev = 0;
	for (i = 0; i < DBL_MAX_DEVICES; i++)
		if (cards[i].valid)
			G.ndev++;
	if (!G.ndev)
		goto fail_nodev;
	if (rm_alloc(0, NV01_ROOT_CLIENT, &G.client) != NV_OK)
		goto fail_sys;
	if (rm_alloc(G.client, NV01_DEVICE_0, &G.device) != NV_OK ||
	    rm_alloc(G.device, NV20_SUBDEVICE_0, &G.subdevice) != NV_OK)
		goto fail_client;

	G.dev_fd = dev_open("nvidia0", O_CLOEXEC);
	if (G.dev_fd < 0)
		goto fail_client_nodev;
	reg.ctl_fd = G.ctl_fd;
	if (xioctl(G.dev_fd, NV_IOCTL_REGISTER_FD, &reg) < 0)
		goto fail_client;

	G.uvm_fd = dev_open("nvidia-uvm", O_CLOEXEC);
	if (G.uvm_fd < 0)
		goto fail_client_nodev;
	if (xioctl(G.uvm_fd, UVM_INITIALIZE, &uvm) < 0 || uvm.rmStatus != NV_OK)
		goto fail_client;
	return CUDA_SUCCESS;

fail_client_nodev:
	rm_free(0, G.client);
	G.client = 0;
fail_nodev:
	close_fds();
	return CUDA_ERROR_NO_DEVICE;
fail_client:
	rm_free(0, G.client);
	G.client = 0;
fail_sys:
	close_fds();
	return CUDA_ERROR_OPERATING_SYSTEM;
}

/* The parent's memory and contexts, forgotten in a forked child: their RM objects are not its. */
static void forget_parent_state(void)
{
	struct CUctx_st *c, *next;
	struct dbl_mem *m, *mn;
	int i;

	for (i = 0; i < DBL_MAX_DEVICES; i++) {
		for (m = G.primary[i].mem; m; m = mn) {
			mn = m->next;
			free(m);
		}
		memset(&G.primary[i], 0, sizeof(G.primary[i]));
	}
	for (c = G.ctxs; c; c = next) {
		next = c->next;
		for (m = c->mem; m; m = mn) {
			mn = m->next;
			free(m);
		}
		c->magic = 0;
		free(c);
	}
	G.ctxs = NULL;
	T.depth = 0;
}

/*
 * cuInit in a forked child, under the lock: what libcuda 535 does there (fork_compare.sh). A
 * new client on the inherited nvidiactl fd, the inherited nvidia-uvm fd asked again, a new
 * nvidia0 fd; the parent's nvidia0 fd stays open, unused.
 */
static CUresult driver_reinit_child(void)
{
	struct {
		__u8 pageableMemAccess;
		__u32 rmStatus;
	} pma = {0};
	struct nv_register_fd reg;
	int fd;

	forget_parent_state();
	G.client = G.device = G.subdevice = 0;
	if (rm_alloc(0, NV01_ROOT_CLIENT, &G.client) != NV_OK ||
	    rm_alloc(G.client, NV01_DEVICE_0, &G.device) != NV_OK ||
	    rm_alloc(G.device, NV20_SUBDEVICE_0, &G.subdevice) != NV_OK)
		return CUDA_ERROR_OPERATING_SYSTEM;
	if (xioctl(G.uvm_fd, UVM_PAGEABLE_MEM_ACCESS, &pma) < 0 || pma.rmStatus != NV_OK)
		return CUDA_ERROR_OPERATING_SYSTEM;
	fd = dev_open("nvidia0", O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_NO_DEVICE;
	reg.ctl_fd = G.ctl_fd;
	if (xioctl(fd, NV_IOCTL_REGISTER_FD, &reg) < 0) {
		close(fd);
		return CUDA_ERROR_OPERATING_SYSTEM;
	}
	G.dev_fd = fd;
	G.init_pid = getpid();
	return CUDA_SUCCESS;
}

/* ---- contexts ---- */

static bool ctx_valid(CUcontext c)
{
	struct CUctx_st *it;
	int i;

	if (!c)
		return false;
	for (i = 0; i < DBL_MAX_DEVICES; i++)
		if (c == &G.primary[i])
			return c->active;
	for (it = G.ctxs; it; it = it->next)
		if (it == c)
			return c->magic == DBL_CTX_MAGIC;
	return false;
}

static CUresult ctx_rm_create(struct CUctx_st *c)
{
	c->tsg = c->ctxshare = c->channel = c->compute = 0;
	if (rm_alloc(G.device, KEPLER_CHANNEL_GROUP_A, &c->tsg) != NV_OK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (rm_alloc(c->tsg, FERMI_CONTEXT_SHARE_A, &c->ctxshare) != NV_OK ||
	    rm_alloc(c->tsg, HOPPER_CHANNEL_GPFIFO_A, &c->channel) != NV_OK ||
	    rm_alloc(c->channel, HOPPER_COMPUTE_A, &c->compute) != NV_OK) {
		rm_free(G.device, c->tsg);
		c->tsg = c->ctxshare = c->channel = c->compute = 0;
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c->active = true;
	return CUDA_SUCCESS;
}

static void mem_release(struct dbl_mem *m)
{
	rm_free(m->parent, m->handle);
	free(m);
}

static void ctx_rm_destroy(struct CUctx_st *c)
{
	struct dbl_mem *m, *next;

	for (m = c->mem; m; m = next) {
		next = m->next;
		mem_release(m);
	}
	c->mem = NULL;
	rm_free(c->channel, c->compute);
	rm_free(c->tsg, c->channel);
	rm_free(c->tsg, c->ctxshare);
	rm_free(G.device, c->tsg);
	c->tsg = c->ctxshare = c->channel = c->compute = 0;
	c->active = false;
}

/* Drop @c from every level of the calling thread's stack. */
static void stack_forget(CUcontext c)
{
	int i, j = 0;

	for (i = 0; i < T.depth; i++)
		if (T.stack[i] != c)
			T.stack[j++] = T.stack[i];
	T.depth = j;
}

static CUresult stack_push(CUcontext c)
{
	if (T.depth == DBL_STACK_DEPTH)
		return CUDA_ERROR_OUT_OF_MEMORY;
	T.stack[T.depth++] = c;
	return CUDA_SUCCESS;
}

static CUcontext current(void)
{
	return T.depth ? T.stack[T.depth - 1] : NULL;
}

/* The current context if it is usable, for calls that need one. */
static CUresult current_ctx(struct CUctx_st **out)
{
	CUcontext c = current();

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_valid(c))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*out = c;
	return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pctx, CUdevice dev, bool green, const char *how)
{
	struct CUctx_st *c;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = state_check();
	if (r)
		return r;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->magic = DBL_CTX_MAGIC;
	c->dev = dev;
	c->green = green;
	pthread_mutex_lock(&G.lock);
	r = ctx_rm_create(c);
	if (!r && !green)
		r = stack_push(c); /* cuCtxCreate makes the new context current */
	if (r) {
		if (c->active)
			ctx_rm_destroy(c);
		pthread_mutex_unlock(&G.lock);
		free(c);
		return r;
	}
	c->next = G.ctxs;
	G.ctxs = c;
	pthread_mutex_unlock(&G.lock);
	dlog("%s: context %p (tsg 0x%x channel 0x%x)", how, (void *)c, c->tsg, c->channel);
	*pctx = c;
	return CUDA_SUCCESS;
}

static CUresult ctx_destroy(CUcontext ctx, bool green)
{
	struct CUctx_st **pp;
	CUresult r = state_check();

	if (r)
		return r;
	pthread_mutex_lock(&G.lock);
	if (!ctx_valid(ctx) || ctx->primary || ctx->green != green) {
		pthread_mutex_unlock(&G.lock);
		return green ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_CONTEXT;
	}
	for (pp = &G.ctxs; *pp; pp = &(*pp)->next) {
		if (*pp == ctx) {
			*pp = ctx->next;
			break;
		}
	}
	ctx_rm_destroy(ctx);
	ctx->magic = 0;
	pthread_mutex_unlock(&G.lock);
	stack_forget(ctx);
	free(ctx);
	return CUDA_SUCCESS;
}

static CUresult primary_retain(CUcontext *pctx, CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = &G.primary[dev];
	pthread_mutex_lock(&G.lock);
	if (!c->active) {
		c->magic = DBL_CTX_MAGIC;
		c->dev = dev;
		c->primary = true;
		r = ctx_rm_create(c);
	}
	if (!r)
		c->refs++;
	pthread_mutex_unlock(&G.lock);
	if (!r)
		*pctx = c;
	return r;
}

static CUresult primary_release(CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = &G.primary[dev];
	pthread_mutex_lock(&G.lock);
	if (!c->active || !c->refs) {
		pthread_mutex_unlock(&G.lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (--c->refs == 0)
		ctx_rm_destroy(c);
	pthread_mutex_unlock(&G.lock);
	return CUDA_SUCCESS;
}

/* Reset: the primary context's memory and RM objects go away, the retain count with them. */
static CUresult primary_reset(CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (dev < 0 || dev >= G.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	c = &G.primary[dev];
	pthread_mutex_lock(&G.lock);
	if (c->active)
		ctx_rm_destroy(c);
	c->refs = 0;
	pthread_mutex_unlock(&G.lock);
	return CUDA_SUCCESS;
}

/* ---- memory ---- */

static CUresult mem_alloc(struct CUctx_st *c, enum mem_kind kind, size_t size, CUdeviceptr *dptr,
			  __u32 *handle_out)
{
	struct dbl_mem *m;
	CUdeviceptr *next;
	__u64 span;
	__u32 st;

	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	span = (size + DBL_DPTR_ALIGN - 1) & ~(DBL_DPTR_ALIGN - 1);
	next = kind == MEM_LEGACY ? &G.next_dptr_v1 : &G.next_dptr;
	pthread_mutex_lock(&G.lock);
	if (!ctx_valid(c)) {
		pthread_mutex_unlock(&G.lock);
		free(m);
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	}
	if (kind == MEM_LEGACY && *next + span > 0xffffffffULL) {
		pthread_mutex_unlock(&G.lock);
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (kind == MEM_MANAGED) {
		st = rm_alloc_memory(NV01_MEMORY_SYSTEM, size, &m->handle);
		m->on_dev_fd = true;
	} else {
		st = rm_alloc(G.device, NV01_MEMORY_LOCAL_USER, &m->handle);
	}
	if (st != NV_OK) {
		pthread_mutex_unlock(&G.lock);
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->parent = G.device;
	m->size = size;
	if (kind != MEM_HANDLE) {
		m->dptr = *next;
		*next += span;
	}
	m->next = c->mem;
	c->mem = m;
	pthread_mutex_unlock(&G.lock);
	if (dptr)
		*dptr = m->dptr;
	if (handle_out)
		*handle_out = m->handle;
	return CUDA_SUCCESS;
}

/* Unlink and free the allocation at @dptr if @c owns it. */
static bool ctx_mem_free(struct CUctx_st *c, CUdeviceptr dptr)
{
	struct dbl_mem **pp, *m;

	for (pp = &c->mem; *pp; pp = &(*pp)->next) {
		if ((*pp)->dptr == dptr) {
			m = *pp;
			*pp = m->next;
			mem_release(m);
			return true;
		}
	}
	return false;
}

static CUresult mem_free(CUdeviceptr dptr)
{
	struct CUctx_st *c;
	bool found = false;
	int i;

	if (!dptr)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&G.lock);
	for (i = 0; !found && i < DBL_MAX_DEVICES; i++)
		found = ctx_mem_free(&G.primary[i], dptr);
	for (c = G.ctxs; !found && c; c = c->next)
		found = ctx_mem_free(c, dptr);
	pthread_mutex_unlock(&G.lock);
	return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The common front of every allocation entry point. */
static CUresult mem_alloc_api(enum mem_kind kind, size_t size, CUdeviceptr *dptr, __u32 *h)
{
	struct CUctx_st *c;
	CUresult r;

	r = state_check();
	if (r)
		return r;
	if (!dptr && !h)
		return CUDA_ERROR_INVALID_VALUE;
	r = current_ctx(&c);
	if (r)
		return r;
	return mem_alloc(c, kind, size, dptr, h);
}

/* ---- launches ---- */

static CUresult launch(const void *what)
{
	struct CUctx_st *c;
	CUresult r = state_check();

	if (r)
		return r;
	if (!what)
		return CUDA_ERROR_INVALID_HANDLE;
	r = current_ctx(&c);
	if (r)
		return r;
	__atomic_fetch_add(&c->launches, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&G.launches, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

static __attribute__((destructor)) void dbl_fini(void)
{
	if (G.inited && !forked())
		dlog("exit: %lu launches counted", G.launches);
}

/* ======================= exported API ======================= */

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	static const struct {
		CUresult code;
		const char *name;
	} names[] = {
	    {CUDA_SUCCESS, "CUDA_SUCCESS"},
	    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
	    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
	    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
	    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED"},
	    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY"},
	    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
	    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
	    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
	    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
	    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM"},
	    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
	    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
	    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
	    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
	};
	size_t i;

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].code == error) {
			*pStr = names[i].name;
			return CUDA_SUCCESS;
		}
	}
	*pStr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
	CUresult r;

	dlog("cuInit(%u)", Flags);
	if (Flags)
		RET(CUDA_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&G.lock);
	if (forked()) {
		r = driver_reinit_child();
		pthread_mutex_unlock(&G.lock);
		RET(r);
	}
	if (G.inited) {
		pthread_mutex_unlock(&G.lock);
		RET(CUDA_SUCCESS);
	}
	r = driver_open();
	if (!r) {
		G.inited = true;
		G.init_pid = getpid();
	}
	pthread_mutex_unlock(&G.lock);
	RET(r);
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = CUDA_VERSION;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r = state_check();

	if (r)
		RET(r);
	if (!device)
		RET(CUDA_ERROR_INVALID_VALUE);
	if (ordinal < 0 || ordinal >= G.ndev)
		RET(CUDA_ERROR_INVALID_DEVICE);
	*device = ordinal;
	RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	CUresult r = state_check();

	if (r)
		RET(r);
	if (!count)
		RET(CUDA_ERROR_INVALID_VALUE);
	*count = G.ndev;
	RET(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	RET(primary_retain(pctx, dev));
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	RET(primary_release(dev));
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	RET(primary_release(dev));
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
	RET(primary_reset(dev));
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	RET(primary_reset(dev));
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	RET(ctx_create(pctx, dev, false, "cuCtxCreate"));
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	RET(ctx_create(pctx, dev, false, "cuCtxCreate_v2"));
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
				unsigned int flags, CUdevice dev)
{
	if (numParams < 0 || (numParams && !paramsArray))
		RET(CUDA_ERROR_INVALID_VALUE);
	RET(ctx_create(pctx, dev, false, "cuCtxCreate_v3"));
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
				unsigned int flags, CUdevice dev)
{
	RET(ctx_create(pctx, dev, false, "cuCtxCreate_v4"));
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
	RET(ctx_destroy(ctx, false));
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	RET(ctx_destroy(ctx, false));
}

/* The exported cuCtxSetCurrent. */
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	CUresult r = state_check();

	if (r)
		RET(r); /* a forked child using the parent's context before cuInit: 3 */
	if (!ctx) {
		if (T.depth)
			T.depth--;
		RET(CUDA_SUCCESS);
	}
	pthread_mutex_lock(&G.lock);
	r = ctx_valid(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&G.lock);
	if (r)
		RET(r);
	if (T.depth)
		T.stack[T.depth - 1] = ctx;
	else
		T.stack[T.depth++] = ctx;
	RET(CUDA_SUCCESS);
}

/*
 * What cuGetProcAddress hands out for "cuCtxSetCurrent": not exported, and its own body (no
 * tail call into the exported function; noipa, so the compiler neither inlines, clones nor
 * folds it into the exported one). Same semantics: replace the top of the thread's stack.
 */
static __attribute__((noinline, noipa, used)) CUresult CUDAAPI
cu_ctx_set_current_internal(CUcontext ctx)
{
	CUresult r;
	int top;

	dlog("cuCtxSetCurrent [internal entry point from cuGetProcAddress](%p)", (void *)ctx);
	r = state_check();
	if (r)
		return ret_log("cu_ctx_set_current_internal", r);
	top = T.depth - 1;
	if (ctx) {
		pthread_mutex_lock(&G.lock);
		r = ctx_valid(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
		pthread_mutex_unlock(&G.lock);
		if (!r && top < 0)
			top = T.depth++;
		if (!r)
			T.stack[top] = ctx;
	} else if (top >= 0) {
		T.depth = top;
	}
	return ret_log("cu_ctx_set_current_internal", r);
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = state_check();

	if (r)
		RET(r);
	if (!pctx)
		RET(CUDA_ERROR_INVALID_VALUE);
	*pctx = current();
	RET(CUDA_SUCCESS);
}

static CUresult ctx_push(CUcontext ctx)
{
	CUresult r = state_check();

	if (r)
		return r;
	pthread_mutex_lock(&G.lock);
	r = ctx_valid(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&G.lock);
	return r ? r : stack_push(ctx);
}

static CUresult ctx_pop(CUcontext *pctx)
{
	CUresult r = state_check();

	if (r)
		return r;
	if (!T.depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	T.depth--;
	if (pctx)
		*pctx = T.stack[T.depth];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
	RET(ctx_push(ctx));
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
	RET(ctx_push(ctx));
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
	RET(ctx_pop(pctx));
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
	RET(ctx_pop(pctx));
}

CUresult CUDAAPI cuGreenCtxCreate(CUgreenCtx *phCtx, CUdevResourceDesc desc, CUdevice dev,
				  unsigned int flags)
{
	CUcontext c = NULL;
	CUresult r;

	if (!phCtx)
		RET(CUDA_ERROR_INVALID_VALUE);
	r = ctx_create(&c, dev, true, "cuGreenCtxCreate");
	if (!r)
		*phCtx = (CUgreenCtx)c;
	RET(r);
}

CUresult CUDAAPI cuGreenCtxDestroy(CUgreenCtx hCtx)
{
	RET(ctx_destroy((CUcontext)hCtx, true));
}

CUresult CUDAAPI cuCtxFromGreenCtx(CUcontext *pContext, CUgreenCtx hCtx)
{
	CUresult r = state_check();

	if (r)
		RET(r);
	if (!pContext)
		RET(CUDA_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&G.lock);
	r = ctx_valid((CUcontext)hCtx) && ((CUcontext)hCtx)->green ? CUDA_SUCCESS
								   : CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_unlock(&G.lock);
	if (!r)
		*pContext = (CUcontext)hCtx;
	RET(r);
}

/* The exported cuMemAlloc_v2. */
CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	if (!dptr)
		RET(state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE);
	RET(mem_alloc_api(MEM_DEVICE, bytesize, dptr, NULL));
}

/*
 * What cuGetProcAddress hands out for "cuMemAlloc" (version >= 3020): same prototype as
 * cuMemAlloc_v2, not exported, its own body (it finds the context itself and calls the
 * allocator directly), noipa so that it cannot be merged with or turned into a jump to the
 * exported one.
 */
static __attribute__((noinline, noipa, used)) CUresult CUDAAPI
cu_mem_alloc_internal(CUdeviceptr *dptr, size_t bytesize)
{
	struct CUctx_st *c;
	CUresult r;

	dlog("cuMemAlloc [internal entry point from cuGetProcAddress](%zu)", bytesize);
	r = state_check();
	if (!r && !dptr)
		r = CUDA_ERROR_INVALID_VALUE;
	if (!r)
		r = current_ctx(&c);
	if (!r)
		r = mem_alloc(c, MEM_DEVICE, bytesize, dptr, NULL);
	return ret_log("cu_mem_alloc_internal", r);
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	CUdeviceptr p = 0;
	CUresult r;

	if (!dptr)
		RET(state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE);
	r = mem_alloc_api(MEM_LEGACY, bytesize, &p, NULL);
	if (!r)
		*dptr = (CUdeviceptr_v1)p;
	RET(r);
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	if (!dptr)
		RET(state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE);
	RET(mem_alloc_api(MEM_MANAGED, bytesize, dptr, NULL));
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	if (!dptr)
		RET(state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE);
	RET(mem_alloc_api(MEM_ASYNC, bytesize, dptr, NULL));
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	if (!dptr)
		RET(state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE);
	RET(mem_alloc_api(MEM_ASYNC, bytesize, dptr, NULL));
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			     const CUmemAllocationProp *prop, unsigned long long flags)
{
	__u32 h = 0;
	CUresult r;

	if (!handle || !prop || flags)
		RET(state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE);
	r = mem_alloc_api(MEM_HANDLE, size, NULL, &h);
	if (!r)
		*handle = h;
	RET(r);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	CUresult r = state_check();

	RET(r ? r : mem_free(dptr));
}

CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr)
{
	CUresult r = state_check();

	RET(r ? r : mem_free(dptr));
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				unsigned int gridDimZ, unsigned int blockDimX,
				unsigned int blockDimY, unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
				void **extra)
{
	return launch(f); /* not logged: launches are many */
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				     unsigned int gridDimZ, unsigned int blockDimX,
				     unsigned int blockDimY, unsigned int blockDimZ,
				     unsigned int sharedMemBytes, CUstream hStream,
				     void **kernelParams, void **extra)
{
	return launch(f);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				  void **extra)
{
	if (!config)
		return state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE;
	return launch(f);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
				       void **kernelParams, void **extra)
{
	if (!config)
		return state_check() ? state_check() : CUDA_ERROR_INVALID_VALUE;
	return launch(f);
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return launch(hGraphExec);
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return launch(hGraphExec);
}

/* ---- cuGetProcAddress ---- */

struct proc_entry {
	const char *name; /* the name callers ask for (cudaTypedefs.h PFN_<name>_v<version>) */
	int version;	  /* first CUDA version with this prototype */
	bool ptsz;	  /* per-thread default stream variant */
	void *fn;
	const char *exported; /* the exported name, or NULL for an internal entry point */
};

#define E(n, v, f)                                                                                 \
	{                                                                                          \
		n, v, false, (void *)(f), #f                                                       \
	}
#define EP(n, v, f)                                                                                \
	{                                                                                          \
		n, v, true, (void *)(f), #f                                                        \
	}
#define EI(n, v, f)                                                                                \
	{                                                                                          \
		n, v, false, (void *)(f), NULL                                                     \
	}
#define EX(f)                                                                                      \
	{                                                                                          \
		NULL, 0, false, (void *)(f), #f                                                    \
	} /* reachable by its exact name only */

static const struct proc_entry proc_table[] = {
    E("cuInit", 2000, cuInit),
    E("cuDriverGetVersion", 2020, cuDriverGetVersion),
    E("cuDeviceGet", 2000, cuDeviceGet),
    E("cuDeviceGetCount", 2000, cuDeviceGetCount),
    E("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    E("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    E("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    E("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
    E("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    E("cuCtxCreate", 2000, cuCtxCreate),
    E("cuCtxCreate", 3020, cuCtxCreate_v2),
    E("cuCtxCreate", 11040, cuCtxCreate_v3),
    E("cuCtxCreate", 12050, cuCtxCreate_v4),
    E("cuCtxDestroy", 2000, cuCtxDestroy),
    E("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    EI("cuCtxSetCurrent", 4000, cu_ctx_set_current_internal),
    E("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    E("cuCtxPushCurrent", 2000, cuCtxPushCurrent),
    E("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    E("cuCtxPopCurrent", 2000, cuCtxPopCurrent),
    E("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    E("cuGreenCtxCreate", 12040, cuGreenCtxCreate),
    E("cuGreenCtxDestroy", 12040, cuGreenCtxDestroy),
    E("cuCtxFromGreenCtx", 12040, cuCtxFromGreenCtx),
    E("cuMemAlloc", 2000, cuMemAlloc),
    EI("cuMemAlloc", 3020, cu_mem_alloc_internal),
    EX(cuMemAlloc_v2),
    E("cuMemAllocManaged", 6000, cuMemAllocManaged),
    E("cuMemAllocAsync", 11020, cuMemAllocAsync),
    EP("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
    E("cuMemCreate", 10020, cuMemCreate),
    E("cuMemFree", 2000, cuMemFree),
    E("cuMemFree", 3020, cuMemFree_v2),
    E("cuLaunchKernel", 4000, cuLaunchKernel),
    EP("cuLaunchKernel", 7000, cuLaunchKernel_ptsz),
    E("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    EP("cuLaunchKernelEx", 11060, cuLaunchKernelEx_ptsz),
    E("cuGraphLaunch", 10000, cuGraphLaunch),
    EP("cuGraphLaunch", 10000, cuGraphLaunch_ptsz),
    E("cuGetProcAddress", 11030, cuGetProcAddress),
    E("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    E("cuGetErrorName", 6000, cuGetErrorName),
};

#define NPROC (sizeof(proc_table) / sizeof(proc_table[0]))

/*
 * Resolve @symbol for @version. By base name: the newest entry not newer than @version, the
 * _ptsz one when CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM is asked for and exists. A name
 * that is not a base name but is exported (e.g. "cuMemAlloc_v2") resolves to the export.
 */
static CUresult proc_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
			    CUdriverProcAddressQueryResult *status)
{
	const struct proc_entry *best = NULL, *best_ptsz = NULL;
	bool known = false;
	size_t i;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (i = 0; i < NPROC; i++) {
		const struct proc_entry *e = &proc_table[i];

		if (!e->name || strcmp(e->name, symbol))
			continue;
		known = true;
		if (e->version > version)
			continue;
		if (e->ptsz) {
			if (!best_ptsz || e->version > best_ptsz->version)
				best_ptsz = e;
		} else if (!best || e->version > best->version) {
			best = e;
		}
	}
	if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_ptsz)
		best = best_ptsz;
	if (!best && !known) {
		for (i = 0; i < NPROC; i++) {
			if (proc_table[i].exported && !strcmp(proc_table[i].exported, symbol)) {
				best = &proc_table[i];
				break;
			}
		}
	}
	if (!best) {
		if (status)
			*status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
					: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		dlog("cuGetProcAddress(\"%s\", %d, 0x%llx) -> not found", symbol, version,
		     (unsigned long long)flags);
		return CUDA_ERROR_NOT_FOUND;
	}
	*pfn = best->fn;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	dlog("cuGetProcAddress(\"%s\", %d, 0x%llx) -> %p (%s)", symbol, version,
	     (unsigned long long)flags, best->fn, best->exported ? best->exported : "internal");
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return proc_lookup(symbol, pfn, cudaVersion, flags, NULL);
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	return proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}
