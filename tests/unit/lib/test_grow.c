// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the growable arrays: new slots are zeroed, the contents survive growth, and
 * an array of large elements (a process's execs, its threads) starts at one element, not
 * four: in a storm of short-lived processes that was most of the model's memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "model/model.h"

static void test_large_elements_start_at_one(void **state)
{
	struct gctx_exec *x = NULL;
	__u32 cap = 0;

	(void)state;
	assert_true(sizeof(*x) > GCTX_GROW_SMALL);
	assert_int_equal(gctx_grow(&x, &cap, 1, sizeof(*x)), 0);
	assert_int_equal(cap, 1);
	x[0].ts_ns = 7;
	assert_int_equal(gctx_grow(&x, &cap, 2, sizeof(*x)), 0);
	assert_int_equal(cap, 2);
	assert_int_equal(x[0].ts_ns, 7);
	assert_int_equal(x[1].ts_ns, 0);
	assert_int_equal(gctx_grow(&x, &cap, 3, sizeof(*x)), 0);
	assert_int_equal(cap, 4);
	free(x);
}

static void test_small_elements_start_at_four(void **state)
{
	__u32 *v = NULL, cap = 0;

	(void)state;
	assert_int_equal(gctx_grow(&v, &cap, 0, sizeof(*v)), 0);
	assert_null(v);
	assert_int_equal(gctx_grow(&v, &cap, 1, sizeof(*v)), 0);
	assert_int_equal(cap, 4);
	for (__u32 i = 0; i < 4; i++)
		assert_int_equal(v[i], 0);
	v[3] = 42;
	/* a need far past the capacity: doubled until it fits, new slots zeroed */
	assert_int_equal(gctx_grow(&v, &cap, 100, sizeof(*v)), 0);
	assert_int_equal(cap, 128);
	assert_int_equal(v[3], 42);
	for (__u32 i = 4; i < cap; i++)
		assert_int_equal(v[i], 0);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_large_elements_start_at_one),
	    cmocka_unit_test(test_small_elements_start_at_four),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
