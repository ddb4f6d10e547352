// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_inline DIR: wl_blame's shape with the child's ioctl in a static function inlined into
 * its caller (-O2): use_ctl() is inlined into worker_step(). The stack test checks that the
 * use stack shows use_ctl at the ioctl's line and worker_step at the line of the call (the
 * INLINE-* markers), both at the same address.
 */
#include <string.h>

#include "gpu_uapi.h"

#define NOINLINE __attribute__((noinline))

static struct gpu_ctx g;

static NOINLINE void setup_gpu(const char *dir)
{
	gpu_init(dir, &g);
	asm volatile("");
}

static inline __attribute__((always_inline)) void use_ctl(int fd)
{
	struct nv_card_info info[1];

	memset(info, 0, sizeof(info));
	if (ioctl(fd, NV_IOCTL_CARD_INFO, info) < 0) /* INLINE-IOCTL */
		wl_fail("CARD_INFO: %s", strerror(errno));
}

static NOINLINE void worker_step(void)
{
	use_ctl(g.ctl_fd); /* INLINE-CALL */
	asm volatile("");
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	pid_t pid;
	int status;

	setup_gpu(dir);
	pid = wl_fork();
	if (!pid) {
		worker_step();
		exit(0);
	}
	status = wl_wait(pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		wl_fail("child %d: unexpected wait status 0x%x", (int)pid, status);
	gpu_fini(&g);
	return 0;
}
