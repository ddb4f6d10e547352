// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the bounded string table the Perfetto writer interns names with. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/strtab.h"

/* The same bytes get the same id; ids count from 1; only the first use adds. */
static void test_ids(void **state)
{
	struct gctx_strtab *t = gctx_strtab__new(100, 32);
	bool added;

	(void)state;
	assert_non_null(t);
	assert_int_equal(gctx_strtab__intern(t, "RM_ALLOC", 8, &added), 1);
	assert_true(added);
	assert_int_equal(gctx_strtab__intern(t, "RM_CONTROL", 10, &added), 2);
	assert_true(added);
	assert_int_equal(gctx_strtab__intern(t, "RM_ALLOC", 8, &added), 1);
	assert_false(added);
	/* the length counts: a prefix is another string, and so is the empty one */
	assert_int_equal(gctx_strtab__intern(t, "RM_ALLOC", 2, &added), 3);
	assert_int_equal(gctx_strtab__intern(t, "", 0, &added), 4);
	assert_int_equal(gctx_strtab__intern(t, "", 0, &added), 4);
	assert_false(added);
	assert_int_equal(gctx_strtab__count(t), 4);
	gctx_strtab__free(t);
}

/* Past its bounds a string is not interned (0): too long, or the table is full. */
static void test_bounds(void **state)
{
	struct gctx_strtab *t = gctx_strtab__new(50, 8);
	char s[16];
	bool added;
	int i;

	(void)state;
	assert_int_equal(gctx_strtab__intern(t, "123456789", 9, &added), 0);
	assert_false(added);
	for (i = 0; i < 50; i++) {
		snprintf(s, sizeof(s), "s%d", i);
		assert_int_equal(gctx_strtab__intern(t, s, strlen(s), &added), i + 1);
	}
	assert_int_equal(gctx_strtab__intern(t, "new", 3, &added), 0);
	assert_false(added);
	/* what is in stays found */
	assert_int_equal(gctx_strtab__intern(t, "s7", 2, &added), 8);
	/* cleared: ids start again */
	gctx_strtab__clear(t);
	assert_int_equal(gctx_strtab__count(t), 0);
	assert_int_equal(gctx_strtab__intern(t, "s7", 2, &added), 1);
	assert_true(added);
	gctx_strtab__free(t);
	gctx_strtab__free(NULL);
}

/* Many strings with equal hashes modulo the table size still resolve. */
static void test_many(void **state)
{
	struct gctx_strtab *t = gctx_strtab__new(5000, 16);
	char s[16];
	bool added;
	int i;

	(void)state;
	for (i = 0; i < 5000; i++) {
		snprintf(s, sizeof(s), "%x", i * 7919);
		assert_int_equal(gctx_strtab__intern(t, s, strlen(s), &added), i + 1);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(s, sizeof(s), "%x", i * 7919);
		assert_int_equal(gctx_strtab__intern(t, s, strlen(s), &added), i + 1);
		assert_false(added);
	}
	gctx_strtab__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
