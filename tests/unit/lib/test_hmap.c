// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the (k1, k2) -> u32 hash map the model and the exporter index with. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lib/hmap.h"

static void test_empty(void **state)
{
	struct gctx_hmap h = {0};
	__u32 v = 7;

	(void)state;
	assert_false(gctx_hmap__get(&h, 0, 0, &v));
	assert_int_equal(v, 7);
	gctx_hmap__free(&h);
	gctx_hmap__free(&h); /* twice: still empty */
	assert_null(h.e);
}

/* Both key words count, values are overwritten in place, and growing keeps every entry. */
static void test_put_get_grow(void **state)
{
	struct gctx_hmap h = {0};
	__u32 i, v;

	(void)state;
	for (i = 0; i < 10000; i++) {
		assert_int_equal(gctx_hmap__put(&h, i, ~(__u64)i, i * 3), 0);
		assert_int_equal(gctx_hmap__put(&h, ~(__u64)i, i, i * 5), 0);
	}
	assert_int_equal(h.n, 20000);
	assert_true(h.cap >= 2 * h.n);
	assert_int_equal(h.cap & (h.cap - 1), 0);
	for (i = 0; i < 10000; i++) {
		assert_true(gctx_hmap__get(&h, i, ~(__u64)i, &v));
		assert_int_equal(v, i * 3);
		assert_true(gctx_hmap__get(&h, ~(__u64)i, i, &v));
		assert_int_equal(v, i * 5);
		assert_false(gctx_hmap__get(&h, i, i + 1, &v));
	}
	assert_int_equal(gctx_hmap__put(&h, 42, ~42ULL, 1), 0);
	assert_int_equal(h.n, 20000);
	assert_true(gctx_hmap__get(&h, 42, ~42ULL, &v));
	assert_int_equal(v, 1);
	gctx_hmap__free(&h);
	assert_int_equal(h.n, 0);
	assert_false(gctx_hmap__get(&h, 42, ~42ULL, &v));
}

/* Deleting keeps every other key findable (entries behind the hole move back) and the map
 * does not grow when keys come and go, as the agent's pid map does for weeks. */
static void test_del_churn(void **state)
{
	struct gctx_hmap h = {0};
	__u32 v, i, cap;

	(void)state;
	assert_false(gctx_hmap__del(&h, 1, 0));
	for (i = 0; i < 1000; i++)
		assert_int_equal(gctx_hmap__put(&h, i, 0, i), 0);
	cap = h.cap;
	for (i = 1000; i < 200000; i++) {
		assert_int_equal(gctx_hmap__put(&h, i, 0, i), 0);
		assert_true(gctx_hmap__del(&h, i - 1000, 0));
		assert_false(gctx_hmap__del(&h, i - 1000, 0));
	}
	assert_int_equal(h.n, 1000);
	assert_true(h.cap <= cap * 2);
	for (i = 0; i < 199000; i++)
		assert_false(gctx_hmap__get(&h, i, 0, &v));
	for (i = 199000; i < 200000; i++) {
		assert_true(gctx_hmap__get(&h, i, 0, &v));
		assert_int_equal(v, i);
	}
	gctx_hmap__free(&h);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_put_get_grow),
		cmocka_unit_test(test_del_churn),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
