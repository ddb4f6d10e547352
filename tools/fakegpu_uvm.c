// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu's NVIDIA UVM (nvidia-uvm): raw command numbers, parameters read and written in the
 * caller's memory; nothing but "is this fd initialised" is checked, so a forked child is
 * accepted (shared/reference/gpu-facts.md §1.5).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define GPU_UAPI_NO_HELPERS

#include <errno.h>
#include <string.h>

#include "fakegpu.h"
#include "gpu_uapi.h"

struct uvm_cmd {
	unsigned int cmd;
	size_t size;
	size_t status_off;
	bool needs_init;
};

static const struct uvm_cmd uvm_cmds[] = {
    {UVM_INITIALIZE, sizeof(struct uvm_initialize_params),
     offsetof(struct uvm_initialize_params, rmStatus), false},
    {UVM_MM_INITIALIZE, sizeof(struct uvm_mm_initialize_params),
     offsetof(struct uvm_mm_initialize_params, rmStatus), false},
    {UVM_REGISTER_GPU, sizeof(struct uvm_register_gpu_params),
     offsetof(struct uvm_register_gpu_params, rmStatus), true},
    {UVM_REGISTER_GPU_VASPACE, sizeof(struct uvm_register_gpu_vaspace_params),
     offsetof(struct uvm_register_gpu_vaspace_params, rmStatus), true},
    {UVM_REGISTER_CHANNEL, sizeof(struct uvm_register_channel_params),
     offsetof(struct uvm_register_channel_params, rmStatus), true},
    /* {NvBool pageableMemAccess @0; rmStatus @4}: no HMM on the emulated H100 */
    {UVM_PAGEABLE_MEM_ACCESS, 8, 4, true},
};

static const struct uvm_cmd *uvm_cmd_find(unsigned int cmd)
{
	size_t i;

	for (i = 0; i < sizeof(uvm_cmds) / sizeof(uvm_cmds[0]); i++)
		if (uvm_cmds[i].cmd == cmd)
			return &uvm_cmds[i];
	return NULL;
}

/* uvm_api_initialize(): a repeat with the same flags is fine, as in the real driver. */
static __u32 uvm_init(struct gfile *f, struct call *cl, struct uvm_initialize_params *p)
{
	if (f->uvm == UVM_FD_MM)
		return NV_ERR_INVALID_ARGUMENT;
	if (f->uvm == UVM_FD_VA_SPACE)
		return p->flags == f->uvm_flags ? NV_OK : NV_ERR_INVALID_ARGUMENT;
	f->uvm = UVM_FD_VA_SPACE;
	f->uvm_flags = p->flags;
	f->uvm_tgid = cl->tgid;
	return NV_OK;
}

/* uvm_api_mm_initialize(): issued on a second, fresh uvm fd naming the first. */
static __u32 uvm_mm_init(struct gfile *f, struct call *cl, struct uvm_mm_initialize_params *p)
{
	if (!caller_fd_is(cl->tid, p->uvmFd, DEV_UVM))
		return NV_ERR_INVALID_ARGUMENT;
	if (f->uvm != UVM_FD_UNINITIALIZED)
		return NV_ERR_IN_USE;
	f->uvm = UVM_FD_MM;
	return NV_OK;
}

static __u32 uvm_dispatch(struct gfile *f, struct call *cl, const struct uvm_cmd *c, void *buf)
{
	if (c->needs_init && f->uvm != UVM_FD_VA_SPACE)
		return NV_ERR_ILLEGAL_ACTION;
	if (c->cmd == UVM_INITIALIZE)
		return uvm_init(f, cl, buf);
	if (c->cmd == UVM_MM_INITIALIZE)
		return uvm_mm_init(f, cl, buf);
	if (c->cmd == UVM_PAGEABLE_MEM_ACCESS)
		*(__u8 *)buf = 0;
	return NV_OK; /* REGISTER_GPU, REGISTER_GPU_VASPACE, REGISTER_CHANNEL */
}

/* UVM commands are not _IOC-encoded, so FUSE moved no data: use the caller's memory. */
int uvm_ioctl(struct gfile *f, struct call *cl, unsigned int cmd, void *uarg)
{
	const struct uvm_cmd *c;
	__u8 buf[64];
	__u32 st;
	int ret;

	if (cmd == UVM_DEINITIALIZE)
		return 0;
	c = uvm_cmd_find(cmd);
	if (!c)
		return -EINVAL;
	ret = remote_read(cl->tid, (unsigned long)uarg, buf, c->size);
	if (ret)
		return ret;
	st = uvm_dispatch(f, cl, c, buf);
	memcpy(buf + c->status_off, &st, sizeof(st));
	cl->status = st;
	return remote_write(cl->tid, (unsigned long)uarg, buf, c->size);
}
