// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_double_fork DIR: gpu_init, fork a child that forks a grandchild; the grandchild (two
 * forks away, no exec) allocates a channel group on the inherited nvidiactl fd.
 */
#include "gpu_uapi.h"

static __attribute__((noreturn)) void grandchild(const struct gpu_ctx *g)
{
	__u32 tsg = 0;

	wl_say("grandchild: RM_ALLOC on inherited nvidiactl fd %d", g->ctl_fd);
	nv_expect_ok(nv_rm_alloc(g->ctl_fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A, &tsg),
		     "grandchild RM_ALLOC channel group");
	exit(0);
}

static __attribute__((noreturn)) void child(const struct gpu_ctx *g)
{
	pid_t pid = wl_fork();

	if (!pid)
		grandchild(g);
	wl_say("child: forked grandchild %d", (int)pid);
	wl_wait_ok(pid, "grandchild");
	exit(0);
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	struct gpu_ctx g;
	pid_t pid;

	gpu_init(dir, &g);
	pid = wl_fork();
	if (!pid)
		child(&g);
	wl_say("parent: forked child %d", (int)pid);
	wl_wait_ok(pid, "child");
	gpu_fini(&g);
	wl_say("parent: done");
	return 0;
}
