// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tables of the probed CUDA driver API / HIP runtime functions (signatures from cuda.h and
 * hip_runtime_api.h; CUDA result codes from cuda.h, HIP codes from hip_runtime_api.h). */
#include <stddef.h>
#include <string.h>
#include "decode/api.h"
#include "decode/decode_priv.h"

#define N -1

static const struct gctx_api_sym syms[] = {
    {"cuInit", GCTX_CU_INIT, N, N, false},
    {"cuDevicePrimaryCtxRetain", GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN, 0, N, false},
    {"cuDevicePrimaryCtxRelease", GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE, N, N, false},
    {"cuDevicePrimaryCtxRelease_v2", GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE, N, N, false},
    {"cuDevicePrimaryCtxReset", GCTX_CU_DEVICE_PRIMARY_CTX_RESET, N, N, false},
    {"cuDevicePrimaryCtxReset_v2", GCTX_CU_DEVICE_PRIMARY_CTX_RESET, N, N, false},
    {"cuCtxCreate", GCTX_CU_CTX_CREATE, 0, N, false},
    {"cuCtxCreate_v2", GCTX_CU_CTX_CREATE, 0, N, false},
    {"cuCtxCreate_v3", GCTX_CU_CTX_CREATE_V3, 0, N, false},
    {"cuCtxCreate_v4", GCTX_CU_CTX_CREATE_V4, 0, N, false},
    {"cuCtxDestroy", GCTX_CU_CTX_DESTROY, N, N, false},
    {"cuCtxDestroy_v2", GCTX_CU_CTX_DESTROY, N, N, false},
    {"cuCtxSetCurrent", GCTX_CU_CTX_SET_CURRENT, N, N, false},
    {"cuCtxPushCurrent", GCTX_CU_CTX_PUSH_CURRENT, N, N, false},
    {"cuCtxPushCurrent_v2", GCTX_CU_CTX_PUSH_CURRENT, N, N, false},
    {"cuCtxPopCurrent", GCTX_CU_CTX_POP_CURRENT, 0, N, false},
    {"cuCtxPopCurrent_v2", GCTX_CU_CTX_POP_CURRENT, 0, N, false},
    {"cuGreenCtxCreate", GCTX_CU_GREEN_CTX_CREATE, 0, N, false},
    {"cuMemAlloc", GCTX_CU_MEM_ALLOC, 0, N, false},
    {"cuMemAlloc_v2", GCTX_CU_MEM_ALLOC, 0, N, false},
    {"cuMemAllocManaged", GCTX_CU_MEM_ALLOC_MANAGED, 0, N, false},
    {"cuMemAllocAsync", GCTX_CU_MEM_ALLOC_ASYNC, 0, N, false},
    {"cuMemAllocAsync_ptsz", GCTX_CU_MEM_ALLOC_ASYNC, 0, N, false},
    {"cuMemCreate", GCTX_CU_MEM_CREATE, 0, N, false},
    {"cuMemFree", GCTX_CU_MEM_FREE, N, N, false},
    {"cuMemFree_v2", GCTX_CU_MEM_FREE, N, N, false},
    {"cuGetProcAddress", GCTX_CU_GET_PROC_ADDRESS, 1, 0, false},
    {"cuGetProcAddress_v2", GCTX_CU_GET_PROC_ADDRESS, 1, 0, false},
    {"cuLaunchKernel", GCTX_CU_LAUNCH_KERNEL, N, N, true},
    {"cuLaunchKernel_ptsz", GCTX_CU_LAUNCH_KERNEL, N, N, true},
    {"cuLaunchKernelEx", GCTX_CU_LAUNCH_KERNEL_EX, N, N, true},
    {"cuLaunchKernelEx_ptsz", GCTX_CU_LAUNCH_KERNEL_EX, N, N, true},
    {"cuGraphLaunch", GCTX_CU_GRAPH_LAUNCH, N, N, true},
    {"cuGraphLaunch_ptsz", GCTX_CU_GRAPH_LAUNCH, N, N, true},
    {"hipInit", GCTX_HIP_INIT, N, N, false},
    {"hipSetDevice", GCTX_HIP_SET_DEVICE, N, N, false},
    {"hipDevicePrimaryCtxRetain", GCTX_HIP_DEVICE_PRIMARY_CTX_RETAIN, 0, N, false},
    {"hipDevicePrimaryCtxRelease", GCTX_HIP_DEVICE_PRIMARY_CTX_RELEASE, N, N, false},
    {"hipCtxCreate", GCTX_HIP_CTX_CREATE, 0, N, false},
    {"hipCtxDestroy", GCTX_HIP_CTX_DESTROY, N, N, false},
    {"hipCtxSetCurrent", GCTX_HIP_CTX_SET_CURRENT, N, N, false},
    {"hipCtxPushCurrent", GCTX_HIP_CTX_PUSH_CURRENT, N, N, false},
    {"hipCtxPopCurrent", GCTX_HIP_CTX_POP_CURRENT, 0, N, false},
    {"hipMalloc", GCTX_HIP_MALLOC, 0, N, false},
    {"hipMallocManaged", GCTX_HIP_MALLOC_MANAGED, 0, N, false},
    {"hipFree", GCTX_HIP_FREE, N, N, false},
    {"hipDeviceReset", GCTX_HIP_DEVICE_RESET, N, N, false},
    {"hipLaunchKernel", GCTX_HIP_LAUNCH_KERNEL, N, N, true},
    {"hipModuleLaunchKernel", GCTX_HIP_MODULE_LAUNCH_KERNEL, N, N, true},
};

static const char *const fn_names[GCTX_API_MAX] = {
    [GCTX_CU_INIT] = "cuInit",
    [GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN] = "cuDevicePrimaryCtxRetain",
    [GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE] = "cuDevicePrimaryCtxRelease",
    [GCTX_CU_DEVICE_PRIMARY_CTX_RESET] = "cuDevicePrimaryCtxReset",
    [GCTX_CU_CTX_CREATE] = "cuCtxCreate",
    [GCTX_CU_CTX_CREATE_V3] = "cuCtxCreate_v3",
    [GCTX_CU_CTX_CREATE_V4] = "cuCtxCreate_v4",
    [GCTX_CU_CTX_DESTROY] = "cuCtxDestroy",
    [GCTX_CU_CTX_SET_CURRENT] = "cuCtxSetCurrent",
    [GCTX_CU_CTX_PUSH_CURRENT] = "cuCtxPushCurrent",
    [GCTX_CU_CTX_POP_CURRENT] = "cuCtxPopCurrent",
    [GCTX_CU_GREEN_CTX_CREATE] = "cuGreenCtxCreate",
    [GCTX_CU_MEM_ALLOC] = "cuMemAlloc",
    [GCTX_CU_MEM_ALLOC_MANAGED] = "cuMemAllocManaged",
    [GCTX_CU_MEM_ALLOC_ASYNC] = "cuMemAllocAsync",
    [GCTX_CU_MEM_CREATE] = "cuMemCreate",
    [GCTX_CU_MEM_FREE] = "cuMemFree",
    [GCTX_CU_GET_PROC_ADDRESS] = "cuGetProcAddress",
    [GCTX_CU_LAUNCH_KERNEL] = "cuLaunchKernel",
    [GCTX_CU_LAUNCH_KERNEL_EX] = "cuLaunchKernelEx",
    [GCTX_CU_GRAPH_LAUNCH] = "cuGraphLaunch",
    [GCTX_HIP_INIT] = "hipInit",
    [GCTX_HIP_SET_DEVICE] = "hipSetDevice",
    [GCTX_HIP_DEVICE_PRIMARY_CTX_RETAIN] = "hipDevicePrimaryCtxRetain",
    [GCTX_HIP_DEVICE_PRIMARY_CTX_RELEASE] = "hipDevicePrimaryCtxRelease",
    [GCTX_HIP_CTX_CREATE] = "hipCtxCreate",
    [GCTX_HIP_CTX_DESTROY] = "hipCtxDestroy",
    [GCTX_HIP_CTX_SET_CURRENT] = "hipCtxSetCurrent",
    [GCTX_HIP_CTX_PUSH_CURRENT] = "hipCtxPushCurrent",
    [GCTX_HIP_CTX_POP_CURRENT] = "hipCtxPopCurrent",
    [GCTX_HIP_MALLOC] = "hipMalloc",
    [GCTX_HIP_MALLOC_MANAGED] = "hipMallocManaged",
    [GCTX_HIP_FREE] = "hipFree",
    [GCTX_HIP_DEVICE_RESET] = "hipDeviceReset",
    [GCTX_HIP_LAUNCH_KERNEL] = "hipLaunchKernel",
    [GCTX_HIP_MODULE_LAUNCH_KERNEL] = "hipModuleLaunchKernel",
    [GCTX_CU_OTHER] = "cu*",
    [GCTX_HIP_OTHER] = "hip*",
};

struct code_name {
	int code;
	const char *name;
};

/* CUresult, cuda.h (CUDA 13). */
static const struct code_name cu_results[] = {
    {0, "CUDA_SUCCESS"},
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {4, "CUDA_ERROR_DEINITIALIZED"},
    {5, "CUDA_ERROR_PROFILER_DISABLED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"},
    {205, "CUDA_ERROR_MAP_FAILED"},
    {206, "CUDA_ERROR_UNMAP_FAILED"},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"},
    {400, "CUDA_ERROR_INVALID_HANDLE"},
    {401, "CUDA_ERROR_ILLEGAL_STATE"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {999, "CUDA_ERROR_UNKNOWN"},
};

/* hipError_t, hip_runtime_api.h. */
static const struct code_name hip_results[] = {
    {0, "hipSuccess"},
    {1, "hipErrorInvalidValue"},
    {2, "hipErrorOutOfMemory"},
    {3, "hipErrorNotInitialized"},
    {4, "hipErrorDeinitialized"},
    {100, "hipErrorNoDevice"},
    {101, "hipErrorInvalidDevice"},
    {200, "hipErrorInvalidImage"},
    {201, "hipErrorInvalidContext"},
    {202, "hipErrorContextAlreadyCurrent"},
    {400, "hipErrorInvalidHandle"},
    {500, "hipErrorNotFound"},
    {700, "hipErrorIllegalAddress"},
    {709, "hipErrorContextIsDestroyed"},
    {801, "hipErrorNotSupported"},
    {999, "hipErrorUnknown"},
    {1052, "hipErrorRuntimeOther"},
};

const struct gctx_api_sym *gctx_api_syms(__u32 *n)
{
	*n = sizeof(syms) / sizeof(syms[0]);
	return syms;
}

const struct gctx_api_sym *gctx_api_sym_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	return NULL;
}

enum gctx_api_fn gctx_api_procaddr_fn(const char *symbol, __u64 version, __u64 flags)
{
	const struct gctx_api_sym *s;

	/* cudaTypedefs.h: cuCtxCreate 3020 = _v2, 11040 = _v3, 12050 = _v4 */
	if (!strcmp(symbol, "cuCtxCreate"))
		return version >= 12050	  ? GCTX_CU_CTX_CREATE_V4
		       : version >= 11040 ? GCTX_CU_CTX_CREATE_V3
					  : GCTX_CU_CTX_CREATE;
	s = gctx_api_sym_lookup(symbol);
	return s ? s->fn : GCTX_API_NONE;
}

__u64 gctx_api_cookie(const struct gctx_api_sym *s, bool entry_only)
{
	__u64 c = s->fn;

	if (s->out >= 0)
		c |= (__u64)(s->out + 1) << 16;
	if (s->str >= 0)
		c |= (__u64)(s->str + 1) << 20;
	if (entry_only)
		c |= GCTX_COOKIE_ENTRY_ONLY;
	return c;
}

const char *gctx_api_fn_name(enum gctx_api_fn fn)
{
	const char *name = dec_name_at(fn_names, ARRAY_SIZE(fn_names), (unsigned int)fn);

	return name ? name : "?";
}

enum gctx_api_vendor gctx_api_vendor(enum gctx_api_fn fn)
{
	if (fn == GCTX_CU_OTHER)
		return GCTX_VENDOR_CUDA;
	return fn >= GCTX_HIP_INIT ? GCTX_VENDOR_HIP : GCTX_VENDOR_CUDA;
}

bool gctx_api_is_launch(enum gctx_api_fn fn)
{
	switch (fn) {
	case GCTX_CU_LAUNCH_KERNEL:
	case GCTX_CU_LAUNCH_KERNEL_EX:
	case GCTX_CU_GRAPH_LAUNCH:
	case GCTX_HIP_LAUNCH_KERNEL:
	case GCTX_HIP_MODULE_LAUNCH_KERNEL:
		return true;
	default:
		return false;
	}
}

static const char *lookup_code(const struct code_name *t, size_t n, __s64 code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

const char *gctx_api_ev_name(const struct gctx_ev_api *ev, char *buf, size_t len)
{
	size_t n = 0;

	if (!(ev->flags & GCTX_API_NAMED))
		return gctx_api_fn_name(ev->fn);
	/* the exported name the collector wrote (api_names): printable, cut at its end */
	while (n + 1 < len && n < sizeof(ev->str) && ev->str[n] > ' ' && ev->str[n] < 0x7f) {
		buf[n] = ev->str[n];
		n++;
	}
	buf[n] = 0;
	return n ? buf : gctx_api_fn_name(ev->fn);
}

const char *gctx_api_result_name(enum gctx_api_fn fn, __s64 ret)
{
	if (gctx_api_vendor(fn) == GCTX_VENDOR_HIP)
		return lookup_code(hip_results, sizeof(hip_results) / sizeof(hip_results[0]), ret);
	return lookup_code(cu_results, sizeof(cu_results) / sizeof(cu_results[0]), ret);
}

int gctx_api_device_arg(enum gctx_api_fn fn)
{
	switch (fn) {
	case GCTX_CU_DEVICE_PRIMARY_CTX_RETAIN:
	case GCTX_HIP_DEVICE_PRIMARY_CTX_RETAIN:
		return 1;
	case GCTX_CU_DEVICE_PRIMARY_CTX_RELEASE:
	case GCTX_CU_DEVICE_PRIMARY_CTX_RESET:
	case GCTX_HIP_DEVICE_PRIMARY_CTX_RELEASE:
	case GCTX_HIP_SET_DEVICE:
		return 0;
	case GCTX_CU_CTX_CREATE:
	case GCTX_HIP_CTX_CREATE:
		return 2;
	case GCTX_CU_CTX_CREATE_V3:
		return 4;
	case GCTX_CU_CTX_CREATE_V4:
		return 3;
	case GCTX_CU_GREEN_CTX_CREATE:
		return 2;
	default:
		return -1;
	}
}

int gctx_api_size_arg(enum gctx_api_fn fn)
{
	switch (fn) {
	case GCTX_CU_MEM_ALLOC:
	case GCTX_CU_MEM_ALLOC_MANAGED:
	case GCTX_CU_MEM_ALLOC_ASYNC:
	case GCTX_CU_MEM_CREATE:
	case GCTX_HIP_MALLOC:
	case GCTX_HIP_MALLOC_MANAGED:
		return 1;
	default:
		return -1;
	}
}
