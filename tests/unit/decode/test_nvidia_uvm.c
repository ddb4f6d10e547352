// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the NVIDIA UVM decoder (user/decode/nvidia_uvm.c): VA space, GPU and channel
 * registration, range groups, and commands named without a known layout.
 */
#include "decode_test.h"

/* UVM cmds encode no size: the BPF side captures the parameter struct it knows. */
static struct gctx_ev_ioctl *ev_uvm(void **state, __u32 cmd, __u32 size)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIA_UVM, cmd);

	ev->size = size;
	ev->len = size;
	return ev;
}

/* UVM_INITIALIZE_PARAMS: flags u64 @0, rmStatus @8 */
static void test_uvm_initialize(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_INITIALIZE, 16);
	struct gctx_ioctl_desc d;

	arg64(ev, 0x0, 0x2);
	put32(ev->out, 0x8, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "UVM_INITIALIZE");
	assert_true(d.known);
	assert_true(d.has_status);
	assert_string_equal(d.status_name, "NV_OK");
	assert_false(d.failed);
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_UVM_SPACE);
	assert_string_equal(d.detail, "flags=0x2(MULTI_PROCESS_SHARING_MODE)");
}

static void test_uvm_initialize_failed(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_INITIALIZE, 16);
	struct gctx_ioctl_desc d;

	arg64(ev, 0x0, 0x0);
	put32(ev->out, 0x8, 0x40);
	decode(ev, &d);

	assert_string_equal(d.status_name, "NV_ERR_INVALID_STATE");
	assert_true(d.failed);
	assert_int_equal(d.err, 0);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_string_equal(d.detail, "flags=0x0");
}

static void test_uvm_deinitialize(void **state)
{
	struct gctx_ioctl_desc d;

	decode(ev_uvm(state, UVM_DEINITIALIZE, 0), &d);

	assert_string_equal(d.name, "UVM_DEINITIALIZE");
	assert_false(d.has_status);
	assert_int_equal(d.op, GCTX_OP_DESTROY);
	assert_int_equal(d.obj_kind, GCTX_OBJ_UVM_SPACE);
}

static void put_uuid(struct gctx_ev_ioctl *ev)
{
	int i;

	for (i = 0; i < 16; i++)
		ev->in[i] = ev->out[i] = (__u8)(0xa0 + i);
}

#define UUID_TEXT "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf"

/* UVM_REGISTER_GPU_VASPACE: gpuUuid @0, rmCtrlFd @0x10, hClient @0x14, hVaSpace @0x18,
 * rmStatus @0x1c */
static void test_uvm_register_gpu_vaspace(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_REGISTER_GPU_VASPACE, 32);
	struct gctx_ioctl_desc d;

	put_uuid(ev);
	arg32(ev, 0x10, 4);
	arg32(ev, 0x14, CLIENT);
	arg32(ev, 0x18, 0x5c000005);
	put32(ev->out, 0x1c, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "UVM_REGISTER_GPU_VASPACE");
	assert_string_equal(d.detail,
			    "uuid=" UUID_TEXT " rmCtrlFd=4 hClient=0xc1d00001 hVaSpace=0x5c000005");
	assert_true(d.has_status);
	assert_string_equal(d.status_name, "NV_OK");
	assert_int_equal(d.client, CLIENT);
	assert_int_equal(d.handle, 0x5c000005);
	assert_plain(&d);
}

/* UVM_REGISTER_CHANNEL: gpuUuid, rmCtrlFd @0x10, hClient @0x14, hChannel @0x18, base @0x20,
 * length @0x28, rmStatus @0x30 */
static void test_uvm_register_channel(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_REGISTER_CHANNEL, 56);
	struct gctx_ioctl_desc d;

	put_uuid(ev);
	arg32(ev, 0x10, 4);
	arg32(ev, 0x14, CLIENT);
	arg32(ev, 0x18, 0x5c000020);
	arg64(ev, 0x20, 0x200000000ull);
	arg64(ev, 0x28, 0x10000);
	put32(ev->out, 0x30, 0x23);
	decode(ev, &d);

	assert_string_equal(d.name, "UVM_REGISTER_CHANNEL");
	assert_string_equal(d.detail, "uuid=" UUID_TEXT " rmCtrlFd=4 hClient=0xc1d00001 "
				      "hChannel=0x5c000020 base=0x200000000 length=65536");
	assert_string_equal(d.status_name, "NV_ERR_INVALID_CLIENT");
	assert_true(d.failed);
}

/* UVM_REGISTER_GPU: gpu_uuid, numaEnabled @0x10, numaNodeId @0x14, rmCtrlFd @0x18,
 * hClient @0x1c, hSmcPartRef @0x20, rmStatus @0x24 */
static void test_uvm_register_gpu(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_REGISTER_GPU, 40);
	struct gctx_ioctl_desc d;

	put_uuid(ev);
	arg32(ev, 0x14, (__u32)-1);
	arg32(ev, 0x18, 4);
	arg32(ev, 0x1c, CLIENT);
	put32(ev->out, 0x24, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "UVM_REGISTER_GPU");
	assert_string_equal(d.detail, "uuid=" UUID_TEXT " rmCtrlFd=4 hClient=0xc1d00001");
	assert_string_equal(d.status_name, "NV_OK");
	assert_plain(&d);
}

/* UVM_MM_INITIALIZE: uvmFd @0, rmStatus @4 */
static void test_uvm_mm_initialize(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_MM_INITIALIZE, 8);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, 6);
	put32(ev->out, 0x4, 0x5d);
	decode(ev, &d);

	assert_string_equal(d.name, "UVM_MM_INITIALIZE");
	assert_string_equal(d.detail, "uvm_fd=6");
	assert_string_equal(d.status_name, "NV_ERR_PAGE_TABLE_NOT_AVAIL");
	assert_true(d.failed);
}

/* UVM_CREATE_RANGE_GROUP: rangeGroupId u64 @0 (out), rmStatus @8 */
static void test_uvm_create_range_group(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_CREATE_RANGE_GROUP, 16);
	struct gctx_ioctl_desc d;

	put64(ev->out, 0x0, 0x3);
	put32(ev->out, 0x8, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "UVM_CREATE_RANGE_GROUP");
	assert_string_equal(d.detail, "range_group=0x3");
	assert_true(d.has_status);
	assert_plain(&d);
}

/* UVM_UNREGISTER_GPU {gpu_uuid[16]; rmStatus @0x10} (20 bytes);
 * UVM_DESTROY_RANGE_GROUP {rangeGroupId u64; rmStatus @8} (16 bytes) */
static void test_uvm_unregister_gpu_and_destroy_range_group(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, 0x26, 20);
	struct gctx_ioctl_desc d;

	put_uuid(ev);
	put32(ev->out, 0x10, 0x12);
	decode(ev, &d);
	assert_string_equal(d.name, "UVM_UNREGISTER_GPU");
	assert_string_equal(d.detail, "uuid=" UUID_TEXT);
	assert_string_equal(d.status_name, "NV_ERR_GPU_UUID_NOT_FOUND");
	assert_true(d.failed);

	ev = ev_uvm(state, 0x18, 16);
	arg64(ev, 0x0, 0x3);
	put32(ev->out, 0x8, 0);
	decode(ev, &d);
	assert_string_equal(d.name, "UVM_DESTROY_RANGE_GROUP");
	assert_string_equal(d.detail, "range_group=0x3");
	assert_string_equal(d.status_name, "NV_OK");
	assert_plain(&d);
}

/* Named, but with a layout not known here: no status is read from them. */
static void test_uvm_names_without_layout(void **state)
{
	/* clang-format off */
	static const struct {
		__u32 cmd;
		const char *name;
	} cases[] = {
		{ 0x1a, "UVM_UNREGISTER_GPU_VASPACE" },
		{ 0x1c, "UVM_UNREGISTER_CHANNEL" },
		{ 0x1d, "UVM_ENABLE_PEER_ACCESS" },
		{ 0x21, "UVM_MAP_EXTERNAL_ALLOCATION" },
		{ 0x22, "UVM_FREE" },
		{ 0x27, "UVM_PAGEABLE_MEM_ACCESS" },
		{ 0x33, "UVM_MIGRATE" },
		{ 0x38, "UVM_TOOLS_INIT_EVENT_TRACKER" },
		{ 0x44, "UVM_ALLOC_SEMAPHORE_POOL" },
		{ 0x48, "UVM_VALIDATE_VA_RANGE" },
		{ 0x49, "UVM_CREATE_EXTERNAL_RANGE" },
		{ 0x4e, "UVM_ALLOC_DEVICE_P2P" },
		{ 0x50, "UVM_DISCARD" },
	};
	/* clang-format on */
	struct gctx_ioctl_desc d;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gctx_ev_ioctl *ev = ev_uvm(state, cases[i].cmd, 64);

		memset(ev->out, 0xff, 64); /* whatever is there is not a status */
		decode(ev, &d);
		assert_string_equal(d.name, cases[i].name);
		assert_true(d.known);
		assert_false(d.has_status);
		assert_plain(&d);
	}
}

static void test_uvm_unknown(void **state)
{
	struct gctx_ev_ioctl *ev;
	struct gctx_ioctl_desc d;

	ev = ev_uvm(state, 0x99, 0);
	ev->ret = -EINVAL;
	decode(ev, &d);
	assert_string_equal(d.name, "uvm(0x99)");
	assert_false(d.known);
	assert_int_equal(d.err, EINVAL);
	assert_true(d.failed);

	ev = ev_uvm(state, 0x30000003, 0);
	ev->kind = GCTX_DEV_NVIDIA_UVM_TOOLS;
	decode(ev, &d);
	assert_string_equal(d.name, "uvm(0x30000003)");

	/* An _IOC-encoded cmd on a UVM file is not a UVM command. */
	ev = ev_uvm(state, FIONREAD_CMD, 0);
	ev->ret = -ENOTTY;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x54 nr=0x1b size=0)");
	assert_false(d.known);
	assert_int_equal(d.err, ENOTTY);
}

/* ---- short captures ---- */

static void test_truncated_uvm_register_channel(void **state)
{
	struct gctx_ev_ioctl *ev = ev_uvm(state, UVM_REGISTER_CHANNEL, 56);
	struct gctx_ioctl_desc d;

	put_uuid(ev);
	arg32(ev, 0x10, 4);
	ev->len = 0x14;
	decode(ev, &d);

	assert_string_equal(d.detail, "uuid=" UUID_TEXT " rmCtrlFd=4");
	assert_false(d.has_status);
	assert_false(d.failed);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		T(test_uvm_initialize),
		T(test_uvm_initialize_failed),
		T(test_uvm_deinitialize),
		T(test_uvm_register_gpu_vaspace),
		T(test_uvm_register_channel),
		T(test_uvm_register_gpu),
		T(test_uvm_mm_initialize),
		T(test_uvm_create_range_group),
		T(test_uvm_unregister_gpu_and_destroy_range_group),
		T(test_uvm_names_without_layout),
		T(test_uvm_unknown),
		T(test_truncated_uvm_register_channel),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
