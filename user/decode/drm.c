// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * DRM render nodes, /dev/dri/renderD* (shared/reference/gpu-facts.md §2.4): the core DRM
 * ioctls and amdgpu's driver-private ones, their names, and the parameters of the context and
 * GEM buffer calls.
 */
#include <linux/ioctl.h>
#include <linux/types.h>

#include "decode/decode.h"
#include "decode/decode_priv.h"

/* drm.h's DRM_IOCTL_BASE, DRM_COMMAND_BASE and DRM_COMMAND_END */
#define DRM_TYPE	 'd'
#define DRM_DRIVER_FIRST 0x40 /* driver-private ioctls, amdgpu's here */
#define DRM_DRIVER_END	 0xa0

/* clang-format off */
static const char *const drm_core_names[] = {
	[0x00] = "DRM_VERSION",
	[0x01] = "DRM_GET_UNIQUE",
	[0x02] = "DRM_GET_MAGIC",
	[0x03] = "DRM_IRQ_BUSID",
	[0x04] = "DRM_GET_MAP",
	[0x05] = "DRM_GET_CLIENT",
	[0x06] = "DRM_GET_STATS",
	[0x07] = "DRM_SET_VERSION",
	[0x08] = "DRM_MODESET_CTL",
	[0x09] = "DRM_GEM_CLOSE",
	[0x0a] = "DRM_GEM_FLINK",
	[0x0b] = "DRM_GEM_OPEN",
	[0x0c] = "DRM_GET_CAP",
	[0x0d] = "DRM_SET_CLIENT_CAP",
	[0x10] = "DRM_SET_UNIQUE",
	[0x11] = "DRM_AUTH_MAGIC",
	[0x1e] = "DRM_SET_MASTER",
	[0x1f] = "DRM_DROP_MASTER",
	[0x2d] = "DRM_PRIME_HANDLE_TO_FD",
	[0x2e] = "DRM_PRIME_FD_TO_HANDLE",
	[0xbf] = "DRM_SYNCOBJ_CREATE",
	[0xc0] = "DRM_SYNCOBJ_DESTROY",
	[0xc1] = "DRM_SYNCOBJ_HANDLE_TO_FD",
	[0xc2] = "DRM_SYNCOBJ_FD_TO_HANDLE",
	[0xc3] = "DRM_SYNCOBJ_WAIT",
	[0xc4] = "DRM_SYNCOBJ_RESET",
	[0xc5] = "DRM_SYNCOBJ_SIGNAL",
	[0xca] = "DRM_SYNCOBJ_TIMELINE_WAIT",
	[0xcb] = "DRM_SYNCOBJ_QUERY",
	[0xcc] = "DRM_SYNCOBJ_TRANSFER",
	[0xcd] = "DRM_SYNCOBJ_TIMELINE_SIGNAL",
	[0xcf] = "DRM_SYNCOBJ_EVENTFD",
};
/* clang-format on */

/* amdgpu_drm.h: DRM_AMDGPU_* numbers, relative to DRM_COMMAND_BASE */
#define AMDGPU_GEM_CREATE  0x00
#define AMDGPU_GEM_MMAP	   0x01
#define AMDGPU_CTX	   0x02
#define AMDGPU_GEM_USERPTR 0x11

/* clang-format off */
static const char *const amdgpu_names[] = {
	[0x00] = "AMDGPU_GEM_CREATE",
	[0x01] = "AMDGPU_GEM_MMAP",
	[0x02] = "AMDGPU_CTX",
	[0x03] = "AMDGPU_BO_LIST",
	[0x04] = "AMDGPU_CS",
	[0x05] = "AMDGPU_INFO",
	[0x06] = "AMDGPU_GEM_METADATA",
	[0x07] = "AMDGPU_GEM_WAIT_IDLE",
	[0x08] = "AMDGPU_GEM_VA",
	[0x09] = "AMDGPU_WAIT_CS",
	[0x10] = "AMDGPU_GEM_OP",
	[0x11] = "AMDGPU_GEM_USERPTR",
	[0x12] = "AMDGPU_WAIT_FENCES",
	[0x13] = "AMDGPU_VM",
	[0x14] = "AMDGPU_FENCE_TO_HANDLE",
	[0x15] = "AMDGPU_SCHED",
};
/* clang-format on */

/* struct drm_amdgpu_info {return_pointer, return_size, query, ...}: AMDGPU_INFO_* queries */
#define AMDGPU_INFO	  0x05
#define AMDGPU_INFO_QUERY 0xc

/* clang-format off */
static const char *const amdgpu_info_queries[] = {
	[0x00] = "ACCEL_WORKING",
	[0x01] = "CRTC_FROM_ID",
	[0x02] = "HW_IP_INFO",
	[0x03] = "HW_IP_COUNT",
	[0x05] = "TIMESTAMP",
	[0x0e] = "FW_VERSION",
	[0x0f] = "NUM_BYTES_MOVED",
	[0x10] = "VRAM_USAGE",
	[0x11] = "GTT_USAGE",
	[0x13] = "GDS_CONFIG",
	[0x14] = "VRAM_GTT",
	[0x15] = "READ_MMR_REG",
	[0x16] = "DEV_INFO",
	[0x17] = "VIS_VRAM_USAGE",
	[0x18] = "NUM_EVICTIONS",
	[0x19] = "MEMORY",
	[0x1a] = "VCE_CLOCK_TABLE",
	[0x1b] = "VBIOS",
	[0x1c] = "NUM_HANDLES",
	[0x1d] = "SENSOR",
	[0x1e] = "NUM_VRAM_CPU_PAGE_FAULTS",
	[0x1f] = "VRAM_LOST_COUNTER",
	[0x20] = "RAS_ENABLED_FEATURES",
	[0x21] = "VIDEO_CAPS",
	[0x22] = "MAX_IBS",
	[0x23] = "GPUVM_FAULT",
};
/* clang-format on */

/* union drm_amdgpu_ctx: in {op, flags, ctx_id, priority}; out.alloc.ctx_id @0 */
#define AMDGPU_CTX_OP_ALLOC_CTX 1
#define AMDGPU_CTX_OP_FREE_CTX	2

/* clang-format off */
static const char *const amdgpu_ctx_ops[] = {
	[1] = "ALLOC_CTX",
	[2] = "FREE_CTX",
	[3] = "QUERY_STATE",
	[4] = "QUERY_STATE2",
	[5] = "GET_STABLE_PSTATE",
	[6] = "SET_STABLE_PSTATE",
};
/* clang-format on */

/* clang-format off */
static const struct flag_name amdgpu_domains[] = {
	{ 0x1, "CPU" },
	{ 0x2, "GTT" },
	{ 0x4, "VRAM" },
	{ 0x8, "GDS" },
	{ 0x10, "GWS" },
	{ 0x20, "OA" },
};
/* clang-format on */

static void amdgpu_ctx(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 op;
	int prio;

	if (!dec_get_u32(c, ARG, 0x0, &op))
		return;
	dec_add_enum(d, "op", amdgpu_ctx_ops, ARRAY_SIZE(amdgpu_ctx_ops), op);
	if (op == AMDGPU_CTX_OP_ALLOC_CTX) {
		if (dec_get_s32(c, ARG, 0xc, &prio))
			dec_add(d, "priority=%d", prio);
		if (dec_add_id(d, c, RES, 0x0, "ctx_id"))
			dec_effect(d, GCTX_OP_CREATE, GCTX_OBJ_DRM_CTX);
	} else if (dec_add_id(d, c, ARG, 0x8, "ctx_id") && op == AMDGPU_CTX_OP_FREE_CTX) {
		dec_effect(d, GCTX_OP_DESTROY, GCTX_OBJ_DRM_CTX);
	}
}

/* A new GEM handle at out_off whose size is the u64 input at size_off. */
static void gem_created(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 size_off,
			__u32 out_off)
{
	dec_add_size(d, c, size_off);
	if (dec_add_id(d, c, RES, out_off, "handle"))
		dec_effect(d, GCTX_OP_CREATE, GCTX_OBJ_DRM_GEM);
}

static void amdgpu_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 n)
{
	__u64 v;
	__u32 q;

	switch (n) {
	case AMDGPU_GEM_CREATE: /* in {bo_size, alignment, domains, domain_flags}; out {handle} */
		if (dec_get_u64(c, ARG, 0x10, &v))
			dec_add_flags(d, "domains", v, amdgpu_domains, ARRAY_SIZE(amdgpu_domains));
		if (dec_get_u64(c, ARG, 0x18, &v))
			dec_add(d, "domain_flags=0x%llx", (unsigned long long)v);
		gem_created(c, d, 0x0, 0x0);
		break;
	case AMDGPU_GEM_MMAP: /* in {handle}; out {addr_ptr} */
		dec_add_id(d, c, ARG, 0x0, "handle");
		if (dec_get_u64(c, RES, 0x0, &v))
			dec_add(d, "offset=0x%llx", (unsigned long long)v);
		break;
	case AMDGPU_CTX:
		amdgpu_ctx(c, d);
		break;
	case AMDGPU_INFO: /* libdrm_amdgpu's device queries (amdgpu_device_initialize) */
		if (dec_get_u32(c, ARG, AMDGPU_INFO_QUERY, &q))
			dec_add_enum(d, "query", amdgpu_info_queries,
				     ARRAY_SIZE(amdgpu_info_queries), q);
		break;
	case AMDGPU_GEM_USERPTR: /* {addr, size, flags, handle (out)} */
		if (dec_get_u64(c, ARG, 0x0, &v))
			dec_add(d, "addr=0x%llx", (unsigned long long)v);
		gem_created(c, d, 0x8, 0x14);
		break;
	default:
		break;
	}
}

static void drm_core_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 nr)
{
	int major, minor, patch, fd;
	__u64 cap, val;

	switch (nr) {
	case 0x00: /* VERSION: int major, minor, patchlevel, ... */
		if (dec_get_s32(c, RES, 0x0, &major) && dec_get_s32(c, RES, 0x4, &minor) &&
		    dec_get_s32(c, RES, 0x8, &patch))
			dec_add(d, "version=%d.%d.%d", major, minor, patch);
		break;
	case 0x09: /* GEM_CLOSE: {handle, pad} */
		if (dec_add_id(d, c, ARG, 0x0, "handle"))
			dec_effect(d, GCTX_OP_DESTROY, GCTX_OBJ_DRM_GEM);
		break;
	case 0x0c: /* GET_CAP: {capability, value} */
		if (dec_get_u64(c, ARG, 0x0, &cap))
			dec_add(d, "cap=0x%llx", (unsigned long long)cap);
		if (dec_get_u64(c, RES, 0x8, &val))
			dec_add(d, "value=%llu", (unsigned long long)val);
		break;
	case 0x2d: /* PRIME_HANDLE_TO_FD: {handle, flags, fd (out)} */
		dec_add_id(d, c, ARG, 0x0, "handle");
		if (dec_get_s32(c, RES, 0x8, &fd))
			dec_add(d, "fd=%d", fd);
		break;
	case 0x2e: /* PRIME_FD_TO_HANDLE: {handle (out), flags, fd} */
		if (dec_get_s32(c, ARG, 0x8, &fd))
			dec_add(d, "fd=%d", fd);
		dec_add_id(d, c, RES, 0x0, "handle");
		break;
	default:
		break;
	}
}

void dec_drm(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 cmd = c->ev->cmd, nr = _IOC_NR(cmd);
	const char *name = NULL;
	bool driver = nr >= DRM_DRIVER_FIRST && nr < DRM_DRIVER_END;
	struct ioc ic;

	if (_IOC_TYPE(cmd) == DRM_TYPE) {
		if (driver)
			name = dec_name_at(amdgpu_names, ARRAY_SIZE(amdgpu_names),
					   nr - DRM_DRIVER_FIRST);
		else
			name = dec_name_at(drm_core_names, ARRAY_SIZE(drm_core_names), nr);
	}
	if (!name) {
		dec_raw_cmd(d, cmd);
		return;
	}
	dec_set_name(d, name);
	ic = dec_sized(c, _IOC_SIZE(cmd));
	if (driver)
		amdgpu_params(&ic, d, nr - DRM_DRIVER_FIRST);
	else
		drm_core_params(&ic, d, nr);
}
