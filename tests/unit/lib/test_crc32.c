// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the trace's CRC-32: the value zlib computes, for every length and alignment. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/crc32.h"

static void test_known_values(void **state)
{
	(void)state;
	assert_int_equal(gctx_crc32(0, "", 0), 0);
	assert_int_equal(gctx_crc32(0, "123456789", 9), 0xcbf43926); /* the CRC-32 check value */
	assert_int_equal(gctx_crc32(0, "a", 1), 0xe8b7be43);
}

/* Traces written before (by zlib's crc32) and after read alike: every length up to 300 at
 * every alignment (the folding path's block counts and tails), every length up to 4096 (many
 * 64-byte rounds), and a CRC continued across two calls. */
static void test_same_as_zlib(void **state)
{
	static unsigned char b[4096 + 8];
	__u32 seed = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(b); i++) {
		seed = seed * 1103515245 + 12345;
		b[i] = seed >> 16;
	}
	for (size_t len = 0; len <= 300; len++)
		for (size_t off = 0; off < 8; off++)
			assert_int_equal(gctx_crc32(0, b + off, len),
					 (__u32)crc32(0L, b + off, len));
	for (size_t len = 301; len <= 4096; len++)
		assert_int_equal(gctx_crc32(0, b + (len & 7), len),
				 (__u32)crc32(0L, b + (len & 7), len));
	for (size_t cut = 0; cut <= 116; cut += 3)
		assert_int_equal(gctx_crc32(gctx_crc32(0, b, cut), b + cut, 116 - cut),
				 (__u32)crc32(0L, b, 116));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_values),
	    cmocka_unit_test(test_same_as_zlib),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
