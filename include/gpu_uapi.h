/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Test-fixture view of the GPU driver ABI: the NVIDIA RM and UVM ioctls, AMD KFD and the few
 * amdgpu render-node ioctls that tools/fakegpu.c emulates and tests/workloads/ issue.
 * Written from shared/reference/gpu-facts.md (sections 1.2-1.5, 2.1, 2.4); x86-64 layouts.
 *
 * The second half holds small helpers for the workloads (one source file each). Define
 * GPU_UAPI_NO_HELPERS before including this header to get the ABI definitions only.
 */
#ifndef __GPU_UAPI_H
#define __GPU_UAPI_H

#include <stddef.h>
#include <linux/types.h>
#include <linux/ioctl.h>

/* ---- NVIDIA RM (nvidiactl, nvidiaN): _IOWR('F', nr, size), only nr and size matter ---- */

#define NV_IOCTL_MAGIC 'F'

#define NV_ESC_RM_ALLOC_MEMORY		     0x27
#define NV_ESC_RM_FREE			     0x29
#define NV_ESC_RM_CONTROL		     0x2A
#define NV_ESC_RM_ALLOC			     0x2B
#define NV_ESC_RM_VID_HEAP_CONTROL	     0x4A
#define NV_ESC_RM_MAP_MEMORY		     0x4E
#define NV_ESC_RM_UNMAP_MEMORY		     0x4F
#define NV_ESC_RM_MAP_MEMORY_DMA	     0x57
#define NV_ESC_RM_UNMAP_MEMORY_DMA	     0x58
#define NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO 0x5E
#define NV_ESC_CARD_INFO		     0xC8
#define NV_ESC_REGISTER_FD		     0xC9
#define NV_ESC_CHECK_VERSION_STR	     0xD2
#define NV_ESC_IOCTL_XFER_CMD		     0xD3
#define NV_ESC_ALLOC_OS_EVENT		     0xCE
#define NV_ESC_FREE_OS_EVENT		     0xCF
#define NV_ESC_ATTACH_GPUS_TO_FD	     0xD4
#define NV_ESC_SYS_PARAMS		     0xD6
#define NV_ESC_NUMA_INFO		     0xD7
#define NV_NUMA_INFO_SIZE		     0x230 /* nv_ioctl_numa_info_t */

#define NV_IOCTL_XFER_MAX_SIZE 16384 /* NV_ABSOLUTE_MAX_IOCTL_SIZE */

/* NVOS00: RM_FREE. hObjectOld == hRoot frees the whole client. */
struct nvos00_params {
	__u32 hRoot;
	__u32 hObjectParent;
	__u32 hObjectOld;
	__u32 status;
};

/* NVOS21: RM_ALLOC, 32-byte form. hObjectNew is in/out (0 = let RM pick). */
struct nvos21_params {
	__u32 hRoot;
	__u32 hObjectParent;
	__u32 hObjectNew;
	__u32 hClass;
	__u64 pAllocParms;
	__u32 paramsSize;
	__u32 status;
};

/* NVOS64: RM_ALLOC with access rights, 48-byte form; first five fields as NVOS21. */
struct nvos64_params {
	__u32 hRoot;
	__u32 hObjectParent;
	__u32 hObjectNew;
	__u32 hClass;
	__u64 pAllocParms;
	__u64 pRightsRequested;
	__u32 paramsSize;
	__u32 flags;
	__u32 status;
	__u32 _pad;
};

/* NVOS54: RM_CONTROL. cmd = class << 16 | category << 8 | index. */
struct nvos54_params {
	__u32 hClient;
	__u32 hObject;
	__u32 cmd;
	__u32 flags;
	__u64 params;
	__u32 paramsSize;
	__u32 status;
};

/* NVOS02 plus the fd the memory will be mmap()ed through: RM_ALLOC_MEMORY (nvidiaN only). */
struct nvos02_with_fd {
	__u32 hRoot;
	__u32 hObjectParent;
	__u32 hObjectNew;
	__u32 hClass;
	__u32 flags;
	__u32 _pad0;
	__u64 pMemory;
	__u64 limit;
	__u32 status;
	__u32 _pad1;
	__s32 fd;
	__u32 _pad2;
};

/* NVOS33 plus fd: RM_MAP_MEMORY (nvidiactl). */
struct nvos33_with_fd {
	__u32 hClient;
	__u32 hDevice;
	__u32 hMemory;
	__u32 _pad0;
	__u64 offset;
	__u64 length;
	__u64 pLinearAddress;
	__u32 status;
	__u32 flags;
	__s32 fd;
	__u32 _pad1;
};

/* NV_ESC_RM_UNMAP_MEMORY (NVOS34) */
struct nvos34_params {
	__u32 hClient;
	__u32 hDevice;
	__u32 hMemory;
	__u32 _pad0;
	__u64 pLinearAddress;
	__u32 status;
	__u32 flags;
};

/* NV_ESC_RM_VID_HEAP_CONTROL (NVOS32): the head, and the AllocSize arm of the union @0x28 */
struct nvos32_params {
	__u32 hRoot;
	__u32 hObjectParent;
	__u32 function;
	__u32 hVASpace;
	__s16 ivcHeapNumber;
	__u16 _pad0;
	__u32 status;
	__u64 total;
	__u64 free;
	/* AllocSize (function 2); Free (3) is {owner; hMemory; flags}; Info (5) is {attr; pad;
	 * offset; size; base} */
	__u32 owner;
	__u32 hMemory;
	__u32 type;
	__u32 flags;
	__u32 attr;
	__u32 format;
	__u32 comprCovg;
	__u32 zcullCovg;
	__u32 partitionStride;
	__u32 width;
	__u32 height;
	__u32 _pad1;
	__u64 size;
	__u64 alignment;
	__u64 offset;
	__u64 limit;
	__u64 address;
	__u64 rangeBegin;
	__u64 rangeEnd;
	__u32 attr2;
	__u32 ctagOffset;
	__u8 _rest[0xb8 - 0x98]; /* the largest arm (HwAlloc) */
};

#define NVOS32_FUNCTION_ALLOC_SIZE		  2
#define NVOS32_FUNCTION_FREE			  3
#define NVOS32_FUNCTION_INFO			  5
#define NVOS32_ALLOC_FLAGS_FIXED_ADDRESS_ALLOCATE 0x00000010
#define NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED 0x00004000
#define NVOS32_ALLOC_FLAGS_VIRTUAL		  0x00080000

/* NV_ESC_RM_MAP_MEMORY_DMA (NVOS46, 535 layout) */
struct nvos46_params {
	__u32 hClient;
	__u32 hDevice;
	__u32 hDma;
	__u32 hMemory;
	__u64 offset;
	__u64 length;
	__u32 flags;
	__u32 _pad0;
	__u64 dmaOffset;
	__u32 status;
	__u32 _pad1;
};

#define NVOS46_FLAGS_DMA_OFFSET_FIXED (1u << 15)

/* NV_ESC_RM_UNMAP_MEMORY_DMA (NVOS47, 535 layout) */
struct nvos47_params {
	__u32 hClient;
	__u32 hDevice;
	__u32 hDma;
	__u32 hMemory;
	__u32 flags;
	__u32 _pad0;
	__u64 dmaOffset;
	__u32 status;
	__u32 _pad1;
};

/* NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO (NVOS56) */
struct nvos56_params {
	__u32 hClient;
	__u32 hDevice;
	__u32 hMemory;
	__u32 _pad0;
	__u64 pOldCpuAddress;
	__u64 pNewCpuAddress;
	__u32 status;
	__u32 _pad1;
};

/* NV_ESC_ALLOC_OS_EVENT / NV_ESC_FREE_OS_EVENT (on nvidiactl or nvidiaN) */
struct nv_os_event {
	__u32 hClient;
	__u32 hDevice;
	__u32 fd;
	__u32 Status;
};

/* NV_ESC_IOCTL_XFER_CMD: the real escape, its size and a pointer to its parameters. */
struct nv_ioctl_xfer {
	__u32 cmd;
	__u32 size;
	__u64 ptr;
};

#define NV_RM_API_VERSION_CMD_STRICT	     0
#define NV_RM_API_VERSION_CMD_RELAXED	     '1'
#define NV_RM_API_VERSION_CMD_QUERY	     '2'
#define NV_RM_API_VERSION_REPLY_UNRECOGNIZED 0
#define NV_RM_API_VERSION_REPLY_RECOGNIZED   1

struct nv_rm_api_version {
	__u32 cmd;
	__u32 reply;
	char versionString[64];
};

/* One entry of the NV_ESC_CARD_INFO array (the ioctl size is a multiple of 72). */
struct nv_card_info {
	__u8 valid;
	__u8 _pad0[3];
	__u32 pci_domain;
	__u8 pci_bus;
	__u8 pci_slot;
	__u8 pci_function;
	__u8 _pad1;
	__u16 pci_vendor_id;
	__u16 pci_device_id;
	__u32 gpu_id;
	__u16 interrupt_line;
	__u16 _pad2;
	__u64 reg_address;
	__u64 reg_size;
	__u64 fb_address;
	__u64 fb_size;
	__u32 minor_number;
	__u8 dev_name[10];
	__u8 _pad3[2];
};

#define FAKEGPU_NV_PCI_BUS    0x1b
#define FAKEGPU_NV_PCI_DEVICE 0x2330 /* H100 SXM5 80GB */
#define FAKEGPU_NV_NAME	      "NVIDIA H100 80GB HBM3"
#define FAKEGPU_NV_BAR0_ADDR  0xfb000000ULL /* registers */
#define FAKEGPU_NV_BAR0_SIZE  (16ULL << 20)
#define FAKEGPU_NV_BAR1_ADDR  0x38000000000ULL /* framebuffer aperture */
#define FAKEGPU_NV_GPU_ID     0x1b00 /* fakegpu's one GPU: PCI bus 0x1b, device 0 (nv's gpu id) */

/* NV_ESC_SYS_PARAMS: the NUMA memory block size, set once per driver */
struct nv_sys_params {
	__u64 memblock_size;
};

struct nv_register_fd {
	__s32 ctl_fd;
};

#define NV_RM_CMD(nr, type)	 _IOWR(NV_IOCTL_MAGIC, nr, type)
#define NV_RM_CMD_SIZE(nr, size) _IOC(_IOC_READ | _IOC_WRITE, NV_IOCTL_MAGIC, nr, size)

#define NV_IOCTL_RM_ALLOC21	   NV_RM_CMD(NV_ESC_RM_ALLOC, struct nvos21_params)
#define NV_IOCTL_RM_ALLOC	   NV_RM_CMD(NV_ESC_RM_ALLOC, struct nvos64_params)
#define NV_IOCTL_RM_FREE	   NV_RM_CMD(NV_ESC_RM_FREE, struct nvos00_params)
#define NV_IOCTL_RM_CONTROL	   NV_RM_CMD(NV_ESC_RM_CONTROL, struct nvos54_params)
#define NV_IOCTL_RM_ALLOC_MEMORY   NV_RM_CMD(NV_ESC_RM_ALLOC_MEMORY, struct nvos02_with_fd)
#define NV_IOCTL_RM_MAP_MEMORY	   NV_RM_CMD(NV_ESC_RM_MAP_MEMORY, struct nvos33_with_fd)
#define NV_IOCTL_CARD_INFO	   NV_RM_CMD(NV_ESC_CARD_INFO, struct nv_card_info)
#define NV_IOCTL_REGISTER_FD	   NV_RM_CMD(NV_ESC_REGISTER_FD, struct nv_register_fd)
#define NV_IOCTL_CHECK_VERSION_STR NV_RM_CMD(NV_ESC_CHECK_VERSION_STR, struct nv_rm_api_version)
#define NV_IOCTL_XFER_CMD	   NV_RM_CMD(NV_ESC_IOCTL_XFER_CMD, struct nv_ioctl_xfer)

/* RM classes (gpu-facts 1.4). */
#define NV01_ROOT		0x0
#define NV01_ROOT_NON_PRIV	0x1
#define NV01_ROOT_CLIENT	0x41
#define NV01_MEMORY_SYSTEM	0x3E
#define NV01_DEVICE_0		0x80
#define NV20_SUBDEVICE_0	0x2080
#define FERMI_CONTEXT_SHARE_A	0x9067
#define FERMI_VASPACE_A		0x90F1
#define KEPLER_CHANNEL_GROUP_A	0xA06C
#define HOPPER_CHANNEL_GPFIFO_A 0xC86F
#define HOPPER_COMPUTE_A	0xCBC0

/* A few RM control commands (class in bits 31:16). */
#define NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 0x13E
#define NVA06C_CTRL_CMD_GPFIFO_SCHEDULE		    0xA06C0101
#define NV2080_CTRL_CMD_GPU_GET_GID_INFO	    0x2080014A

/* RM status codes (nvstatuscodes.h). */
#define NV_OK			     0x0
#define NV_ERR_BUSY_RETRY	     0x3
#define NV_ERR_ILLEGAL_ACTION	     0x16
#define NV_ERR_IN_USE		     0x17
#define NV_ERR_INVALID_ADDRESS	     0x1E
#define NV_ERR_INVALID_ARGUMENT	     0x1F
#define NV_ERR_INVALID_CLASS	     0x22
#define NV_ERR_INVALID_CLIENT	     0x23
#define NV_ERR_INVALID_OBJECT_HANDLE 0x33
#define NV_ERR_INVALID_OBJECT_PARENT 0x36
#define NV_ERR_INVALID_PARAM_STRUCT  0x3A
#define NV_ERR_INVALID_STATE	     0x40
#define NV_ERR_NO_MEMORY	     0x51
#define NV_ERR_NOT_SUPPORTED	     0x56
#define NV_ERR_PAGE_TABLE_NOT_AVAIL  0x5D

/* ---- NVIDIA UVM (nvidia-uvm): raw command numbers, not _IOC-encoded ---- */

#define UVM_INITIALIZE		 0x30000001
#define UVM_DEINITIALIZE	 0x30000002
#define UVM_REGISTER_GPU_VASPACE 0x19
#define UVM_REGISTER_CHANNEL	 0x1B
#define UVM_REGISTER_GPU	 0x25
#define UVM_PAGEABLE_MEM_ACCESS	 0x27
#define UVM_MM_INITIALIZE	 0x4B

#define UVM_INIT_FLAGS_DISABLE_HMM		  0x1
#define UVM_INIT_FLAGS_MULTI_PROCESS_SHARING_MODE 0x2

struct uvm_initialize_params {
	__u64 flags;
	__u32 rmStatus;
	__u32 _pad;
};

struct uvm_register_gpu_vaspace_params {
	__u8 gpuUuid[16];
	__s32 rmCtrlFd;
	__u32 hClient;
	__u32 hVaSpace;
	__u32 rmStatus;
};

struct uvm_register_gpu_params {
	__u8 gpu_uuid[16];
	__u8 numaEnabled;
	__u8 _pad[3];
	__s32 numaNodeId;
	__s32 rmCtrlFd;
	__u32 hClient;
	__u32 hSmcPartRef;
	__u32 rmStatus;
};

struct uvm_register_channel_params {
	__u8 gpuUuid[16];
	__s32 rmCtrlFd;
	__u32 hClient;
	__u32 hChannel;
	__u32 _pad0;
	__u64 base;
	__u64 length;
	__u32 rmStatus;
	__u32 _pad1;
};

struct uvm_mm_initialize_params {
	__s32 uvmFd;
	__u32 rmStatus;
};

/* ---- AMD KFD (/dev/kfd): type 'K', drivers match on _IOC_NR only ---- */

#define KFD_IOCTL_MAGIC		     'K'
#define KFD_NR_GET_VERSION	     0x01
#define KFD_NR_CREATE_QUEUE	     0x02
#define KFD_NR_DESTROY_QUEUE	     0x03
#define KFD_NR_ACQUIRE_VM	     0x15
#define KFD_NR_ALLOC_MEMORY_OF_GPU   0x16
#define KFD_NR_FREE_MEMORY_OF_GPU    0x17
#define KFD_NR_MAP_MEMORY_TO_GPU     0x18
#define KFD_NR_UNMAP_MEMORY_FROM_GPU 0x19
#define KFD_NR_FIRST		     0x01
#define KFD_NR_LAST		     0x26 /* DBG_TRAP, upstream >= 6.4 */

#include "kfd_compat.h" /* the KFD argument layouts (include/kfd_compat.h) */

/* The version fakegpu reports, and the gpu_id it is known by when sysfs has no KFD topology. */
#define FAKEGPU_KFD_MAJOR  1
#define FAKEGPU_KFD_MINOR  11
#define FAKEGPU_KFD_GPU_ID 0x7f3a

/* ---- amdgpu render node: DRM type 'd', driver ioctls from nr 0x40 ---- */

#ifndef DRM_IOCTL_BASE
#define DRM_IOCTL_BASE 'd'
#endif
#ifndef DRM_COMMAND_BASE
#define DRM_COMMAND_BASE 0x40
#endif

#define AMDGPU_NR_GEM_CREATE (DRM_COMMAND_BASE + 0x00)
#define AMDGPU_NR_CTX	     (DRM_COMMAND_BASE + 0x02)
#define AMDGPU_NR_INFO	     (DRM_COMMAND_BASE + 0x05)

#define AMDGPU_CTX_OP_ALLOC_CTX	   1
#define AMDGPU_CTX_OP_FREE_CTX	   2
#define AMDGPU_CTX_OP_QUERY_STATE  3
#define AMDGPU_CTX_OP_QUERY_STATE2 4
#define AMDGPU_CTX_PRIORITY_NORMAL 0

#define AMDGPU_GEM_DOMAIN_GTT 0x2

/* union drm_amdgpu_ctx: 16 bytes. */
union amdgpu_ctx_args {
	struct {
		__u32 op;
		__u32 flags;
		__u32 ctx_id;
		__s32 priority;
	} in;
	union {
		struct {
			__u32 ctx_id;
			__u32 _pad;
		} alloc;
		struct {
			__u64 flags;
			__u32 hangs;
			__u32 reset_status;
		} state;
	} out;
};

/* union drm_amdgpu_gem_create: 32 bytes. */
union amdgpu_gem_create_args {
	struct {
		__u64 bo_size;
		__u64 alignment;
		__u64 domains;
		__u64 domain_flags;
	} in;
	struct {
		__u32 handle;
		__u32 _pad;
	} out;
};

#define AMDGPU_IOCTL_CTX _IOWR(DRM_IOCTL_BASE, AMDGPU_NR_CTX, union amdgpu_ctx_args)
#define AMDGPU_IOCTL_GEM_CREATE                                                                    \
	_IOWR(DRM_IOCTL_BASE, AMDGPU_NR_GEM_CREATE, union amdgpu_gem_create_args)

/* ---- Layout checks against gpu-facts 1.3, 1.5, 2.1, 2.4 ---- */

_Static_assert(sizeof(struct nvos00_params) == 16, "NVOS00 is 16 bytes");
_Static_assert(sizeof(struct nvos21_params) == 32, "NVOS21 is 32 bytes");
_Static_assert(offsetof(struct nvos21_params, status) == 0x1C, "NVOS21 status @0x1C");
_Static_assert(sizeof(struct nvos64_params) == 48, "NVOS64 is 48 bytes");
_Static_assert(offsetof(struct nvos64_params, paramsSize) == 0x20, "NVOS64 paramsSize @0x20");
_Static_assert(offsetof(struct nvos64_params, status) == 0x28, "NVOS64 status @0x28");
_Static_assert(sizeof(struct nvos54_params) == 32, "NVOS54 is 32 bytes");
_Static_assert(offsetof(struct nvos54_params, params) == 0x10, "NVOS54 params @0x10");
_Static_assert(offsetof(struct nvos54_params, status) == 0x1C, "NVOS54 status @0x1C");
_Static_assert(sizeof(struct nvos02_with_fd) == 56, "NVOS02 with fd is 56 bytes");
_Static_assert(offsetof(struct nvos02_with_fd, pMemory) == 0x18, "NVOS02 pMemory @0x18");
_Static_assert(offsetof(struct nvos02_with_fd, status) == 0x28, "NVOS02 status @0x28");
_Static_assert(offsetof(struct nvos02_with_fd, fd) == 0x30, "NVOS02 fd @0x30");
_Static_assert(sizeof(struct nvos33_with_fd) == 56, "NVOS33 with fd is 56 bytes");
_Static_assert(offsetof(struct nvos33_with_fd, pLinearAddress) == 0x20, "NVOS33 addr @0x20");
_Static_assert(offsetof(struct nvos33_with_fd, status) == 0x28, "NVOS33 status @0x28");
_Static_assert(offsetof(struct nvos33_with_fd, fd) == 0x30, "NVOS33 fd @0x30");
_Static_assert(sizeof(struct nvos32_params) == 184, "NVOS32 is 184 bytes");
_Static_assert(offsetof(struct nvos32_params, owner) == 0x28, "NVOS32 data @0x28");
_Static_assert(offsetof(struct nvos32_params, size) == 0x58, "NVOS32 AllocSize.size @0x58");
_Static_assert(offsetof(struct nvos32_params, attr2) == 0x90, "NVOS32 AllocSize.attr2 @0x90");
_Static_assert(sizeof(struct nvos46_params) == 56, "NVOS46 (535) is 56 bytes");
_Static_assert(offsetof(struct nvos46_params, status) == 0x30, "NVOS46 status @0x30");
_Static_assert(sizeof(struct nvos47_params) == 40, "NVOS47 (535) is 40 bytes");
_Static_assert(offsetof(struct nvos47_params, status) == 0x20, "NVOS47 status @0x20");
_Static_assert(sizeof(struct nvos56_params) == 40, "NVOS56 is 40 bytes");
_Static_assert(sizeof(struct nvos34_params) == 32, "NVOS34 is 32 bytes");
_Static_assert(sizeof(struct nv_ioctl_xfer) == 16, "nv_ioctl_xfer is 16 bytes");
_Static_assert(sizeof(struct nv_rm_api_version) == 72, "rm_api_version is 72 bytes");
_Static_assert(sizeof(struct nv_card_info) == 72, "card_info is 72 bytes");
_Static_assert(offsetof(struct nv_card_info, gpu_id) == 16, "card_info gpu_id @16");
_Static_assert(offsetof(struct nv_card_info, reg_address) == 24, "card_info reg_address @24");
_Static_assert(offsetof(struct nv_card_info, minor_number) == 56, "card_info minor @56");
_Static_assert(NV_IOCTL_RM_ALLOC == 0xC030462B, "RM_ALLOC (NVOS64) cmd");
_Static_assert(NV_IOCTL_RM_ALLOC21 == 0xC020462B, "RM_ALLOC (NVOS21) cmd");
_Static_assert(NV_IOCTL_RM_CONTROL == 0xC020462A, "RM_CONTROL cmd");
_Static_assert(NV_IOCTL_RM_FREE == 0xC0104629, "RM_FREE cmd");
_Static_assert(NV_IOCTL_CARD_INFO == 0xC04846C8, "CARD_INFO cmd");
_Static_assert(NV_IOCTL_REGISTER_FD == 0xC00446C9, "REGISTER_FD cmd");
_Static_assert(NV_IOCTL_CHECK_VERSION_STR == 0xC04846D2, "CHECK_VERSION_STR cmd");
_Static_assert(NV_IOCTL_XFER_CMD == 0xC01046D3, "XFER cmd");
_Static_assert(NV_RM_CMD_SIZE(NV_ESC_CARD_INFO, 2 * 72) == 0xC09046C8, "CARD_INFO x2 cmd");

_Static_assert(sizeof(struct uvm_initialize_params) == 16, "UVM_INITIALIZE params are 16 bytes");
_Static_assert(offsetof(struct uvm_initialize_params, rmStatus) == 8, "rmStatus @8");
_Static_assert(sizeof(struct uvm_register_gpu_vaspace_params) == 32, "REGISTER_GPU_VASPACE 32");
_Static_assert(offsetof(struct uvm_register_gpu_vaspace_params, rmStatus) == 0x1C, "@0x1C");
_Static_assert(sizeof(struct uvm_register_gpu_params) == 40, "REGISTER_GPU is 40 bytes");
_Static_assert(offsetof(struct uvm_register_gpu_params, rmCtrlFd) == 0x18, "rmCtrlFd @0x18");
_Static_assert(offsetof(struct uvm_register_gpu_params, rmStatus) == 0x24, "rmStatus @0x24");
_Static_assert(sizeof(struct uvm_register_channel_params) == 56, "REGISTER_CHANNEL is 56 bytes");
_Static_assert(offsetof(struct uvm_register_channel_params, base) == 0x20, "base @0x20");
_Static_assert(offsetof(struct uvm_register_channel_params, rmStatus) == 0x30, "rmStatus @0x30");
_Static_assert(sizeof(struct uvm_mm_initialize_params) == 8, "MM_INITIALIZE is 8 bytes");

_Static_assert(sizeof(struct kfd_ioctl_get_version_args) == 8, "KFD GET_VERSION args");
_Static_assert(offsetof(struct kfd_ioctl_create_queue_args, queue_id) == 52, "queue_id @52");
_Static_assert(sizeof(struct kfd_ioctl_acquire_vm_args) == 8, "KFD ACQUIRE_VM args");
_Static_assert(sizeof(struct kfd_ioctl_alloc_memory_of_gpu_args) == 40, "KFD ALLOC_MEMORY args");
_Static_assert(offsetof(struct kfd_ioctl_alloc_memory_of_gpu_args, handle) == 16, "handle @16");
_Static_assert(sizeof(struct kfd_ioctl_map_memory_to_gpu_args) == 24, "KFD MAP_MEMORY args");
_Static_assert(_IOC_NR(AMDKFD_IOC_ACQUIRE_VM) == KFD_NR_ACQUIRE_VM, "ACQUIRE_VM nr");
_Static_assert(AMDKFD_IOC_GET_VERSION == 0x80084B01, "KFD GET_VERSION cmd");

_Static_assert(sizeof(union amdgpu_ctx_args) == 16, "amdgpu ctx union is 16 bytes");
_Static_assert(sizeof(union amdgpu_gem_create_args) == 32, "amdgpu gem_create union is 32 bytes");
_Static_assert(AMDGPU_IOCTL_CTX == 0xC0106442, "DRM_IOCTL_AMDGPU_CTX cmd");
_Static_assert(AMDGPU_IOCTL_GEM_CREATE == 0xC0206440, "DRM_IOCTL_AMDGPU_GEM_CREATE cmd");

/* ---- Names, for logs ---- */

static inline const char *nv_status_name(__u32 status)
{
	switch (status) {
	case NV_OK:
		return "NV_OK";
	case NV_ERR_BUSY_RETRY:
		return "NV_ERR_BUSY_RETRY";
	case NV_ERR_ILLEGAL_ACTION:
		return "NV_ERR_ILLEGAL_ACTION";
	case NV_ERR_IN_USE:
		return "NV_ERR_IN_USE";
	case NV_ERR_INVALID_ARGUMENT:
		return "NV_ERR_INVALID_ARGUMENT";
	case NV_ERR_INVALID_CLIENT:
		return "NV_ERR_INVALID_CLIENT";
	case NV_ERR_INVALID_OBJECT_HANDLE:
		return "NV_ERR_INVALID_OBJECT_HANDLE";
	case NV_ERR_INVALID_OBJECT_PARENT:
		return "NV_ERR_INVALID_OBJECT_PARENT";
	case NV_ERR_INVALID_STATE:
		return "NV_ERR_INVALID_STATE";
	case NV_ERR_NOT_SUPPORTED:
		return "NV_ERR_NOT_SUPPORTED";
	case NV_ERR_PAGE_TABLE_NOT_AVAIL:
		return "NV_ERR_PAGE_TABLE_NOT_AVAIL";
	}
	return "NV_ERR_?";
}

static inline const char *nv_class_name(__u32 cls)
{
	switch (cls) {
	case NV01_ROOT:
	case NV01_ROOT_NON_PRIV:
	case NV01_ROOT_CLIENT:
		return "NV01_ROOT_CLIENT";
	case NV01_MEMORY_SYSTEM:
		return "NV01_MEMORY_SYSTEM";
	case NV01_DEVICE_0:
		return "NV01_DEVICE_0";
	case NV20_SUBDEVICE_0:
		return "NV20_SUBDEVICE_0";
	case FERMI_CONTEXT_SHARE_A:
		return "FERMI_CONTEXT_SHARE_A";
	case FERMI_VASPACE_A:
		return "FERMI_VASPACE_A";
	case KEPLER_CHANNEL_GROUP_A:
		return "KEPLER_CHANNEL_GROUP_A";
	case HOPPER_CHANNEL_GPFIFO_A:
		return "HOPPER_CHANNEL_GPFIFO_A";
	case HOPPER_COMPUTE_A:
		return "HOPPER_COMPUTE_A";
	}
	return "unknown-class";
}

#ifndef GPU_UAPI_NO_HELPERS
/* ======================= Workload helpers (tests/workloads/) ======================= */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define WL_FMT(a, b) __attribute__((format(printf, a, b)))

/* One step of a workload: "[pid N] text" on stdout, flushed so fork() cannot duplicate it. */
static inline WL_FMT(1, 2) void wl_say(const char *fmt, ...)
{
	va_list ap;

	printf("[pid %d] ", (int)getpid());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Something did not behave as the scenario expects: say what on stderr and exit 1. */
static inline WL_FMT(1, 2) __attribute__((noreturn)) void wl_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "[pid %d] error: ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The device directory from argv[1]: the fakegpu mountpoint in tests, /dev on real machines. */
static inline const char *wl_dir_arg(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE_DIR\n", argv[0]);
		exit(2);
	}
	return argv[1];
}

static inline void wl_set_name(const char *name)
{
	if (prctl(PR_SET_NAME, name, 0, 0, 0) < 0)
		wl_fail("prctl(PR_SET_NAME, %s): %s", name, strerror(errno));
}

static inline pid_t wl_fork(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		wl_fail("fork: %s", strerror(errno));
	return pid;
}

/* Wait for @pid and return its raw wait status. */
static inline int wl_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			wl_fail("waitpid %d: %s", (int)pid, strerror(errno));
	}
	return status;
}

/* Wait for @pid, which must exit 0. */
static inline void wl_wait_ok(pid_t pid, const char *who)
{
	int status = wl_wait(pid);

	if (WIFSIGNALED(status))
		wl_fail("%s (pid %d) died by signal %d", who, (int)pid, WTERMSIG(status));
	if (WEXITSTATUS(status))
		wl_fail("%s (pid %d) exited %d", who, (int)pid, WEXITSTATUS(status));
	wl_say("%s (pid %d) exited 0", who, (int)pid);
}

/* Re-execute this program with @args (NULL-terminated, args[0] = argv[0]); never returns. */
static inline __attribute__((noreturn)) void wl_exec_self(char *const args[])
{
	fflush(NULL);
	execv(args[0], args);
	if (errno == ENOENT)
		execv("/proc/self/exe", args);
	wl_fail("exec %s: %s", args[0], strerror(errno));
}

static inline int wl_open(const char *dir, const char *name, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags);
	if (fd < 0)
		wl_fail("open %s: %s", path, strerror(errno));
	wl_say("open %s -> fd %d%s", path, fd, (flags & O_CLOEXEC) ? " (O_CLOEXEC)" : "");
	return fd;
}

/* ioctl() retried on EINTR; returns its result with errno intact. */
static inline int wl_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret;
}

/* ioctl() that must not fail at the syscall level. */
static inline void wl_xioctl(int fd, unsigned long cmd, void *arg, const char *what)
{
	if (wl_ioctl(fd, cmd, arg) < 0)
		wl_fail("%s on fd %d: ioctl failed: %s", what, fd, strerror(errno));
}

static inline void nv_expect_ok(__u32 status, const char *what)
{
	if (status != NV_OK)
		wl_fail("%s: status %s (0x%x), expected NV_OK", what, nv_status_name(status),
			status);
}

/*
 * RM calls. Each returns the RM status from the parameters (the syscall returns 0 whatever the
 * verdict, as with the real RM) and exits when the syscall itself fails. Alloc parameters are
 * not sent: fakegpu does not need them (a real RM would want them for most classes).
 */
static inline __u32 nv_rm_alloc(int ctl_fd, __u32 client, __u32 parent, __u32 cls, __u32 *handle)
{
	struct nvos64_params p = {
	    .hRoot = client,
	    .hObjectParent = parent,
	    .hObjectNew = *handle,
	    .hClass = cls,
	};

	wl_xioctl(ctl_fd, NV_IOCTL_RM_ALLOC, &p, "RM_ALLOC");
	if (p.status == NV_OK)
		*handle = p.hObjectNew;
	wl_say("RM_ALLOC %s(0x%x) client=0x%x parent=0x%x -> 0x%x %s", nv_class_name(cls), cls,
	       client, parent, p.status == NV_OK ? *handle : 0, nv_status_name(p.status));
	return p.status;
}

static inline __u32 nv_alloc_client(int ctl_fd)
{
	__u32 client = 0;

	nv_expect_ok(nv_rm_alloc(ctl_fd, 0, 0, NV01_ROOT_CLIENT, &client), "RM_ALLOC client");
	return client;
}

static inline __u32 nv_rm_free(int ctl_fd, __u32 client, __u32 parent, __u32 object)
{
	struct nvos00_params p = {.hRoot = client, .hObjectParent = parent, .hObjectOld = object};

	wl_xioctl(ctl_fd, NV_IOCTL_RM_FREE, &p, "RM_FREE");
	wl_say("RM_FREE client=0x%x object=0x%x%s -> %s", client, object,
	       object == client ? " (whole client)" : "", nv_status_name(p.status));
	return p.status;
}

/* The size of @cmd's parameters (NVIDIA's ctrl headers), and what a workload sends in them. */
static inline __u32 nv_ctrl_params(__u32 cmd, __u8 *buf)
{
	switch (cmd) {
	case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: /* {NvBool bEnable; NvBool bSkipSubmit} */
		buf[0] = 1;
		return 2;
	case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: /* 3 strings of 256, 2 numbers */
		return 3 * 256 + 8;
	case NV2080_CTRL_CMD_GPU_GET_GID_INFO: /* {index; flags; length; data[256]} */
		buf[4] = 2;		       /* binary */
		return 12 + 256;
	}
	return 16;
}

static inline __u32 nv_rm_control(int ctl_fd, __u32 client, __u32 object, __u32 cmd)
{
	__u8 params[1024] = {0};
	struct nvos54_params p = {
	    .hClient = client,
	    .hObject = object,
	    .cmd = cmd,
	    .params = (__u64)(unsigned long)params,
	};

	p.paramsSize = nv_ctrl_params(cmd, params);
	wl_xioctl(ctl_fd, NV_IOCTL_RM_CONTROL, &p, "RM_CONTROL");
	wl_say("RM_CONTROL cmd=0x%x client=0x%x object=0x%x -> %s", cmd, client, object,
	       nv_status_name(p.status));
	return p.status;
}

static inline void nv_check_version(int ctl_fd)
{
	struct nv_rm_api_version v = {.cmd = NV_RM_API_VERSION_CMD_RELAXED};

	strcpy(v.versionString, "595.45.04");
	wl_xioctl(ctl_fd, NV_IOCTL_CHECK_VERSION_STR, &v, "CHECK_VERSION_STR");
	if (v.reply != NV_RM_API_VERSION_REPLY_RECOGNIZED)
		wl_fail("CHECK_VERSION_STR: reply %u, expected 1 (recognized)", v.reply);
	wl_say("CHECK_VERSION_STR -> recognized");
}

static inline void nv_register_fd(int dev_fd, int ctl_fd)
{
	struct nv_register_fd r = {.ctl_fd = ctl_fd};

	wl_xioctl(dev_fd, NV_IOCTL_REGISTER_FD, &r, "REGISTER_FD");
	wl_say("REGISTER_FD nvidia0 fd %d -> ctl fd %d", dev_fd, ctl_fd);
}

/* UVM calls: the status is in rmStatus, the syscall fails only on a copy fault. */
static inline __u32 uvm_initialize(int uvm_fd, __u64 flags)
{
	struct uvm_initialize_params p = {.flags = flags, .rmStatus = ~0U};

	wl_xioctl(uvm_fd, UVM_INITIALIZE, &p, "UVM_INITIALIZE");
	wl_say("UVM_INITIALIZE fd %d -> %s", uvm_fd, nv_status_name(p.rmStatus));
	return p.rmStatus;
}

static inline __u32 uvm_register_gpu_vaspace(int uvm_fd, int ctl_fd, __u32 client, __u32 vaspace)
{
	struct uvm_register_gpu_vaspace_params p = {
	    .rmCtrlFd = ctl_fd,
	    .hClient = client,
	    .hVaSpace = vaspace,
	    .rmStatus = ~0U,
	};

	wl_xioctl(uvm_fd, UVM_REGISTER_GPU_VASPACE, &p, "UVM_REGISTER_GPU_VASPACE");
	wl_say("UVM_REGISTER_GPU_VASPACE client=0x%x vaspace=0x%x -> %s", client, vaspace,
	       nv_status_name(p.rmStatus));
	return p.rmStatus;
}

/* What gpu_init() built: the fds and RM handles of one "CUDA context". */
struct gpu_ctx {
	int ctl_fd;
	int dev_fd;
	int uvm_fd;
	__u32 client;
	__u32 device;
	__u32 subdevice;
	__u32 vaspace;
	__u32 tsg;
	__u32 ctxshare;
	__u32 channel;
	__u32 compute;
};

static inline __u32 gpu_alloc(int ctl_fd, __u32 client, __u32 parent, __u32 cls)
{
	__u32 handle = 0;

	if (nv_rm_alloc(ctl_fd, client, parent, cls, &handle) != NV_OK)
		wl_fail("RM_ALLOC %s under 0x%x failed", nv_class_name(cls), parent);
	return handle;
}

/* Initialise the GPU the way libcuda does, in the order of gpu-facts 1.4 (shortened). */
static inline void gpu_init(const char *dir, struct gpu_ctx *g)
{
	int fd;

	fd = g->ctl_fd = wl_open(dir, "nvidiactl", O_RDWR | O_CLOEXEC);
	nv_check_version(fd);
	g->client = nv_alloc_client(fd);
	g->device = gpu_alloc(fd, g->client, g->client, NV01_DEVICE_0);
	g->subdevice = gpu_alloc(fd, g->client, g->device, NV20_SUBDEVICE_0);
	g->vaspace = gpu_alloc(fd, g->client, g->device, FERMI_VASPACE_A);
	g->tsg = gpu_alloc(fd, g->client, g->device, KEPLER_CHANNEL_GROUP_A);
	g->ctxshare = gpu_alloc(fd, g->client, g->tsg, FERMI_CONTEXT_SHARE_A);
	g->channel = gpu_alloc(fd, g->client, g->tsg, HOPPER_CHANNEL_GPFIFO_A);
	g->compute = gpu_alloc(fd, g->client, g->channel, HOPPER_COMPUTE_A);

	g->dev_fd = wl_open(dir, "nvidia0", O_RDWR | O_CLOEXEC);
	nv_register_fd(g->dev_fd, fd);

	g->uvm_fd = wl_open(dir, "nvidia-uvm", O_RDWR | O_CLOEXEC);
	nv_expect_ok(uvm_initialize(g->uvm_fd, 0), "UVM_INITIALIZE");
	nv_expect_ok(uvm_register_gpu_vaspace(g->uvm_fd, fd, g->client, g->vaspace),
		     "UVM_REGISTER_GPU_VASPACE");
	wl_say("gpu_init done: client 0x%x, channel group 0x%x, channel 0x%x", g->client, g->tsg,
	       g->channel);
}

/* Tear the context down: free the whole client, close the fds. */
static inline void gpu_fini(struct gpu_ctx *g)
{
	nv_expect_ok(nv_rm_free(g->ctl_fd, g->client, 0, g->client), "RM_FREE client");
	close(g->uvm_fd);
	close(g->dev_fd);
	close(g->ctl_fd);
	g->ctl_fd = g->dev_fd = g->uvm_fd = -1;
}

#endif /* GPU_UAPI_NO_HELPERS */
#endif /* __GPU_UAPI_H */
