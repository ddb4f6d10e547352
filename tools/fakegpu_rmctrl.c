// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakegpu's answers to RM control commands (NV_ESC_RM_CONTROL), for the real libcuda 535: one
 * consistent H100 SXM5 80GB (GH100, PCI 10de:2330 at 0000:1b:00.0, gpu id 0x1b00), the driver
 * version libcuda expects (-n VERSION). Command numbers and parameter layouts follow NVIDIA's
 * open-gpu-kernel-modules 535 headers (src/common/sdk/nvidia/inc/ctrl/); what is answered is
 * what libcuda asked in tests/realdriver/ runs. Unknown commands get NV_ERR_NOT_SUPPORTED, as
 * the RM answers a command the object does not implement.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define GPU_UAPI_NO_HELPERS

#include <stdio.h>
#include <string.h>

#include "fakegpu.h"
#include "gpu_uapi.h"

const char *fg_nv_version = "535.261.03";

/* ---- NV0000 (client) ---- */

/* NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_PARAMS */
struct ctrl0000_build_version {
	__u32 sizeOfStrings;
	__u32 pad;
	__u64 pDriverVersionBuffer;
	__u64 pVersionBuffer;
	__u64 pTitleBuffer;
	__u32 changelistNumber;
	__u32 officialChangelistNumber;
};

/*
 * A first call with no buffers asks for sizeOfStrings; the second gets the strings in the
 * caller's buffers of that size.
 */
static __u32 build_version(struct rm_ctrl *x)
{
	struct ctrl0000_build_version *p = x->p;
	char ver[64];
	__u32 n = sizeof(ver);

	if (x->size != sizeof(*p))
		return NV_ERR_INVALID_PARAM_STRUCT;
	snprintf(ver, sizeof(ver), "%s", fg_nv_version);
	if (!p->pDriverVersionBuffer || !p->pVersionBuffer || !p->pTitleBuffer) {
		p->sizeOfStrings = n;
		return NV_OK;
	}
	if (p->sizeOfStrings < n)
		return NV_ERR_INVALID_PARAM_STRUCT;
	if (remote_write(x->tid, p->pDriverVersionBuffer, ver, n) ||
	    remote_write(x->tid, p->pVersionBuffer, ver, n) ||
	    remote_write(x->tid, p->pTitleBuffer, ver, n))
		return NV_ERR_INVALID_ADDRESS;
	p->changelistNumber = p->officialChangelistNumber = 0;
	return NV_OK;
}

/* A command whose parameters are all input: accepted, nothing to answer. */
static __u32 ok(struct rm_ctrl *x)
{
	return NV_OK;
}

/*
 * NV0000_CTRL_CLIENT_GET_ADDR_SPACE_TYPE_PARAMS {hObject; mapFlags; addrSpaceType}: SYSMEM 1,
 * VIDMEM 2, REGMEM 3 (registers: the usermode doorbell classes).
 */
static __u32 addr_space_type(struct rm_ctrl *x)
{
	__u32 *p = x->p, cls;

	if (x->size != 12)
		return NV_ERR_INVALID_PARAM_STRUCT;
	cls = rm_object_class(x->client, p[0]);
	switch (cls) {
	case 0x003e: /* NV01_MEMORY_SYSTEM */
	case 0x0071: /* NV01_MEMORY_SYSTEM_OS_DESCRIPTOR */
		p[2] = 1;
		return NV_OK;
	case 0x0040: /* NV01_MEMORY_LOCAL_USER */
		p[2] = 2;
		return NV_OK;
	case 0xc361: /* VOLTA_USERMODE_A */
	case 0xc461: /* TURING_USERMODE_A */
	case 0xc561: /* AMPERE_USERMODE_A */
	case 0xc661: /* HOPPER_USERMODE_A */
		p[2] = 3;
		return NV_OK;
	}
	return cls ? NV_ERR_INVALID_ARGUMENT : NV_ERR_INVALID_OBJECT_HANDLE;
}

/* ---- NV0000 GPU ids: the one GPU, FAKEGPU_NV_GPU_ID ---- */

#define NV_MAX_GPUS	  32
#define NV_INVALID_GPU_ID 0xffffffffU
#define NV0000_ATTACH_ALL 0x0000ffffU

static bool attached; /* NV0000_CTRL_CMD_GPU_ATTACH_IDS done (the RM keeps it per driver) */

/* An array of NV_MAX_GPUS gpu ids: ours first, the rest invalid. */
static void gpu_id_list(__u32 *ids, bool ours)
{
	int i;

	for (i = 0; i < NV_MAX_GPUS; i++)
		ids[i] = NV_INVALID_GPU_ID;
	if (ours)
		ids[0] = FAKEGPU_NV_GPU_ID;
}

/* NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS {gpuIds[32]; excludedGpuIds[32]} */
static __u32 probed_ids(struct rm_ctrl *x)
{
	__u32 *ids = x->p;

	if (x->size != 2 * NV_MAX_GPUS * sizeof(__u32))
		return NV_ERR_INVALID_PARAM_STRUCT;
	gpu_id_list(ids, true);
	gpu_id_list(ids + NV_MAX_GPUS, false);
	return NV_OK;
}

/* NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS {gpuIds[32]} */
static __u32 attached_ids(struct rm_ctrl *x)
{
	if (x->size != NV_MAX_GPUS * sizeof(__u32))
		return NV_ERR_INVALID_PARAM_STRUCT;
	gpu_id_list(x->p, attached);
	return NV_OK;
}

/* NV0000_CTRL_GPU_ATTACH_IDS_PARAMS {gpuIds[32]; failedId} */
static __u32 attach_ids(struct rm_ctrl *x)
{
	__u32 *ids = x->p;
	int i;

	if (x->size != (NV_MAX_GPUS + 1) * sizeof(__u32))
		return NV_ERR_INVALID_PARAM_STRUCT;
	ids[NV_MAX_GPUS] = NV_INVALID_GPU_ID;
	for (i = 0; i < NV_MAX_GPUS && ids[i] != NV_INVALID_GPU_ID; i++) {
		if (ids[i] != FAKEGPU_NV_GPU_ID && ids[i] != NV0000_ATTACH_ALL) {
			ids[NV_MAX_GPUS] = ids[i];
			return NV_ERR_INVALID_ARGUMENT;
		}
	}
	attached = true;
	return NV_OK;
}

/* NV0000_CTRL_GPU_GET_PCI_INFO_PARAMS {gpuId; domain; u16 bus; u16 slot} */
static __u32 gpu_pci_info(struct rm_ctrl *x)
{
	__u32 *p = x->p;

	if (x->size != 12)
		return NV_ERR_INVALID_PARAM_STRUCT;
	if (p[0] != FAKEGPU_NV_GPU_ID)
		return NV_ERR_INVALID_ARGUMENT;
	p[1] = 0;
	p[2] = FAKEGPU_NV_PCI_BUS; /* bus @8, slot 0 @10 */
	return NV_OK;
}

/*
 * NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS {gpuId; gpuFlags; deviceInstance; subDeviceInstance;
 * sliStatus; boardId; gpuInstance; numaId}
 */
static __u32 gpu_id_info_v2(struct rm_ctrl *x)
{
	__u32 *p = x->p;

	if (x->size != 32)
		return NV_ERR_INVALID_PARAM_STRUCT;
	if (p[0] != FAKEGPU_NV_GPU_ID)
		return NV_ERR_INVALID_ARGUMENT;
	p[1] = 0;	  /* gpuFlags */
	p[2] = 0;	  /* deviceInstance */
	p[3] = 0;	  /* subDeviceInstance */
	p[4] = 0;	  /* sliStatus: SLI_STATUS_OK */
	p[5] = 0;	  /* boardId */
	p[6] = 0;	  /* gpuInstance */
	p[7] = (__u32)-1; /* numaId: NV0000_CTRL_NO_NUMA_NODE */
	return NV_OK;
}

/* A query whose all-zero answer is the true one here: no entries, no features. */
static __u32 zeros(struct rm_ctrl *x)
{
	memset(x->p, 0, x->size);
	return NV_OK;
}

/* NV0000_CTRL_GPU_GET_ID_INFO_PARAMS: V2's fields, with NvP64 szName (not written) @0x10 */
static __u32 gpu_id_info(struct rm_ctrl *x)
{
	__u32 *p = x->p;

	if (x->size != 40)
		return NV_ERR_INVALID_PARAM_STRUCT;
	if (p[0] != FAKEGPU_NV_GPU_ID)
		return NV_ERR_INVALID_ARGUMENT;
	p[1] = p[2] = p[3] = 0; /* gpuFlags, deviceInstance, subDeviceInstance */
	p[6] = p[7] = p[8] = 0; /* sliStatus, boardId, gpuInstance */
	p[9] = (__u32)-1;	/* numaId */
	return NV_OK;
}

/* ---- NV0080 (device) ---- */

/*
 * NV0080_CTRL_FIFO_GET_CHANNELLIST_PARAMS {numChannels; NvP64 pChannelHandleList @8; NvP64
 * pChannelList @16}: the hardware channel id of each handle, written to the caller's list
 * (ids from 1: the emulated GPU runs nothing).
 */
static __u32 fifo_channel_list(struct rm_ctrl *x)
{
	__u32 *p = x->p, i, id;
	__u64 list;

	if (x->size != 24)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memcpy(&list, p + 4, sizeof(list));
	if (p[0] > 4096 || (p[0] && !list))
		return NV_ERR_INVALID_ARGUMENT;
	for (i = 0; i < p[0]; i++) {
		id = i + 1;
		if (remote_write(x->tid, list + 4 * i, &id, sizeof(id)))
			return NV_ERR_INVALID_ADDRESS;
	}
	return NV_OK;
}

/* NV0080_CTRL_GPU_GET_NUM_SUBDEVICES_PARAMS {numSubDevices}: no SLI */
static __u32 num_subdevices(struct rm_ctrl *x)
{
	if (x->size != sizeof(__u32))
		return NV_ERR_INVALID_PARAM_STRUCT;
	*(__u32 *)x->p = 1;
	return NV_OK;
}

/* The classes a GH100 offers (src/nvidia/generated/g_gpu_class_list.c, once each). */
static const __u32 gh100_classes[] = {
    0x0060, /* NV0060_SYNC_GPU_BOOST */
    0x0070, /* NV01_MEMORY_VIRTUAL */
    0x007d, /* NV04_SOFTWARE_TEST */
    0x00de, /* RM_USER_SHARED_DATA */
    0x503b, /* NV50_P2P */
    0x503c, /* NV50_THIRD_PARTY_P2P */
    0x5080, /* NV50_DEFERRED_API_CLASS */
    0x50a0, /* NV50_MEMORY_VIRTUAL */
    0x844c, /* G84_PERFBUFFER */
    0x902d, /* FERMI_TWOD_A */
    0x9067, /* FERMI_CONTEXT_SHARE_A */
    0x9074, /* GF100_TIMED_SEMAPHORE_SW */
    0x9096, /* GF100_ZBC_CLEAR */
    0x90e6, /* GF100_SUBDEVICE_MASTER */
    0x90e7, /* GF100_SUBDEVICE_INFOROM */
    0x90f1, /* FERMI_VASPACE_A */
    0xa06c, /* KEPLER_CHANNEL_GROUP_A */
    0xa081, /* NVA081_VGPU_CONFIG */
    0xa084, /* NVA084_KERNEL_HOST_VGPU_DEVICE */
    0xa140, /* KEPLER_INLINE_TO_MEMORY_B */
    0xb8b0, /* NVB8B0_VIDEO_DECODER */
    0xb8d1, /* NVB8D1_VIDEO_NVJPG */
    0xb8fa, /* NVB8FA_VIDEO_OFA */
    0xc076, /* GP100_UVM_SW */
    0xc361, /* VOLTA_USERMODE_A */
    0xc365, /* ACCESS_COUNTER_NOTIFY_BUFFER */
    0xc369, /* MMU_FAULT_BUFFER */
    0xc36f, /* VOLTA_CHANNEL_GPFIFO_A */
    0xc461, /* TURING_USERMODE_A */
    0xc46f, /* TURING_CHANNEL_GPFIFO_A */
    0xc561, /* AMPERE_USERMODE_A */
    0xc56f, /* AMPERE_CHANNEL_GPFIFO_A */
    0xc661, /* HOPPER_USERMODE_A */
    0xc86f, /* HOPPER_CHANNEL_GPFIFO_A */
    0xc8b5, /* HOPPER_DMA_COPY_A */
    0xcb33, /* NV_CONFIDENTIAL_COMPUTE */
    0xcb97, /* HOPPER_A */
    0xcba2, /* HOPPER_SEC2_WORK_LAUNCH_A */
    0xcbc0, /* HOPPER_COMPUTE_A */
};

#define NV_CLASSLIST_MAX 160 /* NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE */

/* NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS {numClasses; classList[160]} */
static __u32 classlist_v2(struct rm_ctrl *x)
{
	__u32 *p = x->p, n = sizeof(gh100_classes) / sizeof(gh100_classes[0]);

	if (x->size != (NV_CLASSLIST_MAX + 1) * sizeof(__u32))
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, x->size);
	p[0] = n;
	memcpy(p + 1, gh100_classes, sizeof(gh100_classes));
	return NV_OK;
}

/* ---- NV2080 (subdevice) ---- */

#define H100_FB_KB   (80ULL << 20)    /* 80 GiB of HBM3 */
#define H100_HEAP_KB (81559ULL << 10) /* what nvidia-smi shows as the total: 81559 MiB */
#define H100_BAR1_KB (128ULL << 20)   /* 128 GiB BAR1 */

/* NV2080_CTRL_FB_INFO_INDEX_* -> value (KB for sizes, but L2 in bytes); others 0 */
static __u32 fb_info_value(__u32 index)
{
	switch (index) {
	case 0x04: /* PARTITION_COUNT */
	case 0x19: /* FBP_COUNT */
		return 10;
	case 0x05: /* BAR1_SIZE */
	case 0x1d: /* BAR1_AVAIL_SIZE */
	case 0x1f: /* BAR1_MAX_CONTIGUOUS_AVAIL_SIZE */
		return H100_BAR1_KB;
	case 0x07: /* RAM_SIZE */
	case 0x08: /* TOTAL_RAM_SIZE */
	case 0x20: /* USABLE_RAM_SIZE */
		return H100_FB_KB;
	case 0x09: /* HEAP_SIZE */
	case 0x0a: /* MAPPABLE_HEAP_SIZE */
	case 0x12: /* LARGEST_FREE_REGION_SIZE_KB */
	case 0x16: /* HEAP_FREE */
		return H100_HEAP_KB;
	case 0x0b: /* BUS_WIDTH */
		return 5120;
	case 0x0d:	     /* RAM_TYPE */
		return 0x14; /* NV2080_CTRL_FB_INFO_RAM_TYPE_HBM3 */
	case 0x14:	     /* PARTITION_MASK */
	case 0x1a:	     /* FBP_MASK */
		return 0x3ff;
	case 0x1b: /* L2CACHE_SIZE, bytes */
		return 50 << 20;
	case 0x22: /* LTC_COUNT */
		return 80;
	case 0x23: /* LTS_COUNT */
		return 160;
	}
	return 0;
}

/*
 * The *_GET_INFO_V2 commands: {listSize; {index; data}[max]} (NVXXXX_CTRL_XXX_INFO), each
 * asked index answered by @value.
 */
static __u32 info_list(struct rm_ctrl *x, __u32 max, __u32 (*value)(__u32 index))
{
	__u32 *p = x->p, i;

	if (x->size != 4 + max * 8)
		return NV_ERR_INVALID_PARAM_STRUCT;
	if (p[0] > max)
		return NV_ERR_INVALID_ARGUMENT;
	for (i = 0; i < p[0]; i++)
		p[2 + 2 * i] = value(p[1 + 2 * i]);
	return NV_OK;
}

/* NV2080_CTRL_FB_GET_INFO_V2_PARAMS: 54 entries */
static __u32 fb_info_v2(struct rm_ctrl *x)
{
	return info_list(x, 54, fb_info_value);
}

/* NV2080_CTRL_GPU_INFO_INDEX_* -> value; others 0 */
static __u32 gpu_info_value(__u32 index)
{
	switch (index) {
	case 0x1f: /* SYSMEM_ACCESS */
	case 0x36: /* GPU_PROFILING_CAPABILITY */
	case 0x37: /* GPU_DEBUGGING_CAPABILITY */
	case 0x3d: /* DMABUF_CAPABILITY */
		return 1;
	case 0x2a:	      /* GPU_SMC_MODE */
		return 2;     /* DISABLED: MIG off */
	case 0x2c:	      /* GPU_SM_VERSION */
		return 0x900; /* sm_90 */
	}
	return 0;
}

/* NV2080_CTRL_GPU_GET_INFO_V2_PARAMS: 64 entries */
static __u32 gpu_info_v2(struct rm_ctrl *x)
{
	return info_list(x, 64, gpu_info_value);
}

/* The GPU's UUID (made up, fixed), as binary and as "GPU-..." text. */
static const __u8 gpu_uuid[16] = {0xfa, 0x4e, 0x6b, 0x1c, 0x0d, 0x3e, 0x4c, 0x1b,
				  0x9a, 0x2f, 0x6b, 0x1d, 0x2c, 0x3e, 0x4f, 0x50};

static void uuid_text(char *buf, size_t size)
{
	const __u8 *u = gpu_uuid;

	snprintf(buf, size,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

/* NV2080_CTRL_GPU_GET_GID_INFO_PARAMS {index; flags; length; data[256]}: flags bit 1 binary */
static __u32 gid_info(struct rm_ctrl *x)
{
	__u32 *p = x->p;
	__u8 *data = (__u8 *)(p + 3);
	char text[48];

	if (x->size != 12 + 256)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(data, 0, 256);
	if (p[1] & 2) {
		memcpy(data, gpu_uuid, sizeof(gpu_uuid));
		p[2] = sizeof(gpu_uuid);
	} else {
		uuid_text(text, sizeof(text));
		memcpy(data, text, strlen(text) + 1);
		p[2] = strlen(text) + 1;
	}
	return NV_OK;
}

/* NV2080_CTRL_BUS_INFO_INDEX_* -> value; others 0 */
static __u32 bus_info_value(__u32 index)
{
	switch (index) {
	case 0x00:	  /* TYPE */
	case 0x13:	  /* INTERFACE_TYPE */
	case 0x2e:	  /* GPU_INTERFACE_TYPE */
		return 3; /* NV2080_CTRL_BUS_INFO_TYPE_PCI_EXPRESS */
	case 0x01:	  /* INTLINE */
		return 16;
	case 0x0b: /* COHERENT_DMA_FLAGS: CTXDMA */
	case 0x0c: /* NONCOHERENT_DMA_FLAGS: CTXDMA */
		return 1;
	case 0x0f: /* BUS_NUMBER */
		return FAKEGPU_NV_PCI_BUS;
	}
	return 0; /* DEVICE_NUMBER, DOMAIN_NUMBER, SYSMEM_CONNECTION_TYPE PCIE, ... */
}

/* NV2080_CTRL_BUS_GET_INFO_V2_PARAMS: 52 entries */
static __u32 bus_info_v2(struct rm_ctrl *x)
{
	return info_list(x, 52, bus_info_value);
}

/*
 * NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS {pciDeviceId; pciSubSystemId; pciRevisionId;
 * pciExtDeviceId}: device << 16 | vendor, as the RM packs them; H100 SXM5 80GB 10de:2330,
 * subsystem 10de:16c1.
 */
static __u32 bus_pci_info(struct rm_ctrl *x)
{
	__u32 *p = x->p;

	if (x->size != 16)
		return NV_ERR_INVALID_PARAM_STRUCT;
	p[0] = FAKEGPU_NV_PCI_DEVICE << 16 | 0x10de;
	p[1] = 0x16c1 << 16 | 0x10de;
	p[2] = 0xa1;
	p[3] = FAKEGPU_NV_PCI_DEVICE;
	return NV_OK;
}

/* One NV2080_CTRL_BUS_PCI_BAR_INFO {flags; barSize (MiB); u64 barSizeBytes; u64 barOffset} */
static void bar(__u8 *e, __u64 size, __u64 addr)
{
	__u32 mib = size >> 20;

	memset(e, 0, 24);
	memcpy(e + 4, &mib, 4);
	memcpy(e + 8, &size, 8);
	memcpy(e + 16, &addr, 8);
}

/*
 * NV2080_CTRL_BUS_GET_PCI_BAR_INFO_PARAMS {pciBarCount; pad; bar info[8] @8}: BAR0 registers
 * and BAR1 where NV_ESC_CARD_INFO puts them, and a 32 MiB BAR2.
 */
static __u32 bus_bar_info(struct rm_ctrl *x)
{
	__u8 *p = x->p;
	__u32 n = 3;

	if (x->size != 8 + 8 * 24)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, x->size);
	memcpy(p, &n, 4);
	bar(p + 8, FAKEGPU_NV_BAR0_SIZE, FAKEGPU_NV_BAR0_ADDR);
	bar(p + 8 + 24, H100_BAR1_KB << 10, FAKEGPU_NV_BAR1_ADDR);
	bar(p + 8 + 48, 32 << 20, FAKEGPU_NV_BAR1_ADDR + (H100_BAR1_KB << 10));
	return NV_OK;
}

/* NV2080_ENGINE_TYPE_* of an H100 SXM5, and the classes each runs (GH100 class list) */
static const struct engine {
	__u32 type;
	__u32 n; /* how many instances: type, type + 1, ... */
	__u32 classes[4];
} engines[] = {
    {0x01, 1, {0xcb97, 0xcbc0, 0x902d, 0xa140}}, /* GR0: HOPPER_A, HOPPER_COMPUTE_A, ... */
    {0x09, 10, {0xc8b5}},			 /* COPY0-9: HOPPER_DMA_COPY_A */
    {0x13, 7, {0xb8b0}},			 /* NVDEC0-6 */
    {0x22, 1, {0x9074, 0xc076}},		 /* SW */
    {0x26, 1, {0xcba2}},			 /* SEC2: HOPPER_SEC2_WORK_LAUNCH_A */
    {0x2b, 7, {0xb8d1}},			 /* NVJPEG0-6 */
    {0x33, 1, {0xb8fa}},			 /* OFA */
};

#define NENGINES (sizeof(engines) / sizeof(engines[0]))

/* NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS {engineCount; engineList[62]} */
static __u32 engines_v2(struct rm_ctrl *x)
{
	__u32 *p = x->p, n = 0, i, k;

	if (x->size != 4 + 62 * 4)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, x->size);
	for (i = 0; i < NENGINES; i++)
		for (k = 0; k < engines[i].n; k++)
			p[1 + n++] = engines[i].type + k;
	p[0] = n;
	return NV_OK;
}

/*
 * NV2080_CTRL_GPU_GET_ENGINE_CLASSLIST_PARAMS {engineType; numClasses; NvP64 classList}: with
 * no list, the count; else the classes written to the caller's list.
 */
static __u32 engine_classlist(struct rm_ctrl *x)
{
	__u32 *p = x->p, i, n;
	__u64 list;

	if (x->size != 16)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memcpy(&list, p + 2, sizeof(list));
	for (i = 0; i < NENGINES; i++) {
		if (p[0] < engines[i].type || p[0] >= engines[i].type + engines[i].n)
			continue;
		for (n = 0; n < 4 && engines[i].classes[n]; n++)
			;
		if (list && p[1] < n)
			return NV_ERR_INVALID_ARGUMENT;
		p[1] = n;
		if (list && remote_write(x->tid, list, engines[i].classes, n * sizeof(__u32)))
			return NV_ERR_INVALID_ADDRESS;
		return NV_OK;
	}
	return NV_ERR_INVALID_ARGUMENT;
}

/* NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS {flags; ascii[64] | unicode[64]} */
static __u32 name_string(struct rm_ctrl *x)
{
	__u32 *p = x->p;
	__u16 *uni = (__u16 *)(p + 1);
	size_t i;

	if (x->size != 4 + 128)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p + 1, 0, 128);
	if (p[0] == 1) {
		for (i = 0; FAKEGPU_NV_NAME[i]; i++)
			uni[i] = FAKEGPU_NV_NAME[i];
	} else {
		memcpy(p + 1, FAKEGPU_NV_NAME, sizeof(FAKEGPU_NV_NAME));
	}
	return NV_OK;
}

/* NV2080_CTRL_GPU_GET_SHORT_NAME_STRING_PARAMS {gpuShortNameString[64]} */
static __u32 short_name_string(struct rm_ctrl *x)
{
	if (x->size != 64)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(x->p, 0, 64);
	memcpy(x->p, "GH100", sizeof("GH100"));
	return NV_OK;
}

/* NV2080_CTRL_GR_INFO_INDEX_* -> value for an H100 SXM5: 8 GPCs, 66 TPCs, 132 SMs; others 0 */
static __u32 gr_info_value(__u32 index)
{
	switch (index) {
	case 0x07: /* SHADER_PIPE_COUNT: TPCs */
		return 66;
	case 0x09: /* SHADER_PIPE_SUB_COUNT: SMs */
		return 132;
	case 0x0c:	      /* SM_VERSION */
		return 0x900; /* NV2080_CTRL_GR_INFO_SM_VERSION_9_0 */
	case 0x0d:	      /* MAX_WARPS_PER_SM */
		return 64;
	case 0x0e: /* MAX_THREADS_PER_WARP */
		return 32;
	case 0x13: /* MAX_SP_PER_SM */
		return 128;
	case 0x14: /* LITTER_NUM_GPCS */
	case 0x24: /* LITTER_NUM_GRS */
		return 8;
	case 0x15: /* LITTER_NUM_FBPS */
		return 10;
	case 0x17: /* LITTER_NUM_TPC_PER_GPC */
	case 0x2a: /* FAMILY_MAX_TPC_PER_GPC */
		return 9;
	case 0x1a: /* TIMESLICE_ENABLED */
		return 1;
	case 0x1c: /* LITTER_NUM_PES_PER_GPC */
	case 0x1e: /* LITTER_NUM_TPCS_PER_PES */
		return 3;
	case 0x1d: /* GPU_CORE_COUNT */
		return 132 * 128;
	case 0x20: /* LITTER_NUM_SM_PER_TPC */
		return 2;
	case 0x23: /* TENSOR_CORE_COUNT */
		return 132 * 4;
	case 0x25: /* LITTER_NUM_LTCS */
		return 80;
	case 0x26: /* LITTER_NUM_LTC_SLICES */
		return 160;
	case 0x2c: /* MAX_SUBCONTEXT_COUNT */
	case 0x2d: /* MAX_LEGACY_SUBCONTEXT_COUNT */
	case 0x2e: /* MAX_PER_ENGINE_SUBCONTEXT_COUNT */
		return 64;
	}
	return 0;
}

#define GR_INFO_MAX 0x35 /* NV2080_CTRL_GR_INFO_MAX_SIZE */

/*
 * NV2080_CTRL_GR_GET_INFO_PARAMS {grInfoListSize; NvP64 grInfoList @8; route info @16}: the
 * {index; data} list lives in the caller's memory.
 */
static __u32 gr_info(struct rm_ctrl *x)
{
	__u32 *p = x->p, list[2 * GR_INFO_MAX], n = p[0], i;
	__u64 addr;

	if (x->size != 32)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memcpy(&addr, p + 2, sizeof(addr));
	if (!n || n > GR_INFO_MAX || !addr)
		return NV_ERR_INVALID_ARGUMENT;
	if (remote_read(x->tid, addr, list, n * 8))
		return NV_ERR_INVALID_ADDRESS;
	for (i = 0; i < n; i++)
		list[2 * i + 1] = gr_info_value(list[2 * i]);
	return remote_write(x->tid, addr, list, n * 8) ? NV_ERR_INVALID_ADDRESS : NV_OK;
}

/*
 * 0x20808159 is not in the open-gpu-kernel-modules 535 headers (a "legacy non-privileged"
 * NV2080 GPU command). libcuda sends {2; {0x0c, 0}; {0x25, 0}; ...} in 332 bytes, which reads as
 * {count; {index; data}[41]} with GR info indexes (SM_VERSION, LITTER_NUM_LTCS): answered so.
 */
static __u32 legacy_gr_info(struct rm_ctrl *x)
{
	return info_list(x, 41, gr_info_value);
}

/* TPCs of GPC @gpc: 66 TPCs in 8 GPCs, GPCs 0-1 with 9, the others with 8 */
static __u32 tpc_mask(__u32 gpc)
{
	return gpc < 2 ? 0x1ff : gpc < 8 ? 0xff : 0;
}

/* NV2080_CTRL_GR_GET_GPC_MASK_PARAMS {route info (16 bytes); gpcMask @16} */
static __u32 gpc_mask(struct rm_ctrl *x)
{
	__u32 *p = x->p;

	if (x->size != 24)
		return NV_ERR_INVALID_PARAM_STRUCT;
	p[4] = 0xff;
	return NV_OK;
}

/* NV2080_CTRL_GR_GET_TPC_MASK_PARAMS {route info (16 bytes); gpcId @16; tpcMask @20} */
static __u32 gr_tpc_mask(struct rm_ctrl *x)
{
	__u32 *p = x->p;

	if (x->size != 24)
		return NV_ERR_INVALID_PARAM_STRUCT;
	if (p[4] >= 8)
		return NV_ERR_INVALID_ARGUMENT;
	p[5] = tpc_mask(p[4]);
	return NV_OK;
}

/* NV0080_CTRL_GR_GET_CAPS_V2_PARAMS {capsTbl[23]; route info @24; NvBool bCapsPopulated @40} */
static __u32 gr_caps_v2(struct rm_ctrl *x)
{
	__u8 *p = x->p;

	if (x->size != 48)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, 23);
	p[40] = 1;
	return NV_OK;
}

/*
 * NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS {capsTbl[32][2]; present @64}: COPY0-9, the first two
 * graphics CEs (GRCE, shared), all reading and writing sysmem, pipelined or not.
 */
static __u32 ce_all_caps(struct rm_ctrl *x)
{
	__u8 *p = x->p;
	__u32 present = 0x3ff;
	int i;

	if (x->size != 68)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, x->size);
	for (i = 0; i < 10; i++) {
		p[2 * i] = 0x04 | 0x08 | 0x20 | (i < 2 ? 0x01 | 0x02 : 0);
		p[2 * i + 1] = 0x01 | 0x02;
	}
	memcpy(p + 64, &present, sizeof(present));
	return NV_OK;
}

/*
 * NV2080_CTRL_GR_GET_GLOBAL_SM_ORDER_PARAMS {{gpcId; localTpcId; localSmId; globalTpcId;
 * virtualGpcId; migratableTpcId} (u16 each) [512]; u16 numSm @6144; u16 numTpc; route}: the
 * TPCs of tpc_mask() in GPC order, two SMs each.
 */
static __u32 global_sm_order(struct rm_ctrl *x)
{
	__u16 *p = x->p, *e, sm = 0, tpc = 0;
	__u32 gpc, t, k;

	if (x->size != 6168)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, 6144 + 4);
	for (gpc = 0; gpc < 8; gpc++) {
		for (t = 0; tpc_mask(gpc) >> t; t++, tpc++) {
			for (k = 0; k < 2; k++, sm++) {
				e = p + 6 * sm;
				e[0] = gpc;
				e[1] = t;
				e[2] = k;
				e[3] = tpc;
				e[4] = gpc;
				e[5] = tpc;
			}
		}
	}
	p[3072] = sm;
	p[3073] = tpc;
	return NV_OK;
}

/*
 * NV2080_CTRL_GSP_GET_FEATURES_PARAMS {gspFeatures; NvBool bValid @4; NvBool bDefaultGspRmGpu
 * @5; firmwareVersion[64] @6}: an H100 runs GSP-RM by default, firmware of the driver's version.
 */
static __u32 gsp_features(struct rm_ctrl *x)
{
	__u8 *p = x->p;

	if (x->size != 72)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, x->size);
	p[4] = 1;
	p[5] = 1;
	snprintf((char *)p + 6, 64, "%s", fg_nv_version);
	return NV_OK;
}

/*
 * NV2080_CTRL_MC_GET_ARCH_INFO_PARAMS {architecture; implementation; revision; u8 subRevision}:
 * GH100 is architecture 0x180 (after GA100 0x170 in ctrl2080mc.h), implementation 0, A1.
 */
static __u32 arch_info(struct rm_ctrl *x)
{
	__u32 *p = x->p;

	if (x->size != 16)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, x->size);
	p[0] = 0x180;
	p[1] = 0x0;
	p[2] = 0xa1;
	return NV_OK;
}

/*
 * NV906F_CTRL_GET_CLASS_ENGINEID_PARAMS {hObject; classEngineID; classID; engineID}: the class
 * of a channel's object and the engine (NV2080_ENGINE_TYPE_*) that runs it; classEngineID is
 * opaque to clients (here engine << 16 | class).
 */
static __u32 class_engineid(struct rm_ctrl *x)
{
	__u32 *p = x->p, cls, i, k;

	if (x->size != 16)
		return NV_ERR_INVALID_PARAM_STRUCT;
	cls = rm_object_class(x->client, p[0]);
	if (!cls)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	p[2] = cls;
	p[3] = 0;
	for (i = 0; i < NENGINES && !p[3]; i++)
		for (k = 0; k < 4; k++)
			if (engines[i].classes[k] == cls)
				p[3] = engines[i].type;
	p[1] = p[3] << 16 | cls;
	return NV_OK;
}

/*
 * NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS {workSubmitToken}: what the client writes
 * to the usermode doorbell to start the channel (its id; nothing rings here).
 */
static __u32 work_submit_token(struct rm_ctrl *x)
{
	static __u32 token;

	if (x->size != 4)
		return NV_ERR_INVALID_PARAM_STRUCT;
	*(__u32 *)x->p = ++token;
	return NV_OK;
}

/* What the real RM answers on this GPU's configuration (MIG off, ...). */
static __u32 not_supported(struct rm_ctrl *x)
{
	return NV_ERR_NOT_SUPPORTED;
}

/*
 * NV0080_CTRL_FB_GET_CAPS_V2_PARAMS {capsTbl[3]}: render to and cache sysmem, block linear,
 * generic page kinds.
 */
static __u32 fb_caps_v2(struct rm_ctrl *x)
{
	__u8 *p = x->p;

	if (x->size != 3)
		return NV_ERR_INVALID_PARAM_STRUCT;
	p[0] = 0x01 | 0x02 | 0x08;
	p[1] = 0x80;
	p[2] = 0;
	return NV_OK;
}

/* NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS {driverVersion[256]; version[256]; title[256];
 * changelistNumber; officialChangelistNumber} */
static __u32 build_version_v2(struct rm_ctrl *x)
{
	char *p = x->p;

	if (x->size != 3 * 256 + 8)
		return NV_ERR_INVALID_PARAM_STRUCT;
	memset(p, 0, x->size);
	snprintf(p, 256, "%s", fg_nv_version);
	snprintf(p + 256, 256, "%s", fg_nv_version);
	snprintf(p + 512, 256, "%s", fg_nv_version);
	return NV_OK;
}

struct ctrl_handler {
	__u32 cmd;
	__u32 (*fn)(struct rm_ctrl *x);
};

static const struct ctrl_handler handlers[] = {
    {0x00000101, build_version},     /* NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION */
    {0x0000013e, build_version_v2},  /* NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 */
    {0x00000201, attached_ids},	     /* NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS */
    {0x00000202, gpu_id_info},	     /* NV0000_CTRL_CMD_GPU_GET_ID_INFO */
    {0x00000205, gpu_id_info_v2},    /* NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 */
    {0x00000214, probed_ids},	     /* NV0000_CTRL_CMD_GPU_GET_PROBED_IDS */
    {0x00000215, attach_ids},	     /* NV0000_CTRL_CMD_GPU_ATTACH_IDS */
    {0x00000216, ok},		     /* NV0000_CTRL_CMD_GPU_DETACH_IDS */
    {0x0000021b, gpu_pci_info},	     /* NV0000_CTRL_CMD_GPU_GET_PCI_INFO */
    {0x0000027b, zeros},	     /* NV0000_CTRL_CMD_GPU_GET_MEMOP_ENABLE */
    {0x00000a04, zeros},	     /* NV0000_CTRL_CMD_SYNC_GPU_BOOST_GROUP_INFO */
    {0x00000d01, addr_space_type},   /* NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE */
    {0x00000d04, ok},		     /* NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY */
    {0x00800280, num_subdevices},    /* NV0080_CTRL_CMD_GPU_GET_NUM_SUBDEVICES */
    {0x00800289, zeros},	     /* NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE */
    {0x0080028b, not_supported},     /* not in the open 535 headers */
    {0x00800292, classlist_v2},	     /* NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 */
    {0x00801307, fb_caps_v2},	     /* NV0080_CTRL_CMD_FB_GET_CAPS_V2 */
    {0x00801402, zeros},	     /* NV0080_CTRL_CMD_HOST_GET_CAPS_V2 */
    {0x0080170d, fifo_channel_list}, /* NV0080_CTRL_CMD_FIFO_GET_CHANNELLIST */
    {0x00809909, not_supported},     /* not in the open 535 headers */
    {0x20800102, gpu_info_v2},	     /* NV2080_CTRL_CMD_GPU_GET_INFO_V2 */
    {0x20800110, name_string},	     /* NV2080_CTRL_CMD_GPU_GET_NAME_STRING */
    {0x20800111, short_name_string}, /* NV2080_CTRL_CMD_GPU_GET_SHORT_NAME_STRING */
    {0x20800119, zeros},	     /* NV2080_CTRL_CMD_GPU_GET_SIMULATION_INFO */
    {0x20800124, engine_classlist},  /* NV2080_CTRL_CMD_GPU_GET_ENGINE_CLASSLIST */
    {0x2080012f, zeros},	     /* NV2080_CTRL_CMD_GPU_QUERY_ECC_STATUS */
    {0x20800131, zeros},	     /* NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES */
    {0x20800145, ok},		     /* not in the open 535 headers */
    {0x20800146, ok},		     /* not in the open 535 headers */
    {0x2080014a, gid_info},	     /* NV2080_CTRL_CMD_GPU_GET_GID_INFO */
    {0x20800170, engines_v2},	     /* NV2080_CTRL_CMD_GPU_GET_ENGINES_V2 */
    {0x2080018b, not_supported},     /* NV2080_CTRL_CMD_GPU_GET_ACTIVE_PARTITION_IDS */
    {0x208001a3, zeros},	     /* NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO */
    {0x20801201, gr_info},	     /* NV2080_CTRL_CMD_GR_GET_INFO */
    {0x20801210, ok},		     /* NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE */
    {0x2080121b, global_sm_order},   /* NV2080_CTRL_CMD_GR_GET_GLOBAL_SM_ORDER */
    {0x20801227, gr_caps_v2},	     /* NV2080_CTRL_CMD_GR_GET_CAPS_V2 */
    {0x2080122a, gpc_mask},	     /* NV2080_CTRL_CMD_GR_GET_GPC_MASK */
    {0x2080122b, gr_tpc_mask},	     /* NV2080_CTRL_CMD_GR_GET_TPC_MASK */
    {0x20801230, zeros},	     /* NV2080_CTRL_CMD_GR_GET_SM_ISSUE_RATE_MODIFIER */
    {0x20801303, fb_info_v2},	     /* NV2080_CTRL_CMD_FB_GET_INFO_V2 */
    {0x20801701, arch_info},	     /* NV2080_CTRL_CMD_MC_GET_ARCH_INFO */
    {0x20801702, not_supported},     /* NV2080_CTRL_CMD_MC_SERVICE_INTERRUPTS */
    {0x20801801, bus_pci_info},	     /* NV2080_CTRL_CMD_BUS_GET_PCI_INFO */
    {0x20801803, bus_bar_info},	     /* NV2080_CTRL_CMD_BUS_GET_PCI_BAR_INFO */
    {0x20801823, bus_info_v2},	     /* NV2080_CTRL_CMD_BUS_GET_INFO_V2 */
    {0x2080182a, zeros},	     /* NV2080_CTRL_CMD_BUS_GET_PCIE_SUPPORTED_GPU_ATOMICS */
    {0x2080182b, zeros},	     /* NV2080_CTRL_CMD_BUS_GET_C2C_INFO */
    {0x2080200a, ok},		     /* NV2080_CTRL_CMD_PERF_BOOST */
    {0x2080220c, ok},		     /* NV2080_CTRL_CMD_RC_RELEASE_WATCHDOG_REQUESTS */
    {0x20802210, ok},		     /* NV2080_CTRL_CMD_RC_SOFT_DISABLE_WATCHDOG */
    {0x20802a0a, ce_all_caps},	     /* NV2080_CTRL_CMD_CE_GET_ALL_CAPS */
    {0x20803002, zeros},	     /* NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS */
    {0x20803601, gsp_features},	     /* NV2080_CTRL_CMD_GSP_GET_FEATURES */
    {0x20808159, legacy_gr_info},    /* not in the open 535 headers */
    {0x20808161, not_supported},     /* not in the open 535 headers */
    {0x83de0309, ok},		     /* NV83DE_CTRL_CMD_DEBUG_SET_EXCEPTION_MASK */
    {0x906f0102, ok},		     /* NV906F_CTRL_CMD_RESET_CHANNEL */
    {0xa06c0101, ok},		     /* NVA06C_CTRL_CMD_GPFIFO_SCHEDULE */
    {0xa06c0103, ok},		     /* NVA06C_CTRL_CMD_SET_TIMESLICE */
    {0xa06c0105, ok},		     /* NVA06C_CTRL_CMD_PREEMPT */
    {0xc36f0101, class_engineid},    /* NVC36F_CTRL_GET_CLASS_ENGINEID */
    {0xc36f0108, work_submit_token}, /* NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN */
    {0xcb330101, zeros},	     /* NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES */
};

__u32 rm_ctrl(struct rm_ctrl *x)
{
	size_t i;

	for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].cmd == x->cmd)
			return handlers[i].fn(x);
	if (fg_verbose) {
		fprintf(stderr,
			"fakegpu: RM control 0x%08x (params %u bytes) not answered:", x->cmd,
			x->size);
		for (i = 0; i < x->size && i < 64; i++)
			fprintf(stderr, " %02x", ((__u8 *)x->p)[i]);
		fprintf(stderr, "\n");
	}
	return NV_ERR_NOT_SUPPORTED;
}
