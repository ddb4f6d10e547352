// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_fork_child_ioctl DIR: the parent initialises the GPU and forks; the child (no exec) uses
 * the inherited nvidiactl fd on the parent's RM client: a new channel group and a control
 * call. The RM accepts both (same open file), so the child's calls succeed silently.
 */
#include "gpu_uapi.h"

static __attribute__((noreturn)) void child(const struct gpu_ctx *g)
{
	__u32 tsg = 0;

	wl_say("child: using inherited nvidiactl fd %d, parent client 0x%x", g->ctl_fd, g->client);
	nv_expect_ok(nv_rm_alloc(g->ctl_fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A, &tsg),
		     "child RM_ALLOC channel group");
	nv_expect_ok(nv_rm_control(g->ctl_fd, g->client, tsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE),
		     "child RM_CONTROL");
	wl_say("child: RM accepted both calls (NV_OK), exiting 0");
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
