// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The symboliser's failure budget: one user's hostile files stop that user's symbols only,
 * and only for a while. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lib/failbudget.h"

#define HOUR (3600 * 1000ull)

static void test_one_user_spends_only_its_own(void **state)
{
	struct gctx_failbudget b;

	(void)state;
	gctx_failbudget_init(&b, 8, HOUR);
	for (int i = 0; i < 8; i++) {
		assert_true(gctx_failbudget_ok(&b, 1000, 10 + i));
		assert_int_equal(gctx_failbudget_fail(&b, 1000, 10 + i), i + 1);
	}
	assert_false(gctx_failbudget_ok(&b, 1000, 100)); /* the attacker: refused */
	assert_true(gctx_failbudget_ok(&b, 1001, 100));	 /* another user: served */
	assert_true(gctx_failbudget_ok(&b, 0, 100));
	gctx_failbudget_fail(&b, 1001, 200);
	assert_true(gctx_failbudget_ok(&b, 1001, 200));
}

static void test_window_ends(void **state)
{
	struct gctx_failbudget b;

	(void)state;
	gctx_failbudget_init(&b, 2, HOUR);
	gctx_failbudget_fail(&b, 7, 1000);
	gctx_failbudget_fail(&b, 7, 2000);
	assert_false(gctx_failbudget_ok(&b, 7, HOUR)); /* within the window that began at 1000 */
	assert_true(gctx_failbudget_ok(&b, 7, 1000 + HOUR));
	assert_int_equal(gctx_failbudget_fail(&b, 7, 1000 + HOUR), 1);
	/* a clock that goes back starts over rather than refusing forever */
	gctx_failbudget_fail(&b, 7, 1001 + HOUR);
	assert_false(gctx_failbudget_ok(&b, 7, 1002 + HOUR));
	assert_true(gctx_failbudget_ok(&b, 7, 5));
}

static void test_full_table(void **state)
{
	struct gctx_failbudget b;

	(void)state;
	gctx_failbudget_init(&b, 1, HOUR);
	gctx_failbudget_fail(&b, 1, 1); /* the stalest */
	for (__u32 k = 2; k <= GCTX_FAILBUDGET_USERS + 5; k++)
		gctx_failbudget_fail(&b, k, 10 + k);
	assert_int_equal(b.n, GCTX_FAILBUDGET_USERS);
	/* every user still answered; the newest are refused, the recycled ones start anew */
	assert_false(gctx_failbudget_ok(&b, GCTX_FAILBUDGET_USERS + 5, 1000));
	for (__u32 k = 1; k <= GCTX_FAILBUDGET_USERS + 5; k++)
		(void)gctx_failbudget_ok(&b, k, 1000);
	assert_true(b.n == GCTX_FAILBUDGET_USERS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_user_spends_only_its_own),
	    cmocka_unit_test(test_window_ends),
	    cmocka_unit_test(test_full_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
