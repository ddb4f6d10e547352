// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuda double: the exported CUDA driver API, but cuGetProcAddress (libcuda_procaddr.c). Each
 * entry point checks its arguments and calls the model; none calls another exported one, so
 * that one API call fires exactly one uprobe.
 */
#include <stddef.h>
#include <unistd.h>

#include "libcuda_double.h"

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
