// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuda double: what reaches the emulated driver. Its device files (under
 * $GPUCTX_FAKEGPU_DIR), the RM objects made and freed with ioctls on them, and cuInit's driver
 * work in the process that first calls it and again in a forked child.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libcuda_double.h"

static const char *dev_dir(void)
{
	const char *d = getenv("GPUCTX_FAKEGPU_DIR");

	return d && *d ? d : "/dev";
}

static int dev_open(const char *name, int flags)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dev_dir(), name);
	return open(path, O_RDWR | flags);
}

/* libcuda 535 opens nvidiactl without O_CLOEXEC and sets the flag just after. */
static int ctl_open(void)
{
	int fd = dev_open("nvidiactl", 0);

	if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int r;

	do {
		r = ioctl(fd, cmd, arg);
	} while (r < 0 && errno == EINTR);
	return r;
}

/* RM_ALLOC (NVOS64) on nvidiactl; returns the RM status, or NV_ERR_INVALID_STATE. */
__u32 rm_alloc(__u32 parent, __u32 cls, __u32 *handle)
{
	struct nvos64_params p = {
	    .hRoot = cls == NV01_ROOT_CLIENT ? 0 : G.client,
	    .hObjectParent = cls == NV01_ROOT_CLIENT ? 0 : parent,
	    .hClass = cls,
	};

	if (xioctl(G.ctl_fd, NV_IOCTL_RM_ALLOC, &p) < 0)
		return NV_ERR_INVALID_STATE;
	dlog("  RM_ALLOC %s(0x%x) parent 0x%x -> 0x%x status 0x%x", nv_class_name(cls), cls, parent,
	     p.hObjectNew, p.status);
	if (p.status == NV_OK)
		*handle = p.hObjectNew;
	return p.status;
}

__u32 rm_free(__u32 parent, __u32 handle)
{
	struct nvos00_params p = {.hRoot = G.client, .hObjectParent = parent, .hObjectOld = handle};

	if (!handle)
		return NV_OK;
	if (xioctl(G.ctl_fd, NV_IOCTL_RM_FREE, &p) < 0)
		return NV_ERR_INVALID_STATE;
	dlog("  RM_FREE 0x%x -> status 0x%x", handle, p.status);
	return p.status;
}

/* RM_ALLOC_MEMORY (NVOS02) on nvidia0: system memory the process could mmap through dev_fd. */
__u32 rm_alloc_memory(__u32 cls, size_t size, __u32 *handle)
{
	struct nvos02_with_fd p = {
	    .hRoot = G.client,
	    .hObjectParent = G.device,
	    .hClass = cls,
	    .limit = size ? size - 1 : 0,
	    .fd = G.dev_fd,
	};

	if (xioctl(G.dev_fd, NV_IOCTL_RM_ALLOC_MEMORY, &p) < 0)
		return NV_ERR_INVALID_STATE;
	dlog("  RM_ALLOC_MEMORY class 0x%x size %zu -> 0x%x status 0x%x", cls, size, p.hObjectNew,
	     p.status);
	if (p.status == NV_OK)
		*handle = p.hObjectNew;
	return p.status;
}

static void close_fds(void)
{
	if (G.uvm_fd >= 0)
		close(G.uvm_fd);
	if (G.dev_fd >= 0)
		close(G.dev_fd);
	if (G.ctl_fd >= 0)
		close(G.ctl_fd);
	G.ctl_fd = G.dev_fd = G.uvm_fd = -1;
}

/* cuInit's driver work, under the lock. */
CUresult driver_open(void)
{
	struct nv_rm_api_version ver = {.cmd = NV_RM_API_VERSION_CMD_RELAXED};
	struct nv_card_info cards[DBL_MAX_DEVICES];
	struct nv_register_fd reg;
	struct uvm_initialize_params uvm = {.flags = 0};
	int i;

	G.ctl_fd = ctl_open();
	if (G.ctl_fd < 0)
		return CUDA_ERROR_NO_DEVICE;
	strcpy(ver.versionString, "595.45.04");
	if (xioctl(G.ctl_fd, NV_IOCTL_CHECK_VERSION_STR, &ver) < 0 ||
	    ver.reply != NV_RM_API_VERSION_REPLY_RECOGNIZED)
		goto fail_sys;
	memset(cards, 0, sizeof(cards));
	if (xioctl(G.ctl_fd, _IOWR(NV_IOCTL_MAGIC, NV_ESC_CARD_INFO, cards), cards) < 0)
		goto fail_sys;
	G.ndev = 0;
	for (i = 0; i < DBL_MAX_DEVICES; i++)
		if (cards[i].valid)
			G.ndev++;
	if (!G.ndev)
		goto fail_nodev;
	if (rm_alloc(0, NV01_ROOT_CLIENT, &G.client) != NV_OK)
		goto fail_sys;
	if (rm_alloc(G.client, NV01_DEVICE_0, &G.device) != NV_OK ||
	    rm_alloc(G.device, NV20_SUBDEVICE_0, &G.subdevice) != NV_OK)
		goto fail_client;

	G.dev_fd = dev_open("nvidia0", O_CLOEXEC);
	if (G.dev_fd < 0)
		goto fail_client_nodev;
	reg.ctl_fd = G.ctl_fd;
	if (xioctl(G.dev_fd, NV_IOCTL_REGISTER_FD, &reg) < 0)
		goto fail_client;

	G.uvm_fd = dev_open("nvidia-uvm", O_CLOEXEC);
	if (G.uvm_fd < 0)
		goto fail_client_nodev;
	if (xioctl(G.uvm_fd, UVM_INITIALIZE, &uvm) < 0 || uvm.rmStatus != NV_OK)
		goto fail_client;
	return CUDA_SUCCESS;

fail_client_nodev:
	rm_free(0, G.client);
	G.client = 0;
fail_nodev:
	close_fds();
	return CUDA_ERROR_NO_DEVICE;
fail_client:
	rm_free(0, G.client);
	G.client = 0;
fail_sys:
	close_fds();
	return CUDA_ERROR_OPERATING_SYSTEM;
}

/*
 * cuInit in a forked child, under the lock: what libcuda 535 does there (fork_compare.sh). A
 * new client on the inherited nvidiactl fd, the inherited nvidia-uvm fd asked again, a new
 * nvidia0 fd; the parent's nvidia0 fd stays open, unused.
 */
CUresult driver_reinit_child(void)
{
	struct {
		__u8 pageableMemAccess;
		__u32 rmStatus;
	} pma = {0};
	struct nv_register_fd reg;
	int fd;

	forget_parent_state();
	G.client = G.device = G.subdevice = 0;
	if (rm_alloc(0, NV01_ROOT_CLIENT, &G.client) != NV_OK ||
	    rm_alloc(G.client, NV01_DEVICE_0, &G.device) != NV_OK ||
	    rm_alloc(G.device, NV20_SUBDEVICE_0, &G.subdevice) != NV_OK)
		return CUDA_ERROR_OPERATING_SYSTEM;
	if (xioctl(G.uvm_fd, UVM_PAGEABLE_MEM_ACCESS, &pma) < 0 || pma.rmStatus != NV_OK)
		return CUDA_ERROR_OPERATING_SYSTEM;
	fd = dev_open("nvidia0", O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_NO_DEVICE;
	reg.ctl_fd = G.ctl_fd;
	if (xioctl(fd, NV_IOCTL_REGISTER_FD, &reg) < 0) {
		close(fd);
		return CUDA_ERROR_OPERATING_SYSTEM;
	}
	G.dev_fd = fd;
	G.init_pid = getpid();
	return CUDA_SUCCESS;
}
