// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the string pool: an equal string comes back as the first copy, strings that
 * differ only after a NUL (argv) stay apart, and every copy keeps its address and its bytes
 * while the pool grows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strpool.h"

static void test_equal_strings_shared(void **state)
{
	struct gctx_strpool *sp = gctx_strpool__new();
	char buf[] = "/bin/true";
	const char *a, *b, *c;

	(void)state;
	assert_non_null(sp);
	a = gctx_strpool__add(sp, buf, strlen(buf));
	buf[1] = 'X'; /* the pool holds its own copy */
	b = gctx_strpool__add(sp, "/bin/true", 9);
	c = gctx_strpool__add(sp, "/bin/tru", 8);
	assert_string_equal(a, "/bin/true");
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_string_equal(c, "/bin/tru");
	assert_int_equal(gctx_strpool__count(sp), 2);
	gctx_strpool__free(sp);
}

static void test_bytes_after_nul(void **state)
{
	struct gctx_strpool *sp = gctx_strpool__new();
	const char *a, *b, *e;

	(void)state;
	a = gctx_strpool__add(sp, "python3\0-m\0a", 12);
	b = gctx_strpool__add(sp, "python3\0-m\0b", 12);
	e = gctx_strpool__add(sp, "", 0);
	assert_ptr_not_equal(a, b);
	assert_memory_equal(a, "python3\0-m\0a", 13);
	assert_memory_equal(b, "python3\0-m\0b", 13);
	assert_string_equal(e, "");
	assert_ptr_equal(gctx_strpool__add(sp, "", 0), e);
	gctx_strpool__free(sp);
}

static void test_growth_keeps_copies(void **state)
{
	enum { N = 20000 };
	struct gctx_strpool *sp = gctx_strpool__new();
	const char **p = calloc(N, sizeof(*p));
	char s[32], *big = malloc(200000);
	const char *bp;

	(void)state;
	assert_non_null(p);
	assert_non_null(big);
	for (int i = 0; i < N; i++) {
		int n = snprintf(s, sizeof(s), "/usr/bin/worker-%d", i);

		p[i] = gctx_strpool__add(sp, s, n);
		assert_non_null(p[i]);
	}
	/* a string longer than a block gets one of its own */
	memset(big, 'x', 200000);
	bp = gctx_strpool__add(sp, big, 200000);
	assert_non_null(bp);
	assert_int_equal(bp[200000], 0);
	for (int i = 0; i < N; i++) {
		int n = snprintf(s, sizeof(s), "/usr/bin/worker-%d", i);

		assert_string_equal(p[i], s);
		assert_ptr_equal(gctx_strpool__add(sp, s, n), p[i]);
	}
	assert_ptr_equal(gctx_strpool__add(sp, big, 200000), bp);
	assert_int_equal(gctx_strpool__count(sp), N + 1);
	/* each string once, with its index: under half the fixed 128-byte field it replaces */
	assert_true(gctx_strpool__bytes(sp) < (size_t)N * 64 + 200000 + 65536);
	free(big);
	free(p);
	gctx_strpool__free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_equal_strings_shared),
	    cmocka_unit_test(test_bytes_after_nul),
	    cmocka_unit_test(test_growth_keeps_copies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
