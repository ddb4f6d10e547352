// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of lib/sha256.c: FIPS 180-4 test vectors, one and two blocks, and the empty input,
 * as the HTML page's Content-Security-Policy names its style by them (base64). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "lib/sha256.h"

static void test_sha256(void **state)
{
	static const __u8 abc[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
				     0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
				     0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
				     0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
	static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	__u8 d[32];
	char b64[45];

	gctx_sha256("abc", 3, d);
	assert_memory_equal(d, abc, 32);
	/* 56 bytes: the length goes in a second block */
	gctx_sha256_b64(two, strlen(two), b64);
	assert_string_equal(b64, "JI1qYdIGOLjlwCaTDD5gOaM85Flk/yFn9uzt1BnbBsE=");
	gctx_sha256_b64("", 0, b64);
	assert_string_equal(b64, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
}

/* The lengths where the padding changes shape (55, 56, 63, 64 bytes of 'a'), against
 * Python's hashlib. */
static void test_padding(void **state)
{
	static const struct {
		size_t n;
		const char *b64;
	} want[] = {
	    {55, "n0OQ+NMMLdkuyfCVtl4rmumwqSWlJY4kHJ8ekQ9zQxg="},
	    {56, "s1Q5pKxvCUi21vnjxq8PX1kM4g8b3nCQ73lwaG7Gc4o="},
	    {63, "fT50oF19sVvOStnsBljqmOPwbu7PFrTG//LaRX3cLzQ="},
	    {64, "/+BU/nrgy23GXDr5th1SCfQ5hR20PQulmXM33xVGaOs="},
	};
	char buf[64], b64[45];

	memset(buf, 'a', sizeof(buf));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		gctx_sha256_b64(buf, want[i].n, b64);
		assert_string_equal(b64, want[i].b64);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha256),
	    cmocka_unit_test(test_padding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
