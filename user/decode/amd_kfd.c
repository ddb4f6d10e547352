// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * AMD KFD ioctls on /dev/kfd (shared/reference/gpu-facts.md §2.1): names, and the parameters
 * of the queue and GPU memory calls, laid out as in <linux/kfd_ioctl.h> (include/kfd_compat.h).
 */
#include <stddef.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "decode/decode.h"
#include "decode/decode_priv.h"
#include "kfd_compat.h"

#define KOFF(args, f) ((__u32)offsetof(struct kfd_ioctl_##args##_args, f))

/* The layouts are ABI (gpu-facts.md §2.1): whichever header declared them, they must hold. */
_Static_assert(sizeof(struct kfd_ioctl_create_queue_args) == 0x58, "kfd create_queue size");
_Static_assert(KOFF(create_queue, gpu_id) == 0x24, "kfd create_queue.gpu_id");
_Static_assert(KOFF(create_queue, queue_id) == 0x34, "kfd create_queue.queue_id");
_Static_assert(KOFF(acquire_vm, gpu_id) == 0x4, "kfd acquire_vm.gpu_id");
_Static_assert(KOFF(alloc_memory_of_gpu, handle) == 0x10, "kfd alloc_memory.handle");
_Static_assert(KOFF(alloc_memory_of_gpu, gpu_id) == 0x20, "kfd alloc_memory.gpu_id");
_Static_assert(KOFF(alloc_memory_of_gpu, flags) == 0x24, "kfd alloc_memory.flags");
_Static_assert(KOFF(map_memory_to_gpu, n_success) == 0x14, "kfd map_memory.n_success");
_Static_assert(KOFF(import_dmabuf, handle) == 0x8, "kfd import_dmabuf.handle");

/* clang-format off */
static const char *const kfd_names[] = {
	[0x01] = "KFD_GET_VERSION",
	[0x02] = "KFD_CREATE_QUEUE",
	[0x03] = "KFD_DESTROY_QUEUE",
	[0x04] = "KFD_SET_MEMORY_POLICY",
	[0x05] = "KFD_GET_CLOCK_COUNTERS",
	[0x06] = "KFD_GET_PROCESS_APERTURES",
	[0x07] = "KFD_UPDATE_QUEUE",
	[0x08] = "KFD_CREATE_EVENT",
	[0x09] = "KFD_DESTROY_EVENT",
	[0x0a] = "KFD_SET_EVENT",
	[0x0b] = "KFD_RESET_EVENT",
	[0x0c] = "KFD_WAIT_EVENTS",
	[0x0d] = "KFD_DBG_REGISTER_DEPRECATED",
	[0x0e] = "KFD_DBG_UNREGISTER_DEPRECATED",
	[0x0f] = "KFD_DBG_ADDRESS_WATCH_DEPRECATED",
	[0x10] = "KFD_DBG_WAVE_CONTROL_DEPRECATED",
	[0x11] = "KFD_SET_SCRATCH_BACKING_VA",
	[0x12] = "KFD_GET_TILE_CONFIG",
	[0x13] = "KFD_SET_TRAP_HANDLER",
	[0x14] = "KFD_GET_PROCESS_APERTURES_NEW",
	[0x15] = "KFD_ACQUIRE_VM",
	[0x16] = "KFD_ALLOC_MEMORY_OF_GPU",
	[0x17] = "KFD_FREE_MEMORY_OF_GPU",
	[0x18] = "KFD_MAP_MEMORY_TO_GPU",
	[0x19] = "KFD_UNMAP_MEMORY_FROM_GPU",
	[0x1a] = "KFD_SET_CU_MASK",
	[0x1b] = "KFD_GET_QUEUE_WAVE_STATE",
	[0x1c] = "KFD_GET_DMABUF_INFO",
	[0x1d] = "KFD_IMPORT_DMABUF",
	[0x1e] = "KFD_ALLOC_QUEUE_GWS",
	[0x1f] = "KFD_SMI_EVENTS",
	[0x20] = "KFD_SVM",
	[0x21] = "KFD_SET_XNACK_MODE",
	[0x22] = "KFD_CRIU_OP",
	[0x23] = "KFD_AVAILABLE_MEMORY",
	[0x24] = "KFD_EXPORT_DMABUF",
	[0x25] = "KFD_RUNTIME_ENABLE",
	[0x26] = "KFD_DBG_TRAP",
	[0x27] = "KFD_CREATE_PROCESS",
	/* ROCm DKMS only (AMDKFD_COMMAND_START_2) */
	[0x80] = "KFD_IPC_IMPORT_HANDLE",
	[0x81] = "KFD_IPC_EXPORT_HANDLE",
	[0x82] = "KFD_DBG_TRAP_DEPRECATED",
	[0x83] = "KFD_CROSS_MEMORY_COPY",
	[0x84] = "KFD_RLC_SPM",
	[0x85] = "KFD_PC_SAMPLE",
	[0x86] = "KFD_PROFILER",
};
/* clang-format on */

/* clang-format off */
static const struct flag_name kfd_mem_flags[] = {
	{ KFD_IOC_ALLOC_MEM_FLAGS_VRAM, "VRAM" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_GTT, "GTT" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, "USERPTR" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, "DOORBELL" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, "MMIO_REMAP" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, "WRITABLE" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, "EXECUTABLE" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, "PUBLIC" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE, "NO_SUBSTITUTE" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM, "AQL_QUEUE_MEM" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_COHERENT, "COHERENT" },
	{ KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED, "UNCACHED" },
};
/* clang-format on */

/* clang-format off */
static const char *const kfd_queue_types[] = {
	[KFD_IOC_QUEUE_TYPE_COMPUTE] = "COMPUTE",
	[KFD_IOC_QUEUE_TYPE_SDMA] = "SDMA",
	[KFD_IOC_QUEUE_TYPE_COMPUTE_AQL] = "COMPUTE_AQL",
	[KFD_IOC_QUEUE_TYPE_SDMA_XGMI] = "SDMA_XGMI",
};
/* clang-format on */

/* clang-format off */
static const char *const kfd_event_types[] = {
	[0] = "SIGNAL",
	[1] = "NODECHANGE",
	[2] = "DEVICESTATECHANGE",
	[3] = "HW_EXCEPTION",
	[4] = "SYSTEM_EVENT",
	[5] = "DEBUG_EVENT",
	[6] = "PROFILE_EVENT",
	[7] = "QUEUE_EVENT",
	[8] = "MEMORY",
};

static const char *const kfd_wait_results[] = {
	[0] = "COMPLETE",
	[1] = "TIMEOUT",
	[2] = "FAIL",
};
/* clang-format on */

/*
 * Events (KFD 1.11 layouts, <linux/kfd_ioctl.h>; not in kfd_compat.h's fallback):
 * create_event {event_page_offset u64, trigger_data, event_type, auto_reset, node_id,
 * event_id (out), event_slot_index (out)}; destroy/set/reset {event_id, pad};
 * wait_events {events_ptr u64, num_events, wait_for_all, timeout (ms), wait_result (out)}.
 */
#define EV_TYPE		0x0c
#define EV_AUTO_RESET	0x10
#define EV_ID		0x18
#define WAIT_NUM	0x08
#define WAIT_ALL	0x0c
#define WAIT_TIMEOUT	0x10
#define WAIT_RESULT	0x14
#define WAIT_INFINITE	0xffffffffU
#define APERTURES_NODES 0x08 /* get_process_apertures_new {ptr u64, num_of_nodes} */

static void kfd_create_event(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 v;

	if (dec_get_u32(c, ARG, EV_TYPE, &v))
		dec_add_enum(d, "type", kfd_event_types, ARRAY_SIZE(kfd_event_types), v);
	if (dec_get_u32(c, ARG, EV_AUTO_RESET, &v) && v)
		dec_add(d, "auto_reset");
	dec_add_id(d, c, RES, EV_ID, "event_id");
}

static void kfd_wait_events(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 n, all, t, r;

	if (dec_get_u32(c, ARG, WAIT_NUM, &n) && dec_get_u32(c, ARG, WAIT_ALL, &all))
		dec_add(d, "events=%u%s", n, all ? " all" : "");
	if (dec_get_u32(c, ARG, WAIT_TIMEOUT, &t)) {
		if (t == WAIT_INFINITE)
			dec_add(d, "timeout=inf");
		else
			dec_add(d, "timeout=%ums", t);
	}
	if (dec_get_u32(c, RES, WAIT_RESULT, &r))
		dec_add_enum(d, "result", kfd_wait_results, ARRAY_SIZE(kfd_wait_results), r);
}

static bool add_gpu_id(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off)
{
	__u32 v;

	if (!dec_get_u32(c, s, off, &v))
		return false;
	dec_add(d, "gpu_id=0x%x", v);
	d->parent = v;
	return true;
}

/* A u64 memory handle: "handle=0x%llx", kept in d->handle. */
static bool kfd_mem_handle(const struct ioc *c, struct gctx_ioctl_desc *d, enum src s, __u32 off)
{
	__u64 v;

	if (!dec_get_u64(c, s, off, &v))
		return false;
	dec_add(d, "handle=0x%llx", (unsigned long long)v);
	d->handle = v;
	return true;
}

static void kfd_create_queue(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 v;
	__u64 q;

	add_gpu_id(d, c, ARG, KOFF(create_queue, gpu_id));
	if (dec_get_u32(c, ARG, KOFF(create_queue, queue_type), &v))
		dec_add_enum(d, "type", kfd_queue_types, ARRAY_SIZE(kfd_queue_types), v);
	if (dec_get_u64(c, ARG, KOFF(create_queue, ring_base_address), &q))
		dec_add(d, "ring=0x%llx", (unsigned long long)q);
	if (dec_get_u32(c, ARG, KOFF(create_queue, ring_size), &v))
		dec_add(d, "ring_size=%u", v);
	if (dec_get_u32(c, ARG, KOFF(create_queue, queue_priority), &v))
		dec_add(d, "priority=%u", v);
	if (dec_add_id(d, c, RES, KOFF(create_queue, queue_id), "queue_id"))
		dec_effect(d, GCTX_OP_CREATE, GCTX_OBJ_KFD_QUEUE);
}

static void kfd_alloc_memory(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 flags;
	__u64 v;

	add_gpu_id(d, c, ARG, KOFF(alloc_memory_of_gpu, gpu_id));
	dec_add_size(d, c, KOFF(alloc_memory_of_gpu, size));
	if (dec_get_u64(c, ARG, KOFF(alloc_memory_of_gpu, va_addr), &v))
		dec_add(d, "va=0x%llx", (unsigned long long)v);
	if (dec_get_u32(c, ARG, KOFF(alloc_memory_of_gpu, flags), &flags))
		dec_add_flags(d, "flags", flags, kfd_mem_flags, ARRAY_SIZE(kfd_mem_flags));
	if (kfd_mem_handle(c, d, RES, KOFF(alloc_memory_of_gpu, handle)))
		dec_effect(d, GCTX_OP_CREATE, GCTX_OBJ_KFD_MEMORY);
}

static void kfd_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 nr)
{
	__u32 a, b;
	int fd;

	switch (nr) {
	case 0x01: /* GET_VERSION */
		if (dec_get_u32(c, RES, KOFF(get_version, major_version), &a) &&
		    dec_get_u32(c, RES, KOFF(get_version, minor_version), &b))
			dec_add(d, "version=%u.%u", a, b);
		break;
	case 0x02:
		kfd_create_queue(c, d);
		break;
	case 0x03: /* DESTROY_QUEUE */
		if (dec_add_id(d, c, ARG, KOFF(destroy_queue, queue_id), "queue_id"))
			dec_effect(d, GCTX_OP_DESTROY, GCTX_OBJ_KFD_QUEUE);
		break;
	case 0x08:
		kfd_create_event(c, d);
		break;
	case 0x09: /* DESTROY_EVENT, SET_EVENT, RESET_EVENT: {event_id, pad} */
	case 0x0a:
	case 0x0b:
		dec_add_id(d, c, ARG, 0x0, "event_id");
		break;
	case 0x0c:
		kfd_wait_events(c, d);
		break;
	case 0x14: /* GET_PROCESS_APERTURES_NEW */
		if (dec_get_u32(c, RES, APERTURES_NODES, &a))
			dec_add(d, "nodes=%u", a);
		break;
	case 0x15: /* ACQUIRE_VM */
		dec_add_fd(d, c, ARG, KOFF(acquire_vm, drm_fd), "drm_fd");
		add_gpu_id(d, c, ARG, KOFF(acquire_vm, gpu_id));
		break;
	case 0x16:
		kfd_alloc_memory(c, d);
		break;
	case 0x17: /* FREE_MEMORY_OF_GPU */
		if (kfd_mem_handle(c, d, ARG, KOFF(free_memory_of_gpu, handle)))
			dec_effect(d, GCTX_OP_DESTROY, GCTX_OBJ_KFD_MEMORY);
		break;
	case 0x18: /* MAP_MEMORY_TO_GPU */
	case 0x19: /* UNMAP_MEMORY_FROM_GPU, same layout */
		kfd_mem_handle(c, d, ARG, KOFF(map_memory_to_gpu, handle));
		if (dec_get_u32(c, ARG, KOFF(map_memory_to_gpu, n_devices), &a))
			dec_add(d, "devices=%u", a);
		if (dec_get_u32(c, RES, KOFF(map_memory_to_gpu, n_success), &b))
			dec_add(d, "done=%u", b);
		break;
	case 0x1d: /* IMPORT_DMABUF: a memory handle that FREE_MEMORY_OF_GPU releases */
		add_gpu_id(d, c, ARG, KOFF(import_dmabuf, gpu_id));
		if (dec_get_s32(c, ARG, KOFF(import_dmabuf, dmabuf_fd), &fd))
			dec_add(d, "dmabuf_fd=%d", fd);
		if (kfd_mem_handle(c, d, RES, KOFF(import_dmabuf, handle)))
			dec_effect(d, GCTX_OP_CREATE, GCTX_OBJ_KFD_MEMORY);
		break;
	case 0x21: /* SET_XNACK_MODE */
		dec_add_fd(d, c, ARG, KOFF(set_xnack_mode, xnack_enabled), "xnack");
		break;
	default:
		break;
	}
}

void dec_kfd(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 cmd = c->ev->cmd, nr = _IOC_NR(cmd);
	const char *name = NULL;
	struct ioc ic;

	if (_IOC_TYPE(cmd) == AMDKFD_IOCTL_BASE)
		name = dec_name_at(kfd_names, ARRAY_SIZE(kfd_names), nr);
	if (!name) {
		dec_raw_cmd(d, cmd);
		return;
	}
	dec_set_name(d, name);
	/* The struct size varies across KFD versions: decode whatever the caller passed. */
	ic = dec_sized(c, _IOC_SIZE(cmd));
	kfd_params(&ic, d, nr);
}
