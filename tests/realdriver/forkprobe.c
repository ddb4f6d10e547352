// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forkprobe cuda|hip: what a GPU runtime (the real one or the test double, whichever the
 * dynamic loader finds) does in a child forked after it was initialised.
 *
 * cuda (libcuda.so.1): the parent calls cuInit and cuDeviceGetCount (what Numba's
 * get_device_count() does), then forks; the child makes the calls a client makes first (the
 * device count, the current context, an error name), then cuInit, then the device count
 * again. No context: the real driver cannot make one over the emulated kernel driver
 * (docs/gpu-validation.md).
 * hip (libamdhip64.so.5): the parent calls hipInit, hipGetDeviceCount, hipSetDevice and one
 * hipMalloc(1 MiB); the child hipGetDeviceCount, hipMalloc of 64 MiB and of 1 MiB, hipInit,
 * hipGetDevice. Not hipFree: the real runtime waits there for a GPU.
 *
 * Each call is announced on stderr ("@ NAME") with one write() before it is made, so that a
 * syscall trace (strace -f) attributes the ioctls between two marks to the call between them;
 * the result goes to stdout as "NAME = CODE" (tests/realdriver/fork_compare.sh compares them).
 * Exits 0 when the parent's initialisation succeeded and the child ran.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int CUresult; /* and hipError_t: both are int */

static void *lib;

static void *sym(const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		printf("dlsym %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void mark(const char *who, const char *call)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "@ %s%s\n", who, call);

	if (write(2, buf, n) != n)
		exit(2);
}

static CUresult say(const char *who, const char *call, CUresult r)
{
	printf("%s%s = %d\n", who, call, r);
	fflush(stdout);
	return r;
}

#define CALL(who, name, args, ...)                                                                 \
	(mark(who, name), say(who, name, ((CUresult(*) args)sym(name))(__VA_ARGS__)))

static int cuda_child(void)
{
	const char *s = NULL;
	void *ctx = (void *)1;
	int n = -1, dev = -1;

	CALL("child: ", "cuDeviceGetCount", (int *), &n);
	CALL("child: ", "cuCtxGetCurrent", (void **), &ctx);
	CALL("child: ", "cuDeviceGet", (int *, int), &dev, 0);
	CALL("child: ", "cuDriverGetVersion", (int *), &n);
	CALL("child: ", "cuGetErrorName", (CUresult, const char **), 3, &s);
	CALL("child: ", "cuInit", (unsigned int), 0);
	n = -1;
	CALL("child: ", "cuDeviceGetCount", (int *), &n);
	printf("child: device count %d\n", n);
	return 0;
}

static int cuda_parent(void)
{
	int n = -1;

	if (CALL("", "cuInit", (unsigned int), 0))
		return 1;
	CALL("", "cuDeviceGetCount", (int *), &n);
	printf("device count %d\n", n);
	return n == 1 ? 0 : 1;
}

static int hip_child(void)
{
	void *p = NULL, *q = NULL;
	int n = -1;

	CALL("child: ", "hipGetDeviceCount", (int *), &n);
	printf("child: device count %d\n", n);
	CALL("child: ", "hipMalloc", (void **, size_t), &p, (size_t)64 << 20);
	CALL("child: ", "hipMalloc", (void **, size_t), &q, (size_t)1 << 20);
	CALL("child: ", "hipInit", (unsigned int), 0);
	CALL("child: ", "hipGetDevice", (int *), &n);
	return 0;
}

static int hip_parent(void)
{
	void *p = NULL;
	int n = -1;

	if (CALL("", "hipInit", (unsigned int), 0))
		return 1;
	CALL("", "hipGetDeviceCount", (int *), &n);
	printf("device count %d\n", n);
	if (n != 1 || CALL("", "hipSetDevice", (int), 0))
		return 1;
	return CALL("", "hipMalloc", (void **, size_t), &p, (size_t)1 << 20) ? 1 : 0;
}

int main(int argc, char **argv)
{
	int hip = argc == 2 && !strcmp(argv[1], "hip"), status;
	pid_t pid;

	if (argc != 2 || (!hip && strcmp(argv[1], "cuda"))) {
		fprintf(stderr, "usage: forkprobe cuda|hip\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	lib = dlopen(hip ? "libamdhip64.so.5" : "libcuda.so.1", RTLD_NOW);
	if (!lib) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	if (hip ? hip_parent() : cuda_parent())
		return 1;
	mark("", "fork");
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		status = hip ? hip_child() : cuda_child();
		mark("child: ", "exit");
		_exit(status);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
