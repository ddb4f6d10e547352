// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_fork_exec_own DIR: the parent initialises the GPU, forks, and the child execs this
 * program with "--child DIR PARENT_CTL_FD". The exec'd child checks that O_CLOEXEC closed the
 * inherited nvidiactl fd, opens its own nvidiactl and allocates its own client: the clean way.
 */
#include "gpu_uapi.h"

static int child_main(const char *dir, const char *parent_fd)
{
	int old = parent_fd ? atoi(parent_fd) : -1;
	__u32 client, device;
	int fd;

	if (old >= 0) {
		if (fcntl(old, F_GETFD) >= 0 || errno != EBADF)
			wl_fail("child: parent's nvidiactl fd %d survived exec despite O_CLOEXEC",
				old);
		wl_say("child: parent's nvidiactl fd %d was closed by exec (O_CLOEXEC)", old);
	}
	fd = wl_open(dir, "nvidiactl", O_RDWR | O_CLOEXEC);
	nv_check_version(fd);
	client = nv_alloc_client(fd);
	device = gpu_alloc(fd, client, client, NV01_DEVICE_0);
	nv_expect_ok(nv_rm_control(fd, client, device, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2),
		     "child RM_CONTROL");
	nv_expect_ok(nv_rm_free(fd, client, 0, client), "child RM_FREE client");
	close(fd);
	wl_say("child: own client 0x%x done, exiting 0", client);
	return 0;
}

int main(int argc, char **argv)
{
	struct gpu_ctx g;
	char fdbuf[16];
	const char *dir;
	pid_t pid;

	if (argc >= 3 && !strcmp(argv[1], "--child"))
		return child_main(argv[2], argc >= 4 ? argv[3] : NULL);
	dir = wl_dir_arg(argc, argv);
	gpu_init(dir, &g);
	pid = wl_fork();
	if (!pid) {
		char *args[] = {argv[0], "--child", (char *)dir, fdbuf, NULL};

		snprintf(fdbuf, sizeof(fdbuf), "%d", g.ctl_fd);
		wl_say("child: exec %s --child %s %s", argv[0], dir, fdbuf);
		wl_exec_self(args);
	}
	wl_say("parent: forked child %d", (int)pid);
	wl_wait_ok(pid, "child");
	gpu_fini(&g);
	wl_say("parent: done");
	return 0;
}
