// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the exporters' timestamp arithmetic at the limits a crafted trace can reach
 * (issue 27, point 13): nothing wraps, order survives. Run under UBSan by check-sanitize. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lib/tsmath.h"

static void test_add_sub(void **state)
{
	(void)state;
	assert_true(gctx_ts_add(1, 2) == 3);
	assert_true(gctx_ts_add(UINT64_MAX - 1, 5) == UINT64_MAX);
	assert_true(gctx_ts_add(UINT64_MAX, UINT64_MAX) == UINT64_MAX);
	assert_true(gctx_ts_sub(5, 3) == 2);
	assert_true(gctx_ts_sub(3, 5) == 0);
	assert_true(gctx_ts_sub(UINT64_MAX, 0) == UINT64_MAX);
}

static void test_signed(void **state)
{
	const __u64 i64max = INT64_MAX;

	(void)state;
	assert_true(gctx_ts_s64(i64max) == INT64_MAX);
	assert_true(gctx_ts_s64(i64max + 1) == INT64_MAX);
	assert_true(gctx_ts_s64(UINT64_MAX) == INT64_MAX);
	/* boot minus mono, as perfetto.c takes it */
	assert_true(gctx_ts_offset(1000, 6000) == 5000);
	assert_true(gctx_ts_offset(6000, 1000) == -5000);
	assert_true(gctx_ts_offset(0, UINT64_MAX) == INT64_MAX);
	assert_true(gctx_ts_offset(UINT64_MAX, 0) == -INT64_MAX);
	/* the crafted trace of the report: a process start at INT64_MAX, boot 5 s ahead */
	assert_true(gctx_ts_shift(i64max, 5000000000LL) == INT64_MAX);
	assert_true(gctx_ts_shift(UINT64_MAX, INT64_MAX) == INT64_MAX);
	assert_true(gctx_ts_shift(10, -20) == 0);
	assert_true(gctx_ts_shift(0, -INT64_MAX) == 0);
	assert_true(gctx_ts_shift(100, 5) == 105);
}

/* Saturation keeps order: a <= b stays a <= b whatever is added to both. */
static void test_monotonic(void **state)
{
	static const __u64 v[] = {0,
				  1,
				  1000,
				  (__u64)INT64_MAX - 1,
				  INT64_MAX,
				  (__u64)INT64_MAX + 1,
				  UINT64_MAX - 1,
				  UINT64_MAX};
	const size_t n = sizeof(v) / sizeof(v[0]);

	(void)state;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			for (size_t k = 0; k < n; k++) {
				assert_true(gctx_ts_add(v[i], v[k]) <= gctx_ts_add(v[j], v[k]));
				assert_true(gctx_ts_s64(v[i]) <= gctx_ts_s64(v[j]));
				assert_true(gctx_ts_shift(v[i], 5000) <= gctx_ts_shift(v[j], 5000));
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_sub),
	    cmocka_unit_test(test_signed),
	    cmocka_unit_test(test_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
