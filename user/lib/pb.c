// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The protobuf writer (pb.h). */
#include <stdlib.h>
#include <string.h>

#include "lib/pb.h"
#include "lib/utf8.h"

#define WT_VARINT 0
#define WT_I64	  1
#define WT_LEN	  2

struct gctx_pb {
	unsigned char *buf;
	size_t len, cap;
	size_t start[GCTX_PB_MAX_DEPTH]; /* content offset of each open nested message */
	int depth;
	bool failed;
};

struct gctx_pb *gctx_pb__new(void)
{
	return calloc(1, sizeof(struct gctx_pb));
}

void gctx_pb__free(struct gctx_pb *b)
{
	if (!b)
		return;
	free(b->buf);
	free(b);
}

void gctx_pb__reset(struct gctx_pb *b)
{
	b->len = 0;
	b->depth = 0;
	b->failed = false;
}

const unsigned char *gctx_pb__data(const struct gctx_pb *b)
{
	return b->buf;
}

size_t gctx_pb__len(const struct gctx_pb *b)
{
	return b->len;
}

bool gctx_pb__failed(const struct gctx_pb *b)
{
	return b->failed;
}

static bool reserve(struct gctx_pb *b, size_t n)
{
	size_t ncap;
	unsigned char *nb;

	if (b->failed)
		return false;
	if (b->len + n <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 256;
	while (ncap < b->len + n)
		ncap *= 2;
	nb = realloc(b->buf, ncap);
	if (!nb) {
		b->failed = true;
		return false;
	}
	b->buf = nb;
	b->cap = ncap;
	return true;
}

size_t gctx_pb_varint_len(__u64 v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(unsigned char *p, __u64 v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

static void raw_varint(struct gctx_pb *b, __u64 v)
{
	if (reserve(b, 10))
		b->len += put_varint(b->buf + b->len, v);
}

static void tag(struct gctx_pb *b, __u32 field, __u32 wt)
{
	raw_varint(b, ((__u64)field << 3) | wt);
}

void gctx_pb__varint(struct gctx_pb *b, __u32 field, __u64 v)
{
	tag(b, field, WT_VARINT);
	raw_varint(b, v);
}

void gctx_pb__int64(struct gctx_pb *b, __u32 field, __s64 v)
{
	gctx_pb__varint(b, field, (__u64)v); /* two's complement: negative take 10 bytes */
}

static void raw_le64(struct gctx_pb *b, __u64 v)
{
	int i;

	if (!reserve(b, 8))
		return;
	for (i = 0; i < 8; i++)
		b->buf[b->len++] = (unsigned char)(v >> (8 * i));
}

void gctx_pb__fixed64(struct gctx_pb *b, __u32 field, __u64 v)
{
	tag(b, field, WT_I64);
	raw_le64(b, v);
}

void gctx_pb__double(struct gctx_pb *b, __u32 field, double v)
{
	__u64 u;

	memcpy(&u, &v, sizeof(u));
	gctx_pb__fixed64(b, field, u);
}

void gctx_pb__bytes(struct gctx_pb *b, __u32 field, const void *p, size_t n)
{
	tag(b, field, WT_LEN);
	raw_varint(b, n);
	if (n && reserve(b, n)) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

/* A nested message's length is unknown until it ends: one byte is kept for it (most are
 * shorter than 128 bytes), and the content moved only when the length needs more. */
void gctx_pb__begin(struct gctx_pb *b, __u32 field)
{
	tag(b, field, WT_LEN);
	if (b->depth >= GCTX_PB_MAX_DEPTH) {
		b->failed = true;
		return;
	}
	if (!reserve(b, 1))
		return;
	b->len++;
	b->start[b->depth++] = b->len;
}

void gctx_pb__end(struct gctx_pb *b)
{
	size_t start, n, k;

	if (b->failed || b->depth <= 0) {
		b->failed = true;
		return;
	}
	start = b->start[--b->depth];
	n = b->len - start;
	k = gctx_pb_varint_len(n);
	if (k > 1) {
		if (!reserve(b, k - 1))
			return;
		memmove(b->buf + start + k - 1, b->buf + start, n);
		b->len += k - 1;
	}
	put_varint(b->buf + start - 1, n);
}

void gctx_pb__string(struct gctx_pb *b, __u32 field, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, bad = 0, k;

	n = s ? strnlen(s, n) : 0;
	gctx_pb__begin(b, field);
	while (i < n) {
		k = gctx_utf8_seq(p + i, n - i, &bad);
		if (k) {
			i += k;
			continue;
		}
		/* flush the valid run before i, then the replacement character */
		if (i > run && reserve(b, i - run)) {
			memcpy(b->buf + b->len, p + run, i - run);
			b->len += i - run;
		}
		if (reserve(b, 3)) {
			memcpy(b->buf + b->len, "\xef\xbf\xbd", 3);
			b->len += 3;
		}
		i += bad;
		run = i;
	}
	if (n > run && reserve(b, n - run)) {
		memcpy(b->buf + b->len, p + run, n - run);
		b->len += n - run;
	}
	gctx_pb__end(b);
}

void gctx_pb__cstr(struct gctx_pb *b, __u32 field, const char *s)
{
	gctx_pb__string(b, field, s ? s : "", s ? strlen(s) : 0);
}
