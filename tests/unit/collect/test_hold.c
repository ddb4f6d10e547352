// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The releaser's timeout: a held process is resumed once its hold is older than the limit,
 * and never earlier. A hold made while a sweep runs carries a timestamp later than the clock
 * the sweep read: it is young, not 2^64 ns old (a load of a new libcuda was resumed before
 * its probes, about once in 60 holds under make bench).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "collect/hold.h"

#define MS 1000000ull

static void test_old_hold_expires(void **state)
{
	(void)state;
	assert_true(gctx_hold_expired(1000 * MS, 400 * MS, 500 * MS));
	assert_true(gctx_hold_expired(1000 * MS, 500 * MS, 500 * MS));
}

static void test_young_hold_stays(void **state)
{
	(void)state;
	assert_false(gctx_hold_expired(1000 * MS, 600 * MS, 500 * MS));
	assert_false(gctx_hold_expired(1000 * MS, 1000 * MS, 500 * MS));
}

/* made after the sweep read its clock */
static void test_hold_newer_than_clock_stays(void **state)
{
	(void)state;
	assert_false(gctx_hold_expired(1000 * MS, 1000 * MS + 1, 500 * MS));
	assert_false(gctx_hold_expired(1000 * MS, 1003 * MS, 500 * MS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_old_hold_expires),
	    cmocka_unit_test(test_young_hold_stays),
	    cmocka_unit_test(test_hold_newer_than_clock_stays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
