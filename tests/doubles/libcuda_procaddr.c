// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuda double: cuGetProcAddress(_v2). Its table resolves a name by CUDA version as the real
 * one does (cudaTypedefs.h); two names resolve to entry points that are not exported, kept here
 * static so that nothing but this table reaches them (libcuda_double.h says why).
 */
#include <string.h>

#include "libcuda_double.h"

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
