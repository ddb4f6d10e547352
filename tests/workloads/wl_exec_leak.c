// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_exec_leak DIR: opens nvidiactl WITHOUT O_CLOEXEC (nvidia0 with it), allocates a client,
 * then execs itself with "--after-exec DIR CTL_FD CLIENT DEV_FD". The new program image still
 * holds the nvidiactl fd (leaked across exec), uses it for an RM_CONTROL on the old client,
 * and checks that nvidia0 was closed.
 */
#include "gpu_uapi.h"

static int after_exec(const char *ctl_arg, const char *client_arg, const char *dev_arg)
{
	int ctl = atoi(ctl_arg), dev = dev_arg ? atoi(dev_arg) : -1;
	__u32 client = client_arg ? (__u32)strtoul(client_arg, NULL, 0) : 0;

	if (fcntl(ctl, F_GETFD) < 0)
		wl_fail("after exec: leaked nvidiactl fd %d is not open: %s", ctl, strerror(errno));
	wl_say("after exec: nvidiactl fd %d is still open (no O_CLOEXEC)", ctl);
	if (dev >= 0) {
		if (fcntl(dev, F_GETFD) >= 0 || errno != EBADF)
			wl_fail("after exec: nvidia0 fd %d survived exec despite O_CLOEXEC", dev);
		wl_say("after exec: nvidia0 fd %d was closed (O_CLOEXEC)", dev);
	}
	nv_expect_ok(
	    nv_rm_control(ctl, client, client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2),
	    "after exec RM_CONTROL");
	wl_say("after exec: done");
	return 0;
}

int main(int argc, char **argv)
{
	char ctlbuf[16], clientbuf[16], devbuf[16];
	const char *dir;
	__u32 client;
	int ctl, dev;

	if (argc >= 4 && !strcmp(argv[1], "--after-exec"))
		return after_exec(argv[3], argc >= 5 ? argv[4] : NULL, argc >= 6 ? argv[5] : NULL);
	dir = wl_dir_arg(argc, argv);
	ctl = wl_open(dir, "nvidiactl", O_RDWR);
	dev = wl_open(dir, "nvidia0", O_RDWR | O_CLOEXEC);
	nv_check_version(ctl);
	client = nv_alloc_client(ctl);
	nv_register_fd(dev, ctl);
	snprintf(ctlbuf, sizeof(ctlbuf), "%d", ctl);
	snprintf(clientbuf, sizeof(clientbuf), "0x%x", client);
	snprintf(devbuf, sizeof(devbuf), "%d", dev);
	{
		char *args[] = {argv[0],   "--after-exec", (char *)dir, ctlbuf,
				clientbuf, devbuf,	   NULL};

		wl_say("exec %s --after-exec %s %s %s %s", argv[0], dir, ctlbuf, clientbuf, devbuf);
		wl_exec_self(args);
	}
}
