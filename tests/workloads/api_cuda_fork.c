// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * api_cuda_fork DEVICE_DIR [--stub]: the CUDA driver API on the libcuda test double
 * (tests/doubles/libcuda_*.c), then a fork whose child tries to use CUDA.
 *
 * Parent: cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuCtxCreate (v4,
 * through the cuda.h macro) and cuCtxDestroy; cuMemAlloc and cuCtxSetCurrent through pointers
 * from cuGetProcAddress_v2 (the double returns non-exported entry points for those two),
 * cuMemFree; fork; wait; cuDevicePrimaryCtxRelease.
 * Child: what the real libcuda 535 does there (docs/gpu-validation.md): cuCtxSetCurrent(parent's
 * context) returns CUDA_ERROR_NOT_INITIALIZED (3) with no ioctl, then cuInit initialises again
 * over the inherited files and returns CUDA_SUCCESS; exits 0 if they do.
 *
 *   LD_LIBRARY_PATH=build/doubles build/workloads/api_cuda_fork /tmp/fg
 * --stub: run against NVIDIA's stub libcuda (every call returns CUDA_ERROR_STUB_LIBRARY, 34):
 *   d=$(mktemp -d); ln -s /usr/local/cuda/lib64/stubs/libcuda.so $d/libcuda.so.1
 *   LD_LIBRARY_PATH=$d build/workloads/api_cuda_fork /tmp/fg --stub
 * Exits 0 when every call returned what the library in use should return.
 */
#include <cuda.h>

#include <dlfcn.h>
#include <stdint.h>
#include <sys/wait.h>

#include "gpu_uapi.h"

static int stub; /* --stub: the expected result of every call is 34 */

static const char *err_name(CUresult r)
{
	const char *s = NULL;

	if (stub)
		return r == CUDA_ERROR_STUB_LIBRARY ? "CUDA_ERROR_STUB_LIBRARY" : "?";
	return cuGetErrorName(r, &s) == CUDA_SUCCESS && s ? s : "?";
}

/* Print the call and its result; fail unless it is @want (34 for everything with --stub). */
static void check(const char *call, CUresult r, CUresult want)
{
	if (stub)
		want = CUDA_ERROR_STUB_LIBRARY;
	wl_say("%s = %d (%s)", call, (int)r, err_name(r));
	if (r != want)
		wl_fail("%s returned %d, expected %d", call, (int)r, (int)want);
}

static int child(CUcontext parent_ctx)
{
	CUresult a, b;

	a = cuCtxSetCurrent(parent_ctx);
	wl_say("child: cuCtxSetCurrent(parent ctx %p) = %d (%s)", (void *)parent_ctx, (int)a,
	       err_name(a));
	b = cuInit(0);
	wl_say("child: cuInit(0) = %d (%s)", (int)b, err_name(b));
	if (stub)
		return a == CUDA_ERROR_STUB_LIBRARY && b == CUDA_ERROR_STUB_LIBRARY ? 0 : 1;
	return a == CUDA_ERROR_NOT_INITIALIZED && b == CUDA_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t) = NULL;
	CUresult (*set_current)(CUcontext) = NULL;
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUcontext pctx = NULL, ctx = NULL;
	CUdeviceptr dptr = 0;
	CUdevice dev = 0;
	void *exported;
	int status, ver = 0;
	CUresult r;
	pid_t pid;

	stub = argc > 2 && !strcmp(argv[2], "--stub");
	if (setenv("GPUCTX_FAKEGPU_DIR", dir, 1))
		wl_fail("setenv: %s", strerror(errno));
	wl_say("api_cuda_fork: device dir %s%s", dir, stub ? " (stub libcuda: expecting 34)" : "");

	check("cuInit(0)", cuInit(0), CUDA_SUCCESS);
	r = cuDriverGetVersion(&ver);
	check("cuDriverGetVersion", r, CUDA_SUCCESS);
	check("cuDeviceGet(0)", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&pctx, dev), CUDA_SUCCESS);
	wl_say("primary context %p", (void *)pctx);
	check("cuCtxSetCurrent(primary)", cuCtxSetCurrent(pctx), CUDA_SUCCESS);

	check("cuCtxCreate [cuCtxCreate_v4]", cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);
	wl_say("created context %p", (void *)ctx);
	check("cuCtxDestroy [cuCtxDestroy_v2]", cuCtxDestroy(ctx), CUDA_SUCCESS);

	r = cuGetProcAddress("cuMemAlloc", (void **)&mem_alloc, 12000, CU_GET_PROC_ADDRESS_DEFAULT,
			     &st);
	check("cuGetProcAddress_v2(\"cuMemAlloc\", 12000)", r, CUDA_SUCCESS);
	r = cuGetProcAddress("cuCtxSetCurrent", (void **)&set_current, 12000,
			     CU_GET_PROC_ADDRESS_DEFAULT, &st);
	check("cuGetProcAddress_v2(\"cuCtxSetCurrent\", 12000)", r, CUDA_SUCCESS);
	if (!stub) {
		exported = dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
		wl_say("cuMemAlloc: cuGetProcAddress %p, dlsym(\"cuMemAlloc_v2\") %p%s",
		       (void *)(uintptr_t)mem_alloc, exported,
		       (void *)(uintptr_t)mem_alloc == exported ? "" : " (not an exported symbol)");
		exported = dlsym(RTLD_DEFAULT, "cuCtxSetCurrent");
		wl_say("cuCtxSetCurrent: cuGetProcAddress %p, dlsym %p%s",
		       (void *)(uintptr_t)set_current, exported,
		       (void *)(uintptr_t)set_current == exported ? ""
								  : " (not an exported symbol)");
		if (!mem_alloc || !set_current)
			wl_fail("cuGetProcAddress_v2 returned a NULL pointer");
		check("(*cuMemAlloc)(2 MiB)", mem_alloc(&dptr, 2 << 20), CUDA_SUCCESS);
		wl_say("device pointer 0x%llx", (unsigned long long)dptr);
		check("(*cuCtxSetCurrent)(primary)", set_current(pctx), CUDA_SUCCESS);
	} else {
		wl_say("stub: no pointers to call");
	}
	check("cuMemFree [cuMemFree_v2]", cuMemFree(dptr), CUDA_SUCCESS);

	pid = fork();
	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(child(pctx));
	if (waitpid(pid, &status, 0) != pid)
		wl_fail("waitpid: %s", strerror(errno));
	wl_say("child %d exited with status 0x%x", (int)pid, status);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("the child did not see the expected errors");

	check("cuDevicePrimaryCtxRelease [cuDevicePrimaryCtxRelease_v2]",
	      cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
	wl_say("api_cuda_fork: ok");
	return 0;
}
