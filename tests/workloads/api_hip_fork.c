// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * api_hip_fork DEVICE_DIR [--real]: the HIP runtime API on the libamdhip64 test double
 * (tests/doubles/libhip_double.c), then a fork whose child tries to use HIP.
 *
 * Parent: hipInit, hipDriverGetVersion, hipGetDeviceCount, hipSetDevice(0),
 * hipDevicePrimaryCtxRetain, hipCtxCreate + hipCtxDestroy, hipMalloc(1 MiB) + hipFree, fork,
 * wait, hipDevicePrimaryCtxRelease.
 * Child: hipMalloc fails and hipInit answers from the inherited state, with no ioctl, as the real
 * runtime does (docs/gpu-validation.md): hipErrorOutOfMemory (2), then hipSuccess; exits 0 if
 * they do.
 *
 *   LD_LIBRARY_PATH=build/doubles build/workloads/api_hip_fork /tmp/fg
 * --real: against Debian's real libamdhip64 on a machine without an AMD GPU (no
 * LD_LIBRARY_PATH), which answers with the codes of gpu-facts 4.2 (hipInit 101, ...):
 *   build/workloads/api_hip_fork /tmp/fg --real
 * Exits 0 when every call returned what the library in use should return.
 */
#include <hip/hip_runtime_api.h>

#include <stdint.h>
#include <sys/wait.h>

#include "gpu_uapi.h"

static int real; /* --real: the real runtime without a GPU */

/* Print the call and its result; fail unless it is what the library in use returns. */
static void check(const char *call, hipError_t r, hipError_t want_double, hipError_t want_real)
{
	hipError_t want = real ? want_real : want_double;

	wl_say("%s = %d (%s)", call, (int)r, hipGetErrorName(r));
	if (r != want)
		wl_fail("%s returned %d, expected %d", call, (int)r, (int)want);
}

static int child(void)
{
	void *p = NULL;
	hipError_t a, b;

	a = hipMalloc(&p, 1 << 20);
	wl_say("child: hipMalloc(1 MiB) = %d (%s)", (int)a, hipGetErrorName(a));
	b = hipInit(0);
	wl_say("child: hipInit(0) = %d (%s)", (int)b, hipGetErrorName(b));
	if (real)
		return a == hipErrorInvalidDevice && b == hipErrorInvalidDevice ? 0 : 1;
	return a == hipErrorOutOfMemory && b == hipSuccess ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	hipCtx_t pctx = NULL, ctx = NULL;
	int count = -1, ver = 0, status;
	void *p = NULL;
	hipError_t r;
	pid_t pid;

	real = argc > 2 && !strcmp(argv[2], "--real");
	if (setenv("GPUCTX_FAKEGPU_DIR", dir, 1))
		wl_fail("setenv: %s", strerror(errno));
	wl_say("api_hip_fork: device dir %s%s", dir, real ? " (real runtime, no GPU)" : "");

	check("hipInit(0)", hipInit(0), hipSuccess, hipErrorInvalidDevice);
	r = hipDriverGetVersion(&ver);
	check("hipDriverGetVersion", r, hipSuccess, hipSuccess);
	wl_say("driver version %d", ver);
	r = hipGetDeviceCount(&count);
	check("hipGetDeviceCount", r, hipSuccess, hipErrorNoDevice);
	wl_say("device count %d", count);
	check("hipSetDevice(0)", hipSetDevice(0), hipSuccess, hipErrorInvalidDevice);
	check("hipDevicePrimaryCtxRetain(0)", hipDevicePrimaryCtxRetain(&pctx, 0), hipSuccess,
	      hipErrorInvalidDevice);
	wl_say("primary context %p", (void *)pctx);
	check("hipCtxCreate(0)", hipCtxCreate(&ctx, 0, 0), hipSuccess, hipErrorInvalidDevice);
	wl_say("created context %p", (void *)ctx);
	check("hipCtxDestroy", hipCtxDestroy(ctx), hipSuccess, hipErrorInvalidDevice);
	check("hipMalloc(1 MiB)", hipMalloc(&p, 1 << 20), hipSuccess, hipErrorInvalidDevice);
	wl_say("device pointer %p", p);
	check("hipFree", hipFree(p), hipSuccess, hipErrorInvalidDevice);

	pid = fork();
	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(child());
	if (waitpid(pid, &status, 0) != pid)
		wl_fail("waitpid: %s", strerror(errno));
	wl_say("child %d exited with status 0x%x", (int)pid, status);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("the child did not see the expected errors");

	check("hipDevicePrimaryCtxRelease(0)", hipDevicePrimaryCtxRelease(0), hipSuccess,
	      hipErrorInvalidDevice);
	wl_say("api_hip_fork: ok");
	return 0;
}
