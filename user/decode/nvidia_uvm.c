// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NVIDIA UVM commands on /dev/nvidia-uvm and /dev/nvidia-uvm-tools (shared/reference/
 * gpu-facts.md §1.5): plain command numbers, their names, and the parameters of the commands
 * whose layout is known here (VA space, GPU and channel registration, range groups).
 */
#include <stdio.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "decode/decode.h"
#include "decode/decode_priv.h"

#define UVM_INITIALIZE		 0x30000001
#define UVM_DEINITIALIZE	 0x30000002
#define UVM_CREATE_RANGE_GROUP	 0x17
#define UVM_DESTROY_RANGE_GROUP	 0x18
#define UVM_REGISTER_GPU_VASPACE 0x19
#define UVM_REGISTER_CHANNEL	 0x1b
#define UVM_REGISTER_GPU	 0x25
#define UVM_UNREGISTER_GPU	 0x26
#define UVM_MM_INITIALIZE	 0x4b

/* clang-format off */
static const char *const uvm_names[] = {
	[0x17] = "UVM_CREATE_RANGE_GROUP",
	[0x18] = "UVM_DESTROY_RANGE_GROUP",
	[0x19] = "UVM_REGISTER_GPU_VASPACE",
	[0x1a] = "UVM_UNREGISTER_GPU_VASPACE",
	[0x1b] = "UVM_REGISTER_CHANNEL",
	[0x1c] = "UVM_UNREGISTER_CHANNEL",
	[0x1d] = "UVM_ENABLE_PEER_ACCESS",
	[0x21] = "UVM_MAP_EXTERNAL_ALLOCATION",
	[0x22] = "UVM_FREE",
	[0x25] = "UVM_REGISTER_GPU",
	[0x26] = "UVM_UNREGISTER_GPU",
	[0x27] = "UVM_PAGEABLE_MEM_ACCESS",
	[0x33] = "UVM_MIGRATE",
	[0x38] = "UVM_TOOLS_INIT_EVENT_TRACKER",
	[0x44] = "UVM_ALLOC_SEMAPHORE_POOL",
	[0x48] = "UVM_VALIDATE_VA_RANGE",
	[0x49] = "UVM_CREATE_EXTERNAL_RANGE",
	[0x4b] = "UVM_MM_INITIALIZE",
	[0x4e] = "UVM_ALLOC_DEVICE_P2P",
	[0x50] = "UVM_DISCARD",
};
/* clang-format on */

/* clang-format off */
static const struct flag_name uvm_init_flags[] = {
	{ 0x1, "DISABLE_HMM" },
	{ 0x2, "MULTI_PROCESS_SHARING_MODE" },
};
/* clang-format on */

/* A GPU UUID as nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx. */
static void add_uuid(struct gctx_ioctl_desc *d, const struct ioc *c, __u32 off)
{
	char buf[48];
	size_t used;
	__u8 b = 0;
	int i;

	if (d->no_text || !dec_field(c, ARG, off, 16))
		return;
	used = (size_t)snprintf(buf, sizeof(buf), "GPU-");
	for (i = 0; i < 16; i++) {
		dec_get_u8(c, ARG, off + i, &b);
		if (i == 4 || i == 6 || i == 8 || i == 10)
			buf[used++] = '-';
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%02x", b);
	}
	dec_add(d, "uuid=%s", buf);
}

/* gpuUuid[16] @0, rmCtrlFd @0x10 (REGISTER_GPU: @0x18), hClient next, then the RM object */
static void uvm_register(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 fd_off,
			 const char *obj)
{
	add_uuid(d, c, 0x0);
	dec_add_fd(d, c, ARG, fd_off, "rmCtrlFd");
	dec_add_handle(d, c, ARG, fd_off + 4, "hClient", &d->client);
	if (obj)
		dec_add_handle(d, c, ARG, fd_off + 8, obj, &d->handle);
}

void dec_uvm(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 cmd = c->ev->cmd;
	const char *name;
	__u64 v;

	/* UVM numbers are plain integers; anything carrying an _IOC type byte is foreign. */
	if (_IOC_TYPE(cmd)) {
		dec_raw_cmd(d, cmd);
		return;
	}
	if (cmd == UVM_INITIALIZE) {
		dec_set_name(d, "UVM_INITIALIZE");
		if (dec_get_u64(c, ARG, 0x0, &v))
			dec_add_flags(d, "flags", v, uvm_init_flags, ARRAY_SIZE(uvm_init_flags));
		if (dec_nv_status(c, d, 0x8))
			dec_effect(d, GCTX_OP_CREATE, GCTX_OBJ_UVM_SPACE);
		return;
	}
	if (cmd == UVM_DEINITIALIZE) {
		dec_set_name(d, "UVM_DEINITIALIZE"); /* no parameters: the syscall is the verdict */
		dec_effect(d, GCTX_OP_DESTROY, GCTX_OBJ_UVM_SPACE);
		return;
	}
	name = dec_name_at(uvm_names, ARRAY_SIZE(uvm_names), cmd);
	if (!name) {
		if (!d->no_text)
			snprintf(d->name, sizeof(d->name), "uvm(0x%x)", cmd);
		return;
	}
	dec_set_name(d, name);
	switch (cmd) {
	case UVM_CREATE_RANGE_GROUP:
		if (dec_get_u64(c, RES, 0x0, &v))
			dec_add(d, "range_group=0x%llx", (unsigned long long)v);
		dec_nv_status(c, d, 0x8);
		break;
	case UVM_DESTROY_RANGE_GROUP:
		if (dec_get_u64(c, ARG, 0x0, &v))
			dec_add(d, "range_group=0x%llx", (unsigned long long)v);
		dec_nv_status(c, d, 0x8);
		break;
	case UVM_REGISTER_GPU_VASPACE:
		uvm_register(c, d, 0x10, "hVaSpace");
		dec_nv_status(c, d, 0x1c);
		break;
	case UVM_REGISTER_CHANNEL:
		uvm_register(c, d, 0x10, "hChannel");
		if (dec_get_u64(c, ARG, 0x20, &v))
			dec_add(d, "base=0x%llx", (unsigned long long)v);
		if (dec_get_u64(c, ARG, 0x28, &v))
			dec_add(d, "length=%llu", (unsigned long long)v);
		dec_nv_status(c, d, 0x30);
		break;
	case UVM_REGISTER_GPU:
		uvm_register(c, d, 0x18, NULL);
		dec_nv_status(c, d, 0x24);
		break;
	case UVM_UNREGISTER_GPU:
		add_uuid(d, c, 0x0);
		dec_nv_status(c, d, 0x10);
		break;
	case UVM_MM_INITIALIZE:
		dec_add_fd(d, c, ARG, 0x0, "uvm_fd");
		dec_nv_status(c, d, 0x4);
		break;
	default:
		break; /* layout not known here: no status */
	}
}
