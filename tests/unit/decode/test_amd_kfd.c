// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the AMD KFD decoder (user/decode/amd_kfd.c): queues, GPU memory, and structs
 * whose size varies across KFD versions.
 */
#include "decode_test.h"

static void test_kfd_cmd_values(void **state)
{
	(void)state;
	assert_int_equal(AMDKFD_IOC_GET_VERSION, 0x80084B01);
	assert_int_equal(AMDKFD_IOC_CREATE_QUEUE, 0xC0584B02);
	assert_int_equal(AMDKFD_IOC_DESTROY_QUEUE, 0xC0084B03);
	assert_int_equal(AMDKFD_IOC_ACQUIRE_VM, 0x40084B15);
	assert_int_equal(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, 0xC0284B16);
	assert_int_equal(AMDKFD_IOC_FREE_MEMORY_OF_GPU, 0x40084B17);
}

/* A forked child using its parent's /dev/kfd fd: the kernel says EBADF. */
static void test_kfd_get_version_ebadf(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_GET_VERSION);
	struct gctx_ioctl_desc d;

	ev->ret = -EBADF;
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_GET_VERSION");
	assert_true(d.known);
	assert_int_equal(d.err, 9);
	assert_string_equal(gctx_errno_name(d.err), "EBADF");
	assert_false(d.has_status);
	assert_true(d.failed);
	assert_string_equal(d.detail, ""); /* nothing came back */
}

static void test_kfd_get_version(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_GET_VERSION);
	struct kfd_ioctl_get_version_args in = {0}, out = {.major_version = 1, .minor_version = 11};
	struct gctx_ioctl_desc d;

	args(ev, &in, &out, sizeof(in));
	decode(ev, &d);

	assert_string_equal(d.detail, "version=1.11");
	assert_false(d.has_status);
	assert_plain(&d);
}

/* create_event {page_offset u64, trigger, type @0xc, auto_reset @0x10, node, id @0x18, slot} */
static void test_kfd_create_event(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, 0xC0204B08u);
	struct gctx_ioctl_desc d;

	memset(ev->in, 0, 32);
	memset(ev->out, 0, 32);
	put32(ev->in, 0xc, 0);	/* SIGNAL */
	put32(ev->in, 0x10, 1); /* auto reset */
	memcpy(ev->out, ev->in, 32);
	put32(ev->out, 0x18, 7);
	decode(ev, &d);
	assert_string_equal(d.name, "KFD_CREATE_EVENT");
	assert_string_equal(d.detail, "type=SIGNAL auto_reset event_id=7");
	assert_plain(&d);
}

/* wait_events {events_ptr u64, num @8, all @0xc, timeout @0x10, result @0x14 (out)} */
static void test_kfd_wait_events(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, 0xC0184B0Cu);
	struct gctx_ioctl_desc d;

	memset(ev->in, 0, 24);
	put32(ev->in, 0x8, 2);
	put32(ev->in, 0x10, 0xffffffffu);
	memcpy(ev->out, ev->in, 24);
	put32(ev->out, 0x14, 1);
	decode(ev, &d);
	assert_string_equal(d.detail, "events=2 timeout=inf result=TIMEOUT");

	put32(ev->in, 0xc, 1);
	put32(ev->in, 0x10, 500);
	ev->ret = -EINTR; /* a signal: nothing came back */
	decode(ev, &d);
	assert_string_equal(d.detail, "events=2 all timeout=500ms");
	assert_true(d.failed);
}

static void create_queue(struct gctx_ev_ioctl *ev)
{
	struct kfd_ioctl_create_queue_args in = {
	    .ring_base_address = 0x7f0000100000ull,
	    .ring_size = 0x10000,
	    .gpu_id = 0xa1b2,
	    .queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
	    .queue_percentage = 100,
	    .queue_priority = 7,
	};
	struct kfd_ioctl_create_queue_args out = in;

	out.queue_id = 3;
	out.doorbell_offset = 0x1000;
	args(ev, &in, &out, sizeof(in));
}

static void test_kfd_create_queue(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_CREATE_QUEUE);
	struct gctx_ioctl_desc d;

	create_queue(ev);
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_CREATE_QUEUE");
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_KFD_QUEUE);
	assert_int_equal(d.handle, 3);
	assert_int_equal(d.parent, 0xa1b2);
	assert_false(d.failed);
	assert_string_equal(d.detail, "gpu_id=0xa1b2 type=COMPUTE_AQL ring=0x7f0000100000 "
				      "ring_size=65536 priority=7 queue_id=3");
}

/* KFD 1.17 grew the struct to 0x60 bytes: matched on _IOC_NR, decoded by offset. */
static void test_kfd_create_queue_newer_struct(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, _IOWR('K', 0x02, char[0x60]));
	struct gctx_ioctl_desc d;

	assert_int_equal(ev->cmd, 0xC0604B02);
	create_queue(ev);
	arg32(ev, 0x58, 1); /* sdma_engine_id */
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_CREATE_QUEUE");
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.handle, 3);
	assert_int_equal(d.parent, 0xa1b2);
}

static void test_kfd_create_queue_failed(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_CREATE_QUEUE);
	struct gctx_ioctl_desc d;

	create_queue(ev);
	ev->ret = -ENOMEM;
	decode(ev, &d);

	assert_int_equal(d.err, ENOMEM);
	assert_true(d.failed);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_NONE);
	assert_not_contains(d.detail, "queue_id"); /* not a result of a failed call */
	assert_contains(d.detail, "gpu_id=0xa1b2");
}

static void test_kfd_destroy_queue(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_DESTROY_QUEUE);
	struct kfd_ioctl_destroy_queue_args a = {.queue_id = 3};
	struct gctx_ioctl_desc d;

	args(ev, &a, &a, sizeof(a));
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_DESTROY_QUEUE");
	assert_int_equal(d.op, GCTX_OP_DESTROY);
	assert_int_equal(d.obj_kind, GCTX_OBJ_KFD_QUEUE);
	assert_int_equal(d.handle, 3);
	assert_string_equal(d.detail, "queue_id=3");
}

static void test_kfd_alloc_memory(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU);
	struct kfd_ioctl_alloc_memory_of_gpu_args in = {
	    .va_addr = 0x7f5500000000ull,
	    .size = 0x400000,
	    .gpu_id = 0xa1b2,
	    .flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
		     KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE,
	};
	struct kfd_ioctl_alloc_memory_of_gpu_args out = in;
	struct gctx_ioctl_desc d;

	out.handle = 0xa1b200000001ull;
	out.mmap_offset = 0x100000;
	args(ev, &in, &out, sizeof(in));
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_ALLOC_MEMORY_OF_GPU");
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_KFD_MEMORY);
	assert_int_equal(d.handle, 0xa1b200000001ull);
	assert_int_equal(d.parent, 0xa1b2);
	assert_int_equal(d.size, 0x400000);
	assert_string_equal(d.detail, "gpu_id=0xa1b2 size=4194304 va=0x7f5500000000 "
				      "flags=0xc0000001(VRAM|WRITABLE|EXECUTABLE) "
				      "handle=0xa1b200000001");
}

static void test_kfd_alloc_memory_userptr_flags(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU);
	struct kfd_ioctl_alloc_memory_of_gpu_args a = {
	    .size = 4096,
	    .gpu_id = 1,
	    .flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | 0x100,
	};
	struct gctx_ioctl_desc d;

	args(ev, &a, &a, sizeof(a));
	decode(ev, &d);

	assert_contains(d.detail, "flags=0x104(USERPTR|0x100)");
}

static void test_kfd_free_memory(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_FREE_MEMORY_OF_GPU);
	struct kfd_ioctl_free_memory_of_gpu_args a = {.handle = 0xa1b200000001ull};
	struct gctx_ioctl_desc d;

	args(ev, &a, &a, sizeof(a));
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_FREE_MEMORY_OF_GPU");
	assert_int_equal(d.op, GCTX_OP_DESTROY);
	assert_int_equal(d.obj_kind, GCTX_OBJ_KFD_MEMORY);
	assert_int_equal(d.handle, 0xa1b200000001ull);
}

static void test_kfd_acquire_vm(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_ACQUIRE_VM);
	struct kfd_ioctl_acquire_vm_args a = {.drm_fd = 8, .gpu_id = 0xa1b2};
	struct gctx_ioctl_desc d;

	args(ev, &a, &a, sizeof(a));
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_ACQUIRE_VM");
	assert_string_equal(d.detail, "drm_fd=8 gpu_id=0xa1b2");
	assert_int_equal(d.parent, 0xa1b2);
	assert_plain(&d);
}

static void test_kfd_names(void **state)
{
	/* clang-format off */
	static const struct {
		__u32 cmd;
		const char *name;
	} cases[] = {
		{ 0x40204B04, "KFD_SET_MEMORY_POLICY" },
		{ 0xC0284B05, "KFD_GET_CLOCK_COUNTERS" },
		{ 0x81904B06, "KFD_GET_PROCESS_APERTURES" },
		{ 0x40184B07, "KFD_UPDATE_QUEUE" },
		{ 0xC0204B08, "KFD_CREATE_EVENT" },
		{ 0x40084B09, "KFD_DESTROY_EVENT" },
		{ 0x40084B0A, "KFD_SET_EVENT" },
		{ 0x40084B0B, "KFD_RESET_EVENT" },
		{ 0xC0184B0C, "KFD_WAIT_EVENTS" },
		{ _IOW('K', 0x0d, char[8]), "KFD_DBG_REGISTER_DEPRECATED" },
		{ _IOW('K', 0x10, char[8]), "KFD_DBG_WAVE_CONTROL_DEPRECATED" },
		{ 0xC0104B11, "KFD_SET_SCRATCH_BACKING_VA" },
		{ 0xC0284B12, "KFD_GET_TILE_CONFIG" },
		{ 0x40184B13, "KFD_SET_TRAP_HANDLER" },
		{ 0xC0104B14, "KFD_GET_PROCESS_APERTURES_NEW" },
		{ 0xC0184B18, "KFD_MAP_MEMORY_TO_GPU" },
		{ 0xC0184B19, "KFD_UNMAP_MEMORY_FROM_GPU" },
		{ 0x40104B1A, "KFD_SET_CU_MASK" },
		{ 0xC0184B1B, "KFD_GET_QUEUE_WAVE_STATE" },
		{ 0xC0204B1C, "KFD_GET_DMABUF_INFO" },
		{ 0xC0184B1D, "KFD_IMPORT_DMABUF" },
		{ 0xC0104B1E, "KFD_ALLOC_QUEUE_GWS" },
		{ 0xC0084B1F, "KFD_SMI_EVENTS" },
		{ 0xC0184B20, "KFD_SVM" },
		{ 0xC0044B21, "KFD_SET_XNACK_MODE" },
		{ 0xC0384B22, "KFD_CRIU_OP" },
		{ 0xC0104B23, "KFD_AVAILABLE_MEMORY" },
		{ 0xC0104B24, "KFD_EXPORT_DMABUF" },
		{ 0xC0104B25, "KFD_RUNTIME_ENABLE" },
		{ 0xC0204B26, "KFD_DBG_TRAP" },
		{ _IO('K', 0x27), "KFD_CREATE_PROCESS" },
		{ _IOWR('K', 0x80, char[0x30]), "KFD_IPC_IMPORT_HANDLE" },
		{ _IOWR('K', 0x81, char[0x20]), "KFD_IPC_EXPORT_HANDLE" },
		{ _IOWR('K', 0x83, char[0x30]), "KFD_CROSS_MEMORY_COPY" },
		{ _IOWR('K', 0x84, char[0x20]), "KFD_RLC_SPM" },
		{ _IOWR('K', 0x85, char[0x20]), "KFD_PC_SAMPLE" },
	};
	/* clang-format on */
	struct gctx_ioctl_desc d;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		decode(ev_new(state, GCTX_DEV_KFD, cases[i].cmd), &d);
		assert_string_equal(d.name, cases[i].name);
		assert_true(d.known);
		assert_false(d.has_status);
		assert_false(d.failed);
	}
}

static void test_kfd_set_xnack_mode(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_SET_XNACK_MODE);
	struct kfd_ioctl_set_xnack_mode_args a = {.xnack_enabled = 1};
	struct gctx_ioctl_desc d;

	args(ev, &a, &a, sizeof(a));
	decode(ev, &d);

	assert_string_equal(d.detail, "xnack=1");
}

static void test_kfd_unknown(void **state)
{
	struct gctx_ev_ioctl *ev;
	struct gctx_ioctl_desc d;

	ev = ev_new(state, GCTX_DEV_KFD, _IOWR('K', 0x70, char[16]));
	ev->ret = -EINVAL;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x4b nr=0x70 size=16)");
	assert_false(d.known);
	assert_int_equal(d.err, EINVAL);
	assert_true(d.failed);
	assert_false(d.has_status);
	assert_string_equal(d.detail, "");

	/* A known nr under another type is not a KFD command. */
	ev = ev_new(state, GCTX_DEV_KFD, DRM_IOCTL_AMDGPU_CTX);
	ev->ret = -ENOTTY;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x64 nr=0x42 size=16)");
	assert_false(d.known);
	assert_string_equal(gctx_errno_name(d.err), "ENOTTY");
}

/* ---- short captures ---- */

static void test_truncated_kfd_create_queue(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_CREATE_QUEUE);
	struct gctx_ioctl_desc d;

	create_queue(ev);
	ev->len = 40; /* up to gpu_id, without queue_type or queue_id */
	decode(ev, &d);

	assert_string_equal(d.name, "KFD_CREATE_QUEUE");
	assert_string_equal(d.detail, "gpu_id=0xa1b2 ring=0x7f0000100000 ring_size=65536");
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.handle, 0);
}

/* The caller passed a shorter struct than the decoder knows: bytes past it are not its. */
static void test_kfd_short_user_struct(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_KFD, _IOWR('K', 0x16, char[16]));
	struct gctx_ioctl_desc d;

	memset(ev->in, 0xee, GCTX_IOCTL_BYTES);
	memset(ev->out, 0xee, GCTX_IOCTL_BYTES);
	put64(ev->in, 0x0, 0x7f5500000000ull);
	put64(ev->out, 0x0, 0x7f5500000000ull);
	put64(ev->in, 0x8, 4096);
	put64(ev->out, 0x8, 4096);
	ev->len = 48; /* the BPF side read more than the cmd's size */
	decode(ev, &d);

	assert_string_equal(d.detail, "size=4096 va=0x7f5500000000");
	assert_int_equal(d.op, GCTX_OP_NONE);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		T(test_kfd_cmd_values),
		T(test_kfd_get_version_ebadf),
		T(test_kfd_get_version),
		T(test_kfd_create_queue),
		T(test_kfd_create_queue_newer_struct),
		T(test_kfd_create_queue_failed),
		T(test_kfd_destroy_queue),
		T(test_kfd_alloc_memory),
		T(test_kfd_alloc_memory_userptr_flags),
		T(test_kfd_free_memory),
		T(test_kfd_acquire_vm),
		T(test_kfd_names),
		T(test_kfd_create_event),
		T(test_kfd_wait_events),
		T(test_kfd_set_xnack_mode),
		T(test_kfd_unknown),
		T(test_truncated_kfd_create_queue),
		T(test_kfd_short_user_struct),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
