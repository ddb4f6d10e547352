// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the lineage model's driver objects: RM object trees and KFD memory, decoded
 * from ioctls built by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>

#include "model/model.h"

#include "builders.h"
#include "model_tests.h"

static void test_rm_object_tree(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_gpu_obj *cl, *dev, *tsg;
	__u32 i;

	trainer_with_client(m, 0);
	do_rm_alloc(m, 1234, 1234, 120, "trainer", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	do_rm_alloc(m, 1234, 1236, 130, "trainer", CTL_FILE, 5, 0xc1d00001, 0x5c000002, 0x5c000010,
		    CLS_TSG, 0);
	/* a failed alloc creates nothing */
	do_rm_alloc(m, 1234, 1234, 135, "trainer", CTL_FILE, 5, 0xc1d00001, 0x5c000002, 0x5c000011,
		    CLS_TSG, 0x23);
	assert_int_equal(gctx_model__nobjs(m), 3);

	cl = gctx_model__obj(m, 0);
	dev = gctx_model__obj(m, 1);
	tsg = gctx_model__obj(m, 2);
	assert_int_equal(cl->kind, GCTX_OBJ_RM_CLIENT);
	assert_int_equal(cl->handle, 0xc1d00001);
	assert_int_equal(cl->parent_obj, -1);
	assert_int_equal(cl->cls, CLS_CLIENT);
	assert_int_equal(dev->kind, GCTX_OBJ_RM_DEVICE);
	assert_int_equal(dev->parent_obj, 0);
	assert_int_equal(dev->client, 0xc1d00001);
	assert_int_equal(tsg->kind, GCTX_OBJ_RM_CHANNEL_GROUP);
	assert_int_equal(tsg->cls, CLS_TSG);
	assert_int_equal(tsg->parent_obj, 1);
	assert_int_equal(tsg->handle, 0x5c000010);
	assert_int_equal(tsg->creator_idx, gctx_model__proc_by_pid(m, 1234)->idx);
	assert_int_equal(tsg->creator_tid, 1236);
	assert_int_equal(tsg->create_ns, 130);
	assert_int_equal(tsg->file_id, 1);
	assert_int_equal(tsg->id, 3);

	do_rm_free(m, 1234, 400, CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0xc1d00001);
	for (i = 0; i < 3; i++) {
		assert_true(gctx_model__obj(m, i)->destroyed);
		assert_int_equal(gctx_model__obj(m, i)->destroy_ns, 400);
	}
}

static void test_rm_free_destroys_descendants_only(void **state)
{
	struct gctx_model *m = *state;

	trainer_with_client(m, 0);
	do_rm_alloc(m, 1234, 1234, 120, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	do_rm_alloc(m, 1234, 1234, 130, "t", CTL_FILE, 5, 0xc1d00001, 0x5c000002, 0x5c000010,
		    CLS_TSG, 0);
	do_rm_alloc(m, 1234, 1234, 140, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000003,
		    CLS_DEVICE, 0);
	do_rm_free(m, 1234, 200, CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002);
	assert_false(gctx_model__obj(m, 0)->destroyed); /* client */
	assert_true(gctx_model__obj(m, 1)->destroyed);	/* device */
	assert_true(gctx_model__obj(m, 2)->destroyed);	/* its TSG */
	assert_false(gctx_model__obj(m, 3)->destroyed); /* the other device */

	/* the same handle again is a new object */
	do_rm_alloc(m, 1234, 1234, 210, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_int_equal(gctx_model__nobjs(m), 5);
	assert_int_equal(gctx_model__obj(m, 4)->parent_obj, 0);
	/* and a CREATE of a live handle replaces it */
	do_rm_alloc(m, 1234, 1234, 220, "t", CTL_FILE, 5, 0xc1d00001, 0xc1d00001, 0x5c000002,
		    CLS_DEVICE, 0);
	assert_true(gctx_model__obj(m, 4)->destroyed);
	assert_false(gctx_model__obj(m, 5)->destroyed);
}

static void test_kfd_memory_objects(void **state)
{
	struct gctx_model *m = *state;
	const struct gctx_gpu_obj *o;

	do_open(m, 2000, 100, "hip_app", KFD_FILE, 3, GCTX_DEV_KFD, O_RDWR | O_CLOEXEC);
	do_kfd_alloc(m, 2000, 110, KFD_FILE, 3, 1 << 20, 0x123400000001ULL);
	do_kfd_alloc(m, 2000, 120, KFD_FILE, 3, 4096, 0x123400000002ULL);
	assert_int_equal(gctx_model__nobjs(m), 3);
	o = gctx_model__obj(m, 1);
	assert_int_equal(o->kind, GCTX_OBJ_KFD_MEMORY);
	assert_int_equal(o->handle, 0x123400000001ULL);
	assert_int_equal(o->size, 1 << 20);
	assert_int_equal(o->parent_obj, 0); /* the file's KFD process */
	do_kfd_free(m, 2000, 130, KFD_FILE, 3, 0x123400000001ULL);
	assert_true(gctx_model__obj(m, 1)->destroyed);
	assert_int_equal(gctx_model__obj(m, 1)->destroy_ns, 130);
	assert_false(gctx_model__obj(m, 2)->destroyed);
	assert_false(gctx_model__obj(m, 0)->destroyed);
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		TEST(test_rm_object_tree),
		TEST(test_rm_free_destroys_descendants_only),
		TEST(test_kfd_memory_objects),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
