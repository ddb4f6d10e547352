// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nv_cuda [--fork|--fork-query] [-o FILE]: the real libcuda.so.1 (found by the dynamic loader)
 * driven as far as it goes, one line per call on stdout (or FILE): "NAME = RESULT (ERROR_NAME)". No
 * cuda.h: the few entry points are looked up with dlsym, under the names libcuda 535 exports.
 *
 * Parent: cuInit, cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName,
 * cuDeviceTotalMem, cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuMemAlloc, cuMemFree.
 * --fork: after that, a child (named "nv_cuda_child") calls cuInit, cuDeviceGetCount and
 * cuCtxSetCurrent(parent's context) and exits with cuInit's result; the parent reports it.
 * --fork-query: the child calls cuDeviceGetCount only, and exits with its result.
 * Exits 0 when cuInit and the device calls succeeded (what the test needs to go on), else 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int CUresult;

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

static const char *err_name(CUresult r)
{
	CUresult (*get_name)(CUresult, const char **) = sym("cuGetErrorName");
	const char *s = NULL;

	return get_name(r, &s) == 0 && s ? s : "?";
}

static CUresult say(const char *call, CUresult r)
{
	printf("%s = %d (%s)\n", call, r, err_name(r));
	fflush(stdout);
	return r;
}

static int child(void *ctx)
{
	CUresult (*init)(unsigned int) = sym("cuInit");
	CUresult (*count)(int *) = sym("cuDeviceGetCount");
	CUresult (*set_current)(void *) = sym("cuCtxSetCurrent");
	CUresult r;
	int n = -1;

	prctl(PR_SET_NAME, "nv_cuda_child");
	r = say("child: cuInit(0)", init(0));
	say("child: cuDeviceGetCount", count(&n));
	printf("child: device count %d\n", n);
	say("child: cuCtxSetCurrent(parent's context)", set_current(ctx));
	return r;
}

/* --fork-query: a child whose only driver call is a device query, which libcuda refuses in
 * user space (no ioctl): gpuctx sees it only through its own probes on the child. */
static int child_query(void)
{
	CUresult (*count)(int *) = sym("cuDeviceGetCount");
	int n = -1;

	prctl(PR_SET_NAME, "nv_cuda_child");
	return say("child: cuDeviceGetCount", count(&n));
}

int main(int argc, char **argv)
{
	int do_fork = 0, query = 0, i;
	CUresult (*init)(unsigned int), r;
	void *ctx = NULL;
	unsigned long long dptr = 0;
	size_t total = 0;
	char name[128] = "";
	int n = -1, ver = 0, dev = -1, status;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fork")) {
			do_fork = 1;
		} else if (!strcmp(argv[i], "--fork-query")) {
			do_fork = query = 1;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			if (!freopen(argv[++i], "w", stdout))
				return 2;
		} else {
			fprintf(stderr, "usage: nv_cuda [--fork|--fork-query] [-o FILE]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		printf("dlopen libcuda.so.1: %s\n", dlerror());
		return 2;
	}
	init = sym("cuInit");
	r = say("cuInit(0)", init(0));
	say("cuDriverGetVersion", ((CUresult(*)(int *))sym("cuDriverGetVersion"))(&ver));
	printf("driver version %d\n", ver);
	if (r)
		return 1;
	if (say("cuDeviceGetCount", ((CUresult(*)(int *))sym("cuDeviceGetCount"))(&n)))
		return 1;
	printf("device count %d\n", n);
	if (say("cuDeviceGet(0)", ((CUresult(*)(int *, int))sym("cuDeviceGet"))(&dev, 0)))
		return 1;
	if (say("cuDeviceGetName",
		((CUresult(*)(char *, int, int))sym("cuDeviceGetName"))(name, sizeof(name), dev)))
		return 1;
	printf("device name \"%s\"\n", name);
	if (!say("cuDeviceTotalMem",
		 ((CUresult(*)(size_t *, int))sym("cuDeviceTotalMem_v2"))(&total, dev)))
		printf("device memory %zu\n", total);
	if (!say("cuDevicePrimaryCtxRetain",
		 ((CUresult(*)(void **, int))sym("cuDevicePrimaryCtxRetain"))(&ctx, dev)) &&
	    !say("cuCtxSetCurrent", ((CUresult(*)(void *))sym("cuCtxSetCurrent"))(ctx)) &&
	    !say("cuMemAlloc(1 MiB)",
		 ((CUresult(*)(unsigned long long *, size_t))sym("cuMemAlloc_v2"))(&dptr, 1 << 20)))
		say("cuMemFree", ((CUresult(*)(unsigned long long))sym("cuMemFree_v2"))(dptr));
	if (!do_fork)
		return 0;
	pid = fork();
	if (pid < 0) {
		printf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
		_exit(query ? child_query() : child(ctx));
	if (waitpid(pid, &status, 0) != pid) {
		printf("waitpid: %s\n", strerror(errno));
		return 1;
	}
	if (WIFEXITED(status))
		printf("child %d exited %d\n", (int)pid, WEXITSTATUS(status));
	else
		printf("child %d died by signal %d\n", (int)pid, WTERMSIG(status));
	return 0;
}
