/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
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
 *
 * This header is private to the double's files (libcuda_*.c), one concern each:
 *   libcuda_state.c     the library's state, its log, the fork rule (a forked child's refusal)
 *   libcuda_rm.c        the emulated driver's files and RM objects: cuInit's driver work
 *   libcuda_ctx.c       contexts, the per-thread context stack, launch counting
 *   libcuda_mem.c       device memory
 *   libcuda_api.c       the exported entry points, but cuGetProcAddress
 *   libcuda_procaddr.c  cuGetProcAddress: its table, and the entry points only it hands out
 * What they share is hidden: `nm -D` lists the CUDA API and nothing else.
 */
#ifndef GPUCTX_LIBCUDA_DOUBLE_H
#define GPUCTX_LIBCUDA_DOUBLE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define GPU_UAPI_NO_HELPERS

#include <cuda.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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

/* Everything the files share from here on stays inside the library. */
#pragma GCC visibility push(hidden)

/* The process-wide state (libcuda_state.c), under lock but for the counters. */
struct dbl_state {
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
};

/* The calling thread's context stack; the top is the current context. */
struct dbl_thread {
	CUcontext stack[DBL_STACK_DEPTH];
	int depth;
};

extern struct dbl_state G;
extern __thread struct dbl_thread T;

/* libcuda_state.c */
__attribute__((format(printf, 1, 2))) void dlog(const char *fmt, ...);
CUresult ret_log(const char *fn, CUresult r);
#define RET(r) return ret_log(__func__, (r))
bool forked(void);
CUresult state_check(void);
void forget_parent_state(void);

/* libcuda_rm.c: the driver's files and RM objects, callers hold G.lock */
__u32 rm_alloc(__u32 parent, __u32 cls, __u32 *handle);
__u32 rm_free(__u32 parent, __u32 handle);
__u32 rm_alloc_memory(__u32 cls, size_t size, __u32 *handle);
CUresult driver_open(void);
CUresult driver_reinit_child(void);

/* libcuda_ctx.c */
bool ctx_valid(CUcontext c);
CUcontext current(void);
CUresult current_ctx(struct CUctx_st **out);
CUresult ctx_create(CUcontext *pctx, CUdevice dev, bool green, const char *how);
CUresult ctx_destroy(CUcontext ctx, bool green);
CUresult ctx_push(CUcontext ctx);
CUresult ctx_pop(CUcontext *pctx);
CUresult primary_retain(CUcontext *pctx, CUdevice dev);
CUresult primary_release(CUdevice dev);
CUresult primary_reset(CUdevice dev);
CUresult launch(const void *what);

/* libcuda_mem.c */
CUresult mem_alloc(struct CUctx_st *c, enum mem_kind kind, size_t size, CUdeviceptr *dptr,
		   __u32 *handle_out);
CUresult mem_alloc_api(enum mem_kind kind, size_t size, CUdeviceptr *dptr, __u32 *h);
void mem_release(struct dbl_mem *m);
CUresult mem_free(CUdeviceptr dptr);

#pragma GCC visibility pop

#endif /* GPUCTX_LIBCUDA_DOUBLE_H */
