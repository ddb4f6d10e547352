// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Decoding of GPU driver ioctls (see decode.h). ABI facts come from
 * shared/reference/gpu-facts.md: §1.2-1.5 for NVIDIA RM and UVM, §2.1 for KFD, §2.4 for amdgpu.
 *
 * Every parameter field is read with memcpy at its ABI offset, little-endian, and only when it
 * lies inside the captured bytes (ev->len, capped at the array and at the parameter size the
 * driver sees). A short or truncated capture decodes what fits and nothing else. An object
 * effect (op) is reported only when the call's verdict and the object's handle were both read.
 */
#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "decode/decode.h"

#include "decode/kfd_compat.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- reading the captured parameters ---- */

/* Where a field is read from. */
enum src {
	ARG,  /* an input the driver does not change: entry bytes, else exit bytes */
	RES,  /* a result: exit bytes of a call that did not fail with -errno */
	EXIT, /* exit bytes whatever the syscall returned */
};

struct ioc {
	const struct gctx_ev_ioctl *ev;
	__u32 avail; /* leading bytes of in[]/out[] that hold parameters */
};

static const __u8 *field(const struct ioc *c, enum src s, __u32 off, __u32 n)
{
	const struct gctx_ev_ioctl *ev = c->ev;

	if (off > c->avail || n > c->avail - off)
		return NULL;
	if (s == ARG && (ev->flags & GCTX_IOCTL_IN_OK))
		return ev->in + off;
	if (s == RES && ev->ret < 0)
		return NULL;
	if (ev->flags & GCTX_IOCTL_OUT_OK)
		return ev->out + off;
	return NULL;
}

static bool get_u8(const struct ioc *c, enum src s, __u32 off, __u8 *v)
{
	const __u8 *p = field(c, s, off, 1);

	if (!p)
		return false;
	*v = *p;
	return true;
}

static bool get_u16(const struct ioc *c, enum src s, __u32 off, __u16 *v)
{
	const __u8 *p = field(c, s, off, sizeof(*v));
	__u16 x;

	if (!p)
		return false;
	memcpy(&x, p, sizeof(x));
	*v = le16toh(x);
	return true;
}

static bool get_u32(const struct ioc *c, enum src s, __u32 off, __u32 *v)
{
	const __u8 *p = field(c, s, off, sizeof(*v));
	__u32 x;

	if (!p)
		return false;
	memcpy(&x, p, sizeof(x));
	*v = le32toh(x);
	return true;
}

static bool get_s32(const struct ioc *c, enum src s, __u32 off, int *v)
{
	__u32 x;

	if (!get_u32(c, s, off, &x))
		return false;
	*v = (int)x;
	return true;
}

static bool get_u64(const struct ioc *c, enum src s, __u32 off, __u64 *v)
{
	const __u8 *p = field(c, s, off, sizeof(*v));
	__u64 x;

	if (!p)
		return false;
	memcpy(&x, p, sizeof(x));
	*v = le64toh(x);
	return true;
}

/* ---- building the description ---- */

static void set_name(struct gctx_ioctl_desc *d, const char *name)
{
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->known = true;
}

static void raw_name(struct gctx_ioctl_desc *d, __u32 type, __u32 nr, __u32 size)
{
	snprintf(d->name, sizeof(d->name), "ioctl(type=0x%02x nr=0x%02x size=%u)", type, nr, size);
	d->known = false;
}

static void add(struct gctx_ioctl_desc *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append one space-separated item to d->detail; silently truncated when full. */
static void add(struct gctx_ioctl_desc *d, const char *fmt, ...)
{
	size_t used = strlen(d->detail);
	va_list ap;

	if (used + 1 >= sizeof(d->detail))
		return;
	if (used)
		d->detail[used++] = ' ';
	va_start(ap, fmt);
	vsnprintf(d->detail + used, sizeof(d->detail) - used, fmt, ap);
	va_end(ap);
}

/* Append "key=0x%08x" for a u32 handle that was captured; optionally keep it in *keep. */
static bool add_handle(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		       const char *key, __u64 *keep)
{
	__u32 v;

	if (!get_u32(c, s, off, &v))
		return false;
	add(d, "%s=0x%08x", key, v);
	if (keep)
		*keep = v;
	return true;
}

static bool add_fd(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
		   const char *key)
{
	int v;

	if (!get_s32(c, s, off, &v))
		return false;
	add(d, "%s=%d", key, v);
	return true;
}

struct flag_name {
	__u64 bit;
	const char *name;
};

/* Append "key=0x..(A|B|0x..)": known bits by name, the rest as hex. */
static void add_flags(struct gctx_ioctl_desc *d, const char *key, __u64 v,
		      const struct flag_name *t, size_t n)
{
	const char *sep;
	char buf[160];
	size_t used = 0;
	__u64 rest = v;
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < n && used < sizeof(buf); i++) {
		if (!(v & t[i].bit))
			continue;
		sep = used ? "|" : "";
		used += snprintf(buf + used, sizeof(buf) - used, "%s%s", sep, t[i].name);
		rest &= ~t[i].bit;
	}
	if (rest && used < sizeof(buf))
		snprintf(buf + used, sizeof(buf) - used, "%s0x%llx", used ? "|" : "",
			 (unsigned long long)rest);
	if (v)
		add(d, "%s=0x%llx(%s)", key, (unsigned long long)v, buf);
	else
		add(d, "%s=0x0", key);
}

/* A GPU UUID as nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx. */
static void add_uuid(struct gctx_ioctl_desc *d, const struct ioc *c, __u32 off)
{
	char buf[48];
	size_t used;
	__u8 b = 0;
	int i;

	if (!field(c, ARG, off, 16))
		return;
	used = (size_t)snprintf(buf, sizeof(buf), "GPU-");
	for (i = 0; i < 16; i++) {
		get_u8(c, ARG, off + i, &b);
		if (i == 4 || i == 6 || i == 8 || i == 10)
			buf[used++] = '-';
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%02x", b);
	}
	add(d, "uuid=%s", buf);
}

/*
 * Read a fixed-size char array up to its NUL into buf (non-printables and '"' become '?').
 * False when not even its first byte was captured.
 */
static bool get_string(const struct ioc *c, enum src s, __u32 off, __u32 max, char *buf,
		       size_t bufsz)
{
	__u32 i;
	__u8 ch;

	if (!get_u8(c, s, off, &ch))
		return false;
	for (i = 0; i < max && i + 1 < bufsz; i++) {
		if (!get_u8(c, s, off + i, &ch) || !ch)
			break;
		buf[i] = (ch < 0x20 || ch >= 0x7f || ch == '"') ? '?' : (char)ch;
	}
	buf[i] = '\0';
	return true;
}

/* ---- NVIDIA RM ---- */

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
	return nr < ARRAY_SIZE(nv_esc_names) ? nv_esc_names[nr] : NULL;
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
	if (status < ARRAY_SIZE(nv_err_names))
		return nv_err_names[status];
	if (status == 0xffff)
		return "NV_ERR_GENERIC";
	if (status >= NV_WARN_BASE && status - NV_WARN_BASE < ARRAY_SIZE(nv_warn_names))
		return nv_warn_names[status - NV_WARN_BASE];
	return NULL;
}

/*
 * Read the NV_STATUS result at off. It is the verdict only when the syscall itself succeeded:
 * on -errno the driver did not run the call or did not copy the parameters back.
 */
static bool nv_status(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 off)
{
	if (!get_u32(c, RES, off, &d->status))
		return false;
	d->has_status = true;
	return true;
}

static void add_class(struct gctx_ioctl_desc *d, __u32 cls)
{
	const char *name = gctx_nv_class_name(cls);

	d->obj_class = cls;
	if (name)
		add(d, "class=%s(0x%x)", name, cls);
	else
		add(d, "class=0x%x", cls);
}

static void add_nv_status(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off,
			  const char *key)
{
	const char *name;
	__u32 v;

	if (!get_u32(c, s, off, &v))
		return;
	name = gctx_nv_status_name(v);
	if (name)
		add(d, "%s=%s", key, name);
	else
		add(d, "%s=0x%x", key, v);
}

/* RM_ALLOC (NVOS21/NVOS64) and RM_ALLOC_OBJECT (NVOS05) share their first four fields. */
static void nv_alloc(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 status_off)
{
	bool have_cls;
	__u32 cls, h;

	have_cls = get_u32(c, ARG, 0xc, &cls);
	if (have_cls)
		add_class(d, cls);
	add_handle(d, c, ARG, 0x0, "client", &d->client);
	add_handle(d, c, ARG, 0x4, "parent", &d->parent);
	/* hObjectNew is in/out: 0 asks RM to pick one and write it back. */
	if (get_u32(c, RES, 0x8, &h) || get_u32(c, ARG, 0x8, &h)) {
		add(d, "new=0x%08x", h);
		d->handle = h;
	}
	if (!status_off || !nv_status(c, d, status_off) || !have_cls)
		return;
	d->op = GCTX_OP_CREATE;
	d->obj_kind = nv_class_kind(cls);
	if (d->obj_kind == GCTX_OBJ_RM_CLIENT)
		d->client = d->handle; /* a client is its own root */
}

static void nv_free(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	bool have_root, have_old;

	have_root = add_handle(d, c, ARG, 0x0, "client", &d->client);
	add_handle(d, c, ARG, 0x4, "parent", &d->parent);
	have_old = add_handle(d, c, ARG, 0x8, "object", &d->handle);
	if (!nv_status(c, d, 0xc) || !have_root || !have_old)
		return;
	d->op = GCTX_OP_DESTROY;
	/* Freeing hRoot frees the whole client (escape.c). */
	d->obj_kind = d->handle == d->client ? GCTX_OBJ_RM_CLIENT : GCTX_OBJ_RM_OTHER;
}

/* NVOS02 with fd: hRoot, hObjectParent, hObjectNew, hClass, flags, pMemory, limit, status, fd */
static void nv_alloc_memory(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	bool have_cls, have_limit;
	__u32 cls, h, flags;
	__u64 limit;

	have_cls = get_u32(c, ARG, 0xc, &cls);
	if (have_cls)
		add_class(d, cls);
	add_handle(d, c, ARG, 0x0, "client", &d->client);
	add_handle(d, c, ARG, 0x4, "parent", &d->parent);
	if (get_u32(c, RES, 0x8, &h) || get_u32(c, ARG, 0x8, &h)) {
		add(d, "new=0x%08x", h);
		d->handle = h;
	}
	have_limit = get_u64(c, ARG, 0x20, &limit);
	if (have_limit) {
		d->size = limit + 1;
		add(d, "size=%llu", (unsigned long long)d->size);
	}
	if (get_u32(c, ARG, 0x10, &flags))
		add(d, "flags=0x%x", flags);
	add_fd(d, c, ARG, 0x30, "fd");
	if (!nv_status(c, d, 0x28) || !have_cls)
		return;
	d->op = GCTX_OP_CREATE;
	d->obj_kind = GCTX_OBJ_RM_MEMORY;
}

/* NVOS33 with fd: hClient, hDevice, hMemory, offset, length, pLinearAddress, status, flags, fd */
static void nv_map_memory(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u64 v;

	add_handle(d, c, ARG, 0x0, "client", &d->client);
	add_handle(d, c, ARG, 0x4, "device", &d->parent);
	add_handle(d, c, ARG, 0x8, "memory", &d->handle);
	if (get_u64(c, ARG, 0x10, &v))
		add(d, "offset=0x%llx", (unsigned long long)v);
	if (get_u64(c, ARG, 0x18, &v))
		add(d, "length=%llu", (unsigned long long)v);
	add_fd(d, c, ARG, 0x30, "fd");
	if (get_u64(c, RES, 0x20, &v))
		add(d, "addr=0x%llx", (unsigned long long)v);
	nv_status(c, d, 0x28);
}

/* The first entry of the nv_ioctl_card_info_t array the driver fills. */
static void nv_card_info(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 size)
{
	__u8 valid, bus, slot, fn;
	__u16 vendor, device;
	__u32 domain, gpu_id, minor;

	add(d, "entries=%u", size / NV_CARD_INFO_SIZE);
	if (!get_u8(c, RES, 0x0, &valid) || !valid)
		return;
	if (get_u32(c, RES, 0x4, &domain) && get_u8(c, RES, 0x8, &bus) &&
	    get_u8(c, RES, 0x9, &slot) && get_u8(c, RES, 0xa, &fn))
		add(d, "pci=%04x:%02x:%02x.%x", domain, bus, slot, fn);
	if (get_u16(c, RES, 0xc, &vendor) && get_u16(c, RES, 0xe, &device))
		add(d, "id=%04x:%04x", vendor, device);
	if (get_u32(c, RES, 0x10, &gpu_id))
		add(d, "gpu_id=0x%x", gpu_id);
	if (get_u32(c, RES, 0x38, &minor))
		add(d, "minor=%u", minor);
}

/* nv_ioctl_rm_api_version_t {u32 cmd; u32 reply; char versionString[64]} */
static void nv_check_version(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	char mine[NV_VERSION_STR_LEN + 1], drv[NV_VERSION_STR_LEN + 1];
	bool have_mine = false;
	__u32 cmd, reply;

	if (get_u32(c, ARG, 0x0, &cmd)) {
		if (cmd == 0)
			add(d, "cmd=strict");
		else if (cmd == '1')
			add(d, "cmd=relaxed");
		else if (cmd == '2')
			add(d, "cmd=query");
		else
			add(d, "cmd=0x%x", cmd);
	}
	if (c->ev->flags & GCTX_IOCTL_IN_OK)
		have_mine = get_string(c, ARG, 0x8, NV_VERSION_STR_LEN, mine, sizeof(mine));
	if (have_mine)
		add(d, "version=\"%s\"", mine);
	/* On a mismatch or a query the driver writes its own version back, even with -EINVAL. */
	if (get_u32(c, EXIT, 0x4, &reply))
		add(d, "reply=%s", reply == 1 ? "recognized" : reply == 0 ? "unrecognized" : "?");
	if (get_string(c, EXIT, 0x8, NV_VERSION_STR_LEN, drv, sizeof(drv)) &&
	    (!have_mine || strcmp(mine, drv)))
		add(d, "driver=\"%s\"", drv);
}

static void nv_attach_gpus(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 size)
{
	char buf[120];
	size_t used = 0;
	__u32 i, id;

	buf[0] = '\0';
	for (i = 0; i + 4 <= size && used < sizeof(buf); i += 4) {
		if (!get_u32(c, ARG, i, &id))
			break;
		used += snprintf(buf + used, sizeof(buf) - used, "%s0x%x", i ? "," : "", id);
	}
	if (i)
		add(d, "gpu_ids=%s", buf);
}

static void nv_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 nr, __u32 size)
{
	const char *name;
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
			add(d, "unexpected_size=%u", size);
		}
		break;
	case NV_ESC_RM_ALLOC_OBJECT: /* NVOS05: hRoot, hObjectParent, hObjectNew, hClass, status */
		nv_alloc(c, d, 0x10);
		break;
	case NV_ESC_RM_FREE:
		nv_free(c, d);
		break;
	case NV_ESC_RM_CONTROL: /* NVOS54: hClient, hObject, cmd, flags, params, paramsSize */
		if (get_u32(c, ARG, 0x8, &v))
			add(d, "cmd=0x%08x", v);
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "object", &d->handle);
		if (get_u32(c, ARG, 0x18, &v))
			add(d, "params_size=%u", v);
		nv_status(c, d, 0x1c);
		break;
	case NV_ESC_RM_ALLOC_MEMORY:
		nv_alloc_memory(c, d);
		break;
	case NV_ESC_RM_MAP_MEMORY:
		nv_map_memory(c, d);
		break;
	case NV_ESC_RM_UNMAP_MEMORY: /* NVOS34: hClient, hDevice, hMemory, pLinearAddress, status */
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "device", &d->parent);
		add_handle(d, c, ARG, 0x8, "memory", &d->handle);
		if (get_u64(c, ARG, 0x10, &q))
			add(d, "addr=0x%llx", (unsigned long long)q);
		nv_status(c, d, 0x18);
		break;
	case NV_ESC_RM_DUP_OBJECT: /* NVOS55: hClient, hParent, hObject, hClientSrc, hObjectSrc */
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "parent", &d->parent);
		if (get_u32(c, RES, 0x8, &v) || get_u32(c, ARG, 0x8, &v)) {
			add(d, "new=0x%08x", v);
			d->handle = v;
		}
		add_handle(d, c, ARG, 0xc, "src_client", NULL);
		add_handle(d, c, ARG, 0x10, "src_object", NULL);
		nv_status(c, d, 0x18);
		break;
	case NV_ESC_RM_SHARE: /* NVOS57: hClient, hObject, RS_SHARE_POLICY (12 bytes), status */
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "object", &d->handle);
		nv_status(c, d, 0x14);
		break;
	case NV_ESC_RM_VID_HEAP_CONTROL: /* NVOS32: hRoot, hObjectParent, function, ..., status */
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "parent", &d->parent);
		if (get_u32(c, ARG, 0x8, &v))
			add(d, "function=%u", v);
		nv_status(c, d, 0x14);
		break;
	case NV_ESC_RM_MAP_MEMORY_DMA:
	case NV_ESC_RM_UNMAP_MEMORY_DMA:
		/* NVOS46/47 grew across driver releases: only the leading handles are fixed. */
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "device", &d->parent);
		add_handle(d, c, ARG, 0x8, "dma", NULL);
		add_handle(d, c, ARG, 0xc, "memory", &d->handle);
		break;
	case NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO: /* NVOS56: hClient, hDevice, hMemory, ... */
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "device", &d->parent);
		add_handle(d, c, ARG, 0x8, "memory", &d->handle);
		nv_status(c, d, 0x20);
		break;
	case NV_ESC_CARD_INFO:
		nv_card_info(c, d, size);
		break;
	case NV_ESC_REGISTER_FD:
		add_fd(d, c, ARG, 0x0, "ctl_fd");
		break;
	case NV_ESC_ALLOC_OS_EVENT:
	case NV_ESC_FREE_OS_EVENT: /* hClient, hDevice, fd, Status */
		add_handle(d, c, ARG, 0x0, "client", &d->client);
		add_handle(d, c, ARG, 0x4, "device", &d->parent);
		add_fd(d, c, ARG, 0x8, "fd");
		nv_status(c, d, 0xc);
		break;
	case NV_ESC_STATUS_CODE: /* domain, bus, slot, status: the GPU's state, not a verdict */
		if (get_u32(c, ARG, 0x0, &v) && get_u8(c, ARG, 0x4, &b) && get_u8(c, ARG, 0x5, &b2))
			add(d, "pci=%04x:%02x:%02x", v, b, b2);
		add_nv_status(d, c, RES, 0x8, "gpu_status");
		break;
	case NV_ESC_CHECK_VERSION_STR:
		nv_check_version(c, d);
		break;
	case NV_ESC_IOCTL_XFER_CMD: /* seen only when the BPF side could not unwrap it */
		if (get_u32(c, ARG, 0x0, &v)) {
			name = nv_esc_name(v);
			if (name)
				add(d, "inner=%s(0x%x)", name, v);
			else
				add(d, "inner=0x%x", v);
		}
		if (get_u32(c, ARG, 0x4, &v2))
			add(d, "size=%u", v2);
		add(d, "not unwrapped");
		break;
	case NV_ESC_ATTACH_GPUS_TO_FD:
		nv_attach_gpus(c, d, size);
		break;
	case NV_ESC_SYS_PARAMS:
		if (get_u64(c, ARG, 0x0, &q))
			add(d, "memblock_size=0x%llx", (unsigned long long)q);
		break;
	case NV_ESC_EXPORT_TO_DMABUF_FD: /* status lies far beyond the captured bytes */
		add_handle(d, c, ARG, 0x4, "client", &d->client);
		if (get_u32(c, ARG, 0xc, &v) && get_u32(c, ARG, 0x8, &v2))
			add(d, "objects=%u/%u", v, v2);
		if (get_u64(c, ARG, 0x18, &q))
			add(d, "size=%llu", (unsigned long long)q);
		add_fd(d, c, RES, 0x0, "fd");
		break;
	case NV_ESC_WAIT_OPEN_COMPLETE:
		add_fd(d, c, RES, 0x0, "rc");
		add_nv_status(d, c, RES, 0x4, "adapter_status");
		break;
	default:
		break;
	}
}

static void decode_nv(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	const struct gctx_ev_ioctl *ev = c->ev;
	bool xfer = ev->flags & GCTX_IOCTL_XFER;
	struct ioc ic = *c;
	const char *name;
	__u32 nr, size;

	if (_IOC_TYPE(ev->cmd) != NV_IOCTL_MAGIC) {
		raw_name(d, _IOC_TYPE(ev->cmd), _IOC_NR(ev->cmd), _IOC_SIZE(ev->cmd));
		return;
	}
	nr = xfer ? ev->inner_cmd : _IOC_NR(ev->cmd);
	size = xfer ? ev->size : _IOC_SIZE(ev->cmd);
	if (ic.avail > size)
		ic.avail = size;

	name = nv_esc_name(nr);
	if (name) {
		set_name(d, name);
		nv_params(&ic, d, nr, size);
	} else {
		raw_name(d, NV_IOCTL_MAGIC, nr, size);
	}
	if (xfer)
		add(d, "via XFER");
}

/* ---- NVIDIA UVM ---- */

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

/* gpuUuid[16] @0, rmCtrlFd @0x10 (REGISTER_GPU: @0x18), hClient next, then the RM object */
static void uvm_register(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 fd_off,
			 const char *obj)
{
	add_uuid(d, c, 0x0);
	add_fd(d, c, ARG, fd_off, "rmCtrlFd");
	add_handle(d, c, ARG, fd_off + 4, "hClient", &d->client);
	if (obj)
		add_handle(d, c, ARG, fd_off + 8, obj, &d->handle);
}

static void decode_uvm(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 cmd = c->ev->cmd;
	__u64 v;

	/* UVM numbers are plain integers; anything carrying an _IOC type byte is foreign. */
	if (_IOC_TYPE(cmd)) {
		raw_name(d, _IOC_TYPE(cmd), _IOC_NR(cmd), _IOC_SIZE(cmd));
		return;
	}
	if (cmd == UVM_INITIALIZE) {
		set_name(d, "UVM_INITIALIZE");
		if (get_u64(c, ARG, 0x0, &v))
			add_flags(d, "flags", v, uvm_init_flags, ARRAY_SIZE(uvm_init_flags));
		if (nv_status(c, d, 0x8)) {
			d->op = GCTX_OP_CREATE;
			d->obj_kind = GCTX_OBJ_UVM_SPACE;
		}
		return;
	}
	if (cmd == UVM_DEINITIALIZE) {
		set_name(d, "UVM_DEINITIALIZE"); /* no parameters: the syscall is the verdict */
		d->op = GCTX_OP_DESTROY;
		d->obj_kind = GCTX_OBJ_UVM_SPACE;
		return;
	}
	if (cmd >= ARRAY_SIZE(uvm_names) || !uvm_names[cmd]) {
		snprintf(d->name, sizeof(d->name), "uvm(0x%x)", cmd);
		return;
	}
	set_name(d, uvm_names[cmd]);
	switch (cmd) {
	case UVM_CREATE_RANGE_GROUP:
		if (get_u64(c, RES, 0x0, &v))
			add(d, "range_group=0x%llx", (unsigned long long)v);
		nv_status(c, d, 0x8);
		break;
	case UVM_DESTROY_RANGE_GROUP:
		if (get_u64(c, ARG, 0x0, &v))
			add(d, "range_group=0x%llx", (unsigned long long)v);
		nv_status(c, d, 0x8);
		break;
	case UVM_REGISTER_GPU_VASPACE:
		uvm_register(c, d, 0x10, "hVaSpace");
		nv_status(c, d, 0x1c);
		break;
	case UVM_REGISTER_CHANNEL:
		uvm_register(c, d, 0x10, "hChannel");
		if (get_u64(c, ARG, 0x20, &v))
			add(d, "base=0x%llx", (unsigned long long)v);
		if (get_u64(c, ARG, 0x28, &v))
			add(d, "length=%llu", (unsigned long long)v);
		nv_status(c, d, 0x30);
		break;
	case UVM_REGISTER_GPU:
		uvm_register(c, d, 0x18, NULL);
		nv_status(c, d, 0x24);
		break;
	case UVM_UNREGISTER_GPU:
		add_uuid(d, c, 0x0);
		nv_status(c, d, 0x10);
		break;
	case UVM_MM_INITIALIZE:
		add_fd(d, c, ARG, 0x0, "uvm_fd");
		nv_status(c, d, 0x4);
		break;
	default:
		break; /* layout not known here: no status */
	}
}

/* ---- AMD KFD ---- */

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

static bool add_gpu_id(struct gctx_ioctl_desc *d, const struct ioc *c, enum src s, __u32 off)
{
	__u32 v;

	if (!get_u32(c, s, off, &v))
		return false;
	add(d, "gpu_id=0x%x", v);
	d->parent = v;
	return true;
}

static void kfd_create_queue(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 v;
	__u64 q;

	add_gpu_id(d, c, ARG, KOFF(create_queue, gpu_id));
	if (get_u32(c, ARG, KOFF(create_queue, queue_type), &v)) {
		if (v < ARRAY_SIZE(kfd_queue_types) && kfd_queue_types[v])
			add(d, "type=%s", kfd_queue_types[v]);
		else
			add(d, "type=%u", v);
	}
	if (get_u64(c, ARG, KOFF(create_queue, ring_base_address), &q))
		add(d, "ring=0x%llx", (unsigned long long)q);
	if (get_u32(c, ARG, KOFF(create_queue, ring_size), &v))
		add(d, "ring_size=%u", v);
	if (get_u32(c, ARG, KOFF(create_queue, queue_priority), &v))
		add(d, "priority=%u", v);
	if (get_u32(c, RES, KOFF(create_queue, queue_id), &v)) {
		add(d, "queue_id=%u", v);
		d->handle = v;
		d->op = GCTX_OP_CREATE;
		d->obj_kind = GCTX_OBJ_KFD_QUEUE;
	}
}

static void kfd_alloc_memory(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 flags;
	__u64 v;

	add_gpu_id(d, c, ARG, KOFF(alloc_memory_of_gpu, gpu_id));
	if (get_u64(c, ARG, KOFF(alloc_memory_of_gpu, size), &v)) {
		d->size = v;
		add(d, "size=%llu", (unsigned long long)v);
	}
	if (get_u64(c, ARG, KOFF(alloc_memory_of_gpu, va_addr), &v))
		add(d, "va=0x%llx", (unsigned long long)v);
	if (get_u32(c, ARG, KOFF(alloc_memory_of_gpu, flags), &flags))
		add_flags(d, "flags", flags, kfd_mem_flags, ARRAY_SIZE(kfd_mem_flags));
	if (get_u64(c, RES, KOFF(alloc_memory_of_gpu, handle), &v)) {
		add(d, "handle=0x%llx", (unsigned long long)v);
		d->handle = v;
		d->op = GCTX_OP_CREATE;
		d->obj_kind = GCTX_OBJ_KFD_MEMORY;
	}
}

static void kfd_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 nr)
{
	__u32 a, b;
	__u64 v;
	int fd;

	switch (nr) {
	case 0x01: /* GET_VERSION */
		if (get_u32(c, RES, KOFF(get_version, major_version), &a) &&
		    get_u32(c, RES, KOFF(get_version, minor_version), &b))
			add(d, "version=%u.%u", a, b);
		break;
	case 0x02:
		kfd_create_queue(c, d);
		break;
	case 0x03: /* DESTROY_QUEUE */
		if (get_u32(c, ARG, KOFF(destroy_queue, queue_id), &a)) {
			add(d, "queue_id=%u", a);
			d->handle = a;
			d->op = GCTX_OP_DESTROY;
			d->obj_kind = GCTX_OBJ_KFD_QUEUE;
		}
		break;
	case 0x15: /* ACQUIRE_VM */
		add_fd(d, c, ARG, KOFF(acquire_vm, drm_fd), "drm_fd");
		add_gpu_id(d, c, ARG, KOFF(acquire_vm, gpu_id));
		break;
	case 0x16:
		kfd_alloc_memory(c, d);
		break;
	case 0x17: /* FREE_MEMORY_OF_GPU */
		if (get_u64(c, ARG, KOFF(free_memory_of_gpu, handle), &v)) {
			add(d, "handle=0x%llx", (unsigned long long)v);
			d->handle = v;
			d->op = GCTX_OP_DESTROY;
			d->obj_kind = GCTX_OBJ_KFD_MEMORY;
		}
		break;
	case 0x18: /* MAP_MEMORY_TO_GPU */
	case 0x19: /* UNMAP_MEMORY_FROM_GPU, same layout */
		if (get_u64(c, ARG, KOFF(map_memory_to_gpu, handle), &v)) {
			add(d, "handle=0x%llx", (unsigned long long)v);
			d->handle = v;
		}
		if (get_u32(c, ARG, KOFF(map_memory_to_gpu, n_devices), &a))
			add(d, "devices=%u", a);
		if (get_u32(c, RES, KOFF(map_memory_to_gpu, n_success), &b))
			add(d, "done=%u", b);
		break;
	case 0x1d: /* IMPORT_DMABUF: a memory handle that FREE_MEMORY_OF_GPU releases */
		add_gpu_id(d, c, ARG, KOFF(import_dmabuf, gpu_id));
		if (get_s32(c, ARG, KOFF(import_dmabuf, dmabuf_fd), &fd))
			add(d, "dmabuf_fd=%d", fd);
		if (get_u64(c, RES, KOFF(import_dmabuf, handle), &v)) {
			add(d, "handle=0x%llx", (unsigned long long)v);
			d->handle = v;
			d->op = GCTX_OP_CREATE;
			d->obj_kind = GCTX_OBJ_KFD_MEMORY;
		}
		break;
	case 0x21: /* SET_XNACK_MODE */
		add_fd(d, c, ARG, KOFF(set_xnack_mode, xnack_enabled), "xnack");
		break;
	default:
		break;
	}
}

static void decode_kfd(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 cmd = c->ev->cmd, nr = _IOC_NR(cmd);
	struct ioc ic = *c;

	if (_IOC_TYPE(cmd) != AMDKFD_IOCTL_BASE || nr >= ARRAY_SIZE(kfd_names) || !kfd_names[nr]) {
		raw_name(d, _IOC_TYPE(cmd), nr, _IOC_SIZE(cmd));
		return;
	}
	set_name(d, kfd_names[nr]);
	/* The struct size varies across KFD versions: decode whatever the caller passed. */
	if (ic.avail > _IOC_SIZE(cmd))
		ic.avail = _IOC_SIZE(cmd);
	kfd_params(&ic, d, nr);
}

/* ---- DRM render nodes (core and amdgpu) ---- */

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
	__u32 op, v;
	int prio;

	if (!get_u32(c, ARG, 0x0, &op))
		return;
	if (op < ARRAY_SIZE(amdgpu_ctx_ops) && amdgpu_ctx_ops[op])
		add(d, "op=%s", amdgpu_ctx_ops[op]);
	else
		add(d, "op=%u", op);
	if (op == AMDGPU_CTX_OP_ALLOC_CTX) {
		if (get_s32(c, ARG, 0xc, &prio))
			add(d, "priority=%d", prio);
		if (get_u32(c, RES, 0x0, &v)) {
			add(d, "ctx_id=%u", v);
			d->handle = v;
			d->op = GCTX_OP_CREATE;
			d->obj_kind = GCTX_OBJ_DRM_CTX;
		}
	} else if (get_u32(c, ARG, 0x8, &v)) {
		add(d, "ctx_id=%u", v);
		d->handle = v;
		if (op == AMDGPU_CTX_OP_FREE_CTX) {
			d->op = GCTX_OP_DESTROY;
			d->obj_kind = GCTX_OBJ_DRM_CTX;
		}
	}
}

/* A new GEM handle at out_off whose size is the u64 input at size_off. */
static void gem_created(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 size_off,
			__u32 out_off)
{
	__u64 size;
	__u32 h;

	if (get_u64(c, ARG, size_off, &size)) {
		d->size = size;
		add(d, "size=%llu", (unsigned long long)size);
	}
	if (get_u32(c, RES, out_off, &h)) {
		add(d, "handle=%u", h);
		d->handle = h;
		d->op = GCTX_OP_CREATE;
		d->obj_kind = GCTX_OBJ_DRM_GEM;
	}
}

static void amdgpu_params(const struct ioc *c, struct gctx_ioctl_desc *d, __u32 n)
{
	__u64 v;
	__u32 h;

	switch (n) {
	case AMDGPU_GEM_CREATE: /* in {bo_size, alignment, domains, domain_flags}; out {handle} */
		if (get_u64(c, ARG, 0x10, &v))
			add_flags(d, "domains", v, amdgpu_domains, ARRAY_SIZE(amdgpu_domains));
		if (get_u64(c, ARG, 0x18, &v))
			add(d, "domain_flags=0x%llx", (unsigned long long)v);
		gem_created(c, d, 0x0, 0x0);
		break;
	case AMDGPU_GEM_MMAP: /* in {handle}; out {addr_ptr} */
		if (get_u32(c, ARG, 0x0, &h)) {
			add(d, "handle=%u", h);
			d->handle = h;
		}
		if (get_u64(c, RES, 0x0, &v))
			add(d, "offset=0x%llx", (unsigned long long)v);
		break;
	case AMDGPU_CTX:
		amdgpu_ctx(c, d);
		break;
	case AMDGPU_GEM_USERPTR: /* {addr, size, flags, handle (out)} */
		if (get_u64(c, ARG, 0x0, &v))
			add(d, "addr=0x%llx", (unsigned long long)v);
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
	__u32 h;

	switch (nr) {
	case 0x00: /* VERSION: int major, minor, patchlevel, ... */
		if (get_s32(c, RES, 0x0, &major) && get_s32(c, RES, 0x4, &minor) &&
		    get_s32(c, RES, 0x8, &patch))
			add(d, "version=%d.%d.%d", major, minor, patch);
		break;
	case 0x09: /* GEM_CLOSE: {handle, pad} */
		if (get_u32(c, ARG, 0x0, &h)) {
			add(d, "handle=%u", h);
			d->handle = h;
			d->op = GCTX_OP_DESTROY;
			d->obj_kind = GCTX_OBJ_DRM_GEM;
		}
		break;
	case 0x0c: /* GET_CAP: {capability, value} */
		if (get_u64(c, ARG, 0x0, &cap))
			add(d, "cap=0x%llx", (unsigned long long)cap);
		if (get_u64(c, RES, 0x8, &val))
			add(d, "value=%llu", (unsigned long long)val);
		break;
	case 0x2d: /* PRIME_HANDLE_TO_FD: {handle, flags, fd (out)} */
		if (get_u32(c, ARG, 0x0, &h)) {
			add(d, "handle=%u", h);
			d->handle = h;
		}
		if (get_s32(c, RES, 0x8, &fd))
			add(d, "fd=%d", fd);
		break;
	case 0x2e: /* PRIME_FD_TO_HANDLE: {handle (out), flags, fd} */
		if (get_s32(c, ARG, 0x8, &fd))
			add(d, "fd=%d", fd);
		if (get_u32(c, RES, 0x0, &h)) {
			add(d, "handle=%u", h);
			d->handle = h;
		}
		break;
	default:
		break;
	}
}

static void decode_drm(const struct ioc *c, struct gctx_ioctl_desc *d)
{
	__u32 cmd = c->ev->cmd, nr = _IOC_NR(cmd);
	struct ioc ic = *c;
	const char *name = NULL;
	bool driver = nr >= DRM_DRIVER_FIRST && nr < DRM_DRIVER_END;

	if (_IOC_TYPE(cmd) == DRM_TYPE) {
		if (driver && nr - DRM_DRIVER_FIRST < ARRAY_SIZE(amdgpu_names))
			name = amdgpu_names[nr - DRM_DRIVER_FIRST];
		else if (!driver && nr < ARRAY_SIZE(drm_core_names))
			name = drm_core_names[nr];
	}
	if (!name) {
		raw_name(d, _IOC_TYPE(cmd), nr, _IOC_SIZE(cmd));
		return;
	}
	set_name(d, name);
	if (ic.avail > _IOC_SIZE(cmd))
		ic.avail = _IOC_SIZE(cmd);
	if (driver)
		amdgpu_params(&ic, d, nr - DRM_DRIVER_FIRST);
	else
		drm_core_params(&ic, d, nr);
}

/* ---- entry point ---- */

/* A known NV_WARN_* status reports success with a remark, not a failure. */
static bool nv_status_is_warning(__u32 status)
{
	const char *n = gctx_nv_status_name(status);

	return n && !strncmp(n, "NV_WARN_", 8);
}

void gctx_decode_ioctl(const struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d)
{
	struct ioc c = {.ev = ev, .avail = ev->len};
	const char *sname;

	memset(d, 0, sizeof(*d));
	if (c.avail > GCTX_IOCTL_BYTES)
		c.avail = GCTX_IOCTL_BYTES;
	if (ev->ret < 0)
		d->err = ev->ret < -0x7fffffffLL ? 0x7fffffff : (int)-ev->ret;

	switch (ev->kind) {
	case GCTX_DEV_NVIDIACTL:
	case GCTX_DEV_NVIDIA:
		decode_nv(&c, d);
		break;
	case GCTX_DEV_NVIDIA_UVM:
	case GCTX_DEV_NVIDIA_UVM_TOOLS:
		decode_uvm(&c, d);
		break;
	case GCTX_DEV_KFD:
		decode_kfd(&c, d);
		break;
	case GCTX_DEV_DRM_RENDER:
		decode_drm(&c, d);
		break;
	default:
		raw_name(d, _IOC_TYPE(ev->cmd), _IOC_NR(ev->cmd), _IOC_SIZE(ev->cmd));
		break;
	}

	if (d->has_status) {
		sname = gctx_nv_status_name(d->status);
		if (sname)
			snprintf(d->status_name, sizeof(d->status_name), "%s", sname);
		else
			snprintf(d->status_name, sizeof(d->status_name), "0x%x", d->status);
	}
	d->failed = d->err != 0 || (d->has_status && d->status != 0 && !nv_status_is_warning(d->status));
	if (d->failed) {
		d->op = GCTX_OP_NONE;
		d->obj_kind = GCTX_OBJ_NONE;
	}
}

/* ---- name helpers ---- */

/* clang-format off */
static const char *const dev_kind_names[GCTX_DEV_MAX] = {
	[GCTX_DEV_NVIDIACTL] = "nvidiactl",
	[GCTX_DEV_NVIDIA] = "nvidia",
	[GCTX_DEV_NVIDIA_UVM] = "nvidia-uvm",
	[GCTX_DEV_NVIDIA_UVM_TOOLS] = "nvidia-uvm-tools",
	[GCTX_DEV_KFD] = "kfd",
	[GCTX_DEV_DRM_RENDER] = "drm-render",
};
/* clang-format on */

const char *gctx_dev_kind_name(__u32 kind)
{
	if (kind < GCTX_DEV_MAX && dev_kind_names[kind])
		return dev_kind_names[kind];
	return "?";
}

int gctx_dev_kind_parse(const char *name)
{
	int k;

	if (!name)
		return -1;
	for (k = 0; k < GCTX_DEV_MAX; k++)
		if (dev_kind_names[k] && !strcmp(name, dev_kind_names[k]))
			return k;
	return -1;
}

/* clang-format off */
static const char *const obj_kind_names[GCTX_OBJ_MAX] = {
	[GCTX_OBJ_NONE] = "none",
	[GCTX_OBJ_RM_CLIENT] = "rm-client",
	[GCTX_OBJ_RM_DEVICE] = "rm-device",
	[GCTX_OBJ_RM_SUBDEVICE] = "rm-subdevice",
	[GCTX_OBJ_RM_VASPACE] = "rm-vaspace",
	[GCTX_OBJ_RM_CHANNEL_GROUP] = "rm-channel-group",
	[GCTX_OBJ_RM_CTXSHARE] = "rm-ctxshare",
	[GCTX_OBJ_RM_CHANNEL] = "rm-channel",
	[GCTX_OBJ_RM_COMPUTE] = "rm-compute",
	[GCTX_OBJ_RM_MEMORY] = "rm-memory",
	[GCTX_OBJ_RM_OTHER] = "rm-object",
	[GCTX_OBJ_UVM_SPACE] = "uvm-space",
	[GCTX_OBJ_KFD_PROCESS] = "kfd-process",
	[GCTX_OBJ_KFD_QUEUE] = "kfd-queue",
	[GCTX_OBJ_KFD_MEMORY] = "kfd-memory",
	[GCTX_OBJ_DRM_CTX] = "drm-ctx",
	[GCTX_OBJ_DRM_GEM] = "drm-gem",
};
/* clang-format on */

const char *gctx_obj_kind_name(enum gctx_obj_kind k)
{
	if ((unsigned int)k < GCTX_OBJ_MAX && obj_kind_names[k])
		return obj_kind_names[k];
	return "?";
}

/* clang-format off */
static const char *const errno_names[] = {
	[EPERM] = "EPERM",
	[ENOENT] = "ENOENT",
	[ESRCH] = "ESRCH",
	[EINTR] = "EINTR",
	[EIO] = "EIO",
	[ENXIO] = "ENXIO",
	[E2BIG] = "E2BIG",
	[ENOEXEC] = "ENOEXEC",
	[EBADF] = "EBADF",
	[ECHILD] = "ECHILD",
	[EAGAIN] = "EAGAIN",
	[ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES",
	[EFAULT] = "EFAULT",
	[ENOTBLK] = "ENOTBLK",
	[EBUSY] = "EBUSY",
	[EEXIST] = "EEXIST",
	[EXDEV] = "EXDEV",
	[ENODEV] = "ENODEV",
	[ENOTDIR] = "ENOTDIR",
	[EISDIR] = "EISDIR",
	[EINVAL] = "EINVAL",
	[ENFILE] = "ENFILE",
	[EMFILE] = "EMFILE",
	[ENOTTY] = "ENOTTY",
	[ETXTBSY] = "ETXTBSY",
	[EFBIG] = "EFBIG",
	[ENOSPC] = "ENOSPC",
	[ESPIPE] = "ESPIPE",
	[EROFS] = "EROFS",
	[EMLINK] = "EMLINK",
	[EPIPE] = "EPIPE",
	[EDOM] = "EDOM",
	[ERANGE] = "ERANGE",
	[EDEADLK] = "EDEADLK",
	[ENAMETOOLONG] = "ENAMETOOLONG",
	[ENOLCK] = "ENOLCK",
	[ENOSYS] = "ENOSYS",
	[ENOTEMPTY] = "ENOTEMPTY",
	[ELOOP] = "ELOOP",
	[ENOMSG] = "ENOMSG",
	[EIDRM] = "EIDRM",
	[ENODATA] = "ENODATA",
	[ETIME] = "ETIME",
	[ENOLINK] = "ENOLINK",
	[EPROTO] = "EPROTO",
	[EBADMSG] = "EBADMSG",
	[EOVERFLOW] = "EOVERFLOW",
	[EBADFD] = "EBADFD",
	[EILSEQ] = "EILSEQ",
	[ERESTART] = "ERESTART",
	[EUSERS] = "EUSERS",
	[ENOTSOCK] = "ENOTSOCK",
	[EMSGSIZE] = "EMSGSIZE",
	[EOPNOTSUPP] = "EOPNOTSUPP",
	[EADDRINUSE] = "EADDRINUSE",
	[ENETDOWN] = "ENETDOWN",
	[ECONNRESET] = "ECONNRESET",
	[ENOBUFS] = "ENOBUFS",
	[ENOTCONN] = "ENOTCONN",
	[ETIMEDOUT] = "ETIMEDOUT",
	[ECONNREFUSED] = "ECONNREFUSED",
	[EALREADY] = "EALREADY",
	[EINPROGRESS] = "EINPROGRESS",
	[ESTALE] = "ESTALE",
	[EREMOTEIO] = "EREMOTEIO",
	[EDQUOT] = "EDQUOT",
	[ENOMEDIUM] = "ENOMEDIUM",
	[ECANCELED] = "ECANCELED",
	[ENOKEY] = "ENOKEY",
	[EKEYEXPIRED] = "EKEYEXPIRED",
	[EKEYREVOKED] = "EKEYREVOKED",
	[EKEYREJECTED] = "EKEYREJECTED",
	[EOWNERDEAD] = "EOWNERDEAD",
	[ENOTRECOVERABLE] = "ENOTRECOVERABLE",
	[ERFKILL] = "ERFKILL",
	[EHWPOISON] = "EHWPOISON",
};
/* clang-format on */

const char *gctx_errno_name(int err)
{
	if (err > 0 && (size_t)err < ARRAY_SIZE(errno_names))
		return errno_names[err];
	/* Kernel-internal codes (include/linux/errno.h) that drivers sometimes leak. */
	if (err == 512)
		return "ERESTARTSYS";
	if (err == 515)
		return "ENOIOCTLCMD";
	if (err == 524)
		return "ENOTSUPP";
	return NULL;
}

/* clang-format off */
static const char *const signal_names[] = {
	[SIGHUP] = "SIGHUP",
	[SIGINT] = "SIGINT",
	[SIGQUIT] = "SIGQUIT",
	[SIGILL] = "SIGILL",
	[SIGTRAP] = "SIGTRAP",
	[SIGABRT] = "SIGABRT",
	[SIGBUS] = "SIGBUS",
	[SIGFPE] = "SIGFPE",
	[SIGKILL] = "SIGKILL",
	[SIGUSR1] = "SIGUSR1",
	[SIGSEGV] = "SIGSEGV",
	[SIGUSR2] = "SIGUSR2",
	[SIGPIPE] = "SIGPIPE",
	[SIGALRM] = "SIGALRM",
	[SIGTERM] = "SIGTERM",
	[SIGSTKFLT] = "SIGSTKFLT",
	[SIGCHLD] = "SIGCHLD",
	[SIGCONT] = "SIGCONT",
	[SIGSTOP] = "SIGSTOP",
	[SIGTSTP] = "SIGTSTP",
	[SIGTTIN] = "SIGTTIN",
	[SIGTTOU] = "SIGTTOU",
	[SIGURG] = "SIGURG",
	[SIGXCPU] = "SIGXCPU",
	[SIGXFSZ] = "SIGXFSZ",
	[SIGVTALRM] = "SIGVTALRM",
	[SIGPROF] = "SIGPROF",
	[SIGWINCH] = "SIGWINCH",
	[SIGIO] = "SIGIO",
	[SIGPWR] = "SIGPWR",
	[SIGSYS] = "SIGSYS",
};
/* clang-format on */

const char *gctx_signal_name(int sig)
{
	if (sig > 0 && (size_t)sig < ARRAY_SIZE(signal_names))
		return signal_names[sig];
	return NULL;
}
