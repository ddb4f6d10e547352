/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Perfetto protobuf output: a small protobuf writer of our own (varints, fixed64, nested
 * length-delimited messages) and the timeline sink that writes Perfetto TracePackets with it,
 * one packet at a time (field numbers and the trace processor's rules:
 * shared/reference/perfetto.md).
 */
#ifndef __GPUCTX_PERFETTO_H
#define __GPUCTX_PERFETTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "output/export.h"

/* trusted_packet_sequence_id of every packet we write */
#define GCTX_PERFETTO_SEQ_ID 1

/*
 * A protobuf message being built in memory. Nested messages are written in place and their
 * length is inserted when they end, so a buffer holds one top-level message at a time (a
 * TracePacket) and never grows with the trace. Errors (out of memory, nesting deeper than
 * GCTX_PB_MAX_DEPTH) are sticky: see __failed.
 */
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
void gctx_pb__begin(struct gctx_pb *b, __u32 field); /* a nested message field ... */
void gctx_pb__end(struct gctx_pb *b);		     /* ... and its end */

/* Bytes of the varint encoding of v. */
size_t gctx_pb_varint_len(__u64 v);

/* The timeline sink writing a Perfetto trace to out. NULL when out of memory. */
struct gctx_tl_sink *gctx_perfetto__new(FILE *out);

#endif /* __GPUCTX_PERFETTO_H */
