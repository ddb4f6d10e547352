// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * api_cuda_fork_query DEVICE_DIR MODE: cuInit and three cuDeviceGetCount in the parent (a
 * healthy process: no probe of gpuctx's may hit those), then a fork whose child makes only
 * calls the libcuda double answers in user space, with no ioctl (issue 42):
 *   count    cuDeviceGetCount: refused, CUDA_ERROR_NOT_INITIALIZED (3)
 *   errname  cuGetErrorName(3) then cuDeviceGetCount: a table look-up that works, then refused
 *   lookup   cuGetErrorName(3) only: it works, but it is still a call in the child
 *   none     nothing: the child only exits
 *
 *   LD_LIBRARY_PATH=build/doubles build/workloads/api_cuda_fork_query /tmp/fg count
 * Exits 0 when every call returned what the double should return.
 */
#include <cuda.h>

#include <sys/wait.h>

#include "gpu_uapi.h"

static void expect(const char *call, CUresult r, CUresult want)
{
	wl_say("%s = %d", call, (int)r);
	if (r != want)
		wl_fail("%s returned %d, expected %d", call, (int)r, (int)want);
}

static int child(const char *mode)
{
	const char *s = NULL;
	int n = -1;

	if (!strcmp(mode, "errname") || !strcmp(mode, "lookup"))
		expect("child: cuGetErrorName(3)", cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &s),
		       CUDA_SUCCESS);
	if (!strcmp(mode, "count") || !strcmp(mode, "errname"))
		expect("child: cuDeviceGetCount", cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv), *mode = argc > 2 ? argv[2] : "count";
	int status, n = 0;
	pid_t pid;

	if (setenv("GPUCTX_FAKEGPU_DIR", dir, 1))
		wl_fail("setenv: %s", strerror(errno));
	expect("cuInit(0)", cuInit(0), CUDA_SUCCESS);
	for (int i = 0; i < 3; i++)
		expect("cuDeviceGetCount", cuDeviceGetCount(&n), CUDA_SUCCESS);
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(child(mode));
	if (waitpid(pid, &status, 0) != pid)
		wl_fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("the child did not see the expected results (status 0x%x)", status);
	expect("cuDeviceGetCount after the fork", cuDeviceGetCount(&n), CUDA_SUCCESS);
	wl_say("api_cuda_fork_query %s: ok", mode);
	return 0;
}
