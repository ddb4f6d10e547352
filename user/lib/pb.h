/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small protobuf writer: varints, fixed64, strings and nested length-delimited messages,
 * built in memory one top-level message at a time. Nested messages are written in place and
 * their length is inserted when they end, so a buffer holds one message (a Perfetto
 * TracePacket) and never grows with the trace. Errors (out of memory, nesting deeper than
 * GCTX_PB_MAX_DEPTH) are sticky: see __failed.
 */
#ifndef __GPUCTX_PB_H
#define __GPUCTX_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct gctx_pb;

#define GCTX_PB_MAX_DEPTH 16

struct gctx_pb *gctx_pb__new(void);
void gctx_pb__free(struct gctx_pb *b);
void gctx_pb__reset(struct gctx_pb *b); /* empty, keeps the memory */
const unsigned char *gctx_pb__data(const struct gctx_pb *b);
size_t gctx_pb__len(const struct gctx_pb *b);
bool gctx_pb__failed(const struct gctx_pb *b);

void gctx_pb__varint(struct gctx_pb *b, __u32 field, __u64 v); /* uint32/64, enum, bool */
void gctx_pb__int64(struct gctx_pb *b, __u32 field, __s64 v);  /* int32/64: 10 bytes if < 0 */
void gctx_pb__fixed64(struct gctx_pb *b, __u32 field, __u64 v);
void gctx_pb__double(struct gctx_pb *b, __u32 field, double v);
void gctx_pb__bytes(struct gctx_pb *b, __u32 field, const void *p, size_t n);
/* A string field: invalid UTF-8 is replaced by U+FFFD; stops at the first NUL. */
void gctx_pb__string(struct gctx_pb *b, __u32 field, const char *s, size_t n);
/* The same for a NUL-terminated string (NULL: empty). */
void gctx_pb__cstr(struct gctx_pb *b, __u32 field, const char *s);
void gctx_pb__begin(struct gctx_pb *b, __u32 field); /* a nested message field ... */
void gctx_pb__end(struct gctx_pb *b);		     /* ... and its end */

/* Bytes of the varint encoding of v. */
size_t gctx_pb_varint_len(__u64 v);

#endif /* __GPUCTX_PB_H */
