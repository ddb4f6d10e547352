// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_blame_cxx DIR: wl_blame in C++ over the CUDA driver API (run on the libcuda test double:
 * LD_LIBRARY_PATH=build/doubles). cuInit in wl::Gpu::init(), the fork in
 * wl::Pool::spawn(bool), the child's ioctl on the nvidiactl fd it inherited in
 * wl::worker::step(int). The stack test checks that the report names these functions,
 * demangled, at the lines of the BLAME-* markers.
 */
#include <cuda.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#define NOINLINE __attribute__((noinline))

[[noreturn]] static void fail(const char *what)
{
	fprintf(stderr, "wl_blame_cxx: %s\n", what);
	exit(1);
}

namespace wl
{

class Gpu
{
      public:
	NOINLINE void init();
	CUresult status = CUDA_ERROR_NOT_INITIALIZED;
};

void Gpu::init()
{
	status = cuInit(0); /* BLAME-INIT */
	if (status != CUDA_SUCCESS)
		fail("cuInit failed");
	asm volatile("");
}

namespace worker
{

/* The nvidiactl fd the parent's cuInit opened (the child inherits it). */
static int inherited_ctl_fd()
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char link[300], target[512];
	int fd = -1;

	while (d && (e = readdir(d)) && fd < 0) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (n >= 10 && !strcmp(target + n - 10, "/nvidiactl"))
			fd = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return fd;
}

NOINLINE void step(int fd)
{
	unsigned char card_info[72] = {};

	/* NV_ESC_CARD_INFO on the parent's nvidiactl: the child uses inherited GPU state */
	if (ioctl(fd, 0xC04846C8ul, card_info) < 0) /* BLAME-USE */
		fail("CARD_INFO ioctl failed");
	asm volatile("");
}

} // namespace worker

struct Pool {
	NOINLINE static pid_t spawn(bool use);
};

pid_t Pool::spawn(bool use)
{
	pid_t pid = fork(); /* BLAME-FORK */

	if (pid < 0)
		fail("fork failed");
	if (!pid) {
		int fd = worker::inherited_ctl_fd();

		if (fd < 0)
			_exit(2);
		if (use)
			worker::step(fd);
		_exit(0);
	}
	asm volatile("");
	return pid;
}

} // namespace wl

int main(int argc, char **argv)
{
	wl::Gpu gpu;
	int status = 0;
	pid_t pid;

	if (argc < 2 || setenv("GPUCTX_FAKEGPU_DIR", argv[1], 1))
		fail("usage: wl_blame_cxx FAKEGPU_DIR");
	gpu.init();
	pid = wl::Pool::spawn(true);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		fail("child failed");
	return 0;
}
