// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the dynamic-loader rules (lib/ldso.c): names, environment blocks, search paths
 * with $ORIGIN, and ld.so.cache images, well-formed and hostile. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/ldso.h"

static void test_api_names(void **state)
{
	(void)state;
	assert_true(gctx_ldso_is_api_name("libcuda.so.1"));
	assert_true(gctx_ldso_is_api_name("libcuda.so"));
	assert_true(gctx_ldso_is_api_name("libcuda.so.550.54.15"));
	assert_true(gctx_ldso_is_api_name("libamdhip64.so.6"));
	assert_false(gctx_ldso_is_api_name("libcudart.so.12"));
	assert_false(gctx_ldso_is_api_name("libcuda.so1"));
	assert_false(gctx_ldso_is_api_name("xlibcuda.so.1"));
	assert_false(gctx_ldso_is_api_name(""));
	assert_false(gctx_ldso_is_api_name(NULL));
}

static void test_env_get(void **state)
{
	static const char env[] = "PATH=/bin\0LD_LIBRARY_PATHX=no\0LD_LIBRARY_PATH=/a:/b\0X=1";
	char out[8];

	(void)state;
	assert_true(gctx_ldso_env_get(env, sizeof(env), "LD_LIBRARY_PATH", out, sizeof(out)));
	assert_string_equal(out, "/a:/b");
	assert_true(gctx_ldso_env_get(env, sizeof(env), "X", out, sizeof(out)));
	assert_string_equal(out, "1");
	assert_false(gctx_ldso_env_get(env, sizeof(env), "HOME", out, sizeof(out)));
	/* cut to fit, still terminated */
	assert_true(gctx_ldso_env_get(env, sizeof(env), "PATH", out, 4));
	assert_string_equal(out, "/bi");
	/* a block without its final NUL (a truncated /proc/PID/environ read) */
	assert_true(gctx_ldso_env_get("A=xyz", 5, "A", out, sizeof(out)));
	assert_string_equal(out, "xyz");
	assert_false(gctx_ldso_env_get("A=xyz", 0, "A", out, sizeof(out)));
}

struct dirs {
	char d[8][64];
	int n;
};

static void add_dir(void *ctx, const char *dir)
{
	struct dirs *ds = ctx;

	if (ds->n < 8)
		snprintf(ds->d[ds->n++], sizeof(ds->d[0]), "%s", dir);
}

static void test_split(void **state)
{
	struct dirs ds = {0};

	(void)state;
	/* empty and relative entries mean the working directory: not modelled, skipped */
	assert_int_equal(gctx_ldso_split("/a::rel;/b/", NULL, add_dir, &ds), 2);
	assert_string_equal(ds.d[0], "/a");
	assert_string_equal(ds.d[1], "/b/");
	memset(&ds, 0, sizeof(ds));
	assert_int_equal(gctx_ldso_split("$ORIGIN/../lib:${ORIGIN}:$LIB/x:/c$PLATFORM",
					 "/opt/app/bin", add_dir, &ds),
			 2);
	assert_string_equal(ds.d[0], "/opt/app/bin/../lib");
	assert_string_equal(ds.d[1], "/opt/app/bin");
	memset(&ds, 0, sizeof(ds));
	/* no origin known: $ORIGIN entries are skipped, not guessed */
	assert_int_equal(gctx_ldso_split("$ORIGIN/lib:/d", NULL, add_dir, &ds), 1);
	assert_string_equal(ds.d[0], "/d");
	assert_int_equal(gctx_ldso_split(NULL, NULL, add_dir, &ds), 0);
	assert_int_equal(gctx_ldso_split("", NULL, add_dir, &ds), 0);
}

static void test_split_long(void **state)
{
	size_t n = 10000;
	char *s = malloc(n + 1);
	struct dirs ds = {0};

	(void)state;
	assert_non_null(s);
	memset(s, 'a', n);
	s[0] = '/';
	s[n] = 0;
	/* longer than any path: skipped, never overflowed */
	assert_int_equal(gctx_ldso_split(s, NULL, add_dir, &ds), 0);
	free(s);
}

struct cache_ent {
	const char *name, *path;
};

/* A cache image as ldconfig writes it: optionally the old table first, then the new one. */
static size_t build_cache(unsigned char *buf, size_t cap, const struct cache_ent *e, __u32 n,
			  bool old)
{
	size_t off = 0, hdr, str;
	__u32 v;

	memset(buf, 0, cap);
	if (old) {
		memcpy(buf, "ld.so-1.7.0", 11);
		v = 0;
		memcpy(buf + 12, &v, 4); /* no old entries */
		off = 16;
	}
	hdr = off;
	memcpy(buf + hdr, "glibc-ld.so.cache1.1", 20);
	memcpy(buf + hdr + 20, &n, 4);
	str = 48 + n * 24; /* strings after the entries, offsets from the new header */
	for (__u32 i = 0; i < n; i++) {
		unsigned char *ent = buf + hdr + 48 + i * 24;
		__u32 k, val, fl = 0x0303;

		memcpy(ent, &fl, 4);
		k = str;
		strcpy((char *)buf + hdr + str, e[i].name);
		str += strlen(e[i].name) + 1;
		val = str;
		strcpy((char *)buf + hdr + str, e[i].path);
		str += strlen(e[i].path) + 1;
		memcpy(ent + 4, &k, 4);
		memcpy(ent + 8, &val, 4);
	}
	return hdr + str;
}

struct seen {
	char names[4][64], paths[4][128];
	int n;
};

static void on_ent(void *ctx, const char *name, const char *path)
{
	struct seen *s = ctx;

	if (s->n < 4) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		snprintf(s->paths[s->n++], sizeof(s->paths[0]), "%s", path);
	}
}

static void test_cache(void **state)
{
	static const struct cache_ent ents[] = {
	    {"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
	    {"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"},
	};
	unsigned char buf[1024];
	struct seen s = {0};
	size_t len;

	(void)state;
	for (int old = 0; old < 2; old++) {
		memset(&s, 0, sizeof(s));
		len = build_cache(buf, sizeof(buf), ents, 2, old);
		assert_int_equal(gctx_ldso_cache_each(buf, len, on_ent, &s), 2);
		assert_string_equal(s.names[0], "libcuda.so.1");
		assert_string_equal(s.paths[0], "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
		assert_string_equal(s.names[1], "libc.so.6");
	}
}

static void test_cache_hostile(void **state)
{
	static const struct cache_ent ents[] = {{"libcuda.so.1", "/x/libcuda.so.1"}};
	unsigned char buf[512];
	struct seen s = {0};
	size_t len;
	__u32 big = 0x7fffffff, bad = 100000;

	(void)state;
	assert_int_equal(gctx_ldso_cache_each("garbage", 7, on_ent, &s), -22);
	assert_int_equal(gctx_ldso_cache_each(NULL, 0, on_ent, &s), -22);
	len = build_cache(buf, sizeof(buf), ents, 1, false);
	/* cut before the end of its strings: the entry is skipped, nothing read past len */
	assert_int_equal(gctx_ldso_cache_each(buf, len - 3, on_ent, &s), 0);
	/* more entries claimed than the file holds */
	memcpy(buf + 20, &big, 4);
	assert_int_equal(gctx_ldso_cache_each(buf, len, on_ent, &s), -22);
	/* a string offset far outside */
	len = build_cache(buf, sizeof(buf), ents, 1, false);
	memcpy(buf + 48 + 8, &bad, 4);
	assert_int_equal(gctx_ldso_cache_each(buf, len, on_ent, &s), 0);
	/* an old table that claims more than the file */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "ld.so-1.7.0", 11);
	memcpy(buf + 12, &big, 4);
	assert_int_equal(gctx_ldso_cache_each(buf, 64, on_ent, &s), -22);
	assert_int_equal(s.n, 0);
}

static void find_libc(void *ctx, const char *name, const char *path)
{
	(void)path;
	*(bool *)ctx |= !strcmp(name, "libc.so.6");
}

/* The machine's own cache, when there is one: libc is in it. */
static void test_cache_system(void **state)
{
	static unsigned char buf[8 << 20];
	FILE *f = fopen("/etc/ld.so.cache", "rb");
	bool libc = false;
	size_t len;

	(void)state;
	if (!f)
		skip();
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(gctx_ldso_cache_each(buf, len, find_libc, &libc) > 10);
	assert_true(libc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_api_names),	 cmocka_unit_test(test_env_get),
	    cmocka_unit_test(test_split),	 cmocka_unit_test(test_split_long),
	    cmocka_unit_test(test_cache),	 cmocka_unit_test(test_cache_hostile),
	    cmocka_unit_test(test_cache_system),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
