// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the ioctl decoder (user/decode.c). Every event is built as the BPF side would
 * capture it: the parameter bytes at their ABI offsets (NVIDIA: gpu-facts.md §1.3 and §1.5;
 * KFD: the structs of <linux/kfd_ioctl.h>; amdgpu: amdgpu_drm.h) and the cmd as issued.
 *
 * decode() poisons every byte the decoder must not look at (past ev->len, or a whole array
 * whose capture flag is clear) and, under valgrind, marks it undefined: any use of it fails
 * the run with --error-exitcode=1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#include "decode/decode.h"

#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_UNDEFINED(p, n) ((void)(p), (void)(n))
#endif

#include "decode/kfd_compat.h"

/* NVIDIA RM cmds as issued: _IOWR('F', nr, size), gpu-facts.md §1.2 */
#define NV_RM_ALLOC_NVOS64   0xC030462Bu
#define NV_RM_ALLOC_NVOS21   0xC020462Bu
#define NV_RM_FREE	     0xC0104629u
#define NV_RM_CONTROL	     0xC020462Au
#define NV_RM_ALLOC_MEMORY   0xC0384627u
#define NV_RM_MAP_MEMORY     0xC038464Eu
#define NV_CARD_INFO	     0xC04846C8u
#define NV_REGISTER_FD	     0xC00446C9u
#define NV_CHECK_VERSION_STR 0xC04846D2u
#define NV_IOCTL_XFER_CMD    0xC01046D3u

/* UVM cmds are plain numbers, gpu-facts.md §1.5 */
#define UVM_INITIALIZE		 0x30000001u
#define UVM_DEINITIALIZE	 0x30000002u
#define UVM_CREATE_RANGE_GROUP	 0x17u
#define UVM_REGISTER_GPU_VASPACE 0x19u
#define UVM_REGISTER_CHANNEL	 0x1Bu
#define UVM_REGISTER_GPU	 0x25u
#define UVM_MM_INITIALIZE	 0x4Bu

/* amdgpu render-node cmds, gpu-facts.md §2.4 */
#define DRM_IOCTL_AMDGPU_GEM_CREATE 0xC0206440u
#define DRM_IOCTL_AMDGPU_CTX	    0xC0106442u

#define FIONREAD_CMD 0x541Bu /* _IO('T', 0x1b): not a GPU ioctl */

#define CLIENT 0xc1d00001u
#define DEVICE 0x5c000002u

#define assert_contains(hay, needle)                                                               \
	do {                                                                                       \
		if (!strstr((hay), (needle)))                                                      \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));               \
	} while (0)

#define assert_not_contains(hay, needle)                                                           \
	do {                                                                                       \
		if (strstr((hay), (needle)))                                                       \
			fail_msg("\"%s\" contains \"%s\"", (hay), (needle));                       \
	} while (0)

static void put32(__u8 *buf, unsigned int off, __u32 v)
{
	__u8 b[4] = {v, v >> 8, v >> 16, v >> 24};

	memcpy(buf + off, b, sizeof(b));
}

static void put64(__u8 *buf, unsigned int off, __u64 v)
{
	put32(buf, off, (__u32)v);
	put32(buf, off + 4, (__u32)(v >> 32));
}

/* An input the driver leaves unchanged: the same bytes at entry and at exit. */
static void arg32(struct gctx_ev_ioctl *ev, unsigned int off, __u32 v)
{
	put32(ev->in, off, v);
	put32(ev->out, off, v);
}

static void arg64(struct gctx_ev_ioctl *ev, unsigned int off, __u64 v)
{
	put64(ev->in, off, v);
	put64(ev->out, off, v);
}

/* A whole argument struct: entry bytes, then what the driver wrote back. */
static void args(struct gctx_ev_ioctl *ev, const void *in, const void *out, size_t n)
{
	memcpy(ev->in, in, n);
	memcpy(ev->out, out, n);
}

static int setup(void **state)
{
	*state = malloc(sizeof(struct gctx_ev_ioctl)); /* exact size: overruns hit valgrind */
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* A successful ioctl with both captures, len = the parameter size the cmd encodes. */
static struct gctx_ev_ioctl *ev_new(void **state, __u32 kind, __u32 cmd)
{
	struct gctx_ev_ioctl *ev = *state;

	memset(ev, 0, sizeof(*ev));
	ev->hdr.type = GCTX_EV_IOCTL;
	ev->hdr.tgid = ev->hdr.tid = 4242;
	ev->fd = 5;
	ev->kind = kind;
	ev->cmd = cmd;
	ev->flags = GCTX_IOCTL_IN_OK | GCTX_IOCTL_OUT_OK;
	ev->size = _IOC_SIZE(cmd);
	ev->len = ev->size < GCTX_IOCTL_BYTES ? ev->size : GCTX_IOCTL_BYTES;
	return ev;
}

/* UVM cmds encode no size: the BPF side captures the parameter struct it knows. */
static struct gctx_ev_ioctl *ev_uvm(void **state, __u32 cmd, __u32 size)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIA_UVM, cmd);

	ev->size = size;
	ev->len = size;
	return ev;
}

static void poison(__u8 *p, size_t n)
{
	memset(p, 0xa5, n);
	VALGRIND_MAKE_MEM_UNDEFINED(p, n);
}

static void decode(struct gctx_ev_ioctl *ev, struct gctx_ioctl_desc *d)
{
	size_t len = ev->len < GCTX_IOCTL_BYTES ? ev->len : GCTX_IOCTL_BYTES;

	if (!(ev->flags & GCTX_IOCTL_IN_OK))
		poison(ev->in, GCTX_IOCTL_BYTES);
	else
		poison(ev->in + len, GCTX_IOCTL_BYTES - len);
	if (!(ev->flags & GCTX_IOCTL_OUT_OK))
		poison(ev->out, GCTX_IOCTL_BYTES);
	else
		poison(ev->out + len, GCTX_IOCTL_BYTES - len);
	memset(d, 0x5a, sizeof(*d)); /* the decoder must set every field */
	gctx_decode_ioctl(ev, d);
}

/* What every call that did not fail at the syscall and had no object effect looks like. */
static void assert_plain(const struct gctx_ioctl_desc *d)
{
	assert_int_equal(d->err, 0);
	assert_false(d->failed);
	assert_int_equal(d->op, GCTX_OP_NONE);
	assert_int_equal(d->obj_kind, GCTX_OBJ_NONE);
}

/* ---- NVIDIA RM ---- */

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
	assert_string_equal(d.detail,
			    "cmd=0xa06c0101 client=0xc1d00001 object=0x5c000010 params_size=8");
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

/* ---- NVIDIA UVM ---- */

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

/* ---- AMD KFD ---- */

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

/* ---- DRM render node / amdgpu ---- */

/* union drm_amdgpu_ctx: in {op @0, flags @4, ctx_id @8, priority @12}; out.alloc.ctx_id @0 */
static void amdgpu_ctx(struct gctx_ev_ioctl *ev, __u32 op, __u32 ctx_in, __u32 ctx_out)
{
	put32(ev->in, 0x0, op);
	put32(ev->in, 0x4, 0);
	put32(ev->in, 0x8, ctx_in);
	put32(ev->in, 0xc, 0);
	memset(ev->out, 0, 16);
	put32(ev->out, 0x0, ctx_out);
}

static void test_amdgpu_ctx_alloc(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, DRM_IOCTL_AMDGPU_CTX);
	struct gctx_ioctl_desc d;

	amdgpu_ctx(ev, 1, 0, 2);
	decode(ev, &d);

	assert_string_equal(d.name, "AMDGPU_CTX");
	assert_true(d.known);
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_DRM_CTX);
	assert_int_equal(d.handle, 2);
	assert_false(d.has_status);
	assert_string_equal(d.detail, "op=ALLOC_CTX priority=0 ctx_id=2");
}

static void test_amdgpu_ctx_free(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, DRM_IOCTL_AMDGPU_CTX);
	struct gctx_ioctl_desc d;

	amdgpu_ctx(ev, 2, 2, 0);
	decode(ev, &d);

	assert_int_equal(d.op, GCTX_OP_DESTROY);
	assert_int_equal(d.obj_kind, GCTX_OBJ_DRM_CTX);
	assert_int_equal(d.handle, 2);
	assert_string_equal(d.detail, "op=FREE_CTX ctx_id=2");
}

static void test_amdgpu_ctx_query(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, DRM_IOCTL_AMDGPU_CTX);
	struct gctx_ioctl_desc d;

	amdgpu_ctx(ev, 4, 2, 0);
	decode(ev, &d);

	assert_string_equal(d.detail, "op=QUERY_STATE2 ctx_id=2");
	assert_plain(&d);
}

/* A child using its parent's render fd is not refused by DRM; a free of a bad id is. */
static void test_amdgpu_ctx_free_failed(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, DRM_IOCTL_AMDGPU_CTX);
	struct gctx_ioctl_desc d;

	amdgpu_ctx(ev, 2, 9, 0);
	ev->ret = -EINVAL;
	decode(ev, &d);

	assert_true(d.failed);
	assert_int_equal(d.err, EINVAL);
	assert_int_equal(d.op, GCTX_OP_NONE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_NONE);
}

/* drm_amdgpu_gem_create: in {bo_size, alignment, domains, domain_flags}; out {handle} */
static void test_amdgpu_gem_create(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, DRM_IOCTL_AMDGPU_GEM_CREATE);
	struct gctx_ioctl_desc d;

	put64(ev->in, 0x0, 0x100000);
	put64(ev->in, 0x8, 0x1000);
	put64(ev->in, 0x10, 0x4);
	put64(ev->in, 0x18, 0);
	memset(ev->out, 0, 32);
	put32(ev->out, 0x0, 5);
	decode(ev, &d);

	assert_string_equal(d.name, "AMDGPU_GEM_CREATE");
	assert_int_equal(d.op, GCTX_OP_CREATE);
	assert_int_equal(d.obj_kind, GCTX_OBJ_DRM_GEM);
	assert_int_equal(d.handle, 5);
	assert_int_equal(d.size, 0x100000);
	assert_string_equal(d.detail, "domains=0x4(VRAM) domain_flags=0x0 size=1048576 handle=5");
}

static void test_drm_names(void **state)
{
	/* clang-format off */
	static const struct {
		__u32 cmd;
		const char *name;
	} cases[] = {
		{ 0xC0086441, "AMDGPU_GEM_MMAP" },
		{ 0xC0186443, "AMDGPU_BO_LIST" },
		{ 0xC0186444, "AMDGPU_CS" },
		{ 0x40206445, "AMDGPU_INFO" },
		{ _IOWR('d', 0x46, char[0x120]), "AMDGPU_GEM_METADATA" },
		{ _IOWR('d', 0x47, char[0x10]), "AMDGPU_GEM_WAIT_IDLE" },
		{ 0x40286448, "AMDGPU_GEM_VA" },
		{ 0xC0206449, "AMDGPU_WAIT_CS" },
		{ _IOWR('d', 0x50, char[0x10]), "AMDGPU_GEM_OP" },
		{ _IOWR('d', 0x51, char[0x18]), "AMDGPU_GEM_USERPTR" },
		{ _IOWR('d', 0x52, char[0x18]), "AMDGPU_WAIT_FENCES" },
		{ 0xC0086453, "AMDGPU_VM" },
		{ _IOWR('d', 0x54, char[0x18]), "AMDGPU_FENCE_TO_HANDLE" },
		{ 0x40106455, "AMDGPU_SCHED" },
		{ _IOWR('d', 0x00, char[0x40]), "DRM_VERSION" },
		{ _IOWR('d', 0x01, char[0x10]), "DRM_GET_UNIQUE" },
		{ _IOWR('d', 0x0c, char[0x10]), "DRM_GET_CAP" },
		{ _IOWR('d', 0x2d, char[0xc]), "DRM_PRIME_HANDLE_TO_FD" },
		{ _IOWR('d', 0x2e, char[0xc]), "DRM_PRIME_FD_TO_HANDLE" },
		{ _IOWR('d', 0xbf, char[0x8]), "DRM_SYNCOBJ_CREATE" },
		{ _IOWR('d', 0xc0, char[0x8]), "DRM_SYNCOBJ_DESTROY" },
		{ _IOWR('d', 0xc3, char[0x20]), "DRM_SYNCOBJ_WAIT" },
		{ _IOWR('d', 0xcd, char[0x18]), "DRM_SYNCOBJ_TIMELINE_SIGNAL" },
	};
	/* clang-format on */
	struct gctx_ioctl_desc d;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		decode(ev_new(state, GCTX_DEV_DRM_RENDER, cases[i].cmd), &d);
		assert_string_equal(d.name, cases[i].name);
		assert_true(d.known);
		assert_false(d.has_status);
	}
}

/* DRM_IOCTL_GEM_CLOSE {handle, pad}: the GEM object's handle goes away. */
static void test_drm_gem_close(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, _IOW('d', 0x09, char[8]));
	struct gctx_ioctl_desc d;

	arg32(ev, 0x0, 5);
	arg32(ev, 0x4, 0);
	decode(ev, &d);

	assert_string_equal(d.name, "DRM_GEM_CLOSE");
	assert_int_equal(d.op, GCTX_OP_DESTROY);
	assert_int_equal(d.obj_kind, GCTX_OBJ_DRM_GEM);
	assert_int_equal(d.handle, 5);
}

static void test_drm_version(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, _IOWR('d', 0x00, char[0x40]));
	struct gctx_ioctl_desc d;

	memset(ev->in, 0, 0x40);
	memset(ev->out, 0, 0x40);
	put32(ev->out, 0x0, 3);
	put32(ev->out, 0x4, 57);
	put32(ev->out, 0x8, 0);
	decode(ev, &d);

	assert_string_equal(d.detail, "version=3.57.0");
}

static void test_drm_unknown(void **state)
{
	struct gctx_ev_ioctl *ev;
	struct gctx_ioctl_desc d;

	ev = ev_new(state, GCTX_DEV_DRM_RENDER, _IOWR('d', 0x9f, char[8]));
	ev->ret = -EINVAL;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x64 nr=0x9f size=8)");
	assert_false(d.known);
	assert_int_equal(d.err, EINVAL);

	ev = ev_new(state, GCTX_DEV_DRM_RENDER, NV_RM_ALLOC_NVOS64);
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x46 nr=0x2b size=48)");
	assert_false(d.known);
	assert_string_equal(d.detail, "");
	assert_plain(&d);
}

/* ---- anything else ---- */

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

static void test_unknown_kind(void **state)
{
	struct gctx_ev_ioctl *ev;
	struct gctx_ioctl_desc d;

	ev = ev_new(state, GCTX_DEV_NONE, NV_RM_ALLOC_NVOS64);
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x46 nr=0x2b size=48)");
	assert_false(d.known);
	assert_plain(&d);

	ev = ev_new(state, 99, AMDKFD_IOC_GET_VERSION);
	ev->ret = -EBADF;
	decode(ev, &d);
	assert_string_equal(d.name, "ioctl(type=0x4b nr=0x01 size=8)");
	assert_int_equal(d.err, EBADF);
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

static void test_nothing_captured(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_RM_ALLOC_NVOS64);
	struct gctx_ioctl_desc d;

	ev->flags = 0;
	decode(ev, &d);
	assert_string_equal(d.name, "RM_ALLOC");
	assert_string_equal(d.detail, "");
	assert_false(d.has_status);
	assert_plain(&d);

	ev = ev_new(state, GCTX_DEV_KFD, AMDKFD_IOC_CREATE_QUEUE);
	ev->len = 0;
	decode(ev, &d);
	assert_string_equal(d.name, "KFD_CREATE_QUEUE");
	assert_string_equal(d.detail, "");
	assert_plain(&d);
}

/* A corrupt len larger than the arrays is clamped to them. */
static void test_len_past_arrays(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_NVIDIACTL, NV_IOCTL_XFER_CMD);
	struct gctx_ioctl_desc d;

	ev->flags |= GCTX_IOCTL_XFER;
	ev->inner_cmd = 0x2b;
	ev->size = 4096;
	ev->len = 100000;
	memset(ev->in, 0, GCTX_IOCTL_BYTES);
	memset(ev->out, 0, GCTX_IOCTL_BYTES);
	decode(ev, &d);

	assert_string_equal(d.name, "RM_ALLOC");
	assert_contains(d.detail, "unexpected_size=4096");
}

/* ---- name helpers ---- */

static void test_errno_names(void **state)
{
	(void)state;
	assert_string_equal(gctx_errno_name(EPERM), "EPERM");
	assert_string_equal(gctx_errno_name(ENOENT), "ENOENT");
	assert_string_equal(gctx_errno_name(EINTR), "EINTR");
	assert_string_equal(gctx_errno_name(EIO), "EIO");
	assert_string_equal(gctx_errno_name(ENXIO), "ENXIO");
	assert_string_equal(gctx_errno_name(9), "EBADF");
	assert_string_equal(gctx_errno_name(EAGAIN), "EAGAIN");
	assert_string_equal(gctx_errno_name(ENOMEM), "ENOMEM");
	assert_string_equal(gctx_errno_name(EFAULT), "EFAULT");
	assert_string_equal(gctx_errno_name(EBUSY), "EBUSY");
	assert_string_equal(gctx_errno_name(ENODEV), "ENODEV");
	assert_string_equal(gctx_errno_name(22), "EINVAL");
	assert_string_equal(gctx_errno_name(ENOTTY), "ENOTTY");
	assert_string_equal(gctx_errno_name(ENOSPC), "ENOSPC");
	assert_string_equal(gctx_errno_name(ERANGE), "ERANGE");
	assert_string_equal(gctx_errno_name(EBADFD), "EBADFD");
	assert_string_equal(gctx_errno_name(95), "EOPNOTSUPP");
	assert_string_equal(gctx_errno_name(ETIMEDOUT), "ETIMEDOUT");
	assert_string_equal(gctx_errno_name(512), "ERESTARTSYS");
	assert_null(gctx_errno_name(0));
	assert_null(gctx_errno_name(-1));
	assert_null(gctx_errno_name(4000));
}

static void test_signal_names(void **state)
{
	/* clang-format off */
	static const char *const want[32] = {
		[1] = "SIGHUP",
		[2] = "SIGINT",
		[3] = "SIGQUIT",
		[4] = "SIGILL",
		[5] = "SIGTRAP",
		[6] = "SIGABRT",
		[7] = "SIGBUS",
		[8] = "SIGFPE",
		[9] = "SIGKILL",
		[10] = "SIGUSR1",
		[11] = "SIGSEGV",
		[12] = "SIGUSR2",
		[13] = "SIGPIPE",
		[14] = "SIGALRM",
		[15] = "SIGTERM",
		[16] = "SIGSTKFLT",
		[17] = "SIGCHLD",
		[18] = "SIGCONT",
		[19] = "SIGSTOP",
		[20] = "SIGTSTP",
		[21] = "SIGTTIN",
		[22] = "SIGTTOU",
		[23] = "SIGURG",
		[24] = "SIGXCPU",
		[25] = "SIGXFSZ",
		[26] = "SIGVTALRM",
		[27] = "SIGPROF",
		[28] = "SIGWINCH",
		[29] = "SIGIO",
		[30] = "SIGPWR",
		[31] = "SIGSYS",
	};
	/* clang-format on */
	int sig;

	(void)state;
	for (sig = 1; sig < 32; sig++)
		assert_string_equal(gctx_signal_name(sig), want[sig]);
	assert_null(gctx_signal_name(0));
	assert_null(gctx_signal_name(32));
	assert_null(gctx_signal_name(-11));
}

static void test_dev_kind_names(void **state)
{
	/* clang-format off */
	static const char *const names[] = {
		"nvidiactl",
		"nvidia",
		"nvidia-uvm",
		"nvidia-uvm-tools",
		"kfd",
		"drm-render",
	};
	/* clang-format on */
	int k;

	(void)state;
	for (k = GCTX_DEV_NVIDIACTL; k < GCTX_DEV_MAX; k++) {
		assert_string_equal(gctx_dev_kind_name(k), names[k - 1]);
		assert_int_equal(gctx_dev_kind_parse(names[k - 1]), k);
	}
	assert_string_equal(gctx_dev_kind_name(GCTX_DEV_NONE), "?");
	assert_string_equal(gctx_dev_kind_name(GCTX_DEV_MAX), "?");
	assert_int_equal(gctx_dev_kind_parse("nvidia0"), -1);
	assert_int_equal(gctx_dev_kind_parse("?"), -1);
	assert_int_equal(gctx_dev_kind_parse(""), -1);
	assert_int_equal(gctx_dev_kind_parse(NULL), -1);
}

static void test_obj_kind_names(void **state)
{
	/* clang-format off */
	static const char *const names[] = {
		"rm-client",
		"rm-device",
		"rm-subdevice",
		"rm-vaspace",
		"rm-channel-group",
		"rm-ctxshare",
		"rm-channel",
		"rm-compute",
		"rm-memory",
		"rm-object",
		"uvm-space",
		"kfd-process",
		"kfd-queue",
		"kfd-memory",
		"drm-ctx",
		"drm-gem",
	};
	/* clang-format on */
	int k;

	(void)state;
	assert_int_equal(sizeof(names) / sizeof(names[0]), GCTX_OBJ_MAX - 1);
	for (k = GCTX_OBJ_RM_CLIENT; k < GCTX_OBJ_MAX; k++)
		assert_string_equal(gctx_obj_kind_name(k), names[k - 1]);
	assert_string_equal(gctx_obj_kind_name(GCTX_OBJ_MAX), "?");
}

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

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

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
		T(test_kfd_set_xnack_mode),
		T(test_kfd_unknown),
		T(test_amdgpu_ctx_alloc),
		T(test_amdgpu_ctx_free),
		T(test_amdgpu_ctx_query),
		T(test_amdgpu_ctx_free_failed),
		T(test_amdgpu_gem_create),
		T(test_drm_names),
		T(test_drm_gem_close),
		T(test_drm_version),
		T(test_drm_unknown),
		T(test_nv_unknown),
		T(test_unknown_kind),
		T(test_truncated_rm_alloc),
		T(test_truncated_rm_alloc_status),
		T(test_truncated_kfd_create_queue),
		T(test_kfd_short_user_struct),
		T(test_truncated_uvm_register_channel),
		T(test_nothing_captured),
		T(test_len_past_arrays),
		T(test_errno_names),
		T(test_signal_names),
		T(test_dev_kind_names),
		T(test_obj_kind_names),
		T(test_nv_status_names),
		T(test_nv_class_names),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
