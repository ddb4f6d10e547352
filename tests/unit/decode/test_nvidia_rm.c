// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the NVIDIA RM decoder (user/decode/nvidia_rm.c): escapes on nvidiactl and
 * nvidiaN, plain and unwrapped from IOCTL_XFER_CMD, NV_STATUS verdicts, classes and their names.
 */
#include "decode_test.h"

/* NVOS21/NVOS64: hRoot @0, hObjectParent @4, hObjectNew @8 (in/out), hClass @0xc */
static void rm_alloc(struct gctx_ev_ioctl *ev, __u32 parent, __u32 new_in, __u32 new_out, __u32 cls,
		     __u32 status)
{
	unsigned int status_off = ev->size == 0x20 ? 0x1c : 0x28;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, parent);
	put32(ev->in, 0x8, new_in);
	put32(ev->out, 0x8, new_out);
	arg32(ev, 0xc, cls);
	arg64(ev, 0x10, 0x7ffc12340000ull); /* pAllocParms */
	if (ev->size == 0x30) {
		arg32(ev, 0x20, 0x40); /* paramsSize */
		arg32(ev, 0x24, 0);    /* flags */
	} else {
		arg32(ev, 0x18, 0x40);
	}
	put32(ev->in, status_off, 0);
	put32(ev->out, status_off, status);
}

static void test_rm_alloc_channel_group(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, DEVICE, 0x5c000010, 0x5c000010, 0xa06c, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_true(d.known);
	assert_true(d.has_status);
	assert_int_equal(d.status, 0);
	assert_string_equal(d.status_name, "NV_OK");
	assert_int_equal(d.err, 0);
	assert_false(d.failed);
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_RM_CHANNEL_GROUP);
	assert_int_equal(d.obj_class, 0xa06c);
	assert_int_equal(d.handle, 0x5c000010);
	assert_int_equal(d.parent, DEVICE);
	assert_int_equal(d.client, CLIENT);
	assert_int_equal(d.size, 0);
	assert_string_equal(d.detail, "class=KEPLER_CHANNEL_GROUP_A(0xa06c) client=0xc1d00001 "
				      "parent=0x5c000002 new=0x5c000010");
}

static void test_rm_alloc_invalid_client(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, DEVICE, 0x5c000010, 0x5c000010, 0xa06c, 0x23);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_int_equal(d.err, 0); /* the syscall succeeded: only the status says no */
	assert_true(d.has_status);
	assert_int_equal(d.status, 0x23);
	assert_string_equal(d.status_name, "NV_ERR_INVALID_CLIENT");
	assert_true(d.failed);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_NONE);
	assert_int_equal(d.obj_class, 0xa06c); /* what was attempted is still told */
	assert_contains(d.detail, "class=KEPLER_CHANNEL_GROUP_A(0xa06c)");
}

/* NVOS21 (older drivers), hObjectNew = 0: RM picks the client handle and writes it back. */
static void test_rm_alloc_nvos21_client(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS21);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, 0, 0, CLIENT, 0x41, 0);
	put32(ev->in, 0x0, 0);
	put32(ev->out, 0x0, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_RM_CLIENT);
	assert_int_equal(d.handle, CLIENT);
	assert_int_equal(d.client, CLIENT);
	assert_string_equal(d.status_name, "NV_OK");
	assert_contains(d.detail, "class=NV01_ROOT_CLIENT(0x41)");
	assert_contains(d.detail, "new=0xc1d00001");
}

static void test_rm_alloc_class_kinds(void **state)
{
	/* clang-format off */
	static const struct {
		__u32 cls;
		enum gctx_obj_kind kind;
		const char *name;
	} cases[] = {
		{ 0x0000, GCTX_OBJ_RM_CLIENT, "NV01_ROOT" },
		{ 0x0001, GCTX_OBJ_RM_CLIENT, "NV01_ROOT_NON_PRIV" },
		{ 0x0080, GCTX_OBJ_RM_DEVICE, "NV01_DEVICE_0" },
		{ 0x2080, GCTX_OBJ_RM_SUBDEVICE, "NV20_SUBDEVICE_0" },
		{ 0x90f1, GCTX_OBJ_RM_VASPACE, "FERMI_VASPACE_A" },
		{ 0x9067, GCTX_OBJ_RM_CTXSHARE, "FERMI_CONTEXT_SHARE_A" },
		{ 0xc36f, GCTX_OBJ_RM_CHANNEL, "VOLTA_CHANNEL_GPFIFO_A" },
		{ 0xc46f, GCTX_OBJ_RM_CHANNEL, "TURING_CHANNEL_GPFIFO_A" },
		{ 0xc56f, GCTX_OBJ_RM_CHANNEL, "AMPERE_CHANNEL_GPFIFO_A" },
		{ 0xc86f, GCTX_OBJ_RM_CHANNEL, "HOPPER_CHANNEL_GPFIFO_A" },
		{ 0xc96f, GCTX_OBJ_RM_CHANNEL, "BLACKWELL_CHANNEL_GPFIFO_A" },
		{ 0xca6f, GCTX_OBJ_RM_CHANNEL, "BLACKWELL_CHANNEL_GPFIFO_B" },
		{ 0xc3c0, GCTX_OBJ_RM_COMPUTE, "VOLTA_COMPUTE_A" },
		{ 0xc5c0, GCTX_OBJ_RM_COMPUTE, "TURING_COMPUTE_A" },
		{ 0xc6c0, GCTX_OBJ_RM_COMPUTE, "AMPERE_COMPUTE_A" },
		{ 0xc7c0, GCTX_OBJ_RM_COMPUTE, "AMPERE_COMPUTE_B" },
		{ 0xc9c0, GCTX_OBJ_RM_COMPUTE, "ADA_COMPUTE_A" },
		{ 0xcbc0, GCTX_OBJ_RM_COMPUTE, "HOPPER_COMPUTE_A" },
		{ 0xcdc0, GCTX_OBJ_RM_COMPUTE, "BLACKWELL_COMPUTE_A" },
		{ 0xcec0, GCTX_OBJ_RM_COMPUTE, "BLACKWELL_COMPUTE_B" },
		{ 0x003e, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_SYSTEM" },
		{ 0x0040, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_LOCAL_USER" },
		{ 0x0070, GCTX_OBJ_RM_MEMORY, "NV01_MEMORY_VIRTUAL" },
		{ 0x50a0, GCTX_OBJ_RM_MEMORY, "NV50_MEMORY_VIRTUAL" },
		{ 0xc8b5, GCTX_OBJ_RM_OTHER, "HOPPER_DMA_COPY_A" },
		{ 0xc661, GCTX_OBJ_RM_OTHER, "HOPPER_USERMODE_A" },
		{ 0x900e, GCTX_OBJ_RM_OTHER, "MPS_COMPUTE" },
		{ 0x0079, GCTX_OBJ_RM_OTHER, "NV01_EVENT_OS_EVENT" },
		{ 0x83de, GCTX_OBJ_RM_OTHER, "GT200_DEBUGGER" },
	};
	/* clang-format on */
	struct gctx_ioctl_desc d;
	char want[80];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);

		rm_alloc(ev, DEVICE, 0x5c000100 + i, 0x5c000100 + i, cases[i].cls, 0);
		decode(ev, &d);
		assert_int_equal(d.op, GCTX_OP_CREATE);
		assert_int_equal(d.obj_kind, cases[i].kind);
		assert_int_equal(d.obj_class, cases[i].cls);
		assert_string_equal(gctx_nv_class_name(cases[i].cls), cases[i].name);
		snprintf(want, sizeof(want), "class=%s(0x%x) ", cases[i].name, cases[i].cls);
		assert_contains(d.detail, want);
	}
}

static void test_rm_alloc_unknown_class(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, DEVICE, 0x5c000020, 0x5c000020, 0x1234, 0);
	decode(ev, &d);

	assert_null(gctx_nv_class_name(0x1234));
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_RM_OTHER);
	assert_contains(d.detail, "class=0x1234 ");
}

/* A size the driver rejects: the layout is unknown, so no status and no object. */
static void test_rm_alloc_unexpected_size(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, _IOWR('F', 0x2b, char[40]));
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0xc, 0xa06c);
	ev->ret = -EINVAL;
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_int_equal(d.err, EINVAL);
	assert_true(d.failed);
	assert_false(d.has_status);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_contains(d.detail, "unexpected_size=40");
}

/* NVOS00: hRoot @0, hObjectParent @4, hObjectOld @8, status @0xc */
static void rm_free(struct gctx_ev_ioctl *ev, __u32 parent, __u32 old, __u32 status)
{
	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, parent);
	arg32(ev, 0x8, old);
	put32(ev->out, 0xc, status);
}

static void test_rm_free_object(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_FREE);
	struct gctx_ioctl_desc d;

	rm_free(ev, DEVICE, 0x5c000010, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_FREE");
	assert_int_equal(d.op, GCTX_OP_DESTROY);
	assert_int_equal(d.obj_kind, GCTX_OBJ_RM_OTHER);
	assert_int_equal(d.handle, 0x5c000010);
	assert_int_equal(d.client, CLIENT);
	assert_int_equal(d.parent, DEVICE);
	assert_string_equal(d.status_name, "NV_OK");
	assert_string_equal(d.detail, "client=0xc1d00001 parent=0x5c000002 object=0x5c000010");
}

static void test_rm_free_client(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_FREE);
	struct gctx_ioctl_desc d;

	rm_free(ev, 0, CLIENT, 0);
	decode(ev, &d);

	assert_int_equal(d.op, GCTX_OP_DESTROY);
	assert_int_equal(d.obj_kind, GCTX_OBJ_RM_CLIENT);
	assert_int_equal(d.handle, CLIENT);
	assert_int_equal(d.client, CLIENT);
}

static void test_rm_free_failed(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_FREE);
	struct gctx_ioctl_desc d;

	rm_free(ev, DEVICE, 0x5c000077, 0x33);
	decode(ev, &d);

	assert_true(d.failed);
	assert_string_equal(d.status_name, "NV_ERR_INVALID_OBJECT_HANDLE");
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_NONE);
}

/* NVOS54: hClient @0, hObject @4, cmd @8, flags @0xc, params @0x10, paramsSize @0x18, status */
static void test_rm_control(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_CONTROL);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, 0x5c000010);
	arg32(ev, 0x8, 0xa06c0101); /* NVA06C_CTRL_CMD_GPFIFO_SCHEDULE */
	arg64(ev, 0x10, 0x7ffc00001000ull);
	arg32(ev, 0x18, 8);
	put32(ev->out, 0x1c, 0x56);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_CONTROL");
	assert_string_equal(d.detail, "cmd=NVA06C_CTRL_CMD_GPFIFO_SCHEDULE(0xa06c0101) "
				      "client=0xc1d00001 object=0x5c000010 params_size=8");
	assert_true(d.has_status);
	assert_string_equal(d.status_name, "NV_ERR_NOT_SUPPORTED");
	assert_true(d.failed);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.client, CLIENT);
	assert_int_equal(d.handle, 0x5c000010);
}

/* NV_ESC_IOCTL_XFER_CMD unwrapped by the BPF side: bytes and size are the inner call's. */
static void test_rm_alloc_via_xfer(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_IOCTL_XFER_CMD);
	struct gctx_ioctl_desc d;

	ev->flags |= GCTX_IOCTL_XFER;
	ev->inner_cmd = 0x2b;
	ev->size = 0x30;
	ev->len = 0x30;
	rm_alloc(ev, 0x5c000010, 0x5c000020, 0x5c000020, 0xc86f, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_true(d.known);
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_RM_CHANNEL);
	assert_int_equal(d.handle, 0x5c000020);
	assert_int_equal(d.parent, 0x5c000010);
	assert_string_equal(d.detail, "class=HOPPER_CHANNEL_GPFIFO_A(0xc86f) client=0xc1d00001 "
				      "parent=0x5c000010 new=0x5c000020 via XFER");
}

static void test_rm_free_via_xfer_failed(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_IOCTL_XFER_CMD);
	struct gctx_ioctl_desc d;

	ev->flags |= GCTX_IOCTL_XFER;
	ev->inner_cmd = 0x29;
	ev->size = 0x10;
	ev->len = 0x10;
	rm_free(ev, DEVICE, 0x5c000010, 0x23);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_FREE");
	assert_string_equal(d.status_name, "NV_ERR_INVALID_CLIENT");
	assert_true(d.failed);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_contains(d.detail, "via XFER");
}

/* The XFER wrapper itself, when the BPF side could not read it: nv_ioctl_xfer_t */
static void test_xfer_not_unwrapped(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_IOCTL_XFER_CMD);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, 0x2b);
	arg32(ev, 0x4, 0x30);
	arg64(ev, 0x8, 0x7ffc00002000ull);
	decode(ev, &d);

	assert_string_equal(d.name, "IOCTL_XFER_CMD");
	assert_string_equal(d.detail, "inner=RM_ALLOC(0x2b) size=48 not unwrapped");
	assert_false(d.has_status);
	assert_plain(&d);
}

static void test_rm_xfer_unknown_inner(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_IOCTL_XFER_CMD);
	struct gctx_ioctl_desc d;

	ev->flags |= GCTX_IOCTL_XFER;
	ev->inner_cmd = 0x99;
	ev->size = 200;
	ev->len = GCTX_IOCTL_BYTES;
	decode(ev, &d);

	assert_string_equal(d.name, "ioctl(type=0x46 nr=0x99 size=200)");
	assert_false(d.known);
	assert_string_equal(d.detail, "via XFER");
}

/* -EINVAL from the kernel (size validation): the parameters were not copied back. */
static void test_rm_transport_error(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, DEVICE, 0x5c000010, 0x5c000010, 0xa06c, 0);
	ev->ret = -EFAULT;
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_int_equal(d.err, EFAULT);
	assert_string_equal(gctx_errno_name(d.err), "EFAULT");
	assert_false(d.has_status);
	assert_string_equal(d.status_name, "");
	assert_true(d.failed);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_NONE);
}

/* Exit bytes not captured: the verdict is unknown, so no object effect is claimed. */
static void test_rm_alloc_without_exit_capture(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, DEVICE, 0x5c000010, 0x5c000010, 0xa06c, 0);
	ev->flags = GCTX_IOCTL_IN_OK;
	decode(ev, &d);

	assert_false(d.has_status);
	assert_false(d.failed);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_NONE);
	assert_contains(d.detail, "class=KEPLER_CHANNEL_GROUP_A(0xa06c)");
	assert_contains(d.detail, "new=0x5c000010"); /* the handle asked for */
}

static void test_rm_unknown_status(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_FREE);
	struct gctx_ioctl_desc d;

	rm_free(ev, DEVICE, 0x5c000010, 0x12345);
	decode(ev, &d);

	assert_null(gctx_nv_status_name(0x12345));
	assert_string_equal(d.status_name, "0x12345");
	assert_true(d.failed);
}

/* NV_WARN_NOTHING_TO_DO is a success with a remark: the object is freed, nothing failed. */
static void test_rm_warning_status(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_FREE);
	struct gctx_ioctl_desc d;

	rm_free(ev, DEVICE, 0x5c000010, 0x10006);
	decode(ev, &d);

	assert_string_equal(d.status_name, "NV_WARN_NOTHING_TO_DO");
	assert_false(d.failed);
	assert_int_equal(d.op, GCTX_OP_DESTROY);
}

/* NVOS02 with fd: hRoot, hObjectParent, hObjectNew, hClass, flags @0x10, pMemory @0x18,
 * limit @0x20, status @0x28, fd @0x30; issued on an nvidiaN fd. */
static void test_rm_alloc_memory(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIA, NV_RM_ALLOC_MEMORY);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, DEVICE);
	arg32(ev, 0x8, 0x5c000030);
	arg32(ev, 0xc, 0x3e);
	arg32(ev, 0x10, 0x100);
	put64(ev->in, 0x18, 0);
	put64(ev->out, 0x18, 0x7f0000000000ull);
	arg64(ev, 0x20, 0x1fffff);
	put32(ev->out, 0x28, 0);
	arg32(ev, 0x30, 7);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC_MEMORY");
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_RM_MEMORY);
	assert_int_equal(d.handle, 0x5c000030);
	assert_int_equal(d.client, CLIENT);
	assert_int_equal(d.parent, DEVICE);
	assert_int_equal(d.size, 0x200000);
	assert_string_equal(d.status_name, "NV_OK");
	assert_contains(d.detail, "class=NV01_MEMORY_SYSTEM(0x3e)");
	assert_contains(d.detail, "size=2097152");
	assert_contains(d.detail, "fd=7");
}

/* NVOS33 with fd: hClient, hDevice, hMemory, offset @0x10, length @0x18, pLinearAddress @0x20,
 * status @0x28, flags @0x2c, fd @0x30 */
static void test_rm_map_memory(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_MAP_MEMORY);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, DEVICE);
	arg32(ev, 0x8, 0x5c000030);
	arg64(ev, 0x10, 0);
	arg64(ev, 0x18, 0x200000);
	put64(ev->out, 0x20, 0x7f1234000000ull);
	put32(ev->out, 0x28, 0);
	arg32(ev, 0x30, 9);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_MAP_MEMORY");
	assert_string_equal(d.detail, "client=0xc1d00001 device=0x5c000002 memory=0x5c000030 "
				      "offset=0x0 length=2097152 fd=9 addr=0x7f1234000000");
	assert_true(d.has_status);
	assert_plain(&d);
}

/* A struct shorter than the decoder's layout (NVOS33 without the fd wrapper): the bytes past
 * the size the driver sees are not parameters, even when the BPF side copied them. */
static void test_rm_map_memory_short_struct(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, _IOWR('F', 0x4e, char[0x30]));
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, DEVICE);
	arg32(ev, 0x8, 0x5c000030);
	put32(ev->out, 0x28, 0);
	arg32(ev, 0x30, 9); /* not part of this call */
	ev->len = 0x38;
	decode(ev, &d);

	assert_string_equal(d.name, "RM_MAP_MEMORY");
	assert_not_contains(d.detail, "fd=");
	assert_string_equal(d.status_name, "NV_OK");
}

/* nv_ioctl_register_fd_t {int ctl_fd}, on an nvidiaN fd */
static void test_nv_register_fd(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIA, NV_REGISTER_FD);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, 3);
	decode(ev, &d);

	assert_string_equal(d.name, "REGISTER_FD");
	assert_string_equal(d.detail, "ctl_fd=3");
	assert_false(d.has_status);
	assert_plain(&d);
}

/* nv_ioctl_card_info_t[]: valid @0, pci domain @4 bus @8 slot @9 function @0xa vendor @0xc
 * device @0xe, gpu_id @0x10, minor_number @0x38 */
static void test_nv_card_info(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_CARD_INFO);
	struct gctx_ioctl_desc d;

	ev->out[0] = 1;
	put32(ev->out, 0x4, 0);
	ev->out[0x8] = 0x41;
	ev->out[0x9] = 0;
	ev->out[0xa] = 0;
	put32(ev->out, 0xc, 0x2330u << 16 | 0x10de);
	put32(ev->out, 0x10, 0x4100);
	put32(ev->out, 0x38, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "CARD_INFO");
	assert_string_equal(d.detail,
			    "entries=1 pci=0000:41:00.0 id=10de:2330 gpu_id=0x4100 minor=0");
	assert_plain(&d);
}

/* nv_ioctl_rm_api_version_t {u32 cmd; u32 reply; char versionString[64]} */
static void version_str(struct gctx_ev_ioctl *ev, const char *mine, const char *driver, __u32 reply)
{
	put32(ev->in, 0x0, 0); /* NV_RM_API_VERSION_CMD_STRICT */
	put32(ev->out, 0x0, 0);
	put32(ev->in, 0x4, 0);
	put32(ev->out, 0x4, reply);
	strncpy((char *)ev->in + 8, mine, 64);
	strncpy((char *)ev->out + 8, driver, 64);
}

static void test_nv_check_version_match(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_CHECK_VERSION_STR);
	struct gctx_ioctl_desc d;

	version_str(ev, "595.45.04", "595.45.04", 1);
	decode(ev, &d);

	assert_string_equal(d.name, "CHECK_VERSION_STR");
	assert_string_equal(d.detail, "cmd=strict version=\"595.45.04\" reply=recognized");
	assert_plain(&d);
}

/* On a mismatch the driver answers -EINVAL and writes its own version into the struct. */
static void test_nv_check_version_mismatch(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_CHECK_VERSION_STR);
	struct gctx_ioctl_desc d;

	version_str(ev, "550.54.14", "595.45.04", 0);
	ev->ret = -EINVAL;
	decode(ev, &d);

	assert_int_equal(d.err, EINVAL);
	assert_true(d.failed);
	assert_string_equal(d.detail, "cmd=strict version=\"550.54.14\" reply=unrecognized "
				      "driver=\"595.45.04\"");
}

static void test_nv_escape_names(void **state)
{
	/* clang-format off */
	static const struct {
		__u32 cmd;
		const char *name;
	} cases[] = {
		{ 0xC0144628, "RM_ALLOC_OBJECT" },
		{ 0xC01C4634, "RM_DUP_OBJECT" },
		{ 0xC0184635, "RM_SHARE" },
		{ 0xC0B8464A, "RM_VID_HEAP_CONTROL" },
		{ 0xC020464F, "RM_UNMAP_MEMORY" },
		{ 0xC0404657, "RM_MAP_MEMORY_DMA" },
		{ 0xC0304658, "RM_UNMAP_MEMORY_DMA" },
		{ 0xC028465E, "RM_UPDATE_DEVICE_MAPPING_INFO" },
		{ 0xC01046CE, "ALLOC_OS_EVENT" },
		{ 0xC01046CF, "FREE_OS_EVENT" },
		{ 0xC00C46D1, "STATUS_CODE" },
		{ 0xC00446D4, "ATTACH_GPUS_TO_FD" },
		{ 0xC00846D6, "SYS_PARAMS" },
		{ _IOWR('F', 0xd7, char[16]), "NUMA_INFO" },
		{ 0xCA3046D9, "EXPORT_TO_DMABUF_FD" },
		{ 0xC00846DA, "WAIT_OPEN_COMPLETE" },
	};
	/* clang-format on */
	struct gctx_ioctl_desc d;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		decode(ev_new(state, GCTX_DEV_NVIDIACTL, cases[i].cmd), &d);
		assert_string_equal(d.name, cases[i].name);
		assert_true(d.known);
		assert_false(d.failed);
	}
}

/* NVOS32: ..., status @0x14; nv_ioctl_alloc_os_event_t: ..., Status @0xc */
static void test_nv_other_statuses(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, 0xC0B8464A);
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, DEVICE);
	arg32(ev, 0x8, 1);
	put32(ev->out, 0x14, 0x51);
	decode(ev, &d);
	assert_string_equal(d.status_name, "NV_ERR_NO_MEMORY");
	assert_true(d.failed);
	assert_string_equal(d.detail, "client=0xc1d00001 parent=0x5c000002 function=1");

	ev = ev_new(state, GCTX_DEV_NVIDIACTL, 0xC01046CE);
	arg32(ev, 0x0, CLIENT);
	arg32(ev, 0x4, DEVICE);
	arg32(ev, 0x8, 11);
	put32(ev->out, 0xc, 0);
	decode(ev, &d);
	assert_string_equal(d.name, "ALLOC_OS_EVENT");
	assert_string_equal(d.status_name, "NV_OK");
	assert_string_equal(d.detail, "client=0xc1d00001 device=0x5c000002 fd=11");
	assert_plain(&d);
}

/* ---- unknown escapes ---- */

static void test_nv_unknown(void **state)
{
	struct gctx_ev_ioctl *ev;
	struct gctx_ioctl_desc d;

	ev = ev_new(state, GCTX_DEV_NVIDIACTL, _IOWR('F', 0x99, char[16]));
	ev->ret = -EINVAL;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x46 nr=0x99 size=16)");
	assert_false(d.known);
	assert_int_equal(d.err, EINVAL);
	assert_true(d.failed);
	assert_false(d.has_status);

	/* FIONREAD on a GPU file is kept, with the kernel's answer. */
	ev = ev_new(state, GCTX_DEV_NVIDIA, FIONREAD_CMD);
	ev->ret = -ENOTTY;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x54 nr=0x1b size=0)");
	assert_false(d.known);
	assert_int_equal(d.err, ENOTTY);
	assert_string_equal(d.detail, "");
}

/* ---- short captures ---- */

/* Only hRoot, hObjectParent and hObjectNew of NVOS64: no class, no status, no object. */
static void test_truncated_rm_alloc(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, DEVICE, 0x5c000010, 0x5c000010, 0xa06c, 0);
	ev->len = 12;
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_string_equal(d.detail, "client=0xc1d00001 parent=0x5c000002 new=0x5c000010");
	assert_false(d.has_status);
	assert_int_equal(d.obj_class, 0);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_false(d.failed);
}

/* Status at 0x28 is the last field: one byte short of it. */
static void test_truncated_rm_alloc_status(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	rm_alloc(ev, DEVICE, 0x5c000010, 0x5c000010, 0xa06c, 0);
	ev->len = 0x2b;
	decode(ev, &d);

	assert_contains(d.detail, "class=KEPLER_CHANNEL_GROUP_A(0xa06c)");
	assert_false(d.has_status);
	assert_int_equal(d.op, GCTX_OP_NONE);
}

/* ---- name helpers ---- */

static void test_nv_status_names(void **state)
{
	(void)state;
	assert_string_equal(gctx_nv_status_name(0x0), "NV_OK");
	assert_string_equal(gctx_nv_status_name(0x3), "NV_ERR_BUSY_RETRY");
	assert_string_equal(gctx_nv_status_name(0x16), "NV_ERR_ILLEGAL_ACTION");
	assert_string_equal(gctx_nv_status_name(0x17), "NV_ERR_IN_USE");
	assert_string_equal(gctx_nv_status_name(0x19), "NV_ERR_INSERT_DUPLICATE_NAME");
	assert_string_equal(gctx_nv_status_name(0x1f), "NV_ERR_INVALID_ARGUMENT");
	assert_string_equal(gctx_nv_status_name(0x22), "NV_ERR_INVALID_CLASS");
	assert_string_equal(gctx_nv_status_name(0x23), "NV_ERR_INVALID_CLIENT");
	assert_string_equal(gctx_nv_status_name(0x33), "NV_ERR_INVALID_OBJECT_HANDLE");
	assert_string_equal(gctx_nv_status_name(0x36), "NV_ERR_INVALID_OBJECT_PARENT");
	assert_string_equal(gctx_nv_status_name(0x40), "NV_ERR_INVALID_STATE");
	assert_string_equal(gctx_nv_status_name(0x56), "NV_ERR_NOT_SUPPORTED");
	assert_string_equal(gctx_nv_status_name(0x5d), "NV_ERR_PAGE_TABLE_NOT_AVAIL");
	assert_string_equal(gctx_nv_status_name(0xffff), "NV_ERR_GENERIC");
	assert_string_equal(gctx_nv_status_name(0x10006), "NV_WARN_NOTHING_TO_DO");
	assert_null(gctx_nv_status_name(0x10000));
	assert_null(gctx_nv_status_name(0x10009));
	assert_null(gctx_nv_status_name(0x81));
	assert_null(gctx_nv_status_name(0xffffffff));
}

static void test_nv_class_names(void **state)
{
	(void)state;
	assert_string_equal(gctx_nv_class_name(0x41), "NV01_ROOT_CLIENT");
	assert_string_equal(gctx_nv_class_name(0xa06c), "KEPLER_CHANNEL_GROUP_A");
	assert_string_equal(gctx_nv_class_name(0xcbc0), "HOPPER_COMPUTE_A");
	assert_null(gctx_nv_class_name(0xffff));
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		T(test_rm_alloc_channel_group),
		T(test_rm_alloc_invalid_client),
		T(test_rm_alloc_nvos21_client),
		T(test_rm_alloc_class_kinds),
		T(test_rm_alloc_unknown_class),
		T(test_rm_alloc_unexpected_size),
		T(test_rm_free_object),
		T(test_rm_free_client),
		T(test_rm_free_failed),
		T(test_rm_control),
		T(test_rm_alloc_via_xfer),
		T(test_rm_free_via_xfer_failed),
		T(test_xfer_not_unwrapped),
		T(test_rm_xfer_unknown_inner),
		T(test_rm_transport_error),
		T(test_rm_alloc_without_exit_capture),
		T(test_rm_unknown_status),
		T(test_rm_warning_status),
		T(test_rm_alloc_memory),
		T(test_rm_map_memory),
		T(test_rm_map_memory_short_struct),
		T(test_nv_register_fd),
		T(test_nv_card_info),
		T(test_nv_check_version_match),
		T(test_nv_check_version_mismatch),
		T(test_nv_escape_names),
		T(test_nv_other_statuses),
		T(test_nv_unknown),
		T(test_truncated_rm_alloc),
		T(test_truncated_rm_alloc_status),
		T(test_nv_status_names),
		T(test_nv_class_names),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
