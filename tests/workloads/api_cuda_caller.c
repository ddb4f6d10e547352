// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * api_cuda_caller DEVICE_DIR: which code called CUDA. CUDA is first initialised by a library
 * (libwl_cuda_init.so: wl_lib_gpu_init calls cuInit), then the program itself calls cuInit
 * again and creates a context, from main. On the libcuda test double:
 *   LD_LIBRARY_PATH=build/doubles build/workloads/api_cuda_caller /tmp/fg
 * Exits 0 when every call succeeded.
 */
#include <cuda.h>

#include "gpu_uapi.h"

int wl_lib_gpu_init(void); /* libwl_cuda_init.so */

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	CUcontext ctx = NULL;
	CUdevice dev = 0;
	CUresult r;

	if (setenv("GPUCTX_FAKEGPU_DIR", dir, 1))
		wl_fail("setenv: %s", strerror(errno));
	if (wl_lib_gpu_init())
		wl_fail("wl_lib_gpu_init failed");
	r = cuInit(0);
	if (r != CUDA_SUCCESS)
		wl_fail("cuInit(0) from main = %d", (int)r);
	r = cuDeviceGet(&dev, 0);
	if (r != CUDA_SUCCESS)
		wl_fail("cuDeviceGet = %d", (int)r);
	r = cuCtxCreate(&ctx, NULL, 0, dev);
	if (r != CUDA_SUCCESS)
		wl_fail("cuCtxCreate = %d", (int)r);
	r = cuCtxDestroy(ctx);
	if (r != CUDA_SUCCESS)
		wl_fail("cuCtxDestroy = %d", (int)r);
	wl_say("api_cuda_caller: done");
	return 0;
}
