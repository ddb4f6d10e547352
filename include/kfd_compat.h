/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * AMD KFD ioctl arguments. <linux/kfd_ioctl.h> includes <drm/drm.h>, which no Debian 12
 * package installs (libdrm-dev has it under /usr/include/libdrm/). Use the system header when
 * it compiles, else our own declarations with the header's names and layouts (KFD 1.11,
 * gpu-facts.md §2.1). The decoder, the emulated driver and the tests all include this one.
 */
#ifndef __GPUCTX_KFD_COMPAT_H
#define __GPUCTX_KFD_COMPAT_H

#include <linux/ioctl.h>
#include <linux/types.h>

#if __has_include(<drm/drm.h>)
#include <linux/kfd_ioctl.h>
#else
#define AMDKFD_IOCTL_BASE 'K'

struct kfd_ioctl_get_version_args {
	__u32 major_version;
	__u32 minor_version;
};

#define KFD_IOC_QUEUE_TYPE_COMPUTE     0x0
#define KFD_IOC_QUEUE_TYPE_SDMA	       0x1
#define KFD_IOC_QUEUE_TYPE_COMPUTE_AQL 0x2
#define KFD_IOC_QUEUE_TYPE_SDMA_XGMI   0x3

struct kfd_ioctl_create_queue_args {
	__u64 ring_base_address;
	__u64 write_pointer_address;
	__u64 read_pointer_address;
	__u64 doorbell_offset;
	__u32 ring_size;
	__u32 gpu_id;
	__u32 queue_type;
	__u32 queue_percentage;
	__u32 queue_priority;
	__u32 queue_id;
	__u64 eop_buffer_address;
	__u64 eop_buffer_size;
	__u64 ctx_save_restore_address;
	__u32 ctx_save_restore_size;
	__u32 ctl_stack_size;
};

struct kfd_ioctl_destroy_queue_args {
	__u32 queue_id;
	__u32 pad;
};

struct kfd_ioctl_acquire_vm_args {
	__u32 drm_fd;
	__u32 gpu_id;
};

#define KFD_IOC_ALLOC_MEM_FLAGS_VRAM	      (1 << 0)
#define KFD_IOC_ALLOC_MEM_FLAGS_GTT	      (1 << 1)
#define KFD_IOC_ALLOC_MEM_FLAGS_USERPTR	      (1 << 2)
#define KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL      (1 << 3)
#define KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP    (1 << 4)
#define KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE      (1U << 31)
#define KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE    (1 << 30)
#define KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC	      (1 << 29)
#define KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE (1 << 28)
#define KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM (1 << 27)
#define KFD_IOC_ALLOC_MEM_FLAGS_COHERENT      (1 << 26)
#define KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED      (1 << 25)

struct kfd_ioctl_alloc_memory_of_gpu_args {
	__u64 va_addr;
	__u64 size;
	__u64 handle;
	__u64 mmap_offset;
	__u32 gpu_id;
	__u32 flags;
};

struct kfd_ioctl_free_memory_of_gpu_args {
	__u64 handle;
};

struct kfd_ioctl_map_memory_to_gpu_args {
	__u64 handle;
	__u64 device_ids_array_ptr;
	__u32 n_devices;
	__u32 n_success;
};

struct kfd_ioctl_import_dmabuf_args {
	__u64 va_addr;
	__u64 handle;
	__u32 gpu_id;
	__u32 dmabuf_fd;
};

struct kfd_ioctl_set_xnack_mode_args {
	__s32 xnack_enabled;
};

struct kfd_ioctl_unmap_memory_from_gpu_args {
	__u64 handle;
	__u64 device_ids_array_ptr;
	__u32 n_devices;
	__u32 n_success;
};

#define KFD_MAX_QUEUE_PERCENTAGE 100
#define KFD_MAX_QUEUE_PRIORITY	 15

#define AMDKFD_IO(nr)	      _IO(AMDKFD_IOCTL_BASE, nr)
#define AMDKFD_IOR(nr, type)  _IOR(AMDKFD_IOCTL_BASE, nr, type)
#define AMDKFD_IOW(nr, type)  _IOW(AMDKFD_IOCTL_BASE, nr, type)
#define AMDKFD_IOWR(nr, type) _IOWR(AMDKFD_IOCTL_BASE, nr, type)

#define AMDKFD_IOC_GET_VERSION	       AMDKFD_IOR(0x01, struct kfd_ioctl_get_version_args)
#define AMDKFD_IOC_CREATE_QUEUE	       AMDKFD_IOWR(0x02, struct kfd_ioctl_create_queue_args)
#define AMDKFD_IOC_DESTROY_QUEUE       AMDKFD_IOWR(0x03, struct kfd_ioctl_destroy_queue_args)
#define AMDKFD_IOC_ACQUIRE_VM	       AMDKFD_IOW(0x15, struct kfd_ioctl_acquire_vm_args)
#define AMDKFD_IOC_ALLOC_MEMORY_OF_GPU AMDKFD_IOWR(0x16, struct kfd_ioctl_alloc_memory_of_gpu_args)
#define AMDKFD_IOC_FREE_MEMORY_OF_GPU  AMDKFD_IOW(0x17, struct kfd_ioctl_free_memory_of_gpu_args)
#define AMDKFD_IOC_MAP_MEMORY_TO_GPU   AMDKFD_IOWR(0x18, struct kfd_ioctl_map_memory_to_gpu_args)
#define AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU                                                           \
	AMDKFD_IOWR(0x19, struct kfd_ioctl_unmap_memory_from_gpu_args)
#define AMDKFD_IOC_SET_XNACK_MODE AMDKFD_IOWR(0x21, struct kfd_ioctl_set_xnack_mode_args)
#endif /* <drm/drm.h> */

/* Layouts of gpu-facts.md §2.1 (KFD 1.11), whichever header was used. */
_Static_assert(sizeof(struct kfd_ioctl_get_version_args) == 8, "KFD GET_VERSION args");
_Static_assert(sizeof(struct kfd_ioctl_destroy_queue_args) == 8, "KFD DESTROY_QUEUE args");
_Static_assert(sizeof(struct kfd_ioctl_acquire_vm_args) == 8, "KFD ACQUIRE_VM args");
_Static_assert(sizeof(struct kfd_ioctl_alloc_memory_of_gpu_args) == 40, "KFD ALLOC_MEMORY args");
_Static_assert(sizeof(struct kfd_ioctl_map_memory_to_gpu_args) == 24, "KFD MAP_MEMORY args");

#endif /* __GPUCTX_KFD_COMPAT_H */
