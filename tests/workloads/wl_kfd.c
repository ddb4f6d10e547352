// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_kfd DIR: the AMD path. Open kfd and renderD128, GET_VERSION, ACQUIRE_VM, CREATE_QUEUE,
 * a GPU memory allocation and an amdgpu context; then fork. In the child, KFD refuses the
 * inherited kfd fd (EBADF: only the opener may use it) while the render node accepts an
 * amdgpu context allocation on the inherited fd.
 */
#include "gpu_uapi.h"

static __u64 ring[512] __attribute__((aligned(4096)));
static __u64 rptr, wptr;

/* The first GPU in the KFD topology, or fakegpu's id when there is none. */
static __u32 kfd_gpu_id(void)
{
	unsigned int id = 0;
	char path[96];
	FILE *f;
	int node;

	for (node = 0; node < 64; node++) {
		snprintf(path, sizeof(path), "/sys/class/kfd/kfd/topology/nodes/%d/gpu_id", node);
		f = fopen(path, "re");
		if (!f)
			break;
		if (fscanf(f, "%u", &id) != 1)
			id = 0;
		fclose(f);
		if (id)
			return id;
	}
	return FAKEGPU_KFD_GPU_ID;
}

static void kfd_get_version(int kfd)
{
	struct kfd_ioctl_get_version_args v = {0};

	wl_xioctl(kfd, AMDKFD_IOC_GET_VERSION, &v, "KFD GET_VERSION");
	wl_say("KFD GET_VERSION -> %u.%u", v.major_version, v.minor_version);
}

static __u32 kfd_create_queue(int kfd, __u32 gpu_id)
{
	struct kfd_ioctl_create_queue_args q = {
	    .ring_base_address = (unsigned long)ring,
	    .write_pointer_address = (unsigned long)&wptr,
	    .read_pointer_address = (unsigned long)&rptr,
	    .ring_size = sizeof(ring),
	    .gpu_id = gpu_id,
	    .queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE,
	    .queue_percentage = KFD_MAX_QUEUE_PERCENTAGE,
	    .queue_priority = KFD_MAX_QUEUE_PRIORITY,
	};

	wl_xioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &q, "KFD CREATE_QUEUE");
	wl_say("KFD CREATE_QUEUE gpu 0x%x -> queue %u", gpu_id, q.queue_id);
	return q.queue_id;
}

static __u64 kfd_alloc_and_map(int kfd, __u32 gpu_id)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args a = {
	    .va_addr = 0x7f0000000000ULL,
	    .size = 2 << 20,
	    .gpu_id = gpu_id,
	    .flags = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
	};
	struct kfd_ioctl_map_memory_to_gpu_args m = {0};

	wl_xioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a, "KFD ALLOC_MEMORY_OF_GPU");
	wl_say("KFD ALLOC_MEMORY_OF_GPU 2 MiB -> handle 0x%llx", (unsigned long long)a.handle);
	m.handle = a.handle;
	m.device_ids_array_ptr = (unsigned long)&gpu_id;
	m.n_devices = 1;
	wl_xioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m, "KFD MAP_MEMORY_TO_GPU");
	if (m.n_success != 1)
		wl_fail("KFD MAP_MEMORY_TO_GPU: n_success %u, expected 1", m.n_success);
	wl_say("KFD MAP_MEMORY_TO_GPU -> mapped on %u device", m.n_success);
	return a.handle;
}

static void kfd_unmap_and_free(int kfd, __u32 gpu_id, __u64 handle)
{
	struct kfd_ioctl_unmap_memory_from_gpu_args u = {
	    .handle = handle,
	    .device_ids_array_ptr = (unsigned long)&gpu_id,
	    .n_devices = 1,
	};
	struct kfd_ioctl_free_memory_of_gpu_args f = {.handle = handle};

	wl_xioctl(kfd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &u, "KFD UNMAP_MEMORY_FROM_GPU");
	wl_xioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f, "KFD FREE_MEMORY_OF_GPU");
	wl_say("KFD UNMAP + FREE_MEMORY_OF_GPU handle 0x%llx -> ok", (unsigned long long)handle);
}

static __u32 amdgpu_ctx_alloc(int drm)
{
	union amdgpu_ctx_args c = {.in = {.op = AMDGPU_CTX_OP_ALLOC_CTX}};

	wl_xioctl(drm, AMDGPU_IOCTL_CTX, &c, "AMDGPU_CTX alloc");
	wl_say("AMDGPU_CTX alloc on fd %d -> ctx %u", drm, c.out.alloc.ctx_id);
	return c.out.alloc.ctx_id;
}

static void amdgpu_ctx_free(int drm, __u32 ctx)
{
	union amdgpu_ctx_args c = {.in = {.op = AMDGPU_CTX_OP_FREE_CTX, .ctx_id = ctx}};

	wl_xioctl(drm, AMDGPU_IOCTL_CTX, &c, "AMDGPU_CTX free");
	wl_say("AMDGPU_CTX free ctx %u -> ok", ctx);
}

static void amdgpu_gem_create(int drm)
{
	union amdgpu_gem_create_args g = {
	    .in = {.bo_size = 1 << 20, .alignment = 4096, .domains = AMDGPU_GEM_DOMAIN_GTT},
	};

	wl_xioctl(drm, AMDGPU_IOCTL_GEM_CREATE, &g, "AMDGPU_GEM_CREATE");
	wl_say("AMDGPU_GEM_CREATE 1 MiB -> handle %u", g.out.handle);
}

static __attribute__((noreturn)) void child(int kfd, int drm)
{
	struct kfd_ioctl_get_version_args v = {0};
	int ret, err;

	ret = wl_ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v);
	err = errno;
	wl_say("child: KFD GET_VERSION on inherited fd %d -> %d (%s)", kfd, ret,
	       ret < 0 ? strerror(err) : "success");
	if (ret != -1 || err != EBADF)
		wl_fail("child: KFD accepted the inherited fd, expected EBADF");
	amdgpu_ctx_alloc(drm);
	wl_say("child: KFD refused the inherited fd, the render node accepted it; exiting 0");
	exit(0);
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	__u32 gpu_id = kfd_gpu_id(), queue, ctx;
	struct kfd_ioctl_acquire_vm_args vm;
	struct kfd_ioctl_destroy_queue_args dq = {0};
	__u64 mem;
	int kfd, drm;
	pid_t pid;

	kfd = wl_open(dir, "kfd", O_RDWR | O_CLOEXEC);
	drm = wl_open(dir, "renderD128", O_RDWR | O_CLOEXEC);
	kfd_get_version(kfd);
	vm = (struct kfd_ioctl_acquire_vm_args){.drm_fd = drm, .gpu_id = gpu_id};
	wl_xioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &vm, "KFD ACQUIRE_VM");
	wl_say("KFD ACQUIRE_VM drm fd %d gpu 0x%x -> ok", drm, gpu_id);
	queue = kfd_create_queue(kfd, gpu_id);
	mem = kfd_alloc_and_map(kfd, gpu_id);
	ctx = amdgpu_ctx_alloc(drm);
	amdgpu_gem_create(drm);

	pid = wl_fork();
	if (!pid)
		child(kfd, drm);
	wl_say("parent: forked child %d", (int)pid);
	wl_wait_ok(pid, "child");

	kfd_unmap_and_free(kfd, gpu_id, mem);
	dq.queue_id = queue;
	wl_xioctl(kfd, AMDKFD_IOC_DESTROY_QUEUE, &dq, "KFD DESTROY_QUEUE");
	wl_say("KFD DESTROY_QUEUE %u -> ok", queue);
	amdgpu_ctx_free(drm, ctx);
	close(drm);
	close(kfd);
	wl_say("parent: done");
	return 0;
}
