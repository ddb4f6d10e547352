// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The whole-line /proc/PID/maps reader (lib/procmaps.c): fields parsed as the kernel writes
 * them, paths with spaces kept whole, and no line made of a piece of another: a line longer
 * than the buffer, or cut at the end, is dropped and counted, whatever the pieces read() gave.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/procmaps.h"

struct seen {
	int n;
	struct gctx_procmap last;
	char path[256];
	int forged;
};

static int on_map(void *ctx, const struct gctx_procmap *m)
{
	struct seen *s = ctx;

	s->n++;
	s->last = *m;
	snprintf(s->path, sizeof(s->path), "%s", m->path);
	s->forged += !strcmp(m->path, "/etc/passwd");
	return 0;
}

/* Feed text in pieces of size piece; the lines dropped. */
static __u64 feed(const char *text, size_t len, size_t piece, struct seen *s)
{
	static struct gctx_procmaps_rd r;

	gctx_procmaps_rd__init(&r);
	for (size_t o = 0; o < len; o += piece)
		gctx_procmaps_rd__feed(&r, text + o, len - o < piece ? len - o : piece, on_map, s);
	gctx_procmaps_rd__end(&r);
	return r.dropped;
}

static void test_fields(void **state)
{
	static const char t[] = "7f12a0000000-7f12a0021000 r-xp 00002000 fd:01 1234567"
				"                    /usr/lib/my lib (deleted)\n";
	struct seen s = {0};

	(void)state;
	assert_int_equal(feed(t, strlen(t), 4096, &s), 0);
	assert_int_equal(s.n, 1);
	assert_true(s.last.start == 0x7f12a0000000ull && s.last.end == 0x7f12a0021000ull);
	assert_true(s.last.pgoff == 0x2000 && s.last.ino == 1234567);
	assert_int_equal(gctx_procmap_kdev(&s.last), (0xfd << 20) | 1);
	assert_string_equal(s.last.perms, "r-xp");
	assert_string_equal(s.path, "/usr/lib/my lib (deleted)");
}

/* A path of 20,000 bytes whose tail reads as a mapping of /etc/passwd: never listed, in any
 * piece size; the good line after it still is. */
static void test_long_line_never_split(void **state)
{
	static const char forged[] =
	    "7f0000000000-7f0000100000 r-xp 00000000 08:01 4242 /etc/passwd";
	size_t cap = 30000, len;
	char *t = malloc(cap);
	static const size_t pieces[] = {1, 7, 640, 4096, 16384, 30000};

	(void)state;
	assert_non_null(t);
	len = (size_t)snprintf(t, cap, "1000-2000 r-xp 00000000 08:01 7 /");
	memset(t + len, 'p', 20000);
	len += 20000;
	len += (size_t)snprintf(t + len, cap - len, "/%s\n3000-4000 r-xp 0 08:01 8 /ok\n", forged);
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		struct seen s = {0};

		assert_int_equal(feed(t, len, pieces[i], &s), 1);
		assert_int_equal(s.forged, 0);
		assert_int_equal(s.n, 1);
		assert_string_equal(s.path, "/ok");
	}
	free(t);
}

static void test_malformed_and_cut(void **state)
{
	static const char t[] = "0-1 r-xp 0 0:0\n"			      /* no inode */
				"2-1 r-xp 0 0:0 0 /x\n"			      /* end before start */
				"0-1 rwzp 0 0:0 0 /x\n"			      /* bad perms */
				"0-1 r-xp 0 0:0 99999999999999999999999 /x\n" /* inode overflow */
				"0-1 r-xp 0 0:0 5 /good\n"
				"0-1 r-xp 0 0:0 6 /cut"; /* no newline: cut */
	struct seen s = {0};

	(void)state;
	assert_int_equal(feed(t, strlen(t), 3, &s), 5);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.path, "/good");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_long_line_never_split),
	    cmocka_unit_test(test_malformed_and_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
