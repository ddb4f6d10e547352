// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * amd_hip: Debian's real HIP runtime (libamdhip64 5.2, ROCr, libhsakmt) on the emulated kernel
 * driver, run inside tests/realdriver/amd_ns.sh (which puts fakegpu's files at /dev/kfd and
 * /dev/dri/renderD128 and its KFD topology in sysfs).
 *
 * Parent: hipInit, hipGetDeviceCount, hipGetDeviceProperties (name, gcnArchName),
 * hipSetDevice(0), hipMalloc(1 MiB) twice, fork, wait. Not hipFree: it waits for the device
 * to go idle (it creates the AQL queues, submits a barrier and spins on the completion signal
 * that only the GPU would write), the stopping point documented in docs/gpu-validation.md.
 * Child (after the parent's successful init): hipGetDeviceCount, hipMalloc(64 MiB) and
 * hipMalloc(1 MiB). The runtime answers from what it inherited: the count, and 1 MiB carved
 * from the parent's memory block (no ioctl); the 64 MiB needs a new block, which libhsakmt
 * refuses without an ioctl (it marks itself forked in a pthread_atfork handler), so that
 * hipMalloc returns hipErrorOutOfMemory (2).
 * --exec: the same parent, then a child that execs /bin/true at once instead (what a Python
 * subprocess.run or a spawn start does): it holds no GPU file, nothing to diagnose.
 * Exits 0 when every call returned what the real runtime returns over fakegpu (the values are
 * documented in docs/gpu-validation.md); prints each call and its result.
 */
#include <hip/hip_runtime_api.h>

#include <stdint.h>

#include "gpu_uapi.h"

#define MIB (1 << 20)

static void want(const char *call, hipError_t r, hipError_t expect)
{
	wl_say("%s = %d (%s)", call, (int)r, hipGetErrorName(r));
	if (r != expect)
		wl_fail("%s returned %d, expected %d", call, (int)r, (int)expect);
}

/* The forked child: the calls a DataLoader worker would make first. */
static int child(void)
{
	int count = -1;
	void *p = NULL, *big = NULL;
	hipError_t a, b, c;

	a = hipGetDeviceCount(&count);
	wl_say("child: hipGetDeviceCount = %d (%s), count %d", (int)a, hipGetErrorName(a), count);
	c = hipMalloc(&big, 64 * MIB);
	wl_say("child: hipMalloc(64 MiB) = %d (%s)", (int)c, hipGetErrorName(c));
	b = hipMalloc(&p, MIB);
	wl_say("child: hipMalloc(1 MiB) = %d (%s) %p", (int)b, hipGetErrorName(b), p);
	return a == hipSuccess && count == 1 && b == hipSuccess && c == hipErrorOutOfMemory ? 0 : 1;
}

int main(int argc, char **argv)
{
	int exec_child = argc > 1 && !strcmp(argv[1], "--exec");
	hipDeviceProp_t prop;
	int count = -1;
	void *p = NULL, *q = NULL;
	pid_t pid;

	want("hipInit(0)", hipInit(0), hipSuccess);
	want("hipGetDeviceCount", hipGetDeviceCount(&count), hipSuccess);
	wl_say("device count %d", count);
	if (count != 1)
		wl_fail("expected one device, got %d", count);
	memset(&prop, 0, sizeof(prop));
	want("hipGetDeviceProperties(0)", hipGetDeviceProperties(&prop, 0), hipSuccess);
	wl_say("device 0: name '%s' gcnArchName '%s' totalGlobalMem %zu", prop.name,
	       prop.gcnArchName, prop.totalGlobalMem);
	if (strcmp(prop.name, "AMD Instinct MI210") || strncmp(prop.gcnArchName, "gfx90a", 6))
		wl_fail("not the emulated MI210 (gfx90a)");
	want("hipSetDevice(0)", hipSetDevice(0), hipSuccess);
	want("hipMalloc(1 MiB)", hipMalloc(&p, MIB), hipSuccess);
	wl_say("device pointer %p", p);
	want("hipMalloc(1 MiB) again", hipMalloc(&q, MIB), hipSuccess);
	if (q == p)
		wl_fail("two allocations at one address");
	pid = wl_fork();
	if (pid == 0 && exec_child) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid == 0)
		_exit(child());
	/* exits 0 when the child's calls returned what the real runtime returns */
	wl_wait_ok(pid, "child");
	wl_say("amd_hip: ok");
	return 0;
}
