// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * api_cuda_launch DEVICE_DIR [--stub]: cuInit, the primary context made current, then 1000
 * cuLaunchKernel calls with a dummy function handle (the libcuda test double only counts them),
 * then the primary context is released. For uprobe overhead and event-count tests.
 *
 *   LD_LIBRARY_PATH=build/doubles build/workloads/api_cuda_launch /tmp/fg
 * --stub: against NVIDIA's stub libcuda (see api_cuda_fork.c), every call returns 34.
 */
#include <cuda.h>

#include <stdint.h>

#include "gpu_uapi.h"

#define LAUNCHES 1000

static int stub;

static void check(const char *call, CUresult r, CUresult want)
{
	if (stub)
		want = CUDA_ERROR_STUB_LIBRARY;
	wl_say("%s = %d", call, (int)r);
	if (r != want)
		wl_fail("%s returned %d, expected %d", call, (int)r, (int)want);
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	CUfunction fn = (CUfunction)(uintptr_t)0xf00d0000; /* never dereferenced by the double */
	CUcontext pctx = NULL;
	CUdevice dev = 0;
	void *params[1] = {NULL};
	CUresult want, r;
	int i;

	stub = argc > 2 && !strcmp(argv[2], "--stub");
	if (setenv("GPUCTX_FAKEGPU_DIR", dir, 1))
		wl_fail("setenv: %s", strerror(errno));
	want = stub ? CUDA_ERROR_STUB_LIBRARY : CUDA_SUCCESS;

	check("cuInit(0)", cuInit(0), CUDA_SUCCESS);
	check("cuDeviceGet(0)", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&pctx, dev), CUDA_SUCCESS);
	check("cuCtxSetCurrent(primary)", cuCtxSetCurrent(pctx), CUDA_SUCCESS);
	for (i = 0; i < LAUNCHES; i++) {
		r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
		if (r != want)
			wl_fail("cuLaunchKernel #%d returned %d, expected %d", i, (int)r,
				(int)want);
	}
	wl_say("cuLaunchKernel x %d = %d", LAUNCHES, (int)want);
	check("cuDevicePrimaryCtxRelease [cuDevicePrimaryCtxRelease_v2]",
	      cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
	wl_say("api_cuda_launch: ok");
	return 0;
}
