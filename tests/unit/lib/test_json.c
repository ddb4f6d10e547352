// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the streaming JSON writer (user/json.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/json.h"

struct capture {
	FILE *f;
	char *buf;
	size_t len;
	struct gctx_json *j;
};

static void cap_open(struct capture *c, bool pretty)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	c->j = gctx_json__new(c->f, pretty);
	assert_non_null(c->j);
}

/* Finish and return the text (owned by c, freed by cap_free). */
static const char *cap_text(struct capture *c)
{
	gctx_json__free(c->j);
	c->j = NULL;
	assert_int_equal(fclose(c->f), 0);
	c->f = NULL;
	return c->buf;
}

static void cap_free(struct capture *c)
{
	free(c->buf);
	c->buf = NULL;
}

static void write_sample(struct gctx_json *j)
{
	gctx_json__obj_begin(j);
	gctx_json__key(j, "name");
	gctx_json__str(j, "python");
	gctx_json__key(j, "pid");
	gctx_json__u64(j, 1234);
	gctx_json__key(j, "list");
	gctx_json__arr_begin(j);
	gctx_json__s64(j, -2);
	gctx_json__bool(j, true);
	gctx_json__bool(j, false);
	gctx_json__null(j);
	gctx_json__obj_begin(j);
	gctx_json__obj_end(j);
	gctx_json__arr_begin(j);
	gctx_json__u64(j, 1);
	gctx_json__arr_begin(j);
	gctx_json__arr_end(j);
	gctx_json__arr_end(j);
	gctx_json__arr_end(j);
	gctx_json__key(j, "empty");
	gctx_json__arr_begin(j);
	gctx_json__arr_end(j);
	gctx_json__key(j, "child");
	gctx_json__obj_begin(j);
	gctx_json__key(j, "ratio");
	gctx_json__double(j, 1.5);
	gctx_json__key(j, "comm");
	gctx_json__str(j, NULL);
	gctx_json__obj_end(j);
	gctx_json__obj_end(j);
}

static void test_compact(void **state)
{
	struct capture c;

	(void)state;
	cap_open(&c, false);
	write_sample(c.j);
	assert_string_equal(
	    cap_text(&c),
	    "{\"name\":\"python\",\"pid\":1234,\"list\":[-2,true,false,null,{},[1,[]]],"
	    "\"empty\":[],\"child\":{\"ratio\":1.5,\"comm\":null}}");
	cap_free(&c);
}

static void test_pretty(void **state)
{
	struct capture c;

	(void)state;
	cap_open(&c, true);
	write_sample(c.j);
	assert_string_equal(cap_text(&c), "{\n"
					  "  \"name\": \"python\",\n"
					  "  \"pid\": 1234,\n"
					  "  \"list\": [\n"
					  "    -2,\n"
					  "    true,\n"
					  "    false,\n"
					  "    null,\n"
					  "    {},\n"
					  "    [\n"
					  "      1,\n"
					  "      []\n"
					  "    ]\n"
					  "  ],\n"
					  "  \"empty\": [],\n"
					  "  \"child\": {\n"
					  "    \"ratio\": 1.5,\n"
					  "    \"comm\": null\n"
					  "  }\n"
					  "}");
	cap_free(&c);
}

/* Several top-level values are separated by newlines (JSON Lines in compact mode). */
static void test_top_level(void **state)
{
	struct capture c;

	(void)state;
	cap_open(&c, false);
	gctx_json__obj_begin(c.j);
	gctx_json__key(c.j, "a");
	gctx_json__u64(c.j, 1);
	gctx_json__obj_end(c.j);
	gctx_json__obj_begin(c.j);
	gctx_json__obj_end(c.j);
	gctx_json__str(c.j, "x");
	assert_string_equal(cap_text(&c), "{\"a\":1}\n{}\n\"x\"");
	cap_free(&c);
}

static void test_numbers(void **state)
{
	struct capture c;

	(void)state;
	cap_open(&c, false);
	gctx_json__arr_begin(c.j);
	gctx_json__u64(c.j, 0);
	gctx_json__u64(c.j, UINT64_MAX);
	gctx_json__s64(c.j, INT64_MIN);
	gctx_json__s64(c.j, INT64_MAX);
	gctx_json__double(c.j, 0.1);
	gctx_json__double(c.j, -3.0);
	gctx_json__double(c.j, 1e300);
	gctx_json__double(c.j, NAN);
	gctx_json__double(c.j, INFINITY);
	gctx_json__double(c.j, -INFINITY);
	gctx_json__arr_end(c.j);
	assert_string_equal(cap_text(&c), "[0,18446744073709551615,-9223372036854775808,"
					  "9223372036854775807,0.10000000000000001,-3,"
					  "1.0000000000000001e+300,null,null,null]");
	cap_free(&c);
}

/* Escape n bytes of s and compare with the expected body. */
static void check_escape(const char *s, size_t n, const char *expect)
{
	char out[256];
	size_t len = gctx_json_escape(out, sizeof(out), s, n);

	assert_int_equal(len, strlen(expect));
	assert_string_equal(out, expect);
}

#define CHECK_ESCAPE(lit, expect) check_escape(lit, sizeof(lit) - 1, expect)

static void test_escapes(void **state)
{
	(void)state;
	CHECK_ESCAPE("plain text", "plain text");
	CHECK_ESCAPE("", "");
	CHECK_ESCAPE("a\"b\\c/d", "a\\\"b\\\\c/d");
	CHECK_ESCAPE("l1\nl2\tt\rr\bb\ff", "l1\\nl2\\tt\\rr\\bb\\ff");
	CHECK_ESCAPE("\x01\x1f\x1b[0m", "\\u0001\\u001f\\u001b[0m");
	CHECK_ESCAPE("nul\0byte", "nul\\u0000byte");
	CHECK_ESCAPE("del\x7f", "del\\u007f");
	/* valid, but they reorder or hide what a terminal shows (issue 43.8): C1 CSI, bidi
	 * override and isolate, zero-width space, BOM */
	CHECK_ESCAPE("a\xc2\x9b"
		     "2J",
		     "a\\u009b2J");
	CHECK_ESCAPE("x\xe2\x80\xaeyz", "x\\u202eyz");
	CHECK_ESCAPE("\xe2\x81\xa6\xe2\x80\x8b\xef\xbb\xbf", "\\u2066\\u200b\\ufeff");
}

static void test_utf8_valid(void **state)
{
	(void)state;
	CHECK_ESCAPE("caf\xc3\xa9", "caf\xc3\xa9");			      /* U+00E9 */
	CHECK_ESCAPE("\xe2\x82\xac 5", "\xe2\x82\xac 5");		      /* U+20AC */
	CHECK_ESCAPE("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");		      /* U+1F600 */
	CHECK_ESCAPE("\xed\x9f\xbf\xee\x80\x80", "\xed\x9f\xbf\xee\x80\x80"); /* U+D7FF U+E000 */
	CHECK_ESCAPE("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");		      /* U+10FFFF */
	CHECK_ESCAPE("\xc2\xa0\xdf\xbf", "\xc2\xa0\xdf\xbf");		      /* U+00A0 U+07FF */
	CHECK_ESCAPE("\xe0\xa0\x80\xef\xbf\xbf", "\xe0\xa0\x80\xef\xbf\xbf"); /* U+0800 U+FFFF */
	CHECK_ESCAPE("\xf0\x90\x80\x80", "\xf0\x90\x80\x80");		      /* U+10000 */
}

#define R "\\ufffd"

/* Invalid UTF-8: one U+FFFD per maximal invalid subpart (as Python's "replace"). */
static void test_utf8_invalid(void **state)
{
	(void)state;
	CHECK_ESCAPE("a\x80z", "a" R "z");	    /* lone continuation */
	CHECK_ESCAPE("\x80\xbf", R R);		    /* two of them */
	CHECK_ESCAPE("\xe2\x82z", R "z");	    /* truncated sequence */
	CHECK_ESCAPE("z\xe2\x82", "z" R);	    /* truncated at the end */
	CHECK_ESCAPE("\xf0\x9f\x98", R);	    /* truncated 4-byte */
	CHECK_ESCAPE("\xc3", R);		    /* lead byte alone */
	CHECK_ESCAPE("\xc0\x80", R R);		    /* overlong NUL */
	CHECK_ESCAPE("\xc1\xbf", R R);		    /* overlong */
	CHECK_ESCAPE("\xe0\x80\xaf", R R R);	    /* overlong 3-byte */
	CHECK_ESCAPE("\xf0\x80\x80\xaf", R R R R);  /* overlong 4-byte */
	CHECK_ESCAPE("\xed\xa0\x80", R R R);	    /* surrogate U+D800 */
	CHECK_ESCAPE("\xed\xbf\xbf", R R R);	    /* surrogate U+DFFF */
	CHECK_ESCAPE("\xf4\x90\x80\x80", R R R R);  /* above U+10FFFF */
	CHECK_ESCAPE("\xff", R);		    /* never valid */
	CHECK_ESCAPE("\xfe\xf5\xf8", R R R);	    /* never valid */
	CHECK_ESCAPE("\xc3\xc3\xa9", R "\xc3\xa9"); /* bad lead, then a good one */
	CHECK_ESCAPE("\xe2\x82\xe2\x82\xac", R "\xe2\x82\xac");
}

/* Output that does not fit is cut before the first escape that does not fit whole. */
static void test_escape_bounds(void **state)
{
	char out[16];

	(void)state;
	memset(out, 'x', sizeof(out));
	assert_int_equal(gctx_json_escape(out, 5, "ab\"c", 4), 4);
	assert_string_equal(out, "ab\\\"");
	assert_int_equal(gctx_json_escape(out, 4, "ab\"c", 4), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(gctx_json_escape(out, 8, "a\xff", 2), 7);
	assert_string_equal(out, "a\\ufffd");
	assert_int_equal(gctx_json_escape(out, 7, "a\xff", 2), 1);
	assert_string_equal(out, "a");
	assert_int_equal(gctx_json_escape(out, 4, "\xe2\x82\xac", 3), 3);
	assert_int_equal(gctx_json_escape(out, 3, "\xe2\x82\xac", 3), 0);
	assert_string_equal(out, "");
	assert_int_equal(gctx_json_escape(out, 1, "abc", 3), 0);
	assert_int_equal(gctx_json_escape(NULL, 0, "abc", 3), 0);
}

/* Keys are escaped too; strn writes exactly n bytes; long strings stream in pieces. */
static void test_writer_strings(void **state)
{
	struct capture c;
	char *big, *expect, *p;
	size_t i, n = 5000;

	(void)state;
	cap_open(&c, false);
	gctx_json__obj_begin(c.j);
	gctx_json__key(c.j, "k\"ey\n");
	gctx_json__strn(c.j, "abc\0def", 7);
	gctx_json__key(c.j, "cut");
	gctx_json__strn(c.j, "abcdef", 3);
	gctx_json__obj_end(c.j);
	assert_string_equal(cap_text(&c), "{\"k\\\"ey\\n\":\"abc\\u0000def\",\"cut\":\"abc\"}");
	cap_free(&c);

	big = malloc(n);
	expect = malloc(n * 6 + 3);
	assert_non_null(big);
	assert_non_null(expect);
	p = expect;
	*p++ = '"';
	for (i = 0; i < n; i++) {
		if (i % 3) {
			big[i] = 'a';
			*p++ = 'a';
		} else {
			big[i] = '\x01';
			memcpy(p, "\\u0001", 6);
			p += 6;
		}
	}
	*p++ = '"';
	*p = '\0';
	cap_open(&c, true);
	gctx_json__strn(c.j, big, n);
	assert_string_equal(cap_text(&c), expect);
	cap_free(&c);
	free(expect);
	free(big);
}

static bool have_python(void)
{
	return system("python3 -c pass >/dev/null 2>&1") == 0;
}

/* Pipe text to python3 running script (no single quotes in it); returns its exit status. */
static int python_check(const char *script, const char *text)
{
	char cmd[1024];
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "python3 -c '%s'", script);
	p = popen(cmd, "w");
	assert_non_null(p);
	fputs(text, p);
	status = pclose(p);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void hex(char *out, const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", s[i]);
	out[2 * n] = '\0';
}

/* Each {"hex", "s"} pair: s must decode to what Python makes of the raw bytes. */
static const char *py_compare =
    "import json,sys\n"
    "d = json.load(sys.stdin)\n"
    "bad = [x for x in d if bytes.fromhex(x[\"hex\"]).decode(\"utf-8\", \"replace\") != x[\"s\"]]\n"
    "print(bad[:3], file=sys.stderr) if bad else None\n"
    "sys.exit(1 if bad else 0)\n";

static void add_pair(struct gctx_json *j, const unsigned char *s, size_t n)
{
	char h[2 * 256 + 1];

	assert_true(n <= 256);
	hex(h, s, n);
	gctx_json__obj_begin(j);
	gctx_json__key(j, "hex");
	gctx_json__str(j, h);
	gctx_json__key(j, "s");
	gctx_json__strn(j, (const char *)s, n);
	gctx_json__obj_end(j);
}

/* A hostile process name and argv parse back with Python's json module. */
static void test_python_parses(void **state)
{
	static const char comm[] = "\"ev\\il\"\n\r\t\x01\x7f\xff\xc0\x80\xed\xa0\x80\xe2\x82 "
				   "caf\xc3\xa9 \xf0\x9f\x98\x80\\\"";
	static const char *argv[] = {"python", "-c", "print(\"hi\\n\")", "\x80\x80\xfe", ""};
	struct capture c;
	const char *text;
	unsigned int i;

	(void)state;
	if (!have_python())
		skip();
	cap_open(&c, true);
	gctx_json__obj_begin(c.j);
	gctx_json__key(c.j, "comm");
	gctx_json__strn(c.j, comm, sizeof(comm) - 1);
	gctx_json__key(c.j, "argv");
	gctx_json__arr_begin(c.j);
	for (i = 0; i < sizeof(argv) / sizeof(argv[0]); i++)
		gctx_json__str(c.j, argv[i]);
	gctx_json__arr_end(c.j);
	gctx_json__key(c.j, "ratio");
	gctx_json__double(c.j, NAN);
	gctx_json__obj_end(c.j);
	text = cap_text(&c);
	assert_int_equal(python_check("import json,sys; json.load(sys.stdin)", text), 0);
	assert_int_equal(
	    python_check("import json,sys\n"
			 "d = json.load(sys.stdin)\n"
			 "sys.exit(0 if d[\"ratio\"] is None and len(d[\"argv\"]) == 5 "
			 "and d[\"comm\"].startswith(\"\\\"ev\\\\il\\\"\\n\") else 1)\n",
			 text),
	    0);
	cap_free(&c);

	cap_open(&c, false);
	gctx_json__arr_begin(c.j);
	add_pair(c.j, (const unsigned char *)comm, sizeof(comm) - 1);
	gctx_json__arr_end(c.j);
	assert_int_equal(python_check(py_compare, cap_text(&c)), 0);
	cap_free(&c);
}

/* Random bytes (weighted to UTF-8 lead/continuation and control bytes) escape to what
 * Python's decode(errors="replace") gives. */
static void test_python_fuzz(void **state)
{
	static const unsigned char pool[] = {0x00, 0x01, 0x0a, 0x1f, '"',  '\\', 'a',  0x7f,
					     0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1,
					     0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef,
					     0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xfe, 0xff};
	unsigned char s[64];
	struct capture c;
	unsigned int i, k, n;

	(void)state;
	if (!have_python())
		skip();
	srand(4242);
	cap_open(&c, false);
	gctx_json__arr_begin(c.j);
	for (i = 0; i < 3000; i++) {
		n = rand() % sizeof(s);
		for (k = 0; k < n; k++)
			s[k] = (rand() & 1) ? pool[rand() % sizeof(pool)] : (unsigned char)rand();
		add_pair(c.j, s, n);
	}
	gctx_json__arr_end(c.j);
	assert_int_equal(python_check(py_compare, cap_text(&c)), 0);
	cap_free(&c);
}

static void test_free_null(void **state)
{
	(void)state;
	gctx_json__free(NULL);
	assert_null(gctx_json__new(NULL, false));
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_top_level),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_escape_bounds),
		cmocka_unit_test(test_writer_strings),
		cmocka_unit_test(test_python_parses),
		cmocka_unit_test(test_python_fuzz),
		cmocka_unit_test(test_free_null),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
