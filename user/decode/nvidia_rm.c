// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NVIDIA RM escapes on /dev/nvidiactl and /dev/nvidiaN (shared/reference/gpu-facts.md
 * §1.2-1.4): escape names, RM classes and the object each creates, NV_STATUS codes (UVM returns
 * them too), and the parameters of each escape, plain or unwrapped from IOCTL_XFER_CMD.
 */
#include <stdio.h>
#include <string.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "decode/decode.h"
#include "decode/decode_priv.h"

#define NV_IOCTL_MAGIC 'F'

#define NV_ESC_RM_ALLOC_MEMORY		     0x27
#define NV_ESC_RM_ALLOC_OBJECT		     0x28
#define NV_ESC_RM_FREE			     0x29
#define NV_ESC_RM_CONTROL		     0x2a
#define NV_ESC_RM_ALLOC			     0x2b
#define NV_ESC_RM_DUP_OBJECT		     0x34
#define NV_ESC_RM_SHARE			     0x35
#define NV_ESC_RM_VID_HEAP_CONTROL	     0x4a
#define NV_ESC_RM_MAP_MEMORY		     0x4e
#define NV_ESC_RM_UNMAP_MEMORY		     0x4f
#define NV_ESC_RM_MAP_MEMORY_DMA	     0x57
#define NV_ESC_RM_UNMAP_MEMORY_DMA	     0x58
#define NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO 0x5e
#define NV_ESC_CARD_INFO		     0xc8
#define NV_ESC_REGISTER_FD		     0xc9
#define NV_ESC_ALLOC_OS_EVENT		     0xce
#define NV_ESC_FREE_OS_EVENT		     0xcf
#define NV_ESC_STATUS_CODE		     0xd1
#define NV_ESC_CHECK_VERSION_STR	     0xd2
#define NV_ESC_IOCTL_XFER_CMD		     0xd3
#define NV_ESC_ATTACH_GPUS_TO_FD	     0xd4
#define NV_ESC_SYS_PARAMS		     0xd6
#define NV_ESC_EXPORT_TO_DMABUF_FD	     0xd9
#define NV_ESC_WAIT_OPEN_COMPLETE	     0xda

#define NVOS21_SIZE	   0x20 /* RM_ALLOC, status @0x1c */
#define NVOS64_SIZE	   0x30 /* RM_ALLOC with access rights, status @0x28 */
#define NV_CARD_INFO_SIZE  0x48 /* one nv_ioctl_card_info_t */
#define NV_VERSION_STR_LEN 64

/* clang-format off */
static const char *const nv_esc_names[256] = {
	[0x27] = "RM_ALLOC_MEMORY",
	[0x28] = "RM_ALLOC_OBJECT",
	[0x29] = "RM_FREE",
	[0x2a] = "RM_CONTROL",
	[0x2b] = "RM_ALLOC",
	[0x34] = "RM_DUP_OBJECT",
	[0x35] = "RM_SHARE",
	[0x39] = "RM_I2C_ACCESS",
	[0x41] = "RM_IDLE_CHANNELS",
	[0x4a] = "RM_VID_HEAP_CONTROL",
	[0x4d] = "RM_ACCESS_REGISTRY",
	[0x4e] = "RM_MAP_MEMORY",
	[0x4f] = "RM_UNMAP_MEMORY",
	[0x52] = "RM_GET_EVENT_DATA",
	[0x54] = "RM_ALLOC_CONTEXT_DMA2",
	[0x56] = "RM_ADD_VBLANK_CALLBACK",
	[0x57] = "RM_MAP_MEMORY_DMA",
	[0x58] = "RM_UNMAP_MEMORY_DMA",
	[0x59] = "RM_BIND_CONTEXT_DMA",
	[0x5c] = "RM_EXPORT_OBJECT_TO_FD",
	[0x5d] = "RM_IMPORT_OBJECT_FROM_FD",
	[0x5e] = "RM_UPDATE_DEVICE_MAPPING_INFO",
	[0x5f] = "RM_LOCKLESS_DIAGNOSTIC",
	[0xc8] = "CARD_INFO",
	[0xc9] = "REGISTER_FD",
	[0xce] = "ALLOC_OS_EVENT",
	[0xcf] = "FREE_OS_EVENT",
	[0xd1] = "STATUS_CODE",
	[0xd2] = "CHECK_VERSION_STR",
	[0xd3] = "IOCTL_XFER_CMD",
	[0xd4] = "ATTACH_GPUS_TO_FD",
	[0xd5] = "QUERY_DEVICE_INTR",
	[0xd6] = "SYS_PARAMS",
	[0xd7] = "NUMA_INFO",
	[0xd8] = "SET_NUMA_STATUS",
	[0xd9] = "EXPORT_TO_DMABUF_FD",
	[0xda] = "WAIT_OPEN_COMPLETE",
};
/* clang-format on */

static const char *nv_esc_name(__u32 nr)
{
	return dec_name_at(nv_esc_names, ARRAY_SIZE(nv_esc_names), nr);
}

/* clang-format off */
static const struct nv_class {
	__u32 cls;
	enum gctx_obj_kind kind;
	const char *name;
} nv_classes[] = {
	{ 0x0000, GCTX_OBJ_RM_CLIENT, "NV01_ROOT" },
	{ 0x0001, GCTX_OBJ_RM_CLIENT, "NV01_ROOT_NON_PRIV" },
	{ 0x003e, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_SYSTEM" },
	{ 0x003f, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_LOCAL_PRIVILEGED" },
	{ 0x0040, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_LOCAL_USER" },
	{ 0x0041, GCTX_OBJ_RM_CLIENT, "NV01_ROOT_CLIENT" },
	{ 0x0042, GCTX_OBJ_RM_MEMORY, "NV_MEMORY_EXTENDED_USER" },
	{ 0x0070, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_VIRTUAL" },
	{ 0x0071, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR" },
	{ 0x0079, GCTX_OBJ_RM_OTHER, "NV01_EVENT_OS_EVENT" },
	{ 0x0080, GCTX_OBJ_RM_DEVICE, "NV01_DEVICE_0" },
	{ 0x2080, GCTX_OBJ_RM_SUBDEVICE, "NV20_SUBDEVICE_0" },
	{ 0x50a0, GCTX_OBJ_RM_MEMORY, "NV50_MEMORY_VIRTUAL" },
	{ 0x83de, GCTX_OBJ_RM_OTHER, "GT200_DEBUGGER" },
	{ 0x900e, GCTX_OBJ_RM_OTHER, "MPS_COMPUTE" },
	{ 0x9067, GCTX_OBJ_RM_CTXSHARE, "FERMI_CONTEXT_SHARE_A" },
	{ 0x90f1, GCTX_OBJ_RM_VASPACE, "FERMI_VASPACE_A" },
	{ 0xa06c, GCTX_OBJ_RM_CHANNEL_GROUP, "KEPLER_CHANNEL_GROUP_A" },
	{ 0xc361, GCTX_OBJ_RM_OTHER, "VOLTA_USERMODE_A" },
	{ 0xc36f, GCTX_OBJ_RM_CHANNEL, "VOLTA_CHANNEL_GPFIFO_A" },
	{ 0xc3b5, GCTX_OBJ_RM_OTHER, "VOLTA_DMA_COPY_A" },
	{ 0xc3c0, GCTX_OBJ_RM_COMPUTE, "VOLTA_COMPUTE_A" },
	{ 0xc461, GCTX_OBJ_RM_OTHER, "TURING_USERMODE_A" },
	{ 0xc46f, GCTX_OBJ_RM_CHANNEL, "TURING_CHANNEL_GPFIFO_A" },
	{ 0xc56f, GCTX_OBJ_RM_CHANNEL, "AMPERE_CHANNEL_GPFIFO_A" },
	{ 0xc5b5, GCTX_OBJ_RM_OTHER, "TURING_DMA_COPY_A" },
	{ 0xc5c0, GCTX_OBJ_RM_COMPUTE, "TURING_COMPUTE_A" },
	{ 0xc661, GCTX_OBJ_RM_OTHER, "HOPPER_USERMODE_A" },
	{ 0xc6b5, GCTX_OBJ_RM_OTHER, "AMPERE_DMA_COPY_A" },
	{ 0xc6c0, GCTX_OBJ_RM_COMPUTE, "AMPERE_COMPUTE_A" },
	{ 0xc761, GCTX_OBJ_RM_OTHER, "BLACKWELL_USERMODE_A" },
	{ 0xc7b5, GCTX_OBJ_RM_OTHER, "AMPERE_DMA_COPY_B" },
	{ 0xc7c0, GCTX_OBJ_RM_COMPUTE, "AMPERE_COMPUTE_B" },
	{ 0xc86f, GCTX_OBJ_RM_CHANNEL, "HOPPER_CHANNEL_GPFIFO_A" },
	{ 0xc8b5, GCTX_OBJ_RM_OTHER, "HOPPER_DMA_COPY_A" },
	{ 0xc96f, GCTX_OBJ_RM_CHANNEL, "BLACKWELL_CHANNEL_GPFIFO_A" },
	{ 0xc9b5, GCTX_OBJ_RM_OTHER, "BLACKWELL_DMA_COPY_A" },
	{ 0xc9c0, GCTX_OBJ_RM_COMPUTE, "ADA_COMPUTE_A" },
	{ 0xca6f, GCTX_OBJ_RM_CHANNEL, "BLACKWELL_CHANNEL_GPFIFO_B" },
	{ 0xcab5, GCTX_OBJ_RM_OTHER, "BLACKWELL_DMA_COPY_B" },
	{ 0xcb33, GCTX_OBJ_RM_OTHER, "NV_CONFIDENTIAL_COMPUTE" },
	{ 0xcbc0, GCTX_OBJ_RM_COMPUTE, "HOPPER_COMPUTE_A" },
	{ 0xcdc0, GCTX_OBJ_RM_COMPUTE, "BLACKWELL_COMPUTE_A" },
	{ 0xcec0, GCTX_OBJ_RM_COMPUTE, "BLACKWELL_COMPUTE_B" },
};
/* clang-format on */

static const struct nv_class *nv_class(__u32 cls)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nv_classes); i++)
		if (nv_classes[i].cls == cls)
			return &nv_classes[i];
	return NULL;
}

const char *gctx_nv_class_name(__u32 cls)
{
	const struct nv_class *k = nv_class(cls);

	return k ? k->name : NULL;
}

static enum gctx_obj_kind nv_class_kind(__u32 cls)
{
	const struct nv_class *k = nv_class(cls);

	return k ? k->kind : GCTX_OBJ_RM_OTHER;
}

/* NV_STATUS values: kernel-open/common/inc/nvstatuscodes.h (errors are dense from 0x1). */
/* clang-format off */
static const char *const nv_err_names[] = {
	[0x00] = "NV_OK",
	[0x01] = "NV_ERR_BROKEN_FB",
	[0x02] = "NV_ERR_BUFFER_TOO_SMALL",
	[0x03] = "NV_ERR_BUSY_RETRY",
	[0x04] = "NV_ERR_CALLBACK_NOT_SCHEDULED",
	[0x05] = "NV_ERR_CARD_NOT_PRESENT",
	[0x06] = "NV_ERR_CYCLE_DETECTED",
	[0x07] = "NV_ERR_DMA_IN_USE",
	[0x08] = "NV_ERR_DMA_MEM_NOT_LOCKED",
	[0x09] = "NV_ERR_DMA_MEM_NOT_UNLOCKED",
	[0x0a] = "NV_ERR_DUAL_LINK_INUSE",
	[0x0b] = "NV_ERR_ECC_ERROR",
	[0x0c] = "NV_ERR_FIFO_BAD_ACCESS",
	[0x0d] = "NV_ERR_FREQ_NOT_SUPPORTED",
	[0x0e] = "NV_ERR_GPU_DMA_NOT_INITIALIZED",
	[0x0f] = "NV_ERR_GPU_IS_LOST",
	[0x10] = "NV_ERR_GPU_IN_FULLCHIP_RESET",
	[0x11] = "NV_ERR_GPU_NOT_FULL_POWER",
	[0x12] = "NV_ERR_GPU_UUID_NOT_FOUND",
	[0x13] = "NV_ERR_HOT_SWITCH",
	[0x14] = "NV_ERR_I2C_ERROR",
	[0x15] = "NV_ERR_I2C_SPEED_TOO_HIGH",
	[0x16] = "NV_ERR_ILLEGAL_ACTION",
	[0x17] = "NV_ERR_IN_USE",
	[0x18] = "NV_ERR_INFLATE_COMPRESSED_DATA_FAILED",
	[0x19] = "NV_ERR_INSERT_DUPLICATE_NAME",
	[0x1a] = "NV_ERR_INSUFFICIENT_RESOURCES",
	[0x1b] = "NV_ERR_INSUFFICIENT_PERMISSIONS",
	[0x1c] = "NV_ERR_INSUFFICIENT_POWER",
	[0x1d] = "NV_ERR_INVALID_ACCESS_TYPE",
	[0x1e] = "NV_ERR_INVALID_ADDRESS",
	[0x1f] = "NV_ERR_INVALID_ARGUMENT",
	[0x20] = "NV_ERR_INVALID_BASE",
	[0x21] = "NV_ERR_INVALID_CHANNEL",
	[0x22] = "NV_ERR_INVALID_CLASS",
	[0x23] = "NV_ERR_INVALID_CLIENT",
	[0x24] = "NV_ERR_INVALID_COMMAND",
	[0x25] = "NV_ERR_INVALID_DATA",
	[0x26] = "NV_ERR_INVALID_DEVICE",
	[0x27] = "NV_ERR_INVALID_DMA_SPECIFIER",
	[0x28] = "NV_ERR_INVALID_EVENT",
	[0x29] = "NV_ERR_INVALID_FLAGS",
	[0x2a] = "NV_ERR_INVALID_FUNCTION",
	[0x2b] = "NV_ERR_INVALID_HEAP",
	[0x2c] = "NV_ERR_INVALID_INDEX",
	[0x2d] = "NV_ERR_INVALID_IRQ_LEVEL",
	[0x2e] = "NV_ERR_INVALID_LIMIT",
	[0x2f] = "NV_ERR_INVALID_LOCK_STATE",
	[0x30] = "NV_ERR_INVALID_METHOD",
	[0x31] = "NV_ERR_INVALID_OBJECT",
	[0x32] = "NV_ERR_INVALID_OBJECT_BUFFER",
	[0x33] = "NV_ERR_INVALID_OBJECT_HANDLE",
	[0x34] = "NV_ERR_INVALID_OBJECT_NEW",
	[0x35] = "NV_ERR_INVALID_OBJECT_OLD",
	[0x36] = "NV_ERR_INVALID_OBJECT_PARENT",
	[0x37] = "NV_ERR_INVALID_OFFSET",
	[0x38] = "NV_ERR_INVALID_OPERATION",
	[0x39] = "NV_ERR_INVALID_OWNER",
	[0x3a] = "NV_ERR_INVALID_PARAM_STRUCT",
	[0x3b] = "NV_ERR_INVALID_PARAMETER",
	[0x3c] = "NV_ERR_INVALID_PATH",
	[0x3d] = "NV_ERR_INVALID_POINTER",
	[0x3e] = "NV_ERR_INVALID_REGISTRY_KEY",
	[0x3f] = "NV_ERR_INVALID_REQUEST",
	[0x40] = "NV_ERR_INVALID_STATE",
	[0x41] = "NV_ERR_INVALID_STRING_LENGTH",
	[0x42] = "NV_ERR_INVALID_READ",
	[0x43] = "NV_ERR_INVALID_WRITE",
	[0x44] = "NV_ERR_INVALID_XLATE",
	[0x45] = "NV_ERR_IRQ_NOT_FIRING",
	[0x46] = "NV_ERR_IRQ_EDGE_TRIGGERED",
	[0x47] = "NV_ERR_MEMORY_TRAINING_FAILED",
	[0x48] = "NV_ERR_MISMATCHED_SLAVE",
	[0x49] = "NV_ERR_MISMATCHED_TARGET",
	[0x4a] = "NV_ERR_MISSING_TABLE_ENTRY",
	[0x4b] = "NV_ERR_MODULE_LOAD_FAILED",
	[0x4c] = "NV_ERR_MORE_DATA_AVAILABLE",
	[0x4d] = "NV_ERR_MORE_PROCESSING_REQUIRED",
	[0x4e] = "NV_ERR_MULTIPLE_MEMORY_TYPES",
	[0x4f] = "NV_ERR_NO_FREE_FIFOS",
	[0x50] = "NV_ERR_NO_INTR_PENDING",
	[0x51] = "NV_ERR_NO_MEMORY",
	[0x52] = "NV_ERR_NO_SUCH_DOMAIN",
	[0x53] = "NV_ERR_NO_VALID_PATH",
	[0x54] = "NV_ERR_NOT_COMPATIBLE",
	[0x55] = "NV_ERR_NOT_READY",
	[0x56] = "NV_ERR_NOT_SUPPORTED",
	[0x57] = "NV_ERR_OBJECT_NOT_FOUND",
	[0x58] = "NV_ERR_OBJECT_TYPE_MISMATCH",
	[0x59] = "NV_ERR_OPERATING_SYSTEM",
	[0x5a] = "NV_ERR_OTHER_DEVICE_FOUND",
	[0x5b] = "NV_ERR_OUT_OF_RANGE",
	[0x5c] = "NV_ERR_OVERLAPPING_UVM_COMMIT",
	[0x5d] = "NV_ERR_PAGE_TABLE_NOT_AVAIL",
	[0x5e] = "NV_ERR_PID_NOT_FOUND",
	[0x5f] = "NV_ERR_PROTECTION_FAULT",
	[0x60] = "NV_ERR_RC_ERROR",
	[0x61] = "NV_ERR_REJECTED_VBIOS",
	[0x62] = "NV_ERR_RESET_REQUIRED",
	[0x63] = "NV_ERR_STATE_IN_USE",
	[0x64] = "NV_ERR_SIGNAL_PENDING",
	[0x65] = "NV_ERR_TIMEOUT",
	[0x66] = "NV_ERR_TIMEOUT_RETRY",
	[0x67] = "NV_ERR_TOO_MANY_PRIMARIES",
	[0x68] = "NV_ERR_UVM_ADDRESS_IN_USE",
	[0x69] = "NV_ERR_MAX_SESSION_LIMIT_REACHED",
	[0x6a] = "NV_ERR_LIB_RM_VERSION_MISMATCH",
	[0x6b] = "NV_ERR_PRIV_SEC_VIOLATION",
	[0x6c] = "NV_ERR_GPU_IN_DEBUG_MODE",
	[0x6d] = "NV_ERR_FEATURE_NOT_ENABLED",
	[0x6e] = "NV_ERR_RESOURCE_LOST",
	[0x6f] = "NV_ERR_PMU_NOT_READY",
	[0x70] = "NV_ERR_FLCN_ERROR",
	[0x71] = "NV_ERR_FATAL_ERROR",
	[0x72] = "NV_ERR_MEMORY_ERROR",
	[0x73] = "NV_ERR_INVALID_LICENSE",
	[0x74] = "NV_ERR_NVLINK_INIT_ERROR",
	[0x75] = "NV_ERR_NVLINK_MINION_ERROR",
	[0x76] = "NV_ERR_NVLINK_CLOCK_ERROR",
	[0x77] = "NV_ERR_NVLINK_TRAINING_ERROR",
	[0x78] = "NV_ERR_NVLINK_CONFIGURATION_ERROR",
	[0x79] = "NV_ERR_RISCV_ERROR",
	[0x7a] = "NV_ERR_FABRIC_MANAGER_NOT_PRESENT",
	[0x7b] = "NV_ERR_ALREADY_SIGNALLED",
	[0x7c] = "NV_ERR_QUEUE_TASK_SLOT_NOT_AVAILABLE",
	[0x7d] = "NV_ERR_KEY_ROTATION_IN_PROGRESS",
	[0x7e] = "NV_ERR_TEST_ONLY_CODE_NOT_ENABLED",
	[0x7f] = "NV_ERR_SECURE_BOOT_FAILED",
	[0x80] = "NV_ERR_INSUFFICIENT_ZBC_ENTRY",
};
/* clang-format on */

#define NV_WARN_BASE 0x10001

/* clang-format off */
static const char *const nv_warn_names[] = {
	"NV_WARN_HOT_SWITCH", /* 0x10001 */
	"NV_WARN_INCORRECT_PERFMON_DATA",
	"NV_WARN_MISMATCHED_SLAVE",
	"NV_WARN_MISMATCHED_TARGET",
	"NV_WARN_MORE_PROCESSING_REQUIRED",
	"NV_WARN_NOTHING_TO_DO", /* 0x10006 */
	"NV_WARN_NULL_OBJECT",
	"NV_WARN_OUT_OF_RANGE", /* 0x10008 */
};
/* clang-format on */

const char *gctx_nv_status_name(__u32 status)
{
	const char *name = dec_name_at(nv_err_names, ARRAY_SIZE(nv_err_names), status);

	if (name)
		return name;
	if (status == 0xffff)
		return "NV_ERR_GENERIC";
	if (status >= NV_WARN_BASE)
		return dec_name_at(nv_warn_names, ARRAY_SIZE(nv_warn_names), status - NV_WARN_BASE);
	return NULL;
}

/* "NV_OK", "NV_ERR_INVALID_CLIENT", ..., or "0x%x" for a status without a name. */
void dec_nv_status_str(__u32 status, char *buf, size_t bufsz)
{
	const char *name = gctx_nv_status_name(status);

	if (name)
		snprintf(buf, bufsz, "%s", name);
	else
		snprintf(buf, bufsz, "0x%x", status);
}

/*
 * Read the NV_STATUS result at off. It is the verdict only when the syscall itself succeeded:
 * on -errno the driver did not run the call or did not copy the parameters back.
 */
bool dec_nv_status(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 off)
{
	if (!dec_get_u32(c, RES, off, &d->status))
		return false;
	d->has_status = true;
	return true;
}

/* Append "key=NAME(0x%x)", or "key=0x%x" when name is NULL. */
static void nv_add_named(struct gctx_ioctl_desc *d, const char *key, const char *name, __u32 v)
{
	if (name)
		dec_add(d, "%s=%s(0x%x)", key, name, v);
	else
		dec_add(d, "%s=0x%x", key, v);
}

static void add_class(struct gctx_ioctl_desc *d, __u32 cls)
{
	d->obj_class = cls;
	nv_add_named(d, "class", gctx_nv_class_name(cls), cls);
}

static void add_nv_status(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
			  const char *key)
{
	char name[48];
	__u32 v;

	if (!dec_get_u32(c, s, off, &v))
		return;
	dec_nv_status_str(v, name, sizeof(name));
	dec_add(d, "%s=%s", key, name);
}

/*
 * hClient (hRoot) @0 and the parent (hObjectParent, hDevice) @4 that most RM parameters open
 * with; false when hClient was not captured.
 */
static bool nv_head(const struct ioc *c, struct gctx_ioctl_desc *d, const char *parent)
{
	bool have_client = dec_add_handle(d, c, ARG, 0x0, "client", &d->client);

	dec_add_handle(d, c, ARG, 0x4, parent, &d->parent);
	return have_client;
}

/* hObjectNew @8 is in/out: 0 asks RM to pick one and write it back. */
static void nv_new(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 h;

	if (dec_get_u32(c, RES, 0x8, &h) || dec_get_u32(c, ARG, 0x8, &h)) {
		dec_add(d, "new=0x%08x", h);
		d->handle = h;
	}
}

/* hClient, hDevice, hMemory: how the memory mapping escapes open */
static void nv_memory_head(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	nv_head(c, d, "device");
	dec_add_handle(d, c, ARG, 0x8, "memory", &d->handle);
}

/*
 * RM_ALLOC (NVOS21/NVOS64) and RM_ALLOC_OBJECT (NVOS05) share their first four fields, and
 * RM_ALLOC_MEMORY (NVOS02) too: hRoot, hObjectParent, hObjectNew, hClass. False without hClass.
 */
static bool nv_alloc_head(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 *cls)
{
	bool have_cls = dec_get_u32(c, ARG, 0xc, cls);

	if (have_cls)
		add_class(d, *cls);
	nv_head(c, d, "parent");
	nv_new(c, d);
	return have_cls;
}

static void nv_alloc(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 status_off)
{
	bool have_cls;
	__u32 cls;

	have_cls = nv_alloc_head(c, d, &cls);
	if (!status_off || !dec_nv_status(c, d, status_off) || !have_cls)
		return;
	d->op = GCTX_OP_CREATE;
	d->obj_kind = nv_class_kind(cls);
	if (d->obj_kind == GCTX_OBJ_RM_CLIENT)
		d->client = d->handle; /* a client is its own root */
}

static void nv_free(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	bool have_root, have_old;

	have_root = nv_head(c, d, "parent");
	have_old = dec_add_handle(d, c, ARG, 0x8, "object", &d->handle);
	if (!dec_nv_status(c, d, 0xc) || !have_root || !have_old)
		return;
	d->op = GCTX_OP_DESTROY;
	/* Freeing hRoot frees the whole client (escape.c). */
	d->obj_kind = d->handle == d->client ? GCTX_OBJ_RM_CLIENT : GCTX_OBJ_RM_OTHER;
}

/* NVOS02 with fd: hRoot, hObjectParent, hObjectNew, hClass, flags, pMemory, limit, status, fd */
static void nv_alloc_memory(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	bool have_cls, have_limit;
	__u32 cls, flags;
	__u64 limit;

	have_cls = nv_alloc_head(c, d, &cls);
	have_limit = dec_get_u64(c, ARG, 0x20, &limit);
	if (have_limit) {
		d->size = limit + 1;
		dec_add(d, "size=%llu", (unsigned long long)d->size);
	}
	if (dec_get_u32(c, ARG, 0x10, &flags))
		dec_add(d, "flags=0x%x", flags);
	dec_add_fd(d, c, ARG, 0x30, "fd");
	if (!dec_nv_status(c, d, 0x28) || !have_cls)
		return;
	d->op = GCTX_OP_CREATE;
	d->obj_kind = GCTX_OBJ_RM_MEMORY;
}

/* NVOS33 with fd: hClient, hDevice, hMemory, offset, length, pLinearAddress, status, flags, fd */
static void nv_map_memory(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u64 v;

	nv_memory_head(c, d);
	if (dec_get_u64(c, ARG, 0x10, &v))
		dec_add(d, "offset=0x%llx", (unsigned long long)v);
	if (dec_get_u64(c, ARG, 0x18, &v))
		dec_add(d, "length=%llu", (unsigned long long)v);
	dec_add_fd(d, c, ARG, 0x30, "fd");
	if (dec_get_u64(c, RES, 0x20, &v))
		dec_add(d, "addr=0x%llx", (unsigned long long)v);
	dec_nv_status(c, d, 0x28);
}

/* The first entry of the nv_ioctl_card_info_t array the driver fills. */
static void nv_card_info(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 size)
{
	__u8 valid, bus, slot, fn;
	__u16 vendor, device;
	__u32 domain, gpu_id, minor;

	dec_add(d, "entries=%u", size / NV_CARD_INFO_SIZE);
	if (!dec_get_u8(c, RES, 0x0, &valid) || !valid)
		return;
	if (dec_get_u32(c, RES, 0x4, &domain) && dec_get_u8(c, RES, 0x8, &bus) &&
	    dec_get_u8(c, RES, 0x9, &slot) && dec_get_u8(c, RES, 0xa, &fn))
		dec_add(d, "pci=%04x:%02x:%02x.%x", domain, bus, slot, fn);
	if (dec_get_u16(c, RES, 0xc, &vendor) && dec_get_u16(c, RES, 0xe, &device))
		dec_add(d, "id=%04x:%04x", vendor, device);
	if (dec_get_u32(c, RES, 0x10, &gpu_id))
		dec_add(d, "gpu_id=0x%x", gpu_id);
	if (dec_get_u32(c, RES, 0x38, &minor))
		dec_add(d, "minor=%u", minor);
}

/* nv_ioctl_rm_api_version_t {u32 cmd; u32 reply; char versionString[64]} */
static void nv_check_version(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	char mine[NV_VERSION_STR_LEN + 1], drv[NV_VERSION_STR_LEN + 1];
	bool have_mine = false;
	const char *answer;
	__u32 cmd, reply;

	if (dec_get_u32(c, ARG, 0x0, &cmd)) {
		if (cmd == 0)
			dec_add(d, "cmd=strict");
		else if (cmd == '1')
			dec_add(d, "cmd=relaxed");
		else if (cmd == '2')
			dec_add(d, "cmd=query");
		else
			dec_add(d, "cmd=0x%x", cmd);
	}
	if (c->ev->flags & GCTX_IOCTL_IN_OK)
		have_mine = dec_get_string(c, ARG, 0x8, NV_VERSION_STR_LEN, mine, sizeof(mine));
	if (have_mine)
		dec_add(d, "version=\"%s\"", mine);
	/* On a mismatch or a query the driver writes its own version back, even with -EINVAL. */
	if (dec_get_u32(c, EXIT, 0x4, &reply)) {
		answer = reply == 1 ? "recognized" : reply == 0 ? "unrecognized" : "?";
		dec_add(d, "reply=%s", answer);
	}
	if (dec_get_string(c, EXIT, 0x8, NV_VERSION_STR_LEN, drv, sizeof(drv)) &&
	    (!have_mine || strcmp(mine, drv)))
		dec_add(d, "driver=\"%s\"", drv);
}

static void nv_attach_gpus(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 size)
{
	char buf[120];
	size_t used = 0;
	__u32 i, id;

	if (d->no_text)
		return;
	buf[0] = '\0';
	for (i = 0; i + 4 <= size && used < sizeof(buf); i += 4) {
		if (!dec_get_u32(c, ARG, i, &id))
			break;
		used += snprintf(buf + used, sizeof(buf) - used, "%s0x%x", i ? "," : "", id);
	}
	if (i)
		dec_add(d, "gpu_ids=%s", buf);
}

static void nv_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 nr, __u32 size)
{
	__u32 v, v2;
	__u64 q;
	__u8 b, b2;

	switch (nr) {
	case NV_ESC_RM_ALLOC:
		if (size == NVOS21_SIZE) {
			nv_alloc(c, d, 0x1c);
		} else if (size == NVOS64_SIZE) {
			nv_alloc(c, d, 0x28);
		} else {
			nv_alloc(c, d, 0);
			dec_add(d, "unexpected_size=%u", size);
		}
		break;
	case NV_ESC_RM_ALLOC_OBJECT: /* NVOS05: hRoot, hObjectParent, hObjectNew, hClass, status */
		nv_alloc(c, d, 0x10);
		break;
	case NV_ESC_RM_FREE:
		nv_free(c, d);
		break;
	case NV_ESC_RM_CONTROL: /* NVOS54: hClient, hObject, cmd, flags, params, paramsSize */
		if (dec_get_u32(c, ARG, 0x8, &v)) {
			if (gctx_nv_ctrl_name(v))
				dec_add(d, "cmd=%s(0x%08x)", gctx_nv_ctrl_name(v), v);
			else
				dec_add(d, "cmd=0x%08x", v);
		}
		dec_add_handle(d, c, ARG, 0x0, "client", &d->client);
		dec_add_handle(d, c, ARG, 0x4, "object", &d->handle);
		if (dec_get_u32(c, ARG, 0x18, &v))
			dec_add(d, "params_size=%u", v);
		dec_nv_status(c, d, 0x1c);
		break;
	case NV_ESC_RM_ALLOC_MEMORY:
		nv_alloc_memory(c, d);
		break;
	case NV_ESC_RM_MAP_MEMORY:
		nv_map_memory(c, d);
		break;
	case NV_ESC_RM_UNMAP_MEMORY: /* NVOS34: hClient, hDevice, hMemory, pLinearAddress, status */
		nv_memory_head(c, d);
		if (dec_get_u64(c, ARG, 0x10, &q))
			dec_add(d, "addr=0x%llx", (unsigned long long)q);
		dec_nv_status(c, d, 0x18);
		break;
	case NV_ESC_RM_DUP_OBJECT: /* NVOS55: hClient, hParent, hObject, hClientSrc, hObjectSrc */
		nv_head(c, d, "parent");
		nv_new(c, d);
		dec_add_handle(d, c, ARG, 0xc, "src_client", NULL);
		dec_add_handle(d, c, ARG, 0x10, "src_object", NULL);
		dec_nv_status(c, d, 0x18);
		break;
	case NV_ESC_RM_SHARE: /* NVOS57: hClient, hObject, RS_SHARE_POLICY (12 bytes), status */
		dec_add_handle(d, c, ARG, 0x0, "client", &d->client);
		dec_add_handle(d, c, ARG, 0x4, "object", &d->handle);
		dec_nv_status(c, d, 0x14);
		break;
	case NV_ESC_RM_VID_HEAP_CONTROL: /* NVOS32: hRoot, hObjectParent, function, ..., status */
		nv_head(c, d, "parent");
		if (dec_get_u32(c, ARG, 0x8, &v))
			dec_add(d, "function=%u", v);
		dec_nv_status(c, d, 0x14);
		break;
	case NV_ESC_RM_MAP_MEMORY_DMA:
	case NV_ESC_RM_UNMAP_MEMORY_DMA:
		/* NVOS46/47 grew across driver releases (NVOS46 0x38 bytes in 535, 0x40 in 595;
		 * NVOS47 0x28, 0x30): the leading handles are fixed, and in each known size the
		 * u64 dmaOffset and then the status end the struct. */
		nv_head(c, d, "device");
		dec_add_handle(d, c, ARG, 0x8, "dma", NULL);
		dec_add_handle(d, c, ARG, 0xc, "memory", &d->handle);
		if (size != 0x38 && size != 0x40 && size != 0x28 && size != 0x30)
			break;
		if (nr == NV_ESC_RM_UNMAP_MEMORY_DMA && size == 0x30)
			v = 0x18; /* 595 adds a size after dmaOffset */
		else
			v = size - 0x10;
		if (dec_get_u64(c, nr == NV_ESC_RM_MAP_MEMORY_DMA ? RES : ARG, v, &q))
			dec_add(d, "dma_offset=0x%llx", (unsigned long long)q);
		dec_nv_status(c, d, size - 0x8);
		break;
	case NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO: /* NVOS56: hClient, hDevice, hMemory, ... */
		nv_memory_head(c, d);
		dec_nv_status(c, d, 0x20);
		break;
	case NV_ESC_CARD_INFO:
		nv_card_info(c, d, size);
		break;
	case NV_ESC_REGISTER_FD:
		dec_add_fd(d, c, ARG, 0x0, "ctl_fd");
		break;
	case NV_ESC_ALLOC_OS_EVENT:
	case NV_ESC_FREE_OS_EVENT: /* hClient, hDevice, fd, Status */
		nv_head(c, d, "device");
		dec_add_fd(d, c, ARG, 0x8, "fd");
		dec_nv_status(c, d, 0xc);
		break;
	case NV_ESC_STATUS_CODE: /* domain, bus, slot, status: the GPU's state, not a verdict */
		if (dec_get_u32(c, ARG, 0x0, &v) && dec_get_u8(c, ARG, 0x4, &b) &&
		    dec_get_u8(c, ARG, 0x5, &b2))
			dec_add(d, "pci=%04x:%02x:%02x", v, b, b2);
		add_nv_status(d, c, RES, 0x8, "gpu_status");
		break;
	case NV_ESC_CHECK_VERSION_STR:
		nv_check_version(c, d);
		break;
	case NV_ESC_IOCTL_XFER_CMD: /* seen only when the BPF side could not unwrap it */
		if (dec_get_u32(c, ARG, 0x0, &v))
			nv_add_named(d, "inner", nv_esc_name(v), v);
		if (dec_get_u32(c, ARG, 0x4, &v2))
			dec_add(d, "size=%u", v2);
		dec_add(d, "not unwrapped");
		break;
	case NV_ESC_ATTACH_GPUS_TO_FD:
		nv_attach_gpus(c, d, size);
		break;
	case NV_ESC_SYS_PARAMS:
		if (dec_get_u64(c, ARG, 0x0, &q))
			dec_add(d, "memblock_size=0x%llx", (unsigned long long)q);
		break;
	case NV_ESC_EXPORT_TO_DMABUF_FD: /* status lies far beyond the captured bytes */
		dec_add_handle(d, c, ARG, 0x4, "client", &d->client);
		if (dec_get_u32(c, ARG, 0xc, &v) && dec_get_u32(c, ARG, 0x8, &v2))
			dec_add(d, "objects=%u/%u", v, v2);
		if (dec_get_u64(c, ARG, 0x18, &q))
			dec_add(d, "size=%llu", (unsigned long long)q);
		dec_add_fd(d, c, RES, 0x0, "fd");
		break;
	case NV_ESC_WAIT_OPEN_COMPLETE:
		dec_add_fd(d, c, RES, 0x0, "rc");
		add_nv_status(d, c, RES, 0x4, "adapter_status");
		break;
	default:
		break;
	}
}

void dec_rm(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	const struct gctx_ev_ioctl *ev = c->ev;
	bool xfer = ev->flags & GCTX_IOCTL_XFER;
	const char *name;
	struct ioc ic;
	__u32 nr, size, cmd;

	if (_IOC_TYPE(ev->cmd) != NV_IOCTL_MAGIC) {
		dec_raw_cmd(d, ev->cmd);
		return;
	}
	nr = xfer ? ev->inner_cmd : _IOC_NR(ev->cmd);
	size = xfer ? ev->size : _IOC_SIZE(ev->cmd);
	ic = dec_sized(c, size);

	name = nv_esc_name(nr);
	if (name) {
		dec_set_name(d, name);
		nv_params(&ic, d, nr, size);
		/* a client control's own parameters, copied after the NVOS54 (uncapped c) */
		if (nr == NV_ESC_RM_CONTROL && !xfer && d->has_status && !d->status &&
		    dec_get_u32(c, ARG, 0x8, &cmd))
			dec_nv_ctrl_params(c, d, cmd);
	} else {
		dec_raw_name(d, NV_IOCTL_MAGIC, nr, size);
	}
	if (xfer)
		dec_add(d, "via XFER");
}
