// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the DRM render-node decoder (user/decode/drm.c): core DRM ioctls and amdgpu's
 * contexts and GEM buffers.
 */
#include "decode_test.h"

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

/* drm_amdgpu_info {return_pointer @0, return_size @8, query @12}: the query by name */
static void test_amdgpu_info_query(void **state)
{
	struct gctx_ev_ioctl *ev = ev_new(state, GCTX_DEV_DRM_RENDER, 0x40206445u);
	struct gctx_ioctl_desc d;

	memset(ev->in, 0, 32);
	put32(ev->in, 0x8, 376);
	put32(ev->in, 0xc, 0x16);
	decode(ev, &d);
	assert_string_equal(d.name, "AMDGPU_INFO");
	assert_true(d.known);
	assert_string_equal(d.detail, "query=DEV_INFO");
	assert_plain(&d);

	put32(ev->in, 0xc, 0x7f); /* a query this table does not know: its number */
	decode(ev, &d);
	assert_string_equal(d.detail, "query=127");
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

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		T(test_amdgpu_ctx_alloc),
		T(test_amdgpu_ctx_free),
		T(test_amdgpu_ctx_query),
		T(test_amdgpu_ctx_free_failed),
		T(test_amdgpu_gem_create),
		T(test_amdgpu_info_query),
		T(test_drm_names),
		T(test_drm_gem_close),
		T(test_drm_version),
		T(test_drm_unknown),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
