// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Dynamic-loader search rules as pure functions (interface in ldso.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/ldso.h"

#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"
#define CACHE_NEW_HDR	48 /* magic, version, nlibs, len_strings, flags, ext offset, unused */
#define CACHE_NEW_ENT	24 /* flags, key, value, osversion, hwcap */
#define CACHE_OLD_HDR	16 /* magic (padded), nlibs */
#define CACHE_OLD_ENT	12 /* flags, key, value */
#define DIR_MAX		4096

/* name is prefix, or prefix and a version (".1", ".550.54.15") */
static bool is_so(const char *name, const char *prefix, size_t n)
{
	return !strncmp(name, prefix, n) && (name[n] == 0 || name[n] == '.');
}

bool gctx_ldso_is_api_name(const char *name)
{
	return name && (is_so(name, "libcuda.so", 10) || is_so(name, "libamdhip64.so", 14));
}

bool gctx_ldso_env_get(const char *env, size_t len, const char *name, char *out, size_t outlen)
{
	size_t nlen = strlen(name), i = 0;

	while (i < len) {
		const char *s = env + i;
		const char *nul = memchr(s, 0, len - i);
		size_t slen = nul ? (size_t)(nul - s) : len - i;

		if (slen > nlen && s[nlen] == '=' && !memcmp(s, name, nlen)) {
			size_t vlen = slen - nlen - 1;

			if (!outlen)
				return true;
			if (vlen >= outlen)
				vlen = outlen - 1;
			memcpy(out, s + nlen + 1, vlen);
			out[vlen] = 0;
			return true;
		}
		i += slen + 1;
	}
	return false;
}

/* One entry of a search path into dir: false when it is not one to look in. */
static bool expand_entry(const char *s, size_t n, const char *origin, char *dir)
{
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		const char *sub = NULL;
		size_t skip = 0;

		if (s[i] == '$') {
			if (n - i >= 7 && !memcmp(s + i, "$ORIGIN", 7))
				skip = 7;
			else if (n - i >= 9 && !memcmp(s + i, "${ORIGIN}", 9))
				skip = 9;
			if (!skip || !origin)
				return false;
			sub = origin;
		}
		if (sub) {
			size_t sl = strlen(sub);

			if (o + sl >= DIR_MAX)
				return false;
			memcpy(dir + o, sub, sl);
			o += sl;
			i += skip;
		} else {
			if (o + 1 >= DIR_MAX)
				return false;
			dir[o++] = s[i++];
		}
	}
	dir[o] = 0;
	return o > 0 && dir[0] == '/';
}

int gctx_ldso_split(const char *list, const char *origin, void (*fn)(void *ctx, const char *dir),
		    void *ctx)
{
	char dir[DIR_MAX];
	int n = 0;

	if (!list)
		return 0;
	while (*list) {
		size_t len = strcspn(list, ":;");

		if (expand_entry(list, len, origin, dir)) {
			fn(ctx, dir);
			n++;
		}
		list += len;
		if (*list)
			list++;
	}
	return n;
}

static __u32 rd32(const unsigned char *p)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A NUL-terminated string at off of base (size len), or NULL. */
static const char *str_at(const unsigned char *base, size_t len, __u32 off)
{
	if (off >= len || !memchr(base + off, 0, len - off))
		return NULL;
	return (const char *)base + off;
}

int gctx_ldso_cache_each(const void *buf, size_t len,
			 void (*fn)(void *ctx, const char *name, const char *path), void *ctx)
{
	const unsigned char *p = buf, *n;
	size_t off = 0, nlen;
	__u32 nlibs;
	int count = 0;

	if (!p)
		return -EINVAL;
	if (len >= CACHE_OLD_HDR && !memcmp(p, CACHE_OLD_MAGIC, strlen(CACHE_OLD_MAGIC))) {
		__u64 old = (__u64)rd32(p + 12) * CACHE_OLD_ENT + CACHE_OLD_HDR;

		off = (size_t)((old + 7) & ~7ull); /* the new table follows, 8-aligned */
		if (old > len || off > len)
			return -EINVAL;
	}
	if (len - off < CACHE_NEW_HDR || memcmp(p + off, CACHE_NEW_MAGIC, strlen(CACHE_NEW_MAGIC)))
		return -EINVAL;
	n = p + off; /* string offsets count from the new table's header */
	nlen = len - off;
	nlibs = rd32(n + 20);
	if ((__u64)nlibs * CACHE_NEW_ENT > nlen - CACHE_NEW_HDR)
		return -EINVAL;
	for (__u32 i = 0; i < nlibs; i++) {
		const unsigned char *e = n + CACHE_NEW_HDR + (size_t)i * CACHE_NEW_ENT;
		const char *name = str_at(n, nlen, rd32(e + 4));
		const char *path = str_at(n, nlen, rd32(e + 8));

		if (!name || !path)
			continue;
		fn(ctx, name, path);
		count++;
	}
	return count;
}
